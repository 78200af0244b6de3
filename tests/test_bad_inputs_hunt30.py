"""Bad inputs hunt 30: the Python API (``simulate``, ``sweep``, ``compare``, ``Result``) as a notebook calls it.

* before: ``api.simulate(P, {"nb_res": 2, "jobs": tuple(jobs), "profiles": ...})`` simulated (the run reads the dict
  as JSON, a list), then ``Result.metrics`` said ``<workload>: jobs: missing or not a list``. Now the metrics read
  the jobs as the run did.
* before: ``api.simulate(..., out="~/runs/a")`` (also ``sweep(out=...)``, ``Result.write_paraver``, a quoted
  ``wattsched run -e '~/runs/a'``) made a folder named ``~`` in the current one, then the outputs were read from the
  home folder (pandas expands ``~``): ``file not found``, every run of a sweep ``failed``, or another run's files
  read in their place. Now refused before any work, naming the argument and the path meant.
* before: ``Result`` kept a relative ``out`` (and workload path) as given: after a notebook's ``os.chdir`` its lazy
  outputs and metrics were those of another run written at the same relative place, without a word. Now absolute.
* before: a grid holding two unknown keys of which one is a number (``{..., 5: 1, "x": 2}``; a YAML ``1: a``
  beside ``x: b``) gave a TypeError traceback (sorting them); a grid's file entry longer than the system takes gave
  an OSError traceback (``File name too long``), one holding a line break (or XML text given as a file) an error of
  many lines, a NUL was printed raw, an empty one said ``no file`` and nothing. Now one line naming the field.
* before: a grid built in Python giving a pybatsim scheduler an option that is no JSON value (``b"x"``, an object)
  gave a TypeError traceback (the run's key hashes the options' JSON). Now refused, naming ``schedulers[i]``.
* before: ``api.compare`` of two results of one label (one scheduler on two platforms) made two columns of one name
  (``table["fcfs"]`` a frame, ``table.to_json()`` a ValueError). Now ``fcfs``, ``fcfs #2``.
* before: a float option given an integer beyond a double (``{"window_end_s": 10**400}``) said it ``must be a
  number``. Now ``must be a finite number``.
* before: ``window=(0, 1e-300), max_power_w=1e-300`` (also ``wattsched metrics --window 0,1e-300 --max-power
  1e-300``) gave a ZeroDivisionError traceback: the window's maximum energy underflows to 0. Now refused as a
  maximum whose ratio is beyond a double.

Every run simulates one job on two Taurus hosts; the sweeps run in this process (``workers=1``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import one_line, refused, two_host_inputs, usage_error
from wattsched import api
from wattsched.base.errors import InputError, OptionError, OutputError

JOB = {"id": "1", "subtime": 0, "res": 1, "profile": "a", "walltime": 100, "user": "ann"}
WORKLOAD = {"nb_res": 2, "jobs": [JOB], "profiles": {"a": {"type": "delay", "delay": 10}}}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    return two_host_inputs(tmp_path_factory.mktemp("inputs"), WORKLOAD)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder of its own, the current folder another one (where a folder named '~' would be made)."""
    (tmp_path / "home").mkdir()
    (tmp_path / "here").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "here")
    return tmp_path / "home"


def _nothing_written(home: Path) -> None:
    assert list(home.iterdir()) == [] and list((home.parent / "here").iterdir()) == []


# ------------------------------------------------------------------------------- 1. a workload dict's tuple
def test_a_workload_dict_whose_jobs_are_a_tuple_has_metrics(inputs):
    result = api.simulate(inputs[0], {**WORKLOAD, "jobs": (JOB,)})
    assert result.metrics["nb_jobs"] == 1 and result.metrics["mean_stretch_user_ann"] == 1.0


# ------------------------------------------------------------------------------- 2. '~' in an output path
def test_simulate_refuses_an_output_prefix_under_a_tilde(inputs, home):
    for out in ("~/runs/a", Path("~/runs/a"), "./~/runs/a"):
        with pytest.raises(OutputError) as error:
            api.simulate(*inputs, out=out)
        one_line(error, "output prefix (out, -e)", "starts with '~'", repr(str(home / "runs" / "a")))
    _nothing_written(home)


def test_sweep_and_paraver_refuse_a_tilde(inputs, home):
    grid = {"platforms": [str(inputs[0])], "workloads": [str(inputs[1])], "schedulers": ["fcfs"]}
    with pytest.raises(OutputError) as error:
        api.sweep(grid, "~/study", workers=1, progress=False)
    one_line(error, "out (--out) ~/study: starts with '~'")
    result = api.simulate(*inputs)
    with pytest.raises(OutputError) as error:
        result.write_paraver("~/traces/run")
    one_line(error, "prefix ~/traces/run: starts with '~'")
    _nothing_written(home)


def test_the_cli_refuses_a_quoted_tilde(inputs, home, capsys):
    usage_error(capsys, ["run", *map(str, inputs), "-e", "~/runs/a", "-q"], "-e/--export", "starts with '~'")
    _nothing_written(home)


