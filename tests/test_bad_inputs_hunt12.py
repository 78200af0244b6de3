"""Hunt 12: SWF traces, golden folders, result folders and ``beta`` inputs that still hung, gave a traceback, were
read as a value they do not hold, or gave an error line without its file.

* ``swf --busiest`` scanned every step (day) from 0 to the last submission, summing the steps of each extract: one
  line submitted at 1e15 s (a typo, a corrupt line) meant 1e10 steps, a hang. Only the starts where an extract's
  load can rise are tried now (same start as the full scan).
* ``swf --walltime none`` wrote a job running 1e12 s, which ``wattsched run`` refuses when the simulation passes
  the ``time_s`` bound.
* ``swf`` read ``1_000`` (Python's float()) and digits of other scripts (``١٠``, in a job field or the header) as
  numbers.
* ``regress`` with a job id twice in one jobs file (golden or run) gave a StopIteration traceback.
* ``metrics`` (and ``node-stats``, ``paraver``, ``plot``) took a ``finish_time`` other than ``starting_time +
  execution_time`` (makespan and utilization of one schedule, slowdowns of another), and a schedule's
  ``nb_computing_machines`` other than the hosts the machine states count (a utilization of another machine).
* ``metrics --workload`` took a job ``user`` that ``run`` refuses (a list, an object, ``true``, ``null``) and showed
  ``mean_stretch_user_[1, 2]``.
* ``beta`` named no file when a job's profile has no run time, and refused composed profiles nested 32 to 64 deep
  (which ``run`` takes) as "no run time of its own".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused, set_line
from wattsched.cli import main
from wattsched.workloads.swf import busiest_window

ROOT = Path(__file__).resolve().parent.parent
TAURUS_16 = str(ROOT / "platforms" / "taurus_16.xml")


def _swf_line(number: int, submit: str, run: str = "100", procs: int = 2, requested: str = "200") -> str:
    return f"{number} {submit} 0 {run} {procs} -1 -1 {procs} {requested} -1 1 1 1 -1 -1 -1 -1 -1"


def _swf(path: Path, *lines: str, header: str = "; MaxProcs: 8") -> Path:
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def test_swf_busiest_with_a_submission_at_1e15_s_does_not_hang(tmp_path: Path) -> None:
    trace = _swf(tmp_path / "t.swf", _swf_line(1, "0"), _swf_line(2, "10", "50", 4, "100"),
                 _swf_line(3, "1e15", "50", 4, "100"))
    out = tmp_path / "w.json"
    done = subprocess.run([sys.executable, "-m", "wattsched", "swf", str(trace), "--busiest", "7", "--output",
                           str(out)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "busiest 7 days: from 0 s" in done.stderr
    assert [job["id"] for job in json.loads(out.read_text())["jobs"]] == [1, 2]


def test_swf_busiest_still_takes_the_earliest_best_start(tmp_path: Path) -> None:
    day = 86400.0
    trace = _swf(tmp_path / "t.swf", _swf_line(1, "0", "100", 1), _swf_line(2, f"{10 * day:.0f}", "100", 5))
    start, load = busiest_window(trace, nb_hosts=8, duration_s=7 * day, step_s=day)
    assert start == 4 * day  # the first 7-day extract holding day 10's job
    assert load == pytest.approx(500 / (8 * 7 * day))
    start, _ = busiest_window(trace, nb_hosts=8, duration_s=0.5 * day, step_s=day)
    assert start == 10 * day


def test_swf_walltime_none_refuses_a_run_time_beyond_the_time_bound(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    trace = _swf(tmp_path / "t.swf", _swf_line(1, "0"), _swf_line(2, "20", "1e12", 4, "-1"))
    out = tmp_path / "w.json"
    refused(capsys, ["swf", str(trace), "--walltime", "none", "--output", str(out)],
            "t.swf: line 3, field 'run_time'", "1e+12 s and no walltime")
    assert not out.exists()


@pytest.mark.parametrize("field, header", [("1_00", "; MaxProcs: 8"), ("\u0661\u0660", "; MaxProcs: 8"),
                                           ("100", "; MaxProcs: \u0661\u0660")])
def test_swf_numbers_no_swf_writer_writes_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      field: str, header: str) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(f"{header}\n{_swf_line(1, '0', field)}\n", encoding="utf-8")
    out = tmp_path / "w.json"
    where = "header MaxProcs" if "MaxProcs: 8" not in header else "line 2, field 'run_time'"
    refused(capsys, ["swf", str(trace), "--output", str(out)], "t.swf", where, "not a number")
    assert not out.exists()


@pytest.mark.parametrize("side", ["golden", "run"])
def test_regress_refuses_a_job_id_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str], side: str) -> None:
    folders = {name: recording_outputs(tmp_path / name, "fcfs-compute") for name in ("golden", "run")}
    jobs = folders[side] / "out_jobs.csv"
    with jobs.open("a") as handle:
        handle.write(jobs.read_text().splitlines()[-1] + "\n")  # the last job again, as the file's last row
    refused(capsys, ["regress", str(folders["run"]), str(folders["golden"])],
            f"{side}/out_jobs.csv: line 12, column 'job_id'", "job 9 a second time (first on line 11)")


def test_metrics_refuse_a_finish_time_other_than_start_plus_execution(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    jobs = run / "out_jobs.csv"
    line = jobs.read_text().splitlines()[3]
    assert line.startswith("1,w0,c100,0.000000,2,200.000000,1,COMPLETED_SUCCESSFULLY,0.000000,100.000000,100.000000")
    set_line(jobs, 4, line.replace(",100.000000,100.000000,0.000000,", ",100.000000,50.000000,0.000000,", 1))
    for command in ("metrics", "node-stats"):
        refused(capsys, [command, str(run)], "out_jobs.csv: line 4, column 'finish_time'",
                "50.000000 s, while starting_time + execution_time is 100.000000 s")


def test_metrics_refuse_a_schedule_counting_other_hosts_than_the_machine_states(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    schedule = run / "out_schedule.csv"
    schedule.write_text(schedule.read_text().replace(",4,0,10,", ",2,0,10,", 1))
    for command in ("metrics", "node-stats"):
        refused(capsys, [command, str(run)], "out_schedule.csv: nb_computing_machines",
                "'2' hosts, while every row of out_machine_states.csv counts 4")
    schedule.write_text(schedule.read_text().replace(",2,0,10,", ",4.000000,0,10,", 1))  # the same number
    assert main(["metrics", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nb_hosts"] == 4


def test_beta_names_the_file_of_a_job_without_run_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "parallel", "cpu": [1e9], "com": [0]}}}))
    refused(capsys, ["beta", str(workload), "--seed", "1"], f"{workload}: job 1", "has no run time of its own")


def test_beta_takes_composed_profiles_nested_as_deep_as_run_takes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    profiles = {f"p{i}": {"type": "composed", "seq": [f"p{i + 1}"]} for i in range(40)}
    profiles["p40"] = {"type": "delay", "delay": 10}
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "profiles": profiles,
                                    "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p0", "walltime": 100}]}))
    out = tmp_path / "b.json"
    assert main(["beta", str(workload), "--seed", "1", "--output", str(out)]) == 0, capsys.readouterr().err
    written = json.loads(out.read_text())
    parts = written["profiles"][written["jobs"][0]["profile"]]["seq"]
    assert sum(written["profiles"][p].get("delay", 0) + written["profiles"][p].get("cpu", 0) / 2.3e9
               for p in parts) == pytest.approx(10)


@pytest.mark.parametrize("user, kind", [([1, 2], "a list"), (True, "true"), (None, "null")])
def test_metrics_workload_refuses_users_run_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str], user: object,
                                                    kind: str) -> None:
    """``metrics --workload`` showed ``mean_stretch_user_[1, 2]`` for a user ``run`` refuses."""
    jobs = [{"id": i, "subtime": 0, "res": 1, "profile": "p", "user": user if i == 3 else 7} for i in range(1, 11)]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 1}}}))
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    refused(capsys, ["metrics", str(run), "--workload", str(workload)],
            f"{workload}: job '3'.user: must be a string or a number, got {kind}")
