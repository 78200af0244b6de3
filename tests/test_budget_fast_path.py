"""EnergyBudget.can_start's fast path (the per-pass ``Plan``, remembered refusals) against the slow oracle
of tests/budget_oracle.py, on random small ClusterView states and passes of several candidates."""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.energy_models.power import PlatformPower
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.budget import EnergyBud, ReducePC
from wattsched.schedulers.budget.plan import KeptIndex
from wattsched.schedulers.power import PowerManager
from wattsched.schedulers.state import Assignment, ClusterView, QueuedJob, RunningJob
from tests import budget_oracle

P_IDLE, P_COMP = 100.0, 203.12  # the default estimates


class KeptHosts(PowerManager):
    """A power manager stub that switches hosts off: free hosts kept idle for the head until given times
    (what the budget asks); hosts in transition get the budget's default plan."""

    def __init__(self, kept: dict[int, float]) -> None:
        self._kept = kept
        self.sleep_pstate = TAURUS.sleep_pstate

    def kept_hosts(self, view: ClusterView) -> dict[int, float]:
        return self._kept


def at(job: QueuedJob, hosts: ProcSet) -> Assignment:
    """``job`` at the top frequency on ``hosts``."""
    return Assignment(hosts, 0, job.walltime_s)


def begin_maybe_reserved(budget, view: ClusterView, head, data) -> None:  # type: ignore[no-untyped-def]
    """A pass begun on ``view``, the scenario's head reserved when it has one and ``data`` draws so."""
    budget.begin_pass([], view)
    if head is not None and data.draw(st.booleans()):
        job, start_s, hosts = head
        budget.reserve_head(job, start_s, at(job, hosts), view)


