"""Metrics of a run with DVFS, as the UPAS paper reports them (§4), from Batsim's outputs and the workload.

Pure functions over the ``_jobs.csv`` frame (:func:`wattsched.analysis.outputs.read_jobs`) and the workload's
β and profiles (:mod:`wattsched.workloads.upas`), so that they work on any run, real Batsim's too:

* :func:`job_gears`: per job that ran, its run time at the top gear, its β and the **gear it ran at**, read
  back from its execution time: ``run(f) = T·(β·(f_top/f − 1) + 1)`` (eq. 4) is matched against every gear
  (``_pstate_changes.csv`` prints its times to 6 significant digits, too coarse to tell the job of a change on
  a long run; run times are exact to the microsecond). A job killed at its walltime ran its requested time
  rescaled the same way. A job whose time matches no gear gets NaN.
* :func:`jobs_per_gear`: jobs run at each gear (figure 3 counts those at a reduced one).
* :func:`model_cpu_energy`: the CPU energy of the paper's power model (eq. 3, :mod:`wattsched.energy_models.upas`)
  in its two scenarios (§4.1): **idle processors at 0 W** (the "computational" energy: Σ jobs processors ×
  run(f) × P_run(f)), and **idle processors at the idle power of the lowest gear** (21 % of the top running
  power) over ``[first submission, makespan]``. Batsim's own energy differs: it bills a job's delay part (the
  ``1 − β`` of its time) at the idle power of its gear and idle hosts at the idle power of the gear they last
  ran at.
* :func:`upas_bsld`: average BSLD with the paper's threshold of 10 minutes, a slowed job divided by its run time
  at the top gear (eq. 5-6; :func:`wattsched.analysis.metrics.bounded_slowdowns`).
* :func:`time_series`: per bin, the utilization, the average frequency of the busy processors and the mean
  number of waiting jobs (figure 4), and :func:`share_of_time_below`: the share of intervals whose
  utilization is below a level (table 1's %T medium U and %T low U).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from wattsched.analysis.metrics import jobs_that_ran, mean_bounded_slowdown
from wattsched.energy_models.upas import UPAS_POWER, UpasPowerModel

__all__ = ["RT_THRESHOLD_S", "job_gears", "jobs_per_gear", "model_cpu_energy", "upas_bsld", "time_series",
           "share_of_time_below"]

#: The UPAS paper's RTthreshold of the bounded slowdown (eq. 5-6): 10 minutes.
RT_THRESHOLD_S = 600.0


def _workload_tables(workload: Mapping[str, Any], top_speed_flops: float) -> pd.DataFrame:
    from wattsched.workloads.upas import job_runtimes_s

    runtimes = job_runtimes_s(workload, top_speed_flops)
    rows = []
    for job in workload.get("jobs", []):
        job_id = str(job["id"])
        walltime = job.get("walltime")
        walltime = math.nan if walltime is None or float(walltime) < 0 else float(walltime)
        rows.append((job_id, runtimes[job_id], walltime, float(job.get("beta", 1.0))))
    frame = pd.DataFrame(rows, columns=["job_id", "profile_runtime_s", "walltime_top_s", "beta"])
    return frame.set_index("job_id")


def job_gears(jobs: pd.DataFrame, workload: Mapping[str, Any], *, gears_ghz: Sequence[float],
              top_speed_flops: float, tolerance_s: float = 1e-3) -> pd.DataFrame:
    """The jobs that ran, with their run time at the top gear and the gear they ran at (module docstring).

    Args:
        jobs: a ``_jobs.csv`` frame (replacements merged: :func:`wattsched.analysis.outputs.load_outputs`).
        workload: the Batsim workload the run simulated (its ``beta`` fields and profiles).
        gears_ghz: the platform's gears; the fastest is the top gear.
        top_speed_flops: the speed of the top gear (the profiles' run times are read at it).
        tolerance_s: how far (plus 1e-6 relative) an execution time may be from a gear's prediction.

    Returns:
        One row per job that ran, indexed by job_id: ``res``, ``start_s``, ``end_s``, ``wait_s``, ``run_s``
        (execution time), ``runtime_top_s`` (its run time at the top gear: the profile's, or its requested time
        when it was killed at its walltime), ``beta``, ``gear_ghz`` (NaN when no gear matches) and ``slowdown``
        (``run_s / runtime_top_s``).
    """
    ran = jobs_that_ran(jobs)
    table = _workload_tables(workload, top_speed_flops)
    ids = ran["job_id"].astype(str).to_numpy()
    known = table.reindex(ids)
    run = ran["execution_time"].to_numpy(dtype=float)
    beta = known["beta"].fillna(1.0).to_numpy(dtype=float)
    profile_t = known["profile_runtime_s"].to_numpy(dtype=float)
    wall_t = known["walltime_top_s"].to_numpy(dtype=float)
    killed = (ran["final_state"] == "COMPLETED_WALLTIME_REACHED").to_numpy()
    top = max(gears_ghz)
    stretch = np.array([top / g - 1.0 for g in gears_ghz])  # f_top / f − 1 per gear
    # candidates (base run time at the top gear, β of the rescaling): the job's run; when it was killed, its
    # walltime rescaled by its β, or by β = 1 (a scheduler assuming the worst case)
    killed_wall = np.where(killed, wall_t, np.nan)
    bases = np.stack([profile_t, killed_wall, killed_wall], axis=1)
    betas = np.stack([beta, beta, np.ones_like(beta)], axis=1)
    predicted = bases[:, :, None] * (betas[:, :, None] * stretch[None, None, :] + 1.0)
    error = np.abs(predicted - run[:, None, None])
    error = np.where(np.isnan(error), np.inf, error)
    flat = error.reshape(len(run), -1).argmin(axis=1) if len(run) else np.zeros(0, dtype=int)
    best = error.reshape(len(run), -1)[np.arange(len(run)), flat] if len(run) else np.zeros(0)
    gear = np.array(gears_ghz, dtype=float)[flat % len(gears_ghz)] if len(run) else np.zeros(0)
    ok = best <= tolerance_s + 1e-6 * run
    runtime_top = np.where(killed & ~np.isnan(wall_t), np.minimum(wall_t, profile_t), profile_t)
    return pd.DataFrame({
        "res": ran["requested_number_of_resources"].to_numpy(dtype=int),
        "start_s": ran["starting_time"].to_numpy(dtype=float),
        "end_s": ran["finish_time"].to_numpy(dtype=float),
        "wait_s": ran["waiting_time"].to_numpy(dtype=float),
        "run_s": run,
        "runtime_top_s": runtime_top,
        "beta": beta,
        "gear_ghz": np.where(ok, gear, np.nan),
        "slowdown": run / runtime_top,
    }, index=pd.Index(ids, name="job_id"))


def jobs_per_gear(gears: pd.DataFrame) -> dict[float, int]:
    """Number of jobs run at each gear (GHz), fastest first; NaN (no gear matched) last when any."""
    counts = gears["gear_ghz"].value_counts(dropna=False)
    return {float(g): int(n) for g, n in sorted(counts.items(), key=lambda kv: (math.isnan(kv[0]), -kv[0]))}


def model_cpu_energy(gears: pd.DataFrame, nb_hosts: int, *, window: tuple[float, float] | None = None,
                     model: UpasPowerModel = UPAS_POWER, top_power_w: float = 1.0) -> dict[str, float]:
    """The CPU energy of the paper's model in both scenarios (module docstring), in joules for a running power
    of ``top_power_w`` at the top gear (1: in top-power-seconds).

    Args:
        gears: :func:`job_gears`' frame; a job of unknown gear is counted at the top gear.
        nb_hosts: processors of the machine.
        window: ``(t0, t1)`` of the idle energy (default: first start or submission → last end).

    Returns:
        ``busy_j`` (= the scenario with idle processors at 0 W), ``idle_j`` (idle processors at the lowest
        gear's idle power), ``with_idle_j`` (their sum), ``busy_area_s`` (processor-seconds of jobs) and
        ``window_s``.
    """
    power = {g.frequency_ghz: model.running(g) for g in model.gears}
    gear = gears["gear_ghz"].fillna(model.top.frequency_ghz).to_numpy(dtype=float)
    p_run = np.array([power[min(power, key=lambda f: abs(f - g))] for g in gear]) if len(gear) else np.zeros(0)
    area = gears["res"].to_numpy(dtype=float) * gears["run_s"].to_numpy(dtype=float)
    if window is None:
        t0 = float((gears["start_s"] - gears["wait_s"]).min()) if len(gears) else 0.0
        t1 = float(gears["end_s"].max()) if len(gears) else 0.0
    else:
        t0, t1 = window
    busy = float((area * p_run).sum()) * top_power_w
    idle_area = max(0.0, nb_hosts * (t1 - t0) - float(area.sum()))
    idle = idle_area * model.idle_lowest * top_power_w
    return {"busy_j": busy, "idle_j": idle, "with_idle_j": busy + idle, "busy_area_s": float(area.sum()),
            "window_s": t1 - t0}


def upas_bsld(jobs: pd.DataFrame, gears: pd.DataFrame, tau_s: float = RT_THRESHOLD_S) -> float:
    """Average BSLD of eq. 5-6: ``max(1, (wait + run(f)) / max(τ, run(f_top)))``, τ = 10 min."""
    return mean_bounded_slowdown(jobs, tau_s, gears["runtime_top_s"])


def _step_means(starts: np.ndarray, ends: np.ndarray, weights: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time-weighted mean per bin of Σ weights over the intervals [start, end) covering each instant."""
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([weights, -weights])
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(deltas[order])
    # integral of the step function up to each edge
    points = np.concatenate([[edges[0]], times, [edges[-1]]])
    values = np.concatenate([[0.0], level, [level[-1] if len(level) else 0.0]])
    cumulative = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(points).clip(min=0))])
    at_edges = np.interp(edges, points, cumulative)
    return np.diff(at_edges) / np.diff(edges)


