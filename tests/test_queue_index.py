"""The waiting queue's index (schedulers/queue.py, issue 15) against a straightforward scan.

1. :class:`JobsBehind` over a :class:`WaitingQueue` gives exactly the jobs a plain scan of the sorted queue
   would keep (widths that fit, the filter's mask), in queue order, through arrivals out of order, departures
   and :meth:`~JobsBehind.narrow`.
2. Whole runs: EASY and every energy preset, with and without shutdown, takes the same decisions with the index used
   for every queue (``INDEX_MIN_JOBS = NARROW_MIN_JOBS = 0``) as without it (the plain scan of every waiting job).
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
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.schedulers.queue import JobsBehind, SortedJobs, WaitingQueue
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
       where=st.integers(0, 200), narrow_at=st.integers(0, 10), narrow_to=st.integers(0, 8),
       odd_only=st.booleans())
def test_jobs_behind_equals_a_scan_of_the_sorted_queue(ops, max_res, cut_s, where, narrow_at, narrow_to, odd_only):
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

    def keep(res: np.ndarray, wall: np.ndarray, groups: object = None) -> np.ndarray:
        return wall < cut_s  # a filter that only depends on the job (like may_start)

    def rule(res: np.ndarray, wall: np.ndarray) -> np.ndarray:
        return res % 2 == 1 if odd_only else np.ones(len(res), dtype=bool)

    def wanted(job: QueuedJob, cap: int, narrowed: bool) -> bool:
        wall = math.inf if job.walltime_s is None else job.walltime_s
        return job.res <= cap and wall < cut_s and (not narrowed or not odd_only or job.res % 2 == 1)

    old = queue_module.NARROW_MIN_JOBS
    queue_module.NARROW_MIN_JOBS = 0  # narrow whatever is left
    try:
        behind = JobsBehind(queue, i, max_res, keep, min_length=0)
        got = []
        for k, job in enumerate(behind):
            got.append(job)
            if k == narrow_at:
                behind.narrow(min(max_res, narrow_to), rule)
    finally:
        queue_module.NARROW_MIN_JOBS = old
    expected: list[QueuedJob] = []
    narrowed = False
    for job in reference[i + 1:]:
        if wanted(job, min(max_res, narrow_to) if narrowed else max_res, narrowed):
            expected.append(job)
            narrowed = narrowed or len(expected) == narrow_at + 1  # applies to the jobs after this one
    assert got == expected
    # without an index (too short a queue, or a plain list): every job behind, unfiltered, narrow or not
    plain = JobsBehind(queue, i, max_res, keep, min_length=10**9)
    assert next(plain, None) == reference[i + 1:][0] if i + 1 < len(reference) else True
    plain.narrow(0, rule)
    assert list(plain) == reference[i + 2:]
    assert list(JobsBehind(reference, i, max_res, keep, min_length=0)) == reference[i + 1:]  # (no table: a scan)
    # a dynamic order's queue (SortedJobs: the same jobs in another order, with the table of their arrays) with a
    # filter is indexed too, its jobs' slots found by id: the same jobs as the WaitingQueue's index gives
    shuffled = SortedJobs(reference[::-1], queue)
    assert list(JobsBehind(shuffled, len(reference) - 1 - i, max_res, keep, min_length=0)) == [
        job for job in reference[:i][::-1] if wanted(job, max_res, False)]
    assert list(JobsBehind(shuffled, len(reference) - 1 - i, max_res, None, min_length=0)) == reference[:i][::-1]


def test_narrow_without_refilter_asks_the_filter_nothing_and_keeps_its_answer():
    """narrow(..., refilter=False) (no start since the filter was last asked) applies only the width and the
    rule: the filter is not asked again, and the jobs it ruled out stay out; refilter=True asks it."""
    queue = WaitingQueue(key=lambda job: (job.subtime_s, job.id))
    for k in range(60):
        queue.add(QueuedJob(f"j{k}", 1 + k % 4, 10.0 * (1 + k % 3), float(k)))
    asked = []

    def keep(res: np.ndarray, wall: np.ndarray, groups: object = None) -> np.ndarray:
        asked.append(len(res))
        values, codes = groups  # the queue's walltime codes, aligned with the jobs
        assert values[codes].tolist() == wall.tolist()
        return wall < 30.0

    old = queue_module.NARROW_MIN_JOBS
    queue_module.NARROW_MIN_JOBS = 0
    try:
        behind = JobsBehind(queue, 0, 8, keep, min_length=0)
        first = next(iter(behind))
        behind.narrow(3, lambda res, wall: res != 2, refilter=False)
        assert len(asked) == 1
        rest = list(behind)
        behind2 = JobsBehind(queue, 0, 8, keep, min_length=0)
        next(iter(behind2))
        behind2.narrow(3, lambda res, wall: res != 2)
        assert len(asked) == 3 and list(behind2) == rest
    finally:
        queue_module.NARROW_MIN_JOBS = old
    assert first.walltime_s < 30.0
    assert rest and all(j.res <= 3 and j.res != 2 and j.walltime_s < 30.0 for j in rest)


def test_the_rule_goes_before_the_filter_which_is_asked_of_the_jobs_left_only():
    """JobsBehind(..., rule=...) and narrow(..., rule) rule jobs out by width and walltime first; the filter (an
    admission constraint's bounds, which cost per job) is then asked of the others only, and not at all when no
    job is left. The jobs visited are those both let through."""
    queue = WaitingQueue(key=lambda job: (job.subtime_s, job.id))
    for k in range(60):
        queue.add(QueuedJob(f"j{k}", 1 + k % 4, 10.0 * (1 + k % 3), float(k)))
    asked: list[list[int]] = []

    def keep(res: np.ndarray, wall: np.ndarray, groups: object = None) -> np.ndarray:
        asked.append(res.tolist())
        return wall < 30.0

    old = queue_module.NARROW_MIN_JOBS
    queue_module.NARROW_MIN_JOBS = 0
    try:
        behind = JobsBehind(queue, 0, 8, keep, min_length=0, rule=lambda res, wall: res <= 2)
        assert len(asked) == 1 and set(asked[0]) == {1, 2}
        first = next(iter(behind))
        behind.narrow(8, lambda res, wall: res == 1)
        assert len(asked) == 2 and set(asked[1]) == {1}
        rest = list(behind)
        assert [first.res] + [j.res for j in rest] == [j.res for j in list(queue)[1:] if j.res <= 2
                                                         and j.walltime_s < 30.0][:1] + [1] * len(rest)
        assert all(j.walltime_s < 30.0 for j in rest)
        JobsBehind(queue, 0, 8, keep, min_length=0, rule=lambda res, wall: res > 4)  # none left: not asked
        assert len(asked) == 2
    finally:
        queue_module.NARROW_MIN_JOBS = old


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
    old = queue_module.INDEX_MIN_JOBS, queue_module.NARROW_MIN_JOBS
    queue_module.INDEX_MIN_JOBS = queue_module.NARROW_MIN_JOBS = min_jobs
    try:
        sim = Simulation(load_platform(platform), load_workload(workload))
        run_inprocess(sim, scheduler_handler(preset, options))
    finally:
        queue_module.INDEX_MIN_JOBS, queue_module.NARROW_MIN_JOBS = old
    return sorted((r.job.id, r.start_s, r.alloc_str) for r in sim.jobs_rows)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap"]),
       shutdown=st.booleans(),
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
               "shutdown": shutdown} if preset != "easy-backfill" else {}
    indexed = _run(platform_path, workload, preset, options, 0)
    assert indexed == _run(platform_path, workload, preset, options, 10**9)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, order=st.sampled_from(["fairshare", "efs", "fs-efs"]),
       admission=st.sampled_from(["none", "energy-bud", "reduce-pc", "powercap"]),
       power=st.sampled_from(["none", "shutdown", "esc"]), users=st.integers(1, 4), fraction=st.floats(0.55, 1.0),
       a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_a_dynamic_order_decides_the_same_with_and_without_the_index(platform_path, tmp_path_factory, raw, order,
                                                                    admission, power, users, fraction, a, b):
    """A fair share's queue, sorted again at every pass, is indexed too (its jobs' widths and walltimes read from the
    core's table of the waiting jobs: queue.SortedJobs): the same schedule as the plain scan of every waiting job, with
    every admission constraint and power manager (ESC at short periods, so that it acts on these small workloads)."""
    workload, horizon = _budget_workload(tmp_path_factory, raw, users)
    options: dict = {"order": order, "admission": admission, "power": power}
    if admission != "none":
        options.update(budget_fraction=fraction, window_start_s=a * horizon,
                       window_end_s=a * horizon + max(600.0, b * horizon))
    if power == "esc":
        options.update(period_s=10.0, idle_s=30.0)
    indexed = _run(platform_path, workload, "compose", options, 0)
    assert indexed == _run(platform_path, workload, "compose", options, 10**9)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap"]),
       shutdown=st.booleans(), fraction=st.floats(0.55, 1.0), a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_every_preset_decides_the_same_knowing_the_longest_free_interval(platform_path, tmp_path_factory, raw, preset,
                                                                          shutdown, fraction, a, b):
    """EASY's pass knows from its start that no width above the longest free interval (and the longest outside
    the head's reservation) fits a contiguous placement; before, it learnt each such width by a failed placement.
    The same schedule either way, for every preset, with and without shutdown."""
    from wattsched.schedulers import backfill as backfill_module

    workload, preset, options = _budget_case(tmp_path_factory, raw, preset, shutdown, fraction, a, b)
    knowing = _run(platform_path, workload, preset, options, 0)
    longest = backfill_module.longest
    backfill_module.longest = lambda hosts: 10**9
    try:
        assert knowing == _run(platform_path, workload, preset, options, 0)
    finally:
        backfill_module.longest = longest


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap"]),
       shutdown=st.booleans(), fraction=st.floats(0.55, 1.0), a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_every_preset_decides_the_same_knowing_the_narrowest_and_shortest_waiting_job(
        platform_path, tmp_path_factory, raw, preset, shutdown, fraction, a, b):
    """EASY's pass and the shutdown's boot planning stop before the head's reservation or the queue's scan when
    the narrowest waiting job (and, for the jobs that would end after the head's start, the shortest one) cannot
    fit (``narrowest_and_shortest``). The same schedule as without knowing them, for every preset, with and
    without shutdown."""
    from wattsched.schedulers import backfill as backfill_module
    from wattsched.schedulers import power as power_module

    workload, preset, options = _budget_case(tmp_path_factory, raw, preset, shutdown, fraction, a, b)
    knowing = _run(platform_path, workload, preset, options, 0)
    bounds = queue_module.narrowest_and_shortest
    backfill_module.narrowest_and_shortest = power_module.narrowest_and_shortest = lambda queue: (0, 0.0)
    try:
        assert knowing == _run(platform_path, workload, preset, options, 0)
    finally:
        backfill_module.narrowest_and_shortest = power_module.narrowest_and_shortest = bounds


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap", "esc"]),
       fraction=st.floats(0.55, 1.0), a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_every_switching_preset_decides_the_same_with_the_switches_pseudo_jobs_kept(
        platform_path, tmp_path_factory, raw, preset, fraction, a, b):
    """The shutdown's and ESC's switches keep their pseudo jobs from one pass to the next while unchanged
    (``transition_pseudo_jobs``' memo: a kept job's start is that of the pass that made it). The same schedule as
    with every pseudo job made again at each pass, for every budget preset with shutdown and for ESC."""
    from wattsched.schedulers import esc as esc_module
    from wattsched.schedulers import power as power_module

    if preset == "esc":
        workload, options = _budget_workload(tmp_path_factory, raw)[0], {}
    else:
        workload, preset, options = _budget_case(tmp_path_factory, raw, preset, True, fraction, a, b)
    kept = _run(platform_path, workload, preset, options, 0)
    original = power_module.transition_pseudo_jobs
    esc_module.transition_pseudo_jobs = power_module.transition_pseudo_jobs = lambda *args: original(*args[:7])
    try:
        assert kept == _run(platform_path, workload, preset, options, 0)
    finally:
        esc_module.transition_pseudo_jobs = power_module.transition_pseudo_jobs = original


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap"]),
       fraction=st.floats(0.55, 1.0), a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_the_shutdown_forgets_the_same_kept_hosts_looking_only_after_a_start(
        platform_path, tmp_path_factory, raw, preset, fraction, a, b):
    """The shutdown looks for kept hosts a job took only when a job started since it last looked
    (``OpportunisticShutdown.on_started``): the same schedule as looking at every pass, for EASY and every budget
    preset with shutdown."""
    from wattsched.schedulers.power import OpportunisticShutdown

    workload, preset, options = _budget_case(tmp_path_factory, raw, preset, True, fraction, a, b)
    looking_after_starts = _run(platform_path, workload, preset, options, 0)
    original = OpportunisticShutdown.on_started
    forget = OpportunisticShutdown._forget_kept

    def always(self, now, view):  # type: ignore[no-untyped-def]
        self._started_since = True
        return forget(self, now, view)

    OpportunisticShutdown._forget_kept = always  # type: ignore[method-assign]
    try:
        assert looking_after_starts == _run(platform_path, workload, preset, options, 0)
    finally:
        OpportunisticShutdown._forget_kept, OpportunisticShutdown.on_started = forget, original  # type: ignore[method-assign]


def _run_checking_the_heads_clear_refusal(platform_path, workload: Path, preset: str, options: dict) -> tuple[list, int]:
    """The schedule, with ``refuses_all`` asked of the plan with the reservation too whenever the head's clear refusal
    answers it (``EnergyBudget._head_refused_now``: both must say "refused"), and how often it answered."""
    from wattsched.schedulers.budget.energy_bud import EnergyBudget

    shortcut = EnergyBudget._head_refused_now
    used = 0

    def checked(self, end_s, view):
        nonlocal used
        known = shortcut(self, end_s, view)
        if known:
            used += 1
            assert self._refuses_smallest(self._future(view, self._reserved, self._cut), 1, end_s, view.now_s)
        return known

    EnergyBudget._head_refused_now = checked
    try:
        return _run(platform_path, workload, preset, options, 0), used
    finally:
        EnergyBudget._head_refused_now = shortcut


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["energy-bud", "reduce-pc"]), fraction=st.floats(0.55, 1.0),
       a=st.sampled_from([0.0, 0.2]), b=st.floats(0.2, 1.0))
def test_refuses_all_knows_the_answer_from_the_heads_clear_refusal(platform_path, tmp_path_factory, raw, preset,
                                                                    fraction, a, b):
    """When ``can_start`` refused the head by more than the rounding and EASY then reserved it from now on,
    ``refuses_all`` answers without the plan with the reservation (``EnergyBudget._head_refused_now``): at every
    such pass the answer the plan gives, and the same schedule as without the shortcut."""
    from wattsched.schedulers.budget.energy_bud import EnergyBudget

    workload, preset, options = _budget_case(tmp_path_factory, raw, preset, False, fraction, a, b)
    with_shortcut, _ = _run_checking_the_heads_clear_refusal(platform_path, workload, preset, options)
    shortcut = EnergyBudget._head_refused_now
    EnergyBudget._head_refused_now = lambda *args: False
    try:
        assert with_shortcut == _run(platform_path, workload, preset, options, 0)
    finally:
        EnergyBudget._head_refused_now = shortcut


def test_the_heads_clear_refusal_answers_passes_under_a_tight_budget(platform_path, tmp_path_factory):
    """(The test above is not vacuous:) a queue of small jobs under a budget barely above the idle platform's, whose
    head fits but is refused, passes after passes."""
    raw = [(5.0, 1 + k % 3, 1.0, 600 + 37 * k) for k in range(40)]
    workload, preset, options = _budget_case(tmp_path_factory, raw, "energy-bud", False, 0.55, 0.0, 1.0)
    _, used = _run_checking_the_heads_clear_refusal(platform_path, workload, preset, options)
    assert used > 5


def _budget_case(tmp_path_factory, raw, preset: str, shutdown: bool, fraction: float, a: float, b: float
                 ) -> tuple[Path, str, dict]:
    """The workload of ``raw``, and ``preset`` with a budget window from ``a`` to ``a + b`` of its horizon (EASY: with
    the opportunistic shutdown or without)."""
    workload, horizon = _budget_workload(tmp_path_factory, raw)
    options = {"budget_fraction": fraction, "window_start_s": a * horizon,
               "window_end_s": a * horizon + max(600.0, b * horizon), "shutdown": shutdown}
    if preset == "easy-backfill":
        preset, options = ("compose", {"power": "shutdown"}) if shutdown else (preset, {})
    return workload, preset, options


def _budget_workload(tmp_path_factory, raw, users: int = 0) -> tuple[Path, float]:
    """The workload of ``raw`` (with ``users`` users, job ``k`` of user ``k % users``: none when 0)."""
    t, profiles, entries = 0.0, {}, []
    for k, (gap, res, factor, runtime) in enumerate(raw):
        t += gap
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * SPEED, "com": 0}
        entries.append({"id": str(k), "subtime": t, "res": res, "walltime": runtime * factor, "profile": f"p{k}"})
        if users:
            entries[-1]["user"] = f"u{k % users}"
    workload = tmp_path_factory.mktemp("w") / "w.json"
    workload.write_text(json.dumps({"nb_res": N, "jobs": entries, "profiles": profiles}))
    return workload, t + sum(e["walltime"] for e in entries)


def _run_probing(platform: Path, workload: Path, preset: str, options: dict, probe: bool) -> tuple[list, int]:
    """The schedule, with or without the budget's test of the smallest job (``EnergyBudget._refuses_smallest``:
    ``refuses_all`` before EASY scans its queue, and ``may_start`` before its bounds; and ``refuses_all``'s answer from
    the head's clear refusal, ``_head_refused_now``), and how often either refused."""
    from wattsched.schedulers.budget.energy_bud import EnergyBudget

    originals = EnergyBudget._refuses_smallest, EnergyBudget._head_refused_now
    refused = 0

    def probing(original):  # type: ignore[no-untyped-def]
        def probe_with(self, *args):  # type: ignore[no-untyped-def]
            nonlocal refused
            answer = probe and original(self, *args)
            refused += answer
            return answer
        return probe_with

    EnergyBudget._refuses_smallest, EnergyBudget._head_refused_now = map(probing, originals)  # type: ignore[method-assign]
    try:
        return _run(platform, workload, preset, options, 0), refused
    finally:
        EnergyBudget._refuses_smallest, EnergyBudget._head_refused_now = originals  # type: ignore[method-assign]


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=workloads, preset=st.sampled_from(["energy-bud", "reduce-pc"]), shutdown=st.booleans(),
       fraction=st.floats(0.3, 1.0), a=st.sampled_from([0.0, 0.0, 0.02, 0.2]), b=st.floats(0.2, 1.0))
def test_the_budget_decides_the_same_without_testing_the_smallest_job_first(platform_path, tmp_path_factory, raw,
                                                                           preset, shutdown, fraction, a, b):
    """energyBud and reducePC start the same jobs at the same times on the same hosts whether or not a refusal of
    the narrowest, shortest job ends EASY's pass before its scan (``refuses_all``) and the bounds of ``may_start``."""
    if not shutdown:
        fraction = max(fraction, 0.55)
    workload, horizon = _budget_workload(tmp_path_factory, raw)
    ts = a * horizon
    options = {"budget_fraction": fraction, "window_start_s": ts, "window_end_s": ts + max(600.0, b * horizon),
               "shutdown": shutdown}
    probed, _ = _run_probing(platform_path, workload, preset, options, True)
    assert probed == _run_probing(platform_path, workload, preset, options, False)[0]


@pytest.mark.parametrize("preset", ["energy-bud", "reduce-pc"])
def test_a_spent_budget_refuses_the_smallest_job_and_ends_the_pass(platform_path, tmp_path_factory, preset):
    """Forty jobs of one to three hosts at once, a budget of 58 % of the all-computing energy (the idle machine
    alone costs about 49 %): the smallest job is refused at some passes, and the schedule is the same as
    without that test."""
    raw = [(0.0, 1 + k % 3, 1.5, 300 + 37 * k) for k in range(40)]
    workload, horizon = _budget_workload(tmp_path_factory, raw)
    options = {"budget_fraction": 0.58, "window_start_s": 0.0, "window_end_s": horizon}
    probed, refused = _run_probing(platform_path, workload, preset, options, True)
    assert refused > 0
    assert probed == _run_probing(platform_path, workload, preset, options, False)[0]


# ----------------------------------------------------------------- 3. EASY's pass on fragmented hosts

@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(hosts=st.lists(st.sampled_from(["run", "free", "free"]), min_size=8, max_size=40), data=st.data())
def test_easy_select_with_the_index_equals_the_scan_on_fragmented_hosts(hosts, data):
    """One EASY pass over a queue of many jobs on hosts whose free ones are fragmented (contiguous
    placements fail for widths that fit by count: the pass learns the widths that do not fit and narrows
    the index by them): the same starts on the same hosts, indexed or not, and whether or not the pass knows from
    the start that no width above the longest free interval fits (it learnt each such width by a failed
    placement before)."""
    from wattsched.schedulers.backfill import EasyBackfilling
    from wattsched.schedulers.core import PolicyScheduler
    from wattsched.schedulers.order import Fcfs
    from wattsched.schedulers.placement import FirstFit
    from wattsched.schedulers.admission import NoConstraint
    from wattsched.schedulers.state import RunningJob
    from procset import ProcSet

    n = len(hosts)
    queue = WaitingQueue(key=lambda job: (job.subtime_s, job.id))
    for k in range(data.draw(st.integers(2, 80))):
        queue.add(QueuedJob(f"q{k}", data.draw(st.integers(1, max(1, n // 2)) | st.integers(1, 4)),
                            data.draw(st.sampled_from([10.0, 50.0, 100.0, 400.0, None])), float(k)))

    from wattsched.schedulers import backfill as backfill_module

    def select(min_jobs: int, knows_longest: bool = True) -> list:
        policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), placement=FirstFit())
        policy.start(n, 0.0)
        view = policy.view
        for h, state in enumerate(hosts):
            if state == "run":
                view.add_running(RunningJob(f"r{h}", ProcSet(h), 0.0, 20.0 + 30.0 * (h % 7)))
                view.free = view.free - ProcSet(h)
        old = queue_module.INDEX_MIN_JOBS, queue_module.NARROW_MIN_JOBS
        queue_module.INDEX_MIN_JOBS = queue_module.NARROW_MIN_JOBS = min_jobs
        longest = backfill_module.longest
        if not knows_longest:
            backfill_module.longest = lambda hosts: 10**9  # no width known not to fit before a placement fails
        try:
            starts = policy.backfill.select(queue, view, policy, NoConstraint())
        finally:
            queue_module.INDEX_MIN_JOBS, queue_module.NARROW_MIN_JOBS = old
            backfill_module.longest = longest
        return [(job.id, str(a.hosts)) for job, a in starts]

    assert select(0) == select(10**9) == select(0, knows_longest=False) == select(10**9, knows_longest=False)


# ----------------------------------------------------------------- 4. passes after submissions only

def _run_kept(platform: Path, workload: Path, options: dict, keep: bool, preset: str = "easy-backfill",
              times: list[float] | None = None) -> tuple[list, int]:
    """The schedule (job, start, hosts) and how many passes kept the previous one (their times in ``times``)."""
    from wattsched.schedulers import backfill as backfill_module

    old = backfill_module.KEEP_PASSES
    backfill_module.KEEP_PASSES = keep
    handler = scheduler_handler(preset, options)
    kept = 0
    fast = type(handler.policy.backfill)._backfill_new

    def counting(self, *args):  # type: ignore[no-untyped-def]
        nonlocal kept
        kept += 1
        if times is not None:
            times.append(args[2].now_s)  # (kept, new, view, ...)
        return fast(self, *args)

    try:
        type(handler.policy.backfill)._backfill_new = counting
        sim = Simulation(load_platform(platform), load_workload(workload))
        run_inprocess(sim, handler)
    finally:
        backfill_module.KEEP_PASSES = old
        type(handler.policy.backfill)._backfill_new = fast
    return sorted((r.job.id, r.start_s, r.alloc_str) for r in sim.jobs_rows), kept


busy_workloads = st.lists(  # jobs arriving while others wait: most passes follow submissions only
    st.tuples(
        st.sampled_from([0.0, 0.0, 1.0, 5.0, 30.0]),
        st.integers(1, N) | st.integers(1, 3),
        st.sampled_from([1.0, 1.0, 1.5, 3.0]),
        st.integers(5, 900),
    ),
    min_size=2, max_size=60,
)


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=busy_workloads, no_walltime=st.lists(st.booleans(), max_size=60),
       placement=st.sampled_from(["first-fit", "first-fit", "best-fit", "non-contiguous"]))
def test_easy_decides_the_same_when_a_pass_keeps_the_previous_one(platform_path, tmp_path_factory, raw, no_walltime,
                                                                  placement):
    """EASY's pass after submissions only (``EasyBackfilling._backfill_new``: the previous pass's reservation, only
    the new jobs tried) starts the same jobs at the same times on the same hosts as full passes, with jobs without
    walltime among them; with another placement than first-fit every pass is a full one."""
    t, profiles, entries = 0.0, {}, []
    for k, (gap, res, factor, runtime) in enumerate(raw):
        t += gap
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * SPEED, "com": 0}
        entry = {"id": str(k), "subtime": t, "res": res, "profile": f"p{k}"}
        if not (k < len(no_walltime) and no_walltime[k]):
            entry["walltime"] = runtime * factor
        entries.append(entry)
    workload = tmp_path_factory.mktemp("w") / "w.json"
    workload.write_text(json.dumps({"nb_res": N, "jobs": entries, "profiles": profiles}))
    options = {"placement": placement}
    kept, passes = _run_kept(platform_path, workload, options, True)
    full, none = _run_kept(platform_path, workload, options, False)
    assert kept == full and none == 0
    if placement != "first-fit":
        assert passes == 0


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(raw=busy_workloads, preset=st.sampled_from(["energy-bud", "reduce-pc"]),
       fraction=st.sampled_from([0.55, 0.7, 1.0]), window=st.sampled_from([(30.0, 400.0), (0.0, 100.0), (200.0, 5000.0)]))
def test_an_energy_budget_decides_the_same_when_passes_outside_its_window_keep_the_previous_one(
        platform_path, tmp_path_factory, raw, preset, fraction, window):
    """energyBud and reducePC also answer a pass after submissions only from the previous one, before their window
    (a refusal then stays one: ``EnergyBudget.keeps_refusals``) and from its end on: the same jobs at the same
    times on the same hosts as full passes, and never a kept pass inside the window."""
    t, profiles, entries = 0.0, {}, []
    for k, (gap, res, factor, runtime) in enumerate(raw):
        t += gap
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * SPEED, "com": 0}
        entries.append({"id": str(k), "subtime": t, "res": res, "profile": f"p{k}", "walltime": runtime * factor})
    workload = tmp_path_factory.mktemp("w") / "w.json"
    workload.write_text(json.dumps({"nb_res": N, "jobs": entries, "profiles": profiles}))
    ts, te = window
    options = {"window_start_s": ts, "window_end_s": te, "budget_fraction": fraction}
    times: list[float] = []
    kept, passes = _run_kept(platform_path, workload, options, True, preset, times)
    full, none = _run_kept(platform_path, workload, options, False, preset)
    assert kept == full and none == 0
    assert all(now < ts or now >= te - 1e-5 for now in times)