@st.composite
def scenarios(draw, kept_all: bool = False):
    """A budget, a view, maybe a head's reservation, and a pass's candidates. ``kept_all``: with shutdown,
    every free host kept (what ESC does with its idle nodes)."""
    n = draw(st.integers(2, 8))
    mode = draw(st.sampled_from(["energy-bud", "reduce-pc"]))
    shutdown = kept_all or draw(st.booleans())
    ts = draw(st.sampled_from([0.0, 500.0]))
    te = ts + draw(st.sampled_from([1000.0, 3600.0]))
    low = 0.02 if shutdown else P_IDLE / P_COMP  # without shutdown the budget must pay the idle platform
    fraction = draw(st.floats(low, 1.1))
    budget = {"energy-bud": EnergyBud, "reduce-pc": ReducePC}[mode](
        budget_j=fraction * n * P_COMP * (te - ts), window_start_s=ts, window_end_s=te)
    if shutdown:
        budget.bind_power(KeptHosts({}))
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    now = draw(st.sampled_from([ts - 300.0, ts, ts + 1.0, (ts + te) / 2, te - 10.0, te + 5.0]))
    if now >= ts:
        budget.cea_j = draw(st.floats(-0.01, 0.5)) * budget.B

    # every host computing (one job per run of consecutive hosts), free, asleep or switching
    states = draw(st.lists(st.sampled_from(["run", "free", "free", "off", "switching"]), min_size=n, max_size=n))
    view = ClusterView.idle_machine(n, now)
    view.free = ProcSet(*[h for h, s in enumerate(states) if s == "free"])
    view.off = ProcSet(*[h for h, s in enumerate(states) if s == "off"])
    view.switching = ProcSet(*[h for h, s in enumerate(states) if s == "switching"])
    h = 0
    while h < n:
        if states[h] != "run":
            h += 1
            continue
        last = h
        while last + 1 < n and states[last + 1] == "run" and draw(st.booleans()):
            last += 1
        end = draw(st.one_of(st.floats(1.0, 1.5 * (te - ts)).map(lambda d: now + d), st.just(float("inf"))))
        view.add_running(RunningJob(f"r{h}", ProcSet((h, last)), now - 1.0, end))
        h = last + 1

    free = list(view.free)
    if shutdown and free and (kept_all or draw(st.integers(0, 2))):  # opportunistic shutdown keeps some for the head
        kept_hosts = free if kept_all else draw(st.lists(st.sampled_from(free), unique=True, min_size=1,
                                                         max_size=len(free)))
        # until: mostly ahead (ESC keeps idle nodes up to its idle deadline), sometimes past or for ever
        until = st.floats(0.0, 3000.0) | st.sampled_from([-200.0, float("inf")])
        budget.bind_power(KeptHosts({k: now + draw(until) for k in kept_hosts}))

    head = None
    if draw(st.integers(0, 3)):  # mostly backfilling behind a head
        res = draw(st.integers(1, n))
        head = (QueuedJob("head", res, draw(st.floats(10.0, 2000.0)), 0.0),
                max(now, ts) + draw(st.sampled_from([0.0, 1.0, 100.0, 2000.0])), ProcSet((0, res - 1)))

    # the pass: candidates on free hosts not taken earlier in the pass, started when admitted (sometimes)
    candidates = []
    for _ in range(draw(st.integers(1, 8))):
        res = draw(st.integers(1, max(1, len(free) // 2)) | st.integers(1, max(1, len(free))))
        wall = draw(st.sampled_from([1.0, 10.0, 100.0, 1000.0]) | st.floats(1.0, 1.2 * (te - ts)) | st.none())
        candidates.append((QueuedJob(f"j{len(candidates)}", res, wall, 0.0), draw(st.permutations(free)),
                           draw(st.booleans())))
    release_after = draw(st.integers(1, len(candidates)))
    return budget, view, head, candidates, release_after


@settings(max_examples=600, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_fast_can_start_equals_the_oracle(scenario):
    budget, view, head, candidates, release_after = scenario
    budget.begin_pass([], view)
    if head is not None:
        job, start_s, hosts = head
        budget.reserve_head(job, start_s, at(job, hosts), view)
    taken: set[int] = set()
    for i, (job, order, start) in enumerate(candidates):
        if i == release_after:
            budget.release_head()
        hosts = [h for h in order if h not in taken][:job.res]
        if len(hosts) < job.res:
            continue
        alloc = ProcSet(*hosts)
        expected = budget_oracle.can_start(budget, job, at(job, alloc), view)
        assert budget.can_start(job, at(job, alloc), view) == expected, (i, job, alloc)
        if expected and start:
            budget.on_start(job, at(job, alloc), view)
            taken.update(hosts)


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_fast_can_prepare_equals_the_oracle(scenario, data):
    """Booting asleep hosts and keeping free ones for a job (opportunistic shutdown asks), with the head's
    reservation made or not, and after jobs the power manager already prepared in the pass."""
    budget, view, head, candidates, release_after = scenario
    begin_maybe_reserved(budget, view, head, data)
    now = view.now_s
    for job, order, book in candidates:
        boot = ProcSet(*data.draw(st.lists(st.sampled_from(list(view.off)), unique=True))) if view.off else ProcSet()
        keep = ProcSet(*order[:data.draw(st.integers(0, len(order)))])
        start_s = now + data.draw(st.sampled_from([0.0, 151.52, 600.0]))
        assignment = at(job, ProcSet((0, job.res - 1)))  # the budget counts its hosts
        expected = budget_oracle.can_prepare(budget, job, boot, keep, start_s, assignment, view)
        assert budget.can_prepare(job, boot, keep, start_s, assignment, view) == expected, (job, boot, keep, start_s)
        if expected and book:
            budget.on_prepare(job, boot, keep, start_s, assignment, view)


# ----------------------------------------------------------------- the queue index's filters (issue 15)
def _wall(job: QueuedJob) -> float:
    return float("inf") if job.walltime_s is None else job.walltime_s


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_may_start_never_rules_out_a_job_the_oracle_admits(scenario):
    """``may_start`` (all the waiting jobs at once, before placement) says False only for jobs that
    ``can_start`` refuses on any hosts, from then on in the backfilling phase (with the head's reservation
    made): checked against the oracle on every candidate's allocation after it and the pass's starts."""
    _check_may_start(*scenario)


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(kept_all=True))
def test_may_start_with_every_free_host_kept(scenario):
    """The same with every free host kept idle until its own time, as ESC keeps its idle nodes: a job there
    may cost less than on a free host, and save energy after its end (its host asleep while the kept one
    would still be idle), so the filter's bound is looser; it must still never rule out an admitted job."""
    _check_may_start(*scenario)


def _check_may_start(budget, view, head, candidates, release_after) -> None:
    budget.begin_pass([], view)
    if head is not None:
        job, start_s, hosts = head
        budget.reserve_head(job, start_s, at(job, hosts), view)
    jobs = [job for job, _, _ in candidates]
    ruled_out: set[str] = set()
    taken: set[int] = set()
    for i, (job, order, start) in enumerate(candidates):
        if i == release_after:
            break  # the filter holds for one backfilling phase (one reservation)
        mask = budget.may_start(np.array([j.res for j in jobs]), np.array([_wall(j) for j in jobs]), view)
        if mask is not None:
            ruled_out |= {j.id for j, ok in zip(jobs, mask) if not ok}
        hosts = [h for h in order if h not in taken][:job.res]
        if len(hosts) < job.res:
            continue
        alloc = ProcSet(*hosts)
        expected = budget_oracle.can_start(budget, job, at(job, alloc), view)
        assert not (expected and job.id in ruled_out), (i, job, alloc)
        if expected and start:
            budget.on_start(job, at(job, alloc), view)
            taken.update(hosts)


@contextmanager
def bounds_counted() -> Iterator[list[int]]:
    """``Plan.may_admit`` (the bounds of ``may_start``) counting its calls in the list yielded."""
    from wattsched.schedulers.budget import plan as plan_module

    asked: list[int] = []
    original = plan_module.Plan.may_admit

    def may_admit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(1)
        return original(self, *args, **kwargs)

    plan_module.Plan.may_admit = may_admit  # type: ignore[method-assign]
    try:
        yield asked
    finally:
        plan_module.Plan.may_admit = original  # type: ignore[method-assign]


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_may_start_refusing_the_smallest_job_refuses_all_without_the_bounds(scenario, data):
    """With no host kept, ``may_start`` first asks about the narrowest, shortest of its jobs (issue 15). When that
    one is refused, the mask is all False and the bounds are not computed; then the oracle refuses every job on
    every allocation tried; when it is admitted, the bounds are computed and the mask is theirs."""

    budget, view, head, candidates, _ = scenario
    begin_maybe_reserved(budget, view, head, data)
    jobs = [job for job, _, _ in candidates]
    res, wall = np.array([j.res for j in jobs]), np.array([_wall(j) for j in jobs])
    with bounds_counted() as asked:
        mask = budget.may_start(res, wall, view)
    if mask is None:
        return
    fut = budget._future(view, budget._reserved, budget._cut)
    smallest = QueuedJob("smallest", int(res.min()), float(wall.min()), 0.0)
    if fut.kept or not np.isfinite(wall.min()):
        assert asked
        return
    refused = not asked
    if refused:
        assert not mask.any()
    free = list(view.free)
    if smallest.res <= len(free):  # (no host kept: every allocation of as many free hosts is the same to the budget)
        assert refused == (not budget_oracle.can_start(budget, smallest, at(smallest, ProcSet(*free[:smallest.res])),
                                                       view))
    if refused:
        for job, order, _ in candidates:
            alloc = ProcSet(*order[:job.res])
            assert len(alloc) < job.res or not budget_oracle.can_start(budget, job, at(job, alloc), view), job


def test_may_start_skips_the_bounds_when_the_smallest_job_is_refused():
    """Half way through the window with the balance spent, a one-host job of 10 s is refused: so is every job of
    the queue, and ``may_start`` says so without its bounds; with the balance full, it computes them."""

    n = 4
    budget = EnergyBud(budget_j=0.6 * n * P_COMP * 3600.0, window_start_s=0.0, window_end_s=3600.0)
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    view = ClusterView.idle_machine(n, 1800.0)
    res, wall = np.array([3, 1, 2]), np.array([500.0, 10.0, 100.0])
    with bounds_counted() as asked:
        for cea_j, expected_asked in ((-0.3 * budget.B, 0), (0.5 * budget.B, 1)):
            budget.cea_j = cea_j
            budget.begin_pass([], view)
            asked.clear()
            mask = budget.may_start(res, wall, view)
            assert mask is not None and len(asked) == expected_asked
            smallest = QueuedJob("s", 1, 10.0, 0.0)
            admitted = budget_oracle.can_start(budget, smallest, at(smallest, ProcSet(0)), view)
            assert admitted == bool(expected_asked)
            assert mask.any() == admitted


def test_refuses_all_only_inside_the_window_with_no_host_kept():
    """``refuses_all`` (asked before EASY scans its queue) is the test of a one-host job: True half way through
    the window with the balance spent, and then the oracle refuses that job; False with the balance full,
    before the window (unsure: a job may end before it starts), and when hosts are kept (refusals are not
    monotone there)."""
    n = 4
    budget = EnergyBud(budget_j=0.6 * n * P_COMP * 3600.0, window_start_s=1000.0, window_end_s=4600.0)
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    one = QueuedJob("one", 1, 10.0, 0.0)
    for now, cea_j, kept, expected in ((2800.0, -0.3, {}, True), (2800.0, 0.5, {}, False), (500.0, -0.3, {}, False),
                                       (2800.0, -0.3, {0: 3000.0}, False)):
        budget.bind_power(KeptHosts(kept))
        budget.cea_j = cea_j * budget.B
        view = ClusterView.idle_machine(n, now)
        budget.begin_pass([], view)
        assert budget.refuses_all(now + 10.0, view) == expected, (now, cea_j, kept)
        if expected:
            assert not budget_oracle.can_start(budget, one, at(one, ProcSet(1)), view)
            assert budget.refuses(one, view)  # recorded, as can_start records its refusals


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_may_prepare_never_rules_out_a_job_the_oracle_admits(scenario, data):
    """``may_prepare`` says False only for jobs that ``can_prepare`` refuses for every split of their hosts
    between asleep hosts to boot and free hosts (not kept for another job) to keep, for a start at
    ``start_s``, from then on in the pass; with ``boots_all`` when no such free host is left."""
    budget, view, head, candidates, _ = scenario
    begin_maybe_reserved(budget, view, head, data)
    now = view.now_s
    start_s = now + data.draw(st.sampled_from([0.0, 151.52, 160.0, 600.0]))
    pm = budget.power_manager
    kept = pm.kept_hosts(view) if pm is not None else {}
    jobs = [job for job, _, _ in candidates]
    ruled_out: set[str] = set()
    off = list(view.off)
    free = [h for h in view.free if h not in kept]
    for job, _, book in candidates:
        # with no free host left to keep, every host is booted: the filter may count the boots' power (reducePC)
        mask = budget.may_prepare(np.array([j.res for j in jobs]), np.array([_wall(j) for j in jobs]), start_s, view,
                                  boots_all=not free)
        if mask is not None:
            ruled_out |= {j.id for j, ok in zip(jobs, mask) if not ok}
        k = data.draw(st.integers(max(0, job.res - len(free)), min(job.res, len(off)))) if job.res <= len(off) + len(
            free) else None
        if k is None:
            continue
        boot = ProcSet(*data.draw(st.permutations(off))[:k])
        keep = ProcSet(*data.draw(st.permutations(free))[:job.res - k])
        assignment = at(job, boot | keep)
        expected = budget_oracle.can_prepare(budget, job, boot, keep, start_s, assignment, view)
        assert not (expected and job.id in ruled_out), (job, boot, keep, start_s)
        if expected and book:
            budget.on_prepare(job, boot, keep, start_s, assignment, view)


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios(), st.data())
def test_may_prepare_counting_the_boots_power_never_rules_out_a_job_the_oracle_admits(scenario, data):
    """reducePC behind a head, no free host left to keep: ``may_prepare(boots_all=True)`` also bounds the boots'
    power under the lowered rate; it says False only where ``can_prepare`` refuses booting every host, for
    every width that the hosts asleep allow, and a width from the cap's edge."""
    budget, view, head, _, _ = scenario
    assume(isinstance(budget, ReducePC) and budget.shutdown and head is not None)
    budget.begin_pass([], view)
    job, head_start_s, hosts = head
    budget.reserve_head(job, head_start_s, at(job, hosts), view)
    pm = budget.power_manager
    kept = pm.kept_hosts(view) if pm is not None else {}
    assume(budget._cut is not None and view.off and not [h for h in view.free if h not in kept])
    off = list(view.off)
    start_s = view.now_s + budget.power.switch_on_s
    wall = data.draw(st.sampled_from([1.0, 100.0, 1000.0]))
    checked = 0
    for n in range(1, len(off) + 1):
        candidate = QueuedJob(f"c{n}", n, wall, 0.0)
        mask = budget.may_prepare(np.array([n]), np.array([wall]), start_s, view, boots_all=True)
        boot = ProcSet(*off[:n])
        expected = budget_oracle.can_prepare(budget, candidate, boot, ProcSet(), start_s, at(candidate, boot), view)
        checked += 1
        if mask is not None and not mask[0]:
            assert not expected, (n, wall, start_s)
    assert checked


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_may_admit_per_distinct_end_equals_per_candidate(scenario, data):
    """``Plan.may_admit`` computes its bounds once per distinct end on a long queue (issue 19), or once per
    distinct walltime of the queue's codes (issue 15): the masks of ``may_start`` and ``may_prepare`` are the
    same as with the bounds computed candidate by candidate, on candidates repeated as a long queue holds them
    (same width and walltime, several times)."""
    from wattsched.schedulers.budget import plan as plan_module

    budget, view, head, candidates, _ = scenario
    begin_maybe_reserved(budget, view, head, data)
    jobs = [job for job, _, _ in candidates]
    picks = data.draw(st.lists(st.integers(0, max(0, len(jobs) - 1)), max_size=40)) if jobs else []
    res = np.array([j.res for j in jobs] + [jobs[i].res + data.draw(st.integers(0, 2)) for i in picks], dtype=np.int64)
    wall = np.array([_wall(j) for j in jobs] + [_wall(jobs[i]) for i in picks])
    start_s = view.now_s + data.draw(st.sampled_from([0.0, 151.52, 600.0]))
    # the queue's walltime codes: distinct values in order of arrival, plus values no candidate has
    values = list(dict.fromkeys(wall.tolist())) + [12345.5, 7.25]
    groups = (np.array(values), np.array([values.index(x) for x in wall.tolist()], dtype=np.intp))
    old = plan_module.UNIQUE_MIN_JOBS
    try:
        masks = []
        for threshold in (10 ** 9, 0):
            plan_module.UNIQUE_MIN_JOBS = threshold
            masks.append((budget.may_start(res, wall, view), budget.may_prepare(res, wall, start_s, view)))
        masks.append((budget.may_start(res, wall, view, groups), budget.may_prepare(res, wall, start_s, view, groups)))
    finally:
        plan_module.UNIQUE_MIN_JOBS = old
    for one, *others in zip(*masks):
        for other in others:
            assert (one is None) == (other is None)
            if one is not None:
                assert one.tolist() == other.tolist()


@given(st.sampled_from([-np.inf, 0.0, 50.0, 100.0, 150.0, 300.0]), st.sampled_from([0.0, 50.0, 100.0, 250.0, np.inf]),
       st.sampled_from([0.0, 2.5, -7.0, 203.12]), st.sampled_from([0.0, 100.0]), st.sampled_from([100.0, 250.0]))
def test_clip_of_one_segment_equals_the_array_clip(a, b, w, t0, t1):
    """Plan._clip_one (the pass's one extra segment, in plain Python) gives _clip's very values."""
    from wattsched.schedulers.budget.plan import Plan

    p0, times, deltas = Plan._clip_one(a, b, w, t0, t1)
    q0, qtimes, qdeltas = Plan._clip(np.array([a]), np.array([b]), np.array([w]), t0, t1)
    assert p0 == q0 and times.tolist() == qtimes.tolist() and deltas.tolist() == qdeltas.tolist()


_times = st.sampled_from([-np.inf, -np.inf, 0.0, 12.5, 100.0, 151.52, 333.3, 1000.0, 2e5 / 3, np.inf])
# powers whose sums round (a sum in another order than numpy's differs in the last bits)
_watts = st.one_of(st.floats(-1e4, 1e6, allow_nan=False),
                   st.sampled_from([0.1, 203.12 / 3, 1e6 / 7, 95.7, -33.3, 1e-3 / 3, 2.0 ** 52 + 1]))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_times, _times, _watts), max_size=300),
       st.lists(st.tuples(_times, _times, _watts), max_size=3),
       st.sampled_from([0.0, 12.5, 100.0]), st.sampled_from([333.3, 1000.0]), st.floats(-1e6, 1e6))
