"""Bad inputs hunt 29: the commands that read Batsim output folders (``metrics``, ``plot``, ``paraver``,
``node-stats``, ``regress``, ``replay``) on corrupted, mixed and re-saved outputs.

* before: a ``_consumed_energy.csv`` whose ``energy`` is negative gave ``metrics`` a ``total_energy_j`` of -816 MJ;
  a ``wattmin`` (the power after the last row, which a window past it reads) negative gave a window energy of
  -1.5 TJ, ``NA`` or empty an energy of 0 W after the last row, ``inf`` ``"window_energy_j": Infinity`` (no JSON),
  ``1e308`` the same with numpy's overflow warning; an ``event_type`` other than ``s``, ``e`` or ``p`` was taken
  (``node-stats`` times the pstate changes with the ``p`` rows). Now one line naming the file, line and column.
* before: ``metrics`` took a job's ``allocated_resources`` that is no host set (``abc``) or names hosts beyond the
  run's (``20-23`` on 4 hosts), which ``node-stats``, ``paraver`` and ``plot`` refuse. Now every command refuses
  it, as the pstate changes' hosts (hunt 14).
* before: the ``_consumed_energy.csv`` of another run beside a run's jobs (two schedulers on one workload, a file
  copied into the wrong folder) gave the other run's energy in ``metrics``, ``node-stats`` (also as its
  ``--baseline``), ``paraver`` and ``plot`` without a word. Batsim writes an ``s`` row at each job start, at its
  ``starting_time``: a job start without one is now refused (``the files of two runs?``).
* before: a ``_pstate_changes.csv`` of another run without a switch-off (only ``0,0-3,0``) beside machine states
  whose hosts sleep was taken by ``metrics`` and ``plot``. A host starts in a computation pstate: now refused.
* before: a jobs file whose ``job_id`` is empty, or holds a line break (a quoted field), was read by every command;
  ``paraver`` wrote the id's line break into its ``.pcf`` (a broken value list). Batsim writes job ids unquoted
  and a workload's id is never empty: now refused, nothing written.
* before: ``replay`` of a recording whose ``out_jobs.csv`` was re-saved with a UTF-8 BOM exited 1 with ``header
  [['job_id', ...]] differs from recorded [['\\ufeffjob_id', ...]]``, as ``regress`` did before hunt 23. Now read
  as ``regress`` reads it.

Every check reads copies of real Batsim's recordings (no simulation).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, analysis, recording_outputs, refused, set_field
from wattsched.cli import main

COMMANDS = ("metrics", "node-stats", "paraver", "plot")


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    """The outputs of the ``shutdown-boot`` recording (4 hosts, switched off and on)."""
    return recording_outputs(tmp_path / "o", "shutdown-boot")


def _refused_everywhere(capsys: pytest.CaptureFixture[str], folder: Path, written: Path, *needles: str) -> None:
    for command in COMMANDS:
        refused(capsys, analysis(command, folder, written), *needles)
        assert not written.exists(), command


# ------------------------------------------------------------------------------- 1. the energy file's values
@pytest.mark.parametrize("line, column, value, needles", [
    (2, "energy", "-5.000000", ["line 2, column 'energy'", "negative"]),
    (25, "wattmin", "-380.000000", ["line 25, column 'wattmin'", "negative"]),
    (25, "wattmin", "NA", ["line 25, column 'wattmin'", "not a finite number"]),
    (25, "wattmin", "", ["line 25, column 'wattmin'", "not a finite number"]),
    (25, "wattmin", "inf", ["line 25, column 'wattmin'", "not a finite number"]),
    (25, "wattmin", "1e308", ["line 25, column 'wattmin'", "beyond the largest number a double holds"]),
    (3, "event_type", "x", ["line 3, column 'event_type'", "'x' is not an event Batsim writes"]),
])
def test_an_energy_file_of_values_batsim_never_writes_is_refused(capsys, tmp_path, outputs, line, column, value,
                                                                   needles):
    energy = outputs / "out_consumed_energy.csv"
    assert len(energy.read_text().splitlines()) == 25
    set_field(energy, line, column, value)
    _refused_everywhere(capsys, outputs, tmp_path / "w", str(energy), *needles)


def test_metrics_window_past_the_last_row_reads_a_valid_wattmin(capsys, outputs):
    """The value checked above: a window past the last row grows at its wattmin."""
    assert main(["metrics", str(outputs / "out"), "--window", "0,1000", "--json"]) == 0
    assert '"window_energy_j": ' in capsys.readouterr().out


# -------------------------------------------------------------------------------------- 2. allocations
@pytest.mark.parametrize("value, needle", [("abc", "'abc' is not a host set"), ("2-5", "host 5 beyond 0-3")])
def test_metrics_refuses_an_allocation_the_other_commands_refuse(capsys, tmp_path, outputs, value, needle):
    jobs = outputs / "out_jobs.csv"
    set_field(jobs, 2, "allocated_resources", value)
    _refused_everywhere(capsys, outputs, tmp_path / "w", str(jobs), ".allocated_resources", needle)


# ------------------------------------------------------------------------------- 3. files of two runs
def test_the_energy_file_of_another_run_is_refused(capsys, tmp_path):
    folder = recording_outputs(tmp_path / "o", "fcfs-compute")  # 4 hosts, as dvfs-energy
    shutil.copy(REFERENCE / "dvfs-energy" / "out_consumed_energy.csv", folder)
    _refused_everywhere(capsys, folder, tmp_path / "w", str(folder / "out_consumed_energy.csv"),
                        "event_type: 3 's' rows at 0.000000 s, for 2 jobs (first: job '2') of out_jobs.csv",
                        "the files of two runs?")


def test_a_baseline_with_the_energy_file_of_another_run_is_refused(capsys, tmp_path):
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    base = recording_outputs(tmp_path / "base", "fcfs-compute")
    set_field(base / "out_consumed_energy.csv", 3, "time", "1.000000")  # the start of job 2 at 0 s moved
    refused(capsys, ["node-stats", str(run / "out"), "--baseline", str(base / "out")],
            str(base / "out_consumed_energy.csv"), "1 's' row at 0.000000 s, for 2 jobs (first: job '2')")


def test_pstate_changes_without_a_switch_off_beside_sleeping_hosts_are_refused(capsys, tmp_path, outputs):
    shutil.copy(REFERENCE / "fcfs-compute" / "out_pstate_changes.csv", outputs)  # 0,0-3,0 only
    _refused_everywhere(capsys, outputs, tmp_path / "w", str(outputs / "out_pstate_changes.csv"),
                        "no switch-off request (-2)", "out_machine_states.csv has hosts asleep or switching (line 2)")


def test_the_recordings_files_are_all_of_one_run():
    """The checks above take every recording of real Batsim (rejected jobs, DVFS, dynamic jobs, a job of no work)."""
    from wattsched.analysis.node_states import node_states
    from wattsched.analysis.outputs import check_energy_job_rows, load_outputs

    for recording in sorted(p.name for p in REFERENCE.iterdir() if (p / "out_jobs.csv").is_file()):
        outputs = load_outputs(REFERENCE / recording / "out")
        check_energy_job_rows(outputs)
        node_states(outputs)


# ----------------------------------------------------------------------------------------- 4. job ids
@pytest.mark.parametrize("value, needle", [("", "column 'job_id': empty"), ("a\nb", "'a\\nb': Batsim writes job ids "
                                                                                    "unquoted")])
def test_a_job_id_batsim_cannot_write_is_refused(capsys, tmp_path, outputs, value, needle):
    jobs = outputs / "out_jobs.csv"
    set_field(jobs, 2, "job_id", value)
    _refused_everywhere(capsys, outputs, tmp_path / "w", str(jobs), needle)


# ----------------------------------------------------------------------------------- 5. replay and a BOM
def test_replay_reads_a_recorded_csv_saved_with_a_bom(capsys, tmp_path):
    folder = tmp_path / "rec"
    shutil.copytree(REFERENCE / "shutdown-boot", folder)
    jobs = folder / "out_jobs.csv"
    jobs.write_bytes(b"\xef\xbb\xbf" + jobs.read_bytes())
    assert main(["replay", str(folder)]) == 0
    assert "identical" in capsys.readouterr().out
