"""Every command used carelessly (``wattsched/cli/``): a typo'd option, a missing file, an empty file, a folder
where a file goes, a file where a folder goes. Each is one line on stderr, exit status 2, and nothing written:
no traceback, no hang, no silent acceptance, no half-made output folder.

The cases run in-process and fail before any simulation, so the whole file takes a few seconds. The ones that
were bugs (a traceback, a folder left behind, a message naming an option the command does not have) are
marked "was:".
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")
TRACE = "SDSC-BLUE-2000-4.2-cln"


def run_cli(argv: list[str]) -> tuple[int, list[str]]:
    """Exit status and stderr lines of ``wattsched ARGV`` (argparse's exits included)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = int(stop.code or 0)
    return status, err.getvalue().strip().splitlines()


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A working folder with an empty file of each kind and an empty folder."""
    monkeypatch.chdir(tmp_path)
    for name in ("empty.xml", "empty.json", "empty.yaml", "empty.swf", "empty_jobs.csv", "file"):
        (tmp_path / name).write_text("")
    (tmp_path / "folder").mkdir()
    return tmp_path


def everything(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


# (argv, a word the one line must hold). Paths are relative to the working folder of `place`.
CASES = [
    # typo'd options
    (["run", PLATFORM, WORKLOAD, "--tpyo"], "--tpyo"),
    (["synth", "--hosts", "4", "--seed", "1", "--outptu", "x.json"], "--outptu"),
    (["schedulers", "--jsno"], "--jsno"),
    (["traces", "list", "--cahce", "c"], "--cahce"),
    (["reproduce", "esc", "--tpyo"], "--tpyo"),
    (["--vebrose", "schedulers"], "--vebrose"),
    # was: silently read as an abbreviation of another option (--timeout 5, --budget-power 500)
    (["run", PLATFORM, WORKLOAD, "--time", "5", "-e", "o/out"], "--time 5"),
    (["plot", "folder", "--budget", "500"], "--budget 500"),
    # was: an empty -o (a script's unset variable) silently ran with the default options
    (["run", PLATFORM, WORKLOAD, "-o", "", "-e", "o/out"], "option -o: scheduler options are empty"),
    (["serve", "-o", " "], "option -o: scheduler options are empty"),
    (["run", PLATFORM, WORKLOAD, "-o", "@empty.json", "-e", "o/out"], "empty.json: scheduler options are empty"),
    # was: "cannot read : Is a directory" (the empty name after @ read as the working folder)
    (["run", PLATFORM, WORKLOAD, "-o", "@", "-e", "o/out"], "-o @: give the options file's name after @"),
    # was: out of memory (a user id array of 10^13 entries)
    (["synth", "--hosts", "8", "--days", "1", "--seed", "1", "--users", "10000000000000", "--output", "u.json"],
     "users: 1e+13 users"),
    # was: the second -o silently replaced the first
    (["run", PLATFORM, WORKLOAD, "-o", "{}", "-o", '{"placement": "best-fit"}', "-e", "o/out"], "-o/--options: given twice"),
    (["sweep", "missing.yaml", "-j", "4", "--dask-scheduler", "tcp://127.0.0.1:1"], "-j 4 sizes the local cluster"),
    # a missing file, an empty file, a folder instead of a file
    *[(["run", p, WORKLOAD, "-e", "o/out"], p) for p in ("missing.xml", "empty.xml", "folder")],
    *[(["run", PLATFORM, w, "-e", "o/out"], w) for w in ("missing.json", "empty.json", "folder")],
    *[(["run", PLATFORM, WORKLOAD, "-o", f"@{w}", "-e", "o/out"], w) for w in ("missing.json", "empty.json", "folder")],
    (["run", PLATFORM, WORKLOAD, "-e", "folder"], "folder"),
    (["run", PLATFORM, WORKLOAD, "-e", "file/out"], "file"),
    *[([c, o], o) for c in ("metrics", "plot", "paraver", "node-stats") for o in ("missing", "empty", "folder")],
    *[(["replay", f], f) for f in ("missing", "empty.xml", "folder")],
    *[(["regress", f, f], f) for f in ("missing", "empty", "folder")],
    *[(["swf", f, "--output", "o.json"], f) for f in ("missing.swf", "empty.swf", "folder")],
    *[(["beta", w, "--seed", "1", "--output", "b.json"], w) for w in ("missing.json", "empty.json", "folder")],
    *[(["sweep", g, "--out", "sw"], g) for g in ("missing.yaml", "empty.yaml", "folder", "empty.json")],
    (["synth", "--hosts", "4", "--seed", "1", "--output", "folder"], "folder"),
    (["platform", "--hosts", "4", "--output", "file/x.xml"], "file"),
    (["web", "--workspace", "file", "--port", "1"], "file"),
    # was: a traceback (NotADirectoryError) for an output folder under a file
    (["sweep", str(ROOT / "docs" / "study.yaml"), "--out", "file"], "--out file"),
    (["sweep", str(ROOT / "docs" / "study.yaml"), "--out", "file/sub"], "--out file/sub"),
    # was: the reproduction ran for minutes, then could not write its report (--report-dir a file), or
    # failed on its first input file (--out a file)
    *[(["reproduce", paper, "--report-dir", "file", "--out", "o"], "--report-dir file") for paper in ("esc", "upas", "eamc")],
    *[(["reproduce", paper, "--out", "file/sub"], "--out file/sub")
      for paper in ("energy-budget", "efs", "esc", "upas", "eamc")],
    # was: the ESC reproduction wrote its platforms under --out before refusing a mistyped --pwa
    (["reproduce", "esc", "--pwa", "missing", "--out", "o"], "--pwa missing: no such folder"),
    # was: a traceback (OverflowError from the socket layer), after the workspace was made
    (["web", "--port", "70000"], "expected a port from 1 to 65535, got 70000"),
    # was: accepted, and the report showed all differences but the last, then "... and N+1 more"
    (["regress", "folder", "folder", "--limit", "-1"], "argument --limit: expected an integer ≥ 0, got -1"),
    (["replay", "folder", "--limit", "-1"], "argument --limit: expected an integer ≥ 0, got -1"),
    # was: "runtime_range_s must satisfy 1 <= low <= high", naming no option of the command
    (["synth", "--hosts", "4", "--seed", "1", "--min-runtime", "100", "--max-runtime", "10"],
     "--min-runtime 100 --max-runtime 10: the shortest run time must be at least 1 s and at most the longest"),
    # was: "--pwa missing: no such folder", an option these commands do not have
    (["traces", "fetch", TRACE, "--mirror", "missing"], "--mirror missing: no such folder"),
    (["swf", TRACE, "--mirror", "missing"], "--mirror missing: no such folder"),
]


@pytest.mark.parametrize(("argv", "named"), CASES, ids=[" ".join(Path(a).name for a in c[0]) for c in CASES])
def test_a_careless_command_is_one_line_exit_2_and_writes_nothing(place, argv, named):
    before = everything(place)
    status, err = run_cli(argv)
    assert status == 2, err
    assert len(err) == 1 and err[0].startswith("wattsched"), err
    assert named in err[0]
    assert "Traceback" not in err[0]
    assert everything(place) == before


@pytest.mark.parametrize(("argv", "command"), [
    (["run", PLATFORM, WORKLOAD, "--tpyo"], "wattsched run"),
    (["reproduce", "esc", "--tpyo"], "wattsched reproduce esc"),
    (["schedulers", "energy-bud", "extra"], "wattsched schedulers"),  # (one preset is its argument)
])
def test_an_unknown_option_points_to_the_help_of_its_command(place, argv, command):
    """was: "wattsched: error: unrecognized arguments: ... (see 'wattsched --help')", the top level's help."""
    status, err = run_cli(argv)
    assert status == 2 and err == [f"{command}: error: unrecognized arguments: {argv[-1]} (see '{command} --help')"]


def test_an_empty_list_of_runs_is_one_line_and_writes_nothing(place):
    """was: a traceback (KeyError 'status') after writing an empty results.csv and results.parquet."""
    (place / "runs.json").write_text("[]")
    before = everything(place)
    status, err = run_cli(["sweep", "runs.json", "--out", "out", "-q"])
    assert status == 2 and err == ["wattsched: error: runs.json: the list of runs is empty"]
    assert everything(place) == before


def test_a_grid_with_a_bad_entry_after_a_generated_one_leaves_no_output_folder(place):
    """was: ``out/inputs/`` made (and the generated platform written) before the bad entry was found."""
    grid = place / "g.yaml"
    grid.write_text("platforms: [{taurus: {hosts: 4}}, nope.xml]\n"
                    "workloads: [{synth: {hosts: 4, days: 0.1}}]\nschedulers: [fcfs]\n")
    status, err = run_cli(["sweep", str(grid), "--out", "out"])
    assert status == 2 and err == [f"wattsched: error: {grid}: platforms[1]: no file nope.xml"]
    assert not (place / "out").exists()


def test_updating_golden_outputs_under_a_file_is_one_line(place):
    """was: a traceback (NotADirectoryError) from ``regress --update`` when the golden folder's parent is a
    file."""
    assert run_cli(["run", PLATFORM, WORKLOAD, "-s", "fcfs", "-e", "run/out", "-q"])[0] == 0
    before = everything(place)
    status, err = run_cli(["regress", "run/out", "file/golden", "--update"])
    assert status == 2 and len(err) == 1
    assert re.fullmatch(r"wattsched: error: golden file/golden: cannot write file/golden/out_jobs\.csv: file is a "
                        r"file, not a folder", err[0]), err
    assert everything(place) == before


def test_a_failed_download_leaves_no_cache_folder(place):
    """was: the cache folder (and its parents) made for a download that then failed stayed behind."""
    with contextlib.closing(__import__("socket").socket()) as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    before = everything(place)
    status, err = run_cli(["traces", "fetch", TRACE, "--mirror", "folder", "--cache", "cache/a/b", "-q",
                           "--url", f"http://127.0.0.1:{port}/pwa"])
    assert status == 2 and len(err) == 1 and "cannot download" in err[0]
    assert everything(place) == before


@pytest.mark.parametrize("body", ["time.sleep(120)", "while True:\n            pass"], ids=["blocks", "loops"])
def test_run_gives_up_on_an_in_process_scheduler_that_stops_answering(tmp_path, body) -> None:
    """``--timeout S`` without ``--connect``: a scheduler module of the user's that blocks or loops on a message is
    stopped after S seconds, with one line naming the message, exit 2 and no output file (without it, the run would
    wait for ever, as Batsim does; before, the option was refused there)."""
    import subprocess
    import sys
    import time

    (tmp_path / "hang.py").write_text(
        "import time\nfrom pybatsim.batsim.batsim import BatsimScheduler\n\n\nclass Hang(BatsimScheduler):\n"
        f"    def onJobSubmission(self, job):\n        {body}\n")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "wattsched", "run", PLATFORM, WORKLOAD, "-s",
                           str(tmp_path / "hang.py") + ":Hang", "--timeout", "1", "-q", "-e", str(tmp_path / "o" / "x")],
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert time.monotonic() - start < 30
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "did not answer" in lines[0] and "JOB_SUBMITTED" in lines[0] and "within 1 s (--timeout)" in lines[0]
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
