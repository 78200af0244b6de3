"""The waiting queue's index (schedulers/queue.py, issue 15) against a straightforward scan.

1. :class:`JobsBehind` over a :class:`WaitingQueue` gives exactly the jobs a plain scan of the sorted queue
   would keep (widths that fit, the filter's mask), in queue order, through arrivals out of order, departures
   and :meth:`~JobsBehind.narrow`.
2. Whole runs: every energy preset, with and without shutdown, takes the same decisions with the index used
   for every queue (``INDEX_MIN_JOBS = 0``) as without it (the plain scan of every waiting job).
   The soundness of the admission filters themselves (``may_start`` / ``may_prepare`` never rule out a job
   ``can_start`` / ``can_prepare`` would admit) is checked in tests/test_budget_fast_path.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wattsched.energy_models.taurus import TAURUS
from wattsched.platforms.generate import taurus_platform_xml
from wattsched.schedulers import queue as queue_module
from wattsched.schedulers.adapter import scheduler_handler
from wattsched.schedulers.queue import JobsBehind, WaitingQueue
from wattsched.schedulers.state import QueuedJob
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

# ----------------------------------------------------------------- 1. the index against a scan

# operations: ("add", key, res, walltime or None) / ("remove", index into the waiting jobs)
ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 50), st.integers(1, 8), st.sampled_from([1.0, 10.0, 100.0, None])),
        st.tuples(st.just("remove"), st.integers(0, 200)),
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy, max_res=st.integers(0, 8), cut_s=st.sampled_from([5.0, 50.0, math.inf]),
       where=st.integers(0, 200), narrow_at=st.integers(0, 10), narrow_to=st.integers(0, 8))
def test_jobs_behind_equals_a_scan_of_the_sorted_queue(ops, max_res, cut_s, where, narrow_at, narrow_to):
    queue = WaitingQueue(key=lambda job: (job.subtime_s, job.id))
    reference: list[QueuedJob] = []  # the same jobs, sorted by a plain list
    count = 0
    for op in ops:
        if op[0] == "add":
            _, key, res, wall = op
            job = QueuedJob(f"j{count}", res, wall, float(key))  # mostly behind the others, sometimes not
            count += 1
            queue.add(job)
            reference.append(job)
            reference.sort(key=lambda j: (j.subtime_s, j.id))
        elif reference:
            job = reference.pop(op[1] % len(reference))
            queue.remove(job)
        assert list(queue) == reference
    if not reference:
        return
    i = where % len(reference)

    def keep(res: np.ndarray, wall: np.ndarray) -> np.ndarray:
        return wall < cut_s  # a filter that only depends on the job (like may_start)

    behind = JobsBehind(queue, i, max_res, keep, min_length=0)
    got = []
    for k, job in enumerate(behind):
        got.append(job)
        if k == narrow_at:
            behind.narrow(min(max_res, narrow_to))
    expected = []
    limit = None
    for job in reference[i + 1:]:
        wall = math.inf if job.walltime_s is None else job.walltime_s
        cap = limit if limit is not None else max_res
        if job.res <= cap and wall < cut_s:
            expected.append(job)
            if len(expected) == narrow_at + 1:
                limit = min(max_res, narrow_to)  # the narrowing applies to the jobs after this one
    assert got == expected
    # without an index (too short a queue, or a plain list): every job behind, unfiltered
    assert list(JobsBehind(queue, i, max_res, keep, min_length=10**9)) == reference[i + 1:]
    assert list(JobsBehind(reference, i, max_res, keep, min_length=0)) == reference[i + 1:]


# ----------------------------------------------------------------- 2. whole runs, indexed or not

N = 8  # hosts
SPEED = TAURUS.max_speed_flops


@pytest.fixture(scope="module")
def platform_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("platform") / f"taurus_{N}.xml"
    path.write_text(taurus_platform_xml(N))
    return path


workloads = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.0, 0.0, 0.0, 5.0, 60.0]),  # gap to the previous submission (long queues)
        st.integers(1, N) | st.integers(1, 2),
        st.sampled_from([1.0, 1.0, 1.5, 3.0]),  # walltime / runtime
        st.integers(5, 2400),
    ),
    min_size=2, max_size=30,
)


def _run(platform: Path, workload: Path, preset: str, options: dict, min_jobs: int) -> list:
    old = queue_module.INDEX_MIN_JOBS
    queue_module.INDEX_MIN_JOBS = min_jobs
    try:
        sim = Simulation(load_platform(platform), load_workload(workload))
        run_inprocess(sim, scheduler_handler(preset, options))
    finally:
        queue_module.INDEX_MIN_JOBS = old
    return sorted((r.job.id, r.start_s, r.alloc_str) for r in sim.jobs_rows)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["energy-bud", "reduce-pc", "powercap"]), shutdown=st.booleans(),
       fraction=st.floats(0.3, 1.0), a=st.sampled_from([0.0, 0.0, 0.02, 0.2]), b=st.floats(0.2, 1.0))
def test_every_preset_decides_the_same_with_and_without_the_index(platform_path, tmp_path_factory, raw, preset,
                                                                  shutdown, fraction, a, b):
    if not shutdown:
        fraction = max(fraction, 0.55)  # the idle platform alone costs ~49 % of the all-computing energy
    t, profiles, entries = 0.0, {}, []
    for k, (gap, res, factor, runtime) in enumerate(raw):
        t += gap
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * SPEED, "com": 0}
        entries.append({"id": str(k), "subtime": t, "res": res, "walltime": runtime * factor, "profile": f"p{k}"})
    horizon = t + sum(e["walltime"] for e in entries)
    workload = tmp_path_factory.mktemp("w") / "w.json"
    workload.write_text(json.dumps({"nb_res": N, "jobs": entries, "profiles": profiles}))
    ts = a * horizon
    options = {"budget_fraction": fraction, "window_start_s": ts, "window_end_s": ts + max(600.0, b * horizon),
               "shutdown": shutdown}
    indexed = _run(platform_path, workload, preset, options, 0)
    assert indexed == _run(platform_path, workload, preset, options, 10**9)
