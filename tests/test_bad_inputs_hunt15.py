"""Bad inputs of hunt 15: empty or blank names given to the options hunt 14 left out (``replay --keep-outputs ''``
wrote our CSVs into the current folder, ``regress R '' --update`` made it the golden folder, ``run -e ' '`` wrote
`` _jobs.csv``...); a workload dict, options or a grid nested thousands of levels deep or holding itself given to
the Python API (a RecursionError traceback); jobs files whose ``final_state`` Batsim never writes, or whose job that
ran asked for no host; an SWF job number no Batsim job id can carry; a job's ``beta`` refused only when the
scheduler read it (not naming the file), and ``user``/``beta`` checked by ``wattsched run`` but not by
``api.simulate``; the EAMC generator's two means refused in one sentence.

Every check is refused before any work (a command that would run has a second bad option after the one checked, so
that a regression is that second error, not a simulation); the API checks that need a run simulate one job on two
hosts; the output checks read copies of real Batsim's recordings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import (analysis, recording_outputs, refused, set_field, usage_error,
                                     usage_error_making_nothing)
from wattsched import api
from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")
REFERENCE = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}


# ------------------------------------------------------------------------- 1. empty names of the other options
@pytest.mark.parametrize("argv, option", [
    (["run", PLATFORM, WORKLOAD, "-e", " ", "--tau", "0"], "argument -e/--export: empty"),
    (["run", PLATFORM, WORKLOAD, "-e", "", "--tau", "0"], "argument -e/--export: empty"),
    (["run", PLATFORM, WORKLOAD, "--connect", "", "--tau", "0"], "argument --connect: empty"),
    (["serve", "--bind", "", "--timeout", "0"], "argument --bind: empty"),
    (["replay", "", "--limit", "-1"], "argument FOLDER: empty"),
    (["replay", "{ref}", "--keep-outputs", "", "--limit", "-1"], "argument --keep-outputs: empty"),
    (["replay", "{ref}", "--keep-outputs", " ", "--limit", "-1"], "argument --keep-outputs: empty"),
    (["metrics", "{ref}", "--workload", ""], "argument --workload: empty"),
    (["paraver", "{ref}", "--platform", "", "-d", "{tmp}"], "argument --platform: empty"),
    (["node-stats", "{ref}", "--baseline", ""], "argument --baseline: empty"),
    (["regress", " ", "{ref}"], "argument run: empty"),
    (["regress", "{ref}", "", "--update"], "argument golden: empty"),
    (["beta", "", "--seed", "1", "--output", "{tmp}/b.json"], "argument workload: empty"),
    (["beta", WORKLOAD, "--seed", "1", "--output", " "], "argument --output: empty"),
    (["synth", "--hosts", "2", "--seed", "1", "--output", ""], "argument --output: empty"),
    (["platform", "--hosts", "2", "--output", ""], "argument --output: empty"),
    (["swf", "", "--output", "{tmp}/w.json"], "argument swf: empty"),
    (["swf", "sdsc-sp2", "--mirror", "", "--output", "{tmp}/w.json"], "argument --mirror: empty"),
    (["traces", "fetch", "sdsc-sp2", "--mirror", " "], "argument --mirror: empty"),
    (["traces", "fetch", "sdsc-sp2", "--cache", ""], "argument --cache: empty"),
    (["sweep", "missing.yaml", "--dask-scheduler", "", "--out", "{tmp}"], "argument --dask-scheduler: empty"),
    (["reproduce", "esc", "--report-dir", "", "--seed=-1"], "argument --report-dir: empty"),
    (["reproduce", "efs", "--pwa", "", "--seed=-1"], "argument --pwa: empty"),
    (["web", "--workspace", "", "--port", "0"], "argument --workspace: empty"),
])
def test_an_empty_name_of_any_option_is_a_usage_error(capsys, tmp_path, monkeypatch, argv, option):
    """An empty name was read as the current folder (``replay --keep-outputs ''`` wrote out_*.csv there,
    ``regress R '' --update`` would have made it the golden folder, ``node-stats --baseline ''`` read it), as no
    option (``traces fetch --cache ''`` used the default cache), or as a file of a blank name (``run -e ' '``
    wrote `` _jobs.csv``, ``beta --output ' '`` a file named `` ``); ``beta ''`` said ': cannot read workload
    file'."""
    usage_error_making_nothing(capsys, monkeypatch, tmp_path, argv, REFERENCE, option)