def test_plan_built_in_python_equals_the_numpy_build(segments, other, t0, te, cea):
    """A plan of few segments is built in plain Python (issue 15): its breakpoints, powers and balance are
    numpy's build's to the last bit (sums in numpy's order, pairwise ``sum`` included), on segments that
    start before, at and after ``t0``, end past ``te``, repeat breakpoints, or are empty."""
    from wattsched.schedulers.budget import plan as plan_module

    arrays = tuple(np.array(x, dtype=float) for x in zip(*segments)) if segments else (np.zeros(0),) * 3
    built = []
    old = plan_module.PY_MAX_SEGMENTS
    try:
        for limit in (10 ** 9, -1):
            plan_module.PY_MAX_SEGMENTS = limit
            plan = plan_module.Plan((), t0, te, 203.12 * 7 / 3, 1e-9, cea, arrays, other, {})
            built.append((plan.T, plan.G, plan.bal, plan.plan, plan.T_np.tolist(), plan.G_np.tolist(),
                          plan.bal_np.tolist(), plan.plan_np.tolist()))
    finally:
        plan_module.PY_MAX_SEGMENTS = old
    assert built[0] == built[1]


@pytest.mark.parametrize("n", [0, 3, 8, 9, 17, 64, 127, 128, 129, 250, 1000])
def test_plan_built_in_python_equals_the_numpy_build_on_many_segments(n):
    """The same on many random segments (pairwise sums of every size class: under 8 terms, one block of 128,
    halves above), most of them already started at ``t0``."""
    from wattsched.schedulers.budget import plan as plan_module

    rng = np.random.default_rng(n)
    begin = rng.uniform(0.0, 4000.0, n)
    a = np.where(rng.random(n) < 0.7, -np.inf, begin)
    b = begin + rng.choice([10.0, 151.52, 1e3 / 3, np.inf], n)
    w = rng.uniform(-50.0, 5000.0, n) * rng.choice([1.0, 1e-3, 1e3], n)
    other = [(500.0 / 3, 2500.1, 1234.5678)]
    built = []
    old = plan_module.PY_MAX_SEGMENTS
    try:
        for limit in (10 ** 9, -1):
            plan_module.PY_MAX_SEGMENTS = limit
            plan = plan_module.Plan((), 100.0, 3000.0, 1e5 / 3, 1e-9, 17.3, (a, b, w), other, {})
            built.append((plan.T, plan.G, plan.bal, plan.plan))
    finally:
        plan_module.PY_MAX_SEGMENTS = old
    assert built[0] == built[1]


