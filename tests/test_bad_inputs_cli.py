"""Bad input on the command line: one line on stderr naming the file and the field (or the option), a non-zero
exit, no traceback and no output left behind (seeds, machine lists, user scheduler files, replay recordings,
runs files, output folders)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")
REFERENCE = ROOT / "tests" / "fixtures" / "batsim-reference"


def _one_error_line(err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "error:" in lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _usage_error(args: list[str], capsys, *needles: str) -> str:
    """An argparse-level refusal: exit status 2 and one line."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    return _one_error_line(capsys.readouterr().err, *needles)


def _fails(args: list[str], capsys, *needles: str) -> str:
    """A refusal of the command itself: exit status 2 and one line."""
    capsys.readouterr()
    assert main(args) == 2
    return _one_error_line(capsys.readouterr().err, "wattsched: error: ", *needles)


# ---------------------------------------------------------------------------------------------- 1. seeds
@pytest.mark.parametrize("command", [
    ["beta", "w.json"],
    ["lightesp"],
    ["eamc-workload"],
    ["reproduce", "energy-budget"],
    ["reproduce", "efs"],
    ["reproduce", "esc"],
    ["reproduce", "upas"],
    ["reproduce", "eamc"],
])
def test_negative_seed_is_refused_before_any_work(command: list[str], tmp_path, capsys) -> None:
    out = tmp_path / "r"
    extra = ["--out", str(out)] if command[0] == "reproduce" else ["--output", str(tmp_path / "w.json")]
    _usage_error(command + ["--seed", "-1"] + extra, capsys, "--seed", "expected an integer ≥ 0, got -1")
    assert not out.exists() and not (tmp_path / "w.json").exists()


@pytest.mark.parametrize("paper, option", [("energy-budget", "--machines"), ("upas", "--machines"),
                                           ("efs", "--traces")])
@pytest.mark.parametrize("value", ["", ",", "sdsc-blue,,curie"])
def test_empty_machine_list_is_refused(paper: str, option: str, value: str, tmp_path, capsys) -> None:
    out = tmp_path / "r"
    _usage_error(["reproduce", paper, f"{option}={value}", "--out", str(out)], capsys, option, "empty")
    assert not out.exists()


def test_unknown_machine_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "r"
    _fails(["reproduce", "energy-budget", "--machines", "nosuch", "--out", str(out)], capsys, "nosuch",
           "sdsc-blue")
    assert not out.exists()


# ---------------------------------------------------------------------------------------------- 2. scheduler files
SCHEDULER_HEAD = "from pybatsim.batsim.batsim import BatsimScheduler\n"


@pytest.mark.parametrize("text, needles", [
    ("def broken(:\n", ["SyntaxError", ".py:1)"]),
    ("import nonexistent_module_xyz\n", ["ModuleNotFoundError", "nonexistent_module_xyz", ".py:1)"]),
    ("import sys\nsys.exit(0)\n", ["sys.exit(0)", ".py:2)"]),
    (SCHEDULER_HEAD + "class Boom(BatsimScheduler):\n    def __init__(self, options=None):\n"
                      "        raise ValueError('bad init')\n", ["raised ValueError: bad init", ".py:4)"]),
    (SCHEDULER_HEAD + "class Boom(BatsimScheduler):\n    def onJobSubmission(self, job):\n"
                      "        raise RuntimeError('boom in user scheduler')\n",
     ["raised RuntimeError: boom in user scheduler", ".py:4)"]),
], ids=["syntax-error", "import-error", "sys-exit", "raising-init", "raising-during-run"])
def test_user_scheduler_errors_are_one_line(text: str, needles: list[str], tmp_path, capsys) -> None:
    sched = tmp_path / "user_sched.py"
    sched.write_text(text)
    prefix = tmp_path / "out" / "run"
    line = _fails(["run", PLATFORM, WORKLOAD, "-s", str(sched), "-e", str(prefix), "-q"], capsys,
                  f"scheduler {'file ' if 'Boom' not in text else ''}{sched}", *needles)
    assert str(sched) in line
    assert not list(tmp_path.rglob("*.csv")), "a failed run must not leave output files"


# ---------------------------------------------------------------------------------------------- 3. replay
def _recording(tmp_path: Path) -> Path:
    folder = tmp_path / "fcfs-compute"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    return folder


