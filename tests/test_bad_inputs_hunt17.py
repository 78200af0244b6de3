"""Bad inputs hunt 17: scheduler options, the Python API and the web page's option fields, and the paths the system
refuses, that still gave a traceback, a silent accept or an error naming a file that no longer exists.

* A file or folder name longer than the system takes (255 bytes a name, 4096 a path) gave an OSError traceback
  (``File name too long``, exit 1): ``sweep --out``, ``plot -d``, ``regress --update`` (a golden folder), the
  result folders read by ``metrics``/``regress``/``node-stats``/``plot``/``paraver``, ``replay``, ``swf``, an
  EAMC ``ear_model``; through the API ``sweep(out=)`` and ``Result.write_paraver(prefix)``, which also gave a
  ValueError (``embedded null byte``) for a NUL.
* ``api.sweep(out="r\\n")`` and ``Result.write_paraver("p\\n")`` wrote names ending in a line break (a sweep made
  the folder, then every run failed); the CLI's ``--out``/``-d`` and ``api.simulate(out=)`` refuse them.
* An empty or blank ``ear_model`` read the current folder ("/work/modules: missing: the EAR model needs this
  file") instead of naming the option.
* Options given to the API whose mappings have keys JSON has no object for: ``{"shares": {("a",): 1}}`` ran, then a
  sweep gave a TypeError (its run key hashes the options' JSON); a YAML grid's ``shares: {1: 2, alice: 3}`` (an
  integer key beside a string: no order for ``sort_keys``) a TypeError traceback from ``wattsched sweep``. Keys are
  now strings (a number's as the pieces read it, ``str(1)``), others refused; lone surrogates in option strings
  are refused as the CLI's JSON reader refuses them.
* A web form field ``opt.`` (an option without a name) was dropped and the run created; ``-o '{"": 1}'`` is refused.
* A budget over a window so short that its rate B / (te − ts) (the powercap) is infinite ran, constraining nothing.
* A workload given as JSON text named a deleted temporary file (``/tmp/tmpXXXX/workload.json``) in the errors of
  the checks before the run (a job's ``energy_factor``) and in the host speed warning; a workload dict named it in
  that warning too.

Every refusal happens before any work and writes nothing; the result-folder checks read copies of real Batsim's
recordings, the API checks that need a result simulate one job on two hosts.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused
from wattsched import api
from wattsched.base.errors import InputError, OptionError, OutputError
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}
#: A name no file system takes (more than 255 bytes).
LONG = "d" * 300


def _grid(tmp_path: Path, options: dict | None = None) -> dict:
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    scheduler = "fcfs" if options is None else {"name": "fairshare", "options": options}
    return {"platforms": [PLATFORM], "workloads": [str(workload)], "schedulers": [scheduler]}


@pytest.fixture(scope="module")
def result():
    return api.simulate(api.taurus_platform(2), ONE_JOB, "fcfs")


# ------------------------------------------------------------------------------- 1. names the system refuses
def test_sweep_refuses_an_out_folder_whose_name_is_too_long(capsys, tmp_path):
    """It gave an OSError traceback (File name too long) and exit status 1."""
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(_grid(tmp_path)))
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / LONG), "-j", "1", "-q"], "cannot write there",
            "300 bytes long", "255")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.json", "one.json"]


@pytest.mark.parametrize("command", ["plot", "regress"])
def test_plot_and_regress_update_refuse_a_folder_whose_name_is_too_long(capsys, tmp_path, command):
    """``plot -d LONG`` and ``regress RUN LONG --update`` gave an OSError traceback."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    argv = {"plot": ["plot", str(outputs / "out"), "-d", str(tmp_path / LONG)],
            "regress": ["regress", str(outputs / "out"), str(tmp_path / LONG), "--update"]}[command]
    refused(capsys, argv, "cannot write there", "255")
    assert [p.name for p in tmp_path.iterdir()] == ["outputs"]


@pytest.mark.parametrize("argv", [["metrics", "{long}/out"], ["node-stats", "{long}"], ["paraver", "{long}"],
                                  ["regress", "{run}/out", "{long}"], ["replay", "{long}"], ["swf", "{long}.swf"]])
