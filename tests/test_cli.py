"""The ``wattsched`` command as a user meets it: help, runs, and one-line errors without outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wattsched.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")
REFERENCE = ROOT / "tests" / "fixtures" / "batsim-reference"


def commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return list(sub.choices)


@pytest.mark.parametrize("command", ["run", "replay", "serve", "schedulers", "metrics", "plot", "regress"])
def test_every_command_has_documented_help(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: wattsched " + command in out
    assert len(out.splitlines()) > 5


def test_main_help_lists_the_commands(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("run", "replay", "serve", "schedulers", "metrics", "plot", "regress"):
        assert command in out


def test_run_writes_outputs_and_prints_metrics(tmp_path, capsys) -> None:
    prefix = tmp_path / "res" / "easy"
    assert main(["run", PLATFORM, WORKLOAD, "-s", "easy-backfill", "-e", str(prefix), "-q"]) == 0
    out = capsys.readouterr().out
    assert "mean_bounded_slowdown" in out and "utilization" in out
    for name in ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"):
        assert Path(f"{prefix}_{name}.csv").exists()


def test_run_json_metrics(tmp_path, capsys) -> None:
    assert main(["run", PLATFORM, WORKLOAD, "-s", "fcfs", "-e", str(tmp_path / "o"), "-q", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nb_jobs"] == 210


def test_the_progress_bar_goes_to_stderr_and_stdout_stays_json(tmp_path, capsys) -> None:
    assert main(["run", PLATFORM, WORKLOAD, "-s", "fcfs", "-e", str(tmp_path / "o"), "--progress", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["nb_jobs"] == 210
    assert "simulating" in out.err and "210/210" in out.err


def _fails_cleanly(args: list[str], tmp_path: Path, capsys, *needles: str) -> str:
    prefix = tmp_path / "out" / "run"
    code = main(args + ["-e", str(prefix), "-q"])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("wattsched: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]
    assert not list(tmp_path.rglob("*.csv")), "a failed run must not leave output files"
    return lines[0]


def test_unknown_scheduler(tmp_path, capsys) -> None:
    _fails_cleanly(["run", PLATFORM, WORKLOAD, "-s", "easy-backfil"], tmp_path, capsys,
                   "unknown scheduler 'easy-backfil'", "easy-backfill")


def test_bad_option_value(tmp_path, capsys) -> None:
    _fails_cleanly(["run", PLATFORM, WORKLOAD, "-o", '{"placement": "worst-fit"}'], tmp_path, capsys,
                   "placement", "first-fit")


def test_malformed_options_json(tmp_path, capsys) -> None:
    _fails_cleanly(["run", PLATFORM, WORKLOAD, "-o", "{bad"], tmp_path, capsys, "not valid JSON")


def test_missing_platform_file(tmp_path, capsys) -> None:
    _fails_cleanly(["run", str(tmp_path / "nope.xml"), WORKLOAD], tmp_path, capsys, "nope.xml")


def test_malformed_workload(tmp_path, capsys) -> None:
    bad = tmp_path / "w.json"
    bad.write_text('{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}], "profiles": {}}')
    _fails_cleanly(["run", PLATFORM, str(bad)], tmp_path, capsys, "w.json", "'p'")


def test_misbehaving_scheduler_leaves_no_outputs(tmp_path, capsys) -> None:
    sched = tmp_path / "greedy.py"
    sched.write_text(
        "from pybatsim.batsim.batsim import BatsimScheduler\n"
        "from procset import ProcSet\n"
        "class Greedy(BatsimScheduler):\n"
        "    def onJobSubmission(self, job):\n"
        "        job.allocation = ProcSet((0, job.requested_resources - 1))\n"
        "        self.bs.execute_jobs([job])\n"
        "    def onJobCompletion(self, job):\n"
        "        pass\n"
    )
    _fails_cleanly(["run", PLATFORM, WORKLOAD, "-s", f"{sched}:Greedy"], tmp_path, capsys,
                   "EXECUTE_JOB", "not idle")


def test_replay_exit_codes(tmp_path, capsys) -> None:
    assert main(["replay", str(REFERENCE / "fcfs-compute")]) == 0
    folder = tmp_path / "fcfs-compute"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    jobs = folder / "out_jobs.csv"
    jobs.write_text(jobs.read_text().replace("9536.900000", "9536.990000"))
    assert main(["replay", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "out_jobs.csv line" in out and "consumed_energy" in out


def test_schedulers_lists_presets(capsys) -> None:
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    assert "easy-backfill" in out and "placement" in out and "first-fit" in out


def test_schedulers_describes_one_preset(capsys) -> None:
    """``wattsched schedulers NAME``: that preset only (where option errors of a preset with many options point),
    compose with the pieces whose options it takes; a typo gets a suggestion."""
    assert main(["schedulers", "energy-bud"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PRESETS") and "\nenergy-bud\n" in out and "budget_fraction" in out
    assert "\nreduce-pc\n" not in out and "PIECES" not in out
    assert main(["schedulers", "compose", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert list(listing["presets"]) == ["compose"] and "power" in listing["pieces"]
    assert main(["schedulers", "energy-budd"]) == 2
    assert "unknown scheduler 'energy-budd' (did you mean 'energy-bud'?)" in capsys.readouterr().err


def test_metrics_and_plot_on_real_batsim_outputs(tmp_path, capsys) -> None:
    assert main(["metrics", str(REFERENCE / "pybatsim-easy"), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nb_jobs"] == 80
    assert main(["plot", str(REFERENCE / "pybatsim-easy"), "-d", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.glob("*.png")} == {"gantt.png", "power.png", "machine_states.png"}


def test_tool_commands(tmp_path, capsys) -> None:
    assert main(["synth", "--hosts", "8", "--seed", "1", "--days", "1", "--output", str(tmp_path / "w.json")]) == 0
    assert json.loads((tmp_path / "w.json").read_text())["jobs"]
    assert main(["platform", "--hosts", "8", "--output", str(tmp_path / "p.xml")]) == 0
    assert main(["run", str(tmp_path / "p.xml"), str(tmp_path / "w.json"), "-e", str(tmp_path / "o"), "-q"]) == 0
    with pytest.raises(SystemExit):
        main(["swf", "--help"])
    assert "usage: wattsched swf" in capsys.readouterr().out


def test_progress_off_a_terminal_writes_lines_with_the_time_left() -> None:
    """Off a terminal rich draws its bar only at the end: a long run sent to a log file gets plain lines, each
    with jobs done, simulated time and an estimate of the time left."""
    import io

    from wattsched.experiments.runner import progress_lines

    stream = io.StringIO()
    with progress_lines(4, interval_s=0.0, stream=stream) as show:
        show(0.0, 0, 4)
        show(90061.0, 1, 4)
        show(90062.0, 4, 4)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4  # one per call at interval 0, and the last one
    assert lines[0].endswith("left ~")  # no job done yet: no estimate
    assert "1/4 jobs" in lines[1] and "t=1d01:01:01.0" in lines[1] and "left 0:00:00" in lines[1]
    assert lines[-1].startswith("simulating 4/4 jobs")
    quiet = io.StringIO()
    with progress_lines(4, interval_s=3600.0, stream=quiet) as show:
        show(5.0, 2, 4)
    assert len(quiet.getvalue().splitlines()) == 1  # within the interval: only the final line


def test_progress_lines_estimate_the_time_left_from_the_recent_pace() -> None:
    """A whole trace slows down as its backlog grows: 600 jobs in the first 10 minutes, 100 in the next 10. At
    that recent pace the 300 left need 30 min; the whole run's average (700 in 20 min) would say 8 min 34 s."""
    import io

    from wattsched.experiments.runner import PROGRESS_PACE_WINDOW_S, progress_lines

    assert PROGRESS_PACE_WINDOW_S == 600.0
    times = iter([0.0, 600.0, 1200.0, 1200.0])
    stream = io.StringIO()
    with progress_lines(1000, interval_s=0.0, stream=stream, clock=lambda: next(times)) as show:
        show(10.0, 600, 1000)
        show(20.0, 700, 1000)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("elapsed 0:10:00  left 0:06:40")  # young run: its own pace (400 at 1/s)
    assert lines[1].endswith("elapsed 0:20:00  left 0:30:00")
    assert lines[2].endswith("left 0:30:00")
