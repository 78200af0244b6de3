"""Workloads of the EAMC paper's evaluation (§5): jobs that carry their application and partitions.

The paper simulates "a workload of 5000 jobs, with a makespan between 10 and 15 days, … using Cirne model
configured with ANL arrival pattern. Jobs' average requested nodes are 18.29, and jobs' average duration is
3.65 hours at the highest frequency", with three application mixes: "13 %" (the eight applications drawn
uniformly, so 12.5 % STREAM, the only one that favours p2), "33 %" and "50 %" (that share of STREAM, the
rest uniform over the seven others). Cirne's model itself (and the ANL trace it was configured with) is not
at hand; :func:`eamc_workload` draws a seeded workload with the paper's stated numbers and shapes of the
same family (``numpy.random.default_rng(seed)``):

* **Sizes**: log2(size) uniform in [0, b], three quarters rounded to a power of two (the emphasis on powers
  of two of every workload model), clipped to ``max_res``; b is solved (bisection) so that the **sample**
  mean is ``mean_res`` (18.29) to ±0.01 (b ≈ 6.4: sizes 1 … ~84).
* **Run times** at the top frequency of the primary partition (p1): log-uniform between 60 s and an upper
  bound solved so that the sample mean is ``mean_runtime_s`` (3.65 h) to ±1 s; whole seconds.
* **Walltimes**: the run time times an over-estimation factor (15 % of users ask 1.0-1.1 ×, the others
  log-uniform in [1, 8]), rounded up to a usual request, as :mod:`workloads.synthetic` (never below the run
  time: no job is killed).
* **Arrivals**: a daily cycle (:data:`workloads.synthetic.DEFAULT_MODEL`'s hourly weights, a working-day peak,
  the shape of ANL's and of Lublin & Feitelson's) over ``span_days`` (10 days, whole seconds). The paper
  gives the makespan (10-15 days), not the submission span: with 5,000 jobs of 18.29 nodes × 3.65 h on
  1,024 nodes, the work alone fills the machine for 13.6 days at the top frequency, so arrivals over 10 days
  give makespans in the paper's range.
* **Applications**: mix ``"13"``, ``"33"`` or ``"50"``; every job lists ``"partitions": ["p1", "p2"]`` (the
  paper submits every job to both partitions and lets the policy choose).

Each job has ``app`` and ``partitions`` fields (:data:`wattsched.energy_models.ear.APP_FIELD`,
``PARTITIONS_FIELD``) and a ``parallel_homogeneous`` profile of ``runtime × speed_flops`` flops (2.7 Gflop/s,
p1's top speed), named like :mod:`workloads.swf` and shared by jobs of equal work. :func:`check_eamc_jobs`
refuses bad fields before a run (``wattsched run`` calls it).

Command line: ``wattsched eamc-workload --mix 33 --seed 1 --output w.json [--jobs 5000] [--max-res 512]``.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Collection, Iterable, Mapping

import numpy as np

from wattsched.base.errors import InputError, OptionError, counted
from wattsched.base.validate import check_count, option_error
from wattsched.energy_models.ear import APP_FIELD, PARTITIONS_FIELD, check_job_fields, too_wide_for_partitions
from wattsched.workloads.swf import profile_name
from wattsched.workloads.synthetic import DEFAULT_MODEL, _arrivals_s, _round_up_walltime_s

__all__ = ["MIXES", "STREAM", "check_eamc_jobs", "eamc_workload", "unreached_mean"]

#: STREAM, the application that favours p2 (EAMC paper table 1, §5).
STREAM = 8
#: Share of STREAM jobs per mix (None: the eight applications uniformly, "13 %").
MIXES: dict[str, float | None] = {"13": None, "33": 0.33, "50": 0.50}
APPS = tuple(range(1, 9))
MIN_RUNTIME_S = 60.0
#: The paper's mean job size (nodes) and mean run time at the top frequency (s): the workload's defaults.
MEAN_RES = 18.29
MEAN_RUNTIME_S = 3.65 * 3600.0
#: The largest upper bound of the run times the mean run time is solved with.
_MAX_RUNTIME_BOUND_S = 1e8


def _bisect(f, lo: float, hi: float, target: float, tol: float) -> float:
    """x in [lo, hi] with f(x) ≈ target for a non-decreasing f (f(hi) ≥ target)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        value = f(mid)
        if abs(value - target) <= tol:
            return mid
        if value < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _sizes(u: np.ndarray, pow2: np.ndarray, b: float, max_res: int) -> np.ndarray:
    exponent = u * b
    size = np.where(pow2, np.exp2(np.round(exponent)), np.round(np.exp2(exponent)))
    return np.clip(size, 1, max_res).astype(np.int64)


