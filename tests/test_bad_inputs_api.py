"""Bad input to the Python API (wattsched.api) and to what it shares with the CLI (experiments.runner,
sweep, grid): one line naming the argument or file and the field, as a WattschedError; never a traceback from
deep inside, never a silent accept, never an input overwritten by an output."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.bad_inputs_checks import one_line
from wattsched import api
from wattsched.base.errors import InputError, OptionError, OutputError
from wattsched.cli import main
from wattsched.experiments.sweep import Run, run_sweep
from wattsched.simulator.workload import load_workload

HOSTS = 4


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    platform, workload = folder / "p.xml", folder / "w.json"
    platform.write_text(api.taurus_platform(HOSTS))
    workload.write_text(json.dumps(api.synthetic_workload(HOSTS, seed=1, days=0.05, users=3)))
    return platform, workload


@pytest.fixture(scope="module")
def result(inputs, tmp_path_factory):
    return api.simulate(*inputs, out=tmp_path_factory.mktemp("run") / "out")


# ------------------------------------------------------------------------------- A2: inputs never overwritten
def test_run_refuses_an_output_prefix_whose_files_are_its_inputs(inputs, tmp_path, capsys):
    jobs, schedule = tmp_path / "run_jobs.csv", tmp_path / "run_schedule.csv"
    shutil.copy(inputs[1], jobs)
    shutil.copy(inputs[0], schedule)
    before = jobs.read_bytes(), schedule.read_bytes()
    assert main(["run", str(schedule), str(jobs), "-e", str(tmp_path / "run"), "-q"]) == 2
    assert "would overwrite its input" in capsys.readouterr().err
    assert (jobs.read_bytes(), schedule.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run_jobs.csv", "run_schedule.csv"]


def test_simulate_refuses_an_output_that_is_an_input_through_a_symbolic_link(inputs, tmp_path):
    (tmp_path / "out_jobs.csv").symlink_to(inputs[1])
    before = inputs[1].read_bytes()
    with pytest.raises(OutputError) as error:
        api.simulate(inputs[0], str(tmp_path / "out_jobs.csv"), out=tmp_path / "out")
    one_line(error, "out_jobs.csv is the workload file", longest=800)
    assert inputs[1].read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out_jobs.csv"]


def test_a_sweep_refuses_a_run_whose_outputs_are_another_runs_input(inputs, tmp_path):
    workload = tmp_path / "b_jobs.csv"
    shutil.copy(inputs[1], workload)
    runs = [Run("a", str(inputs[0]), str(inputs[1]), "fcfs", {}, str(tmp_path / "b")),
            Run("b", str(inputs[0]), str(workload), "fcfs", {}, str(tmp_path / "c"))]
    with pytest.raises(OptionError) as error:
        run_sweep(runs, workers=1, show_progress=False)
    one_line(error, "run 0 ('a')", "run 'b''s workload file", longest=800)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b_jobs.csv"]


# ------------------------------------------------------------------------------- C8, C9, E9: scheduler, options
@pytest.mark.parametrize("scheduler", [None, 3, object(), lambda: None])
def test_a_scheduler_that_is_not_a_string_is_refused_by_name(inputs, scheduler):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, scheduler)
    one_line(error, "scheduler must be a preset name, 'module:Class' or 'file.py[:Class]' string or a pybatsim "
             "BatsimScheduler class, got")


@pytest.mark.parametrize("scheduler", [int, OptionError])
def test_a_class_that_is_no_pybatsim_scheduler_is_refused_by_name(inputs, scheduler, tmp_path):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, scheduler, out=tmp_path / "out")
    one_line(error, f"scheduler {scheduler.__module__}:{scheduler.__qualname__}: a scheduler class must be a "
             "subclass of pybatsim's BatsimScheduler")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("scheduler", ["easy\nbackfill", "x" * 100_000, "nosuch." + "y" * 500])
def test_an_unknown_scheduler_name_is_quoted_short_on_one_line(inputs, scheduler):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, scheduler)
    text = one_line(error, "unknown scheduler", longest=700)
    assert scheduler[:100] not in text


@pytest.mark.parametrize("options", [[1, 2], "budget", 5])
def test_options_that_are_not_a_mapping_are_refused(inputs, options):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, "easy-backfill", options)
    one_line(error, "options must be a mapping (a dict of option names to values), got")


def test_nan_in_the_options_of_any_scheduler_is_refused_as_the_cli_json_would(inputs):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, "easy-backfill", {"x": {"y": [1.0, math.nan]}})
    one_line(error, "option 'x'.y[1]", "not a finite number")


def test_numpy_numbers_are_options_as_python_numbers_and_numpy_bools_are_not(inputs):
    result = api.simulate(*inputs, "energy-bud", {"window_end_s": np.int64(3600), "budget_fraction": np.float32(0.5)})
    assert result.metrics["nb_jobs"] > 0
    with pytest.raises(OptionError):
        api.simulate(*inputs, "energy-bud", {"window_end_s": 3600, "shutdown": np.int64(1)})
    with pytest.raises(OptionError):
        api.simulate(*inputs, "energy-bud", {"window_end_s": np.bool_(True)})


# ------------------------------------------------------------------------------- C10, C11, C13, E1-E3: inputs
@pytest.mark.parametrize("platform", [None, 5, ["p.xml"], {"a": 1}, b"<?xml version='1.0'?>"])
def test_a_platform_of_the_wrong_type_is_refused_by_name(inputs, platform):
    with pytest.raises(InputError) as error:
        api.simulate(platform, inputs[1])
    one_line(error, "platform: must be a SimGrid XML path, XML text or a loaded Platform, got")


@pytest.mark.parametrize("workload", [None, 7, [{"id": 1}], b"{}"])
def test_a_workload_of_the_wrong_type_is_refused_by_name(inputs, workload):
    with pytest.raises(InputError) as error:
        api.simulate(inputs[0], workload)
    one_line(error, "workload: must be a Batsim JSON path, JSON text, a workload dict or a loaded Workload")


@pytest.mark.parametrize("out", [5, b"/tmp/x/out"])
def test_an_output_prefix_of_the_wrong_type_is_refused_by_name(inputs, out):
    with pytest.raises(OptionError) as error:
        api.simulate(*inputs, out=out)
    one_line(error, "out must be an output prefix path (a str or os.PathLike)")


@pytest.mark.parametrize("parent_exists", [True, False])
def test_an_output_name_too_long_is_refused_before_the_run(inputs, tmp_path, parent_exists):
    parent = tmp_path if parent_exists else tmp_path / "missing"
    with pytest.raises(OutputError) as error:
        api.simulate(*inputs, out=parent / ("x" * 300))
    one_line(error, "output prefix", "cannot write there: the name", "is 309 bytes long, longer than the 255 a file system "
             "takes", longest=400)
    assert list(tmp_path.iterdir()) == []


def test_an_output_name_too_long_is_one_line_in_the_cli_too(inputs, tmp_path, capsys):
    assert main(["run", *map(str, inputs), "-e", str(tmp_path / ("x" * 300)), "-q"]) == 2
    assert "is 309 bytes long, longer than the 255 a file system takes" in capsys.readouterr().err


def test_platform_text_holding_a_lone_surrogate_is_an_input_error(inputs):
    text = inputs[0].read_text().replace("</platform>", "<!-- \ud800 --></platform>")
    with pytest.raises(InputError) as error:
        api.simulate(text, inputs[1])
    one_line(error, "<platform XML text>", "surrogate")


def test_platform_text_after_a_line_break_is_xml_text(inputs):
    assert api.simulate("\n  " + inputs[0].read_text(), inputs[1]).metrics["nb_jobs"] > 0


def test_workload_json_text_is_a_workload_and_bad_text_is_quoted_short(inputs):
    text = inputs[1].read_text()
    assert api.simulate(inputs[0], text).metrics["nb_jobs"] == len(json.loads(text)["jobs"])
    with pytest.raises(InputError) as error:
        api.simulate(inputs[0], text[:-5])
    one_line(error, "<workload JSON text>")
    with pytest.raises(InputError) as error:
        api.simulate(inputs[0], "not a file\n" * 400)
    one_line(error, "neither a file path nor JSON text", longest=200)


def test_nan_in_a_workload_dict_is_refused_with_its_path(inputs):
    workload = json.loads(inputs[1].read_text())
    workload["jobs"][0]["subtime"] = math.nan
    with pytest.raises(InputError) as error:
        api.simulate(inputs[0], workload)
    one_line(error, "<workload object>: jobs[0].subtime")


def test_a_loaded_workload_gives_per_user_metrics_as_its_file_does(inputs):
    from_file = api.simulate(*inputs).metrics
    loaded = api.simulate(inputs[0], load_workload(inputs[1])).metrics
    users = [name for name in from_file if name.startswith("mean_stretch_user")]
    assert users and all(loaded[name] == from_file[name] for name in users)


# ------------------------------------------------------------------------------- C12: compare
@pytest.mark.parametrize("results, fragment", [([1, 2], "results[0] must be a result of simulate()"),
                                                ([], "results is empty"), (None, "results must be a list")])
def test_compare_refuses_what_is_not_a_list_of_results(results, fragment):
    with pytest.raises(OptionError) as error:
        api.compare(results)
    one_line(error, fragment)


# ------------------------------------------------------------------------------- C14, C15, D6: Result
@pytest.mark.parametrize("window, power", [(None, "900"), ("1,2", None), ((100, 10), None), ((math.nan, 10), None),
                                           ((1, 2, 3), None), ((-5, 10), None), (None, -5), (None, math.nan),
                                           (None, math.inf), (None, True)])
def test_plot_power_refuses_what_plot_refuses(result, window, power):
    with pytest.raises(OptionError) as error:
        result.plot_power(window, power)
    one_line(error, "budget_")


def test_every_output_of_a_result_whose_files_are_gone_is_an_input_error(inputs):
    for name in ("schedule", "jobs", "machine_states", "consumed_energy", "pstate_changes", "metrics"):
        result = api.simulate(*inputs)
        shutil.rmtree(result.prefix.parent)
        with pytest.raises(InputError):
            getattr(result, name)


@pytest.mark.parametrize("folder", ["", "/"])
def test_a_paraver_prefix_that_is_a_folder_is_refused(result, tmp_path, folder):
    with pytest.raises(OutputError) as error:
        result.write_paraver(str(tmp_path / "traces") + folder if folder else tmp_path)
    one_line(error, "is a folder; give a prefix inside it")
    assert not list(tmp_path.parent.glob(f"{tmp_path.name}.*"))


# ------------------------------------------------------------------------------- C16: synthetic_workload
@pytest.mark.parametrize("seed", [-1, "a", None, 1.5, True])
def test_synthetic_workload_requires_an_integer_seed(seed):
    with pytest.raises(OptionError) as error:
        api.synthetic_workload(HOSTS, seed=seed)
    one_line(error, "seed must be an integer ≥ 0")


# ------------------------------------------------------------------------------- C10, D7, E11, E12: sweep
def test_sweep_arguments_of_the_wrong_type_are_refused_by_name(inputs, tmp_path):
    grid = {"platforms": [str(inputs[0])], "workloads": [str(inputs[1])], "schedulers": ["fcfs"]}
    cases = [((None, tmp_path / "o"), {}, "grid must be a grid file's path"),
             ((grid,), {"out": None}, "out (--out) must be"),
             ((grid, tmp_path / "o"), {"workers": "2"}, "workers (-j) must be an integer ≥ 1"),
             ((grid, tmp_path / "o"), {"workers": 1.5}, "workers (-j) must be an integer ≥ 1"),
             ((grid, tmp_path / "o"), {"workers": 2, "dask_scheduler": "tcp://127.0.0.1:1"}, "give one of them")]
    for args, kwargs, fragment in cases:
        with pytest.raises(OptionError) as error:
            api.sweep(*args, **kwargs)
        one_line(error, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_grid_field_of_the_wrong_kind_is_named(inputs, tmp_path):
    grid = {"platforms": [str(inputs[0])], "workloads": [str(inputs[1])], "schedulers": ["fcfs"]}
    cases = [({"name": 5}, "<grid>: name: must be a non-empty string"),
             ({"schedulers": ["fcfs", "easy-backfill", "fcfs"]}, "<grid>: schedulers[2]: the same scheduler and "
                                                                 "options as schedulers[0]"),
             ({"schedulers": [{"name": "fcfs", "options": {"x": math.nan}}]}, "<grid>: schedulers[0]: option 'x'")]
    for change, fragment in cases:
        with pytest.raises(InputError) as error:
            api.sweep({**grid, **change}, tmp_path / "o", workers=1, progress=False)
        one_line(error, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_with_workers_at_the_top_of_a_script_is_refused_before_dask_starts(inputs, tmp_path):
    script = tmp_path / "study.py"
    script.write_text(textwrap.dedent(f"""
        from wattsched import api
        grid = {{"platforms": [{str(inputs[0])!r}], "workloads": [{str(inputs[1])!r}],
                 "schedulers": ["fcfs", "easy-backfill"]}}
        try:
            api.sweep(grid, {str(tmp_path / 'o')!r}, workers=2, progress=False)
        except api.OptionError as error:
            print("refused:", error)
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert "refused:" in done.stdout and 'if __name__ == "__main__":' in done.stdout, done.stdout + done.stderr
    assert "line 6" in done.stdout

