"""Backfilling rules: which waiting jobs start now (slot ``backfill``).

A :class:`Backfilling` rule's :meth:`~Backfilling.select` gets the waiting jobs in scheduling order (see
:mod:`wattsched.schedulers.order`), the machine before the pass (``view``, not modified), a
:class:`Placer` (the placement and the frequency choice combined by the core: an
:class:`~wattsched.schedulers.state.Assignment` per job, with the job's walltime at its pstate) and the
admission constraint (:mod:`wattsched.schedulers.admission`). It returns the jobs to start now with their
assignments, head first then the backfilled ones in queue order.

- :class:`FcfsNoBackfill` (``fcfs``): start jobs in queue order while the first one fits; the rest waits
  behind it.
- :class:`EasyBackfilling` (``easy``): EASY backfilling (Lifka 1995; energy-budget paper §II, Algorithm 1):
  FCFS first, then one reservation for the head job and every later job that fits now and does not delay
  it starts.

Reservation (:func:`head_reservation`): walking the running jobs by expected end (start + walltime at
their pstate; jobs without walltime never end), the **shadow time** is the first expected end at which the
head fits on the hosts free by then (jobs ending at the same time are released together), and the
reservation is a concrete host set chosen by the placement at that time. A later job is backfilled when it
fits now and either ends (now + its walltime at its pstate) no later than the shadow time, or fits on the
free hosts outside the reservation ("extra" hosts). A job without walltime never "ends before the shadow
time". With contiguous placements the concrete host set is what makes this exact (a count of extra hosts
is not enough: the head needs one interval); with non-contiguous ones the reservation prefers hosts that are
not free now, which allows exactly the classical count of extra processors.

Guarantee (tested with hypothesis in ``tests/test_backfill.py``): if jobs never run past their walltime at
their pstate (Batsim kills them at their walltime, and a lower frequency only stretches it by the job's
runtime model), the head job starts no later than the shadow time computed when it became the head: every
job on its reserved hosts ends by then, and later passes only find an earlier or equal time.

Cost of one pass: the running jobs are kept sorted by the core; the queue is scanned once, with O(1)
checks for jobs wider than the free hosts and an early stop once no host is free; for contiguous
placements, a failed width is remembered (the free set only shrinks during a pass), so each allocation
attempt that fails costs one scan of the free intervals at most once per width bound.

**Partitions and job-partition entries** (EAMC paper §4.2; docs/architecture.md §3). With a *partitioned*
placement (:attr:`Placer.partitioned`: each job runs inside one partition, e.g. ``partitions`` of
:mod:`wattsched.schedulers.eamc`) the queue may hold several **entries** of one job, each restricted to one
partition (:attr:`~wattsched.schedulers.state.QueuedJob.partition`, same ``id``), in the order the queue
order chose (an order with ``entries = True``). Both rules then start a job at most once per pass (an entry
whose job started is skipped). EASY passes over the entries wider than the widest fit of their
:meth:`Placer.fit_key` (the hosts a job may use) in the hosts free (:meth:`Placer.widest_fit`, asked again after
each start) or than a width that failed for that key: widths are known per key, not for the whole machine.
EASY's head is the first entry that cannot start, its reservation is on that entry's partition (so entries on the
other partitions backfill freely there), and when the head's job starts through a later entry of its own (on
another partition) the pass starts over from the first waiting entry with a new head: EASY on the queue without
that job. With one entry per job and a placement that is not partitioned, nothing of this applies and the rules
are exactly the ones above.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import ClassVar, Iterable, Protocol, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.hostsets import disjoint, intervals, longest, minus, size
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.pieces import Piece, register
from wattsched.schedulers.placement import FreeHosts
from wattsched.schedulers.queue import JobsBehind, narrowest_and_shortest
from wattsched.schedulers.state import JOB_ID, Assignment, ClusterView, QueuedJob, RunningJob, end_key

INF = math.inf

#: A job to start now, and where and how.
Start = tuple[QueuedJob, Assignment]


class Placer(Protocol):
    """The placement and the frequency choice combined (the core is one): what backfilling rules and
    power managers ask."""

    @property
    def contiguous(self) -> bool:
        """Whether allocations are single intervals."""
        ...

    def place(self, job: QueuedJob, free: FreeHosts) -> Assignment | None:
        """``job``'s hosts among ``free`` (None: it does not fit), its pstate and walltime there."""
        ...

    def assign(self, job: QueuedJob, hosts: ProcSet) -> Assignment:
        """``job`` on exactly ``hosts``: its pstate and walltime there."""
        ...

    @property
    def shortest_walltime_s(self) -> float:
        """The shortest walltime (at the top frequency) among the waiting jobs (``inf`` when none has one)."""
        ...

    @property
    def partitioned(self) -> bool:
        """Whether a job runs inside one partition (the queue may hold job-partition entries: module docstring)."""
        ...

    def fit_key(self, job: QueuedJob) -> object:
        """Which hosts ``job`` may use (partitioned placements): jobs with equal keys fit or not alike."""
        ...

    def widest_fit(self, key: object, free: ProcSet) -> int:
        """A bound of the widths that jobs of fit key ``key`` may get in ``free`` (partitioned placements)."""
        ...

    def reserve(self, job: QueuedJob, free_now: ProcSet, free_then: FreeHosts) -> Assignment | None:
        """The assignment to reserve for ``job``, which will start when ``free_then`` is free."""
        ...

    def starting(self, job: QueuedJob) -> None:
        """``job`` starts in this pass with the assignment it was given: the jobs placed after it no longer count it
        as waiting (UPAS's WQ_size)."""
        ...


