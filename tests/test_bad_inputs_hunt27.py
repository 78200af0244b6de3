"""Bad inputs hunt 27: pybatsim scheduler classes through the API, outputs written where other runs' are, tiny
machines and degenerate jobs through every preset, and the generators' outputs fed to each other.

* before: a pybatsim scheduler class (or file) that does not define ``onJobSubmission`` (``class
  Nothing(BatsimScheduler): pass`` to ``api.simulate``, or ``-s empty.py``) was stopped by pybatsim's default,
  reported as ``scheduler __main__:Nothing raised NotImplementedError (at .../pybatsim/batsim/batsim.py:721)``,
  naming no callback. Now ``scheduler ... does not define onJobSubmission (pybatsim's
  BatsimScheduler.onJobSubmission raises NotImplementedError)``.
* before: a sweep's run whose outputs were replaced since by another simulation (``api.simulate(..., out=PREFIX)``
  or ``wattsched run -e PREFIX`` into ``out/runs/<key>/``, with another workload) was skipped when the sweep ran
  again: its stamp ``<prefix>_run.json`` still named the sweep's inputs, so the sweep's table gave the other
  run's metrics (makespan 300 s for a workload of 100 s). Now the stamp holds the sha256 of the outputs it was
  written with, and a run whose outputs are not those is simulated again.
* before: a runs file whose run's prefix ``a`` has its workload (or platform) at ``a_run.json`` ran, and its stamp
  overwrote the workload file. Now refused before any run (``.../a_run.json is its workload file ...: the run would
  overwrite it``); a ``<prefix>_run.json`` that is a folder failed the run after its simulation had written its
  outputs, now before it simulates.
* before: ``node-stats`` and ``paraver`` refused the outputs of a valid run: ``energy-bud`` with ``shutdown`` on one
  host and a job of no work (``parallel_homogeneous`` of cpu 0) switches the host off when the job completes, at
  its start, while ``_jobs.csv`` gives it Batsim's 1e-5 s of execution time (behaviour 17): ``r_jobs.csv: job 1:
  runs on host 0 during [1351.52, 1351.52] while the host is switching off from 1351.52 to 1357.62``. Now taken
  (the host is idle when it starts switching off).
* before: an EAMC preset (placement ``partitions``) on a workload whose job with an ``app`` runs a ``composed``
  profile (``wattsched beta`` on an ``eamc-workload`` output) stopped the run at the job's start, naming no file:
  ``job w0!1: profile 'b1' gives no run time; EAMC needs a 'delay' or 'parallel_homogeneous' profile ...``. Now
  refused before the simulation: ``W: job w0!1.profile: 'b1' is 'composed': EAMC's placement 'partitions' ...``.

Checked and found clean: pybatsim classes to ``api.simulate`` that raise in ``__init__`` (on their options too),
``onSimulationBegins`` or a callback, start a job twice (in one reply or two), on hosts beyond the platform or on
fewer hosts than asked, kill a job not started, reject one twice, start a rejected one, ask for a call in the past,
set a pstate the hosts lack, start nothing (the deadlock is reported); scheduler files with a syntax error, no
scheduler class or no class of the given name (in a grid too: refused before any run, as the options a class
rejects); ``out=`` into a folder of another run's outputs (replaced, as Batsim does), onto a symbolic link to an
input or a workload named like an output (refused), a dangling link, a folder named like an output; one host with
and without the master (refused: Batsim needs one), ``nb_res`` 0, a walltime of 0 (refused), delays of 0 (refused),
jobs of no work, one job, all at 0 or all at 1e9, through every preset (and compose with shutdown, ESC, powercap,
energy-bud, UPAS and EFS pieces), then ``metrics``, ``plot``, ``paraver`` and ``node-stats``; ``synth --hosts 1``
(one job, a warning for a tiny ``--days``), ``beta`` on ``synth``, ``lightesp``, ``eamc-workload`` and its own
output (the run time is kept), run on one host.

* before: a ``upas`` run refused by the platform (a gear it lacks, no gears at all) printed UPAS's note that it
  turns dynamic jobs on, then the error: two lines. The note now comes once the scheduler took the platform (the
  first Batsim message answered: ``runner.run_simulation``).

Noticed and left (see the hunt's report): a pybatsim scheduler that asks to be called back forever and never
starts its jobs runs forever, as under Batsim (it cannot be told from one waiting for a time to start them);
``eamc-workload --jobs 1`` refuses some ``--mean-runtime-h`` with some seeds ("cannot be reached with these 1
job"), one line; read-only output files could not be tried (the checks run as root).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pybatsim.batsim.batsim import BatsimScheduler

from tests.bad_inputs_checks import refused
from wattsched import api
from wattsched.base.errors import OptionError
from wattsched.cli import main
from wattsched.experiments.sweep import STATUS_DONE, STATUS_FAILED, STATUS_SKIPPED, Run, execute_run, run_sweep

ROOT = Path(__file__).resolve().parent.parent
TAURUS = ROOT / "platforms" / "taurus_16.xml"


def _delay_workload(path: Path, delay_s: float, nb_res: int = 16) -> Path:
    path.write_text(json.dumps({"nb_res": nb_res, "profiles": {"p": {"type": "delay", "delay": delay_s}},
                                "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 1000}]}))
    return path


# ------------------------------------------------------------------------- 1. a class without a callback
class WithoutCallbacks(BatsimScheduler):
    """Defines nothing: pybatsim's onJobSubmission raises NotImplementedError."""


