"""Bad inputs hunt 20: results that printed ``nan``, messages that did not name the option as typed, a generator
that wrote what was not asked without a word, a golden file cut short, and a replay that overwrote its own outputs.

* ``node-stats`` of a run where no job ran (an empty workload, every job rejected) printed ``makespan n/a (nan s),
  energy to the makespan nan MWh`` and, with ``--baseline``, ``time ratio nan, energy ratio nan``.
* ``sweep`` of one run said ``1 runs``.
* ``swf --procs-per-host node`` on a trace without ``MaxNodes`` said ``8/None is not a whole number of processors
  per node: give procs_per_host as a number``; a ``MaxNodes: -2`` was accepted: a workload of ``-2`` hosts.
* ``lightesp --walltime-factor 0.5`` said ``walltime_factor must be at least 1``, not naming the option.
* ``synth --days 1e-9`` (or ``--load 1e-12``) wrote one job, an offered load of 2e6 (or 4e-4), without a word.
* ``regress`` compared a golden row cut short (``37852,0,0,0,6,``) as a difference of the run.
* ``replay A B --keep-outputs K`` wrote B's CSVs over A's in K, without a word; ``replay --help`` said nothing of
  FOLDER.
* Any command writing into a pipe closed early (``wattsched metrics R | head -1``) ended with a BrokenPipeError
  traceback.

Runs are of one job (or none) on two Taurus hosts; the replays are of the two smallest recordings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused, set_line, usage_error
from wattsched import api
from wattsched.cli import main

JOB = {"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}
PROFILES = {"p": {"type": "delay", "delay": 5}}


def _run(tmp_path: Path, name: str, jobs: list[dict]) -> Path:
    """The outputs prefix of fcfs on two Taurus hosts running ``jobs``."""
    platform = tmp_path / "two.xml"
    if not platform.exists():
        platform.write_text(api.taurus_platform(2))
    workload = tmp_path / f"{name}.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": jobs, "profiles": PROFILES}))
    prefix = tmp_path / name / "out"
    assert main(["run", str(platform), str(workload), "-s", "fcfs", "-e", str(prefix), "-q"]) == 0
    return prefix


# ------------------------------------------------------------------ 1. node-stats of a run where no job ran
def _node_stats_against_itself(capsys, prefix) -> str:
    """What ``node-stats PREFIX --baseline PREFIX`` prints (exit 0), checked free of ``nan``."""
    capsys.readouterr()
    assert main(["node-stats", str(prefix), "--baseline", str(prefix)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower(), out
    return out


@pytest.mark.parametrize("jobs", [[], [dict(JOB, res=5)]], ids=["empty workload", "every job rejected"])
def test_node_stats_of_a_run_where_no_job_ran_prints_no_nan(capsys, tmp_path, jobs):
    """It printed ``makespan n/a (nan s), energy to the makespan nan MWh`` and ``time ratio nan``."""
    out = _node_stats_against_itself(capsys, _run(tmp_path, "none", jobs))
    assert "makespan n/a (no job ran)" in out and "time ratio n/a (no job ran)" in out, out


def test_node_stats_of_a_run_without_energy_file_says_so(capsys, tmp_path):
    """``energy to the makespan nan MWh`` for a run Batsim ran without its energy plugin."""
    prefix = _run(tmp_path, "one", [JOB])
    Path(f"{prefix}_consumed_energy.csv").unlink()
    out = _node_stats_against_itself(capsys, prefix)
    assert "energy to the makespan n/a (no energy recorded)" in out and "time ratio 1.000000" in out, out


# ---------------------------------------------------------------------------------- 2. sweep of one run
def test_a_sweep_of_one_run_says_1_run(capsys, tmp_path):
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": [JOB], "profiles": PROFILES}))
    platform = tmp_path / "two.xml"
    platform.write_text(api.taurus_platform(2))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"platforms": [str(platform)], "workloads": [str(workload)], "schedulers": ["fcfs"]}))
    assert main(["sweep", str(grid), "--out", str(tmp_path / "out"), "-j", "1", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 run (1 done)"), out


# ------------------------------------------------------------------------- 3. swf --procs-per-host node
def _swf(tmp_path: Path, header: str) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(f"; Version: 2.2\n{header}1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1\n")
    return path


@pytest.mark.parametrize("header, field, shown", [
    ("; MaxProcs: 8\n", "t.swf: header MaxNodes", "missing"),
    ("", "t.swf: header MaxProcs", "missing"),
    ("; MaxProcs: 8\n; MaxNodes: -2\n", "t.swf: line 3, header MaxNodes", "-2 is not a positive number"),
    ("; MaxProcs: 8\n; MaxNodes: 0\n", "t.swf: line 3, header MaxNodes", "0 is not a positive number"),
    ("; MaxProcs: 8\n; MaxNodes: 3\n", "t.swf: header MaxProcs/MaxNodes", "8/3 is not a whole number"),
], ids=["no MaxNodes", "no header", "negative MaxNodes", "zero MaxNodes", "not dividing"])
def test_swf_procs_per_host_node_names_the_option_and_never_none(capsys, tmp_path, header, field, shown):
    """``8/None ... give procs_per_host as a number``; ``MaxNodes: -2`` wrote a workload of -2 hosts."""
    out = tmp_path / "w.json"
    err = refused(capsys, ["swf", str(_swf(tmp_path, header)), "--procs-per-host", "node", "--output", str(out)],
                  field, shown, "--procs-per-host")
    assert "None" not in err
    assert not out.exists()


def test_swf_procs_per_host_node_still_divides_a_whole_header(tmp_path):
    out = tmp_path / "w.json"
    assert main(["swf", str(_swf(tmp_path, "; MaxProcs: 8\n; MaxNodes: 2\n")), "--procs-per-host", "node",
                 "--output", str(out)]) == 0
    assert json.loads(out.read_text())["nb_res"] == 2


# --------------------------------------------------------------------------- 4. lightesp --walltime-factor
@pytest.mark.parametrize("value", ["0.5", "0", "-1", "nan", "inf"])
def test_lightesp_walltime_factor_below_1_names_the_option(capsys, tmp_path, value):
    """``walltime_factor must be at least 1, got 0.5``: not the option's name."""
    out = tmp_path / "esp.json"
    usage_error(capsys, ["lightesp", f"--walltime-factor={value}", "--output", str(out)],
                "argument --walltime-factor", "≥ 1")
    assert not out.exists()