@dataclass(frozen=True)
class Reservation:
    """Where and when the head job will start at the latest: ``assignment`` from ``start_s`` on."""

    job: QueuedJob
    start_s: float
    assignment: Assignment

    @property
    def hosts(self) -> ProcSet:
        return self.assignment.hosts


#: Whether :class:`EasyBackfilling` may answer a pass that follows only submissions from what it kept of the
#: previous pass (:class:`_Kept`; tests set it to False to compare with full passes).
KEEP_PASSES = True


@dataclass
class _Kept:
    """What an EASY pass leaves for the next one (:meth:`EasyBackfilling._select`): the head that could not start,
    its reservation (None: none; ``no_free``: nothing was left free to backfill on), the free hosts and the
    hosts outside the reservation once the pass's jobs started, and what the next pass checks to know that
    nothing else changed: the time, the number of waiting jobs, the view's ``running_version`` and
    ``hosts_version``. Over partition entries (:meth:`EasyBackfilling._select_entries`) only the head (the first
    entry left), the free hosts, the number of entries left and what the next pass checks are kept (no
    reservation: such a pass is made in full or not at all)."""

    head: QueuedJob
    reservation: Reservation | None
    no_free: bool
    free: ProcSet
    extra: ProcSet
    now_s: float
    waiting: int
    running_version: int
    hosts_version: int


def head_reservation(head: QueuedJob, now_s: float, free: ProcSet, running: Iterable[RunningJob],
                     placer: Placer) -> Reservation | None:
    """EASY's reservation for ``head``: the shadow time and the assignment it will get then.

    Args:
        head: the first waiting job.
        now_s: current time; the reservation starts now if the head fits on ``free``.
        free: hosts free now.
        running: running jobs **sorted by expected end** (any iterable: it is consumed only until the
            head fits).
        placer: chooses the hosts (and the head's pstate on them).

    Returns:
        The reservation, or ``None`` when the head does not fit even once every running job has ended
        (hosts off or switching: a power manager must act first).
    """
    n = head.res
    count = size(free)
    if count >= n:
        assignment = placer.reserve(head, free, free)
        if assignment is not None:
            return Reservation(head, now_s, assignment)
    # free intervals by first and by last host, merged as running jobs end (allocations are disjoint)
    by_inf: dict[int, int] = {}
    by_sup: dict[int, int] = {}
    for inf, sup in intervals(free):
        by_inf[inf], by_sup[sup] = sup, inf
    contiguous = placer.contiguous
    pop_inf, pop_sup = by_inf.pop, by_sup.pop
    ending = iter(running)
    job = next(ending, None)
    while job is not None:
        end_s = job.expected_end_s
        grown = 0  # the longest interval this end time made or lengthened
        while job is not None and job.expected_end_s == end_s:
            for lo, hi in intervals(job.alloc):
                inf = pop_sup(lo - 1, -1)  # a free interval ending just below: merged (-1: none, ids are >= 0)
                if inf < 0:
                    inf = lo
                else:
                    del by_inf[inf]
                sup = pop_inf(hi + 1, -1)  # ... and one starting just above
                if sup < 0:
                    sup = hi
                else:
                    del by_sup[sup]
                by_inf[inf] = sup
                by_sup[sup] = inf
                if sup - inf >= grown:
                    grown = sup - inf + 1
                count += hi - lo + 1
            job = next(ending, None)
        # contiguous: the head fits inside one interval; those this end time left alone were there when it
        # last did not fit (free now: tried above, or all shorter than it), so only one it made or lengthened
        # may hold it now (a partitioned placement clips an interval to each partition: the same holds there)
        if count < n or (contiguous and grown < n):
            continue
        assignment = placer.reserve(head, free, sorted(by_inf.items()))
        if assignment is not None:
            return Reservation(head, end_s, assignment)
    return None