def time_series(gears: pd.DataFrame, nb_hosts: int, *, bin_s: float = 3600.0,
                span: tuple[float, float] | None = None) -> pd.DataFrame:
    """Per bin of ``bin_s``: ``utilization`` (busy processors / nb_hosts), ``busy_frequency_ghz`` (the average
    frequency of the busy processors, NaN when none is busy) and ``waiting_jobs`` (mean number of jobs in the
    wait queue), time-weighted; ``t_s`` is the bin's start (figure 4)."""
    if span is None:
        t0 = float((gears["start_s"] - gears["wait_s"]).min()) if len(gears) else 0.0
        span = (0.0 if t0 >= 0 else t0, float(gears["end_s"].max()) if len(gears) else bin_s)
    edges = np.arange(span[0], span[1] + bin_s, bin_s)
    if len(edges) < 2:
        edges = np.array([span[0], span[0] + bin_s])
    start, end = gears["start_s"].to_numpy(float), gears["end_s"].to_numpy(float)
    res = gears["res"].to_numpy(float)
    freq = gears["gear_ghz"].fillna(max(gears["gear_ghz"].max(skipna=True), 0.0) if len(gears) else 0.0).to_numpy(float)
    busy = _step_means(start, end, res, edges)
    busy_f = _step_means(start, end, res * freq, edges)
    submit = start - gears["wait_s"].to_numpy(float)
    waiting = _step_means(submit, start, np.ones_like(start), edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_f = np.where(busy > 1e-12, busy_f / busy, np.nan)
    return pd.DataFrame({"t_s": edges[:-1], "utilization": busy / nb_hosts, "busy_frequency_ghz": mean_f,
                         "waiting_jobs": waiting})


def share_of_time_below(gears: pd.DataFrame, nb_hosts: int, level: float, *, interval_s: float = 600.0) -> float:
    """Share of the intervals of ``interval_s`` (from the first submission to the makespan) whose utilization
    (eq. 1) is below ``level``: table 1's %T medium U (level 0.8) and %T low U (0.5)."""
    series = time_series(gears, nb_hosts, bin_s=interval_s)
    return float((series["utilization"] < level).mean()) if len(series) else math.nan
