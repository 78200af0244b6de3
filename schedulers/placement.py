"""Placement: which idle hosts a job gets (slot ``placement``).

Three placements, each a :class:`Placement` piece over one host-choosing function:

- ``first-fit`` (:func:`first_fit_contiguous`): the lowest-id interval of free hosts that is long enough,
  its first ``n`` ids. This is the placement of pybatsim's ``easyBackfill`` (it scans its free intervals
  in id order and takes the first long enough), except that pybatsim sometimes takes the *last* ``n`` ids
  of that interval (after a job end merged two free spaces, its ``allocSmallestResFirst`` flag flips), so
  the two do not always pick the same hosts.
- ``best-fit`` (:func:`best_fit_contiguous`): the shortest free interval that is long enough (lowest id
  among equals), its first ``n`` ids.
- ``non-contiguous`` (:func:`first_fit`): the ``n`` lowest free ids, whatever the gaps.

**Contiguous placement may fail with enough hosts free**: with free hosts ``"0-1 4-5"`` a 3-host job
does not fit. :meth:`Placement.allocate` then returns ``None`` and the job waits like a job that lacks
hosts (FCFS blocks behind it, EASY computes its reservation from the hosts running jobs will free).

:meth:`Placement.reserve` chooses the concrete hosts of EASY's reservation for the head job (see
:mod:`wattsched.schedulers.backfill`). The pstate the job runs at on those hosts is the frequency
choice's (:mod:`wattsched.schedulers.frequency`); the core combines both
(:meth:`~wattsched.schedulers.core.PolicyScheduler.place`).
"""

from __future__ import annotations

from typing import ClassVar, Iterable, Sequence, Union

from procset import ProcSet

from wattsched.base.hostsets import from_intervals, interval, size
from wattsched.schedulers.pieces import Piece, register, unvouched_if_overridden
from wattsched.schedulers.state import Assignment, ClusterView, QueuedJob

#: Free hosts as a ProcSet, or as its sorted disjoint ``(inf, sup)`` intervals (what EASY's
#: reservation builds without paying for a ProcSet).
FreeHosts = Union[ProcSet, Sequence[tuple[int, int]]]


def _intervals(free: FreeHosts) -> Iterable[tuple[int, int]]:
    return free.intervals() if isinstance(free, ProcSet) else free


def first_fit_contiguous(free: FreeHosts, n: int) -> ProcSet | None:
    """The first ``n`` ids of the lowest-id free interval holding at least ``n`` hosts, or ``None``."""
    if n <= 0:
        raise ValueError(f"cannot allocate {n} hosts")
    for inf, sup in _intervals(free):
        if sup - inf + 1 >= n:
            return interval(inf, inf + n - 1)
    return None


def best_fit_contiguous(free: FreeHosts, n: int) -> ProcSet | None:
    """The first ``n`` ids of the shortest free interval holding at least ``n`` hosts (lowest id
    among equally short ones), or ``None``."""
    if n <= 0:
        raise ValueError(f"cannot allocate {n} hosts")
    best_inf = None
    best_len = 0
    for inf, sup in _intervals(free):
        length = sup - inf + 1
        if length >= n and (best_inf is None or length < best_len):
            best_inf, best_len = inf, length
            if length == n:
                break
    if best_inf is None:
        return None
    return interval(best_inf, best_inf + n - 1)


def first_fit(free: FreeHosts, n: int) -> ProcSet | None:
    """The ``n`` lowest free ids (non-contiguous), or ``None`` when fewer than ``n`` hosts are free."""
    if n <= 0:
        raise ValueError(f"cannot allocate {n} hosts")
    picked = []
    missing = n
    for inf, sup in _intervals(free):  # stops after n hosts: cheap on fragmented sets
        length = sup - inf + 1
        if length >= missing:
            picked.append((inf, inf + missing - 1))
            missing = 0
            break
        picked.append((inf, sup))
        missing -= length
    if missing:
        return None
    return from_intervals(picked)


def lowest_ids(hosts: ProcSet, n: int) -> ProcSet:
    """The ``n`` lowest ids of ``hosts`` (all of them when it has fewer; none when ``n`` ≤ 0)."""
    k = min(n, len(hosts))
    if k <= 0:
        return ProcSet()
    picked = first_fit(hosts, k)
    assert picked is not None
    return picked


