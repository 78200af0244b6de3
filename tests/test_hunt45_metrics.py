"""Hunt 45: an independent oracle of every metric ``wattsched metrics --json`` prints.

The oracle below recomputes the metrics from the raw CSV files (and the workload JSON for the users) with plain
pandas/numpy, written from the definitions, not from ``wattsched/analysis/metrics.py``; the tests compare it with
:func:`wattsched.analysis.metrics.compute_metrics` (what ``wattsched metrics``, ``wattsched run``'s summary, the
sweeps' results tables and the web page print) on every golden output, every recording of real Batsim and fresh
runs of the presets on small generated inputs, to a relative tolerance of 1e-9 (:data:`REL`).

Definitions implemented (sources: ``/work/shared/DESIGN.md`` §7 "Metrics (one definition each, used everywhere)",
``docs/architecture.md`` §8 which repeats it, the papers in ``/work/shared/papers/``, and the output formats of
``tests/fixtures/batsim-reference/README.md``, "behaviour N" below):

Which jobs
    A job is one job of the workload (static or dynamically registered). A job that a scheduler replaced at its
    start (UPAS's DVFS-slowed walltime, EAMC's frequency, composed profiles: ``resized!<w>.<id>`` or
    ``<w>!resized.<id>``, ``wattsched/base/batsim_files.py``) appears twice in ``_jobs.csv``: the original,
    REJECTED, and its replacement; it counts once, as the replacement (which Batsim submits at the original's
    ``subtime``, behaviour 44). A job *ran* when its final state is not REJECTED (behaviour 18: a rejected job has
    no time fields); killed jobs and jobs that reached their walltime ran (they held their hosts until then).

``nb_jobs``, ``nb_jobs_started``, ``nb_jobs_rejected``, ``nb_jobs_<final state>``
    Jobs, jobs that ran ("jobs started", DESIGN §7; energy-budget paper §V-D "number of job started"), jobs
    rejected, and jobs per ``final_state``.
``makespan_s``
    Last ``finish_time`` of a job that ran, from t = 0 (DESIGN §7 "makespan"; Batsim's ``makespan``, behaviour 29).
``mean_waiting_time_s``
    Mean over the jobs that ran of ``wait_j = start_j − r_j`` (energy-budget paper §II-C), Batsim's
    ``waiting_time`` column.
``mean_bounded_slowdown``, ``max_bounded_slowdown``
    AVEbsld (energy-budget paper §II-C; UPAS paper eq. 5; DESIGN §7): mean over the jobs that ran of
    ``max(1, (wait + run) / max(run, τ))``, τ = 10 s (``--tau``); and the largest. Batsim's ``stretch``/``slowdown``
    is not used (DESIGN §7). Run and wait are Batsim's ``execution_time`` and ``waiting_time`` columns, computed
    from its exact clock before printing (behaviour 28): the difference of two printed times is off by up to 1e-6 s,
    1.4e-8 relative on the 70 s jobs of the EAMC goldens, beyond :data:`REL`.
``mean_stretch``, ``mean_stretch_user_<u>``
    Stretch ``(wait + run) / run`` (EFS paper §IV-B, Batsim's unbounded slowdown; for a run shorter than the
    microsecond Batsim prints, 0.000000, Batsim's ``stretch`` column, the ratio of its exact times), mean over the
    jobs that ran, and per user (DESIGN §7 "per-user mean stretch") with users taken from the
    workload's ``user`` field (or ``user_id``; a number is its text, as the schedulers read it), joined on the bare
    job id. Per user normalized by a baseline run (EFS paper §IV-B, table I, "stretch-green / stretch-baseline"):
    the mean of the ratios over her jobs that ran in both runs.
``nb_hosts``
    ``nb_computing_machines`` of ``_schedule.csv`` (behaviour 29).
``window_start_s``, ``window_end_s``
    The window given, else [first submission of any job, makespan] (the project's documented default,
    ``metrics.py`` docstring).
``utilization`` (and ``whole_run_utilization``, ``<name>_utilization``)
    ``Σ hosts_j · |[start_j, finish_j] ∩ [t0, t1]| / (hosts_total · (t1 − t0))`` (DESIGN §7; energy-budget paper
    §II-C "the proportion of processors that have been used during a time period", §V-D: jobs after the period
    do not count): a job partly inside counts for its part inside; hosts asleep count in hosts_total.
``total_energy_j``
    Cumulative energy of the last ``_consumed_energy.csv`` row (behaviour 30: cumulative J since 0 of the compute
    hosts; the last row is the last job end or switch).
``window_energy_j`` (and ``<name>_energy_j``)
    ``E(t1) − E(t0)`` (energy-budget paper §V-D "energy consumed during the week"), E the cumulative energy:
    0 at t = 0, linear between two rows, and past the last row growing at that row's ``wattmin`` (the idle or
    sleep power of every host: after the last row no job runs and no switch is pending, behaviour 30). Rows
    sharing a printed time: the last one (behaviour 5: the later clock). Checked against the 121 ANSWERs of real
    Batsim in the recordings. Linear is exact where nothing changes the hosts' power between two rows (rows come
    at every job start and end and pstate change, behaviours 25 and 30), not inside a composed job, whose parts
    change it without a row: there the files cannot give the energy drawn, and the oracle, like the project,
    interpolates (:func:`test_window_energy_is_exact_between_rows_and_interpolated_inside_a_composed_job`).
``window_energy_relative``
    ``window_energy_j / (max_power_w · (t1 − t0))`` (energy-budget paper Fig. 4 "energy consumed during the week
    relative to the maximum energy consumable during the same period"; DESIGN §7).
``<name>_nb_jobs_started`` (sweeps' extra windows)
    Jobs that ran whose ``starting_time`` is in ``[t0, t1)`` (``wattsched/experiments/sweep.py`` docstring).
EAMC (``makespan_since_first_submission_s`` ...), EAMC paper §5 "Metrics"
    makespan = last job end − first job arrival; response time = end − arrival (mean, also per partition); sum of
    the jobs' run times; the jobs' energy Σ node_w · nodes · run time of the jobs with EAR metadata (idle nodes
    excluded), also per partition; mean picked frequency (also per partition); the share of jobs in their
    favoured partition (overall, among the jobs favouring each partition), and the share of jobs per partition.

ESC statistics (``wattsched node-stats``, the ESC reproduction's table), ESC paper §2.7 and table 2
    From ``_pstate_changes.csv`` (its times, printed with ``%g``, replaced by those of the ``p`` rows of
    ``_consumed_energy.csv``, 6 decimals: one per request and per completion, behaviours 30-31) and the jobs: a
    host is inactive (standby) from the completion of its switch-off to its next boot request, active otherwise
    ("the time that the nodes are powered on"), over [0, the last time any file mentions, with 6 decimals (the
    ``%g`` of ``_machine_states.csv`` may be rounded up)]; number of shutdowns
    (switch-off requests per host), maximum active nodes (hosts not asleep, after all the changes of one time),
    active and inactive time (total and per node), the "average of active (inactive) intervals per node" (per
    host the mean length of its maximal active (inactive) runs, summed over hosts, and per node), the mean time
    between two shutdowns of a host, seconds per state (running = Σ hosts × run of the jobs, switching = request
    to completion, idle = the rest), the energy to the makespan and, against a baseline (the always-on run),
    the makespan and energy ratios.
UPAS ``bsld600`` (the UPAS reproduction's table), UPAS paper eq. 5-6
    ``max(1, (wait + run(f)) / max(600 s, run(f_top)))``, run(f_top) the profile's run time at the top gear
    (capped by the walltime for a job stopped at its walltime), averaged over the jobs that ran.

Tolerance: :data:`REL` = 1e-9 relative (plus 1e-9 absolute for values near 0), for the order of floating-point
sums; counts and keys are compared exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "batsim-reference"

#: Relative tolerance of every comparison (absolute near 0).
REL = 1e-9
ABS = 1e-9
TAU_S = 10.0
RESIZED = "resized"
STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")
JOB_NUMBERS = ("submission_time", "requested_number_of_resources", "starting_time", "execution_time", "finish_time",
               "waiting_time", "stretch")


# ------------------------------------------------------------------------------------------- oracle
def oracle_jobs(prefix: Path) -> pd.DataFrame:
    """``<prefix>_jobs.csv``, one row per job of the workload: a replaced job's REJECTED row dropped for its
    replacement's, which takes the original's workload and id."""
    raw = pd.read_csv(f"{prefix}_jobs.csv", dtype=str, keep_default_na=False)
    for column in JOB_NUMBERS:
        raw[column] = pd.to_numeric(raw[column].replace("", np.nan), errors="raise").astype(float)
    rejected = {(w, j) for w, j, s in zip(raw["workload_name"], raw["job_id"], raw["final_state"]) if s == "REJECTED"}
    keys, replaces = [], []
    for workload, job_id in zip(raw["workload_name"], raw["job_id"]):
        original = None
        if workload == RESIZED and "." in job_id:
            original = tuple(job_id.split(".", 1))
        elif job_id.startswith(RESIZED + ".") and (workload, job_id[len(RESIZED) + 1:]) in rejected:
            original = (workload, job_id[len(RESIZED) + 1:])
        keys.append(original if original is not None else (workload, job_id))
        replaces.append(original is not None)
    raw["key"], raw["replacement"] = keys, replaces
    replaced = set(raw.loc[raw["replacement"], "key"])
    assert raw.loc[raw["replacement"], "key"].is_unique, "a job replaced twice"
    keep = raw["replacement"] | ~raw["key"].isin(replaced)
    jobs = raw[keep].copy()
    jobs["workload_name"] = [k[0] for k in jobs["key"]]
    jobs["job_id"] = [k[1] for k in jobs["key"]]
    assert jobs["key"].is_unique
    return jobs.reset_index(drop=True)


def oracle_energy_at(rows: pd.DataFrame, time_s: float) -> float:
    """Cumulative energy at ``time_s`` (module docstring, ``window_energy_j``)."""
    times = rows["time"].to_numpy(dtype=float)
    energies = rows["energy"].to_numpy(dtype=float)
    if time_s <= 0:
        return 0.0
    after = np.flatnonzero(times >= time_s)
    if not len(after):  # past the last row: its wattmin
        return float(energies[-1] + rows["wattmin"].iloc[-1] * (time_s - times[-1]))
    i = after[0]
    same = np.flatnonzero(times == times[i])
    if times[i] == time_s:
        return float(energies[same[-1]])
    if i == 0:
        t_before, e_before = 0.0, 0.0
    else:
        t_before, e_before = times[i - 1], energies[i - 1]  # the last row of the previous time
    return float(e_before + (energies[i] - e_before) * (time_s - t_before) / (times[i] - t_before))


def oracle_busy(ran: pd.DataFrame, t0: float, t1: float) -> float:
    """Σ hosts · time inside [t0, t1] of the jobs that ran, host-seconds."""
    total = 0.0
    for hosts, start, end in zip(ran["requested_number_of_resources"], ran["starting_time"], ran["finish_time"]):
        total += hosts * max(0.0, min(end, t1) - max(start, t0))
    return total


def oracle_users(workload: Mapping[str, Any]) -> dict[str, str]:
    """Bare job id → user, from the workload's jobs (``user``, else ``user_id``)."""
    users = {}
    for job in workload["jobs"]:
        user = job.get("user", job.get("user_id"))
        if user is not None:
            users[str(job["id"]).split("!")[-1]] = str(user)
    return users


