"""Backfilling rules: which waiting jobs start now (second policy slot, DESIGN §5).

A backfilling rule is a function ``rule(queue, view, allocator, admission) -> list[StartJob]``: ``queue``
is the waiting jobs in scheduling order (see :mod:`schedulers.order`), ``view`` the machine before the
pass (not modified), ``allocator`` the placement (:mod:`schedulers.allocation`) and ``admission`` the
admission constraint (:mod:`schedulers.admission`). It returns the jobs to start now, head first then the
backfilled ones in queue order.

- :func:`fcfs_no_backfill`: start jobs in queue order while the first one fits; the rest waits behind it.
- :func:`easy_backfill`: EASY backfilling (Lifka 1995; energy-budget paper §II, Algorithm 1): FCFS first,
  then one reservation for the head job and every later job that fits now and does not delay it starts.

Reservation (:func:`head_reservation`): walking the running jobs by expected end (start + walltime; jobs
without walltime never end), the **shadow time** is the first expected end at which the head fits on the
hosts free by then (jobs ending at the same time are released together), and the reservation is a
concrete host set chosen by :meth:`Allocator.reserve` at that time. A later job is backfilled when it fits
now and either ends (now + walltime) no later than the shadow time, or fits on the free hosts outside the
reservation ("extra" hosts). A job without walltime never "ends before the shadow time". With contiguous
allocations the concrete host set is what makes this exact (a count of extra hosts is not enough: the
head needs one interval); with non-contiguous ones the reservation prefers hosts that are not free now,
which allows exactly the classical count of extra processors.

Guarantee (tested with hypothesis in ``tests/test_backfill.py``): if jobs never run past their walltime
(Batsim kills them there), the head job starts no later than the shadow time computed when it became the
head: every job on its reserved hosts ends by then, and later passes only find an earlier or equal time.

Cost of one pass: the running jobs are sorted once (O(R log R)); the queue is scanned once, with O(1)
checks for jobs wider than the free hosts and an early stop once no host is free; for contiguous
allocators, a failed width is remembered (the free set only shrinks during a pass), so each allocation
attempt that fails costs one scan of the free intervals at most once per width bound.
"""

from __future__ import annotations

import heapq
import math
from itertools import islice
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from procset import ProcSet

from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.allocation import Allocator
from wattsched.schedulers.state import ClusterView, QueuedJob, RunningJob, StartJob, end_key as _end_key
from wattsched.base.hostsets import minus, size

INF = math.inf

Backfill = Callable[[Sequence[QueuedJob], ClusterView, Allocator, AdmissionConstraint], list[StartJob]]


@dataclass(frozen=True)
class Reservation:
    """Where and when the head job will start at the latest: hosts ``hosts`` from ``start_s`` on."""

    job_id: str
    start_s: float
    hosts: ProcSet


def head_reservation(
    head: QueuedJob,
    now_s: float,
    free: ProcSet,
    running: Iterable[RunningJob],
    allocator: Allocator,
) -> Reservation | None:
    """EASY's reservation for ``head``: the shadow time and the hosts it will get then.

    Args:
        head: the first waiting job.
        now_s: current time; the reservation starts now if the head fits on ``free``.
        free: hosts free now.
        running: running jobs **sorted by expected end** (any iterable: it is consumed only until the
            head fits).
        allocator: the placement rule (its :meth:`~Allocator.reserve` picks the hosts).

    Returns:
        The reservation, or ``None`` when the head does not fit even once every running job has ended
        (hosts off or switching: a power manager must act first).
    """
    n = head.res
    count = size(free)
    if count >= n:
        hosts = allocator.reserve(free, free, n)
        if hosts is not None:
            return Reservation(head.id, now_s, hosts)
    # free intervals by first and by last host, merged as running jobs end (allocations are disjoint)
    by_inf: dict[int, int] = {}
    by_sup: dict[int, int] = {}
    longest = 0
    for itv in free.intervals():
        by_inf[itv.inf], by_sup[itv.sup] = itv.sup, itv.inf
        longest = max(longest, itv.sup - itv.inf + 1)
    contiguous = allocator.contiguous
    ending = iter(running)
    job = next(ending, None)
    while job is not None:
        end_s = job.expected_end_s
        while job is not None and job.expected_end_s == end_s:
            for itv in job.alloc.intervals():
                inf, sup = itv.inf, itv.sup
                if inf - 1 in by_sup:
                    inf = by_sup.pop(inf - 1)
                    del by_inf[inf]
                if sup + 1 in by_inf:
                    sup = by_inf.pop(sup + 1)
                    del by_sup[sup]
                by_inf[inf], by_sup[sup] = sup, inf
                longest = max(longest, sup - inf + 1)
                count += itv.sup - itv.inf + 1
            job = next(ending, None)
        if count < n or (contiguous and longest < n):
            continue
        hosts = allocator.reserve(free, sorted(by_inf.items()), n)
        if hosts is not None:
            return Reservation(head.id, end_s, hosts)
    return None


