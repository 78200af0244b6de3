"""Backfilling rules of schedulers/backfill.py (and the core's pass around them) on hand-built states,
plus hypothesis properties over a tiny time-stepping loop."""

from __future__ import annotations

import heapq
import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.schedulers.admission import AdmissionConstraint, NoConstraint
from wattsched.schedulers.backfill import EasyBackfilling, FcfsNoBackfill, head_reservation
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.pieces import REGISTRY
from wattsched.schedulers.placement import FirstFit, NonContiguous, Placement
from wattsched.schedulers.state import QueuedJob, RejectJob, RunningJob, StartJob

easy_backfill, fcfs_no_backfill, fcfs = EasyBackfilling(), FcfsNoBackfill(), Fcfs()
FIRST_FIT, NON_CONTIGUOUS = FirstFit(), NonContiguous()

INF = math.inf


# ----------------------------------------------------------------- builders
def ps(text: str) -> ProcSet:
    return ProcSet.from_str(text)


def job(job_id: str, res: int, walltime_s: float | None = 100.0, subtime_s: float = 0.0) -> QueuedJob:
    return QueuedJob(job_id, res=res, walltime_s=walltime_s, subtime_s=subtime_s)


def machine(nb_hosts: int, now_s: float = 0.0, running: tuple = (), placement: Placement = FIRST_FIT
            ) -> PolicyScheduler:
    """A scheduler whose view has ``running`` = ((id, "hosts", expected_end_s), ...) started at 0 (the
    scheduler is the placer the backfilling rules ask)."""
    policy = PolicyScheduler(order=fcfs, backfill=easy_backfill, placement=placement)
    policy.start(nb_hosts, now_s)
    view = policy.view
    for job_id, hosts, end_s in running:
        alloc = ps(hosts)
        view.add_running(RunningJob(job_id, alloc, 0.0, end_s))
        view.free = view.free - alloc
    return policy


def run(rule, queue, policy: PolicyScheduler, admission: AdmissionConstraint | None = None):
    starts = rule.select(queue, policy.view, policy, admission or NoConstraint())
    return {job.id: str(assignment.hosts) for job, assignment in starts}


# ----------------------------------------------------------------- FCFS
def test_fcfs_starts_in_order_while_the_head_fits():
    view = machine(8)
    queue = [job("a", 3), job("b", 4), job("c", 2), job("d", 1)]
    assert run(fcfs_no_backfill, queue, view) == {"a": "0-2", "b": "3-6"}


def test_fcfs_blocks_behind_the_head():
    view = machine(8, running=(("r", "0-5", 50.0),))
    queue = [job("big", 4), job("small", 1, walltime_s=1.0)]
    assert run(fcfs_no_backfill, queue, view) == {}


def test_fcfs_head_waits_for_a_contiguous_interval():
    view = machine(6, running=(("r", "2-3", 50.0),))
    assert run(fcfs_no_backfill, [job("a", 3)], view) == {}
    view = machine(6, running=(("r", "2-3", 50.0),), placement=NON_CONTIGUOUS)
    assert run(fcfs_no_backfill, [job("a", 3)], view) == {"a": "0-1 4"}


# ----------------------------------------------------------------- EASY
def test_easy_backfills_a_job_that_ends_before_the_shadow_time():
    # head needs 6 hosts: starts at 100 when r ends; s (2 hosts, 100 s) ends exactly then
    view = machine(8, running=(("r", "0-5", 100.0),))
    queue = [job("head", 6), job("s", 2, walltime_s=100.0)]
    assert run(easy_backfill, queue, view) == {"s": "6-7"}


def test_easy_does_not_backfill_a_job_that_would_delay_the_head():
    view = machine(8, running=(("r", "0-5", 100.0),))
    queue = [job("head", 7), job("long", 2, walltime_s=100.5)]
    assert run(easy_backfill, queue, view) == {}


def test_easy_uses_walltimes_not_queue_position():
    view = machine(8, running=(("r", "0-5", 100.0),))
    queue = [job("head", 8), job("long", 1, walltime_s=500.0), job("short", 2, walltime_s=60.0)]
    assert run(easy_backfill, queue, view) == {"short": "6-7"}