def _meta(text: str) -> dict[str, str]:
    fields = dict(item.split("=", 1) for item in str(text).split() if "=" in item)
    return fields if {"app", "partition", "ghz", "node_w", "favoured"} <= set(fields) else {}


def oracle_eamc(jobs: pd.DataFrame, ran: pd.DataFrame) -> dict[str, float]:
    """EAMC paper §5's metrics (module docstring)."""
    if "metadata" not in jobs.columns or not any(_meta(t) for t in jobs["metadata"]):
        return {}
    end = ran["finish_time"]
    response = end - ran["submission_time"]
    out = {"makespan_since_first_submission_s": float(end.max() - jobs["submission_time"].min()),
           "mean_response_time_s": float(response.mean()),
           "sum_runtimes_s": float(ran["execution_time"].sum())}
    rows = [(m, r) for m, (_, r) in zip((_meta(t) for t in ran["metadata"]), ran.iterrows()) if m]
    if not rows:
        return out
    energy = [float(m["node_w"]) * r["requested_number_of_resources"] * r["execution_time"] for m, r in rows]
    ghz = [float(m["ghz"]) for m, _ in rows]
    part = [m["partition"] for m, _ in rows]
    fav = [m["favoured"] for m, _ in rows]
    resp = [r["finish_time"] - r["submission_time"] for _, r in rows]
    out["jobs_energy_j"] = float(sum(energy))
    out["mean_frequency_ghz"] = float(np.mean(ghz))
    out["favoured_partition_share"] = float(np.mean([p == f for p, f in zip(part, fav)]))
    for p in sorted(set(fav)):
        out[f"favoured_share_{p}"] = float(np.mean([q == p for q, f in zip(part, fav) if f == p]))
    for p in sorted(set(part)):
        mine = [i for i, q in enumerate(part) if q == p]
        out[f"jobs_share_{p}"] = len(mine) / len(part)
        out[f"mean_frequency_ghz_{p}"] = float(np.mean([ghz[i] for i in mine]))
        out[f"mean_response_time_s_{p}"] = float(np.mean([resp[i] for i in mine]))
        out[f"jobs_energy_j_{p}"] = float(sum(energy[i] for i in mine))
    return out