def _start(job: QueuedJob, assignment: Assignment, placer: Placer, admission: AdmissionConstraint,
           view: ClusterView, starts: list[Start], free: ProcSet, extra: ProcSet) -> tuple[ProcSet, ProcSet]:
    """EASY starts ``job`` with ``assignment`` in this pass: the placer and the admission constraint are told, the
    start is appended to ``starts``; returns the hosts left free and those left outside the reservation (``extra``
    itself when the job took none of them)."""
    placer.starting(job)
    admission.on_start(job, assignment, view)
    starts.append((job, assignment))
    hosts = assignment.hosts
    if not disjoint(extra, hosts):
        extra = minus(extra, hosts)
    return minus(free, hosts), extra


def admitted_reservation(head: QueuedJob, now_s: float, free: ProcSet, running: Iterable[RunningJob],
                         placer: Placer, admission: AdmissionConstraint, view: ClusterView) -> Reservation | None:
    """:func:`head_reservation`, then moved later when the admission constraint cannot admit the head
    at that time (:meth:`AdmissionConstraint.earliest_start_s`; the hosts stay the same: they are free
    from the shadow time on)."""
    reservation = head_reservation(head, now_s, free, running, placer)
    if reservation is None:
        return None
    start_s = admission.earliest_start_s(head, reservation.assignment, reservation.start_s, view)
    if start_s > reservation.start_s:
        return Reservation(head, start_s, reservation.assignment)
    return reservation


class Backfilling(Piece):
    """Base of the ``backfill`` slot: starts nothing. Override :meth:`select`."""

    slot = "backfill"
    #: whether :meth:`select` reads the running jobs (``view.running_by_end``: EASY's reservation); when not,
    #: the core does not build the view with the power manager's pseudo running jobs
    reads_running: ClassVar[bool] = True

    def select(self, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer,
               admission: AdmissionConstraint) -> list[Start]:
        """The jobs of ``queue`` (scheduling order) to start now, with their assignments."""
        return []


def _fcfs_phase(queue: Sequence[QueuedJob], view: ClusterView, placer: Placer, admission: AdmissionConstraint,
                starts: list[Start], free: ProcSet | None = None, started: set[str] | None = None
                ) -> tuple[int, ProcSet]:
    """Start queue jobs in order while the first one fits; return the index of the head and the
    hosts still free (``free``: the hosts free now, default the view's). With ``started`` (job-partition
    entries, module docstring), entries of the jobs it holds are skipped and the jobs started are added."""
    if free is None:
        free = view.free
    count = size(free)
    i = 0
    for job in queue:
        if started is not None and job.id in started:
            i += 1
            continue
        if count == 0 or job.res > count:
            break
        assignment = placer.place(job, free)
        if assignment is None or not admission.can_start(job, assignment, view):
            break
        placer.starting(job)
        admission.on_start(job, assignment, view)
        starts.append((job, assignment))
        if started is not None:
            started.add(job.id)
        free = minus(free, assignment.hosts)
        count -= job.res
        i += 1
    return i, free


