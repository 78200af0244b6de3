"""Bad inputs hunt 37: ``wattsched sweep``, its grid and runs files.

* before: a runs file whose two prefixes write the same files under two spellings (``out/x`` and ``./out/x``,
  ``out//x``, or through a symbolic link to the folder) ran both runs, the second replacing the first one's outputs
  and stamp (a rerun simulated both again, ``-j 2`` raced on them); two runs of one name or one prefix were refused
  naming neither the runs file nor the run (``two runs of the sweep have the same name 'a'``). Now refused before
  any run: ``runs.json: run 1 ('b'): prefix: './out/x' writes the same files as run 0's prefix 'out/x'``.
* before: a runs file whose prefix puts a run's outputs under a file the sweep writes at the end
  (``<out>/results.csv/x``, ``<out>/plots/utilization.png/x``) or under another run's output (``x_jobs.csv/y``) ran
  every run, then stopped on ``cannot write OUT/results.csv: it is a folder`` (the plots case after writing the
  table: half the results), or failed that run (exit 1). Now refused before any run, naming the run and the file.
* before: a grid of two entries of the same contents (a copy of a workload file, ``{taurus: {hosts: 16}}`` beside
  ``taurus_16.xml``, a synthetic workload with its default ``load: 0.85`` written out beside one without) stopped
  on ``two runs of the sweep have the same prefix 'OUT/runs/<key>/out'``, naming neither the grid nor its field.
  Now ``grid.yaml: workloads[1]: the same contents as workloads[0]: runs ... would be one simulation``.
* before: a grid's scheduler name with spaces around it (``' fcfs'``, which the runs take as ``fcfs``) beside
  ``fcfs`` made two runs of one simulation under two names. Now the name is taken as the runs take it, and the
  second entry is refused as the same scheduler and options.
* before: the table of a sweep whose runs' jobs end in different final states gave NaN (an empty CSV cell, a float
  column) in a count such as ``nb_jobs_completed_walltime_reached`` for every run none of whose jobs ended so, where
  the value is 0. Now 0 (integer counts) in every measured run's row; a failed run's row stays empty.

Checked and found clean: YAML anchors and merge keys (``<<``, a list of them, at the top level), ``!!python/object``
and other unsafe tags, several documents, duplicate keys (in a JSON grid too), ``!!set``, ``!!omap``, ``!!binary``,
dates in seeds, windows and options, empty axes and options, tabs, a key ``~``; ``--out`` a file or under one;
a rerun after editing one workload (only its runs simulated), after deleting one output (only that run), with
``--force``; two sweeps into one ``--out`` at once; Ctrl-C while running, then a rerun finishing the rest.

The sweeps run one job on two hosts, in this process (``-j 1``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.bad_inputs_checks import refused
from wattsched import api
from wattsched.base.errors import InputError
from wattsched.cli import main
from wattsched.experiments.grid import grid_runs, parse_grid

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    platform = tmp_path / "two.xml"
    platform.write_text(api.taurus_platform(2))
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    return platform, workload


def _runs_file(tmp_path: Path, inputs: tuple[Path, Path], *prefixes: str, names: tuple[str, ...] = ()) -> Path:
    platform, workload = inputs
    runs = [{"name": names[i] if names else f"r{i}", "platform": str(platform), "workload": str(workload),
             "scheduler": "fcfs", "options": {}, "prefix": prefix} for i, prefix in enumerate(prefixes)]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    return path


# ------------------------------------------------------------------------ 1. a runs file: prefixes and names
@pytest.mark.parametrize("second", ["./{d}/x", "{d}//x", "{d}/sub/../x", "link/x"])
def test_two_prefixes_of_the_same_files_are_refused_before_any_run(capsys, tmp_path, monkeypatch, inputs, second):
    folder = tmp_path / "o"
    (folder / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(folder)
    monkeypatch.chdir(tmp_path)
    runs = _runs_file(tmp_path, inputs, "o/x", second.format(d="o"))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            "runs.json: run 1 ('r1'): prefix:", "writes the same files as run 0's prefix 'o/x'")
    assert not (tmp_path / "out").exists() and os.listdir(folder) == ["sub"]


def test_two_runs_of_one_name_or_prefix_name_the_runs_file(capsys, tmp_path, inputs):
    runs = _runs_file(tmp_path, inputs, str(tmp_path / "a"), str(tmp_path / "b"), names=("a", "a"))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            "runs.json: run 1 ('a'): name: the same as run 0's, 'a'")
    runs = _runs_file(tmp_path, inputs, str(tmp_path / "a"), str(tmp_path / "a"))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            "runs.json: run 1 ('r1'): prefix: the same as run 0's")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("a_*"))


@pytest.mark.parametrize("under", ["results.csv", "results.parquet", "plots/utilization.png"])
def test_a_prefix_under_a_file_the_sweep_writes_at_the_end_is_refused_before_any_run(capsys, tmp_path, inputs, under):
    out = tmp_path / "out"
    runs = _runs_file(tmp_path, inputs, str(out / under / "x"))
    refused(capsys, ["sweep", str(runs), "--out", str(out), "-j", "1", "-q"],
            "runs.json: run 0 ('r0'): prefix:", f"puts its outputs under {out / under}, a file the sweep writes")
    assert not out.exists()


def test_a_prefix_under_another_runs_output_is_refused_before_any_run(capsys, tmp_path, inputs):
    runs = _runs_file(tmp_path, inputs, str(tmp_path / "a"), str(tmp_path / "a_jobs.csv" / "b"))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            "runs.json: run 1 ('r1'): prefix:", f"under {tmp_path / 'a_jobs.csv'}, a file run 0 ('r0') writes")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("a_*"))


# ------------------------------------------------------------------------ 2. a grid: entries of one simulation
def test_grid_entries_of_the_same_contents_name_their_field(tmp_path, inputs):
    platform, workload = inputs
    copy = tmp_path / "copy" / "other.json"
    copy.parent.mkdir()
    copy.write_text(workload.read_text())
    cases = [
        ({"platforms": [str(platform)], "workloads": [str(workload), str(copy)], "schedulers": ["fcfs"]},
         "workloads[1]: the same contents as workloads[0]"),
        ({"platforms": [str(platform), {"taurus": {"hosts": 2}}], "workloads": [str(workload)],
          "schedulers": ["fcfs"]}, "platforms[1]: the same contents as platforms[0]"),
        ({"platforms": [str(platform)], "workloads": [{"synth": {"hosts": 2, "days": 0.05}},
                                                      {"synth": {"hosts": 2, "days": 0.05, "load": 0.85}}],
          "schedulers": ["fcfs"]}, "workloads[1]: the same contents as workloads[0]"),
    ]
    for grid, field in cases:
        with pytest.raises(InputError, match=f"^grid.yaml: {re.escape(field)}: runs .* would be one simulation"):
            grid_runs(parse_grid(grid, "grid.yaml"), tmp_path / "out")
        assert not (tmp_path / "out").exists()


def test_a_scheduler_name_with_spaces_is_the_scheduler(tmp_path, inputs):
    platform, workload = inputs
    grid = {"platforms": [str(platform)], "workloads": [str(workload)], "schedulers": [" fcfs ", "fcfs"]}
    with pytest.raises(InputError, match=r"schedulers\[1\]: the same scheduler and options as schedulers\[0\]"):
        grid_runs(parse_grid(grid, "grid.yaml"), tmp_path / "out")
    runs = grid_runs(parse_grid({**grid, "schedulers": [{"name": " fcfs\t"}]}, "grid.yaml"), tmp_path / "out")
    assert [run.scheduler for run in runs] == ["fcfs"] and runs[0].name.startswith("fcfs | ")


def test_grid_entries_a_preset_reads_alike_are_one_simulation(tmp_path, inputs):
    """A number option written 600 and 600.0, or a default written out beside none, made two runs of one simulation
    (noticed in earlier sessions); a run's folder keeps the key of its options as given (earlier sweeps resume)."""
    platform, workload = inputs
    base = {"platforms": [str(platform)], "workloads": [str(workload)]}
    cases = [
        ({"schedulers": [{"name": "energy-bud", "options": {"budget_fraction": 0.6, "window_end_s": 600}},
                         {"name": "energy-bud", "options": {"budget_fraction": 0.6, "window_end_s": 600.0}}]},
         "schedulers[1]: the same scheduler and options as schedulers[0]"),
        ({"schedulers": ["easy-backfill"], "options": [{}, {"placement": "first-fit"}]},
         "options[1]: the same options as options[0]"),
    ]
    for grid, field in cases:
        with pytest.raises(InputError, match=f"^grid.yaml: {re.escape(field)}: runs .* would be one simulation"):
            grid_runs(parse_grid({**base, **grid}, "grid.yaml"), tmp_path / "out")
        assert not (tmp_path / "out").exists()
    runs = grid_runs(parse_grid({**base, "schedulers": ["easy-backfill"],
                                 "options": [{}, {"placement": "best-fit"}]}, "grid.yaml"), tmp_path / "out")
    assert len(runs) == 2
    again = grid_runs(parse_grid({**base, "schedulers": ["easy-backfill"], "options": [{}]}, "grid.yaml"),
                      tmp_path / "out")
    assert again[0].prefix == runs[0].prefix  # the folder of the options as given: unchanged