def oracle_metrics(prefix: str | Path, *, tau_s: float = TAU_S, window: tuple[float, float] | None = None,
                   max_power_w: float | None = None, workload: Mapping[str, Any] | None = None,
                   extra_windows: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
    """Every metric of the module docstring for the run of ``prefix``, from its CSV files."""
    prefix = Path(prefix)
    jobs = oracle_jobs(prefix)
    ran = jobs[jobs["final_state"] != "REJECTED"]
    wait, run = ran["waiting_time"], ran["execution_time"]  # Batsim's, from its exact clock (module docstring)
    out: dict[str, float] = {"nb_jobs": len(jobs), "nb_jobs_started": len(ran),
                             "nb_jobs_rejected": int((jobs["final_state"] == "REJECTED").sum())}
    for state in STATES:
        if (jobs["final_state"] == state).any():
            out["nb_jobs_" + state.lower()] = int((jobs["final_state"] == state).sum())
    nan = math.nan
    bsld = [max(1.0, (w + r) / max(r, tau_s)) for w, r in zip(wait, run)]
    stretch = [(w + r) / r if r > 0 else s for w, r, s in zip(wait, run, ran["stretch"])]
    makespan = float(ran["finish_time"].max()) if len(ran) else nan
    out.update({
        "makespan_s": makespan,
        "mean_waiting_time_s": float(np.mean(wait)) if len(ran) else nan,
        "mean_bounded_slowdown": float(np.mean(bsld)) if bsld else nan,
        "max_bounded_slowdown": float(np.max(bsld)) if bsld else nan,
        "mean_stretch": float(np.mean(stretch)) if stretch else nan,
    })
    schedule = pd.read_csv(f"{prefix}_schedule.csv", dtype=str, keep_default_na=False)
    hosts = int(float(schedule["nb_computing_machines"].iloc[0]))
    out["nb_hosts"] = hosts
    default = (float(jobs["submission_time"].min()), makespan)
    t0, t1 = window if window is not None else default
    out["window_start_s"], out["window_end_s"] = t0, t1
    out["utilization"] = oracle_busy(ran, t0, t1) / (hosts * (t1 - t0)) if t1 > t0 else nan
    if window is not None:
        d0, d1 = default
        out["whole_run_utilization"] = oracle_busy(ran, d0, d1) / (hosts * (d1 - d0)) if d1 > d0 else nan
    energy_path = Path(f"{prefix}_consumed_energy.csv")
    rows = pd.read_csv(energy_path) if energy_path.exists() else pd.DataFrame()
    if len(rows):
        out["total_energy_j"] = float(rows["energy"].iloc[-1])
        out["window_energy_j"] = (oracle_energy_at(rows, t1) - oracle_energy_at(rows, t0)
                                  if not (math.isnan(t0) or math.isnan(t1)) else nan)
        if max_power_w is not None:
            out["window_energy_relative"] = out["window_energy_j"] / (max_power_w * (t1 - t0)) if t1 > t0 else nan
    for name, (a, b) in (extra_windows or {}).items():
        out[f"{name}_utilization"] = oracle_busy(ran, a, b) / (hosts * (b - a))
        out[f"{name}_energy_j"] = oracle_energy_at(rows, b) - oracle_energy_at(rows, a) if len(rows) else nan
        out[f"{name}_nb_jobs_started"] = int(((ran["starting_time"] >= a) & (ran["starting_time"] < b)).sum())
    out.update(oracle_eamc(jobs, ran))
    if workload is not None:
        users = oracle_users(workload)
        per: dict[str, list[float]] = {}
        for job_id, value in zip(ran["job_id"], stretch):
            if job_id in users:
                per.setdefault(users[job_id], []).append(value)
        for user in sorted(per):
            out[f"mean_stretch_user_{user}"] = float(np.mean(per[user]))
    return out


def oracle_onoff(prefix: str | Path, baseline: str | Path | None = None) -> dict[str, float]:
    """The ESC paper's table 2 (module docstring, "ESC statistics") for the run of ``prefix``."""
    from procset import ProcSet

    changes = pd.read_csv(f"{prefix}_pstate_changes.csv", dtype={"machine_id": str})
    energy = pd.read_csv(f"{prefix}_consumed_energy.csv")
    jobs = oracle_jobs(Path(prefix))
    ran = jobs[jobs["final_state"] != "REJECTED"]
    n = int(pd.read_csv(f"{prefix}_schedule.csv")["nb_computing_machines"].iloc[0])
    # the end from the 6-decimal times (the p rows of energy are the pstate changes'): the %g ones of
    # machine_states and pstate_changes may be rounded up (133435 for 133434.86177)
    end = max([ran["finish_time"].max() if len(ran) else 0.0, energy["time"].max()])
    initial = 0  # the rows of the initial pstates (behaviour 31), then one row per request and per completion
    while initial < len(changes) and changes["time"].iat[initial] == 0 and changes["new_pstate"].iat[initial] >= 0:
        initial += 1
    changes = changes.iloc[initial:]
    exact = energy.loc[energy["event_type"] == "p", "time"].to_numpy(dtype=float)  # the same events, 6 decimals
    assert len(exact) == len(changes)
    assert np.allclose(exact, changes["time"].to_numpy(dtype=float), rtol=5e-6, atol=0)
    asleep, pending = [False] * n, [""] * n
    shutdowns: list[list[float]] = [[] for _ in range(n)]
    inactive: list[list[list[float]]] = [[] for _ in range(n)]  # [asleep from, to]
    switching = {"switching off": 0.0, "switching on": 0.0}
    since = [0.0] * n
    for t, hosts, target in zip(exact, changes["machine_id"], changes["new_pstate"]):
        for h in ProcSet.from_str(hosts):
            if target == -2:
                shutdowns[h].append(t)
                pending[h], since[h] = "switching off", t
            elif target == -1 and asleep[h]:
                asleep[h], inactive[h][-1][1] = False, t
                pending[h], since[h] = "switching on", t
            elif target >= 0 and pending[h]:
                switching[pending[h]] += t - since[h]
                if pending[h] == "switching off":
                    asleep[h] = True
                    inactive[h].append([t, end])
                pending[h] = ""
    out: dict[str, float] = {"nb_hosts": n, "end_s": end, "nb_shutdowns": sum(len(s) for s in shutdowns)}
    out["nb_shutdowns_per_node"] = out["nb_shutdowns"] / n
    asleep_changes: dict[float, int] = {}
    for h in range(n):
        for a, b in inactive[h]:
            asleep_changes[a] = asleep_changes.get(a, 0) + 1
            asleep_changes[b] = asleep_changes.get(b, 0) - 1
    levels, level = [0], 0  # hosts asleep from each change on (several at one time: all of them applied)
    for t in sorted(asleep_changes):
        level += asleep_changes[t]
        if t < end:
            levels.append(level)
    out["max_active_nodes"] = n - min(levels)
    off_s = sum(b - a for h in range(n) for a, b in inactive[h])
    running_s = float((ran["requested_number_of_resources"] * (ran["finish_time"] - ran["starting_time"])).sum())
    out.update({"active_s": n * end - off_s, "inactive_s": off_s})
    active_means, inactive_means = [], []
    for h in range(n):
        off = [(a, b) for a, b in inactive[h] if b > a]
        bounds = [0.0, *[x for iv in off for x in iv], end]
        on = [b - a for a, b in zip(bounds[::2], bounds[1::2]) if b > a]
        active_means.append(float(np.mean(on)) if on else 0.0)
        inactive_means.append(float(np.mean([b - a for a, b in off])) if off else 0.0)
    out["mean_active_interval_total_s"] = sum(active_means)
    out["mean_inactive_interval_total_s"] = sum(inactive_means)
    gaps = [float(np.mean(np.diff(times))) for times in shutdowns if len(times) > 1]
    out["mean_time_between_shutdowns_s"] = float(np.mean(gaps)) if gaps else math.nan
    out.update({"time_off_s": off_s, "time_running_s": running_s,
                "time_switching_on_s": switching["switching on"], "time_switching_off_s": switching["switching off"]})
    out["time_idle_s"] = n * end - off_s - running_s - sum(switching.values())
    for name in ("active", "inactive", "mean_active_interval", "mean_inactive_interval"):
        total = out[f"{name}_s" if "interval" not in name else f"{name}_total_s"]
        out[f"{name}_per_node_s"] = total / n
    out["makespan_s"] = float(ran["finish_time"].max())
    out["energy_j"] = oracle_energy_at(energy, out["makespan_s"])
    if baseline is not None:
        base = oracle_onoff(baseline)
        out.update({"baseline_makespan_s": base["makespan_s"], "baseline_energy_j": base["energy_j"],
                    "time_ratio": out["makespan_s"] / base["makespan_s"],
                    "energy_ratio": out["energy_j"] / base["energy_j"]})
    return out


# --------------------------------------------------------------------------------------- comparison
def disagreements(ours: Mapping[str, float], theirs: Mapping[str, float]) -> list[str]:
    """What differs between the oracle (``ours``) and the project (``theirs``), one line each."""
    problems = [f"key {k}: oracle only" for k in ours if k not in theirs]
    problems += [f"key {k}: project only" for k in theirs if k not in ours]
    for key in ours:
        if key not in theirs:
            continue
        a, b = float(ours[key]), float(theirs[key])
        if math.isnan(a) and math.isnan(b):
            continue
        if not math.isclose(a, b, rel_tol=REL, abs_tol=ABS):
            problems.append(f"{key}: oracle {a!r}, project {b!r}")
    return problems


def project_metrics(prefix: str | Path, **kwargs: Any) -> dict[str, float]:
    """What ``wattsched metrics`` prints (:func:`~wattsched.analysis.metrics.compute_metrics`)."""
    from wattsched.analysis.metrics import compute_metrics

    return dict(compute_metrics(str(prefix), **kwargs))


def assert_agree(prefix: str | Path, theirs: Mapping[str, float] | None = None, **kwargs: Any) -> dict[str, float]:
    """The oracle and the project (``theirs``, default :func:`project_metrics`) give the same metrics."""
    ours = oracle_metrics(prefix, **kwargs)
    if theirs is None:
        theirs = project_metrics(prefix, **kwargs)
    problems = disagreements(ours, theirs)
    assert not problems, f"{prefix}: " + "; ".join(problems)
    return ours


def _cli_json(args: list[str]) -> dict[str, float]:
    """The JSON a ``wattsched`` command prints (null as NaN)."""
    import contextlib
    import io

    from wattsched.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    return {k: math.nan if v is None else v for k, v in json.loads(out.getvalue()).items()}


# ------------------------------------------------------------------ the oracle against real Batsim's own numbers
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "out_jobs.csv").exists())
GOLDENS = sorted(str(p.parent.relative_to(GOLDEN)) for p in GOLDEN.glob("*/*/out_jobs.csv"))