def test_the_named_options_still_take_their_names(capsys, tmp_path):
    """Non-empty names are read as before."""
    out = tmp_path / "w.json"
    assert main(["synth", "--hosts", "2", "--seed", "1", "--days", "0.01", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["nb_res"] == 2
    capsys.readouterr()
    assert main(["metrics", str(REFERENCE), "--workload", str(REFERENCE / "workload.json"), "--json"]) == 0
    assert main(["node-stats", str(REFERENCE), "--baseline", str(REFERENCE), "--json"]) == 0


# --------------------------------------------------------------- 2. Python objects nested too deeply or cyclic
def nested(levels: int) -> list:
    top: list = []
    inner = top
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return top


def holding_itself() -> dict:
    loop: dict = {}
    loop["again"] = loop
    return loop


@pytest.mark.parametrize("value", [nested(5000), holding_itself()], ids=["deep", "cyclic"])
def test_a_workload_dict_too_deep_or_holding_itself_is_an_input_error(tmp_path, value):
    """A RecursionError traceback (the numpy-numbers walk, then ``json.dumps``); JSON text that deep is refused."""
    with pytest.raises(InputError, match=r"^<workload object>: extra\[0\].*: nested too deeply .*"
                                         "WATTSCHED_LIMIT_NESTING") if isinstance(value, list) else \
            pytest.raises(InputError, match=r"^<workload object>: extra\.again\.again.*: nested too deeply"):
        api.simulate(api.taurus_platform(2), {**ONE_JOB, "extra": value}, "fcfs", out=tmp_path / "run" / "out")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", [nested(5000), holding_itself()], ids=["deep", "cyclic"])
def test_options_too_deep_or_holding_itself_are_an_option_error(tmp_path, value):
    with pytest.raises(OptionError, match=r"^options: shares\.a.*: nested too deeply \(or holding itself\)"):
        api.simulate(api.taurus_platform(2), ONE_JOB, "fairshare", {"shares": {"a": value}},
                     out=tmp_path / "run" / "out")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", [nested(5000), holding_itself()], ids=["deep", "cyclic"])
def test_a_grid_too_deep_or_holding_itself_is_an_input_error(tmp_path, value):
    grid = {"platforms": ["missing.xml"], "workloads": [WORKLOAD], "schedulers": ["fcfs"], "options": [{"x": value}]}
    with pytest.raises(InputError, match=r"^<grid>: options\[0\]\.x.*: nested too deeply"):
        api.sweep(grid, out=tmp_path / "study")
    assert not (tmp_path / "study").exists()


def test_a_workload_dict_as_deep_as_the_bound_still_runs(tmp_path):
    """63 levels inside the top object (64 in all), as JSON text takes them."""
    result = api.simulate(api.taurus_platform(2), {**ONE_JOB, "extra": nested(62)}, "fcfs")
    assert result.metrics["makespan_s"] == 5.0


# -------------------------------------------------------------------------- 3. jobs files no Batsim run writes
@pytest.mark.parametrize("command", ["metrics", "node-stats", "paraver", "plot"])
@pytest.mark.parametrize("state", ["BOGUS", "completed_successfully", "RUNNING"])
def test_a_final_state_batsim_never_writes_is_refused(capsys, tmp_path, command, state):
    """Metrics counted such a job as none of the states (and plot drew it as killed), without a word."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    set_field(outputs / "out_jobs.csv", 3, "final_state", state)
    refused(capsys, analysis(command, outputs, tmp_path / "written"), "out_jobs.csv",
            f"line 3, column 'final_state': '{state}' is not a state Batsim writes")
    assert not (tmp_path / "written").exists()


@pytest.mark.parametrize("command", ["metrics", "node-stats", "paraver", "plot"])
def test_a_job_that_ran_on_no_requested_host_is_refused(capsys, tmp_path, command):
    """Utilization weighs a job by its requested hosts: a job that ran counted for nothing."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    set_field(outputs / "out_jobs.csv", 3, "requested_number_of_resources", "0")
    refused(capsys, analysis(command, outputs, tmp_path / "written"), "out_jobs.csv",
            "line 3, column 'requested_number_of_resources': 0, while job '2' ran")
    assert not (tmp_path / "written").exists()


def test_every_state_of_the_recordings_is_still_read():
    from wattsched.analysis.outputs import JOB_FINAL_STATES, load_outputs

    states = set()
    for folder in sorted(p for p in REFERENCE.parent.iterdir() if (p / "out_jobs.csv").is_file()):
        states |= set(load_outputs(folder / "out").jobs["final_state"])
    assert states <= set(JOB_FINAL_STATES) and {"REJECTED", "COMPLETED_SUCCESSFULLY"} <= states


# ------------------------------------------------------------------------------ 4. an SWF job number too large
@pytest.mark.parametrize("number, shown", [("2147483648", "2147483648"), ("99999999999999999999", "1e+20")])
def test_an_swf_job_number_beyond_a_batsim_id_is_refused(capsys, tmp_path, number, shown):
    """The converted workload was written with an id ``run`` refuses ('must be a 32-bit integer'), and a number of
    20 digits was rounded (written as 100000000000000000000)."""
    trace = tmp_path / "t.swf"
    trace.write_text(f"; MaxProcs: 8\n{number} 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n")
    refused(capsys, ["swf", str(trace), "--output", str(tmp_path / "w.json")],
            "t.swf: line 2, field 'job_number'", f"{shown} is beyond the 32-bit integers Batsim reads as job ids")
    assert not (tmp_path / "w.json").exists()


def test_the_largest_32_bit_swf_job_number_is_converted(capsys, tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n2147483647 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n"
                     "-1 110 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n")
    assert main(["swf", str(trace), "--output", str(tmp_path / "w.json")]) == 0, capsys.readouterr().err
    assert [j["id"] for j in json.loads((tmp_path / "w.json").read_text())["jobs"]] == [2147483647, -1]


# ------------------------------------------------------------------------------------- 5. a job's beta and user
@pytest.mark.parametrize("beta, shown", [("x", "'x'"), (None, "null"), (2, "2"), (-0.5, "-0.5"), (True, "True")])
def test_a_beta_out_of_its_range_is_refused_naming_the_file(capsys, tmp_path, beta, shown):
    """Refused when the scheduler read the job: 'JOB_SUBMITTED w0!1: field 'job' is not a valid job object
    (could not convert string to float: 'x')', naming neither the file nor the field; ``null`` ran as no beta."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({**ONE_JOB, "jobs": [{**ONE_JOB["jobs"][0], "beta": beta}]}))
    platform = tmp_path / "p.xml"
    platform.write_text(api.taurus_platform(2))
    refused(capsys, ["run", str(platform), str(workload), "-s", "fcfs", "-e", str(tmp_path / "run" / "out")],
            "w.json: job 'w0!1'.beta: must be a number in [0, 1]", f"got {shown}")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("field, value, problem", [("beta", "x", "beta: must be a number in [0, 1]"),
                                                   ("user", None, "user: must be a string or a number, got null"),
                                                   ("user", [1], "user: must be a string or a number, got a list")])
def test_simulate_refuses_the_job_fields_run_refuses(tmp_path, field, value, problem):
    """``api.simulate`` ran ``user: [1]`` as the user '[1]' and ``user: null`` as none."""
    workload = {**ONE_JOB, "jobs": [{**ONE_JOB["jobs"][0], field: value}]}
    with pytest.raises(InputError, match=r"^<workload object>: job 'w0!1'\." + problem.replace("[", r"\[")):
        api.simulate(api.taurus_platform(2), workload, "fcfs", out=tmp_path / "run" / "out")
    assert not (tmp_path / "run").exists()


def test_betas_in_range_still_run(tmp_path):
    jobs = [{**ONE_JOB["jobs"][0], "id": str(i), "beta": beta} for i, beta in enumerate((0, 0.5, 1))]
    result = api.simulate(api.taurus_platform(2), {**ONE_JOB, "jobs": jobs}, "fcfs")
    assert result.metrics["nb_jobs_completed_successfully"] == 3


# ----------------------------------------------------------------------------- 6. the EAMC generator's means
@pytest.mark.parametrize("argv, message", [
    (["--mean-res", "1000", "--max-res", "2"], "mean_res (--mean-res) 1000 must be in [1, max_res=2] (--max-res)"),
    (["--mean-runtime-h", "0.01"], "mean_runtime_s (--mean-runtime-h × 3600) 36 s must be above 60 s"),
])
def test_eamc_workload_names_the_mean_at_fault(capsys, tmp_path, argv, message):
    """Both were refused with 'mean_res must be in [1, max_res=512] and mean_runtime_s above 60 s'."""
    refused(capsys, ["eamc-workload", "--jobs", "3", *argv, "--output", str(tmp_path / "w.json")], message)
    assert not (tmp_path / "w.json").exists()