def _same_machine(kept: _Kept, nb_new: int, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer,
                  admission: AdmissionConstraint) -> bool:
    """Whether nothing but ``nb_new`` submissions (at the end of ``queue``) and the clock's advance happened since
    the pass that left ``kept``, with pieces that keep its conclusions (:attr:`PolicyScheduler.keeps_reservation`,
    :meth:`AdmissionConstraint.keeps_refusals`): the same running jobs, hosts, free hosts and head."""
    if not getattr(placer, "keeps_reservation", False) or view.now_s < kept.now_s:
        return False
    if not admission.keeps_refusals(kept.now_s, view.now_s):
        return False
    if view.running_version != kept.running_version or view.hosts_version != kept.hosts_version:
        return False
    if len(queue) != kept.waiting + nb_new:
        return False
    return bool(queue) and queue[0] is kept.head and intervals(view.free) == intervals(kept.free)


@register
class FcfsNoBackfill(Backfilling):
    """First come, first served without backfilling: start jobs in queue order while the head fits
    (and is admitted); the first job that does not fit blocks every job behind it."""

    name = "fcfs"
    description = "no backfilling: start jobs in queue order while the first one fits"
    reference = "baseline"
    reads_running = False

    def select(self, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer,
               admission: AdmissionConstraint) -> list[Start]:
        starts: list[Start] = []
        _fcfs_phase(queue, view, placer, admission, starts, started=set() if placer.partitioned else None)
        return starts