def test_a_tilde_not_first_or_of_no_user_is_a_folder_name(inputs, home):
    assert api.simulate(*inputs, out="sub/~/out").metrics["nb_jobs"] == 1
    assert api.simulate(*inputs, out="~no-such-user-hunt30/out").metrics["nb_jobs"] == 1


# ------------------------------------------------------------------------------- 3. a Result after os.chdir
def test_a_result_reads_its_own_files_after_a_change_of_folder(inputs, tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "w.json").write_text(json.dumps(WORKLOAD))
    monkeypatch.chdir(tmp_path / "a")
    first = api.simulate(inputs[0], "w.json", out="run/out")
    monkeypatch.chdir(tmp_path / "b")
    later = {**WORKLOAD, "jobs": [{**JOB, "subtime": 500, "user": "bob"}]}
    (tmp_path / "b" / "w.json").write_text(json.dumps(later))
    second = api.simulate(inputs[0], "w.json", out="run/out")
    assert first.prefix == tmp_path / "a" / "run" / "out"
    assert first.metrics["makespan_s"] == 10.0 and second.metrics["makespan_s"] == 510.0
    assert "mean_stretch_user_ann" in first.metrics and "mean_stretch_user_bob" not in first.metrics


# ------------------------------------------------------------------------------- 4. grid fields
def _grid(inputs: tuple[Path, Path], **change) -> dict:
    return {"platforms": [str(inputs[0])], "workloads": [str(inputs[1])], "schedulers": ["fcfs"], **change}


def test_unknown_grid_keys_of_several_types_are_named(inputs, tmp_path):
    with pytest.raises(InputError) as error:
        api.sweep({**_grid(inputs), 5: 1, "x": 2}, tmp_path / "o", workers=1, progress=False)
    one_line(error, "<grid>: 5: unknown field")
    assert list(tmp_path.iterdir()) == []


def test_a_yaml_grid_with_a_number_key_is_one_line(inputs, tmp_path, capsys):
    grid = tmp_path / "g.yaml"
    grid.write_text(f"platforms: [{inputs[0]}]\nworkloads: [{inputs[1]}]\nschedulers: [fcfs]\n1: a\nx: b\n")
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / "o"), "-j", "1"], "g.yaml: 1: unknown field")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("key", ["platforms", "workloads"])
@pytest.mark.parametrize("entry, shown", [("x" * 300, "no file 'xxxxxxxx"), ("y" * 5000, "no file 'yyyyyyyy"),
                                          ("a\nb", r"no file 'a\nb'"), ("a\0b", r"no file 'a\x00b'"),
                                          ("", "no file ''"), ("<?xml version='1.0'?>\n<a/>", "no file \"<?xml")])
def test_a_grid_file_entry_that_names_no_file_is_one_line(inputs, tmp_path, key, entry, shown):
    with pytest.raises(InputError) as error:
        api.sweep(_grid(inputs, **{key: [entry]}), tmp_path / "o", workers=1, progress=False)
    one_line(error, f"<grid>: {key}[0]: ", shown)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [b"x", object(), {1, 2}])
def test_a_grid_option_that_is_no_json_value_is_refused(inputs, tmp_path, value):
    grid = _grid(inputs, schedulers=[{"name": "random", "options": {"x": value}}])
    with pytest.raises(InputError) as error:
        api.sweep(grid, tmp_path / "o", workers=1, progress=False)
    one_line(error, "<grid>: schedulers[0]: options must be JSON values")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------- 5. compare, options
def test_compare_tells_apart_results_of_one_label(inputs):
    taurus = api.simulate(*inputs, "fcfs")
    esc = api.simulate(api.esc_platform(2), inputs[1], "fcfs")
    table = api.compare([taurus, esc, taurus])
    assert list(table.columns) == ["fcfs", "fcfs #2", "fcfs #3"]
    json.loads(table.to_json())


def test_a_float_option_beyond_a_double_is_said_not_finite(inputs):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, "energy-bud", {"window_end_s": 10 ** 400, "budget_fraction": 0.5})
    one_line(error, "option 'window_end_s' of energy-bud must be a finite number, got 1000")
    assert "must be a number" not in str(error.value)



def test_metrics_refuse_a_maximum_energy_that_underflows(capsys):
    run = Path(__file__).parent / "fixtures" / "batsim-reference" / "fcfs-compute"
    from wattsched.analysis.metrics import compute_metrics

    with pytest.raises(OptionError) as error:
        compute_metrics(run / "out", window=(0.0, 1e-300), max_power_w=1e-300)
    one_line(error, "max_power_w (--max-power) 1e-300 W", "beyond a double")
    refused(capsys, ["metrics", str(run / "out"), "--window", "0,1e-300", "--max-power", "1e-300"],
            "max_power_w (--max-power) 1e-300 W")