# ------------------------------------------------------------------------------- 5. synth: tiny --days/--load
@pytest.mark.parametrize("option, value", [("--days", "1e-9"), ("--load", "1e-12")])
def test_synth_that_cannot_reach_its_load_says_so_with_the_smallest_value(caplog, tmp_path, option, value):
    """One job was written, an offered load of 2e6 (or 4e-4), without a word."""
    out = tmp_path / "w.json"
    with caplog.at_level("WARNING"):
        assert main(["synth", "--hosts", "16", "--seed", "1", option, value, "--output", str(out)]) == 0
    [warning] = [r.getMessage() for r in caplog.records if "offered load" in r.getMessage()]
    assert f"{option} at least " in warning, warning
    smallest = warning.split(f"{option} at least ")[1].split()[0]
    offered = json.loads(out.read_text())["meta"]["offered_load"]
    assert f"an offered load of {offered:.3g}" in warning, warning
    caplog.clear()
    with caplog.at_level("WARNING"):  # the value the warning gives is enough
        assert main(["synth", "--hosts", "16", "--seed", "1", option, smallest, "--output", str(out)]) == 0
    assert not [r for r in caplog.records if "offered load" in r.getMessage()], caplog.text


# ------------------------------------------------------------------------- 6. regress: a golden row cut short
@pytest.mark.parametrize("row, column, shown", [
    ("0,0,0,0,4,", "nb_computing", "empty"),
    (",0,0,0,4,0", "time", "empty"),
    ("0,0,x,0,4,0", "nb_switching_on", "'x' is not a number"),
])
def test_regress_refuses_a_golden_row_cut_short(capsys, tmp_path, row, column, shown):
    """``37852,0,0,0,6,`` was compared: ``nb_computing (empty) (golden) → 10 (run)``, exit 1."""
    run, golden = tmp_path / "run", tmp_path / "golden"
    for folder in (run, golden):
        folder.mkdir()
        for path in (REFERENCE / "dvfs-energy").glob("out_*.csv"):
            shutil.copy(path, folder / path.name)
    set_line(golden / "out_machine_states.csv", 2, row)
    refused(capsys, ["regress", str(run), str(golden)],
            f"{golden / 'out_machine_states.csv'}: line 2, column '{column}'", shown)


def test_regress_still_compares_hand_edited_numbers(capsys, tmp_path):
    run, golden = tmp_path / "run", tmp_path / "golden"
    for folder in (run, golden):
        folder.mkdir()
        for path in (REFERENCE / "dvfs-energy").glob("out_*.csv"):
            shutil.copy(path, folder / path.name)
    set_line(golden / "out_machine_states.csv", 2, "0,0,0,0,3,1")
    assert main(["regress", str(run), str(golden)]) == 1
    assert "nb_idle 3 (golden) → 4 (run)" in capsys.readouterr().out


# ------------------------------------------------------------------------------- 7. replay --keep-outputs
def test_replay_of_several_recordings_into_one_kept_folder_is_refused(capsys, tmp_path):
    """The second recording's CSVs replaced the first's in K, without a word."""
    keep = tmp_path / "kept"
    refused(capsys, ["replay", str(REFERENCE / "fcfs-compute"), str(REFERENCE / "dvfs-energy"),
                     "--keep-outputs", str(keep)], f"--keep-outputs {keep}", "would both write", "out_jobs.csv")
    assert not keep.exists()


def test_replay_help_says_what_a_folder_is(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    out = capsys.readouterr().out
    assert "FOLDER" in out and "recording of real Batsim" in out


# ----------------------------------------------------------------------------- 8. output into a closed pipe
def test_output_into_a_closed_pipe_ends_without_traceback():
    """``wattsched metrics R | head -1`` gave a BrokenPipeError traceback: the clause meant for it came after the
    one for OSError, which re-raised it."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-m", "wattsched", "metrics", str(REFERENCE / "dvfs-energy")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # before the command writes (it takes a while to start): its writes meet a closed pipe
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 1 and "Traceback" not in err, err
