"""Bad input on the command line, second batch: one line on stderr naming the file and the field (or the option),
a non-zero exit, no traceback and no output left behind (metrics windows, plotted allocations, grid generator
entries, replayed recordings, ``beta`` workloads, ``serve`` of a user scheduler file)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_bad_inputs_cli import _fails, _usage_error
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")
RECORDING = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"


def _outputs(tmp_path: Path) -> Path:
    """A copy of a real Batsim run's five output files."""
    folder = tmp_path / "run"
    folder.mkdir()
    for path in RECORDING.glob("out_*.csv"):
        shutil.copy(path, folder / path.name)
    return folder


def _free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


# -------------------------------------------------------------------------------- 1. metrics --window
@pytest.mark.parametrize("window", ["-100,-10", "-1,50"])
def test_metrics_window_before_0_is_refused(window: str, tmp_path, capsys) -> None:
    _usage_error(["metrics", str(_outputs(tmp_path)), f"--window={window}"], capsys, "--window", "before 0")


def test_metrics_window_ending_before_it_starts_is_refused(tmp_path, capsys) -> None:
    _usage_error(["metrics", str(_outputs(tmp_path)), "--window=100,10"], capsys, "--window", "not after its start")


def test_compute_metrics_refuses_a_window_before_0(tmp_path) -> None:
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.base.errors import OptionError

    with pytest.raises(OptionError, match="window start.*non-negative"):
        compute_metrics(_outputs(tmp_path) / "out", window=(-100.0, -10.0))


# -------------------------------------------------------------------------------- 2. plot allocations
def test_plot_refuses_an_allocation_beyond_the_hosts_of_the_run(tmp_path, capsys) -> None:
    folder = _outputs(tmp_path)
    jobs = folder / "out_jobs.csv"
    lines = jobs.read_text().splitlines()
    column = lines[0].split(",").index("allocated_resources")
    row = next(i for i, line in enumerate(lines) if line.startswith("2,"))
    cells = lines[row].split(",")
    cells[column] = "0-999999999"
    lines[row] = ",".join(cells)
    jobs.write_text("\n".join(lines) + "\n")
    pngs = tmp_path / "pngs"
    _fails(["plot", str(folder), "-d", str(pngs)], capsys, "out_jobs.csv", "job 2.allocated_resources",
           "host 999999999 beyond 0-3")
    assert not pngs.exists() or not any(pngs.iterdir())
    _fails(["paraver", str(folder), "-d", str(tmp_path / "prv")], capsys, "out_jobs.csv",
           "job 2.allocated_resources")


# -------------------------------------------------------------------------------- 3. sweep grids
@pytest.mark.parametrize(("platforms", "workloads", "needles"), [
    ([PLATFORM], [{"synth": {"hosts": -4, "days": 0.1}}], ["workloads[0].synth.hosts", "-4"]),
    ([{"taurus": {"hosts": 0}}], [WORKLOAD], ["platforms[0].taurus.hosts", "0 must be ≥ 1"]),
    ([{"esc": {"hosts": 2.5}}], [WORKLOAD], ["platforms[0].esc.hosts", "2.5 is not an integer"]),
    ([{"esc": {"hosts": 10 ** 12}}], [WORKLOAD], ["platforms[0].esc.hosts", "WATTSCHED_LIMIT_HOSTS"]),
    ([PLATFORM], [WORKLOAD, {"synth": {"hosts": 4, "days": "abc"}}], ["workloads[1].synth.days", "'abc'"]),
    ([PLATFORM], [{"synth": {"hosts": 4, "users": 0}}], ["workloads[0].synth.users"]),
    ([PLATFORM], [{"synth": {"hosts": 4, "load": -1}}], ["workloads[0].synth.load"]),
])
def test_grid_generator_entries_name_the_grid_and_the_field(platforms, workloads, needles, tmp_path, capsys) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps({"platforms": platforms, "workloads": workloads, "schedulers": ["fcfs"]}))
    out = tmp_path / "out"
    line = _fails(["sweep", str(grid), "--out", str(out), "-q"], capsys, "grid.yaml", *needles)
    assert "object is not" not in line and "__init__" not in line
    assert not out.exists()


def test_grid_window_before_0_is_refused(tmp_path, capsys) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps({"platforms": [PLATFORM], "workloads": [WORKLOAD], "schedulers": ["fcfs"],
                                "window": [-100, -10]}))
    out = tmp_path / "out"
    _fails(["sweep", str(grid), "--out", str(out), "-q"], capsys, "grid.yaml", "window")
    assert not out.exists()