def test_the_outputs_are_all_there() -> None:
    assert len(SCENARIOS) == 14 and len(GOLDENS) == 47


def test_oracle_energy_curve_gives_every_answer_of_real_batsim() -> None:
    """Every ANSWER {consumed_energy} of the recordings (121, at job events, between them and after the last row:
    ``dvfs-energy`` at t = 500) equals the oracle's cumulative energy at its time, to Batsim's printing (1e-3 J)."""
    checked = 0
    for scenario in SCENARIOS:
        rows = pd.read_csv(REFERENCE / scenario / "out_consumed_energy.csv")
        for line in (REFERENCE / scenario / "messages.jsonl").read_text().splitlines():
            message = json.loads(line)
            if message["from"] != "batsim":
                continue
            for event in message["message"]["events"]:
                if event["type"] == "ANSWER":
                    expected = event["data"]["consumed_energy"]
                    assert oracle_energy_at(rows, event["timestamp"]) == pytest.approx(expected, abs=1e-3), scenario
                    checked += 1
    assert checked == 121


@pytest.mark.parametrize("where", [f"reference/{s}" for s in SCENARIOS] + [f"golden/{g}" for g in GOLDENS])
def test_oracle_agrees_with_batsims_schedule_file(where: str) -> None:
    """Where Batsim's ``_schedule.csv`` (behaviour 29) has the same definition, the oracle gives its value: makespan;
    ``consumed_joules`` = E(last completion) − E(first submission), our default window's energy; jobs finished;
    ``mean_waiting_time`` and ``mean_slowdown`` (unbounded stretch) averaged with rejected jobs as 0."""
    kind, name = where.split("/", 1)
    prefix = (REFERENCE / name / "out") if kind == "reference" else (GOLDEN / name / "out")
    schedule = pd.read_csv(f"{prefix}_schedule.csv").iloc[0]
    ours = oracle_metrics(prefix)
    replaced = len(pd.read_csv(f"{prefix}_jobs.csv")) - ours["nb_jobs"]  # originals of replaced jobs
    assert schedule["nb_jobs"] == ours["nb_jobs"] + replaced
    assert schedule["nb_jobs_finished"] == ours["nb_jobs_started"]
    assert schedule["makespan"] == pytest.approx(ours["makespan_s"], abs=1e-6)
    assert schedule["consumed_joules"] == pytest.approx(ours["window_energy_j"], rel=1e-9, abs=1e-3)
    if not replaced:
        scale = schedule["nb_jobs"] / schedule["nb_jobs_finished"]
        assert schedule["mean_waiting_time"] * scale == pytest.approx(ours["mean_waiting_time_s"], rel=1e-6, abs=1e-6)
        assert schedule["mean_slowdown"] * scale == pytest.approx(ours["mean_stretch"], rel=1e-6)


# --------------------------------------------------------------------------- the project against the oracle
#: The workload of each golden input, for per-user stretch (the long-shutdown-fcfs and EAMC ones have no users).
GOLDEN_WORKLOADS = {"taurus16-demo": ROOT / "workloads" / "demo_taurus16.json",
                    "upas16-demo": ROOT / "workloads" / "demo_upas16.json"}
#: (window, max_power_w, extra windows) of each comparison: the default window; one in the middle, cutting jobs
#: (the goldens' budget window, 20000-60000 s) with two extra windows; one from 0 to past every run's end.
SETTINGS = [
    (None, None, None),
    ((20000.0, 60000.0), 16 * 190.738, {"budget": (20000.0, 60000.0), "early": (100.0, 30000.0)}),
    ((0.0, 1e6), 3000.0, None),
]


@pytest.mark.parametrize("golden", GOLDENS)
def test_golden_outputs(golden: str) -> None:
    prefix = GOLDEN / golden / "out"
    path = GOLDEN_WORKLOADS.get(golden.split("/")[1])
    workload = json.loads(path.read_text()) if path else None
    for window, max_power_w, extra in SETTINGS:
        ours = oracle_metrics(prefix, window=window, max_power_w=max_power_w, extra_windows=extra, workload=workload)
        theirs = project_metrics(prefix, window=window, max_power_w=max_power_w, extra_windows=extra, workload=path)
        problems = disagreements(ours, theirs)
        assert not problems, f"{golden} window {window}: " + "; ".join(problems)
    if workload is not None:
        assert any(key.startswith("mean_stretch_user_") for key in ours)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_recordings_of_real_batsim(scenario: str) -> None:
    prefix = REFERENCE / scenario / "out"
    for window, max_power_w, extra in [*SETTINGS, ((5.0, 95.0), 1000.0, {"mid": (40.0, 160.0)})]:
        assert_agree(prefix, window=window, max_power_w=max_power_w, extra_windows=extra)


