"""Synthetic Lublin-Feitelson-style workloads (workloads/synthetic.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import time
from pathlib import Path

import numpy as np
import pytest

from wattsched.cli import main
from wattsched.workloads.synthetic import DEFAULT_MODEL, WALLTIME_GRID_S, offered_load, synthetic_week
from wattsched.base.errors import OptionError

ROOT = Path(__file__).resolve().parents[1]
WEEK_S = 7 * 86400.0


def _runtimes_s(workload: dict, speed_flops: float = 100e6) -> np.ndarray:
    return np.array([workload["profiles"][j["profile"]]["cpu"] / speed_flops for j in workload["jobs"]])


@pytest.fixture(scope="module")
def sdsc_week() -> dict:
    return synthetic_week(1152, seed=7)


def test_deterministic_for_a_seed() -> None:
    a = synthetic_week(256, seed=3)
    assert a == synthetic_week(256, seed=3)
    assert a["jobs"] != synthetic_week(256, seed=4)["jobs"]


@pytest.mark.parametrize("nb_hosts", [16, 1152, 3356, 80640])
@pytest.mark.parametrize("seed", [1, 2])
def test_offered_load_near_target(nb_hosts: int, seed: int) -> None:
    workload = synthetic_week(nb_hosts, seed=seed)
    load = offered_load(workload, nb_hosts, WEEK_S, 100e6)
    assert load == pytest.approx(0.85, rel=0.10)
    assert load == pytest.approx(workload["meta"]["offered_load"])


def test_other_target_load() -> None:
    workload = synthetic_week(512, seed=5, target_load=0.5, duration_s=3 * 86400)
    assert offered_load(workload, 512, 3 * 86400, 100e6) == pytest.approx(0.5, rel=0.10)


def test_job_fields(sdsc_week: dict) -> None:
    jobs = sdsc_week["jobs"]
    assert sdsc_week["nb_res"] == 1152
    assert [j["id"] for j in jobs] == list(range(1, len(jobs) + 1))
    res = np.array([j["res"] for j in jobs])
    assert res.min() >= 1 and res.max() <= 1152
    subtimes = [j["subtime"] for j in jobs]
    assert subtimes == sorted(subtimes) and 0 <= subtimes[0] and subtimes[-1] < WEEK_S
    assert all(isinstance(j["subtime"], int) and isinstance(j["walltime"], int) for j in jobs)
    users = {j["user"] for j in jobs}
    assert users <= set(range(1, 51)) and len(users) > 20
    for profile in sdsc_week["profiles"].values():
        assert profile["type"] == "parallel_homogeneous" and profile["com"] == 0
    assert {j["profile"] for j in jobs} == set(sdsc_week["profiles"])  # shared, none unused
    assert len(sdsc_week["profiles"]) < len(jobs)


def test_shape_of_the_model(sdsc_week: dict) -> None:
    jobs = sdsc_week["jobs"]
    res = np.array([j["res"] for j in jobs])
    assert 0.15 < np.mean(res == 1) < 0.30  # serial share (20 % + sizes rounding to 1)
    parallel = res[res > 1]
    assert np.mean((parallel & (parallel - 1)) == 0) > 0.6  # power-of-two emphasis
    runtime = _runtimes_s(sdsc_week)
    assert runtime.min() >= 1 and np.all(runtime == np.round(runtime))
    # runtimes correlate with size
    assert np.median(runtime[res >= 64]) > np.median(runtime[res == 1])
    # daily cycle: more submissions at 10-17 h than at 0-7 h
    hour = (np.array([j["subtime"] for j in jobs]) // 3600) % 24
    assert np.sum((hour >= 10) & (hour < 17)) > 1.5 * np.sum(hour < 7)


def test_walltimes(sdsc_week: dict) -> None:
    """walltime ≥ runtime, on the grid of usual requests, except the documented walltime kills."""
    jobs = sdsc_week["jobs"]
    runtime = _runtimes_s(sdsc_week)
    walltime = np.array([j["walltime"] for j in jobs])
    killed = runtime > walltime
    assert 0.04 < killed.mean() < 0.11
    assert killed.sum() == sdsc_week["meta"]["nb_walltime_kills"]
    assert np.all(runtime[killed] >= 1.1 * walltime[killed] - 1)
    on_grid = np.isin(walltime, WALLTIME_GRID_S) | ((walltime > WALLTIME_GRID_S[-1]) & (walltime % 3600 == 0))
    assert on_grid.all()
    assert np.all(walltime[~killed] <= np.maximum(8 * runtime[~killed], 60) * 1.6 + 3600)
    assert np.median(walltime[~killed] / runtime[~killed]) > 1.5  # users over-estimate


def test_runtime_range_option() -> None:
    model = dataclasses.replace(DEFAULT_MODEL, runtime_range_s=(120.0, 1800.0))
    workload = synthetic_week(16, seed=1, duration_s=86400, target_load=0.4, model=model)
    runtime = _runtimes_s(workload)
    walltime = np.array([j["walltime"] for j in workload["jobs"]])
    normal = runtime <= walltime
    assert runtime[normal].min() >= 120 and runtime[normal].max() <= 1800


def test_twenty_thousand_jobs_in_under_two_seconds() -> None:
    start = time.perf_counter()
    workload = synthetic_week(80640, seed=1, duration_s=3 * WEEK_S)
    elapsed = time.perf_counter() - start
    assert len(workload["jobs"]) >= 20_000
    assert elapsed < 2.0


@pytest.mark.parametrize(
    "kwargs",
    [{"nb_hosts": 0}, {"duration_s": 0.0}, {"target_load": -1.0}, {"speed_flops": 0.0}, {"users": 0}],
)
def test_invalid_options(kwargs: dict) -> None:
    args = {"nb_hosts": 16, "seed": 1} | kwargs
    nb_hosts = args.pop("nb_hosts")
    with pytest.raises(OptionError):
        synthetic_week(nb_hosts, **args)


def test_single_host_machine() -> None:
    workload = synthetic_week(1, seed=1, duration_s=86400)
    assert {j["res"] for j in workload["jobs"]} == {1}


def test_cli_and_shipped_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    argv = ["synth", "--hosts", "16", "--seed", "1", "--days", "1", "--load", "0.4", "--min-runtime", "120",
            "--max-runtime", "1800", "--users", "8", "--output", str(out)]
    assert main(argv) == 0
    shipped = json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())
    assert json.loads(out.read_text()) == shipped  # workloads/README.md's command line
    assert 150 <= len(shipped["jobs"]) <= 300
    assert {j["res"] for j in shipped["jobs"]} <= set(range(1, 17))
    with pytest.raises(SystemExit) as exit_:
        main(["synth", "--hosts", "0", "--seed", "1"])
    assert exit_.value.code == 2


def test_demo_loads_in_simulator() -> None:
    if importlib.util.find_spec("wattsched.simulator.workload") is None:
        pytest.skip("simulator/workload.py not written yet")
    from wattsched.simulator.workload import load_workload

    assert len(load_workload(ROOT / "workloads" / "demo_taurus16.json").jobs) == 210