def test_easy_backfills_a_long_job_on_extra_hosts():
    # head needs 4: reserved 0-3 at 100 (first-fit); 6-7 stay extra whatever the length
    view = machine(8, running=(("r", "0-5", 100.0),))
    queue = [job("head", 4), job("long", 2, walltime_s=10_000.0), job("nowall", 1, walltime_s=None)]
    assert run(easy_backfill, queue, view) == {"long": "6-7"}


def test_easy_long_job_avoids_the_reserved_interval():
    # free 0-1 and 6-7; at 50, hosts 2-5 are free too: head (4 hosts) reserved 0-3
    view = machine(8, running=(("r", "2-5", 50.0),))
    queue = [job("head", 5), job("long", 2, walltime_s=1000.0)]
    # head needs 5: 0-7 at 50 gives 0-4; long fits on 6-7 (outside) but not on 0-1
    assert run(easy_backfill, queue, view) == {"long": "6-7"}
    queue = [job("head", 7), job("long", 1, walltime_s=1000.0)]
    assert run(easy_backfill, queue, view) == {"long": "7"}
    queue = [job("head", 8), job("long", 1, walltime_s=1000.0)]
    assert run(easy_backfill, queue, view) == {}


def test_easy_equal_expected_ends_release_hosts_together():
    # two jobs end at 100: only together do they make room for the head
    view = machine(8, running=(("r1", "0-2", 100.0), ("r2", "3-5", 100.0), ("r3", "6", 300.0)))
    reservation = head_reservation(job("head", 6), 0.0, view.view.free, sorted(view.view.running.values(),
                                   key=lambda r: r.expected_end_s), view)
    assert reservation is not None and (reservation.start_s, str(reservation.hosts)) == (100.0, "0-5")
    queue = [job("head", 6), job("a", 1, walltime_s=100.0), job("b", 1, walltime_s=150.0)]
    assert run(easy_backfill, queue, view) == {"a": "7"}
    # released together: the lowest interval at 100 is 0-3, not 3-6 (what r1 alone would give)
    view = machine(10, running=(("r1", "4-6", 100.0), ("r2", "0-2", 100.0)))
    running = sorted(view.view.running.values(), key=lambda r: r.expected_end_s)
    reservation = head_reservation(job("head", 4), 0.0, view.view.free, running, view)
    assert reservation is not None and (reservation.start_s, str(reservation.hosts)) == (100.0, "0-3")


def test_easy_contiguous_reservation_waits_for_an_interval():
    # 4 hosts are free at 10 (0-1, 4-5) but not contiguous, still not at 20; the interval 0-3 at 30
    specs = (("r1", "2", 20.0), ("r2", "3", 30.0), ("r3", "4-5", 10.0))
    view = machine(6, running=specs)
    running = sorted(view.view.running.values(), key=lambda r: r.expected_end_s)
    reservation = head_reservation(job("head", 4), 0.0, view.view.free, running, view)
    assert reservation is not None and (reservation.start_s, str(reservation.hosts)) == (30.0, "0-3")
    view = machine(6, running=specs, placement=NON_CONTIGUOUS)
    reservation = head_reservation(job("head", 4), 0.0, view.view.free, running, view)
    assert reservation is not None and (reservation.start_s, str(reservation.hosts)) == (10.0, "0-1 4-5")


def test_easy_jobs_without_walltime():
    # the running job has no walltime: the head can never be planned before the end of time,
    # so only the hosts outside its reservation at infinity can take long jobs
    view = machine(4, running=(("r", "0-1", INF),))
    queue = [job("head", 3), job("short", 2, walltime_s=5.0), job("forever", 1, walltime_s=None)]
    assert run(easy_backfill, queue, view) == {"short": "2-3"}
    queue = [job("head", 3), job("forever", 1, walltime_s=None)]
    assert run(easy_backfill, queue, view) == {"forever": "3"}
    # a head without walltime is fine: FCFS starts it when it fits
    assert run(easy_backfill, [job("head", 2, walltime_s=None)], view) == {"head": "2-3"}


