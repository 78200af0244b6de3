"""Bad inputs hunt 16: less-travelled commands and options that still gave a traceback, a hang, a silent accept or a
destroyed input.

* ``replay`` of a recording whose ``messages.jsonl`` or an ``out_*.csv`` is a folder gave a traceback
  (IsADirectoryError), a FIFO blocked it for ever, and a recorded CSV that is not UTF-8 gave a traceback
  (UnicodeDecodeError) after the simulation; a ``batsim-args.txt`` that is a folder or a FIFO was "missing", one
  that is not UTF-8 was reported with Python's codec message.
* ``metrics``, ``node-stats``, ``paraver``, ``plot`` and ``regress`` skipped an ``out_consumed_energy.csv`` (or any
  other optional file of a run) that is a folder or a FIFO as if it were absent: the energy metrics went unsaid.
* ``metrics --max-power 1e-320 --json`` printed ``"window_energy_relative": Infinity`` (no JSON), and ``1e308`` a
  relative energy of 0 (its energy over the window overflowed); so did ``api.simulate(max_power_w=...)``.
* ``swf t.swf --output t.swf`` replaced the trace by its workload and ``beta w.json --output w.json`` the workload
  by its betas; ``run -o @R/out_jobs.csv -e R/out`` read its options, then wrote the jobs file over them.
* ``run -q --progress`` drew the progress (``-q`` silently ignored); ``traces fetch --sha256 NAME`` ignored
  ``--sha256`` (it applies to the list), while the list refuses the fetch's ``--mirror`` and ``-q``.
* ``Result.plot_power(budget_power_w=1e308)`` of the Python API drew its axis with a numpy overflow warning, where
  ``plot --budget-power 1e308`` is refused (hunt 8b).

Every refusal happens before any work and writes nothing; the result-folder and replay checks read copies of real
Batsim's recordings (no simulation but the one replayed), the API checks simulate one job on two hosts.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import warnings
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, recording_outputs, refused, usage_error
from wattsched import api
from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}
KINDS = ["jobs", "schedule", "consumed_energy", "machine_states", "pstate_changes"]


def _not_a_file(path: Path, kind: str) -> None:
    """``path`` (removed first) made a folder, or a FIFO that a thread opens for writing after 5 s: a reader that
    regressed to opening it gets an end of file then, not a hang of the test run."""
    path.unlink(missing_ok=True)
    if kind == "folder":
        path.mkdir()
        return
    os.mkfifo(path)

    def unblock() -> None:
        time.sleep(5)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader waiting (the fix): nothing to unblock
            pass

    threading.Thread(target=unblock, daemon=True).start()


def _recording(tmp_path: Path, name: str = "fcfs-compute") -> Path:
    copy = tmp_path / name
    shutil.copytree(REFERENCE / name, copy)
    return copy


# ------------------------------------------------------------------------------------------------ 1. replay
@pytest.mark.parametrize("kind", ["folder", "fifo"])
@pytest.mark.parametrize("name", ["messages.jsonl", "out_jobs.csv", "out_consumed_energy.csv"])
def test_replay_refuses_a_recorded_file_that_is_no_regular_file(capsys, tmp_path, kind, name):
    """A folder gave a traceback (IsADirectoryError: ``messages.jsonl`` when read, an ``out_*.csv`` after the
    simulation); a FIFO blocked the replay for ever."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    recording = _recording(tmp_path)
    _not_a_file(recording / name, kind)
    why = "it is a folder, not a file" if kind == "folder" else "not a regular file"
    refused(capsys, ["replay", str(recording), "--keep-outputs", str(tmp_path / "kept")], f"{name}: cannot be read",
            why)
    assert not (tmp_path / "kept").exists()