class Placement(Piece):
    """Base of the ``placement`` slot. Subclasses give :attr:`choose` (``choose(free, n)``) and
    :attr:`contiguous`, or override :meth:`allocate` and :meth:`reserve` (e.g. to keep a job inside one
    partition: then :attr:`partitioned`, :meth:`fit_key` and possibly :meth:`complete`)."""

    slot = "placement"
    #: whether allocations are single intervals; then whether a job fits inside an interval of free hosts depends on
    #: that interval alone (EASY's reservation asks again only when an interval grew: ``head_reservation``)
    contiguous: ClassVar[bool] = True
    #: whether a job runs inside one partition; the queue may then hold job-partition entries
    #: (:attr:`~wattsched.schedulers.state.QueuedJob.partition`, :mod:`wattsched.schedulers.backfill`)
    partitioned: ClassVar[bool] = False
    #: first-fit (inside a job's partition, when partitioned): where a job goes depends on the free hosts alone, and
    #: EASY's reservation taken again once jobs started that end before it or run outside it is on the same hosts
    #: (the lower intervals only shrank), so a pass may keep the previous one's
    #: (``PolicyScheduler.keeps_reservation``); :meth:`complete` must then depend on the job, its partition and its
    #: pstate alone. A subclass that overrides how it places or completes loses it unless it declares it again
    #: (:func:`~.pieces.unvouched_if_overridden`)
    keeps_reservation: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        unvouched_if_overridden(cls, "keeps_reservation", ("choose", "allocate", "reserve", "complete", "fit_key"))

    def fit_key(self, job: QueuedJob) -> object:
        """Which hosts ``job`` may use, for partitioned placements: two jobs with equal keys draw from the
        same hosts, so a width that does not fit for one does not fit for the other (backfilling remembers
        failed widths per key). Default: the whole machine."""
        return None

    def widest_fit(self, key: object, free: ProcSet) -> int:
        """A bound of the widths that jobs of fit key ``key`` (:meth:`fit_key`) may get in ``free``: no wider job of
        that key is placed there, and backfilling passes over one without asking. Default: the hosts free."""
        return size(free)

    def complete(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> Assignment:
        """The assignment of ``job`` on ``assignment.hosts`` at ``assignment.pstate`` (chosen by the frequency
        choice, walltime from the job's runtime model) with what the placement knows beyond the hosts: its
        partition, and a walltime, profile and metadata of its own time model (EAMC:
        :mod:`wattsched.schedulers.eamc`). The core calls it only when a placement overrides it. Default:
        unchanged."""
        return assignment
    @staticmethod
    def choose(free: FreeHosts, n: int) -> ProcSet | None:
        """``n`` hosts taken from ``free``, or ``None`` if they do not fit (subclasses set it)."""
        raise NotImplementedError

    def allocate(self, job: QueuedJob, free: FreeHosts, view: ClusterView) -> ProcSet | None:
        """Hosts for ``job`` among ``free``, or ``None`` if it does not fit."""
        return self.choose(free, job.res)

    def reserve(self, job: QueuedJob, free_now: ProcSet, free_then: FreeHosts, view: ClusterView) -> ProcSet | None:
        """Hosts to reserve for ``job``, which will start when ``free_then`` (⊇ ``free_now``) is free.

        Contiguous: the placement's own choice in ``free_then``. Non-contiguous: hosts that are not
        free now first (lowest ids), then the lowest free ones, so that the hosts left out of the
        reservation number ``|free_then| - n``: a concrete reservation then allows exactly as much
        backfilling as EASY's classical count of "extra" processors.
        """
        n = job.res
        if self.contiguous:
            return self.choose(free_then, n)
        if not isinstance(free_then, ProcSet):
            free_then = from_intervals(free_then)
        if len(free_then) < n:
            return None
        later = free_then - free_now
        taken = lowest_ids(later, n)
        if len(taken) < n:
            taken = taken | lowest_ids(free_now, n - len(taken))
        return taken


@register
class FirstFit(Placement):
    """The lowest contiguous interval that is long enough (pybatsim's easyBackfill placement)."""

    name = "first-fit"
    description = "lowest contiguous interval of free hosts that is long enough, like pybatsim's easyBackfill"
    choose = staticmethod(first_fit_contiguous)
    keeps_reservation = True


@register
class BestFit(Placement):
    """The shortest contiguous interval that is long enough (lowest id among equals)."""

    name = "best-fit"
    description = "shortest contiguous interval of free hosts that is long enough"
    choose = staticmethod(best_fit_contiguous)


@register
class NonContiguous(Placement):
    """The lowest free host ids, whatever the gaps."""

    name = "non-contiguous"
    description = "lowest free host ids, whatever the gaps"
    contiguous = False
    choose = staticmethod(first_fit)