# ----------------------------------------------------------------------- fresh runs of the presets
@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, tuple[Path, Path, dict[str, float]]]:
    """Small generated inputs, and the presets run on them by ``wattsched run --json`` (with ``--per-user`` where the
    workload has users): ``{name: (prefix, workload, printed metrics)}``."""
    from wattsched.cli import main

    folder = tmp_path_factory.mktemp("hunt45")
    for args in (["synth", "--hosts", "8", "--seed", "3", "--days", "1", "--output", "w8.json"],
                 ["platform", "--hosts", "8", "--output", "t8.xml"],
                 ["platform", "--hosts", "8", "--node", "upas", "--output", "u8.xml"],
                 ["platform", "--hosts", "8", "--node", "esc", "--output", "e8.xml"],
                 ["synth", "--hosts", "8", "--seed", "3", "--days", "1", "--speed", "2300e6", "--output", "wu.json"],
                 ["beta", "wu.json", "--seed", "2", "--speed", "2300e6", "--output", "wu8.json"],
                 ["eamc-workload", "--mix", "33", "--seed", "4", "--jobs", "40", "--max-res", "6", "--mean-res", "2",
                  "--mean-runtime-h", "1", "--days", "1", "--output", "we.json"],
                 ["platform", "--node", "eamc", "--hosts", "6", "--output", "pe.xml"]):
        assert main([str(folder / a) if a.endswith((".json", ".xml")) else a for a in args]) == 0
    for name in ("w8.json", "wu8.json"):  # a job wider than the platform, which every preset rejects
        content = json.loads((folder / name).read_text())
        first = content["jobs"][0]
        content["jobs"].append({**first, "id": 1000, "subtime": first["subtime"] + 1000, "res": 12})
        (folder / name).write_text(json.dumps(content))
    budget = {"budget_fraction": 0.4, "window_start_s": 20000, "window_end_s": 60000}
    runs = {
        "easy-backfill": ("t8.xml", "w8.json", "easy-backfill", {}),
        "energy-bud-shutdown": ("t8.xml", "w8.json", "energy-bud", {**budget, "shutdown": True}),
        "reduce-pc": ("t8.xml", "w8.json", "reduce-pc", {**budget, "budget_fraction": 0.7}),
        "efs-shutdown": ("t8.xml", "w8.json", "efs", {"shutdown": True}),
        "esc": ("e8.xml", "w8.json", "esc", {}),
        "esc-always-on": ("e8.xml", "w8.json", "fcfs", {}),
        "upas-shutdown": ("u8.xml", "wu8.json", "upas", {"wq_threshold": None, "shutdown": True}),
        "compose-upas-energy-bud": ("u8.xml", "wu8.json", "compose",
                                    {**budget, "budget_fraction": 0.7, "frequency": "upas", "admission": "energy-bud",
                                     "wq_threshold": None}),
        "eamc-priority-inc": ("pe.xml", "we.json", "eamc-priority-inc", {}),
    }
    out = {}
    for name, (platform, workload, preset, options) in runs.items():
        prefix = folder / "runs" / name
        users = ["--per-user"] if workload != "we.json" else []
        printed = _cli_json(["run", str(folder / platform), str(folder / workload), "-s", preset, "-o",
                             json.dumps(options), "-e", str(prefix), "-q", "--json", *users])
        out[name] = (prefix, folder / workload, printed)
    return out


FRESH = ["easy-backfill", "energy-bud-shutdown", "reduce-pc", "efs-shutdown", "esc", "esc-always-on", "upas-shutdown",
         "compose-upas-energy-bud", "eamc-priority-inc"]


@pytest.mark.parametrize("name", FRESH)
def test_fresh_runs_of_the_presets(fresh, name: str) -> None:
    """``wattsched run``'s summary (with the budget window it adds for a budgeted preset) and ``wattsched metrics
    --json`` with a window and --max-power agree with the oracle."""
    prefix, workload_path, printed = fresh[name]
    workload = json.loads(workload_path.read_text())
    users = workload if name != "eamc-priority-inc" else None
    extra = {"budget_window": (20000.0, 60000.0)} if "budget_window_energy_j" in printed else None
    assert_agree(prefix, printed, workload=users, extra_windows=extra)
    if name in ("energy-bud-shutdown", "reduce-pc", "compose-upas-energy-bud"):
        assert extra is not None
    arguments = ["metrics", str(prefix), "--json", "--window", "3600,50000", "--max-power", "1600"]
    if users is not None:
        arguments += ["--workload", str(workload_path)]
    ours = assert_agree(prefix, _cli_json(arguments), window=(3600.0, 50000.0), max_power_w=1600.0, workload=users)
    assert ours["nb_jobs_started"] > 0


# ---------------------------------------------------------------- edge cases, by hand (Batsim-format files)
JOBS_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
               "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
               "allocated_resources,consumed_energy,metadata")
STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"


def _write_run(folder: Path, **files: str) -> Path:
    """The files of a run at ``folder/out`` (``jobs="..."`` is ``out_jobs.csv``...); returns the prefix."""
    for kind, text in files.items():
        (folder / f"out_{kind}.csv").write_text(text.strip() + "\n")
    return folder / "out"


@pytest.fixture
def edge_run(tmp_path) -> Path:
    """4 hosts (idle 95 W, computing 190 W, switching off 101 W, asleep 9.75 W). Job 1 (0-100 s, 2 hosts), job 2
    rejected, job 3 shorter than τ (5 s after waiting 30), job 4 stopped by its walltime, job 5 killed, job 6 of no
    work (Batsim's 1e-5 s, behaviour 17); hosts 2-3 switched off at 170 s, asleep from 176.1 s to the end."""
    jobs = f"""{JOBS_HEADER}
2,w0,p,10.000000,5,100.000000,0,REJECTED,,,,,,,,,""
3,w0,p,20.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,50.000000,5.000000,55.000000,30.000000,35.000000,7.000000,2,950.000000,""
1,w0,p,0.000000,2,200.000000,1,COMPLETED_SUCCESSFULLY,0.000000,100.000000,100.000000,0.000000,100.000000,1.000000,0-1,38000.000000,""
5,w0,p,40.000000,1,100.000000,0,COMPLETED_KILLED,120.000000,10.000000,130.000000,80.000000,90.000000,9.000000,3,1900.000000,""
4,w0,p,30.000000,2,60.000000,0,COMPLETED_WALLTIME_REACHED,100.000000,60.000000,160.000000,70.000000,130.000000,2.166667,0-1,22800.000000,""
6,w0,p,200.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,200.000000,0.000010,200.000010,0.000000,0.000010,1.000000,0,0.001900,\"\""""
    energy = """time,energy,event_type,wattmin,epower
0.000000,0.000000,s,380.000000,NA
50.000000,28500.000000,s,380.000000,570.000000
55.000000,31825.000000,e,380.000000,665.000000
100.000000,57475.000000,e,380.000000,570.000000
100.000000,57475.000000,s,380.000000,NA
120.000000,68875.000000,s,380.000000,570.000000
130.000000,75525.000000,e,380.000000,665.000000
160.000000,92625.000000,e,380.000000,570.000000
170.000000,96425.000000,p,392.000000,380.000000
176.100000,98816.200000,p,209.500000,392.000000
200.000000,103823.250000,s,209.500000,209.500000
200.000010,103823.253045,e,209.500000,304.500000"""
    states = f"""{STATES_HEADER}
0,0,0,0,2,2
50,0,0,0,1,3
55,0,0,0,2,2
100,0,0,0,4,0
100,0,0,0,2,2
120,0,0,0,1,3
130,0,0,0,2,2
160,0,0,0,4,0
170,0,0,2,2,0
176.1,2,0,0,2,0
200,2,0,0,1,1
200,2,0,0,2,0"""
    return _write_run(tmp_path, jobs=jobs, consumed_energy=energy, machine_states=states,
                      pstate_changes="time,machine_id,new_pstate\n0,0-3,0\n170,2-3,-2\n176.1,2-3,13",
                      schedule="batsim_version,makespan,nb_computing_machines,nb_jobs,nb_jobs_finished\n"
                               "v4.2.1,200.000010,4,6,5")


