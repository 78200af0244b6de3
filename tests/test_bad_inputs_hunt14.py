"""Bad inputs of hunt 14: decimal numbers of the command line and the web forms in other scripts' digits or with
``_`` (``--tau ١٦`` ran with τ = 16); outputs whose jobs file has an empty allocation for a job that ran, or whose
pstate changes name hosts beyond the run's, read without a word by ``metrics`` and ``plot`` (and, for the empty
allocation, by ``node-stats`` and ``paraver`` too); empty names given to the Python API (``sweep(out="")`` ran the
sweep in the current folder) and to the CLI, and numpy numbers refused by some functions of the API only.

The output checks read copies of real Batsim's recordings (no simulation); the command-line checks are refused
before any work; the API checks that need a result simulate one job on two hosts.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.bad_inputs_checks import (analysis, recording_outputs, refused, set_field, set_line, usage_error,
                                     usage_error_making_nothing)
from wattsched import api
from wattsched.base.errors import InputError, OptionError
from wattsched.base.validate import NOT_PLAIN_NUMBER, plain_float

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_1152.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")


# ------------------------------------------------------------------------- 1. decimal numbers in ASCII only
@pytest.mark.parametrize("text", ["\u0661\u0666", "\uff11\uff16", "1_6", " 16", "16 ", "16\n", "1_6e1", "\u0661.5"])
def test_plain_float_refuses_what_only_python_reads(text):
    """``float()`` reads other scripts' digits, ``_`` and surrounding white space; JSON and ``strtod`` do not."""
    assert math.isfinite(float(text))
    with pytest.raises(ValueError, match=NOT_PLAIN_NUMBER.replace("(", r"\(").replace(")", r"\)")):
        plain_float(text)


@pytest.mark.parametrize("text, value", [("16", 16.0), ("1e3", 1000.0), ("0.5", 0.5), ("-1", -1.0), ("+2", 2.0),
                                         (".5", 0.5), ("5.", 5.0), ("1E-3", 0.001), ("2.5e+2", 250.0)])
def test_plain_float_reads_ascii_numbers_as_float_does(text, value):
    assert plain_float(text) == value


@pytest.mark.parametrize("text", ["inf", "-Infinity", "nan"])
def test_plain_float_leaves_non_finite_words_to_each_reader(text):
    """Read as before, so that ``--window nan,5`` still says "finite" and ``--tau inf`` "positive finite"."""
    assert not math.isfinite(plain_float(text))


@pytest.mark.parametrize("text", ["", "a", "1.5e", "0x10", "--1"])
def test_plain_float_refuses_what_is_no_number(text):
    with pytest.raises(ValueError, match="not a number"):
        plain_float(text)


def test_run_refuses_a_tau_in_other_digits_before_anything(capsys, tmp_path):
    """The brief's case: ``--tau ١٦`` ran with τ = 16."""
    usage_error(capsys, ["run", PLATFORM, WORKLOAD, "-s", "energy-bud", "--tau", "\u0661\u0666", "--window", "5,1",
                         "-e", str(tmp_path / "x" / "out")], "--tau", "\u0661\u0666", "ASCII digits")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("argv, option", [
    (["metrics", "{ref}", "--tau", "\uff11\uff10"], "--tau"),
    (["metrics", "{ref}", "--window", "0,1_0"], "--window"),
    (["metrics", "{ref}", "--window", "0,\u0661\u0660"], "--window"),
    (["metrics", "{ref}", "--max-power", "1_000"], "--max-power"),
    (["plot", "{ref}", "--budget-power", "\u0661", "-d", "{tmp}"], "--budget-power"),
    (["synth", "--hosts", "4", "--seed", "1", "--days", "\u0661", "--output", "{tmp}/w.json"], "--days"),
    (["synth", "--hosts", "4", "--seed", "1", "--load", "0_5", "--output", "{tmp}/w.json"], "--load"),
    (["lightesp", "--efficiencies", "0.7,\u0661,1.3", "--output", "{tmp}/w.json"], "--efficiencies"),
    (["run", PLATFORM, WORKLOAD, "--window", "0,1_000", "--tau", "0", "-e", "{tmp}/out"], "--window"),
    (["run", PLATFORM, WORKLOAD, "--connect", "tcp://127.0.0.1:1", "--timeout", "\u0665", "--tau", "0",
      "-e", "{tmp}/out"], "--timeout"),
])
def test_every_decimal_option_takes_ascii_numbers_only(capsys, tmp_path, argv, option):
    """A command that would run or wait has a second bad option after the one checked (``--tau 0``): argparse
    stops at the first, so a regression is that second error, not a simulation."""
    reference = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"
    folder = tmp_path / "made"
    argv = [a.replace("{ref}", str(reference)).replace("{tmp}", str(folder)) for a in argv]
    usage_error(capsys, argv, option, "ASCII digits")
    assert not folder.exists()