def test_easy_starts_head_then_backfilled_in_queue_order():
    view = machine(8, running=(("r", "0-3", 100.0),))
    queue = [job("h", 2), job("big", 6), job("x", 1, walltime_s=50.0), job("y", 1, walltime_s=50.0)]
    starts = easy_backfill.select(queue, view.view, view, NoConstraint())
    assert [job.id for job, _ in starts] == ["h", "x", "y"]


class Refuse(AdmissionConstraint):
    """Admits no job whose id is in ``refused``; records the hooks."""

    def __init__(self, refused):
        self.refused, self.calls = set(refused), []

    def can_start(self, job, assignment, view):
        return job.id not in self.refused

    def reserve_head(self, job, start_s, assignment, view):
        self.calls.append(("reserve", job.id, start_s, str(assignment.hosts)))

    def release_head(self):
        self.calls.append(("release",))


def test_easy_asks_the_admission_constraint():
    view = machine(8, running=(("r", "0-5", 100.0),))
    admission = Refuse({"s1"})
    queue = [job("head", 7), job("s1", 1, walltime_s=10.0), job("s2", 1, walltime_s=10.0)]
    assert run(easy_backfill, queue, view, admission=admission) == {"s2": "6"}
    assert admission.calls == [("reserve", "head", 100.0, "0-6"), ("release",)]


def test_core_rejects_wide_and_empty_jobs_first_then_starts():
    policy = PolicyScheduler(order=fcfs, backfill=easy_backfill)
    policy.start(4)
    policy.on_submitted(job("ok", 2))
    policy.on_submitted(job("wide", 5))
    policy.on_submitted(job("none", 0))
    assert policy.schedule() == [RejectJob("wide"), RejectJob("none"), StartJob("ok", ps("0-1"))]
    assert policy.schedule() == []
    assert str(policy.view.free) == "2-3"
    policy.on_completed("ok", "COMPLETED_SUCCESSFULLY")
    assert str(policy.view.free) == "0-3" and policy.view.running == {}


def test_one_pass_stays_fast_with_10000_waiting_jobs():
    policy = PolicyScheduler(order=fcfs, backfill=easy_backfill)
    policy.start(1024)
    policy.set_time(0.0)
    policy.on_submitted(job("blocker", 1000, walltime_s=3600.0))
    policy.schedule()
    policy.on_submitted(job("head", 1024, walltime_s=3600.0, subtime_s=1.0))
    for k in range(10_000):  # none ends before the shadow time, none fits outside the reservation
        policy.on_submitted(job(f"j{k}", 1 + k % 64, walltime_s=7200.0, subtime_s=2.0 + k))
    t0 = time.perf_counter()
    decisions = policy.schedule()
    elapsed = time.perf_counter() - t0
    assert decisions == []
    assert elapsed < 0.5, f"one pass over 10,000 waiting jobs took {elapsed:.3f} s"


# ----------------------------------------------------------------- properties
jobs_strategy = st.lists(
    st.tuples(
        st.integers(0, 30),                                # subtime
        st.integers(1, 9),                                 # res (9 > 8 hosts: rejected)
        st.one_of(st.integers(1, 40), st.none()),          # walltime (None: no walltime)
        st.integers(1, 40),                                # runtime if no walltime, else
        st.sampled_from([1.0, 1.0, 0.5, 0.3]),             # fraction of the walltime really run
    ),
    min_size=1,
    max_size=25,
)