def test_inputs_whose_name_is_too_long_are_refused_in_one_line(capsys, tmp_path, argv):
    """Each gave an OSError traceback (``Path.is_dir``/``exists`` raise ENAMETOOLONG) and exit status 1."""
    run = recording_outputs(tmp_path / "run", "fcfs-compute")
    refused(capsys, [a.replace("{long}", str(tmp_path / LONG)).replace("{run}", str(run)) for a in argv],
            "File name too long")


def test_the_api_refuses_output_names_the_system_refuses(tmp_path, result):
    """``sweep(out=...)`` and ``write_paraver(...)``: a NUL gave a ValueError (embedded null byte), a name too long an
    OSError; a line break made the sweep's folder (every run then failed) or wrote ``p\\n.prv``."""
    grid = _grid(tmp_path)
    for out in (str(tmp_path / LONG), str(tmp_path / "s\0"), str(tmp_path / "s\n")):
        with pytest.raises(OutputError, match=r"out \(--out\)"):
            api.sweep(grid, out, workers=1, progress=False)
    for prefix in (str(tmp_path / LONG), str(tmp_path / "p\0"), str(tmp_path / "p\n"), str(tmp_path / "p\x1b")):
        with pytest.raises(OutputError, match="prefix"):
            result.write_paraver(prefix)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.json"]


def test_paraver_still_writes_plain_names(tmp_path, result):
    written = result.write_paraver(tmp_path / "trace")
    assert sorted(p.name for p in written) == ["trace.pcf", "trace.prv", "trace.row"]


# --------------------------------------------------------------------------------------------- 2. ear_model
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_ear_model_is_refused_naming_the_option(capsys, tmp_path, value):
    """It read the current folder: "/work/main/modules: missing: the EAR model needs this file"."""
    refused(capsys, ["run", PLATFORM, WORKLOAD, "-s", "eamc-reorder", "-o", json.dumps({"ear_model": value}),
                     "-e", str(tmp_path / "out"), "-q"], "option 'ear_model' is empty")
    assert list(tmp_path.iterdir()) == []


def test_an_ear_model_whose_name_is_too_long_is_refused(capsys, tmp_path):
    """It gave an OSError traceback (File name too long) and exit status 1."""
    refused(capsys, ["run", PLATFORM, WORKLOAD, "-s", "eamc-reorder", "-o", json.dumps({"ear_model": f"/tmp/{LONG}"}),
                     "-e", str(tmp_path / "out"), "-q"], "option 'ear_model'", "255")
    assert list(tmp_path.iterdir()) == []


def test_an_ear_model_with_a_nul_is_refused_by_the_api():
    """It said "/tmp/<NUL>: not a folder of EAR model data", the NUL raw in the message."""
    with pytest.raises(OptionError, match="option 'ear_model' .*NUL"):
        api.simulate(PLATFORM, ONE_JOB, "eamc-reorder", {"ear_model": "/tmp/\0x"})


def test_load_ear_model_names_a_folder_it_cannot_read():
    from wattsched.energy_models.ear import load_ear_model

    with pytest.raises(InputError, match="cannot read the folder"):
        load_ear_model(f"/tmp/{LONG}")