def test_replay_refuses_a_recorded_csv_that_is_not_utf8_before_the_run(capsys, tmp_path):
    """It gave a traceback (UnicodeDecodeError) after the simulation, our CSVs written into --keep-outputs."""
    recording = _recording(tmp_path)
    (recording / "out_schedule.csv").write_bytes(b"nb_jobs,\xff\xfe\n1,2\n")
    refused(capsys, ["replay", str(recording), "--keep-outputs", str(tmp_path / "kept")], "out_schedule.csv",
            "not UTF-8 text")
    assert not (tmp_path / "kept").exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_replay_says_what_a_batsim_args_file_that_is_no_file_is(capsys, tmp_path, kind):
    """It said "batsim-args.txt: missing from the recording folder"."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    recording = _recording(tmp_path)
    _not_a_file(recording / "batsim-args.txt", kind)
    refused(capsys, ["replay", str(recording)], "batsim-args.txt: cannot be read:",
            "folder" if kind == "folder" else "not a regular file")


def test_replay_names_a_batsim_args_file_that_is_not_utf8(capsys, tmp_path):
    """It said "cannot be read: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"."""
    recording = _recording(tmp_path)
    (recording / "batsim-args.txt").write_bytes(b"\xff-p platform.xml")
    err = refused(capsys, ["replay", str(recording)], "batsim-args.txt: not UTF-8 text")
    assert "codec" not in err


def test_a_recording_is_still_replayed(capsys, tmp_path):
    recording = _recording(tmp_path)
    assert main(["replay", str(recording)]) == 0
    assert "identical" in capsys.readouterr().out


# ----------------------------------------------------------------------------------- 2. result folders
@pytest.mark.parametrize("command", ["metrics", "node-stats", "paraver", "plot"])
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_an_output_file_that_is_no_regular_file_is_refused_not_skipped(capsys, tmp_path, command, kind):
    """``out_consumed_energy.csv`` as a folder or a FIFO was skipped as absent: ``metrics`` printed no energy."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    _not_a_file(outputs / "out_consumed_energy.csv", kind)
    written = tmp_path / "written"
    refused(capsys, [command, str(outputs / "out"), *(["-d", str(written)] if command in ("paraver", "plot") else [])],
            "out_consumed_energy.csv: cannot be read")
    assert not written.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_output_file_is_checked(tmp_path, kind):
    from wattsched.analysis.outputs import find_outputs

    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    _not_a_file(outputs / f"out_{kind}.csv", "folder")
    with pytest.raises(InputError, match=f"out_{kind}.csv: cannot be read \\(it is a folder, not a file\\)"):
        find_outputs(outputs)


def test_regress_refuses_a_golden_file_that_is_a_folder(capsys, tmp_path):
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    golden = recording_outputs(tmp_path / "golden", "fcfs-compute")
    _not_a_file(golden / "out_pstate_changes.csv", "folder")
    refused(capsys, ["regress", str(run), str(golden)], "out_pstate_changes.csv: cannot be read")


def test_a_run_without_its_optional_files_is_still_read(tmp_path):
    from wattsched.analysis.outputs import find_outputs

    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute", without=("out_consumed_energy.csv",))
    assert sorted(find_outputs(outputs)) == ["jobs", "machine_states", "pstate_changes", "schedule"]


# ------------------------------------------------------------------------------ 3. relative window energy
@pytest.mark.parametrize("power", ["1e-320", "1e308"])
def test_metrics_refuses_an_all_computing_power_whose_relative_energy_overflows(capsys, power):
    """``--max-power 1e-320 --json`` printed ``"window_energy_relative": Infinity``; ``1e308`` printed 0."""
    refused(capsys, ["metrics", str(REFERENCE / "cluster-platform"), "--max-power", power, "--json"],
            "max_power_w (--max-power)", "beyond a double")
    assert capsys.readouterr().out == ""


def test_metrics_still_gives_a_relative_energy(capsys):
    assert main(["metrics", str(REFERENCE / "cluster-platform"), "--max-power", "3051.8", "--json"]) == 0
    assert 0 < json.loads(capsys.readouterr().out)["window_energy_relative"] < 1


