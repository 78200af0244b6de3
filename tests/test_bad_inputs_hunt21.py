"""Bad inputs hunt 21: line numbers of ``regress`` errors after a blank line, and ``compose`` options.

* ``regress`` dropped blank rows before numbering the others, so every line named after a blank line (or after a
  quoted line break) was one too small: a row cut short on line 4 was reported on line 3; a blank first line made
  an empty header, and every row then "6 fields for 0 columns".
* ``api.sweep`` refused a grid dict's ``Path`` files (``platforms[0]: a file path, or a generator mapping``) and its
  tuples (``must be a non-empty list``), which ``simulate`` takes (its ``window`` is a tuple).
* ``compose``'s options (a piece's option when the piece is not chosen, a piece of another slot, case or spaces in
  a piece name) and the API's other arguments (bools, numpy numbers, bytes, Paths) were already refused or taken
  as the README says: nothing to fix there.

``regress`` compares copies of the ``dvfs-energy`` recording of real Batsim; sweeps are of one job on two Taurus
hosts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused
from wattsched import api
from wattsched.cli import main

JOB = {"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}

# ------------------------------------------------------------- 1. regress: the file's line numbers, blank lines too


def _run_and_golden(tmp_path: Path) -> tuple[Path, Path]:
    run, golden = tmp_path / "run", tmp_path / "golden"
    for folder in (run, golden):
        folder.mkdir()
        for path in (REFERENCE / "dvfs-energy").glob("out_*.csv"):
            shutil.copy(path, folder / path.name)
    return run, golden


def _edit(path: Path, blank_before: int, number: int, text: str | None) -> None:
    """A blank line inserted as line ``blank_before``, then line ``number`` (of the new file) set to ``text``."""
    lines = path.read_text().splitlines()
    lines.insert(blank_before - 1, "")
    if text is not None:
        lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("number, row, shown", [
    (4, "0,0,0,0,4,", "line 4, column 'nb_computing'"),
    (5, "0,0,0,0,4", "line 5: 5 fields for 6 columns"),
])
def test_regress_names_the_real_line_after_a_blank_line(capsys, tmp_path, number, row, shown):
    """A blank line 3 made a row cut short on line 4 show as ``line 3``."""
    run, golden = _run_and_golden(tmp_path)
    _edit(golden / "out_machine_states.csv", 3, number, row)
    refused(capsys, ["regress", str(run), str(golden)], f"{golden / 'out_machine_states.csv'}: {shown}")


def test_regress_names_both_lines_of_a_job_twice_after_a_blank_line(capsys, tmp_path):
    run, golden = _run_and_golden(tmp_path)
    jobs = golden / "out_jobs.csv"
    lines = jobs.read_text().splitlines()
    _edit(jobs, 3, 4, lines[1])  # line 2's job again on line 4, a blank line 3 between
    refused(capsys, ["regress", str(run), str(golden)], f"{jobs}: line 4, column 'job_id'", "first on line 2")


def test_regress_counts_a_quoted_line_break_as_a_line(capsys, tmp_path):
    run, golden = _run_and_golden(tmp_path)
    states = golden / "out_machine_states.csv"
    lines = states.read_text().splitlines()
    lines[1] = '0,0,0,0,4,"0\n"'  # one row over lines 2 and 3 (a text cell, compared)
    lines[3] = "0,0,0,0,2,"
    states.write_text("\n".join(lines) + "\n")
    refused(capsys, ["regress", str(run), str(golden)], f"{states}: line 5, column 'nb_computing'")


def test_regress_refuses_a_blank_line_where_the_header_goes(capsys, tmp_path):
    """A blank first line made an empty header: every row then had ``6 fields for 0 columns``."""
    run, golden = _run_and_golden(tmp_path)
    _edit(golden / "out_machine_states.csv", 1, 1, None)
    refused(capsys, ["regress", str(run), str(golden)], f"{golden / 'out_machine_states.csv'}: line 1", "header")


def test_regress_still_reads_blank_lines_as_no_rows(capsys, tmp_path):
    run, golden = _run_and_golden(tmp_path)
    _edit(golden / "out_machine_states.csv", 3, 3, None)
    assert main(["regress", str(run), str(golden)]) == 0, capsys.readouterr()


# ------------------------------------------------- 2. api.sweep: a grid dict's Path files and tuples, as simulate's
def _grid(tmp_path: Path, **fields) -> dict:
    platform, workload = tmp_path / "two.xml", tmp_path / "w.json"
    platform.write_text(api.taurus_platform(2))
    workload.write_text(json.dumps({"nb_res": 2, "jobs": [JOB], "profiles": {"p": {"type": "delay", "delay": 5}}}))
    return {"platforms": [str(platform)], "workloads": [str(workload)], "schedulers": ["fcfs"], **fields}


@pytest.mark.parametrize("make", [
    lambda g: {**g, "platforms": [Path(g["platforms"][0])], "workloads": [Path(g["workloads"][0])]},
    lambda g: {**g, "platforms": tuple(g["platforms"]), "schedulers": ("fcfs",), "window": (0, 10)},
], ids=["Path files", "tuples"])
def test_api_sweep_takes_a_grid_dicts_paths_and_tuples(tmp_path, make):
    """``platforms: [Path(...)]`` was refused as ``platforms[0]: a file path, or a generator mapping``, and a tuple
    (the type of simulate()'s window) as ``must be a non-empty list``."""
    grid = _grid(tmp_path)
    given = make(grid)
    frame = api.sweep(given, tmp_path / "out", progress=False)
    assert list(frame["status"]) == ["done"]
    plain = api.sweep(grid, tmp_path / "out", progress=False)  # the same run: its key and platform the same
    assert list(plain["status"]) == ["skipped"]


@pytest.mark.parametrize("entry, shown", [(b"two.xml", "b'two.xml'"), (3, "3")])
def test_api_sweep_still_refuses_a_file_entry_of_another_type_naming_it(tmp_path, entry, shown):
    grid = _grid(tmp_path)
    with pytest.raises(api.InputError) as error:
        api.sweep({**grid, "platforms": [entry]}, tmp_path / "out", progress=False)
    assert "platforms[0]" in str(error.value) and shown in str(error.value)
    assert not (tmp_path / "out" / "runs").exists()