_knots = st.sampled_from([-np.inf, 0.0, 12.5, 100.0, 151.52, 333.3, 600.0, 1000.0, 2e5 / 3, np.inf])


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_times, _times, _watts), max_size=60),
       st.lists(st.tuples(_times, _times, _watts), max_size=2), st.floats(-1e6, 1e7),
       st.lists(_knots | st.floats(0.0, 2000.0), max_size=20),
       st.sampled_from([0.0, 12.5, 100.0, 151.52]), st.sampled_from([0.0, 12.5, 100.0]),
       st.sampled_from([0.0, 103.12, -3.0, 1e-3 / 3]), st.sampled_from([0.0, -1e3 / 7, 250.0]),
       st.sampled_from([0.0, 6.1, 151.52]), st.sampled_from([0.0, -1e3 / 7, 33.3]),
       st.none() | st.tuples(st.floats(-1e3, 5e5), st.sampled_from([0.0, 50.0, 600.0, np.inf])),
       st.none() | st.tuples(st.sampled_from([0.0, 50.0, 1e3 / 7]), _knots | st.floats(0.0, 2000.0),
                             st.sampled_from([0.0, 12.5, 100.0 / 3])))
def test_bounds_in_python_equal_the_numpy_bounds(segments, other, cea, ends, a, origin, slope, offset, tail_s,
                                                  total_offset, cap, saving):
    """``Plan._bounds`` is computed in plain Python for few ends on a small plan (issue 15): the same bounds, to
    the last bit, as numpy's computation, whatever the ends (at breakpoints, before ``a``, past the window, without
    walltime), slope (zero and negative included), offsets, tail, reducePC's cap and the saving of kept hosts
    (``saving``: the smallest numbers of hosts too)."""
    from wattsched.schedulers.budget import plan as plan_module

    arrays = tuple(np.array(x, dtype=float) for x in zip(*segments)) if segments else (np.zeros(0),) * 3
    plan = plan_module.Plan((), 0.0, 1000.0, 203.12 * 7 / 3, 1e-9, cea, arrays, other, {})
    ends_np = np.array(ends, dtype=float)
    results = []
    old = plan_module.PY_MAX_ENDS
    try:
        for limit in (10 ** 9, -1):
            plan_module.PY_MAX_ENDS = limit
            up, low = plan._bounds(ends_np, a, origin, slope, offset, tail_s, total_offset, saving, cap)
            assert low is None or saving is not None
            results.append(([repr(x) for x in up.tolist()], None if low is None else [repr(x) for x in low.tolist()]))
    finally:
        plan_module.PY_MAX_ENDS = old
    assert results[0] == results[1]


