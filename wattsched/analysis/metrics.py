"""Metrics of a finished run, as pure functions of Batsim's output DataFrames (evalys style).

One definition for each metric of docs/architecture.md §8, used by every study:

* **bounded slowdown** of a job: ``max(1, (wait + run) / max(run, τ))``, τ = 10 s by default
  (:func:`bounded_slowdowns`); AVEbsld is its mean over the jobs that ran;
* **utilization**: ``Σ procs · run`` clipped to a window ``[t0, t1]``, divided by ``hosts · (t1 − t0)``;
  the default window is ``[first submission, makespan]`` (:func:`utilization`);
* **makespan**: last completion time of a job that ran (:func:`makespan_s`);
* **mean waiting time** over the jobs that ran (:func:`mean_waiting_time_s`);
* **total energy**: platform energy up to the last row of ``consumed_energy.csv`` (:func:`total_energy_j`);
* **energy inside a window** ``[t0, t1]`` from the cumulative energy rows, linear between rows: exact where the
  platform power is constant between two rows, which holds except inside a composed job (a UPAS job's compute part
  then its delay change the power without a row), where a window bound gets the interpolation of the rows around
  it, not the energy drawn (:func:`energy_at_j`, :func:`energy_in_window_j`);
* **energy relative to the window's all-computing maximum**: window energy / (max_power_w · (t1 − t0))
  (:func:`relative_window_energy`);
* **per-user mean stretch**, stretch = (wait + run) / run, when a user is known for the jobs
  (:func:`per_user_mean_stretch`);
* **per-user mean stretch normalized by a baseline run**: for each job of a user, its stretch divided by
  its stretch in a baseline run of the same jobs, averaged over the user's jobs (EFS paper, table I:
  "stretch-green / stretch-baseline", :func:`per_user_normalized_stretch`);
* **jobs started**, jobs per ``final_state``, jobs rejected (:func:`final_state_counts`);
* for jobs placed by EAMC (EAR metadata), the EAMC paper's metrics: response time, sum of run times, the
  jobs' model energy, mean frequencies, share in the favoured partition (:mod:`wattsched.analysis.eamc`).

Rejected jobs (``final_state`` REJECTED, empty time fields) are left out of every time metric but
counted in ``nb_jobs`` and ``nb_jobs_rejected``.

Where these differ from Batsim's own ``<prefix>_schedule.csv`` (do not mix the two):

* Batsim's ``mean_slowdown``/``max_slowdown`` use the **unbounded** slowdown (turnaround / execution,
  the ``stretch`` column of jobs.csv), and its ``mean_*`` values divide by ``nb_jobs`` **including
  rejected jobs counted as 0**; ours are bounded and averaged over the jobs that ran.
* Batsim's ``consumed_joules`` = E(last job completion) − E(first job submission): it starts at the
  first submission and stops at the last completion, while a run goes on until its last switch or
  pending call. Our ``total_energy_j`` starts at t = 0 and ends at the last row of
  ``consumed_energy.csv`` (the last job start/end or switch); ``window_energy_j`` covers exactly the
  window, extrapolating past the last row at the platform's idle/sleep power (that row's ``wattmin``:
  after the last event no job runs and no switch is pending).
* Batsim's ``time_<state>`` values omit the open interval after each machine's last change; we do
  not use them.

Usage::

    metrics = compute_metrics("results/out", window=(0.0, 3600.0), max_power_w=16 * 190.738)
    print(format_table(metrics))
    Path("metrics.json").write_text(metrics_to_json(metrics))
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Mapping, Sequence
from io import StringIO
from numbers import Real
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from wattsched.base.errors import InputError, OptionError, WattschedError, counted, printable
from wattsched.base.fileio import require_regular_file
from wattsched.base.validate import (check_number, load_json, number, option_error, positive_int,
                                     window_beyond_time)
from wattsched.analysis.outputs import (JOB_FINAL_STATES, BatsimOutputs, check_energy_job_rows, load_outputs,
                                       nb_hosts_of_run)

__all__ = [
    "DEFAULT_TAU_S",
    "bounded_slowdowns",
    "compute_metrics",
    "energy_at_j",
    "energy_in_window_j",
    "final_state_counts",
    "format_table",
    "jobs_that_ran",
    "load_workload_users",
    "read_workload_json",
    "makespan_s",
    "mean_bounded_slowdown",
    "mean_waiting_time_s",
    "metrics_to_json",
    "nb_hosts_of_run",
    "per_user_mean_stretch",
    "per_user_normalized_stretch",
    "stretches",
    "relative_window_energy",
    "total_energy_j",
    "utilization",
]

logger = logging.getLogger(__name__)

#: τ of the bounded slowdown, seconds (docs/architecture.md §8).
DEFAULT_TAU_S: Final[float] = 10.0
REJECTED: Final[str] = "REJECTED"

Window = tuple[float, float]
Metrics = dict[str, float | int]


# --------------------------------------------------------------------------------------------- jobs
def jobs_that_ran(jobs: pd.DataFrame) -> pd.DataFrame:
    """The jobs that were started (not rejected): those with a ``starting_time``."""
    ran = (jobs["final_state"] != REJECTED) & jobs["starting_time"].notna()
    return jobs[ran]


def final_state_counts(jobs: pd.DataFrame) -> dict[str, int]:
    """Number of jobs per ``final_state`` (``{"COMPLETED_SUCCESSFULLY": 8, "REJECTED": 1, ...}``)."""
    return {str(state): int(count) for state, count in jobs["final_state"].value_counts(sort=False).items()}


def bounded_slowdowns(jobs: pd.DataFrame, tau_s: float = DEFAULT_TAU_S,
                      reference_runtime_s: Mapping[str, float] | pd.Series | None = None) -> pd.Series:
    """Bounded slowdown ``max(1, (wait + run) / max(run, τ))`` of each job that ran, indexed by job_id.

    Args:
        jobs: a jobs.csv frame (:func:`wattsched.analysis.outputs.read_jobs`).
        tau_s: τ in seconds; runs shorter than τ count as τ.
        reference_runtime_s: job_id → the run time of the denominator, when it is not the job's own: the UPAS
            paper's eq. 6 divides a job slowed by DVFS by its run time at the top frequency,
            ``max(1, (wait + run(f)) / max(τ, run(f_top)))``. Jobs missing from it use their own.
    """
    if tau_s <= 0:
        raise ValueError(f"tau_s must be positive, got {tau_s}")
    ran = jobs_that_ran(jobs)
    wait, run = ran["waiting_time"], ran["execution_time"]
    base = run
    if reference_runtime_s is not None:
        reference = pd.Series(reference_runtime_s, dtype=float)
        base = ran["job_id"].astype(str).map(reference).fillna(run)
    values = np.maximum(1.0, (wait + run) / np.maximum(base, tau_s))
    return pd.Series(values.to_numpy(dtype=float), index=ran["job_id"].to_numpy(), name="bounded_slowdown")


def mean_bounded_slowdown(jobs: pd.DataFrame, tau_s: float = DEFAULT_TAU_S,
                          reference_runtime_s: Mapping[str, float] | pd.Series | None = None) -> float:
    """AVEbsld: mean bounded slowdown over the jobs that ran (NaN when none ran); ``reference_runtime_s`` as in
    :func:`bounded_slowdowns` (the UPAS paper's eq. 6)."""
    values = bounded_slowdowns(jobs, tau_s, reference_runtime_s)
    return float(values.mean()) if len(values) else math.nan


def makespan_s(jobs: pd.DataFrame) -> float:
    """Completion time of the last job that ran, seconds (NaN when none ran).

    Equals Batsim's ``makespan`` key; like Batsim, measured from t = 0, not from the first submission.
    """
    ran = jobs_that_ran(jobs)
    return float(ran["finish_time"].max()) if len(ran) else math.nan


def mean_waiting_time_s(jobs: pd.DataFrame) -> float:
    """Mean waiting time of the jobs that ran, seconds (Batsim's ``mean_waiting_time`` also averages
    the rejected jobs as 0)."""
    ran = jobs_that_ran(jobs)
    return float(ran["waiting_time"].mean()) if len(ran) else math.nan


def default_window(jobs: pd.DataFrame) -> Window:
    """``[first submission, makespan]``, the window of every windowed metric when none is given."""
    first = jobs["submission_time"].min()
    return (float(first) if pd.notna(first) else 0.0, makespan_s(jobs))


def utilization(jobs: pd.DataFrame, nb_hosts: int, window: Window | None = None) -> float:
    """Σ procs · run inside the window / (hosts · window length).

    Args:
        jobs: a jobs.csv frame.
        nb_hosts: number of compute hosts of the platform.
        window: ``(t0_s, t1_s)``; default ``[first submission, makespan]``.

    Returns:
        A fraction in [0, 1] (NaN for an empty window or when no job ran with the default window).
    """
    if nb_hosts <= 0:
        raise ValueError(f"nb_hosts must be positive, got {nb_hosts}")
    t0, t1 = window if window is not None else default_window(jobs)
    if not t1 > t0:
        return math.nan
    ran = jobs_that_ran(jobs)
    start = ran["starting_time"].clip(lower=t0, upper=t1)
    end = ran["finish_time"].clip(lower=t0, upper=t1)
    busy = float((ran["requested_number_of_resources"] * (end - start)).sum())
    return busy / (nb_hosts * (t1 - t0))


# --------------------------------------------------------------------------------------- per user
def read_workload_json(workload: str | Path) -> Any:
    """The JSON content of the workload file ``workload``, as :func:`compute_metrics` reads it for per-user values:
    ``wattsched run --per-user`` reads it before the simulation, so that a workload file deleted or replaced during a
    long run does not fail the command (or change the users) once the outputs are written.

    Raises:
        InputError: an unreadable file or JSON.
    """
    source = str(workload)
    try:
        require_regular_file(workload)
        data = Path(workload).read_bytes()
    except OSError as error:
        raise InputError(source, "", f"cannot read the workload ({error.strerror})") from error
    return load_json(data, source, unique_keys=True)


def _workload_jobs(workload: str | Path | Mapping[str, Any], name: str | None = None) -> tuple[str, list[Any]]:
    """The workload's name for messages (``name`` for a content, else ``<workload>``) and its ``jobs`` list.

    Raises:
        InputError: unreadable JSON or no ``jobs`` list.
    """
    source = str(workload) if isinstance(workload, (str, Path)) else name or "<workload>"
    content = read_workload_json(workload) if isinstance(workload, (str, Path)) else workload
    jobs = content.get("jobs") if isinstance(content, Mapping) else None
    if not isinstance(jobs, list):
        raise InputError(source, "jobs", "missing or not a list")
    return source, jobs


def _require_run_jobs_in_workload(jobs: pd.DataFrame, source: str, listed: list[Any]) -> dict[str, Mapping]:
    """Every job of the run is a job of the workload ``source`` (its ``listed`` jobs; per-user values joined on a part of the run would be
    silently wrong); the workload's jobs by bare id.

    Raises:
        InputError: naming the workload, how many of the run's jobs it lacks and the first one.
    """
    known = {str(job["id"]).split("!")[-1]: job for job in listed if isinstance(job, Mapping) and "id" in job}
    missing = [job_id for job_id in jobs["job_id"].astype(str) if job_id.split("!")[-1] not in known]
    if missing:
        raise InputError(source, "jobs", f"{len(missing)} of the run's {counted(len(jobs), 'job')} "
                                         f"{'is' if len(missing) == 1 else 'are'} not in this workload "
                                         f"(first: job {missing[0]!r}): not the workload of this run")
    return known


def _require_run_jobs_as_in_workload(jobs: pd.DataFrame, source: str, known: Mapping[str, Mapping]) -> None:
    """Each job of the run (all in the workload ``source``, ``known`` by bare id: :func:`_require_run_jobs_in_workload`)
    was submitted at its ``subtime`` for its ``res``, as the run wrote them (``submission_time`` with Batsim's 6
    decimals): the same ids are not yet the same jobs (every workload numbers its jobs from 1).

    Raises:
        InputError: naming the workload, the first job and field that differ.
    """
    for job_id, subtime, hosts in zip(jobs["job_id"].astype(str), jobs["submission_time"],
                                      jobs["requested_number_of_resources"]):
        job = known[job_id.split("!")[-1]]
        for field, spec, ours in (("subtime", ".6f", subtime), ("res", "g", hosts)):
            theirs = job.get(field)
            given = (format(theirs, spec) if isinstance(theirs, Real) and not isinstance(theirs, bool)
                     else printable(repr(theirs)[:40]))
            if given != format(ours, spec):
                raise InputError(source, f"job {job_id!r}.{field}", f"{given} where the run has {ours:{spec}}: "
                                                                    "not the workload of this run")


def load_workload_users(workload: str | Path | Mapping[str, Any], name: str | None = None) -> dict[str, str]:
    """Map job ids (bare, as in jobs.csv) to users from a Batsim workload with ``user`` (or ``user_id``)
    fields on its jobs, each an account as the schedulers read ``user``
    (:func:`~wattsched.energy_models.accounting.parse_user`: ``7`` is ``"7"``).

    Args:
        workload: the workload JSON path or its parsed content.
        name: what errors call a ``workload`` given as content (default ``<workload>``).

    Raises:
        InputError: unreadable JSON, no ``jobs`` list, or a ``user`` (``user_id``) that names no account: a
            boolean, a list, an object, an empty string (``true`` and ``[1, 2]`` were users "True" and "[1, 2]").
    """
    from wattsched.energy_models.accounting import USER_FIELD, parse_user

    source, jobs = _workload_jobs(workload, name)
    users: dict[str, str] = {}
    for job in jobs:
        if not isinstance(job, Mapping) or "id" not in job:
            continue
        field = USER_FIELD if USER_FIELD in job else "user_id"
        try:
            user = parse_user(job.get(field))
        except ValueError as error:
            raise InputError(source, f"job '{job['id']}'.{field}", str(error)) from None
        if user is not None:
            users[str(job["id"]).split("!")[-1]] = user
    return users


def stretches(jobs: pd.DataFrame) -> pd.Series:
    """Stretch ``(wait + run) / run`` of each job that ran, indexed by job_id (Batsim's unbounded
    "slowdown"; the EFS paper's stretch). A run shorter than the 6 decimals Batsim prints its times with (a
    walltime of 1e-7 s reached: ``0.000000``) takes the file's ``stretch``, which Batsim computed from the exact
    times (its own was ``wait / 0``: infinite, or NaN and left out of the means)."""
    ran = jobs_that_ran(jobs)
    run = ran["execution_time"]
    values = (ran["waiting_time"] + run) / run
    if "stretch" in ran.columns:
        values = values.where(run > 0, ran["stretch"])
    return pd.Series(values.to_numpy(dtype=float), index=ran["job_id"].astype(str).to_numpy(), name="stretch")


def _owners(jobs: pd.DataFrame, users: Mapping[str, str] | None) -> pd.Series | None:
    """User of each job that ran, indexed by job_id (None: no user known)."""
    ran = jobs_that_ran(jobs)
    ids = ran["job_id"].astype(str).to_numpy()
    if "user" in ran.columns:
        return pd.Series(ran["user"].astype(str).to_numpy(), index=ids)
    if users:
        return pd.Series([users.get(job_id) for job_id in ids], index=ids, dtype=object)
    return None


def per_user_mean_stretch(jobs: pd.DataFrame, users: Mapping[str, str] | None = None) -> dict[str, float]:
    """Mean stretch ``(wait + run) / run`` per user over the jobs that ran.

    Args:
        jobs: a jobs.csv frame; its ``user`` column is used when present.
        users: job_id → user (:func:`load_workload_users`), used when jobs has no ``user`` column.

    Returns:
        ``{user: mean stretch}``; empty when no user is known for any job (Batsim's jobs.csv has no
        user column).
    """
    owner = _owners(jobs, users)
    if owner is None:
        return {}
    frame = pd.DataFrame({"user": owner, "stretch": stretches(jobs)}).dropna(subset=["user"])
    return {str(user): float(value) for user, value in frame.groupby("user")["stretch"].mean().items()}


def per_user_normalized_stretch(jobs: pd.DataFrame, baseline: pd.DataFrame,
                                users: Mapping[str, str] | None = None, *, statistic: str = "mean"
                                ) -> dict[str, float]:
    """Per user, the mean over her jobs of ``stretch / stretch in the baseline run`` (EFS paper, table I).

    Args:
        jobs: the jobs.csv frame of the run.
        baseline: the jobs.csv frame of the baseline run of the same jobs (same job ids).
        users: job_id → user, when ``jobs`` has no ``user`` column.
        statistic: ``"mean"`` of the ratios (the paper's); ``"geometric"`` mean of the ratios (a job
            twice as slow and one twice as fast cancel out, where the mean counts +25 %); or
            ``"ratio-of-means"``, the user's mean stretch over her mean stretch in the baseline.

    Returns:
        ``{user: value}`` over the jobs that ran in both runs; empty when no user is known.
    """
    owner = _owners(jobs, users)
    if owner is None:
        return {}
    new, old = stretches(jobs), stretches(baseline)  # aligned on job_id; jobs missing from one are NaN
    frame = pd.DataFrame({"user": owner, "new": new, "old": old}).dropna()
    grouped = frame.groupby("user")
    if statistic == "mean":
        values = (frame["new"] / frame["old"]).groupby(frame["user"]).mean()
    elif statistic == "geometric":
        values = np.exp(np.log(frame["new"] / frame["old"]).groupby(frame["user"]).mean())
    elif statistic == "ratio-of-means":
        values = grouped["new"].mean() / grouped["old"].mean()
    else:
        raise ValueError(f"statistic must be mean, geometric or ratio-of-means, got {statistic!r}")
    return {str(user): float(value) for user, value in values.items()}


# ------------------------------------------------------------------------------------------ energy
def _energy_curve(energy: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Distinct row times and the cumulative energy at each (last row of a time wins)."""
    if energy.empty:
        raise ValueError("the consumed_energy frame has no rows")
    curve = energy.groupby("time", sort=True)["energy"].last()
    return curve.index.to_numpy(dtype=float), curve.to_numpy(dtype=float)


def total_energy_j(energy: pd.DataFrame) -> float:
    """Energy of the compute hosts from t = 0 to the last row of consumed_energy.csv, joules."""
    _, energies = _energy_curve(energy)
    return float(energies[-1])


def energy_at_j(energy: pd.DataFrame, time_s: float) -> float:
    """Cumulative platform energy at ``time_s``, joules.

    Linear between rows. Batsim writes a row at every job start and end and every pstate change (behaviour 30),
    so the platform power is constant between two rows, except inside a composed job: its parts (a UPAS job's
    compute part, then its delay) change the power without a row, and a time inside one gets the interpolation
    of the rows around it rather than the energy drawn (one Taurus host computing 100 s then waiting 100 s:
    14,286.9 J at 100 s, where it drew 19,073.8 J). The files hold nothing better. Before t = 0 it is 0.
    After the last row it grows at that row's ``wattmin`` (after the last event no job runs and no switch is
    pending, so every host draws its idle or sleep power): this reproduces Batsim's ANSWER at the end of a run
    that outlives its last job (``dvfs-energy``, t = 500).
    """
    times, energies = _energy_curve(energy)
    if time_s <= 0.0:
        return 0.0
    if time_s <= times[-1]:
        return float(np.interp(time_s, np.concatenate(([0.0], times)), np.concatenate(([0.0], energies))))
    tail_power_w = 0.0
    if "wattmin" in energy.columns and pd.notna(energy["wattmin"].iloc[-1]):
        tail_power_w = float(energy["wattmin"].iloc[-1])
    else:
        logger.warning("no wattmin column: energy after the last row (t=%g) counted as 0", times[-1])
    return float(energies[-1] + tail_power_w * (time_s - times[-1]))


def energy_in_window_j(energy: pd.DataFrame, window: Window) -> float:
    """Energy consumed by the compute hosts during ``[t0, t1]``, joules (see :func:`energy_at_j`)."""
    t0, t1 = window
    if t1 < t0:
        raise ValueError(f"window end {t1} is before its start {t0}")
    return energy_at_j(energy, t1) - energy_at_j(energy, t0)


def relative_window_energy(energy: pd.DataFrame, window: Window, max_power_w: float) -> float:
    """Window energy divided by the window's all-computing maximum ``max_power_w · (t1 − t0)``.

    Args:
        max_power_w: platform power when every compute host computes at its top pstate, watts
            (e.g. 16 × 190.738 W for 16 Taurus nodes).
    """
    t0, t1 = window
    if max_power_w <= 0 or not t1 > t0:
        return math.nan
    maximum_j = max_power_w * (t1 - t0)
    if maximum_j == 0:  # the product underflows (1e-300 W over 1e-300 s): the ratio is beyond a double
        return math.inf
    return energy_in_window_j(energy, window) / maximum_j


# ------------------------------------------------------------------------------------- all of them
def _state_key(state: str) -> str:
    return "nb_jobs_" + "".join(c if c.isalnum() else "_" for c in state.lower())


#: The metrics :func:`compute_metrics` gives under fixed names (besides ``mean_stretch_user_<user>`` and EAMC's of each
#: partition): no extra window's column may take one (a window named ``window`` replaced ``window_energy_j``).
FIXED_METRICS: Final[frozenset[str]] = frozenset({
    "nb_jobs", "nb_jobs_started", "nb_jobs_rejected", *(_state_key(state) for state in JOB_FINAL_STATES),
    "makespan_s", "mean_waiting_time_s", "mean_bounded_slowdown", "max_bounded_slowdown", "mean_stretch", "nb_hosts",
    "window_start_s", "window_end_s", "utilization", "whole_run_utilization", "total_energy_j", "window_energy_j",
    "window_energy_relative", "makespan_since_first_submission_s", "mean_response_time_s", "sum_runtimes_s",
    "jobs_energy_j", "mean_frequency_ghz", "favoured_partition_share"})


def extra_window_columns(name: str) -> tuple[str, str, str]:
    """The metrics :func:`compute_metrics` adds for the extra window ``name``."""
    return f"{name}_utilization", f"{name}_energy_j", f"{name}_nb_jobs_started"


def extra_window_problem(name: str) -> str | None:
    """Why ``name`` cannot name an extra window (a column of it is another metric), or None."""
    taken = [column for column in extra_window_columns(name) if column in FIXED_METRICS]
    return (f"its metric {taken[0]} is one of every run's: it would replace it; give the window another name"
            if taken else None)


def compute_metrics(
    outputs_path: str | Path | BatsimOutputs,
    *,
    tau_s: float = DEFAULT_TAU_S,
    window: Window | None = None,
    nb_hosts: int | None = None,
    workload: str | Path | Mapping[str, Any] | None = None,
    max_power_w: float | None = None,
    extra_windows: Mapping[str, Window] | None = None,
    workload_name: str | None = None,
) -> Metrics:
    """Every metric of docs/architecture.md §8 for one run.

    Args:
        outputs_path: folder, prefix path (``results/out``) or loaded outputs.
        tau_s: τ of the bounded slowdown, seconds.
        window: ``(t0_s, t1_s)`` of utilization and window energy; default ``[first submission, makespan]``.
        nb_hosts: compute hosts; default ``nb_computing_machines`` of schedule.csv, else the hosts counted in
            the first row of machine_states.csv.
        workload: Batsim workload (path or content) whose jobs carry ``user``: enables per-user stretch.
        workload_name: what errors call a ``workload`` given as content (its file's name; default ``<workload>``).
        max_power_w: all-computing platform power, watts: enables ``window_energy_relative``.
        extra_windows: named windows measured too: ``{"budget": (t0_s, t1_s)}`` adds ``budget_utilization``,
            ``budget_energy_j`` and ``budget_nb_jobs_started``.

    Returns:
        A flat ``{name: number}`` dict, units in the names: ``nb_jobs``, ``nb_jobs_started``,
        ``nb_jobs_rejected``, ``nb_jobs_<final state>``, ``makespan_s``, ``mean_waiting_time_s``,
        ``mean_bounded_slowdown``, ``max_bounded_slowdown``, ``utilization``, ``window_start_s``,
        ``window_end_s``, ``nb_hosts``, ``mean_stretch``; when a window is given also
        ``whole_run_utilization`` (first submission to makespan); with consumed_energy.csv ``total_energy_j``,
        ``window_energy_j`` (and ``window_energy_relative``); with EAMC metadata the metrics of
        :func:`wattsched.analysis.eamc.ear_metrics`; per user ``mean_stretch_user_<user>``.
        Undefined values (no job ran) are NaN.

    Raises:
        InputError: a missing file or column, no way to know the number of hosts, or a ``workload`` that lacks
            some of the run's jobs.
    """
    check_number(tau_s, "metrics", "tau_s", min=0.0, min_open=True, error=option_error)
    if window is not None:
        if not isinstance(window, (tuple, list)) or len(window) != 2:
            raise OptionError(f"metrics: window must be (start_s, end_s), got {window!r}")
        start = check_number(window[0], "metrics", "window start", min=0.0, error=option_error)
        end = check_number(window[1], "metrics", "window end", error=option_error)
        if not end > start:
            raise OptionError(f"metrics: window end {end:g} is not after its start {start:g}")
        beyond = window_beyond_time(start, end)
        if beyond:
            raise OptionError(f"metrics: window {beyond}")
    if max_power_w is not None:
        check_number(max_power_w, "metrics", "max_power_w", min=0.0, min_open=True, error=option_error)
    if nb_hosts is not None:
        check_number(nb_hosts, "metrics", "nb_hosts", min=1, integer=True, error=option_error)
    for name in extra_windows or {}:
        problem = extra_window_problem(str(name))
        if problem is not None:
            raise OptionError(f"metrics: extra window '{name}': {problem}")
    outputs = load_outputs(outputs_path)
    check_energy_job_rows(outputs)
    jobs = outputs.jobs
    hosts = nb_hosts if nb_hosts is not None else nb_hosts_of_run(outputs)
    win = window if window is not None else default_window(jobs)
    ran = jobs_that_ran(jobs)
    counts = final_state_counts(jobs)
    slowdowns = bounded_slowdowns(jobs, tau_s)

    metrics: Metrics = {
        "nb_jobs": len(jobs),
        "nb_jobs_started": len(ran),
        "nb_jobs_rejected": counts.get(REJECTED, 0),
    }
    for state in sorted(counts):
        metrics[_state_key(state)] = counts[state]
    metrics.update(
        {
            "makespan_s": makespan_s(jobs),
            "mean_waiting_time_s": mean_waiting_time_s(jobs),
            "mean_bounded_slowdown": float(slowdowns.mean()) if len(slowdowns) else math.nan,
            "max_bounded_slowdown": float(slowdowns.max()) if len(slowdowns) else math.nan,
            "mean_stretch": float(stretches(jobs).mean()) if len(ran) else math.nan,
            "nb_hosts": hosts,
            "window_start_s": float(win[0]),
            "window_end_s": float(win[1]),
            "utilization": utilization(jobs, hosts, win),
        }
    )
    if window is not None:  # a window's utilization can hide in the whole run's, and the other way round
        metrics["whole_run_utilization"] = utilization(jobs, hosts, default_window(jobs))
    if outputs.consumed_energy is not None and not outputs.consumed_energy.empty:
        energy = outputs.consumed_energy
        metrics["total_energy_j"] = total_energy_j(energy)
        valid_window = not (math.isnan(win[0]) or math.isnan(win[1])) and win[1] >= win[0]
        metrics["window_energy_j"] = energy_in_window_j(energy, win) if valid_window else math.nan
        if max_power_w is not None:
            relative = relative_window_energy(energy, win, max_power_w) if valid_window else math.nan
            if math.isinf(relative) or math.isinf(max_power_w * (win[1] - win[0])):  # was printed as Infinity, or 0
                raise OptionError(f"metrics: max_power_w (--max-power) {max_power_w:g} W: over the window's "
                                  f"{win[1] - win[0]:g} s, its energy or the window's energy relative to it is "
                                  "beyond a double; give the platform's all-computing power in watts")
            metrics["window_energy_relative"] = relative
    else:
        logger.info("no consumed_energy output: energy metrics skipped")
    started = ran["starting_time"]
    for name, (t0, t1) in (extra_windows or {}).items():
        energy = outputs.consumed_energy
        used, spent, started_in = extra_window_columns(name)
        metrics[used] = utilization(jobs, hosts, (t0, t1))
        metrics[spent] = (energy_in_window_j(energy, (t0, t1)) if energy is not None and not energy.empty else math.nan)
        metrics[started_in] = int(((started >= t0) & (started < t1)).sum())
    from wattsched.analysis.eamc import ear_metrics, has_ear_metadata

    if has_ear_metadata(jobs):  # jobs placed by EAMC (EAMC paper §5's metrics)
        metrics.update(ear_metrics(jobs))
    users = None
    if workload is not None:
        source, listed = _workload_jobs(workload, workload_name)  # read once
        known = _require_run_jobs_in_workload(jobs, source, listed)
        from wattsched.workloads.users import check_job_fields

        # users as `wattsched run` takes them: a list, an object or true is no account (not "[1, 2]")
        check_job_fields([job for job in listed if isinstance(job, Mapping)], source)
        _require_run_jobs_as_in_workload(jobs, source, known)
        users = load_workload_users({"jobs": listed}, source)
    per_user = per_user_mean_stretch(jobs, users)
    if workload is not None and not per_user:
        logger.warning("the workload gives no user for the jobs that ran: per-user stretch skipped")
    for user in sorted(per_user):
        metrics[f"mean_stretch_user_{user}"] = per_user[user]
    return metrics


# ------------------------------------------------------------------------------------------ output
def _format_value(value: float | int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if math.isnan(value):
        return "n/a"
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"


def format_table(metrics: Mapping[str, float | int], title: str = "wattsched metrics") -> str:
    """The metrics as a two-column text table (rendered with rich, without colours)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table()
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    for name, value in metrics.items():  # a user's name comes from the workload: its control characters escaped,
        table.add_row(Text(printable(name)), _format_value(value))  # and '[...]' in it is no markup of rich's
    buffer = StringIO()
    Console(file=buffer, width=80, color_system=None, force_terminal=False).print(table)
    # The title on a line of its own, as it is: as the table's title rich would wrap it to the table's width and
    # read '[...]' in a scheduler's name as markup.
    return f"{printable(title)}\n{buffer.getvalue()}"


def metrics_to_json(metrics: Mapping[str, float | int]) -> str:
    """The metrics as a JSON object (NaN and ±inf written as ``null``: JSON has neither), keys in their order."""

    def clean(value: float | int) -> float | int | None:
        if isinstance(value, (int, np.integer)):
            return int(value)
        return float(value) if math.isfinite(value) else None

    return json.dumps({name: clean(value) for name, value in metrics.items()}, indent=2) + "\n"


def _decimal(text: str) -> float:
    """A number of :func:`main`'s command line, in ASCII (:func:`~wattsched.base.validate.number`: ``float()``
    would read ``١٦`` and ``1_6`` too); its range is :func:`compute_metrics`' to check."""
    return number(text, "a number")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m wattsched.analysis.metrics OUTPUTS [--json] [--window T0 T1] ...``: print the metrics."""
    parser = argparse.ArgumentParser(prog="python -m wattsched.analysis.metrics", description=main.__doc__)
    parser.add_argument("outputs", help="output folder or prefix, e.g. results/out")
    parser.add_argument("--tau", type=_decimal, default=DEFAULT_TAU_S, help="τ of the bounded slowdown, s")
    parser.add_argument("--window", type=_decimal, nargs=2, metavar=("T0", "T1"), help="window, s")
    parser.add_argument("--nb-hosts", type=positive_int, help="compute hosts (default: from schedule.csv)")
    parser.add_argument("--workload", help="workload JSON with job users, for per-user stretch")
    parser.add_argument("--max-power", type=_decimal, help="all-computing platform power, W")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    try:
        metrics = compute_metrics(
            args.outputs,
            tau_s=args.tau,
            window=tuple(args.window) if args.window else None,
            nb_hosts=args.nb_hosts,
            workload=args.workload,
            max_power_w=args.max_power,
        )
    except WattschedError as error:  # a bad file (InputError) or value (OptionError: --tau -1): one line
        sys.stderr.write(f"error: {error}\n")
        return 2
    sys.stdout.write(metrics_to_json(metrics) if args.json else format_table(metrics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