@register
class EasyBackfilling(Backfilling):
    """EASY backfilling, exact with concrete reservations (energy-budget paper §II, Algorithm 1).

    Start jobs in queue order while the head fits; then reserve hosts for the head at its shadow time
    (:func:`head_reservation`, moved later by the admission constraint) and start every later job that
    fits now and either ends no later than the shadow time or only uses free hosts outside the
    reservation. Expected ends are at each job's assigned pstate; jobs without walltime are treated as
    infinitely long. The admission constraint is asked before every start and brackets the backfilling
    phase with ``reserve_head`` / ``release_head`` (Algorithm 2's energy reservation).
    """

    name = "easy"
    description = "EASY backfilling: one reservation for the head job, later jobs start if they do not delay it"
    reference = "Lifka 1995; energy-budget paper §II, Algorithm 1"

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self._new: list[QueuedJob] = []  # jobs submitted since the last pass

    # Every event but a submission (and the clock) may change what a pass decides: the next pass is a full one. (A
    # host's change is seen in the view's hosts_version: the acknowledgement of the core's own DVFS request is not.)
    def on_platform(self, view: ClusterView) -> None:
        self._kept = None
        self._new = []

    def on_submitted(self, job: QueuedJob, view: ClusterView) -> None:
        self._new.append(job)

    def on_completed(self, job: RunningJob, state: object, view: ClusterView) -> None:
        self._kept = None

    def on_energy(self, energy_j: float, view: ClusterView) -> None:
        self._kept = None

    def on_call(self, view: ClusterView) -> None:
        self._kept = None

    def on_no_more_jobs(self, view: ClusterView) -> None:
        self._kept = None

    def select(self, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer,
               admission: AdmissionConstraint) -> list[Start]:
        starts: list[Start] = []
        new, self._new = self._new, []
        if not placer.partitioned:
            kept = self._kept
            self._kept = None
            if kept is not None and self._only_new_jobs_can_start(kept, new, queue, view, placer, admission):
                self._backfill_new(kept, new, view, placer, admission, starts)
            else:
                self._select(queue, view, placer, admission, starts, view.free, None)
            return starts
        self._select_entries(queue, view, placer, admission, new, starts)
        return starts

    def _select_entries(self, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer,
                        admission: AdmissionConstraint, new: list[QueuedJob], starts: list[Start]) -> None:
        """EASY over job-partition entries (module docstring), started over while the head's job starts through
        another of its entries. A pass that follows none but the acknowledgements of the core's own requests
        (the re-registered jobs, their DVFS: EAMC) decides what the previous one left, nothing, with pieces for
        which the previous pass's conclusions still hold (:meth:`_only_new_jobs_can_start`): it is not made."""
        kept = self._kept
        self._kept = None
        if kept is not None and not new and _same_machine(kept, 0, queue, view, placer, admission):
            self._kept = kept
            return
        started: set[str] = set()  # the jobs started in this pass
        free, done, restart = view.free, 0, True
        while restart:
            restart = self._select(queue, view, placer, admission, starts, free, started)
            for _, assignment in starts[done:]:  # the hosts left free once the pass's jobs started
                free = minus(free, assignment.hosts)
            done = len(starts)
        if not (KEEP_PASSES and getattr(placer, "keeps_reservation", False)):
            return
        waiting = len(queue)
        if starts:
            nb_entries = getattr(queue, "nb_entries", None)
            if nb_entries is not None:
                waiting -= sum(map(nb_entries, started))
            else:
                waiting -= sum(map(started.__contains__, map(JOB_ID, queue)))  # (no Python call an entry)
        head = next((entry for entry in queue if entry.id not in started), None)  # (the entries before it started)
        if head is not None:
            self._kept = _Kept(head, None, False, free, free, view.now_s, waiting, view.running_version + len(starts),
                               view.hosts_version)

    def _select(self, queue: Sequence[QueuedJob], view: ClusterView, placer: Placer, admission: AdmissionConstraint,
                starts: list[Start], free: ProcSet, started: set[str] | None) -> bool:
        """One EASY pass over ``queue`` appending to ``starts``; True when the head's job started through
        another of its entries (``started`` is not None): the pass must start over."""
        i, free = _fcfs_phase(queue, view, placer, admission, starts, free, started)
        keep = started is None and KEEP_PASSES and getattr(placer, "keeps_reservation", False)
        if i >= len(queue) - 1 or not free:
            if keep and i < len(queue) and not free:  # nothing free: the next pass may start nothing either
                self._kept = _Kept(queue[i], None, True, free, free, view.now_s, len(queue) - len(starts),
                                   view.running_version + len(starts), view.hosts_version)
            return False  # no waiting job behind the head, or nothing free to backfill on
        keyed = started is not None
        contiguous = placer.contiguous
        narrowest, shortest_s = narrowest_and_shortest(queue)  # (the head and the jobs started in the pass included)
        free_fit = longest(free) if contiguous else size(free)  # the widest job the hosts free hold
        if not (keep or keyed) and narrowest > free_fit:
            return False  # no waiting job fits in the hosts free: no reservation to make (nor to keep, see _Kept)
        now_s = view.now_s
        head = queue[i]
        running: Iterable[RunningJob] = view.by_end()
        if starts:
            just_started = sorted((RunningJob(job.id, a.hosts, now_s, a.end_s(now_s), a.pstate, job)
                                   for job, a in starts), key=end_key)
            running = heapq.merge(running, just_started, key=end_key)
        reservation = admitted_reservation(head, now_s, free, running, placer, admission, view)
        if reservation is None:
            shadow_s, extra = INF, free  # the head cannot start with the hosts that are on
        else:
            shadow_s, extra = reservation.start_s, minus(free, reservation.hosts)
            admission.reserve_head(head, shadow_s, reservation.assignment, view)
        free_count, extra_count = size(free), size(extra)
        # smallest width known not to fit in `free` / `extra` (both only shrink during the pass); per fit key
        # with job-partition entries (the module docstring), where these two stay above every width. A contiguous
        # allocation is one interval: no width above the longest interval fits (issue 15: on a fragmented machine
        # with a long queue each failed width was learnt by a placement, and the index narrowed at each of them)
        if contiguous and not keyed:
            no_fit_free, no_fit_extra = free_fit + 1, longest(extra) + 1
        else:
            no_fit_free = no_fit_extra = free_count + 1
        no_fit_free_by: dict[object, int] = {}
        no_fit_extra_by: dict[object, int] = {}
        fit_key = placer.fit_key
        key: object = None
        shortest_end_s = now_s + placer.shortest_walltime_s  # no waiting job ends sooner
        restart = False

        def no_fit_by(known: dict[object, int], key: object, hosts: ProcSet) -> int:
            """The smallest width of fit key ``key`` known not to fit in ``hosts`` (``free`` or ``extra``, which only
            shrink during the pass): a failed width, or the key's widest fit there, asked once since the pass began or
            last started a job (``known`` is then cleared)."""
            no_fit = known.get(key)
            if no_fit is None:
                no_fit = known[key] = placer.widest_fit(key, hosts) + 1
            return no_fit

        def worth_trying(res: np.ndarray, wall: np.ndarray) -> np.ndarray:
            """The jobs the checks below do not pass over by their width and walltime alone (as they stand
            now: the widths known not to fit, the hosts outside the reservation for the long jobs)."""
            return (res < no_fit_free) & ((now_s + wall <= shadow_s) | ((res <= extra_count) & (res < no_fit_extra)))

        # an indexed queue gives only the jobs that fit and that the admission constraint may admit, asked of the
        # jobs worth trying only (job-partition entries: those their partition's widest fit holds). Under an energy
        # budget the queue grows long, and most jobs that fit by their width are too long for the reservation and
        # too wide for the hosts outside it: without this rule, energyBud visited 1.3 million jobs on the week of
        # issue 15 instead of 99,000.
        if keyed:
            fitting = getattr(queue, "fitting", None)
            if fitting is None:  # every entry
                later = JobsBehind(queue, i, free_count)
            else:  # (free shrinks during the pass: its widest fit now bounds it)
                later = JobsBehind(fitting(lambda fit: placer.widest_fit(fit, free), queue[i]), -1, free_count)
        elif (narrowest >= no_fit_free or (
                now_s + shortest_s > shadow_s and (narrowest > extra_count or narrowest >= no_fit_extra))):
            # every waiting job is too wide for the hosts free, or too long for the reservation and too wide for
            # the hosts outside it: the loop below would pass over each one (issue 15: the index built for nothing)
            later = JobsBehind(queue, len(queue) - 1, 0)
        elif not admission.refuses_all(shortest_end_s, view):
            later = JobsBehind(queue, i, free_count,
                               lambda res, wall, groups: admission.may_start(res, wall, view, groups), rule=worth_trying)
        else:  # the admission constraint refuses every waiting job (the smallest one): nothing to scan
            later = JobsBehind(queue, len(queue) - 1, 0)

        for job in later:
            n = job.res
            if n > free_count or n >= no_fit_free:
                if free_count == 0:
                    break
                continue
            if keyed:
                assert started is not None
                if job.id in started:
                    continue
                key = job.partition if job.partition is not None else fit_key(job)  # an entry: its partition
                if n >= no_fit_by(no_fit_free_by, key, free):
                    continue
            # the walltime at the top frequency is a lower bound of the walltime at any pstate (not on another
            # partition, whose time model may shorten it: there the assignment tells, and the admission constraint's
            # refusals before placement, which read that bound, are not asked: hunt 48)
            if not keyed and admission.refuses(job, view):
                if admission.refuses_from(1, shortest_end_s, view):
                    break  # every later job is refused too
                continue
            short = job.walltime_s is not None and (keyed or now_s + job.walltime_s <= shadow_s)
            assignment = None
            if short:
                assignment = placer.place(job, free)
                if assignment is None:
                    if contiguous:
                        if keyed:
                            no_fit_free_by[key] = n
                        else:
                            no_fit_free = n
                            later.narrow(free_count, worth_trying, refilter=False)  # nothing started
                    continue
                if not assignment.end_s(now_s) <= shadow_s:  # slowed past the shadow time
                    assignment = None
            if assignment is None:  # would run past the shadow time: hosts outside the reservation only
                if n > extra_count or n >= no_fit_extra:
                    continue
                if keyed and n >= no_fit_by(no_fit_extra_by, key, extra):
                    continue
                assignment = placer.place(job, extra)
                if assignment is None:
                    if contiguous:
                        if keyed:
                            no_fit_extra_by[key] = n
                        else:
                            no_fit_extra = n
                            later.narrow(free_count, worth_trying, refilter=False)  # nothing started
                    continue
            if not admission.can_start(job, assignment, view):
                if not keyed and admission.refuses_from(1, shortest_end_s, view):
                    break  # every later job is refused too
                continue
            free, left = _start(job, assignment, placer, admission, view, starts, free, extra)
            free_count -= n
            if left is not extra:
                extra, extra_count = left, size(left)
            if contiguous and not keyed:
                no_fit_free, no_fit_extra = min(no_fit_free, longest(free) + 1), min(no_fit_extra, longest(extra) + 1)
            if keyed:
                assert started is not None
                started.add(job.id)
                no_fit_free_by.clear()  # (the widest fits are asked again of the hosts left)
                no_fit_extra_by.clear()
                if job.id == head.id:  # the head started on another partition: EASY again without it
                    restart = True
                    break
            else:
                later.narrow(free_count, worth_trying)
        if reservation is not None:
            admission.release_head()
        if keep:
            self._kept = _Kept(head, reservation, False, free, extra, now_s, len(queue) - len(starts),
                               view.running_version + len(starts), view.hosts_version)
        return restart

    @staticmethod
    def _only_new_jobs_can_start(kept: _Kept, new: list[QueuedJob], queue: Sequence[QueuedJob], view: ClusterView,
                                 placer: Placer, admission: AdmissionConstraint) -> bool:
        """Whether only submissions happened since the pass that left ``kept`` (the same running jobs, free hosts
        and head; the jobs submitted since, ``new``, at the end of the queue; the clock not back), with pieces
        for which the previous pass's conclusions still hold (:attr:`PolicyScheduler.keeps_reservation`, and an
        admission constraint whose refusals then still hold: :meth:`AdmissionConstraint.keeps_refusals`; the
        jobs it refused are refused again, whatever their hosts).

        Then a full pass would decide exactly what :meth:`_backfill_new` decides. The head still does not fit
        (the free hosts are the same). Its reservation is the same: every job started since it was computed
        either ends by the shadow time or runs outside the reserved hosts, so at every earlier time the hosts
        free by then are a subset of those free by then before (the head fits no sooner), and at the shadow time
        they hold the reserved hosts, and first-fit takes them again (the intervals below them only shrank). No
        job that waited at the previous pass can start: it did not fit in hosts that were free then (a superset
        of those free now), or would have ended past the shadow time then (later still now) and did not fit
        outside the reservation (a superset of what is outside it now)."""
        if not _same_machine(kept, len(new), queue, view, placer, admission):
            return False
        first = len(queue) - len(new)
        return all(queue[first + k] is job for k, job in enumerate(new))

    def _backfill_new(self, kept: _Kept, new: list[QueuedJob], view: ClusterView, placer: Placer,
                      admission: AdmissionConstraint, starts: list[Start]) -> None:
        """EASY's backfilling of the jobs ``new`` alone, against the reservation and the hosts ``kept`` (see
        :meth:`_only_new_jobs_can_start`): the checks of :meth:`_select`'s loop, in queue order, the head's
        reservation made for the admission constraint meanwhile as there."""
        free, extra, now_s = kept.free, kept.extra, view.now_s
        reservation = kept.reservation
        shadow_s = INF if reservation is None else reservation.start_s
        free_count, extra_count = size(free), size(extra)
        candidates = [] if kept.no_free or not free_count else new
        reserved = bool(candidates) and reservation is not None
        if reserved:
            assert reservation is not None
            admission.reserve_head(kept.head, shadow_s, reservation.assignment, view)
        try:
            for job in candidates:
                if free_count == 0:
                    break
                n = job.res
                if n > free_count:
                    continue
                assignment = None
                if job.walltime_s is not None and now_s + job.walltime_s <= shadow_s:
                    assignment = placer.place(job, free)
                    if assignment is None:
                        continue
                    if not assignment.end_s(now_s) <= shadow_s:  # slowed past the shadow time
                        assignment = None
                if assignment is None:  # would run past the shadow time: hosts outside the reservation only
                    if n > extra_count:
                        continue
                    assignment = placer.place(job, extra)
                    if assignment is None:
                        continue
                if not admission.can_start(job, assignment, view):
                    continue
                free, left = _start(job, assignment, placer, admission, view, starts, free, extra)
                free_count -= n
                if left is not extra:
                    extra, extra_count = left, size(left)
        finally:
            if reserved:
                admission.release_head()
        waiting = kept.waiting + len(new) - len(starts)
        self._kept = _Kept(kept.head, reservation, kept.no_free, free, extra, now_s, waiting,
                           view.running_version + len(starts), view.hosts_version)