def _size_exponent_bound(max_res: int) -> float:
    """The largest b (log2 of the largest size drawn before clipping) the mean job size is solved with."""
    return math.log2(max_res) + 1


def _runtimes(v: np.ndarray, high: float) -> np.ndarray:
    return np.ceil(MIN_RUNTIME_S * (high / MIN_RUNTIME_S) ** v)


def _shape_draws(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The draws the job sizes (``u``, ``pow2``) and run times (``v``) are made of, the first of the workload's."""
    u, pow2 = rng.random(n), rng.random(n) < 0.75
    return u, pow2, rng.random(n)


def _unreached(u: np.ndarray, pow2: np.ndarray, v: np.ndarray, max_res: int, mean_res: float,
               mean_runtime_s: float) -> tuple[str, float] | None:
    """The first of ``"mean_res"`` and ``"mean_runtime_s"`` that these draws cannot reach (jobs of at most
    ``max_res`` hosts, run times up to ``_MAX_RUNTIME_BOUND_S``), with the largest sample mean they can have;
    None when both are reached."""
    largest_res = float(_sizes(u, pow2, _size_exponent_bound(max_res), max_res).mean())
    if largest_res < mean_res:
        return "mean_res", largest_res
    largest_runtime_s = float(_runtimes(v, _MAX_RUNTIME_BOUND_S).mean())
    if largest_runtime_s < mean_runtime_s - 1.0:  # the bisection's tolerance
        return "mean_runtime_s", largest_runtime_s
    return None


def unreached_mean(*, seed: int, nb_jobs: int, max_res: int, mean_res: float,
                   mean_runtime_s: float) -> tuple[str, float] | None:
    """Which mean :func:`eamc_workload` would refuse as out of reach with these arguments (``"mean_res"`` or
    ``"mean_runtime_s"``, with the largest sample mean the seed's draws can have), or None: the same draws and
    bounds as the workload's, without drawing the workload (``wattsched reproduce eamc --scale`` is checked with it
    before any work)."""
    u, pow2, v = _shape_draws(np.random.default_rng(seed), nb_jobs)
    return _unreached(u, pow2, v, max_res, mean_res, mean_runtime_s)


def eamc_workload(*, seed: int, mix: str = "13", nb_jobs: int = 5000, mean_res: float = MEAN_RES,
                  mean_runtime_s: float = MEAN_RUNTIME_S, span_days: float = 10.0, max_res: int = 512,
                  partitions: tuple[str, ...] = ("p1", "p2"), speed_flops: float = 2.7e9) -> dict[str, Any]:
    """A Batsim workload like the EAMC paper's (module docstring).

    Args:
        seed: seed of ``numpy.random.default_rng``.
        mix: ``"13"``, ``"33"`` or ``"50"``.
        nb_jobs: number of jobs (the paper's 5,000).
        mean_res, mean_runtime_s: the sample means to reach (the paper's 18.29 nodes and 3.65 h).
        span_days: submission span.
        max_res: largest job (the smallest partition; 512 at full size).
        partitions: every job's ``partitions`` field, primary first.
        speed_flops: the top speed of the primary partition (profile flops = run time × speed).

    Raises:
        OptionError: an unknown mix, a non-positive count, mean or span, means the bounds (or so few jobs) cannot
            reach, or more jobs, hosts or days than the bounds of :mod:`wattsched.base.limits`.
    """
    if mix not in MIXES:
        raise OptionError(f"unknown application mix {mix!r}; mixes: {', '.join(MIXES)} (% of jobs favouring p2)")
    for name, value in (("nb_jobs", nb_jobs), ("max_res", max_res)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise OptionError(f"{name} must be a positive integer, got {value!r}")
    for name, number in (("mean_res", mean_res), ("mean_runtime_s", mean_runtime_s), ("span_days", span_days),
                         ("speed_flops", speed_flops)):
        if not (math.isfinite(number) and number > 0):
            raise OptionError(f"{name} must be a positive number, got {number!r}")
    # one message per value, naming it (the two were said together: which one was wrong, with what value?)
    if not 1 <= mean_res <= max_res:
        raise OptionError(f"mean_res (--mean-res) {mean_res:g} must be in [1, max_res={max_res}] (--max-res)")
    if mean_runtime_s <= MIN_RUNTIME_S:
        raise OptionError(f"mean_runtime_s (--mean-runtime-h × 3600) {mean_runtime_s:g} s must be above "
                          f"{MIN_RUNTIME_S:g} s")
    check_count(nb_jobs, "jobs", "EAMC workload", "nb_jobs", "jobs", option_error)
    check_count(len(partitions) * max_res, "hosts", "EAMC workload", "max_res",
                f"hosts ({len(partitions)} partitions of max_res)", option_error)
    check_count(span_days, "days", "EAMC workload", "span_days", "days", option_error)
    rng = np.random.default_rng(seed)
    n = nb_jobs
    u, pow2, v = _shape_draws(rng, n)
    unreached = _unreached(u, pow2, v, max_res, mean_res, mean_runtime_s)
    if unreached is not None and unreached[0] == "mean_res":
        raise OptionError(f"mean_res (--mean-res) {mean_res:g} cannot be reached with jobs of at most {max_res} hosts "
                          "(--max-res)")
    if unreached is not None:
        raise OptionError(f"mean_runtime_s {mean_runtime_s:g} (--mean-runtime-h {mean_runtime_s / 3600:g}) cannot be "
                          f"reached with these {counted(n, 'job')} (run times "
                          f"log-uniform from {MIN_RUNTIME_S:g} s to at most {_MAX_RUNTIME_BOUND_S:g} s)")
    b = _bisect(lambda x: float(_sizes(u, pow2, x, max_res).mean()), 0.0, _size_exponent_bound(max_res), mean_res,
                0.01)
    res = _sizes(u, pow2, b, max_res)
    high = _bisect(lambda x: float(_runtimes(v, x).mean()), MIN_RUNTIME_S, _MAX_RUNTIME_BOUND_S, mean_runtime_s, 1.0)
    runtime_s = _runtimes(v, high)
    m = DEFAULT_MODEL
    accurate = rng.random(n) < m.accurate_fraction
    factor = np.where(accurate, rng.uniform(1.0, 1.1, n), np.exp(rng.uniform(0.0, math.log(m.max_overestimate), n)))
    walltime_s = _round_up_walltime_s(runtime_s * factor)
    subtime_s = _arrivals_s(rng, n, span_days * 86400.0, m)
    share = MIXES[mix]
    if share is None:
        apps = rng.integers(1, len(APPS) + 1, n)
    else:
        others = rng.integers(1, len(APPS), n)  # 1..7
        apps = np.where(rng.random(n) < share, STREAM, others)

    profiles: dict[str, dict[str, Any]] = {}
    jobs: list[dict[str, Any]] = []
    for i in range(n):
        cpu = float(runtime_s[i]) * speed_flops
        name = profile_name(cpu)
        profiles.setdefault(name, {"type": "parallel_homogeneous", "cpu": cpu, "com": 0})
        jobs.append({"id": i + 1, "subtime": int(subtime_s[i]), "res": int(res[i]), "profile": name,
                     "walltime": int(walltime_s[i]), APP_FIELD: int(apps[i]), PARTITIONS_FIELD: list(partitions)})
    meta = {
        "generator": "wattsched.workloads.eamc.eamc_workload",
        "seed": seed, "mix": mix, "nb_jobs": n, "span_days": span_days, "max_res": max_res,
        "mean_res": float(res.mean()), "size_exponent_max": b,
        "mean_runtime_s": float(runtime_s.mean()), "runtime_max_s": float(runtime_s.max()),
        "stream_share": float(np.mean(apps == STREAM)), "speed_flops": speed_flops,
        "node_hours_at_top": float((res * runtime_s).sum() / 3600.0),
    }
    return {"nb_res": len(partitions) * max_res, "jobs": jobs, "profiles": profiles, "meta": meta}


def check_eamc_jobs(entries: Iterable[Mapping[str, Any]], source: object, partitions: Mapping[str, int],
                    apps: Collection[int] | None, *, nb_hosts: int | None = None, by_partition: bool = True,
                    ranges: Mapping[str, int] | None = None) -> None:
    """Check the ``app`` and ``partitions`` fields of every job of a workload against a platform (its
    partitions and their sizes; empty: no partition) and an EAR model's applications (None: no model).

    With ``by_partition`` (a placement that keeps a job on its partitions, as the EAMC presets' does), a job wider
    than every partition it may use, or than each one's longest range of host ids (``ranges``, default: each one
    in one range: first-fit places a job inside one), is refused, unless it is wider than the platform
    (``nb_hosts``): Batsim rejects that job in the run, as every scheduler does (behaviour of a job wider than the
    machine).

    Raises:
        InputError: naming the file, the job and the field: an application id that is not an integer ≥ 1 or
            that the model does not know, a ``partitions`` value that is not a list of names or names a
            partition the platform lacks, or (``by_partition``) a job larger than every partition it may use.
    """
    names = tuple(partitions)
    for index, entry in enumerate(entries):
        _, requested = check_job_fields(entry, source, f"job '{entry.get('id', index)}'", apps, names)
        if requested is None:
            if not partitions:
                continue
            requested = names
        where = f"job '{entry.get('id', index)}'"
        res = entry.get("res")
        if not by_partition or not isinstance(res, int) or (nb_hosts is not None and res > nb_hosts):
            continue
        longest = partitions if ranges is None else ranges
        if res > max(longest[p] for p in requested):
            raise InputError(source, f"{where}.res", too_wide_for_partitions(res, requested, partitions, longest))


def check_eamc_inputs(host_properties: Iterable[Mapping[str, Any]], entries: Iterable[Mapping[str, Any]],
                      source: object, ear_model: str | None = None, *, by_partition: bool = True,
                      any_app: bool = False) -> None:
    """:func:`check_eamc_jobs` for a platform given by its hosts' properties (``partition``, ``ear_model``),
    with the applications of the EAR model its partitions name (``ear_model``: the model folder, default the
    shipped one), for a scheduler whose placement keeps jobs on their partitions or not (``by_partition``).
    With ``any_app`` (``run --connect``: the model is the listening scheduler's, given to it, unknown here), every
    application id is taken. Nothing is checked when neither the platform nor the jobs mention partitions or
    applications.

    Raises:
        InputError: see :func:`check_eamc_jobs`; malformed model data (file and line).
    """
    from wattsched.energy_models.ear import load_ear_model

    jobs = list(entries)
    sizes: dict[str, int] = {}
    ranges: dict[str, int] = {}  # each partition's longest range of host ids (hosts in id order)
    modules = False
    nb_hosts = 0
    previous, run = None, 0
    for props in host_properties:
        nb_hosts += 1
        name = props.get("partition")
        if name is not None:
            name = str(name)
            sizes[name] = sizes.get(name, 0) + 1
            run = run + 1 if name == previous else 1
            ranges[name] = max(ranges.get(name, 0), run)
        previous = name
        modules = modules or props.get("ear_model") is not None
    if not sizes and not any(APP_FIELD in job or PARTITIONS_FIELD in job for job in jobs):
        return
    apps: Collection[int] | None = None
    if any_app and modules:
        apps = range(1, sys.maxsize)
    elif modules or ear_model is not None:
        apps = load_ear_model(ear_model).apps
    check_eamc_jobs(jobs, source, sizes, apps, nb_hosts=nb_hosts, by_partition=by_partition, ranges=ranges)