def _kept_until_3000(balance_at_end_j: float) -> tuple[EnergyBud, ClusterView]:
    """4 free hosts, all kept idle until 3,000 s (then switching off and asleep) under energyBud with shutdown
    on the window [0, 3600) at 20 W, Cea set so that the plan leaves ``balance_at_end_j`` at the window's
    end; a pass begun at 0."""
    n, te, rate_w = 4, 3600.0, 20.0
    budget = EnergyBud(budget_j=rate_w * te, window_start_s=0.0, window_end_s=te)
    budget.bind_power(KeptHosts({h: 3000.0 for h in range(n)}))
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    view = ClusterView.idle_machine(n, 0.0)
    plan_j = n * (P_IDLE * 3000.0 + TAURUS.switch_off_w * TAURUS.switch_off_s
                  + TAURUS.off_w * (te - 3000.0 - TAURUS.switch_off_s))
    budget.cea_j = plan_j - rate_w * te + balance_at_end_j
    budget.begin_pass([], view)
    return budget, view


def test_may_start_keeps_a_short_job_on_a_host_kept_long():
    """A short job on a host kept idle long after its end saves energy (its host switches off after the job
    while the kept host would still be idle): when the balance is nearly spent at the end of the window it is
    admitted only thanks to that saving, so ``may_start`` must not rule it out (it would with the bound of a
    job on hosts not kept)."""
    budget, view = _kept_until_3000(2000.0)
    job = QueuedJob("short", 1, 100.0, 0.0)  # adds ~10 kJ while it runs, then saves ~260 kJ
    assert budget_oracle.can_start(budget, job, at(job, ProcSet(0)), view)
    mask = budget.may_start(np.array([1]), np.array([100.0]), view)
    assert mask is not None and bool(mask[0])