def admitted_reservation(
    head: QueuedJob,
    now_s: float,
    free: ProcSet,
    running: Iterable[RunningJob],
    allocator: Allocator,
    admission: AdmissionConstraint,
    view: ClusterView,
) -> Reservation | None:
    """:func:`head_reservation`, then moved later when the admission constraint cannot admit the head
    at that time (:meth:`AdmissionConstraint.earliest_start_s`; the hosts stay the same: they are free
    from the shadow time on)."""
    reservation = head_reservation(head, now_s, free, running, allocator)
    if reservation is None:
        return None
    start_s = admission.earliest_start_s(head, reservation.start_s, view)
    if start_s > reservation.start_s:
        return Reservation(head.id, start_s, reservation.hosts)
    return reservation


def _fcfs_phase(
    queue: Sequence[QueuedJob],
    view: ClusterView,
    allocator: Allocator,
    admission: AdmissionConstraint,
    starts: list[StartJob],
) -> tuple[int, ProcSet]:
    """Start queue jobs in order while the first one fits; return the index of the head and the
    hosts still free."""
    free = view.free
    count = size(free)
    i = 0
    for job in queue:
        if count == 0 or job.res > count:
            break
        alloc = allocator(free, job.res)
        if alloc is None or not admission.can_start(job, alloc, view):
            break
        admission.on_start(job, alloc, view)
        starts.append(StartJob(job.id, alloc))
        free = minus(free, alloc)
        count -= job.res
        i += 1
    return i, free


def fcfs_no_backfill(
    queue: Sequence[QueuedJob],
    view: ClusterView,
    allocator: Allocator,
    admission: AdmissionConstraint,
) -> list[StartJob]:
    """First come, first served without backfilling: start jobs in queue order while the head fits
    (and is admitted); the first job that does not fit blocks every job behind it."""
    starts: list[StartJob] = []
    _fcfs_phase(queue, view, allocator, admission, starts)
    return starts


def easy_backfill(
    queue: Sequence[QueuedJob],
    view: ClusterView,
    allocator: Allocator,
    admission: AdmissionConstraint,
) -> list[StartJob]:
    """EASY backfilling, exact with concrete reservations (energy-budget paper §II, Algorithm 1).

    Start jobs in queue order while the head fits; then reserve hosts for the head at its shadow time
    (:func:`head_reservation`) and start every later job that fits now and either ends no later than
    the shadow time or only uses free hosts outside the reservation. Jobs without walltime are treated
    as infinitely long. The admission constraint is asked before every start and brackets the
    backfilling phase with ``reserve_head`` / ``release_head`` (Algorithm 2's energy reservation).
    """
    starts: list[StartJob] = []
    i, free = _fcfs_phase(queue, view, allocator, admission, starts)
    if i >= len(queue) - 1 or not free:
        return starts  # no waiting job behind the head, or nothing free to backfill on
    now_s = view.now_s
    head = queue[i]
    started = {s.job_id: s.alloc for s in starts}
    just_started = sorted(
        (RunningJob(job.id, started[job.id], now_s, job.expected_end_s(now_s)) for job in queue[:i]),
        key=_end_key,
    )
    running = heapq.merge(view.running_by_end, just_started, key=_end_key) if just_started else view.running_by_end
    reservation = admitted_reservation(head, now_s, free, running, allocator, admission, view)
    if reservation is None:
        shadow_s, extra = INF, free  # the head cannot start with the hosts that are on
    else:
        shadow_s, extra = reservation.start_s, minus(free, reservation.hosts)
        admission.reserve_head(head, shadow_s, reservation.hosts, view)
    free_count, extra_count = size(free), size(extra)
    contiguous = allocator.contiguous
    # smallest width known not to fit in `free` / `extra` (both only shrink during the pass)
    no_fit_free = no_fit_extra = free_count + 1
    for job in islice(queue, i + 1, None):
        n = job.res
        if n > free_count or n >= no_fit_free:
            if free_count == 0:
                break
            continue
        end_s = job.expected_end_s(now_s)
        if end_s <= shadow_s and end_s != INF:
            alloc = allocator(free, n)
            if alloc is None:
                if contiguous:
                    no_fit_free = n
                continue
        else:
            if n > extra_count or n >= no_fit_extra:
                continue
            alloc = allocator(extra, n)
            if alloc is None:
                if contiguous:
                    no_fit_extra = n
                continue
        if not admission.can_start(job, alloc, view):
            continue
        admission.on_start(job, alloc, view)
        starts.append(StartJob(job.id, alloc))
        free = minus(free, alloc)
        free_count -= n
        if not extra.isdisjoint(alloc):
            extra = minus(extra, alloc)
            extra_count = size(extra)
    if reservation is not None:
        admission.release_head()
    return starts
