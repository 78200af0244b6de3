"""Tests of wattsched.analysis.regress: golden comparison of Batsim output files, and golden updates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wattsched.base.errors import InputError
from wattsched.analysis.regress import Difference, compare_outputs, format_report, update_golden
from tests.bad_inputs_checks import usage_error
from wattsched.cli import main

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"


def copy_outputs(scenario: str, target: Path) -> Path:
    """Copy the five out_*.csv files of a recorded scenario into ``target``."""
    target.mkdir(parents=True)
    for path in (REFERENCE / scenario).glob("out_*.csv"):
        shutil.copy(path, target / path.name)
    return target


def edit_cell(path: Path, row_match: str, column: str, value: str) -> None:
    """Set ``column`` of the first data row whose line starts with ``row_match`` (``"*"``: first row)."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    for number, line in enumerate(lines[1:], start=1):
        if row_match == "*" or line.startswith(row_match):
            cells = line.split(",")
            cells[header.index(column)] = value
            lines[number] = ",".join(cells)
            break
    else:
        raise AssertionError(f"no row starting with {row_match!r}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture()
def golden_and_run(tmp_path: Path) -> tuple[Path, Path]:
    return copy_outputs("dvfs-energy", tmp_path / "golden"), copy_outputs("dvfs-energy", tmp_path / "run")


def test_identical_outputs_have_no_difference(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    assert compare_outputs(run, golden) == []
    assert compare_outputs(run / "out", golden / "out") == []
    assert format_report([]) == "no differences"


def test_wall_clock_schedule_keys_are_ignored(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    edit_cell(run / "out_schedule.csv", "*", "scheduling_time", "12.000000")
    edit_cell(run / "out_schedule.csv", "*", "simulation_time", "99.000000")
    assert compare_outputs(run, golden) == []
    edit_cell(run / "out_schedule.csv", "*", "makespan", "451.000000")
    [diff] = compare_outputs(run, golden)
    assert str(diff) == "out_schedule.csv: makespan 450.000000 (golden) → 451.000000 (run)"


def test_changed_starting_time_names_file_job_and_column(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    edit_cell(run / "out_jobs.csv", "3,", "starting_time", "1.000000")
    [diff] = compare_outputs(run, golden)
    assert diff == Difference("out_jobs.csv", "job 3", "0.000000", "1.000000", "starting_time")
    assert str(diff) == "out_jobs.csv: job 3: starting_time 0.000000 (golden) → 1.000000 (run)"


def test_energy_within_tolerance_is_equal_beyond_is_reported(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    energy = run / "out_consumed_energy.csv"
    lines = energy.read_text().splitlines()
    row = lines[-1].split(",")  # 450.000000,223530.288936,e,...
    within = float(row[1]) * (1 + 5e-7)
    edit_cell(energy, "450.000000", "energy", f"{within:.6f}")
    assert compare_outputs(run, golden, rel_tol_energy=1e-6) == []

    beyond = float(row[1]) * (1 + 1e-4)
    edit_cell(energy, "450.000000", "energy", f"{beyond:.6f}")
    [diff] = compare_outputs(run, golden, rel_tol_energy=1e-6)
    assert diff.file == "out_consumed_energy.csv" and diff.column == "energy"
    assert "time 450.000000" in diff.where
    assert str(diff) == (f"out_consumed_energy.csv: {diff.where}: energy {row[1]} (golden) → {beyond:.6f} (run)")


def test_job_energy_uses_the_tolerance_too(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    golden_line = next(line for line in (golden / "out_jobs.csv").read_text().splitlines() if line.startswith("1,"))
    golden_j = float(golden_line.split(",")[15])
    edit_cell(run / "out_jobs.csv", "1,", "consumed_energy", f"{golden_j + 0.1:.6f}")
    [diff] = compare_outputs(run, golden)
    assert (diff.where, diff.column) == ("job 1", "consumed_energy")
    assert compare_outputs(run, golden, rel_tol_energy=1e-3) == []


def test_deleted_row_is_one_readable_difference(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    states = run / "out_machine_states.csv"
    lines = states.read_text().splitlines()
    deleted = lines.pop(5)
    states.write_text("\n".join(lines) + "\n")
    [diff] = compare_outputs(run, golden)
    assert diff.file == "out_machine_states.csv"
    assert diff.where.startswith("row 5 (time ")
    assert (diff.golden, diff.actual) == (deleted, "(missing)")
    assert str(diff).endswith("(golden) → (missing) (run)")


def test_missing_and_extra_jobs(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    jobs = run / "out_jobs.csv"
    lines = jobs.read_text().splitlines()
    dropped = next(line for line in lines[1:] if line.startswith("4,"))
    extra = dropped.replace("4,", "99,", 1)
    jobs.write_text("\n".join([line if line != dropped else extra for line in lines]) + "\n")
    report = format_report(compare_outputs(run, golden))
    assert "out_jobs.csv: job 4: present (golden) → (missing) (run)" in report
    assert "out_jobs.csv: job 99: (missing) (golden) → present (run)" in report


def test_completion_order_and_missing_file(golden_and_run: tuple[Path, Path]) -> None:
    golden, run = golden_and_run
    jobs = run / "out_jobs.csv"
    lines = jobs.read_text().splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    jobs.write_text("\n".join(lines) + "\n")
    (run / "out_pstate_changes.csv").unlink()
    diffs = compare_outputs(run, golden)
    assert [d.where for d in diffs] == ["completion order, position 1", "file"]
    assert str(diffs[1]) == "out_pstate_changes.csv: file: present (golden) → (missing) (run)"


def test_report_is_limited() -> None:
    diffs = [Difference("out_jobs.csv", f"job {n}", "1", "2", "success") for n in range(25)]
    report = format_report(diffs, limit=20)
    lines = report.splitlines()
    assert lines[0] == "25 differences:"
    assert len(lines) == 22 and lines[-1].strip() == "... and 5 more"


def test_update_golden_copies_and_replaces(tmp_path: Path) -> None:
    run = copy_outputs("fcfs-compute", tmp_path / "run")
    golden = tmp_path / "golden"
    written = update_golden(run, golden)
    assert sorted(p.name for p in written) == sorted(p.name for p in run.glob("out_*.csv"))
    assert compare_outputs(run, golden) == []
    # a new run without pstate changes replaces the golden files and drops the stale one
    other = copy_outputs("simultaneous-events", tmp_path / "other")
    (other / "out_pstate_changes.csv").unlink()
    update_golden(other / "out", golden)
    assert compare_outputs(other, golden) == []
    assert not (golden / "out_pstate_changes.csv").exists()
    assert not [p for p in golden.iterdir() if p.name.startswith(".")]


def test_cli_exit_codes(golden_and_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    golden, run = golden_and_run
    assert main(["regress", str(run), str(golden)]) == 0
    edit_cell(run / "out_jobs.csv", "3,", "starting_time", "1.000000")
    edit_cell(run / "out_jobs.csv", "3,", "waiting_time", "1.000000")  # as Batsim writes it: start - submission
    edit_cell(run / "out_jobs.csv", "3,", "finish_time", "143.340426")  # and start + execution
    assert main(["regress", str(run), str(golden)]) == 1
    assert "job 3: starting_time" in capsys.readouterr().out
    assert main(["regress", str(run), str(golden), "--update"]) == 0
    assert main(["regress", str(run), str(golden)]) == 0


def test_folder_without_outputs(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        compare_outputs(tmp_path, REFERENCE / "fcfs-compute")


@pytest.mark.parametrize("side", ["golden", "run"])
def test_a_schedule_file_of_other_than_one_row_is_refused(golden_and_run: tuple[Path, Path], side: str) -> None:
    """Batsim writes one row in a _schedule.csv: a second one (two runs' files joined) was never compared, and a file
    without its row was compared as if every key were missing."""
    golden, run = golden_and_run
    path = (golden if side == "golden" else run) / "out_schedule.csv"
    header, row = path.read_text().splitlines()[:2]
    path.write_text(f"{header}\n{row}\n{row.replace('450.000000', '999.000000')}\n")
    with pytest.raises(InputError, match=r"out_schedule\.csv: line 3: 2 rows after the header; Batsim writes one row"):
        compare_outputs(golden, run)
    path.write_text(f"{header}\n")
    with pytest.raises(InputError, match=r"out_schedule\.csv: header: 0 rows after the header"):
        compare_outputs(golden, run)


def test_rel_tol_zero_compares_energies_to_the_printed_decimals(golden_and_run: tuple[Path, Path], capsys) -> None:
    """--rel-tol 0 was refused ('> 0'): an exact comparison (to the 1e-6 J Batsim prints) is a test a user may want."""
    golden, run = golden_and_run
    assert main(["regress", str(run), str(golden), "--rel-tol", "0"]) == 0
    energy = run / "out_consumed_energy.csv"
    row = energy.read_text().splitlines()[-1].split(",")  # 450.000000,223530.288936,e,...
    edit_cell(energy, "450.000000", "energy", f"{float(row[1]) * (1 + 5e-7):.6f}")  # within the default 1e-6
    assert main(["regress", str(run), str(golden)]) == 0
    assert main(["regress", str(run), str(golden), "--rel-tol", "0"]) == 1
    assert "energy" in capsys.readouterr().out
    for bad in ("-1e-9", "inf", "nan"):
        usage_error(capsys, ["regress", str(run), str(golden), f"--rel-tol={bad}"], "argument --rel-tol: expected")