@pytest.mark.parametrize("args_text, needles", [
    ("-p 'platform.xml -w workload.json\n", ["batsim-args.txt", "No closing quotation"]),
    ("-p platform.xml -w workload.json --frobnicate\n", ["batsim-args.txt", "'--frobnicate'", "argument 5"]),
    ("-p platform.xml -w\n", ["batsim-args.txt", "'-w'", "needs a value"]),
], ids=["unbalanced-quote", "unknown-flag", "flag-without-value"])
def test_replay_refuses_a_bad_batsim_args_file(args_text: str, needles: list[str], tmp_path, capsys) -> None:
    folder = _recording(tmp_path)
    (folder / "batsim-args.txt").write_text(args_text)
    _fails(["replay", str(folder)], capsys, *needles)


@pytest.mark.parametrize("missing", ["batsim-args.txt", "out_jobs.csv"])
def test_replay_refuses_a_recording_with_a_missing_file(missing: str, tmp_path, capsys) -> None:
    folder = _recording(tmp_path)
    (folder / missing).unlink()
    _fails(["replay", str(folder)], capsys, str(folder), missing, "missing")


# ---------------------------------------------------------------------------------------------- 4. runs files
def _runs_file(tmp_path: Path, **fields: object) -> Path:
    run = {"name": "a", "platform": PLATFORM, "workload": WORKLOAD, "scheduler": "easy-backfill", "options": {},
           "prefix": str(tmp_path / "r" / "out")}
    run.update(fields)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([run]))
    return path


@pytest.mark.parametrize("fields, needles", [
    ({"options": [1]}, ["run 0: options", "JSON object"]),
    ({"bogus": 1}, ["run 0: bogus", "unknown field"]),
    ({"name": 5}, ["run 0: name", "string"]),
    ({"dynamic_jobs": "no"}, ["run 0: dynamic_jobs", "true or false"]),
    ({"tau_s": -5}, ["run 0: tau_s", "-5 must be > 0"]),
    ({"tau_s": "x"}, ["run 0: tau_s", "not a number"]),
    ({"window": 5}, ["run 0: window", "[start_s, end_s]"]),
    ({"window": [100, 10]}, ["run 0: window", "not after"]),
    ({"max_power_w": -1}, ["run 0: max_power_w", "must be > 0"]),
], ids=["options-list", "unknown-field", "name-int", "dynamic-jobs-str", "tau-neg", "tau-str", "window-num",
        "window-reversed", "max-power-neg"])
def test_sweep_refuses_a_bad_run_entry_before_running(fields: dict, needles: list[str], tmp_path, capsys) -> None:
    path = _runs_file(tmp_path, **fields)
    out = tmp_path / "sweep"
    line = _fails(["sweep", str(path), "--out", str(out), "-q"], capsys, str(path), *needles)
    assert "__init__" not in line and "object is not" not in line
    assert not (tmp_path / "r").exists() and not out.exists()


def test_sweep_refuses_an_entry_that_is_not_an_object(tmp_path, capsys) -> None:
    path = tmp_path / "runs.json"
    path.write_text("[5]")
    line = _fails(["sweep", str(path), "--out", str(tmp_path / "sweep"), "-q"], capsys, str(path), "run 0")
    assert "iterable" not in line


def test_sweep_grid_refuses_a_negative_seed(tmp_path, capsys) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"platforms: [{PLATFORM}]\nworkloads: [{{synth: {{hosts: 4, days: 1}}}}]\nseeds: [-1]\n"
                    "schedulers: [fcfs]\n")
    _fails(["sweep", str(grid), "--out", str(tmp_path / "sweep"), "-q"], capsys, str(grid), "seeds[0]", "≥ 0")
    assert not (tmp_path / "sweep" / "inputs").exists()


# ---------------------------------------------------------------------------------------------- 5. output folders
@pytest.mark.parametrize("command", [["node-stats"], ["paraver"]])
def test_pstate_change_on_a_host_beyond_the_platform(command: list[str], tmp_path, capsys) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    for csv in (REFERENCE / "fcfs-compute").glob("out_*.csv"):
        shutil.copy(csv, folder)
    changes = folder / "out_pstate_changes.csv"
    changes.write_text(changes.read_text() + "10,0-99,13\n")
    extra = ["-d", str(tmp_path / "trace")] if command == ["paraver"] else []
    _fails(command + [str(folder)] + extra, capsys, "out_pstate_changes.csv", "row 2.machine_id", "host 99",
           "0-3")
    assert not (tmp_path / "trace").exists() or not any((tmp_path / "trace").iterdir())