# ------------------------------------------------------------------------ 3. the table
def test_a_final_state_no_job_of_a_run_ended_in_is_counted_0_not_nan(tmp_path, inputs):
    platform, workload = inputs
    killed = tmp_path / "killed.json"  # its job reaches its walltime
    killed.write_text(json.dumps({**ONE_JOB, "jobs": [{**ONE_JOB["jobs"][0], "walltime": 2}]}))
    grid = {"platforms": [str(platform)], "workloads": [str(workload), str(killed)], "schedulers": ["fcfs"]}
    frame = api.sweep(grid, tmp_path / "out", workers=1, progress=False)
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    for counts in (frame, table):
        assert counts["nb_jobs_completed_walltime_reached"].tolist() == [0, 1]
        assert counts["nb_jobs_completed_successfully"].tolist() == [1, 0]
        assert counts["nb_jobs_completed_successfully"].dtype == "int64"


def test_a_sweep_of_failed_runs_leaves_no_earlier_sweeps_plots(capsys, tmp_path, inputs):
    out = tmp_path / "out"
    assert main(["sweep", str(_runs_file(tmp_path, inputs, str(tmp_path / "a"))), "--out", str(out), "-j", "1",
                 "-q"]) == 0
    assert len(list((out / "plots").glob("*.png"))) == 5
    runs = _runs_file(tmp_path, (inputs[0], tmp_path / "missing.json"), str(tmp_path / "b"))
    assert main(["sweep", str(runs), "--out", str(out), "-j", "1", "-q"]) == 1
    assert "0 comparison plots" in capsys.readouterr().out
    assert list((out / "plots").glob("*")) == []  # (they drew the first sweep's run, not this one's)
