"""Bad inputs hunt 19: what a sweep's folder (or a run's) already holds where an output goes, and the tags of a
sweep's runs file.

* ``sweep GRID --out OUT`` checked only ``OUT/results.csv`` before the runs: ``OUT/plots`` left as a file,
  ``OUT/results.parquet`` as a folder, ``OUT/plots/utilization.png`` as a folder were found once every run had
  ended, ``results.csv`` already rewritten ("cannot write OUT/plots/utilization.png: Not a directory"); a file
  where a run's folder goes (``OUT/runs/<key>``) made that run fail (exit 1) instead of refusing the sweep.
* A generated input of a grid (``OUT/inputs/taurus_2.xml``) was read to compare it with what the sweep would
  write: a folder there gave an IsADirectoryError traceback, a FIFO blocked the sweep for ever, a file that is
  not UTF-8 a UnicodeDecodeError traceback (it is now replaced, as a file of other contents is).
* An output over a FIFO (``run -e R/out`` with ``R/out_jobs.csv`` a FIFO) was refused only once the simulation
  had ended, when its files were renamed into place: every check of an output location refuses it now, before
  the work.
* A runs file's ``tags`` named like a column the sweep fills itself (``prefix``, ``scheduler``, ``status``...)
  replaced the run's own value in ``results.csv`` without a word (``"prefix": "elsewhere"``), or vanished.

The sweeps run one job on two hosts, in this process (``-j 1``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused
from wattsched import api
from wattsched.base.errors import OutputError
from wattsched.cli import main

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _grid(tmp_path: Path, generated: bool = False) -> Path:
    """A grid of one run: fcfs on two Taurus hosts (generated into OUT/inputs, or a file) and one job."""
    platform = tmp_path / "two.xml"
    platform.write_text(api.taurus_platform(2))
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps(ONE_JOB))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"platforms": [{"taurus": {"hosts": 2}} if generated else str(platform)],
                                "workloads": [str(workload)], "schedulers": ["fcfs"]}))
    return grid


def _not_a_file(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text("not a folder\n")


# ------------------------------------------------------------------------ 1. sweep: the table and the plots
@pytest.mark.parametrize("name, kind, shown", [
    ("plots", "file", "plots is a file, not a folder"),
    ("plots/utilization.png", "folder", "utilization.png is a folder, not a file"),
    ("results.parquet", "folder", "results.parquet is a folder, not a file"),
    pytest.param("results.parquet", "fifo", "not a regular file", marks=needs_fifo),
])
def test_sweep_refuses_an_out_it_cannot_write_the_table_or_plots_into_before_any_run(capsys, tmp_path, name, kind,
                                                                                      shown):
    """They were found once every run had ended, results.csv already written."""
    out = tmp_path / "out"
    _not_a_file(out / name, kind)
    refused(capsys, ["sweep", str(_grid(tmp_path)), "--out", str(out), "-j", "1", "-q"], f"--out {out}", shown)
    assert sorted(p.name for p in out.iterdir()) == [Path(name).parts[0]]  # no run, no table


def test_sweep_refuses_a_file_where_a_runs_folder_goes(capsys, tmp_path):
    """The run failed (exit 1, "is a file, not a folder") while the sweep went on."""
    from wattsched.experiments.grid import grid_runs, load_grid

    grid, out = _grid(tmp_path), tmp_path / "out"
    [run] = grid_runs(load_grid(grid), out)
    _not_a_file(Path(run.prefix).parent, "file")
    refused(capsys, ["sweep", str(grid), "--out", str(out), "-j", "1", "-q"], f"out (--out) {out}",
            "is a file, not a folder")
    assert not (out / "results.csv").exists()


def test_the_api_sweep_refuses_them_too(tmp_path):
    out = tmp_path / "out"
    _not_a_file(out / "plots", "file")
    with pytest.raises(OutputError, match="plots is a file, not a folder"):
        api.sweep(_grid(tmp_path), out, workers=1)
    assert sorted(p.name for p in out.iterdir()) == ["plots"]


def test_a_sweep_still_runs_and_resumes_in_its_own_folder(capsys, tmp_path):
    grid, out = _grid(tmp_path, generated=True), tmp_path / "out"
    assert main(["sweep", str(grid), "--out", str(out), "-j", "1", "-q"]) == 0
    assert main(["sweep", str(grid), "--out", str(out), "-j", "1", "-q"]) == 0
    assert "1 skipped" in capsys.readouterr().out
    assert (out / "plots" / "utilization.png").is_file()


# ---------------------------------------------------------------------------- 2. sweep: generated inputs
@pytest.mark.parametrize("kind, shown", [
    ("folder", "taurus_2.xml is a folder, not a file"),
    pytest.param("fifo", "not a regular file", marks=needs_fifo),
])
def test_a_folder_or_fifo_where_a_generated_input_goes_is_refused(capsys, tmp_path, kind, shown):
    """A folder: IsADirectoryError traceback; a FIFO: the sweep blocked for ever reading it."""
    out = tmp_path / "out"
    _not_a_file(out / "inputs" / "taurus_2.xml", kind)
    refused(capsys, ["sweep", str(_grid(tmp_path, generated=True)), "--out", str(out), "-j", "1", "-q"],
            f"out (--out) {out}", shown)
    assert sorted(p.name for p in out.rglob("*")) == ["inputs", "taurus_2.xml"]


def test_a_generated_input_of_other_bytes_is_replaced(capsys, tmp_path):
    """A file there that is not UTF-8 gave a UnicodeDecodeError traceback."""
    out = tmp_path / "out"
    target = out / "inputs" / "taurus_2.xml"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\xff\xfe not a platform")
    assert main(["sweep", str(_grid(tmp_path, generated=True)), "--out", str(out), "-j", "1", "-q"]) == 0
    assert target.read_text() == api.taurus_platform(2)


# ------------------------------------------------------------------------------- 3. outputs over a FIFO
@needs_fifo
def test_run_refuses_an_output_over_a_fifo_before_simulating(capsys, tmp_path, monkeypatch):
    """The run simulated to the end, then its outputs could not be renamed over the FIFO."""
    import wattsched.experiments.runner as runner

    monkeypatch.setattr(runner, "write_outputs", lambda *a, **k: pytest.fail("simulated before the check"))
    platform, workload = tmp_path / "two.xml", tmp_path / "one.json"
    platform.write_text(api.taurus_platform(2))
    workload.write_text(json.dumps(ONE_JOB))
    _not_a_file(tmp_path / "r" / "out_jobs.csv", "fifo")
    refused(capsys, ["run", str(platform), str(workload), "-s", "fcfs", "-e", str(tmp_path / "r" / "out"), "-q"],
            f"output prefix {tmp_path / 'r' / 'out'}", "out_jobs.csv: not a regular file")
    assert (tmp_path / "r" / "out_jobs.csv").is_fifo() and len(list((tmp_path / "r").iterdir())) == 1


@needs_fifo
def test_check_output_files_refuses_a_fifo(tmp_path):
    from wattsched.base.validate import check_output_files

    os.mkfifo(tmp_path / "f.png")
    with pytest.raises(OutputError, match=r"^-d x: cannot write .*f.png: not a regular file"):
        check_output_files([tmp_path / "g.png", tmp_path / "f.png"], "-d x")
    check_output_files([tmp_path / "g.png", tmp_path / "new" / "h.png"], "-d x")  # absent files pass


# ------------------------------------------------------------------------------ 4. a runs file's tags
def _runs_file(tmp_path: Path, tags: dict) -> Path:
    platform, workload = tmp_path / "two.xml", tmp_path / "one.json"
    platform.write_text(api.taurus_platform(2))
    workload.write_text(json.dumps(ONE_JOB))
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([{"name": "a", "platform": str(platform), "workload": str(workload),
                                 "scheduler": "fcfs", "options": {}, "prefix": str(tmp_path / "r" / "out"),
                                 "tags": tags}]))
    return runs


@pytest.mark.parametrize("tag", ["prefix", "scheduler", "status", "wall_s"])
def test_a_tag_named_like_a_column_the_sweep_fills_is_refused(capsys, tmp_path, tag):
    """``tags: {"prefix": "elsewhere", "scheduler": "EASY"}`` replaced the run's own prefix and scheduler in
    results.csv without a word (``status`` was replaced by the real one: the tag vanished)."""
    out = tmp_path / "out"
    refused(capsys, ["sweep", str(_runs_file(tmp_path, {"algorithm": "x", tag: "x"})), "--out", str(out), "-q",
                     "-j", "1"], "runs.json: run 0: tags." + tag, "a column the sweep fills itself")
    assert not out.exists() and not (tmp_path / "r").exists()


def test_tags_of_other_names_still_go_into_the_table(capsys, tmp_path):
    out = tmp_path / "out"
    assert main(["sweep", str(_runs_file(tmp_path, {"algorithm": "EASY"})), "--out", str(out), "-q", "-j", "1"]) == 0
    table = (out / "results.csv").read_text().splitlines()
    row = dict(zip(table[0].split(","), table[1].split(",")))
    assert row["algorithm"] == "EASY" and row["scheduler"] == "fcfs" and row["prefix"] == str(tmp_path / "r" / "out")
