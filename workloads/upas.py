"""Workloads for the UPAS paper's β model: a β per job, and profiles that run ``T(f)`` at any gear.

UPAS paper §3.4 (eq. 4): a job's run time at frequency ``f`` is ``T(f) = T(f_top)·(β·(f_top/f − 1) + 1)``, β drawn
per job by its size (:data:`~wattsched.energy_models.upas.BETA_LAW`). :func:`beta_workload` turns any Batsim
workload whose jobs run ``parallel_homogeneous`` or ``delay`` profiles (a converted SWF trace, a synthetic week)
into one where:

* every job has a ``beta`` field (seeded draw, in job order; Batsim forwards it to the scheduler, which reads it
  as the job's :class:`~wattsched.energy_models.dvfs.BetaModel`, :func:`wattsched.schedulers.protocol.queued_job`);
* every job runs its own ``composed`` profile ``b<id>``: a ``parallel_homogeneous`` part ``b<id>.c`` of
  ``β·T·speed_top`` flops per host, then a ``delay`` part ``b<id>.d`` of ``(1 − β)·T`` seconds
  (docs/architecture.md §4; the simulator's composed profiles name their parts). At a gear of speed ``s`` Batsim
  runs it ``β·T·speed_top/s + (1 − β)·T`` = ``T(f)`` exactly (speed ∝ f). A part of zero length is left out;
* **walltimes**: the workload's ``walltime`` is the user's requested time at the top gear, as in the trace.
  Batsim kills a job at the walltime of its entry, so a scheduler that lowers a job's gear re-registers it with
  its walltime at that gear (``requested × (β·(f_top/f − 1) + 1)``, or ``× f_top/f`` when it assumes the worst
  case β = 1; :mod:`wattsched.schedulers.core`, dynamic jobs): the relation between the requested time and
  Batsim's walltime is that factor, and a job is never killed because of DVFS. A job whose run time exceeds its
  request (a job the trace says was killed; the SWF converter clamped it to its request) is given
  ``KILLED_EXTRA_S`` = 1 s of work more than its request, so that Batsim kills it at its walltime at any gear, as
  the paper's simulator does ("If a job is longer than the user has estimated it, the job will be killed",
  §2.1): at exactly its request the job's end would meet its walltime and its final state would depend on
  rounding. Counted in ``meta["upas"]["nb_killed_at_walltime"]``;
* **jobs without a requested time** (SWF field 9 = −1: 71 % of LLNL-Thunder's jobs, 15 % of LLNL-Atlas's) get
  the next whole minute strictly above their run time: EASY needs an estimate, the paper does not say which it
  used, and a near-perfect one keeps the traces' own estimates unchanged for the others. Counted in
  ``meta["upas"]["nb_estimated_walltimes"]``.

Command line: ``wattsched beta W.json --seed 1 --output W_beta.json [--speed 2.3e9]``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from wattsched.base.errors import InputError, OptionError
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import load_json
from wattsched.energy_models.upas import BETA_LAW, UPAS_NODE, BetaLaw

#: Work beyond its walltime given to a job that ran as long as its request or longer (killed at its walltime).
KILLED_EXTRA_S = 1.0

__all__ = ["job_runtimes_s", "beta_workload", "estimated_walltime_s", "profile_runtime_s", "read_workload"]


def read_workload(path: str | os.PathLike) -> dict[str, Any]:
    """A Batsim workload JSON file as a dict.

    Raises:
        InputError: unreadable file, invalid JSON (with its line), a duplicate key, or no ``jobs`` list.
    """
    try:
        require_regular_file(path)
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, "", f"cannot read the workload ({exc.strerror or exc})") from None
    content = load_json(data, str(path), unique_keys=True)
    if not isinstance(content, dict) or not isinstance(content.get("jobs"), list):
        raise InputError(path, "jobs", "missing or not a list")
    return content


def profile_runtime_s(profiles: Mapping[str, Any], name: str, speed_flops: float, _depth: int = 0) -> float:
    """Run time of profile ``name`` on hosts of ``speed_flops`` (``parallel_homogeneous``: cpu / speed; ``delay``;
    ``composed``: its parts × ``repeat``).

    Raises:
        ValueError: an unknown profile, or a type without a run time of its own.
    """
    profile = profiles.get(name)
    if profile is None:
        raise ValueError(f"profile '{name}' does not exist")
    kind = profile.get("type")
    if kind == "parallel_homogeneous":
        return float(profile["cpu"]) / speed_flops
    if kind == "delay":
        return float(profile["delay"])
    if kind == "composed" and _depth < limit("profile_depth"):  # the nesting `wattsched run` takes
        once = sum(profile_runtime_s(profiles, part, speed_flops, _depth + 1) for part in profile.get("seq", []))
        return once * int(profile.get("repeat", 1))
    raise ValueError(f"profile '{name}' of type {kind!r} has no run time of its own (parallel_homogeneous, delay "
                     "or composed of them)")


def job_runtimes_s(workload: Mapping[str, Any], speed_flops: float, source: str = "workload") -> dict[str, float]:
    """Run time of every job (by bare id, as in ``_jobs.csv``) on hosts of ``speed_flops``.

    Raises:
        InputError: a job whose profile has no run time of its own, naming ``source`` (the workload's file).
    """
    profiles = workload.get("profiles", {})
    out: dict[str, float] = {}
    for job in workload.get("jobs", []):
        try:
            out[str(job["id"])] = profile_runtime_s(profiles, str(job["profile"]), speed_flops)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(source, f"job {job.get('id')!r}", str(exc)) from None
    return out


def estimated_walltime_s(runtime_s: float) -> float:
    """The requested time given to a job that has none: the next whole minute strictly above its run time."""
    return 60.0 * (math.floor(runtime_s / 60.0) + 1.0)


def beta_workload(workload: Mapping[str, Any], *, seed: int, speed_flops: float | None = None,
                  base_speed_flops: float | None = None, law: BetaLaw = BETA_LAW, source: str = "workload"
                  ) -> dict[str, Any]:
    """The workload with a β per job and its β profiles (module docstring).

    Args:
        workload: a Batsim workload dict of ``parallel_homogeneous`` / ``delay`` (or composed of them) jobs.
        seed: seed of the β draws (``numpy.random.default_rng``).
        speed_flops: speed of the top gear, which the compute parts are written for (default: the UPAS
            processor's, 2.3 Gflop/s).
        base_speed_flops: the speed the input's flops were written for (default ``speed_flops``): a job's run
            time at the top gear is its profile's run time at that speed.
        law: the β law (the paper's by default).
        source: what errors name the workload by (its file).

    Raises:
        OptionError: a non-positive speed. InputError: a job without a run time.
    """
    speed = UPAS_NODE.max_speed_flops if speed_flops is None else speed_flops
    base = speed if base_speed_flops is None else base_speed_flops
    for label, value in (("speed_flops", speed), ("base_speed_flops", base)):
        if not (math.isfinite(value) and value > 0):
            raise OptionError(f"{label} must be a positive number of flop/s, got {value!r}")
    jobs_in = list(workload.get("jobs", []))
    runtimes = job_runtimes_s(workload, base, source)
    betas = law.draw([int(job["res"]) for job in jobs_in], np.random.default_rng(seed))
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    estimated = killed = 0
    for job, beta in zip(jobs_in, betas):
        job = dict(job)
        job_id = str(job["id"])
        runtime = runtimes[job_id]
        walltime = job.get("walltime")
        if walltime is None or float(walltime) < 0:
            wall = estimated_walltime_s(runtime) if math.isfinite(runtime) else math.inf
            if wall > limit("time_s"):  # a walltime `wattsched run` refuses
                raise OptionError(f"base_speed_flops (--base-speed) {base:g}: job {job_id!r}, without walltime, would "
                                  f"run {runtime:g} s, a walltime beyond any simulated time; "
                                  f"{limit_hint('time_s', 's')}")
            job["walltime"] = wall
            estimated += 1
        elif runtime >= float(walltime):  # killed at its walltime, whatever the gear
            runtime = float(walltime) + KILLED_EXTRA_S
            killed += 1
        beta = float(beta)
        name = f"b{job_id}"
        parts = []
        if beta > 0.0 and runtime > 0.0:
            cpu = beta * runtime * speed
            if not math.isfinite(cpu):  # written as Infinity, which `wattsched run` (and Batsim) refuse
                raise OptionError(f"speed_flops (--speed) {speed:g}: job {job_id!r} of {runtime:g} s would need more "
                                  "flops than a workload can hold")
            parts.append(f"{name}.c")
            profiles[f"{name}.c"] = {"type": "parallel_homogeneous", "cpu": cpu, "com": 0}
        if beta < 1.0 and runtime > 0.0:
            parts.append(f"{name}.d")
            profiles[f"{name}.d"] = {"type": "delay", "delay": (1.0 - beta) * runtime}
        if not parts:  # a zero-length job: one empty computation
            parts.append(f"{name}.c")
            profiles[f"{name}.c"] = {"type": "parallel_homogeneous", "cpu": 0.0, "com": 0}
        profiles[name] = {"type": "composed", "repeat": 1, "seq": parts}
        job["profile"] = name
        job["beta"] = beta
        jobs.append(job)
    meta = dict(workload.get("meta") or {})
    meta["speed_flops"] = speed  # the compute parts are now written for the top gear: `wattsched run` checks it
    meta["upas"] = {"generator": "wattsched.workloads.upas", "seed": seed, "speed_flops": speed,
                    "base_speed_flops": base,
                    "beta_law": [[None if math.isinf(b[0]) else b[0], *b[1:]] for b in law.bands],  # null: no limit
                    "beta_clip": [law.low, law.high],
                    "nb_estimated_walltimes": estimated, "nb_killed_at_walltime": killed}
    out = {key: value for key, value in workload.items() if key not in ("jobs", "profiles", "meta")}
    out.update({"jobs": jobs, "profiles": profiles, "meta": meta})
    return out
