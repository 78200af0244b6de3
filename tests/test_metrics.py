"""Tests of wattsched.analysis.metrics (and the readers of wattsched.analysis.outputs) on hand-built frames and on the
real Batsim 4.2.1 outputs of tests/fixtures/batsim-reference/."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from wattsched.base.errors import InputError
from wattsched.analysis.metrics import (
    bounded_slowdowns,
    compute_metrics,
    energy_at_j,
    energy_in_window_j,
    format_table,
    load_workload_users,
    mean_bounded_slowdown,
    metrics_to_json,
    per_user_mean_stretch,
    utilization,
)
from wattsched.analysis.outputs import find_outputs, load_outputs, read_jobs

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if p.is_dir())
TAURUS_FULL_W = 190.738


def job(job_id: str, submit: float, start: float | None, run: float, procs: int = 1,
        state: str = "COMPLETED_SUCCESSFULLY") -> dict[str, object]:
    """One jobs.csv row; ``start=None`` builds a rejected job (empty time fields, behaviour 18)."""
    if start is None:
        return {"job_id": job_id, "submission_time": submit, "requested_number_of_resources": procs,
                "final_state": "REJECTED", "starting_time": math.nan, "execution_time": math.nan,
                "finish_time": math.nan, "waiting_time": math.nan, "allocated_resources": ""}
    return {"job_id": job_id, "submission_time": submit, "requested_number_of_resources": procs,
            "final_state": state, "starting_time": start, "execution_time": run,
            "finish_time": start + run, "waiting_time": start - submit,
            "allocated_resources": f"0-{procs - 1}" if procs > 1 else "0"}


def jobs_frame(*rows: dict[str, object]) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def batsim_answers(scenario: str) -> list[tuple[float, float]]:
    """(time, consumed_energy) of every ANSWER Batsim sent in a recording."""
    answers = []
    for line in (REFERENCE / scenario / "messages.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["from"] != "batsim":
            continue
        for event in record["message"]["events"]:
            if event["type"] == "ANSWER":
                answers.append((record["message"]["now"], event["data"]["consumed_energy"]))
    return answers


# ------------------------------------------------------------------------------ hand-built frames
def test_bounded_slowdown_uses_tau_and_never_goes_below_one() -> None:
    jobs = jobs_frame(
        job("short", 0, 0, 5),            # (0 + 5) / max(5, 10) = 0.5 → 1
        job("waited", 0, 90, 10),         # (90 + 10) / 10 = 10
        job("long", 0, 20, 100),          # 120 / 100 = 1.2
        job("tiny", 0, 15, 1),            # 16 / 10 = 1.6 (unbounded slowdown would be 16)
        job("rejected", 0, None, 0),
    )
    values = bounded_slowdowns(jobs)
    assert values.to_dict() == pytest.approx({"short": 1.0, "waited": 10.0, "long": 1.2, "tiny": 1.6})
    assert mean_bounded_slowdown(jobs) == pytest.approx((1 + 10 + 1.2 + 1.6) / 4)
    assert bounded_slowdowns(jobs, tau_s=1.0)["tiny"] == pytest.approx(16.0)


def test_utilization_clips_jobs_to_the_window() -> None:
    jobs = jobs_frame(job("1", 0, 0, 100, procs=2), job("2", 0, 50, 100, procs=1), job("3", 0, None, 0))
    # default window [first submission 0, makespan 150]: (2·100 + 1·100) / (4 · 150)
    assert utilization(jobs, 4) == pytest.approx(300 / 600)
    # [100, 200]: job 1 contributes nothing, job 2 its last 50 s
    assert utilization(jobs, 4, (100.0, 200.0)) == pytest.approx(50 / 400)
    assert math.isnan(utilization(jobs, 4, (10.0, 10.0)))


def test_rejected_jobs_are_counted_but_left_out_of_time_metrics(tmp_path: Path) -> None:
    source = REFERENCE / "fcfs-compute"
    metrics = compute_metrics(source)
    schedule = load_outputs(source).schedule
    assert metrics["nb_jobs"] == 10
    assert metrics["nb_jobs_rejected"] == 1
    assert metrics["nb_jobs_started"] == 9
    assert metrics["nb_jobs_completed_successfully"] == 8
    assert metrics["nb_jobs_completed_walltime_reached"] == 1
    # Batsim divides by nb_jobs with the rejected job as 0; we divide by the 9 jobs that ran
    assert metrics["mean_waiting_time_s"] == pytest.approx(float(schedule["mean_waiting_time"]) * 10 / 9)
    # every job of this scenario runs ≥ τ, so the bounded slowdown is Batsim's slowdown
    assert metrics["mean_bounded_slowdown"] == pytest.approx(float(schedule["mean_slowdown"]) * 10 / 9, abs=1e-5)
    assert metrics["makespan_s"] == 750.0
    assert metrics["utilization"] == pytest.approx(1420.0 / (4 * 750.0))  # time_computing / (hosts · window)
    assert metrics["nb_hosts"] == 4


# ------------------------------------------------------------------------ real Batsim outputs
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_metrics_agree_with_batsim_schedule(scenario: str) -> None:
    outputs = load_outputs(REFERENCE / scenario)
    schedule = outputs.schedule
    assert schedule is not None
    metrics = compute_metrics(outputs)
    makespan = float(schedule["makespan"])
    hosts = int(schedule["nb_computing_machines"])
    assert metrics["makespan_s"] == makespan
    assert metrics["nb_jobs_rejected"] == int(schedule["nb_jobs_rejected"])
    assert metrics["nb_jobs_started"] == int(schedule["nb_jobs_finished"])
    assert metrics["mean_waiting_time_s"] * metrics["nb_jobs_started"] == pytest.approx(
        float(schedule["mean_waiting_time"]) * int(schedule["nb_jobs"]), abs=1e-4)
    # over [0, makespan], Σ procs·run is Batsim's time_computing (computing intervals all close)
    busy = utilization(outputs.jobs, hosts, (0.0, makespan)) * hosts * makespan
    assert busy == pytest.approx(float(schedule["time_computing"]), abs=1e-4)
    # over [first submission, last completion], the window energy is Batsim's consumed_joules
    assert metrics["window_energy_j"] == pytest.approx(float(schedule["consumed_joules"]), rel=1e-9)


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if batsim_answers(s)])
def test_energy_at_reproduces_every_batsim_answer(scenario: str) -> None:
    energy = load_outputs(REFERENCE / scenario).consumed_energy
    for time_s, answer_j in batsim_answers(scenario):
        # 3e-4 J: Batsim applies queries at the rounded `now` (behaviour 5)
        assert energy_at_j(energy, time_s) == pytest.approx(answer_j, abs=3e-4), time_s


def test_energy_after_the_last_row_grows_at_idle_power() -> None:
    energy = load_outputs(REFERENCE / "dvfs-energy").consumed_energy
    # last job ends at 450, the simulation at 500 (a pending call): 4 idle Taurus hosts, 380 W
    assert energy_in_window_j(energy, (450.0, 500.0)) == pytest.approx(380.0 * 50)
    assert energy_at_j(energy, -5.0) == 0.0


def test_total_energy_and_relative_window_energy() -> None:
    metrics = compute_metrics(REFERENCE / "fcfs-compute", window=(0.0, 750.0), max_power_w=4 * TAURUS_FULL_W)
    assert metrics["total_energy_j"] == pytest.approx(420947.96)
    assert metrics["window_energy_j"] == pytest.approx(420947.96)
    assert metrics["window_energy_relative"] == pytest.approx(420947.96 / (4 * TAURUS_FULL_W * 750.0))
    # Batsim's consumed_joules starts at the first submission (468 s in long-shutdown-fcfs)
    long_run = compute_metrics(REFERENCE / "long-shutdown-fcfs")
    assert long_run["window_start_s"] == 468.0
    assert long_run["total_energy_j"] > long_run["window_energy_j"]


def test_per_user_stretch_from_a_workload(tmp_path: Path) -> None:
    workload = json.loads((REFERENCE / "fcfs-compute" / "workload.json").read_text())
    for entry in workload["jobs"]:
        entry["user"] = "alice" if int(entry["id"]) % 2 else "bob"
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    assert load_workload_users(path)["7"] == "alice"

    jobs = read_jobs(REFERENCE / "fcfs-compute" / "out_jobs.csv")
    ran = jobs[jobs["final_state"] != "REJECTED"]
    stretch = (ran["waiting_time"] + ran["execution_time"]) / ran["execution_time"]
    odd = ran["job_id"].astype(int) % 2 == 1  # job 5 (odd) was rejected and must not count
    expected = {"alice": stretch[odd].mean(), "bob": stretch[~odd].mean()}
    assert per_user_mean_stretch(jobs, load_workload_users(path)) == pytest.approx(expected)

    metrics = compute_metrics(REFERENCE / "fcfs-compute", workload=path)
    assert metrics["mean_stretch_user_alice"] == pytest.approx(expected["alice"])
    assert metrics["mean_stretch_user_bob"] == pytest.approx(expected["bob"])
    assert not [key for key in compute_metrics(REFERENCE / "fcfs-compute") if "user" in key]


def test_user_column_is_used_when_present() -> None:
    jobs = jobs_frame(job("1", 0, 10, 10), job("2", 0, 0, 10)).assign(user=["u1", "u2"])
    assert per_user_mean_stretch(jobs) == {"u1": 2.0, "u2": 1.0}


def test_table_and_json_outputs() -> None:
    metrics = compute_metrics(REFERENCE / "fcfs-compute")
    table = format_table(metrics)
    assert "mean_bounded_slowdown" in table and "750" in table
    parsed = json.loads(metrics_to_json({**metrics, "undefined": math.nan}))
    assert parsed["nb_jobs"] == 10
    assert parsed["undefined"] is None


# ------------------------------------------------------------------------------- inputs, errors
def test_find_outputs_by_folder_prefix_and_jobs_file(tmp_path: Path) -> None:
    folder = REFERENCE / "shutdown-boot"
    by_folder = find_outputs(folder)
    assert set(by_folder) == {"jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"}
    assert find_outputs(folder / "out") == by_folder
    assert find_outputs(folder / "out_jobs.csv") == by_folder
    assert find_outputs(folder, "out") == by_folder

    shutil.copy(folder / "out_jobs.csv", tmp_path / "a_jobs.csv")
    assert find_outputs(tmp_path) == {"jobs": tmp_path / "a_jobs.csv"}
    shutil.copy(folder / "out_jobs.csv", tmp_path / "b_jobs.csv")
    with pytest.raises(InputError, match="several Batsim outputs") as error:
        find_outputs(tmp_path)
    assert str(tmp_path) in str(error.value)
    assert find_outputs(tmp_path / "b")["jobs"].name == "b_jobs.csv"


def test_missing_outputs_name_the_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        find_outputs(tmp_path)
    assert str(tmp_path) in str(error.value)
    with pytest.raises(InputError, match="out_jobs.csv"):
        find_outputs(tmp_path / "out")


def test_missing_column_names_file_and_column(tmp_path: Path) -> None:
    frame = pd.read_csv(REFERENCE / "fcfs-compute" / "out_jobs.csv")
    path = tmp_path / "out_jobs.csv"
    frame.drop(columns=["waiting_time"]).to_csv(path, index=False)
    with pytest.raises(InputError) as error:
        read_jobs(path)
    assert str(path) in str(error.value) and "waiting_time" in str(error.value)


@pytest.mark.parametrize(("column", "row", "value", "problem"), [
    ("submission_time", 1, -5.0, "negative"),
    ("starting_time", 1, -1.0, "before the job's submission_time"),
    ("finish_time", 3, 0.5, "before the job's starting_time"),
    ("job_id", 3, None, "the same job a second time"),
])
def test_jobs_no_batsim_run_writes_are_refused(tmp_path: Path, column, row, value, problem) -> None:
    """A job finishing before it starts, starting before its submission, submitted before 0, or listed twice gave
    wrong metrics without a word: refused with the file, line and column."""
    frame = pd.read_csv(REFERENCE / "fcfs-compute" / "out_jobs.csv", dtype={"job_id": str})
    frame.loc[row, column] = frame.loc[0, "job_id"] if column == "job_id" else value
    path = tmp_path / "out_jobs.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=f"line {row + 2}, column '{column}': {problem}"):
        read_jobs(path)


@pytest.mark.parametrize(("name", "column"), [("consumed_energy", "energy"), ("consumed_energy", "time"),
                                              ("machine_states", "time")])
def test_time_and_energy_that_fall_are_refused(tmp_path: Path, name, column) -> None:
    """Batsim writes these rows in time order and the energy is cumulative: a row lower than the one before it is
    a file no run writes."""
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    path = folder / f"out_{name}.csv"
    frame = pd.read_csv(path)
    frame.loc[3, column] = frame.loc[2, column] - 1.0
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=f"line 5, column '{column}': lower than the row before"):
        load_outputs(folder)


def test_nb_hosts_is_needed_without_schedule(tmp_path: Path) -> None:
    shutil.copy(REFERENCE / "fcfs-compute" / "out_jobs.csv", tmp_path / "out_jobs.csv")
    with pytest.raises(InputError, match="nb_computing_machines"):
        compute_metrics(tmp_path)
    metrics = compute_metrics(tmp_path, nb_hosts=4)
    assert metrics["utilization"] == pytest.approx(1420.0 / 3000.0)
    assert "total_energy_j" not in metrics


def test_a_job_replaced_by_the_scheduler_counts_once_as_the_original():
    """A job slowed by DVFS is rejected and re-registered as resized!w0.<id> (docs/architecture.md §3)."""
    from wattsched.analysis.outputs import merge_replacements

    jobs = pd.DataFrame({
        "job_id": ["1", "2", "w0.1", "3"],
        "workload_name": ["w0", "w0", "resized", "w0"],
        "final_state": ["REJECTED", "COMPLETED_SUCCESSFULLY", "COMPLETED_SUCCESSFULLY", "REJECTED"],
        "submission_time": [0.0, 0.0, 0.0, 5.0],
        "starting_time": [None, 0.0, 10.0, None],
        "waiting_time": [None, 0.0, 10.0, None],
    })
    merged = merge_replacements(jobs)
    assert list(zip(merged["workload_name"], merged["job_id"], merged["final_state"])) == [
        ("w0", "2", "COMPLETED_SUCCESSFULLY"), ("w0", "1", "COMPLETED_SUCCESSFULLY"), ("w0", "3", "REJECTED")]
    assert merged.loc[merged["job_id"] == "1", "waiting_time"].item() == 10.0
    assert merge_replacements(jobs[jobs["workload_name"] == "w0"]).equals(jobs[jobs["workload_name"] == "w0"])


def test_a_budget_window_is_measured_beside_the_whole_run(tmp_path, capsys):
    """A budget acts in its window: `wattsched run` reports the window's utilization and energy besides the whole
    run's, so that a long job setting the makespan does not hide it (issue 19, problem 6)."""
    from wattsched.cli import main

    root = Path(__file__).resolve().parents[1]
    args = [str(root / "platforms" / "taurus_16.xml"), str(root / "workloads" / "demo_taurus16.json"), "-q", "--json"]
    assert main(["run", *args, "-e", str(tmp_path / "easy"), "--window", "0,43200"]) == 0
    easy = json.loads(capsys.readouterr().out)
    assert easy["utilization"] != easy["whole_run_utilization"]
    assert main(["run", *args, "-e", str(tmp_path / "bud"), "-s", "energy-bud",
                 "-o", '{"budget_fraction": 0.5, "window_end_s": 43200}']) == 0
    bud = json.loads(capsys.readouterr().out)
    assert "whole_run_utilization" not in bud  # no --window: utilization is the whole run's
    # The budget holds the machine back in its window, less so over the whole run.
    assert bud["budget_window_utilization"] < easy["utilization"]
    assert bud["budget_window_utilization"] < bud["utilization"]
    assert bud["budget_window_energy_j"] < easy["window_energy_j"]
