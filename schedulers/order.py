"""Queue orders: which waiting job comes first (slot ``order``).

A :class:`QueueOrder` is given the waiting jobs **in arrival order** and the current
:class:`~wattsched.schedulers.state.ClusterView`, and returns them in the order the backfilling rule must
consider them. Sorts are stable, so jobs with equal keys stay in arrival order (the tie-break every paper
uses). An order whose key of a job never changes while it waits declares ``static = True`` and
:meth:`QueueOrder.static_key`: the core then keeps the queue sorted as jobs arrive and leave instead of
sorting it every pass.

Orders that depend on accumulated usage (FairShare, EnergyFairShare, EFS paper §III) keep their state
from the events every piece hears (:meth:`~wattsched.schedulers.pieces.Piece.on_started`,
:meth:`~wattsched.schedulers.pieces.Piece.on_completed`) and sort by it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable

from wattsched.schedulers.pieces import Piece, register, unvouched_if_overridden
from wattsched.schedulers.state import ClusterView, QueuedJob


class QueueOrder(Piece):
    """Base of the ``order`` slot: arrival order. Override :meth:`sort`, or :meth:`static_key` with
    ``static = True``."""

    slot = "order"
    #: keys never change while a job waits: the core keeps the queue sorted by (static_key, arrival)
    static: ClassVar[bool] = False
    #: :meth:`sort` returns job-partition entries (EAMC paper §4.2): a job may appear several times, each entry
    #: restricted to one partition (:attr:`~wattsched.schedulers.state.QueuedJob.partition`); it needs a
    #: partitioned placement (:mod:`wattsched.schedulers.backfill`)
    entries: ClassVar[bool] = False
    #: the waiting jobs' order depends on which jobs wait alone, not on the clock or the machine (EAMC's entry
    #: orders; a static order is such an order without saying it): a pass that follows no change but the clock's may
    #: keep the previous one's conclusions (``PolicyScheduler.keeps_reservation``); lost by a subclass that overrides
    #: :meth:`sort` unless it declares it again
    keys_fixed: ClassVar[bool] = False
    #: :meth:`sort` returns the job objects it is given (no copies, no entries): the core may then read their widths
    #: and walltimes from its own table of the waiting jobs, by id (:class:`~wattsched.schedulers.queue.SortedJobs`);
    #: lost by a subclass that overrides :meth:`sort` unless it declares it again
    same_jobs: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        unvouched_if_overridden(cls, "keys_fixed", ("sort",))
        unvouched_if_overridden(cls, "same_jobs", ("sort",))

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        """``jobs`` (given in arrival order) in scheduling order; must be deterministic."""
        if self.static:
            return sorted(jobs, key=self.static_key)
        return list(jobs)

    def static_key(self, job: QueuedJob) -> Any:
        """The job's sort key when ``static`` (smaller first; ties keep arrival order)."""
        return 0


@register
class Fcfs(QueueOrder):
    """First come, first served: submission time, then arrival order (Batsim submits jobs of the same
    time sorted by id, behaviour 10)."""

    name = "fcfs"
    description = "first come, first served: submission time, then arrival"
    reference = "baseline of every paper"
    static = True

    def static_key(self, job: QueuedJob) -> float:
        return job.subtime_s


@register
class Fifo(QueueOrder):
    """First in, first out: the order in which jobs arrived at the scheduler (JOB_SUBMITTED order). Batsim
    submits a workload's jobs in (submission time, id) order (behaviour 10), so this is ``fcfs`` for every
    static workload; it differs only for jobs that arrive with a submission time in the past. The EFS
    paper's baseline ("FIFO, in which jobs' priorities are based on their waiting time", §IV-B) and the
    tie-break of every fair-share order."""

    name = "fifo"
    description = "first in, first out: arrival order at the scheduler"
    reference = "EFS paper §IV-B (FIFO baseline); tie-break of every order"
    static = True

    def static_key(self, job: QueuedJob) -> int:
        return 0