@pytest.mark.parametrize(("entry", "needles"), [
    (5, ["run 0", "must be a JSON object"]),
    ({"bogus": 1}, ["run 0: bogus", "unknown field"]),
    ({"window": 5}, ["run 0: window", "[start_s, end_s]"]),
    ({"window": [-100, -10]}, ["run 0: window start", "non-negative"]),
])
def test_runs_file_entries_name_the_file_and_the_field(entry, needles, tmp_path, capsys) -> None:
    run = {"name": "a", "platform": PLATFORM, "workload": WORKLOAD, "scheduler": "fcfs", "options": {},
           "prefix": str(tmp_path / "r" / "out")}
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([entry if not isinstance(entry, dict) else {**run, **entry}]))
    out = tmp_path / "out"
    line = _fails(["sweep", str(runs), "--out", str(out), "-q"], capsys, "runs.json", *needles)
    assert "object is not" not in line and "__init__" not in line
    assert not out.exists() and not (tmp_path / "r").exists()


# -------------------------------------------------------------------------------- 4. replay
def test_replay_of_an_unknown_event_type_names_messages_jsonl_and_the_line(tmp_path, capsys) -> None:
    folder = tmp_path / "rec"
    shutil.copytree(RECORDING, folder)
    messages = folder / "messages.jsonl"
    lines = messages.read_text().splitlines()
    assert '"from": "scheduler"' in lines[5] and "REJECT_JOB" in lines[5]
    lines[5] = lines[5].replace("REJECT_JOB", "BOGUS_EVENT")
    messages.write_text("\n".join(lines) + "\n")
    keep = tmp_path / "ours"
    _fails(["replay", str(folder), "--keep-outputs", str(keep)], capsys, "messages.jsonl", "line 6", "message 6",
           "'BOGUS_EVENT'")
    assert not keep.exists() or not any(keep.iterdir())


# -------------------------------------------------------------------------------- 5. beta
def _workload(**job_fields) -> dict:
    job = {"id": 1, "subtime": 0, "res": 2, "profile": "d", "walltime": 100}
    job.update(job_fields)
    return {"nb_res": 4, "jobs": [job], "profiles": {"d": {"type": "delay", "delay": 50}}}


@pytest.mark.parametrize(("doc", "needles"), [
    (_workload(walltime=-5), ["job 'w0!1'.walltime", "-5"]),
    (_workload(res=1e12), ["job 'w0!1'.res"]),
    ({**_workload(), "nb_res": -4}, ["nb_res", "-4"]),
])
def test_beta_reads_the_workload_as_run_does(doc, needles, tmp_path, capsys) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(doc))
    output = tmp_path / "w_beta.json"
    _fails(["beta", str(workload), "--seed", "1", "--output", str(output)], capsys, "w.json", *needles)
    assert not output.exists()


def test_beta_of_a_good_workload_still_works(tmp_path, capsys) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(_workload(walltime=-1)))
    output = tmp_path / "w_beta.json"
    assert main(["beta", str(workload), "--seed", "1", "--output", str(output)]) == 0
    assert json.loads(output.read_text())["jobs"][0]["walltime"] > 50


# -------------------------------------------------------------------------------- 6. serve -s FILE
@pytest.mark.parametrize(("code", "needles"), [
    ("def broken(:\n", ["scheduler file", "raised SyntaxError", "sched.py:1"]),
    ("import no_such_module_wattsched\n", ["scheduler file", "ModuleNotFoundError", "sched.py:1"]),
    ("from pybatsim.batsim.batsim import BatsimScheduler\n"
     "class Boom(BatsimScheduler):\n"
     "    def __init__(self, options=None):\n"
     "        raise ValueError('bad init')\n", ["raised ValueError: bad init", "sched.py:4"]),
])
def test_serve_of_a_scheduler_file_that_fails_to_load_is_one_line(code, needles, tmp_path, capsys) -> None:
    path = tmp_path / "sched.py"
    path.write_text(code)
    _fails(["serve", "-s", f"{path}", "--bind", _free_endpoint(), "--timeout", "1"], capsys, *needles)


def test_serve_of_a_scheduler_that_raises_on_a_message_is_one_line(tmp_path, capsys) -> None:
    """The scheduler's exception while it answers Batsim: one line (as ``run -s``), no traceback."""
    path = tmp_path / "sched.py"
    path.write_text("from pybatsim.batsim.batsim import BatsimScheduler\n"
                    "class Boom(BatsimScheduler):\n"
                    "    def onJobSubmission(self, job):\n"
                    "        raise RuntimeError('boom in user scheduler')\n")
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(_workload()))
    endpoint = _free_endpoint()
    wattsched = Path(sys.executable).parent / "wattsched"
    proc = subprocess.Popen([str(wattsched), "serve", "-s", str(path), "--bind", endpoint, "--timeout", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        code = main(["run", PLATFORM, str(workload), "--connect", endpoint, "-e", str(tmp_path / "o" / "out"),
                     "-q", "--timeout", "30"])
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 2
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    for needle in ("scheduler", "raised RuntimeError: boom in user scheduler", "sched.py:4"):
        assert needle in errors[0], (needle, errors[0])