def test_may_start_with_kept_hosts_needs_enough_saving_when_the_plan_runs_short():
    """When the balance falls below zero before the window ends even with no more job (the kept hosts cost
    more than the budget allows), only jobs whose hosts, asleep after their end instead of idle, save
    enough may start: one host of a 100 s job saves about 250 kJ, and the plan is 450 kJ short, so the
    one-host job is refused and the two-host one admitted. ``may_start`` rules out the first (a lower
    bound on the number of hosts) and never the second."""
    budget, view = _kept_until_3000(-450e3)
    one, two = QueuedJob("one", 1, 100.0, 0.0), QueuedJob("two", 2, 100.0, 0.0)
    assert not budget_oracle.can_start(budget, one, at(one, ProcSet(0)), view)
    assert budget_oracle.can_start(budget, two, at(two, ProcSet((0, 1))), view)
    mask = budget.may_start(np.array([1, 2]), np.array([100.0, 100.0]), view)
    assert mask is not None and mask.tolist() == [False, True]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.dictionaries(st.integers(0, 300), st.sampled_from([5.0, 60.0, 61.5, 1800.0, float("inf")]), max_size=200),
       st.lists(st.tuples(st.integers(0, 300), st.integers(0, 120)), min_size=1, max_size=6))
def test_kept_index_counts_an_allocations_kept_hosts(kept, spans):
    """``KeptIndex.within`` (one bisection per interval, counts in Python or with numpy) against counting
    host by host: the same ``((until, count), …)``, by increasing ``until``, with no zero count; the index (built
    with numpy from the hosts in the mapping's order) is the hosts by increasing id with their time's rank among
    the distinct times."""
    alloc = ProcSet(*[(lo, lo + length) for lo, length in spans])
    expected: dict[float, int] = {}
    for h in alloc:
        if h in kept:
            expected[kept[h]] = expected.get(kept[h], 0) + 1
    index = KeptIndex(kept)
    assert index.within(alloc) == tuple(sorted(expected.items()))
    untils, ids = sorted(set(kept.values())), sorted(kept)
    assert (index.ids, index.untils, index.codes) == (ids, untils, [untils.index(kept[h]) for h in ids])