@pytest.mark.parametrize("argv", [
    ["metrics", "{ref}", "--tau", "1e1", "--window", "0,7.5e2", "--max-power", "+1000.", "--json"],
    ["metrics", "{ref}", "--window=-0,.5e3"],
])
def test_ascii_decimal_options_are_read_as_before(capsys, argv):
    from wattsched.cli import main

    reference = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"
    assert main([a.replace("{ref}", str(reference)) for a in argv]) == 0, capsys.readouterr().err


def test_the_metrics_module_takes_ascii_numbers_and_says_a_bad_value_in_one_line(capsys):
    """``python -m wattsched.analysis.metrics`` read ``--tau`` with ``float()``, and ``--tau -1`` ended in a
    traceback (its OptionError was not caught)."""
    from wattsched.analysis.metrics import main

    reference = str(ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute")
    with pytest.raises(SystemExit) as stop:
        main([reference, "--tau", "\u0661\u0660"])
    assert stop.value.code == 2 and "ASCII digits" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([reference, "--window", "0", "1_0"])
    assert "ASCII digits" in capsys.readouterr().err
    assert main([reference, "--tau", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: metrics: tau_s: -1.0 must be > 0", err
    assert main([reference, "--tau", "1e1", "--window", "0", "7.5e2", "--json"]) == 0


def test_the_workload_form_takes_ascii_numbers_only(tmp_path):
    """The generated-workload form read days and load with the CLI's ``positive_float``, ``float()`` inside.
    Its seed is refused too, so that no workload is made if the number check regresses."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web_bad_inputs import TestClient, create_app, errors_on, field_error

    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        response = client.post("/inputs/workload", data={"hosts": "4", "seed": "-1", "days": "\u0661",
                                                          "load": "0_5"})
        assert response.status_code == 400
        assert "ASCII digits" in field_error(response.text, "workload-days")
        assert "ASCII digits" in field_error(response.text, "workload-load")
        response = client.post("/inputs/workload", data={"hosts": "4", "seed": "-1", "days": " 0.2 "})
        assert response.status_code == 400  # stripped, as the integer fields are: only the seed is refused
        assert [e.split(":")[0] for e in errors_on(response.text)] == ["argument --seed"], errors_on(response.text)
        assert not (tmp_path / "ws" / "inputs").exists() or not any((tmp_path / "ws" / "inputs").iterdir())


# ----------------------------------------------------------------- 2. analysis of outputs that contradict a run
ANALYSES = ["metrics", "node-stats", "paraver", "plot"]


@pytest.mark.parametrize("command", ANALYSES)
def test_an_empty_allocation_of_a_job_that_ran_is_refused(capsys, tmp_path, command):
    """Batsim writes the hosts of every job it started (a job of 0 hosts is rejected): an empty
    ``allocated_resources`` made an idle gap in node-stats, paraver and the Gantt chart, and metrics read on."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    set_field(outputs / "out_jobs.csv", 3, "allocated_resources", "")   # job 2, which ran from 0 s
    refused(capsys, analysis(command, outputs, tmp_path / "written"), "out_jobs.csv",
            "line 3, column 'allocated_resources': empty, while job '2' ran from 0 s")
    assert not (tmp_path / "written").exists()


def test_the_empty_allocation_of_a_rejected_job_is_read():
    from wattsched.analysis.outputs import load_outputs

    jobs = load_outputs(ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute" / "out").jobs
    assert (jobs.loc[jobs["final_state"] == "REJECTED", "allocated_resources"] == "").all()


@pytest.mark.parametrize("command", ANALYSES)
def test_a_pstate_change_on_hosts_beyond_the_run_is_refused_by_every_analysis(capsys, tmp_path, command):
    """node-stats and paraver refused it; metrics and plot read the file without a word."""
    outputs = recording_outputs(tmp_path / "outputs", "long-shutdown-fcfs")
    set_line(outputs / "out_pstate_changes.csv", 5, "468,0-6 16-17,-1")  # 16 Taurus hosts: 0-15
    refused(capsys, analysis(command, outputs, tmp_path / "written"), "out_pstate_changes.csv",
            "row 4.machine_id: host 17 beyond 0-15 (the run's 16 compute hosts)")
    assert not (tmp_path / "written").exists()


@pytest.mark.parametrize("machines, problem", [("", "row 4.machine_id: empty"),
                                               ("3-1", "row 4.machine_id: '3-1' is not a host set")])
def test_a_pstate_change_naming_no_host_set_is_refused(capsys, tmp_path, machines, problem):
    outputs = recording_outputs(tmp_path / "outputs", "long-shutdown-fcfs")
    set_line(outputs / "out_pstate_changes.csv", 5, f"468,{machines},-1")
    refused(capsys, ["metrics", str(outputs / "out")], "out_pstate_changes.csv", problem)


def test_the_hosts_of_the_run_are_still_read(capsys, tmp_path):
    """A host set written otherwise than Batsim does (not in order) but within the run is read as before."""
    from wattsched.cli import main

    outputs = recording_outputs(tmp_path / "outputs", "long-shutdown-fcfs")
    set_line(outputs / "out_pstate_changes.csv", 5, "468,6 0-5,-1")
    assert main(["metrics", str(outputs / "out")]) == 0, capsys.readouterr().err
    assert main(["node-stats", str(outputs / "out")]) == 0, capsys.readouterr().err


def test_the_host_helpers_keep_their_public_names():
    """``parse_host_set`` and ``nb_hosts_of_run`` moved to outputs.py (its check of the pstate changes needs
    them); node_states and metrics still export them."""
    from wattsched.analysis import metrics, node_states, outputs

    assert node_states.parse_host_set is outputs.parse_host_set
    assert metrics.nb_hosts_of_run is outputs.nb_hosts_of_run


# ------------------------------------------------------------------------------------------- 3. empty names
@pytest.mark.parametrize("argument, value", [("platform", ""), ("workload", " "), ("scheduler", ""),
                                             ("scheduler", "  "), ("out", "")])
def test_simulate_refuses_an_empty_name_naming_the_argument(tmp_path, monkeypatch, argument, value):
    """``platform=""`` said ': cannot read platform file' (no name), ``scheduler=""`` "unknown scheduler ''"."""
    monkeypatch.chdir(tmp_path)
    arguments = {"platform": PLATFORM, "workload": WORKLOAD, "scheduler": "fcfs", "out": "run/out", argument: value}
    with pytest.raises(OptionError, match=f"^{argument} is empty: give "):
        api.simulate(**arguments)
    assert list(tmp_path.iterdir()) == []


def test_sweep_refuses_an_empty_folder_rather_than_sweep_in_the_current_one(tmp_path, monkeypatch):
    """``out=""`` was the current folder: runs/, plots/ and results.csv were written there. The grid names a
    missing platform, so that nothing could run if the check regressed."""
    monkeypatch.chdir(tmp_path)
    grid = {"platforms": ["missing.xml"], "workloads": [WORKLOAD], "schedulers": ["fcfs"]}
    with pytest.raises(OptionError, match=r"^out \(--out\) is empty: give the sweep's folder"):
        api.sweep(grid, out="")
    with pytest.raises(OptionError, match="^grid is empty: give a grid file's path"):
        api.sweep("", out="study")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["run", "", WORKLOAD, "-e", "{tmp}/out"], "argument platform: empty"),
    (["run", PLATFORM, " ", "-e", "{tmp}/out"], "argument workload: empty"),
    (["run", PLATFORM, WORKLOAD, "-s", "", "-e", "{tmp}/out"], "argument -s/--scheduler: empty"),
    (["serve", "-s", "", "--timeout", "0"], "argument -s/--scheduler: empty"),
    (["sweep", "missing.yaml", "--out", ""], "argument --out: empty"),
    (["sweep", "", "--out", "{tmp}/sweep"], "argument GRID: empty"),
    (["reproduce", "esc", "--out", "", "--seed=-1"], "argument --out: empty"),
    (["metrics", ""], "argument outputs: empty"),
    (["plot", "{ref}", "-d", "", "--budget-power", "0"], "argument -d/--output-dir: empty"),
    (["paraver", "{ref}", "--out-dir", " "], "argument --out-dir: empty"),
])
def test_the_cli_refuses_an_empty_name(capsys, tmp_path, monkeypatch, argv, option):
    """``plot -d ''`` wrote next to the outputs, ``sweep --out ''`` into the current folder, ``run '' W`` said
    ': cannot read platform file'. A command that would run or wait has a second bad option after the empty one
    (argparse stops at the first): a regression is that second error, not a reproduction or a server."""
    reference = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"
    usage_error_making_nothing(capsys, monkeypatch, tmp_path, argv, reference, option)


# ----------------------------------------------------------------------------- 4. numpy numbers in the API
@pytest.mark.parametrize("generate", [api.taurus_platform, api.esc_platform])
def test_the_platform_generators_take_numpy_counts(generate):
    """``synthetic_workload(np.int64(4), ...)`` was taken, ``taurus_platform(np.int64(4))`` refused."""
    assert generate(np.int64(4)) == generate(4) == generate(np.int32(4))
    for python, numpy in ((4.0, np.float64(4.0)), (0, np.int64(0))):
        with pytest.raises(OptionError) as with_python:
            generate(python)
        with pytest.raises(OptionError) as with_numpy:
            generate(numpy)
        assert str(with_numpy.value) == str(with_python.value)


def test_synthetic_workload_takes_numpy_numbers_as_python_ones():
    assert api.synthetic_workload(np.int64(4), seed=np.int64(1), days=np.float64(0.05), load=np.float32(0.5),
                                  users=np.int64(3)) == api.synthetic_workload(4, seed=1, days=0.05, load=0.5,
                                                                               users=3)


def test_a_sweep_grid_takes_numpy_numbers(tmp_path):
    """A grid given as a dict with ``seeds: [np.int64(1)]`` was refused ("seeds[0]: must be an integer ≥ 0, got
    np.int64(1)") while ``simulate`` takes numpy options. The platform is missing: the grid's numbers pass, then
    that file is named, and nothing runs."""
    grid = {"platforms": ["missing.xml"], "workloads": [{"synth": {"hosts": np.int64(4), "days": np.float64(0.1)}}],
            "seeds": [np.int64(1), np.int32(2)], "schedulers": ["energy-bud"],
            "options": [{"budget_fraction": np.float64(0.5), "window_end_s": np.int64(3600),
                         "shutdown": np.bool_(True)}]}
    with pytest.raises(InputError, match=r"platforms\[0\]: no file missing\.xml"):
        api.sweep(grid, out=tmp_path / "study", workers=np.int64(1))
    with pytest.raises(InputError, match=r"seeds\[0\]: must be an integer ≥ 0, got 1\.0"):
        api.sweep({**grid, "seeds": [np.float64(1.0)]}, out=tmp_path / "study")  # as 1.0 is
    with pytest.raises(InputError, match=r"seeds\[0\]: must be an integer ≥ 0, got 1\.0"):
        api.sweep({**grid, "seeds": [1.0]}, out=tmp_path / "study")
    assert not (tmp_path / "study").exists()


ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0.0, "res": 2, "profile": "p", "walltime": 100.0}],
           "profiles": {"p": {"type": "delay", "delay": 5.0}}}