def simulate(rule, placement: Placement, specs, nb_hosts: int = 8):
    """Tiny time-stepping loop: jobs run runtime <= walltime; at each event time, completions, then
    submissions, then one pass whose decisions are applied. Checks hosts are never double-booked and
    records, for each job, the reservation computed on the state left by the pass where it first is the
    head of the queue."""
    policy = PolicyScheduler(order=fcfs, backfill=rule, placement=placement)
    policy.start(nb_hosts)
    jobs = {}
    events = []  # (time, kind 0=completion 1=submission, seq, job id)
    for k, (sub, res, wall, run_s, frac) in enumerate(specs):
        job_id = f"w0!{k}"
        runtime = run_s if wall is None else max(1e-3, wall * frac)
        jobs[job_id] = (job(job_id, res, None if wall is None else float(wall), float(sub)), runtime)
        heapq.heappush(events, (float(sub), 1, k, job_id))
    busy = ProcSet()
    started, rejected, reservation_at_head = {}, set(), {}
    seq = len(specs)
    while events:
        now = events[0][0]
        policy.set_time(now)
        while events and events[0][0] == now:
            _, kind, _, job_id = heapq.heappop(events)
            if kind == 0:
                busy = busy - started[job_id][1]
                policy.on_completed(job_id, "COMPLETED_SUCCESSFULLY")
            else:
                policy.on_submitted(jobs[job_id][0])
        for decision in policy.schedule():
            if isinstance(decision, RejectJob):
                rejected.add(decision.job_id)
                continue
            assert isinstance(decision, StartJob)
            queued, runtime = jobs[decision.job_id]
            assert len(decision.alloc) == queued.res
            assert decision.alloc.isdisjoint(busy), f"{decision} on busy hosts {busy}"
            assert not placement.contiguous or decision.alloc.iscontiguous()
            busy = busy | decision.alloc
            started[decision.job_id] = (now, decision.alloc)
            seq += 1
            heapq.heappush(events, (now + runtime, 0, seq, decision.job_id))
        waiting = fcfs.sort(policy.queue, policy.view)
        if waiting and waiting[0].id not in reservation_at_head:
            view = policy.view
            running = sorted(view.running.values(), key=lambda r: r.expected_end_s)
            resv = head_reservation(waiting[0], now, view.free, running, policy)
            reservation_at_head[waiting[0].id] = INF if resv is None else resv.start_s
    return jobs, started, rejected, reservation_at_head, policy


@pytest.mark.parametrize("placement", list(REGISTRY["placement"]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=jobs_strategy)
def test_easy_never_delays_the_head_and_ends_every_job(placement, specs):
    jobs, started, rejected, reservation_at_head, policy = simulate(easy_backfill, REGISTRY["placement"][placement](),
                                                                    specs)
    assert set(started) | rejected == set(jobs) and not set(started) & rejected
    assert rejected == {j for j, (q, _) in jobs.items() if q.res > 8}
    assert policy.queue == [] and policy.view.running == {}
    for job_id, promised_s in reservation_at_head.items():
        assert started[job_id][0] <= promised_s, f"{job_id} started after its reservation"


@settings(max_examples=100, deadline=None)
@given(specs=jobs_strategy)
def test_fcfs_starts_jobs_in_queue_order(specs):
    jobs, started, rejected, _, policy = simulate(fcfs_no_backfill, FIRST_FIT, specs)
    assert set(started) | rejected == set(jobs)
    order = [j.id for j in fcfs.sort([q for j, (q, _) in jobs.items() if j in started], policy.view)]
    starts = [started[j][0] for j in order]
    assert starts == sorted(starts)


_ends = st.sampled_from([0.0, 5.0, 5.0, 10.0, INF])
_pseudo = st.tuples(_ends, st.sampled_from([0.0, 1.0]), st.sampled_from(["a", "b", "~off", "~switching0"]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(running=st.lists(_pseudo, max_size=12), pending=st.lists(_pseudo, min_size=1, max_size=6))
def test_the_view_merges_running_and_pending_jobs_as_heapq_does(running, pending):
    """``ClusterView.by_end``'s merge of the running jobs and a backfill view's pseudo jobs (``merged_by_end``) gives
    the jobs in ``heapq.merge``'s order (by ``end_key``, the running job first on equal keys), ties included."""
    from wattsched.schedulers.state import end_key, merged_by_end

    def jobs(keys):
        return sorted((RunningJob(job_id, ProcSet(k), start, end) for k, (end, start, job_id) in enumerate(keys)),
                      key=end_key)

    r, p = jobs(running), jobs(pending)
    assert [id(j) for j in merged_by_end(r, p)] == [id(j) for j in heapq.merge(r, p, key=end_key)]
