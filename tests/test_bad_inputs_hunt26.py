"""Bad inputs hunt 26: dynamic jobs against the ids the scheduler registers, reproductions on logs without a job, and
reproductions run again into their folder with other inputs.

* before: with dynamic jobs, a workload holding a job ``resized.1`` beside a job ``1`` (the id the scheduler gives the
  replacement of job 1 when it slows it down) stopped ``run platforms/upas_16.xml W -s upas`` at that registration,
  blaming the scheduler: ``the scheduler's reply to Batsim message 2 (t=323, JOB_SUBMITTED w0!1): REGISTER_JOB: field
  'job_id': job w0!resized.1 already exists``; when job 1's profile was not composed (its replacement is
  ``resized!w0.1``) the run went through and the outputs took the user's ``resized.1`` for job 1's replacement. Now
  refused before the simulation: ``W: job w0!resized.1.id: with dynamic jobs, 'resized.<id>' is the id of the
  replacement of job '<id>' (w0!1) ...``.
* before: a Parallel Workloads Archive log with no job in what a reproduction takes of it (a header-only
  ``.swf.gz``, or a window, ``--days`` or job numbers past its jobs) gave ``reproduce esc`` a traceback (``max() arg
  is an empty sequence``); ``reproduce upas`` simulated 20 runs of 0 jobs, wrote figures, then a ``KeyError:
  'batsim_energy_ratio'`` traceback; ``reproduce efs`` simulated 2 runs of 0 jobs and wrote a report of empty tables
  (exit 0). Now one line naming the log, what was taken of it and the option (``no job left to simulate in its first
  1 days (--days) (...: 0 jobs of 0 lines ...)``), nothing simulated nor reported (as ``wattsched swf`` and
  ``reproduce energy-budget`` already said).
* before: a reproduction (any sweep) run again into its folder with other inputs (``reproduce upas --synthetic
  --machines sdsc --jobs 20`` then the same with ``--seed 2``) skipped every run, since its outputs existed, and
  reported the first seed's outputs as the second's (``results.csv`` naming the seed-2 workload). Now each run's
  simulation writes ``<prefix>_run.json`` (platform, workload with their sha256, scheduler, options, dynamic jobs);
  a run whose stamp names other inputs is simulated again, one with the same is still skipped (outputs without a
  stamp, of an older version, are taken as they are).

Checked and found clean: UPAS on jobs whose walltime is -1 or absent (run at their gear, not re-registered: nothing
to lengthen), on delay, parallel_homogeneous and composed profiles (copied or, composed, replaced under the same
profile); ``--pwa`` missing, empty, or holding a truncated or non-gzip log (one line naming it); ``node-stats
--baseline`` of another host count (refused); ``paraver``, ``plot`` and ``node-stats`` on a run whose every job was
rejected (``plot``: "no rows to plot"); ``api.simulate`` with another preset's option (refused); a :class:`Result`
whose ``out_jobs.csv`` was emptied or edited (one line naming the file and column).

Noticed and left (see the hunt's report): a reproduction refused on its log leaves the inputs it had cached
(``inputs/esc_*.xml``, the log decompressed by ``efs``), as every reproduction caches its inputs before its runs;
``metrics`` on a prefix whose ``out_schedule.csv`` was deleted computes from the other files (it does not read it);
outside dynamic jobs, a user's job ``resized.7`` beside a rejected job ``7`` is still merged as its replacement by
the outputs (no replacement is registered then, but the outputs cannot tell).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused
from wattsched.cli import main
from wattsched.experiments.sweep import STATUS_DONE, STATUS_SKIPPED, Run, execute_run

ROOT = Path(__file__).resolve().parent.parent
UPAS = ROOT / "platforms" / "upas_16.xml"
TAURUS = ROOT / "platforms" / "taurus_16.xml"


# -------------------------------------------------------------------- 1. dynamic jobs: the ids of replacements
def _workload_with_a_replacement_id(tmp_path: Path, composed: bool) -> Path:
    """Job 1 (slowed by UPAS at the utilization of an idle machine) and a user's job ``resized.1`` after it."""
    profiles = {"c": {"type": "parallel_homogeneous", "cpu": 7e11, "com": 0}, "d": {"type": "delay", "delay": 264.0},
                "b": {"type": "composed", "repeat": 1, "seq": ["c", "d"]}}
    profile = "b" if composed else "c"
    jobs = [{"id": 1, "subtime": 0, "res": 4, "profile": profile, "walltime": 2700, "beta": 0.5},
            {"id": "resized.1", "subtime": 5000, "res": 1, "profile": "c", "walltime": 2700, "beta": 0.5}]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    return path