def with_numpy(value):
    """``value`` with its numbers as numpy's."""
    if isinstance(value, dict):
        return {key: with_numpy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [with_numpy(item) for item in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return np.int64(value) if isinstance(value, int) else np.float64(value)


def test_simulate_takes_a_workload_dict_of_numpy_numbers(tmp_path):
    """A workload dict built with numpy (a DataFrame's rows) was refused: 'not JSON data (Object of type int64 is
    not JSON serializable)'. It runs as the same dict of Python numbers does."""
    platform = api.taurus_platform(2)
    plain = api.simulate(platform, ONE_JOB, "fcfs", out=tmp_path / "plain" / "out")
    numpy = api.simulate(platform, with_numpy(ONE_JOB), "fcfs", {"placement": np.str_("best-fit")},
                         out=tmp_path / "numpy" / "out", tau_s=np.float64(10), window=(np.int64(0), np.float64(50)),
                         max_power_w=np.float32(400))
    assert numpy.metrics["makespan_s"] == plain.metrics["makespan_s"] == 5.0
    assert numpy.jobs["allocated_resources"].tolist() == ["0-1"]
    figure = numpy.plot_power(budget_window=(np.int64(0), np.int64(5)), budget_power_w=np.float64(300))
    assert figure is not None
    with pytest.raises(OptionError, match="^prefix is empty: give a Paraver file prefix"):
        numpy.write_paraver("")


@pytest.mark.parametrize("text", ["١٠", "1_0", "1 0"])
def test_a_limit_variable_in_other_digits_is_refused(monkeypatch, text) -> None:
    """``WATTSCHED_LIMIT_*`` is read as the command line's numbers are (surrounding spaces aside)."""
    from wattsched.base.limits import limit

    monkeypatch.setenv("WATTSCHED_LIMIT_HOSTS", text)
    with pytest.raises(OptionError, match="WATTSCHED_LIMIT_HOSTS"):
        limit("hosts")
    monkeypatch.setenv("WATTSCHED_LIMIT_HOSTS", " 100 ")
    assert limit("hosts") == 100


def test_an_integer_of_more_digits_than_python_reads_is_called_so(capsys):
    """Found by hunt 40: 5,000 digits were "expected an integer ≥ 0" of what is one (int() refuses more than
    sys.get_int_max_str_digits() digits)."""
    import argparse
    import sys

    from wattsched.base.validate import non_negative_int, positive_int

    digits = sys.get_int_max_str_digits() + 1
    for read in (positive_int, non_negative_int):
        with pytest.raises(argparse.ArgumentTypeError, match=f"{digits} digits: more than the {digits - 1} Python reads"):
            read("1" * digits)
    assert positive_int("1" * (digits - 1)) > 0