def test_edge_run_by_hand(edge_run: Path) -> None:
    """Rejected, killed, walltime and zero-work jobs, a run shorter than τ, hosts asleep, windows cutting jobs and
    going past the last row: the oracle's values are the hand-computed ones, and the project's the oracle's."""
    ours = assert_agree(edge_run)
    assert (ours["nb_jobs"], ours["nb_jobs_started"], ours["nb_jobs_rejected"]) == (6, 5, 1)
    assert (ours["nb_jobs_completed_successfully"], ours["nb_jobs_completed_killed"],
            ours["nb_jobs_completed_walltime_reached"]) == (3, 1, 1)
    assert ours["makespan_s"] == 200.00001
    assert ours["mean_waiting_time_s"] == pytest.approx((0 + 30 + 70 + 80 + 0) / 5)  # the rejected job is left out
    # bounded slowdowns 1, 35/max(5, 10), 130/60, 90/10, max(1, 1e-5/10)
    assert ours["mean_bounded_slowdown"] == pytest.approx((1 + 3.5 + 130 / 60 + 9 + 1) / 5)
    assert ours["max_bounded_slowdown"] == 9.0
    assert ours["mean_stretch"] == pytest.approx((1 + 7 + 130 / 60 + 9 + 1) / 5)
    assert ours["utilization"] == pytest.approx((200 + 5 + 120 + 10 + 1e-5) / (4 * 200.00001))
    assert ours["total_energy_j"] == 103823.253045
    assert ours["window_energy_j"] == pytest.approx(103823.253045)  # [first submission 0, makespan]
    # a window cutting jobs 1 and 4 (and holding 3 and 5)
    ours = assert_agree(edge_run, window=(50.0, 150.0), max_power_w=760.0)
    assert ours["utilization"] == pytest.approx((2 * 50 + 5 + 2 * 50 + 10) / (4 * 100))
    assert ours["window_energy_j"] == pytest.approx(665 * 5 + 570 * 45 + 570 * 20 + 665 * 10 + 570 * 20)
    assert ours["window_energy_relative"] == pytest.approx(ours["window_energy_j"] / (760 * 100))
    # a window past the last row (200.00001 s): hosts 0-1 idle, 2-3 asleep, 209.5 W
    ours = assert_agree(edge_run, window=(150.0, 400.0), max_power_w=760.0,
                        extra_windows={"asleep": (180.0, 190.0), "starts": (100.0, 120.0)})
    assert ours["utilization"] == pytest.approx((2 * 10 + 1e-5) / (4 * 250))  # hosts asleep count
    assert ours["window_energy_j"] == pytest.approx(570 * 10 + 380 * 10 + 392 * 6.1 + 209.5 * 23.9 + 304.5 * 1e-5
                                                    + 209.5 * (400 - 200.00001))
    assert ours["asleep_energy_j"] == pytest.approx(2095.0)
    assert (ours["asleep_utilization"], ours["asleep_nb_jobs_started"], ours["starts_nb_jobs_started"]) == (0, 0, 1)
    assert ours["whole_run_utilization"] == pytest.approx((200 + 5 + 120 + 10 + 1e-5) / (4 * 200.00001))
    assert_agree(edge_run, tau_s=60.0)  # τ above some runs


@pytest.fixture
def replaced_run(tmp_path) -> tuple[Path, dict[str, Any]]:
    """2 hosts; job 1 replaced by ``resized!w0.1`` (EAMC's form), job 2 by ``w0!resized.2`` (UPAS's), job 3 not;
    users alice (1, 3) and bob (2); nothing before the first submission at 100 s (hosts idle, 95 W each)."""
    jobs = f"""{JOBS_HEADER}
1,w0,p1,100.000000,1,100.000000,0,REJECTED,,,,,,,,,""
2,w0,p2,110.000000,1,100.000000,0,REJECTED,,,,,,,,,""
w0.1,resized,p1@w0.1,100.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,100.000000,50.000000,150.000000,0.000000,50.000000,1.000000,0,7125.000000,"app=1 partition=p1 ghz=2.0 node_w=300 favoured=p1"
resized.2,w0,p2,110.000000,1,150.000000,1,COMPLETED_SUCCESSFULLY,110.000000,60.000000,170.000000,0.000000,60.000000,1.000000,1,9500.000000,"app=8 partition=p1 ghz=1.5 node_w=200 favoured=p2"
3,w0,p3,120.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,150.000000,20.000000,170.000000,30.000000,50.000000,2.500000,0,3800.000000,\"\""""
    energy = """time,energy,event_type,wattmin,epower
100.000000,19000.000000,s,190.000000,190.000000
110.000000,21850.000000,s,190.000000,285.000000
150.000000,37050.000000,e,190.000000,380.000000
150.000000,37050.000000,s,190.000000,NA
170.000000,44650.000000,e,190.000000,380.000000
170.000000,44650.000000,e,190.000000,NA"""
    states = f"{STATES_HEADER}\n100,0,0,0,1,1\n110,0,0,0,0,2\n150,0,0,0,1,1\n150,0,0,0,0,2\n170,0,0,0,1,1\n170,0,0,0,2,0"
    workload = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 100, "res": 1, "profile": "p1", "user": "alice"},
                                      {"id": 2, "subtime": 110, "res": 1, "profile": "p2", "user": "bob"},
                                      {"id": 3, "subtime": 120, "res": 1, "profile": "p3", "user": "alice"}],
                "profiles": {p: {"type": "delay", "delay": 10} for p in ("p1", "p2", "p3")}}
    (tmp_path / "workload.json").write_text(json.dumps(workload))
    prefix = _write_run(tmp_path, jobs=jobs, consumed_energy=energy, machine_states=states,
                        pstate_changes="time,machine_id,new_pstate\n0,0-1,0",
                        schedule="batsim_version,nb_computing_machines,nb_jobs\nv4.2.1,2,5")
    return prefix, workload


def test_replaced_jobs_count_once_and_keep_their_user(replaced_run) -> None:
    prefix, workload = replaced_run
    ours = assert_agree(prefix, project_metrics(prefix, workload=prefix.parent / "workload.json"), workload=workload)
    assert (ours["nb_jobs"], ours["nb_jobs_started"], ours["nb_jobs_rejected"]) == (3, 3, 0)
    assert ours["mean_stretch_user_alice"] == pytest.approx((1 + 2.5) / 2)
    assert ours["mean_stretch_user_bob"] == 1.0
    assert (ours["window_start_s"], ours["window_end_s"]) == (100.0, 170.0)
    assert ours["utilization"] == pytest.approx((50 + 60 + 20) / (2 * 70))
    # EAMC paper §5: makespan 170 − 100; responses 50, 60, 50; energy 300 W × 50 s + 200 W × 60 s (job 3 has none)
    assert ours["makespan_since_first_submission_s"] == 70.0
    assert ours["mean_response_time_s"] == pytest.approx(160 / 3)
    assert ours["jobs_energy_j"] == 300 * 50 + 200 * 60
    assert (ours["favoured_partition_share"], ours["favoured_share_p2"], ours["jobs_share_p1"]) == (0.5, 0.0, 1.0)
    # a window from 0, before the first submission and the first energy row: the hosts idle from 0 s
    ours = assert_agree(prefix, window=(0.0, 1000.0), max_power_w=380.0)
    assert ours["utilization"] == pytest.approx(130 / 2000)
    assert ours["window_energy_j"] == pytest.approx(44650 + 190 * 830)
    assert ours["whole_run_utilization"] == pytest.approx(130 / 140)
    assert_agree(prefix, window=(0.0, 50.0))  # before any job: 0 utilization, 50 s of idle energy
    assert oracle_metrics(prefix, window=(0.0, 50.0))["window_energy_j"] == pytest.approx(190 * 50)