@pytest.mark.parametrize("composed", [True, False], ids=["composed-stopped-the-run", "other-merged-wrongly"])
def test_a_job_named_like_a_replacement_is_refused_with_dynamic_jobs(capsys, tmp_path, composed):
    workload = _workload_with_a_replacement_id(tmp_path, composed)
    out = tmp_path / "out"
    refused(capsys, ["run", str(UPAS), str(workload), "-s", "upas", "-e", str(out / "r"), "-q"],
            str(workload), "job w0!resized.1.id", "replacement of job '<id>' (w0!1)")
    assert not out.exists()


def test_a_job_named_like_a_replacement_runs_without_dynamic_jobs(capsys, tmp_path):
    workload = _workload_with_a_replacement_id(tmp_path, composed=False)
    assert main(["run", str(TAURUS), str(workload), "-s", "easy-backfill", "-e", str(tmp_path / "o" / "r"),
                 "-q"]) == 0


# --------------------------------------------------------------------------- 2. reproductions: logs without a job
@pytest.fixture
def empty_logs(tmp_path: Path) -> Path:
    """A Parallel Workloads Archive folder whose logs are a header without a job."""
    folder = tmp_path / "pwa"
    folder.mkdir()
    for name in ("NASA-iPSC-1993-3.1-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz"):
        (folder / name).write_bytes(gzip.compress(b"; MaxNodes: 128\n; MaxProcs: 128\n"))
    return folder


@pytest.mark.parametrize("argv, needles", [
    (["esc", "--days", "1", "--no-grid"], ["NASA-iPSC-1993-3.1-cln.swf.gz: no job left to simulate in its first 1 days "
                                           "(--days)", "0 jobs of 0 lines"]),
    (["upas", "--machines", "ctc", "--jobs", "20"], ["CTC-SP2-1996-3.1-cln.swf.gz: no job left to simulate among its "
                                                     "jobs 20000-20019 (--jobs)"]),
    (["efs", "--parts", "table1", "--traces", "sdsc", "--weeks", "1", "--users", "1"],
     ["SDSC-SP2-1998-4.2-cln.swf.gz: no job left to simulate in its busiest 1 week(s) (--weeks)"]),
], ids=["esc-traceback", "upas-traceback-after-runs", "efs-empty-report"])
def test_a_log_without_a_job_is_refused_before_any_run(capsys, tmp_path, empty_logs, argv, needles):
    out = tmp_path / "out"
    status = main(["reproduce", *argv, "--pwa", str(empty_logs), "--out", str(out), "-j", "1", "-q"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("wattsched: error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    assert not (out / "runs").exists() and not (out / "report.md").exists() and not (out / "results.csv").exists()


# ------------------------------------------------------------------------ 3. a sweep run again with other inputs
def _delay_workload(path: Path, delay_s: float) -> str:
    path.write_text(json.dumps({"nb_res": 16, "profiles": {"p": {"type": "delay", "delay": delay_s}},
                                "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "p", "walltime": 1000}]}))
    return str(path)


def test_a_run_again_with_other_inputs_is_simulated_again(tmp_path):
    """It was skipped (its outputs existed), and its row gave the first inputs' metrics for the second's."""
    prefix = str(tmp_path / "runs" / "easy")
    first = Run("easy", str(TAURUS), _delay_workload(tmp_path / "a.json", 100.0), "easy-backfill", {}, prefix)
    assert execute_run(first)["makespan_s"] == 100.0
    assert execute_run(first)["status"] == STATUS_SKIPPED  # the same inputs: resumed
    second = Run("easy", str(TAURUS), _delay_workload(tmp_path / "b.json", 300.0), "easy-backfill", {}, prefix)
    row = execute_run(second)
    assert row["status"] == STATUS_DONE and row["makespan_s"] == 300.0
    _delay_workload(tmp_path / "b.json", 200.0)  # the same file, other contents
    row = execute_run(second)
    assert row["status"] == STATUS_DONE and row["makespan_s"] == 200.0
    other_options = Run("easy", str(TAURUS), str(tmp_path / "b.json"), "easy-backfill", {"placement": "best-fit"},
                        prefix)
    assert execute_run(other_options)["status"] == STATUS_DONE
    assert execute_run(other_options)["status"] == STATUS_SKIPPED