def test_simulate_refuses_it_too(tmp_path):
    """``api.simulate(..., max_power_w=1e-320).metrics`` held an infinite ``window_energy_relative``."""
    result = api.simulate(api.taurus_platform(2), ONE_JOB, "fcfs", max_power_w=1e-320)
    with pytest.raises(OptionError, match=r"max_power_w \(--max-power\) 9\.99989e-321 W: .* beyond a double"):
        _ = result.metrics


# ------------------------------------------------------------------------------------ 4. inputs overwritten
def test_swf_refuses_to_write_over_its_trace(capsys, tmp_path):
    """``swf t.swf --output t.swf`` replaced the trace by the JSON workload (through a link too)."""
    trace = tmp_path / "t.swf"
    text = "; MaxProcs: 8\n1 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n"
    trace.write_text(text)
    (tmp_path / "link.swf").symlink_to(trace)
    for output in (trace, tmp_path / "link.swf"):
        refused(capsys, ["swf", str(trace), "--output", str(output)], f"--output {output}",
                f"is the input SWF trace {trace}", "give another file")
    assert trace.read_text() == text


def test_beta_refuses_to_write_over_its_workload(capsys, tmp_path):
    """``beta w.json --output w.json`` replaced the workload by the one with betas."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(ONE_JOB))
    refused(capsys, ["beta", str(workload), "--seed", "1", "--output", str(workload)],
            f"is the input workload {workload}")
    assert json.loads(workload.read_text()) == ONE_JOB


def test_the_converters_still_write_another_file(capsys, tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(ONE_JOB))
    assert main(["beta", str(workload), "--seed", "1", "--output", str(tmp_path / "b.json")]) == 0
    assert "beta" in json.loads((tmp_path / "b.json").read_text())["jobs"][0]


def test_run_refuses_outputs_over_its_options_file(capsys, tmp_path):
    """``run -o @R/out_jobs.csv -e R/out`` read the options, then wrote the jobs file over them."""
    folder = tmp_path / "R"
    folder.mkdir()
    options = folder / "out_jobs.csv"
    options.write_text("{}")
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(ONE_JOB))
    refused(capsys, ["run", PLATFORM, str(workload), "-q", "-o", f"@{options}", "-e", str(folder / "out")],
            "out_jobs.csv is the options file", "give another prefix")
    assert options.read_text() == "{}" and sorted(p.name for p in folder.iterdir()) == ["out_jobs.csv"]


# ------------------------------------------------------------------------------- 5. options that were ignored
def test_run_refuses_quiet_with_progress(capsys, tmp_path):
    """``-q --progress`` drew the progress, ``-q`` silently ignored."""
    usage_error(capsys, ["run", PLATFORM, "w.json", "-q", "--progress", "-e", str(tmp_path / "o" / "out")],
                "argument --progress: not allowed with argument -q/--quiet")
    assert not (tmp_path / "o").exists()


def test_traces_fetch_refuses_sha256(capsys, monkeypatch):
    """``traces fetch --sha256 NAME`` fetched and printed no sha256: the option belongs to the list."""
    monkeypatch.setattr("wattsched.workloads.traces.fetch_trace", lambda *a, **k: pytest.fail("fetched"))
    refused(capsys, ["traces", "fetch", "--sha256", "sdsc-blue"], "--sha256 applies to the list only")


# --------------------------------------------------------------------------------------- 6. API plot bound
def test_result_plot_power_refuses_a_budget_beyond_any_platform():
    """``plot_power(budget_power_w=1e308)`` drew the figure with a numpy overflow warning (the CLI refused it)."""
    result = api.simulate(api.taurus_platform(2), ONE_JOB, "fcfs")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OptionError, match=r"^budget_power_w 1e\+308: its energy over 1e\+10 s"):
            result.plot_power(budget_power_w=1e308)
        assert result.plot_power(budget_power_w=1e298) is not None
