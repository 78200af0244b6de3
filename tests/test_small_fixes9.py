"""Small known defects, fixed (ninth list).

* The jobs-file checks found their offending line three ways; ``_first_bad`` now takes the message as a function
  of the offending row and is the one place that does (the messages are unchanged).
* A jobs file whose ``waiting_time`` is not ``starting_time - submission_time`` (Batsim writes that difference) was
  read, and its waiting-time metrics were those of no schedule.
* "1 jobs rejected", "the platform's 1 hosts", "1 host names for 2 hosts": counts of one read as plurals.
* ``t_weight`` was listed as ``float in [-inf, 1e+06]`` while no value <= 0 was taken; ``period_s`` as
  ``[0.001, inf]`` while below 1 s was refused; ``inf]`` for ends no infinite value reaches.
* ``plot -d/--out-dir`` against ``paraver -d/--output-dir``: both now take both.
* A UTF-16 platform was read, while SimGrid's lexer reads the file's bytes as UTF-8 and refuses it.
"""

from __future__ import annotations

import codecs
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REFERENCE, assert_input_error
from wattsched.analysis.outputs import _first_bad, load_outputs, read_jobs
from wattsched.base.errors import InputError, OptionError, counted
from wattsched.base.limits import limit_hint
from wattsched.cli import build_parser, main

FCFS = REFERENCE / "fcfs-compute"


def write_jobs(tmp_path: Path, row: int, **cells: str) -> Path:
    """The fcfs-compute recording's jobs file with the ``cells`` of data row ``row`` (0: line 2) set as text."""
    frame = pd.read_csv(FCFS / "out_jobs.csv", dtype=str, keep_default_na=False)
    for column, value in cells.items():
        frame.loc[row, column] = value
    path = tmp_path / "out_jobs.csv"
    frame.to_csv(path, index=False)
    return path


# ------------------------------------------------------------------------------------- 1. one line-finder
def test_first_bad_builds_the_message_from_the_offending_row(tmp_path):
    values = np.array([1.0, 2.0, 3.0])
    with pytest.raises(InputError) as error:
        _first_bad(tmp_path / "f.csv", values > 1.5, "x", lambda row: f"{values[row]:g} is too big")
    assert str(error.value).endswith("line 3, column 'x': 2 is too big")
    _first_bad(tmp_path / "f.csv", values > 5, "x", lambda row: "never called")
    with pytest.raises(InputError, match="line 2, column 'x': negative$"):
        _first_bad(tmp_path / "f.csv", values < 1.5, "x", "negative")


@pytest.mark.parametrize(("cells", "where", "message"), [
    ({"finish_time": "1e300"}, "line 5, column 'finish_time'",
     "1e+300 s is beyond the times a simulation reaches; " + limit_hint("time_s", "s")),
    ({"requested_number_of_resources": "2.5"}, "line 5, column 'requested_number_of_resources'",
     "2.5 is not a count of hosts (a whole number >= 0)"),
    ({"requested_number_of_resources": "1e12"}, "line 5, column 'requested_number_of_resources'",
     "more hosts than a job may ask for; " + limit_hint("hosts", "hosts")),
    ({"success": "yes"}, "line 5, column 'success'", "'yes' is not a number"),
    ({"final_state": ""}, "line 5, column 'final_state'", "empty"),
])
def test_the_jobs_file_messages_are_unchanged(tmp_path, cells, where, message):
    path = write_jobs(tmp_path, 3, **cells)
    with pytest.raises(InputError) as error:
        read_jobs(path)
    assert str(error.value) == f"{path}: {where}: {message}"


# ------------------------------------------------------------------------ 2. waiting = start - submission
def test_a_waiting_time_other_than_start_minus_submission_is_refused(tmp_path):
    """Row 3 of fcfs-compute: submitted at 0, started at 50, waited 50 s; a hand edit of its start alone."""
    path = write_jobs(tmp_path, 3, starting_time="60.000000", finish_time="260.000000")
    assert_input_error(read_jobs, path, "line 5, column 'waiting_time'",
                       "50.000000 s, while starting_time - submission_time is 60.000000 s")
    path = write_jobs(tmp_path, 3, waiting_time="49.000000")
    assert_input_error(read_jobs, path, "line 5, column 'waiting_time'",
                       "49.000000 s, while starting_time - submission_time is 50.000000 s")


def test_printing_rounding_is_tolerated_and_rejected_jobs_are_left_out(tmp_path):
    # three %f roundings (5e-7 s each) and a double's precision near the time bound
    path = write_jobs(tmp_path, 3, submission_time="0.0000004", starting_time="49.9999996", waiting_time="50.000000")
    assert read_jobs(path).loc[3, "waiting_time"] == 50.0
    path = write_jobs(tmp_path, 3, submission_time="9999999000.000000", starting_time="9999999050.000002",
                      finish_time="9999999250.000002", waiting_time="50.000000")
    read_jobs(path)
    frame = read_jobs(FCFS / "out_jobs.csv")
    assert (frame["final_state"] == "REJECTED").any()  # its empty times are no disagreement


@pytest.mark.parametrize("scenario", sorted(p.name for p in REFERENCE.iterdir() if p.is_dir()))
def test_every_recording_of_real_batsim_still_loads(scenario):
    load_outputs(REFERENCE / scenario)


# -------------------------------------------------------------------------------------- 3. one, not ones
def test_counted():
    assert [counted(n, "job") for n in (0, 1, 2)] == ["0 jobs", "1 job", "2 jobs"]
    assert counted(1.0, "job", "g") == "1 job" and counted(2000, "host", ",") == "2,000 hosts"