@given(st.lists(st.sampled_from([1.5, 2.0, 2.0 + 1e-12, 3.25, 1e5, 1e5 + 6.1, 7e5]), max_size=60),
       st.lists(st.floats(1.0, 1e6, allow_nan=False), max_size=60))
def test_unique_inverse_is_numpy_unique(repeated, spread) -> None:
    """The plan's breakpoints by a stable sort (many repeated times: kept hosts) are ``np.unique``'s arrays."""
    from wattsched.schedulers.budget.plan import unique_inverse

    values = np.array(repeated + spread, dtype=float)
    uniq, inverse = np.unique(values, return_inverse=True)
    for repeats in (True, False):
        got_uniq, got_inverse = unique_inverse(values, repeats)
        assert got_uniq.tobytes() == uniq.tobytes()
        assert np.array_equal(got_inverse, inverse.reshape(-1)) and got_inverse.shape == values.shape


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_times, _times, _watts), min_size=1, max_size=40),
       st.lists(st.tuples(_knots | st.floats(0.0, 1200.0), _knots | st.floats(0.0, 1200.0),
                          st.floats(-5e3, 5e3) | st.sampled_from([0.0, 203.12, -95.7])), max_size=5),
       st.floats(-2e5, 2e6), st.sampled_from([None, 5e3, 2e4]), st.sampled_from([0.0, 400.0, np.inf]))
def test_admits_without_interpolation_only_when_the_interpolation_agrees(segments, candidate, cea, cap, cap_until):
    """``Plan.admits`` skips the interpolation at the plan's breakpoints when its lowest balance there stays above the
    candidate's highest energy (issue 15): the answer is the one with the interpolation always made, for candidates
    whose power is negative at times (a job on kept hosts may save energy) and balances near zero."""
    from wattsched.schedulers.budget import plan as plan_module

    arrays = tuple(np.array(x, dtype=float) for x in zip(*segments))
    plan = plan_module.Plan((), 0.0, 1000.0, 203.12 * 7 / 3, 1e-9, cea, arrays, [], {})
    quick = plan.admits(candidate, cap, cap_until)
    plan._inner_min_g = -np.inf  # every check interpolates
    assert quick == plan.admits(candidate, cap, cap_until)


@pytest.mark.parametrize("saving_w", [0.0, 1.0])
@pytest.mark.parametrize("slack_j", [-1e-6, 1e-6])
def test_admits_interpolates_where_the_plan_dips_between_the_candidates_breakpoints(saving_w, slack_j):
    """A plan whose balance is lowest at 600 s, between the breakpoints of a candidate computing until 300 s (then
    saving ``saving_w``): the candidate is refused when its balance there is a micro-joule short, admitted with a
    micro-joule to spare; only the check at the plan's breakpoints sees it (the candidate's own breakpoints and the
    window's end have room), and the shortcut that skips the interpolation must not decide it."""
    from wattsched.schedulers.budget import plan as plan_module

    rate_w, comp_w = 100.0, 100.0
    # G(600) = cea + 600·rate − 200·1000; X(600) = 300·comp − 300·saving
    cea = 200 * 1000.0 - 600 * rate_w + 300 * comp_w - 300 * saving_w + slack_j
    arrays = (np.array([400.0]), np.array([600.0]), np.array([1000.0]))
    plan = plan_module.Plan((), 0.0, 1000.0, rate_w, 1e-9, cea, arrays, [], {})
    candidate = [(0.0, 300.0, comp_w), (300.0, 1000.0, -saving_w)]
    assert plan.admits(candidate, None, -np.inf) is (slack_j > 0)
    plan._inner_min_g = -np.inf  # every check interpolates
    assert plan.admits(candidate, None, -np.inf) is (slack_j > 0)


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 10), st.data())
def test_may_prepare_under_reduce_pc_cap_counts_every_hosts_preparation(n, data):
    """reducePC with shutdown behind a head reserved later (its energy lowers the power cap until then), hosts free
    and asleep: whatever split of a job's hosts between booting and keeping, each adds at least min(P_on, P̃idle)
    − sleep to the platform's power from the end of a switch-off until the job starts, so ``may_prepare`` rules out
    the widths the cap cannot hold then. It says False only where ``can_prepare`` refuses every split, and it does
    rule out some (the cap binds)."""
    te = 3600.0
    budget = ReducePC(budget_j=data.draw(st.floats(0.2, 0.9)) * n * P_COMP * te, window_start_s=0.0, window_end_s=te)
    budget.bind_power(KeptHosts({}))
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    now = data.draw(st.sampled_from([0.0, 100.0, 1000.0]))
    budget.cea_j = data.draw(st.floats(0.0, 0.5)) * budget.B  # energy enough: the cap decides
    states = data.draw(st.lists(st.sampled_from(["run", "free", "off", "off"]), min_size=n, max_size=n))
    view = ClusterView.idle_machine(n, now)
    view.free = ProcSet(*[h for h, s in enumerate(states) if s == "free"])
    view.off = ProcSet(*[h for h, s in enumerate(states) if s == "off"])
    for h, s in enumerate(states):
        if s == "run":
            view.add_running(RunningJob(f"r{h}", ProcSet(h), now - 1.0, now + data.draw(st.floats(10.0, 3000.0))))
    free, off = list(view.free), list(view.off)
    assume(off)
    budget.begin_pass([], view)
    head_res = data.draw(st.integers(1, n))
    head = QueuedJob("head", head_res, data.draw(st.floats(100.0, 2000.0)), 0.0)
    q = now + data.draw(st.sampled_from([60.0, 100.0, 160.0, 600.0]))  # (before the boot's end too)
    budget.reserve_head(head, q, at(head, ProcSet((0, head_res - 1))), view)
    assume(budget._cut is not None)
    start_s = now + budget.power.switch_on_s
    wall = data.draw(st.sampled_from([10.0, 100.0, 1000.0]))
    widths = np.arange(1, len(free) + len(off) + 1)
    mask = budget.may_prepare(widths, np.full(len(widths), wall), start_s, view, boots_all=not free)
    assume(mask is not None)  # (None when now + switch_on_s − now rounds below switch_on_s)
    for width, ok in zip(widths.tolist(), mask.tolist()):
        if ok:
            continue
        candidate = QueuedJob(f"c{width}", width, wall, 0.0)
        for k in range(max(0, width - len(free)), min(width, len(off)) + 1):  # k hosts booted, the rest kept
            boot, keep = ProcSet(*off[:k]), ProcSet(*free[:width - k])
            assert not budget_oracle.can_prepare(budget, candidate, boot, keep, start_s, at(candidate, boot | keep),
                                                 view), (width, k, wall)
    _CAP_RULED_OUT.append(int((~mask).sum()))


