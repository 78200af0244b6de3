"""Seeded synthetic HPC workloads of any machine size, after Lublin & Feitelson (2003).

The energy-budget paper (§V-C) replays busy weeks of PWA traces (Curie 80,640, MetaCentrum 3,356,
SDSC-Blue 1,152 processors). When the traces are not at hand, :func:`synthetic_week` makes a week with
the same shape: it follows "The workload on parallel supercomputers: modeling the characteristics of
rigid jobs" (Lublin & Feitelson, JPDC 63(11), 2003) in spirit, scaled to any size. All parameters live
in :class:`SyntheticModel`; the defaults are:

* **Sizes** (L-F two-stage log-uniform): a share ``serial_fraction`` (20 %) of jobs use 1 host; the
  others draw ``u = log2(size)`` from U(``u_low``, ``u_med``) (small jobs) or, with probability
  ``big_fraction``, from U(``u_med``, ``u_hi``) (wide jobs), with ``u_low`` = 0.8,
  ``u_hi`` = log2(nb_hosts) and ``u_med`` = min(``u_med_ratio`` × ``u_hi``, ``u_med_max``) (0.65 and
  10, i.e. at most 1,024 hosts). L-F fitted ``big_fraction`` = 0.14 and ``u_med`` = u_hi − 2.5 on
  128-node machines; larger machines mostly run jobs far below their size, so above 128 hosts
  ``big_fraction`` shrinks as (7 / u_hi)² (0.066 for 1,152 hosts, 0.026 for 80,640). A share
  ``pow2_fraction`` (75 %) of sizes is rounded to a power of two, the rest to the nearest integer;
  sizes are clipped to 1..nb_hosts.
* **Run times** (L-F hyper-gamma): ln(runtime) ~ Gamma(4.2, 0.94) (short jobs, ~1 min) with
  probability p, else Gamma(312, 0.03) (long jobs, ~3 h); p falls linearly with the relative log-size
  ``log2(size) / log2(nb_hosts)`` from ``p_short_serial`` (0.75) to ``p_short_widest`` (0.25), so
  larger jobs run longer (L-F's size/runtime correlation). Run times are whole seconds, clipped to
  [1 s, 36 h]; ``runtime_range_s`` maps that log range linearly onto another one (the demo uses
  2-30 min). A longest run time whose walltimes could exceed the ``time_s`` bound of
  :mod:`wattsched.base.limits` (1e10 s, which ``wattsched run`` applies) is refused.
* **Walltimes**: runtime × an over-estimation factor ≥ 1 (``accurate_fraction`` = 15 % of users ask
  1.0-1.1 × the runtime, the others log-uniform in [1, ``max_overestimate`` = 8]), rounded **up** to the
  next usual request (1, 2, 5, 10, 15, 20, 30, 45 min, 1, 1.5, 2, 3, 4, 6, 8, 10, 12, 18, 24, 36, 48, 72 h,
  then whole hours). So ``walltime ≥ runtime`` for every job, except:
* **Walltime kills**: a share ``kill_fraction`` (7 %) of jobs ask for their runtime rounded up to a usual
  request but hold 1.1-2 × that walltime of work: Batsim ends them at their walltime
  (``COMPLETED_WALLTIME_REACHED``), as the trace jobs that were killed.
* **Arrivals**: a daily cycle (``hourly_weights``: a trough around 4-5 am at ~0.3 of the mean, a peak
  at 2-3 pm at ~1.5; L-F §4) times a weekly one (Saturday and Sunday at ``weekend_factor`` = 0.55;
  t = 0 is a Monday 00:00), with gamma inter-arrivals of shape ``arrival_shape`` = 0.6 (burstier than
  Poisson) in that time-warped clock. Submit times are whole seconds in [0, duration_s).
* **Load**: jobs are drawn until the offered load Σ res × occupancy / (nb_hosts × duration_s) reaches
  ``target_load`` (default 0.85, meant to let EASY keep the machine more than 70 % busy), where occupancy is the
  runtime, or the walltime for the killed jobs; their arrivals are then spread over the week as above,
  which is scaling the inter-arrival times to the target.
* **Users**: ``users`` user ids 1..users with Zipf(1) activity (user 1 submits most).

Profiles are ``parallel_homogeneous`` (``cpu`` = work × ``speed_flops`` per host, ``com`` 0), named
``"c<cpu>"`` and shared by every job with the same work, as in :mod:`workloads.swf`. The result is a
Batsim workload dict (``nb_res``, ``jobs`` sorted by ``subtime`` with ids 1..n, ``profiles``) plus a
``meta`` entry (ignored by Batsim) holding the seed, the model and the achieved offered load.
Deterministic for a seed (``numpy.random.default_rng(seed)``).

Command line: ``wattsched synth --hosts 1152 --seed 1 --output week.json [--days 7] [--load 0.85]``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from wattsched.base.errors import OptionError
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import check_count, option_error
from wattsched.workloads.swf import profile_name

logger = logging.getLogger(__name__)

__all__ = ["SyntheticModel", "DEFAULT_MODEL", "WALLTIME_GRID_S", "synthetic_week", "offered_load",
           "longest_walltime_s", "walltime_problem"]

WEEK_S: float = 7 * 86400.0
_MAX_RUNTIME_S = 36 * 3600.0

# Usual walltime requests (s): 1, 2, 5, 10, 15, 20, 30, 45 min, 1, 1.5, 2, 3, 4, 6, 8, 10, 12, 18, 24, 36,
# 48, 72 h. Longer requests are rounded up to whole hours.
WALLTIME_GRID_S: tuple[int, ...] = tuple(
    [60 * m for m in (1, 2, 5, 10, 15, 20, 30, 45)]
    + [int(3600 * h) for h in (1, 1.5, 2, 3, 4, 6, 8, 10, 12, 18, 24, 36, 48, 72)]
)


@dataclass(frozen=True)
class SyntheticModel:
    """Parameters of the generator (see the module docstring for their meaning)."""

    serial_fraction: float = 0.20
    big_fraction: float = 0.14
    big_reference_u_hi: float = 7.0  # log2 of L-F's 128-node machine
    u_low: float = 0.8
    u_med_ratio: float = 0.65
    u_med_max: float = 10.0
    pow2_fraction: float = 0.75
    short_gamma: tuple[float, float] = (4.2, 0.94)  # (shape, scale) of ln(runtime), short jobs
    long_gamma: tuple[float, float] = (312.0, 0.03)  # (shape, scale) of ln(runtime), long jobs
    p_short_serial: float = 0.75
    p_short_widest: float = 0.25
    runtime_range_s: tuple[float, float] = (1.0, _MAX_RUNTIME_S)
    accurate_fraction: float = 0.15
    max_overestimate: float = 8.0
    kill_fraction: float = 0.07
    hourly_weights: tuple[float, ...] = (
        0.55, 0.45, 0.38, 0.33, 0.30, 0.30, 0.35, 0.50, 0.80, 1.10, 1.35, 1.45,
        1.35, 1.40, 1.50, 1.50, 1.40, 1.25, 1.05, 0.90, 0.80, 0.72, 0.66, 0.60,
    )
    weekend_factor: float = 0.55
    arrival_shape: float = 0.6


DEFAULT_MODEL = SyntheticModel()


def longest_walltime_s(model: SyntheticModel) -> float:
    """The longest walltime ``model`` can give a job: its longest run time × ``max_overestimate`` (at least the
    1.1 of accurate users), rounded up as walltimes are (:data:`WALLTIME_GRID_S`, then whole hours); inf
    beyond the doubles."""
    request_s = model.runtime_range_s[1] * max(model.max_overestimate, 1.1)
    if not request_s < math.inf:
        return math.inf
    usual_s = next((w for w in WALLTIME_GRID_S if w >= request_s), None)
    return float(usual_s) if usual_s is not None else math.ceil(request_s / 3600.0) * 3600.0


def walltime_problem(model: SyntheticModel) -> str | None:
    """Why ``model``'s walltimes could exceed the ``time_s`` bound ``wattsched run`` applies to every walltime
    (:mod:`wattsched.base.limits`), or None when they cannot."""
    longest_s = longest_walltime_s(model)
    if longest_s <= limit("time_s"):
        return None
    return (f"a longest run time of {model.runtime_range_s[1]:g} s gives walltimes up to {longest_s:g} s "
            f"({max(model.max_overestimate, 1.1):g} × the run time, rounded up); {limit_hint('time_s', 's')}")


def _check(nb_hosts: int, duration_s: float, target_load: float, speed_flops: float, users: int,
           model: SyntheticModel) -> None:
    if isinstance(nb_hosts, bool) or not isinstance(nb_hosts, (int, np.integer)) or nb_hosts < 1:
        raise OptionError(f"nb_hosts must be a positive integer, got {nb_hosts!r}")
    for name, value in (("duration_s", duration_s), ("target_load", target_load),
                        ("speed_flops", speed_flops)):
        if not (math.isfinite(value) and value > 0):
            raise OptionError(f"{name} must be a positive number, got {value!r}")
    if users < 1:
        raise OptionError(f"users must be at least 1, got {users!r}")
    check_count(nb_hosts, "hosts", "synthetic workload", "nb_hosts", "hosts", option_error)
    check_count(users, "jobs", "synthetic workload", "users", "users", option_error)  # no more users than jobs
    check_count(duration_s / 86400.0, "days", "synthetic workload", "duration_s", "days", option_error)
    low_s, high_s = model.runtime_range_s
    if not 1 <= low_s <= high_s:
        raise OptionError(f"runtime_range_s must satisfy 1 <= low <= high, got {model.runtime_range_s!r}")
    problem = walltime_problem(model)
    if problem is not None:
        raise option_error("synthetic workload", "runtime_range_s", problem)
    if len(model.hourly_weights) != 24 or min(model.hourly_weights) <= 0:
        raise OptionError("hourly_weights must be 24 positive numbers")


def _too_little_work(first_area: float, nb_hosts: int, duration_s: float, target_load: float, seed: int) -> str:
    """The warning of a target load whose work is below half the first job's: the workload closest to it has no
    job, yet one job is written (a workload needs one), whose offered load is far from the target (``--days 1e-9``
    gave a load of 2e6, ``--load 1e-12`` one of 4e-4, without a word). Not an error: tests and demos make tiny
    workloads (2 hosts over 0.01 day) for their names or formats. The jobs are drawn before the arrivals, so the
    first job depends neither on the days nor on the load: the smallest values given are exact."""

    def at_least(value: float) -> str:  # rounded up, so that the value shown is enough
        shown, step = f"{value:.3g}", 1e-3
        while float(shown) < value:
            shown, step = f"{value * (1 + step):.3g}", step * 2
        return shown

    work = first_area / 2
    smallest = {"load": (work / (nb_hosts * duration_s), 1.0),  # a load above 1 or days beyond their bound would
                "days": (work / (nb_hosts * target_load) / 86400.0, limit("days"))}  # be no sensible advice
    fixes = [f"--{name} at least {at_least(value)}"
             for name, (value, sensible) in smallest.items() if value <= sensible]
    return (f"target_load (--load) {target_load:g} over {duration_s / 86400.0:g} days (--days) on {nb_hosts} hosts "
            f"asks for {target_load * nb_hosts * duration_s:.3g} host-seconds of work, less than half the first job "
            f"of seed {seed} ({first_area:.3g}): that one job written, an offered load of "
            f"{first_area / (nb_hosts * duration_s):.3g}, not {target_load:g}; a workload near the target needs "
            + (" or ".join(fixes) if fixes else "more --days, --load or --hosts"))


def _sizes(rng: np.random.Generator, n: int, nb_hosts: int, m: SyntheticModel) -> np.ndarray:
    u_hi = math.log2(nb_hosts)
    u_low = min(m.u_low, u_hi)
    u_med = max(u_low, min(m.u_med_ratio * u_hi, m.u_med_max))
    big_fraction = m.big_fraction * min(1.0, m.big_reference_u_hi / u_hi) ** 2 if u_hi > 0 else 0.0
    big = rng.random(n) < big_fraction
    u = np.where(big, rng.uniform(u_med, u_hi, n), rng.uniform(u_low, u_med, n))
    pow2 = rng.random(n) < m.pow2_fraction
    size = np.where(pow2, np.exp2(np.round(u)), np.round(np.exp2(u)))
    size = np.where(rng.random(n) < m.serial_fraction, 1.0, size)
    return np.clip(size, 1, nb_hosts).astype(np.int64)


def _runtimes_s(rng: np.random.Generator, sizes: np.ndarray, nb_hosts: int, m: SyntheticModel) -> np.ndarray:
    n = len(sizes)
    rel = np.log2(sizes) / math.log2(nb_hosts) if nb_hosts > 1 else np.zeros(n)
    p_short = m.p_short_serial + (m.p_short_widest - m.p_short_serial) * rel
    short = rng.random(n) < p_short
    log_r = np.where(short, rng.gamma(*m.short_gamma, n), rng.gamma(*m.long_gamma, n))
    log_max = math.log(_MAX_RUNTIME_S)
    log_r = np.clip(log_r, 0.0, log_max)
    low_s, high_s = m.runtime_range_s
    log_r = math.log(low_s) + log_r / log_max * (math.log(high_s) - math.log(low_s))
    return np.clip(np.ceil(np.exp(log_r) - 1e-9), math.ceil(low_s), math.floor(high_s))


def _round_up_walltime_s(request_s: np.ndarray) -> np.ndarray:
    grid = np.asarray(WALLTIME_GRID_S, dtype=float)
    idx = np.searchsorted(grid, request_s, side="left")
    hours = np.ceil(request_s / 3600.0) * 3600.0
    return np.where(idx < len(grid), grid[np.minimum(idx, len(grid) - 1)], hours)


def _draw_jobs(rng: np.random.Generator, n: int, nb_hosts: int, m: SyntheticModel) -> dict[str, np.ndarray]:
    """n jobs: res, walltime_s, work_s (what the profile computes) and occupancy_s (time on the hosts)."""
    res = _sizes(rng, n, nb_hosts, m)
    runtime_s = _runtimes_s(rng, res, nb_hosts, m)
    accurate = rng.random(n) < m.accurate_fraction
    factor = np.where(accurate, rng.uniform(1.0, 1.1, n), np.exp(rng.uniform(0.0, math.log(m.max_overestimate), n)))
    killed = rng.random(n) < m.kill_fraction
    walltime_s = _round_up_walltime_s(np.where(killed, runtime_s, runtime_s * factor))
    work_s = np.where(killed, np.ceil(walltime_s * rng.uniform(1.1, 2.0, n)), runtime_s)
    occupancy_s = np.minimum(work_s, walltime_s)
    return {"res": res, "walltime_s": walltime_s, "work_s": work_s, "occupancy_s": occupancy_s,
            "killed": killed}


def _arrivals_s(rng: np.random.Generator, n: int, duration_s: float, m: SyntheticModel) -> np.ndarray:
    """n sorted whole-second submit times in [0, duration_s) following the daily and weekly cycles."""
    hours = int(math.ceil(duration_s / 3600.0))
    h = np.arange(hours)
    weights = np.asarray(m.hourly_weights)[h % 24] * np.where((h // 24) % 7 >= 5, m.weekend_factor, 1.0)
    edges_s = np.minimum(np.arange(hours + 1) * 3600.0, duration_s)
    intensity = np.concatenate([[0.0], np.cumsum(weights * np.diff(edges_s))])
    gaps = rng.gamma(m.arrival_shape, 1.0 / m.arrival_shape, n + 1)
    position = np.cumsum(gaps)[:n] / gaps.sum() * intensity[-1]
    return np.minimum(np.floor(np.interp(position, intensity, edges_s)), math.ceil(duration_s) - 1)


def offered_load(workload: dict[str, Any], nb_hosts: int, duration_s: float, speed_flops: float) -> float:
    """Σ res × occupancy / (nb_hosts × duration_s) of a Batsim workload with parallel_homogeneous jobs.

    Occupancy = cpu / speed_flops, cut at the walltime when there is one.
    """
    area = 0.0
    for job in workload["jobs"]:
        run_s = workload["profiles"][job["profile"]]["cpu"] / speed_flops
        if "walltime" in job:
            run_s = min(run_s, job["walltime"])
        area += job["res"] * run_s
    return area / (nb_hosts * duration_s)


def synthetic_week(
    nb_hosts: int,
    *,
    seed: int,
    duration_s: float = WEEK_S,
    target_load: float = 0.85,
    speed_flops: float = 100e6,
    users: int = 50,
    model: SyntheticModel = DEFAULT_MODEL,
) -> dict[str, Any]:
    """A Batsim workload of ``duration_s`` of submissions on ``nb_hosts`` hosts (module docstring model).

    Args:
        nb_hosts: machine size; every job has 1 ≤ res ≤ nb_hosts.
        seed: seed of ``numpy.random.default_rng``; the same arguments give the same workload.
        duration_s: submission window (default one week).
        target_load: offered load Σ res × occupancy / (nb_hosts × duration_s) to reach.
        speed_flops: host speed at which runtimes are meant (profile cpu = work × speed).
        users: number of distinct users (ids 1..users).
        model: the distributions' parameters; ``dataclasses.replace(DEFAULT_MODEL, ...)`` to change one.

    Raises:
        OptionError: a non-positive size, duration, load, speed or user count, an invalid model, or a speed
            that makes a job's flops overflow.
    """
    _check(nb_hosts, duration_s, target_load, speed_flops, users, model)
    nb_hosts = int(nb_hosts)
    rng = np.random.default_rng(seed)
    target_area = target_load * nb_hosts * duration_s

    chunks: list[dict[str, np.ndarray]] = []
    area = 0.0
    chunk = 256
    while area < target_area:
        jobs = _draw_jobs(rng, chunk, nb_hosts, model)
        chunks.append(jobs)
        job_area = jobs["res"] * jobs["occupancy_s"]
        area += float(job_area.sum())
        mean_area = float(job_area.mean())
        if len(chunks) == 1:  # the jobs the target load needs, estimated before drawing them
            check_count(target_area / mean_area, "jobs", "synthetic workload", "target_load",
                        "jobs (estimated from the load, hosts and days)", option_error)
        chunk = int(min(max((target_area - area) / mean_area * 1.2, 256), 1e6))
    drawn = {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}
    cumulative = np.cumsum(drawn["res"] * drawn["occupancy_s"])
    if target_area < cumulative[0] / 2:  # one job is written all the same: said, not silent
        logger.warning(_too_little_work(float(cumulative[0]), nb_hosts, duration_s, target_load, seed))
    # Keep the prefix whose total area is closest to the target.
    n = int(np.searchsorted(cumulative, target_area)) + 1
    if n > 1 and target_area - cumulative[n - 2] < cumulative[n - 1] - target_area:
        n -= 1
    drawn = {k: v[:n] for k, v in drawn.items()}
    subtime_s = _arrivals_s(rng, n, duration_s, model)
    zipf = 1.0 / np.arange(1, users + 1)
    user = rng.choice(users, size=n, p=zipf / zipf.sum()) + 1

    profiles: dict[str, dict[str, Any]] = {}
    job_list: list[dict[str, Any]] = []
    with np.errstate(over="ignore"):
        cpu = drawn["work_s"] * speed_flops
    if not np.isfinite(cpu).all():
        raise OptionError(f"speed_flops (--speed) {speed_flops:g}: a job of {float(drawn['work_s'].max()):g} s of work "
                          "would need more flops than a workload can hold")
    for i in range(n):
        name = profile_name(float(cpu[i]))
        if name not in profiles:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": float(cpu[i]), "com": 0}
        job_list.append({
            "id": i + 1,
            "subtime": int(subtime_s[i]),
            "res": int(drawn["res"][i]),
            "profile": name,
            "walltime": int(drawn["walltime_s"][i]),
            "user": int(user[i]),
        })
    load = float(cumulative[n - 1]) / (nb_hosts * duration_s)
    meta = {
        "generator": "wattsched.workloads.synthetic.synthetic_week",
        "seed": seed,
        "nb_hosts": nb_hosts,
        "duration_s": duration_s,
        "target_load": target_load,
        "offered_load": load,
        "speed_flops": speed_flops,
        "users": users,
        "nb_jobs": n,
        "nb_walltime_kills": int(drawn["killed"].sum()),
        "model": dataclasses.asdict(model),
    }
    return {"nb_res": nb_hosts, "jobs": job_list, "profiles": profiles, "meta": meta}