def test_window_energy_is_exact_between_rows_and_interpolated_inside_a_composed_job(tmp_path) -> None:
    """One Taurus host (idle 95 W, computing 190.738 W at pstate 0, 100 Mflop/s): job 1 computes 100 s then waits
    100 s (a composed profile, as UPAS's β jobs), job 2 computes 100 s from 300 s. Between two energy rows of
    constant power the window energy is exactly the energy drawn. Inside the composed job there is no row at the
    end of its compute part, so the files cannot tell the energy drawn in [0, 100] (19,073.8 J): the project and
    the oracle give the interpolation of the rows at 0 and 200 s, 14,286.9 J. A known limit of metrics from
    Batsim's files, documented in ``energy_at_j`` (hunt 45's report: the UPAS golden's cumulative energy is off by
    up to 146 kJ inside its jobs against Batsim's ANSWER there)."""
    from wattsched.cli import main

    workload = {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "cd", "walltime": 1000},
                                      {"id": 2, "subtime": 300, "res": 1, "profile": "c", "walltime": 1000}],
                "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
                             "d": {"type": "delay", "delay": 100},
                             "cd": {"type": "composed", "repeat": 1, "seq": ["c", "d"]}}}
    (tmp_path / "w.json").write_text(json.dumps(workload))
    assert main(["platform", "--hosts", "1", "--output", str(tmp_path / "p.xml")]) == 0
    assert main(["run", str(tmp_path / "p.xml"), str(tmp_path / "w.json"), "-s", "fcfs", "-e", str(tmp_path / "out"),
                 "-q"]) == 0
    prefix = tmp_path / "out"
    inside_job_2 = assert_agree(prefix, window=(300.0, 350.0))
    assert inside_job_2["window_energy_j"] == pytest.approx(50 * 190.738, rel=1e-12)
    idle_then_job_2 = assert_agree(prefix, window=(250.0, 320.0))
    assert idle_then_job_2["window_energy_j"] == pytest.approx(50 * 95 + 20 * 190.738, rel=1e-12)
    inside_job_1 = assert_agree(prefix, window=(0.0, 100.0))
    assert inside_job_1["window_energy_j"] == pytest.approx((100 * 190.738 + 100 * 95) / 2, rel=1e-12)
    assert inside_job_1["total_energy_j"] == pytest.approx(200 * 190.738 + 200 * 95, rel=1e-12)


def test_fresh_runs_reject_some_jobs_and_replace_others(fresh) -> None:
    """The fresh runs cover what the edge cases are about: jobs wider than the 8 hosts rejected, killed at their
    walltime, hosts asleep, replaced jobs (UPAS, EAMC)."""
    printed = {name: fresh[name][2] for name in FRESH}
    assert all(printed[name]["nb_jobs_rejected"] > 0 for name in FRESH if name != "eamc-priority-inc")
    assert printed["easy-backfill"].get("nb_jobs_completed_walltime_reached", 0) > 0
    for name in ("upas-shutdown", "eamc-priority-inc"):
        rows = pd.read_csv(f"{fresh[name][0]}_jobs.csv")
        assert len(rows) > printed[name]["nb_jobs"]  # originals of replaced jobs, counted once
    states = pd.read_csv(f"{fresh['energy-bud-shutdown'][0]}_machine_states.csv")
    assert (states["nb_sleeping"] > 0).any()


# ------------------------------------------------------------------------ the ESC paper's statistics
def _has_shutdowns(prefix: Path) -> bool:
    return bool((pd.read_csv(f"{prefix}_pstate_changes.csv")["new_pstate"] == -2).any())


ONOFF = ([f"golden/{g}" for g in GOLDENS if _has_shutdowns(GOLDEN / g / "out")]
         + [f"reference/{s}" for s in SCENARIOS if _has_shutdowns(REFERENCE / s / "out")])


def assert_onoff_agree(prefix: Path, baseline: Path | None = None) -> dict[str, float]:
    from wattsched.analysis.node_states import onoff_statistics

    ours = oracle_onoff(prefix, baseline)
    problems = disagreements(ours, onoff_statistics(prefix, baseline=baseline).as_dict())
    assert not problems, f"{prefix}: " + "; ".join(problems)
    return ours


def test_onoff_outputs_are_there() -> None:
    assert len(ONOFF) == 23


@pytest.mark.parametrize("where", ONOFF)
def test_esc_statistics(where: str) -> None:
    """``wattsched node-stats`` and the ESC reproduction's table (``experiments/esc.py`` ``add_statistics``) against
    the oracle; with the run's always-on twin as baseline where the goldens have one (fcfs on the same inputs)."""
    kind, name = where.split("/", 1)
    prefix = (REFERENCE / name / "out") if kind == "reference" else (GOLDEN / name / "out")
    ours = assert_onoff_agree(prefix)
    assert ours["nb_shutdowns"] > 0
    if kind == "golden" and (GOLDEN / "fcfs" / name.split("/")[1]).exists():
        assert_onoff_agree(prefix, GOLDEN / "fcfs" / name.split("/")[1] / "out")


@pytest.mark.parametrize("name", ["esc", "energy-bud-shutdown", "efs-shutdown", "upas-shutdown"])
def test_esc_statistics_of_fresh_runs(fresh, name: str) -> None:
    ours = assert_onoff_agree(fresh[name][0], fresh["esc-always-on"][0] if name == "esc" else None)
    assert ours["nb_shutdowns"] > 0


# ------------------------------------------------------------------------------------------ regressions
@pytest.mark.parametrize("value, problem", [(True, "got true"), ([1, 2], "got a list"), ({"a": 1}, "got an object"),
                                            ("", "got an empty string")])
def test_a_user_id_that_names_no_account_is_refused(replaced_run, value: Any, problem: str) -> None:
    """Per-user stretch reads ``user_id`` when a job has no ``user``: it was taken as it was, so ``true`` and ``[1, 2]``
    gave the metrics ``mean_stretch_user_True`` and ``mean_stretch_user_[1, 2]``, which the ``user`` field refuses
    (``compute_metrics``: "a list, an object or true is no account"). Now both fields are read alike."""
    from wattsched.analysis.metrics import load_workload_users
    from wattsched.base.errors import InputError

    prefix, workload = replaced_run
    for job in workload["jobs"]:
        job["user_id"] = job.pop("user")
    path = prefix.parent / "workload.json"
    path.write_text(json.dumps(workload))
    ours = assert_agree(prefix, project_metrics(prefix, workload=path), workload=workload)  # valid ids still read
    assert ours["mean_stretch_user_alice"] == pytest.approx(1.75)
    workload["jobs"][1]["user_id"] = value
    path.write_text(json.dumps(workload))
    with pytest.raises(InputError, match=rf"workload\.json: job '2'\.user_id: .*{problem}"):
        project_metrics(prefix, workload=path)
    with pytest.raises(InputError, match=rf"<workload>: job '2'\.user_id: .*{problem}"):
        load_workload_users(workload)