def test_one_rejected_job_on_a_one_host_platform_reads_in_the_singular(tmp_path, taurus_platform, capsys):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [
        {"id": 1, "subtime": 0, "res": 1, "profile": "p"}, {"id": 2, "subtime": 0, "res": 2, "profile": "p"}],
        "profiles": {"p": {"type": "delay", "delay": 10}}}))
    assert main(["run", str(taurus_platform(1)), str(workload), "-e", str(tmp_path / "o" / "out"), "-q",
                 "--json"]) == 0
    err = capsys.readouterr().err
    assert ("warning: 1 job rejected by the scheduler, 1 of them wider than the platform's 1 host "
            "(Batsim submits") in err


def test_other_counts_of_one(tmp_path):
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.analysis.node_states import node_states
    from wattsched.analysis.paraver import paraver_text

    with pytest.raises(OptionError, match="^1 host name for 4 hosts$"):
        paraver_text(node_states(load_outputs(FCFS)), ["a"])
    path = tmp_path / "out_jobs.csv"
    lines = (FCFS / "out_jobs.csv").read_text().splitlines()
    path.write_text("\n".join([*lines[:3], "7", *lines[3:]]) + "\n")
    assert_input_error(read_jobs, path, "line 4: 1 field, the header has 17")
    folder = tmp_path / "run"
    shutil.copytree(FCFS, folder)
    workload = json.loads((FCFS / "workload.json").read_text())
    workload["jobs"] = [job for job in workload["jobs"] if job["id"] != 2]
    (folder / "workload.json").write_text(json.dumps(workload))
    with pytest.raises(InputError, match=r"1 of the run's 10 jobs is not in this workload \(first: job '2'\)"):
        compute_metrics(folder, workload=folder / "workload.json")


def test_counts_of_one_in_generated_workloads():
    from wattsched.workloads.eamc import eamc_workload

    with pytest.raises(OptionError, match=r"cannot be reached with these 1 job \(run times"):
        eamc_workload(seed=1, nb_jobs=1, max_res=1, mean_res=1.0, mean_runtime_s=1e9)


# ------------------------------------------------------------------------------ 4. the ranges as accepted
def test_option_ranges_show_what_is_accepted(capsys):
    from wattsched.schedulers.budget.window import BUDGET_OPTIONS
    from wattsched.schedulers.eamc import T_WEIGHT
    from wattsched.schedulers.esc import EnergySavingCluster
    from wattsched.schedulers.presets import build

    assert T_WEIGHT.describe() == "t_weight (float in (0, 1e+06], default 1.0)"
    with pytest.raises(OptionError, match="'t_weight' of eamc-reorder is out of range, got 0.0"):
        build("eamc-reorder", {"t_weight": 0.0})
    build("eamc-reorder", {"t_weight": 1e-9})
    described = {o.name: o.describe() for o in (*EnergySavingCluster.options, *BUDGET_OPTIONS)}
    assert described["period_s"] == "period_s (float in [1, inf), default 60.0)"  # min_period_s
    assert described["min_on"] == "min_on (int in [0, inf), default 0)"
    assert described["window_end_s"] == "window_end_s (float in [0, 1e+10], default unset)"  # time_s
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    assert "t_weight (float in (0, 1e+06]" in out and "[-inf" not in out and "inf]" not in out


def test_an_exclusive_minimum_refuses_the_minimum_itself():
    from wattsched.schedulers.options import Option

    option = Option("share", float, 1.0, min=0.0, min_exclusive=True)
    assert option.check(1e-300, "toy", "") == 1e-300
    with pytest.raises(OptionError, match="out of range, got 0"):
        option.check(0, "toy", "")
    assert option.describe() == "share (float in (0, inf), default 1.0)"


# ----------------------------------------------------------------------------------- 5. -d, two spellings
@pytest.mark.parametrize("command", ["plot", "paraver"])
@pytest.mark.parametrize("spelling", ["-d", "--output-dir", "--out-dir"])
def test_plot_and_paraver_take_both_spellings(command, spelling):
    assert build_parser().parse_args([command, "results/out", spelling, "figs"]).output_dir == "figs"
    assert build_parser().parse_args([command, "results/out"]).output_dir is None


@pytest.mark.parametrize("command", ["plot", "paraver"])
def test_the_help_shows_one_canonical_spelling(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "-d DIR, --output-dir DIR" in out and "--out-dir" not in out


def test_paraver_writes_where_out_dir_says(tmp_path):
    assert main(["paraver", str(FCFS / "out"), "--out-dir", str(tmp_path)]) == 0
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".pcf", ".prv", ".row"]


# ------------------------------------------------------------------------------- 6. platforms are UTF-8
@pytest.mark.parametrize(("codec", "name"), [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-32", "UTF-32")])
def test_a_wide_platform_is_refused_naming_the_file(tmp_path, capsys, codec, name):
    platform = tmp_path / "p.xml"
    platform.write_bytes((FCFS / "platform.xml").read_text().encode(codec))
    assert main(["run", str(platform), str(FCFS / "workload.json"), "-e", str(tmp_path / "o" / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(platform) in err and f"not UTF-8 text (it looks like {name})" in err
    assert not (tmp_path / "o").exists()


def test_a_platform_with_a_utf8_bom_is_read_and_latin1_is_refused(tmp_path):
    from wattsched.simulator.platform import load_platform

    text = (FCFS / "platform.xml").read_text()
    platform = tmp_path / "p.xml"
    platform.write_bytes(codecs.BOM_UTF8 + text.encode())
    assert load_platform(platform).nb_hosts == load_platform(FCFS / "platform.xml").nb_hosts
    platform.write_bytes(text.replace("<platform", "<!-- caf\xe9 --><platform", 1).encode("latin-1"))
    assert_input_error(load_platform, platform, "not UTF-8 text (invalid continuation byte at byte")