_CAP_RULED_OUT: list[int] = []


def test_may_prepare_under_reduce_pc_cap_rules_some_widths_out(monkeypatch):
    """(The test above is not vacuous.) Its cases, drawn again, with and without the bounds of the preparation's
    power under the cap (``EnergyBudget._prepare_room``): with them, many more widths are ruled out."""
    _CAP_RULED_OUT.clear()
    test_may_prepare_under_reduce_pc_cap_counts_every_hosts_preparation()
    with_bounds = sum(_CAP_RULED_OUT)
    _CAP_RULED_OUT.clear()
    monkeypatch.setattr(ReducePC, "_prepare_room", staticmethod(lambda *args: float("inf")))
    test_may_prepare_under_reduce_pc_cap_counts_every_hosts_preparation()
    assert with_bounds >= sum(_CAP_RULED_OUT) + 100


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.floats(0.0, 1e6), st.booleans()), min_size=1, max_size=150),
       st.booleans())
def test_running_segments_as_arrays_equal_the_lists(jobs, shutdown) -> None:
    """energyBud's plan segments of many running jobs, made as arrays directly (``_running_segment_arrays``, more
    than a plan built in Python holds), are the lists of the few-jobs path converted, float for float, in the same
    order: the plan's sums then run over the same values (jobs without walltime end at inf)."""
    from wattsched.schedulers.budget import energy_bud as energy_bud_module

    n = sum(size for size, _, _ in jobs)
    budget = EnergyBud(budget_j=1e15, window_start_s=0.0, window_end_s=1e6)
    if shutdown:
        budget.bind_power(KeptHosts({}))
    platform = ClusterView.idle_machine(n)
    platform.power = PlatformPower.uniform(TAURUS.node_model, n)
    budget.on_platform(platform)
    view = ClusterView.idle_machine(n)
    h = 0
    for k, (size, end, endless) in enumerate(jobs):
        view.add_running(RunningJob(f"j{k}", ProcSet((h, h + size - 1)), 0.0, math.inf if endless else end))
        h += size
    arrays = budget._running_segment_arrays(view)
    old = energy_bud_module.PY_MAX_SEGMENTS
    energy_bud_module.PY_MAX_SEGMENTS = 10**9  # the lists, whatever the number of jobs
    try:
        budget._running_cache = None
        lists = budget._running_segments(view)
    finally:
        energy_bud_module.PY_MAX_SEGMENTS = old
    assert isinstance(lists[0], list)
    for got, expected in zip(arrays[:3], lists[:3]):
        assert got.dtype == np.float64 and got.tolist() == expected
    budget._running_cache = None
    assert isinstance(budget._running_segments(view)[0], np.ndarray) == ((3 if shutdown else 2) * len(jobs) > old)