# ----------------------------------------------------------------------- the UPAS paper's BSLD (eq. 5-6)
def _runtime_at_top_s(profiles: Mapping[str, Any], name: str, speed_flops: float) -> float:
    profile = profiles[name]
    kind = profile["type"]
    if kind == "parallel_homogeneous":
        return profile["cpu"] / speed_flops
    if kind == "delay":
        return profile["delay"]
    assert kind == "composed", kind
    return profile.get("repeat", 1) * sum(_runtime_at_top_s(profiles, part, speed_flops) for part in profile["seq"])


def oracle_upas_bsld(prefix: Path, workload: Mapping[str, Any], speed_flops: float = 2.3e9) -> float:
    """UPAS paper eq. 5-6: mean over the jobs that ran of ``max(1, (wait + run(f)) / max(600 s, run(f_top)))``,
    run(f_top) the job's run time at the top gear (its profile's; a job stopped at its walltime would have been
    stopped there at the top gear too)."""
    jobs = oracle_jobs(prefix)
    ran = jobs[jobs["final_state"] != "REJECTED"]
    entries = {str(job["id"]): job for job in workload["jobs"]}
    values = []
    for job_id, wait, run, state in zip(ran["job_id"], ran["waiting_time"], ran["execution_time"], ran["final_state"]):
        top = _runtime_at_top_s(workload["profiles"], entries[job_id]["profile"], speed_flops)
        if state == "COMPLETED_WALLTIME_REACHED":
            top = min(top, entries[job_id]["walltime"])
        values.append(max(1.0, (wait + run) / max(600.0, top)))
    return float(np.mean(values))


def test_upas_bsld_of_the_upas_reproduction(fresh) -> None:
    """``bsld600`` of the UPAS reproduction's table (``experiments/upas.py`` ``run_upas_metrics``) on the UPAS goldens
    and the fresh UPAS runs."""
    from wattsched.experiments.upas import run_upas_metrics

    demo = json.loads((ROOT / "workloads" / "demo_upas16.json").read_text())
    cases = [(GOLDEN / g / "out", demo, 16) for g in GOLDENS if g.endswith("upas16-demo")]
    cases += [(fresh[n][0], json.loads(fresh[n][1].read_text()), 8) for n in ("upas-shutdown", "compose-upas-energy-bud")]
    assert len(cases) == 6
    for prefix, workload, hosts in cases:
        row = run_upas_metrics(str(prefix), workload, hosts)
        assert row["bsld600"] == pytest.approx(oracle_upas_bsld(prefix, workload), rel=REL), prefix
        assert row["nb_jobs_gear_unknown"] == 0


def test_per_user_stretch_normalized_by_a_baseline(fresh) -> None:
    """EFS paper §IV-B (table I): per user, the mean over her jobs of stretch / stretch in the baseline run
    (``analysis/metrics.py`` ``per_user_normalized_stretch``, the EFS reproduction's table), jobs that ran in both."""
    from wattsched.analysis.metrics import load_workload_users, per_user_normalized_stretch
    from wattsched.analysis.outputs import load_outputs

    def stretch_of(prefix: Path) -> dict[str, float]:
        jobs = oracle_jobs(prefix)
        ran = jobs[jobs["final_state"] != "REJECTED"]
        return {j: (w + r) / r for j, w, r in zip(ran["job_id"], ran["waiting_time"], ran["execution_time"])}

    workload = json.loads(fresh["efs-shutdown"][1].read_text())
    users = oracle_users(workload)
    for name, base in (("efs-shutdown", "easy-backfill"), ("energy-bud-shutdown", "easy-backfill")):
        new, old = stretch_of(fresh[name][0]), stretch_of(fresh[base][0])
        ratios: dict[str, list[float]] = {}
        for job_id in new.keys() & old.keys():
            ratios.setdefault(users[job_id], []).append(new[job_id] / old[job_id])
        ours = {user: float(np.mean(values)) for user, values in ratios.items()}
        theirs = per_user_normalized_stretch(load_outputs(fresh[name][0]).jobs, load_outputs(fresh[base][0]).jobs,
                                             load_workload_users(fresh[name][1]))
        assert not disagreements(ours, theirs), disagreements(ours, theirs)
        assert len(ours) > 5 and any(abs(v - 1) > 1e-3 for v in ours.values())


def test_a_sweeps_row(fresh, tmp_path) -> None:
    """A sweep's results row (``experiments/sweep.py`` ``execute_run``: what ``wattsched sweep`` and the energy-budget
    reproduction tabulate), with a window, ``max_power_w``, τ and the reproduction's extra windows."""
    from wattsched.experiments.sweep import Run, execute_run

    workload = fresh["energy-bud-shutdown"][1]
    platform = workload.parent / "t8.xml"
    extra = {"budget": (20000.0, 60000.0), "week": (0.0, 86400.0)}
    run = Run("bud", str(platform), str(workload), "energy-bud",
              {"budget_fraction": 0.5, "window_start_s": 20000, "window_end_s": 60000, "shutdown": True},
              str(tmp_path / "bud"), window=(0.0, 86400.0), max_power_w=8 * 190.738, tau_s=60.0, extra_windows=extra)
    row = execute_run(run)
    assert row["status"] == "done", row["error"]
    metrics = {k: v for k, v in row.items() if k not in ("name", "status", "error", "wall_s")}
    ours = assert_agree(tmp_path / "bud", metrics, window=(0.0, 86400.0), max_power_w=8 * 190.738, tau_s=60.0,
                        extra_windows=extra)
    assert ours["week_nb_jobs_started"] > ours["budget_nb_jobs_started"] > 0


def test_a_run_shorter_than_a_microsecond(tmp_path) -> None:
    """A job stopped by a walltime of 1e-7 s after waiting 49 s: its times print a run of 0.000000; its stretch is
    Batsim's (49.0000001 / 1e-7), its bounded slowdown 49 / τ; it occupied its host for no time."""
    jobs = f"""{JOBS_HEADER}
1,w0,p,1.000000,1,0.000000,0,COMPLETED_WALLTIME_REACHED,50.000000,0.000000,50.000000,49.000000,49.000000,490000001.000000,0,0.000019,""
2,w0,p,60.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,60.000000,20.000000,80.000000,0.000000,20.000000,1.000000,0,3800.000000,\"\""""
    energy = """time,energy,event_type,wattmin,epower
50.000000,4750.000000,s,95.000000,95.000000
50.000000,4750.000019,e,95.000000,NA
60.000000,5700.000019,s,95.000000,95.000000
80.000000,9500.000019,e,95.000000,190.000000"""
    prefix = _write_run(tmp_path, jobs=jobs, consumed_energy=energy,
                        machine_states=f"{STATES_HEADER}\n50,0,0,0,0,1\n50,0,0,0,1,0\n60,0,0,0,0,1\n80,0,0,0,1,0",
                        pstate_changes="time,machine_id,new_pstate\n0,0,0",
                        schedule="batsim_version,nb_computing_machines,nb_jobs\nv4.2.1,1,2")
    ours = assert_agree(prefix)
    assert ours["mean_stretch"] == pytest.approx((490000001 + 1) / 2)
    assert ours["mean_bounded_slowdown"] == pytest.approx((49 / 10 + 1) / 2)
    assert ours["utilization"] == pytest.approx(20 / 79)