def test_a_scheduler_class_without_on_job_submission_is_named_so(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(OptionError) as error:
        api.simulate(TAURUS, _delay_workload(tmp_path / "w.json", 100.0), WithoutCallbacks, out=out / "r")
    text = str(error.value)
    assert "\n" not in text and "WithoutCallbacks does not define onJobSubmission" in text, text
    assert "BatsimScheduler.onJobSubmission raises NotImplementedError" in text, text
    assert not out.exists()


# ----------------------------------------------------------------- 2. a sweep's outputs replaced since
def test_a_sweep_run_whose_outputs_were_replaced_is_simulated_again(tmp_path):
    prefix = tmp_path / "runs" / "key" / "out"
    run = Run("easy", str(TAURUS), str(_delay_workload(tmp_path / "a.json", 100.0)), "easy-backfill", {}, str(prefix))
    assert execute_run(run)["makespan_s"] == 100.0
    api.simulate(TAURUS, _delay_workload(tmp_path / "b.json", 300.0), "easy-backfill", out=prefix)
    row = execute_run(run)
    assert row["status"] == STATUS_DONE and row["makespan_s"] == 100.0, row
    assert execute_run(run)["status"] == STATUS_SKIPPED  # its own outputs: resumed


# ----------------------------------------------------------------------------- 3. the stamp's file
def test_a_run_whose_stamp_is_its_workload_is_refused_before_any_run(tmp_path):
    workload = _delay_workload(tmp_path / "a_run.json", 100.0)
    before = workload.read_text()
    with pytest.raises(OptionError) as error:
        run_sweep([Run("a", str(TAURUS), str(workload), "fcfs", {}, str(tmp_path / "a"))], workers=1,
                  show_progress=False)
    assert f"{workload} is its workload file" in str(error.value), error.value
    assert workload.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["a_run.json"]


def test_a_stamp_that_is_a_folder_fails_the_run_before_it_simulates(tmp_path):
    (tmp_path / "a_run.json").mkdir()
    run = Run("a", str(TAURUS), str(_delay_workload(tmp_path / "w.json", 100.0)), "fcfs", {}, str(tmp_path / "a"))
    row = execute_run(run)
    assert not list(tmp_path.glob("a_*.csv"))  # (the outputs were written, then the stamp could not be)
    assert row["status"] == STATUS_FAILED and "a_run.json is a folder, not a file" in row["error"], row


# ------------------------------------------------------------------- 4. a job of no work at a switch-off
def test_node_stats_and_paraver_take_a_job_of_no_work_before_a_switch_off(capsys, tmp_path):
    platform = tmp_path / "p.xml"
    platform.write_text(api.taurus_platform(1))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 1, "profiles": {"z": {"type": "parallel_homogeneous", "cpu": 0,
                                                                    "com": 0}},
                                    "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "z", "walltime": 1000}]}))
    prefix = tmp_path / "o" / "r"
    options = json.dumps({"budget_fraction": 0.5, "window_end_s": 3600, "shutdown": True})
    assert main(["run", str(platform), str(workload), "-s", "energy-bud", "-o", options, "-e", str(prefix),
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["node-stats", str(prefix)]) == 0
    assert main(["paraver", str(prefix), "-d", str(tmp_path / "trace")]) == 0
    captured = capsys.readouterr()
    assert "error" not in captured.err and "shutdowns" in captured.out.lower(), captured


# -------------------------------------------------------------- 5. EAMC on a composed profile (beta)
def test_eamc_on_a_job_with_a_composed_profile_is_refused_before_the_run(capsys, tmp_path):
    platform = tmp_path / "p.xml"
    assert main(["platform", "--node", "eamc", "--hosts", "1", "--output", str(platform)]) == 0
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({
        "nb_res": 2, "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e11, "com": 0},
                                  "d": {"type": "delay", "delay": 10.0},
                                  "b1": {"type": "composed", "repeat": 1, "seq": ["c", "d"]}},
        "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "b1", "walltime": 900, "app": 7,
                  "partitions": ["p1", "p2"]}]}))
    out = tmp_path / "out"
    refused(capsys, ["run", str(platform), str(workload), "-s", "eamc-base", "-e", str(out / "r"), "-q"],
            f"{workload}: job w0!1.profile: 'b1' is 'composed'", "'partitions'")
    assert not out.exists()



def test_a_run_refused_by_the_platform_is_one_line_without_the_dynamic_jobs_note(tmp_path, caplog):
    """was: UPAS's note that it turns dynamic jobs on ("upas lowers jobs' gears: dynamic jobs enabled ...") printed
    before the error of an option the platform cannot serve (a gear it lacks, no gears at all): two lines for one
    refused run. The note now comes once the scheduler took the platform (the first Batsim message answered)."""
    import logging

    root = Path(__file__).resolve().parent.parent
    workload = str(root / "workloads" / "demo_taurus16.json")
    note = "lowers jobs' gears"
    for platform, options in (("upas_16.xml", '{"f_upper_ghz": 3.3}'), ("taurus_16.xml", "{}")):
        caplog.clear()
        assert main(["run", str(root / "platforms" / platform), workload, "-s", "upas", "-o", options,
                     "-e", str(tmp_path / "out"), "-q"]) == 2
        assert not any(note in r.getMessage() for r in caplog.records)
        assert not list(tmp_path.iterdir())
    caplog.clear()
    assert main(["run", str(root / "platforms" / "upas_16.xml"), workload, "-s", "upas", "-e", str(tmp_path / "out"),
                 "-q"]) == 0
    assert any(note in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
