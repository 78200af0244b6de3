"""Sweeps of a grid on Dask (experiments/grid.py, experiments/sweep.py): a local cluster and a Dask scheduler
started apart, resumed runs keyed by their inputs, one results table and comparison plots."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from wattsched.base.errors import InputError
from wattsched.cli import main
from wattsched.experiments.grid import grid_runs, load_grid, write_results
from wattsched.experiments.sweep import run_sweep

GRID = """\
platforms:
  - {taurus: {hosts: 8}}
workloads:
  - {synth: {hosts: 8, days: 0.1, load: 0.7, users: 4}}
seeds: [1, 2]
schedulers:
  - fcfs
  - easy-backfill
  - {name: energy-bud, options: {budget_fraction: 0.6, window_end_s: 6000, shutdown: true}}
options:
  - {}
  - {placement: best-fit}
"""


@pytest.fixture
def grid_file(tmp_path: Path) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(GRID)
    return path


def statuses(out: Path) -> list[str]:
    return pd.read_csv(out / "results.csv")["status"].tolist()


def test_a_grid_runs_on_a_local_dask_cluster_and_resumes_only_what_is_missing(grid_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["sweep", str(grid_file), "--out", str(out), "-j", "2", "-q"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 3 * 2 * 2 and set(table["status"]) == {"done"}
    assert {"utilization", "mean_bounded_slowdown", "total_energy_j", "option_placement", "seed", "key"} <= set(table)
    assert table["key"].nunique() == 12  # every run has its own key, hence its own folder
    assert pd.read_parquet(out / "results.parquet")["name"].tolist() == table["name"].tolist()
    for metric in ("utilization", "mean_bounded_slowdown", "total_energy_j"):
        assert (out / "plots" / f"{metric}.png").stat().st_size > 5000
    assert "12 runs (12 done)" in capsys.readouterr().out
    # "stop" the sweep: two runs lost their outputs; a restart runs only those two
    for key in table["key"][:2]:
        for path in (out / "runs" / key).glob("out_*.csv"):
            path.unlink()
    assert main(["sweep", str(grid_file), "--out", str(out), "-j", "2", "-q"]) == 0
    assert statuses(out) == ["done"] * 2 + ["skipped"] * 10
    again = pd.read_csv(out / "results.csv")
    assert again["utilization"].tolist() == pytest.approx(table["utilization"].tolist())


def test_keys_follow_the_inputs_not_the_grid_layout(grid_file, tmp_path):
    grid = load_grid(grid_file)
    first = {run.name: run.prefix for run in grid_runs(grid, tmp_path / "a")}
    second = {run.name: run.prefix for run in grid_runs(grid, tmp_path / "a")}
    assert first == second and len(set(first.values())) == 12
    reordered = tmp_path / "reordered.yaml"
    reordered.write_text(GRID.replace("seeds: [1, 2]", "seeds: [2, 1]"))
    assert {r.name: r.prefix for r in grid_runs(load_grid(reordered), tmp_path / "a")} == first


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_same_sweep_runs_on_a_dask_scheduler_started_apart(grid_file, tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    scheduler = subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    worker = subprocess.Popen([str(bin_dir / "dask"), "worker", address, "--nworkers", "1", "--nthreads", "1",
                               "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        runs = grid_runs(load_grid(grid_file), tmp_path / "out")
        deadline = time.monotonic() + 60
        while True:  # the scheduler and its worker take a few seconds to start
            try:
                frame = run_sweep(runs, dask_scheduler=address, show_progress=False)
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        assert set(frame["status"]) == {"done"} and len(frame) == 12
        written = write_results(frame, tmp_path / "out")
        assert [p.name for p in written[:2]] == ["results.csv", "results.parquet"]
    finally:
        for process in (worker, scheduler):
            process.terminate()
        for process in (worker, scheduler):
            process.wait(timeout=30)


def test_an_unreachable_dask_scheduler_is_one_line(grid_file, tmp_path, capsys):
    port = _free_port()
    assert main(["sweep", str(grid_file), "--out", str(tmp_path / "o"), "--dask-scheduler",
                 f"tcp://127.0.0.1:{port}", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--dask-scheduler" in err[0]


@pytest.mark.parametrize("text,field", [
    ("platforms: [p.xml]\nworkloads: [w.json]\n", "schedulers"),
    ("platforms: [p.xml]\nworkloads: [w.json]\nschedulers: [fcfs]\nbogus: 1\n", "bogus"),
    ("platforms: [{taurus: {hosts: x}}]\nworkloads: [w.json]\nschedulers: [fcfs]\n", "platforms[0].taurus"),
    ("platforms: [p.xml]\nworkloads: [w.json]\nschedulers: [fcfs]\nwindow: [5, 1]\n", "window"),
    ("platforms: [p.xml\nworkloads", "line"),
    ("platforms: [nope.xml]\nworkloads: [w.json]\nschedulers: [fcfs]\n", "platforms[0]"),
    # schedulers and options are built before the sweep starts (they used to fail as runs, exit 1)
    ("platforms: [p.xml]\nworkloads: [w.json]\nschedulers: [fcfs, enrgy-bud]\n", "schedulers[1]: unknown scheduler"),
    ("platforms: [p.xml]\nworkloads: [w.json]\nschedulers: [{name: energy-bud, options: {budget_fraction: -1}}]\n",
     "schedulers[0]"),
    ("platforms: [p.xml]\nworkloads: [w.json]\nschedulers: [energy-bud]\noptions: [{}, {shutdwn: true}]\n",
     "options[1]: unknown option 'shutdwn'"),
])
def test_a_bad_grid_names_the_field(tmp_path, text, field):
    path = tmp_path / "g.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        grid_runs(load_grid(path), tmp_path / "out")
    assert field in str(error.value) and "g.yaml" in str(error.value) and "\n" not in str(error.value)


def test_numbers_with_an_exponent_are_numbers_in_a_grid(tmp_path):
    """``tau_s: 1e3`` was refused ("must be a positive number, got '1e3'": YAML 1.1 reads it as a string), and so
    was an option such as ``window_end_s: 6e3``."""
    path = tmp_path / "g.yaml"
    path.write_text(GRID.replace("window_end_s: 6000", "window_end_s: 6e3") + "tau_s: 1e3\n")
    grid = load_grid(path)
    assert grid.tau_s == 1000.0
    assert dict(grid.schedulers)["energy-bud"]["window_end_s"] == 6000.0


def test_a_grid_written_as_a_json_object_is_read_as_a_grid(tmp_path, capsys):
    """``sweep`` takes a ``.json`` file as a list of runs; one holding a JSON object is a grid (YAML reads JSON):
    it was refused with "expected a JSON list of runs". A FIFO is refused in one line, not read for ever."""
    grid = tmp_path / "g.json"
    grid.write_text('\ufeff {"platforms": ["nope.xml"], "workloads": ["w.json"], "schedulers": ["fcfs"]}',
                    encoding="utf-8")
    assert main(["sweep", str(grid), "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "g.json" in err and "platforms[0]" in err and "list of runs" not in err
    fifo = tmp_path / "runs.json"
    os.mkfifo(fifo)
    assert main(["sweep", str(fifo), "--out", str(tmp_path / "out"), "-q"]) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_readme_example_grid_is_valid(tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)  # the grid's paths are relative to the repository's root
    runs = grid_runs(load_grid(root / "docs" / "study.yaml"), tmp_path)
    assert len(runs) == 18 and len({run.prefix for run in runs}) == 18
    assert {run.scheduler for run in runs} == {"easy-backfill", "energy-bud", "fairshare"}


def test_a_billion_laughs_grid_is_refused_in_one_line_before_anything_is_made(tmp_path, capsys):
    """Nine options of nine aliases each would be 10^9 values to hash and print: refused at once, exit 2,
    no output folder (before the bound, the sweep hung expanding them)."""
    lines = ["platforms: [{taurus: {hosts: 4}}]", "workloads: [{synth: {hosts: 4, days: 0.1}}]",
             "schedulers: [easy-backfill]", "options:", '  - {pad: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", '
             '"lol", "lol", "lol"]}']
    lines += [f"  - {{pad: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]}}" for i in range(1, 10)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    started = time.process_time()
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "-q"]) == 2
    assert time.process_time() - started < 5
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"wattsched: error: {path}: line ") and "WATTSCHED_LIMIT_YAML_NODES" in line
    assert not (tmp_path / "out").exists()
