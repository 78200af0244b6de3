"""Bad inputs hunt 22: ``reproduce`` counts that ran without end or wrote half their inputs, ``reproduce`` name lists
that did not name their option, and Batsim messages ``serve`` took without a word.

* ``reproduce efs --weeks 1000000000`` wrote the Light-ESP workloads, the SDSC-SP2 log and its conversion into
  ``OUT/inputs``, then stopped on ``synthetic workload: duration_s: 7e+09 days``, naming no option.
* ``reproduce efs --seeds 1000000000`` wrote Light-ESP workloads without end (two files per seed);
  ``reproduce eamc --seeds 1000000000`` built a list of a billion seeds (gigabytes) before its first workload;
  ``reproduce upas --jobs 1000000000`` prepared inputs from the whole logs (or ever longer synthetic traces). Each
  is now refused before anything is written, at the ``runs`` (``jobs``) bound of ``wattsched.base.limits``.
* ``reproduce``'s unknown names did not say which option held them: ``unknown trace(s) bogus`` (``efs --traces``),
  ``unknown part(s)`` (``efs --parts``), ``unknown mix '14'`` (``eamc --mixes``), ``unknown machine(s)``
  (``energy-budget --machines``; ``upas --machines`` already said it).
* ``serve`` took a JOB_SUBMITTED whose ``job.id`` is not its ``job_id`` (the preset ran ``job_id``, a pybatsim
  scheduler kept ``job.id``: no error either way), and a REQUESTED_CALL no CALL_ME_LATER asked for (the presets
  ignored it; a pybatsim scheduler stopped with ``scheduler ... raised NotImplementedError``, blaming the
  scheduler for Batsim's message).

Workload profiles (cycles, ``repeat`` of 1e18, 0, -1, 2.0, true, "2", empty ``seq``, ``com`` of the wrong size,
NaN and Infinity, numbers as strings, ``res`` 0 or too large, walltimes), platform XML (``wattage_per_state``
counts and values, ``wattage_off``, ``sleep_pstates``, speeds ``0f``/mixed units/NaN, duplicate hosts, a missing
master, zones 200 deep, billion laughs and external entities) and the other options of ``platform``, ``beta``,
``eamc-workload`` and ``traces`` were already refused in one line: nothing to fix there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_bad_inputs_serve import begins, msg, refused as protocol_refused, submitted
from wattsched.base.validate import BatsimMessageChecker
from wattsched.cli import main


def _refused_before_anything(capsys: pytest.CaptureFixture[str], argv: list[str], out: Path, *needles: str) -> None:
    """``wattsched ARGV`` exits 2 with one ``wattsched: error:`` line holding every needle (``efs`` says first where
    the logs are), and ``out`` was not made."""
    status = main(argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("wattsched: error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    assert not out.exists()


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("inputs prepared, or runs started, before the options were checked")


# ------------------------------------------------------ 1. reproduce: counts that ran without end, inputs half written
def test_reproduce_efs_refuses_weeks_beyond_the_days_bound_before_writing_inputs(capsys, monkeypatch, tmp_path):
    """It wrote the Light-ESP and SDSC-SP2 inputs, then said ``synthetic workload: duration_s: 7e+09 days``."""
    from wattsched.experiments import efs

    monkeypatch.setattr(efs, "lightesp_runs", _never)
    monkeypatch.setattr(efs, "trace_inputs", _never)
    out = tmp_path / "r"
    _refused_before_anything(capsys, ["reproduce", "efs", "--weeks", "1000000000", "--out", str(out), "-j", "1",
                                      "-q"], out, "--weeks", "1000000000 weeks", "WATTSCHED_LIMIT_DAYS")


def test_reproduce_efs_weeks_within_the_bound_still_pass_the_check(capsys, monkeypatch, tmp_path):
    from wattsched.experiments import efs

    monkeypatch.setattr(efs, "lightesp_runs", _never)
    with pytest.raises(AssertionError, match="inputs prepared"):  # past the checks: 522 weeks are 3,654 days
        main(["reproduce", "efs", "--weeks", "522", "--out", str(tmp_path / "r"), "-j", "1", "-q"])


@pytest.mark.parametrize("argv, module, prepare, needles", [
    (["efs", "--seeds", "1000000000"], "efs", "lightesp_runs", ["--seeds", "1e+09 submission orders",
                                                                 "WATTSCHED_LIMIT_RUNS"]),
    (["eamc", "--seeds", str(10 ** 13)], "eamc", "prepare_inputs", ["--seeds", "1e+13 workloads per mix",
                                                                     "WATTSCHED_LIMIT_RUNS"]),
    (["upas", "--jobs", "1000000000"], "upas", "prepare_inputs", ["--jobs", "1e+09 jobs per trace",
                                                                   "WATTSCHED_LIMIT_JOBS"]),
], ids=["efs --seeds", "eamc --seeds", "upas --jobs"])
def test_reproduce_refuses_counts_beyond_their_bound_before_anything(capsys, monkeypatch, tmp_path, argv, module,
                                                                     prepare, needles):
    """``efs --seeds 1e9`` wrote workloads without end, ``eamc --seeds`` built a list of every seed first (for 1e13:
    ``out of memory while running 'reproduce'``, naming no option), ``upas --jobs 1e9`` prepared the whole logs."""
    import importlib

    monkeypatch.setattr(importlib.import_module(f"wattsched.experiments.{module}"), prepare, _never)
    out = tmp_path / "r"
    _refused_before_anything(capsys, ["reproduce", *argv, "--out", str(out), "-j", "1", "-q"], out, *needles)


# ------------------------------------------------------------------ 2. reproduce: unknown names say their option
@pytest.mark.parametrize("argv, needles", [
    (["efs", "--traces", "bogus"], ["--traces: unknown trace(s) bogus", "curie, pik, sdsc"]),
    (["efs", "--parts", "nosuch"], ["--parts: unknown part(s) nosuch"]),
    (["eamc", "--mixes", "14"], ["--mixes: unknown mix '14'"]),
    (["energy-budget", "--machines", "nosuch"], ["--machines: unknown machine(s) nosuch", "sdsc-blue"]),
], ids=["efs --traces", "efs --parts", "eamc --mixes", "energy-budget --machines"])
def test_reproduce_unknown_names_say_their_option(capsys, tmp_path, argv, needles):
    out = tmp_path / "r"
    _refused_before_anything(capsys, ["reproduce", *argv, "--out", str(out), "-j", "1", "-q"], out, *needles)


# ----------------------------------------------------------------------- 3. serve: messages Batsim never sends
def _started(*events: dict) -> BatsimMessageChecker:
    checker = BatsimMessageChecker(sees_replies=True)
    checker.check(msg(0, begins(), *events))
    return checker


def test_a_job_submitted_under_two_ids_is_refused():
    """``job_id`` w0!1 with ``job.id`` w0!2 was taken: the preset ran w0!1, pybatsim kept w0!2."""
    event = submitted("w0!1")
    event["data"]["job"]["id"] = "w0!2"
    protocol_refused(_started(), msg(1, event), "Batsim message 2 (t=1)", "JOB_SUBMITTED", "'job.id' 'w0!2'",
                     "'job_id'")
    _started().check(msg(1, submitted("w0!1")))  # the same id in both: taken


def _call(t: float) -> dict:
    return {"timestamp": t, "type": "REQUESTED_CALL", "data": {}}


def test_a_requested_call_nobody_asked_for_is_refused():
    """The presets ignored it; a pybatsim scheduler stopped with ``raised NotImplementedError``, blaming itself."""
    protocol_refused(_started(), msg(1, _call(1)), "Batsim message 2 (t=1)", "REQUESTED_CALL", "no CALL_ME_LATER")


def test_a_requested_call_answers_one_call_me_later_each():
    checker = _started()
    checker.replied({"now": 0, "events": [{"timestamp": 0, "type": "CALL_ME_LATER", "data": {"timestamp": 5}},
                                          {"timestamp": 0, "type": "CALL_ME_LATER", "data": {"timestamp": 9}}]})
    checker.check(msg(5, _call(5)))
    checker.check(msg(9, _call(9)))
    protocol_refused(checker, msg(10, _call(10)), "Batsim message 4 (t=10)", "no CALL_ME_LATER")
    unseen = BatsimMessageChecker()  # the replies not shown: nothing is known of the calls asked
    unseen.check(msg(0, begins()))
    unseen.check(msg(1, _call(1)))


@pytest.mark.parametrize("argv, needle", [
    (["--parts", "lightesp", "--users", "5"], "--users applies to the table1 part only"),
    (["--parts", "lightesp", "--traces", "sdsc"], "--traces applies to the table1 part only"),
    (["--parts", "lightesp", "--weeks", "2"], "--weeks applies to the table1 part only"),
    (["--parts", "lightesp", "--full"], "--full applies to the table1 part only"),
    (["--parts", "lightesp", "--seed", "3"], "--seed applies to the table1 part only"),
    (["--parts", "table1", "--seeds", "2"], "--seeds applies to the lightesp part only"),
])
def test_reproduce_efs_refuses_an_option_of_a_part_it_leaves_out(capsys, tmp_path, argv, needle):
    """They were ignored without a word (noticed before): the run was not the one asked for."""
    out = tmp_path / "r"
    _refused_before_anything(capsys, ["reproduce", "efs", *argv, "--out", str(out), "-j", "1", "-q"], out, needle,
                             "which --parts")