# ------------------------------------------------------------------------------------ 3. keys of options
def test_option_keys_json_cannot_hold_are_refused_before_the_sweep(tmp_path):
    """``{"shares": {("a",): 1}}`` ran, then the sweep gave a TypeError (keys must be str, int, float, bool or
    None, not tuple)."""
    with pytest.raises(InputError, match=r"option 'shares': keys are strings.*tuple"):
        api.sweep(_grid(tmp_path, {"shares": {("a",): 1}}), tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists()


def test_a_yaml_grid_with_number_and_name_keys_is_read(capsys, tmp_path):
    """``shares: {1: 2, alice: 3}`` gave a TypeError traceback ('<' not supported between 'str' and 'int') from
    ``wattsched sweep`` once every input was generated; the keys are now the strings the pieces read."""
    from wattsched.experiments.grid import grid_runs, load_grid

    grid = tmp_path / "grid.yaml"
    spec = _grid(tmp_path)
    grid.write_text(f"platforms: [{PLATFORM}]\nworkloads: [{spec['workloads'][0]}]\n"
                    "schedulers:\n  - {name: fairshare, options: {shares: {1: 2, alice: 3}}}\n")
    (run,) = grid_runs(load_grid(str(grid)), tmp_path / "out")
    assert run.options == {"shares": {"1": 2, "alice": 3}}


def test_check_options_makes_keys_strings_and_refuses_what_json_has_not():
    import numpy as np

    from wattsched.experiments.runner import check_options

    assert check_options({"shares": {1: 2, np.int64(3): 1, "a": 1}}) == {"shares": {"1": 2, "3": 1, "a": 1}}
    with pytest.raises(OptionError, match="the keys 1 and '1' both name '1'"):
        check_options({"shares": {1: 2, "1": 3}})
    with pytest.raises(OptionError, match="surrogate"):
        check_options({"shares": {"\udc80": 1}})
    with pytest.raises(OptionError, match="surrogate"):
        check_options({"ear_model": "/x\ud800"})
    with pytest.raises(OptionError, match="not a finite number"):
        check_options({"shares": {float("nan"): 1}})


# ---------------------------------------------------------------------------------------------- 4. web page
def test_a_web_option_field_without_a_name_is_refused(tmp_path):
    """A field ``opt.`` was dropped: the run was created as if it were not there."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web import EASY, TestClient, create_app
    from tests.test_web_bad_inputs import errors_on, no_run_made

    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as client:
        # a second error (no such workload): a regression is a 400 without the message, never a run
        response = client.post("/runs", data={**EASY, "opt.": "1", "workload": "shipped:nothere.json"})
    assert response.status_code == 400
    assert any("unknown option '' for easy-backfill" in e for e in errors_on(response.text)), errors_on(response.text)
    no_run_made(tmp_path / "ws")


def test_web_options_without_the_empty_field_are_still_taken():
    from wattsched.web.forms import options_from_form

    options, _, errors = options_from_form("easy-backfill", {"opt.placement": "best-fit", "opt.": " "})
    assert errors == {} and options == {"placement": "best-fit"}


# -------------------------------------------------------------------------- 5. workloads given as JSON text
def test_a_json_text_workload_is_named_as_such_in_the_checks_before_the_run():
    """It named ``/tmp/tmpXXXX/workload.json``, a temporary file removed by then."""
    bad = json.loads(json.dumps(ONE_JOB))
    bad["jobs"][0]["energy_factor"] = -1
    with pytest.raises(InputError, match=r"^<workload JSON text>: job .*energy_factor"):
        api.simulate(PLATFORM, json.dumps(bad), "fcfs")


@pytest.mark.parametrize("kind", ["text", "dict"])
def test_the_speed_warning_names_the_workload_object(caplog, kind):
    """The warning named the temporary file the dict or JSON text was read from."""
    workload = {**ONE_JOB, "meta": {"speed_flops": 5}}
    with caplog.at_level(logging.WARNING):
        api.simulate(api.taurus_platform(2), json.dumps(workload) if kind == "text" else workload, "fcfs")
    (line,) = [r.getMessage() for r in caplog.records if "speed_flops" in r.getMessage()]
    assert line.startswith("<workload JSON text>" if kind == "text" else "<workload object>"), line
    assert os.sep + "tmp" not in line


# ------------------------------------------------------------------------------------------ 6. budget windows
@pytest.mark.parametrize("preset", ["powercap", "energy-bud", "reduce-pc"])
def test_a_budget_over_a_window_too_short_for_its_rate_is_refused(capsys, tmp_path, preset):
    """``{"budget_j": 1e308, "window_end_s": 1e-300}`` ran: its rate B / (te − ts), the powercap, was infinite, so
    the budget constrained nothing."""
    refused(capsys, ["run", PLATFORM, WORKLOAD, "-s", preset, "-o", '{"budget_j": 1e308, "window_end_s": 1e-300}',
                     "-e", str(tmp_path / "o" / "out"), "-q"],
            "option 'budget_j' 1e+308 J over a window of 1e-300 s", "beyond the largest number a double holds")
    assert not (tmp_path / "o").exists()
