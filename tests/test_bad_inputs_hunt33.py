"""Bad inputs hunt 33: scheduler compositions and options under ``wattsched run``.

* before: on a platform or a workload of EAMC (partitions, applications), ``run`` read the options' ``ear_model`` as an
  EAR model to check the jobs' applications against, before the scheduler had checked its options: an empty
  ``ear_model`` given to ``eamc-reorder`` said ``/work/main/modules: missing: the EAR model needs this file`` (the
  current folder read; hunt 17's "option 'ear_model' is empty" came only on other inputs), and an ``ear_model`` given
  to a preset that has no such option (``-s fcfs``) or to a pybatsim scheduler (its options are its own) was loaded
  as one (``x: not a folder of EAR model data``) instead of refused as an unknown option, or passed on. Now the
  preset's options are checked first, and only a preset's ``ear_model`` is an EAR model.
* before: ``run P W --connect ENDPOINT -s energy-bud -o '{...}'`` simulated with the scheduler listening at ENDPOINT
  (another preset, other options) without a word: ``-s`` and ``-o`` were ignored, as ``--timeout`` without
  ``--connect`` was once. Now refused before anything is made or connected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused

ROOT = Path(__file__).resolve().parent.parent
EAMC_PLATFORM = str(ROOT / "tests" / "fixtures" / "eamc" / "platform.xml")
TAURUS = str(ROOT / "platforms" / "taurus_16.xml")
DEMO = str(ROOT / "workloads" / "demo_taurus16.json")


@pytest.fixture
def eamc_workload(tmp_path: Path) -> str:
    """Two jobs of EAMC applications on the p1/p2 fixture platform."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 16, "profiles": {"p": {"type": "delay", "delay": 100}}, "jobs": [
        {"id": "1", "subtime": 0, "res": 2, "profile": "p", "walltime": 600, "app": 1, "partitions": ["p1", "p2"]},
        {"id": "2", "subtime": 10, "res": 3, "profile": "p", "walltime": 600, "app": 8, "partitions": ["p2"]}]}))
    return str(path)


# -------------------------------------------------------------------- 1. ear_model read before the options' checks
@pytest.mark.parametrize("scheduler, options", [("eamc-reorder", {}), ("compose", {"frequency": "eamc"}),
                                                ("compose", {"placement": "partitions", "order": "eamc-reorder"})])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_ear_model_on_eamc_inputs_names_the_option(capsys, tmp_path, eamc_workload, scheduler, options,
                                                            value):
    refused(capsys, ["run", EAMC_PLATFORM, eamc_workload, "-s", scheduler, "-o",
                     json.dumps({**options, "ear_model": value}), "-e", str(tmp_path / "o" / "out"), "-q"],
            "option 'ear_model' is empty")
    assert not (tmp_path / "o").exists()


def test_a_too_long_ear_model_on_eamc_inputs_names_the_option(capsys, tmp_path, eamc_workload):
    refused(capsys, ["run", EAMC_PLATFORM, eamc_workload, "-s", "min-energy", "-o",
                     json.dumps({"ear_model": "m" * 300}), "-e", str(tmp_path / "o" / "out"), "-q"],
            "option 'ear_model'", "255")


def test_an_empty_ear_model_from_an_options_file_names_the_file(capsys, tmp_path, eamc_workload):
    options = tmp_path / "opts.json"
    options.write_text('{"ear_model": ""}')
    refused(capsys, ["run", EAMC_PLATFORM, eamc_workload, "-s", "eamc-base", "-o", f"@{options}",
                     "-e", str(tmp_path / "o" / "out"), "-q"], str(options), "option 'ear_model' is empty")


@pytest.mark.parametrize("scheduler", ["fcfs", "energy-bud", "upas"])
def test_an_ear_model_given_to_a_preset_without_it_is_an_unknown_option(capsys, tmp_path, eamc_workload, scheduler):
    """It was loaded as an EAR model: "/nonexistent: not a folder of EAR model data"."""
    refused(capsys, ["run", EAMC_PLATFORM, eamc_workload, "-s", scheduler, "-o",
                     json.dumps({"ear_model": str(tmp_path / "nonexistent")}), "-e", str(tmp_path / "o" / "out"),
                     "-q"], f"unknown option 'ear_model' for {scheduler}")


def test_a_presets_ear_model_is_still_checked_against_the_jobs(capsys, tmp_path, eamc_workload):
    refused(capsys, ["run", EAMC_PLATFORM, eamc_workload, "-s", "eamc-reorder", "-o",
                     json.dumps({"ear_model": str(tmp_path / "nonexistent")}), "-e", str(tmp_path / "o" / "out"),
                     "-q"], str(tmp_path / "nonexistent"), "not a folder of EAR model data")


def test_the_cli_reads_no_ear_model_from_another_schedulers_options(tmp_path, eamc_workload):
    from wattsched.experiments.runner import eamc_reading

    assert eamc_reading("pkg.module:Mine", {"ear_model": ""}) == (None, False)  # its options are its own
    assert eamc_reading("eamc-reorder", {"ear_model": str(tmp_path)}) == (str(tmp_path), True)
    assert eamc_reading(" min-energy ", {}) == (None, True)  # the shipped model
    assert eamc_reading("easy-backfill", {}) == (None, False)  # first-fit: a job wider than a partition runs


# -------------------------------------------------------------------- 2. -s and -o with --connect
@pytest.mark.parametrize("given, needle", [(["-s", "energy-bud"], "-s applies"),
                                           (["-o", '{"placement": "best-fit"}'], "-o applies"),
                                           (["-s", "fcfs", "-o", "{}"], "-s and -o apply")])
def test_a_scheduler_or_options_with_connect_are_refused(capsys, tmp_path, given, needle):
    """They were ignored: the run used whatever scheduler listened at the endpoint, with its own options."""
    refused(capsys, ["run", TAURUS, DEMO, "--connect", "tcp://127.0.0.1:1", *given, "--timeout", "1",
                     "-e", str(tmp_path / "o" / "out"), "-q"],
            f"{needle} without --connect only", "tcp://127.0.0.1:1", "wattsched serve")
    assert not (tmp_path / "o").exists()


def test_run_without_s_is_still_easy_backfill(capsys, tmp_path):
    from wattsched.cli import main

    assert main(["run", TAURUS, DEMO, "-e", str(tmp_path / "out"), "--json", "-q"]) == 0
    reference = tmp_path / "ref"
    assert main(["run", TAURUS, DEMO, "-s", "easy-backfill", "-e", str(reference), "--json", "-q"]) == 0
    capsys.readouterr()
    assert (tmp_path / "out_jobs.csv").read_text() == (tmp_path / "ref_jobs.csv").read_text()
