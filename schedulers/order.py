"""Queue orders: which waiting job comes first (the first of the five policy slots, DESIGN §5).

A queue order is a :class:`QueueOrder`: given the waiting jobs **in arrival order** and the current
:class:`~schedulers.state.ClusterView`, it returns them in the order the backfilling rule must consider
them. Most orders are a sort key; :class:`KeyOrder` turns a key function into an order, and the sort is
stable, so jobs with equal keys stay in arrival order (the tie-break every paper uses).

Orders that depend on time or on accumulated usage (FairShare, EnergyFairShare, EFS paper §III) will be
classes with state, fed by the core's hooks; they only need to implement :meth:`QueueOrder.sort`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable, Iterable, Protocol

from wattsched.schedulers.state import ClusterView, QueuedJob


class QueueOrder(Protocol):
    """The order in which waiting jobs are considered."""

    name: str

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        """Return ``jobs`` (given in arrival order) in scheduling order; must be deterministic."""
        ...

    # Orders whose key of a job never changes may set ``static = True`` and define
    # ``static_key(job)``: the core then keeps the queue sorted instead of sorting it every pass.


@dataclass(frozen=True)
class KeyOrder:
    """A queue order given by a sort key; ties keep arrival order (the sort is stable).

    Attributes:
        name: short name used in logs and docs, e.g. ``"fcfs"``.
        key: ``key(job, view)``; smaller keys come first.
    """

    name: str
    key: Callable[[QueuedJob, ClusterView], Any]
    #: keys never change while a job waits (the core may then keep the queue sorted incrementally)
    static = False

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        key = self.key
        return sorted(jobs, key=lambda job: key(job, view))


@dataclass(frozen=True)
class AttributeOrder:
    """A queue order by a job attribute that does not change over time (e.g. ``subtime_s``).

    The key is read in C (``operator.attrgetter``) and the queue, kept in arrival order, is already
    nearly sorted for FCFS (Batsim submits by submission time, behaviour 10), so a pass costs O(queue)
    instead of a Python call per job.
    """

    name: str
    attribute: str
    #: a job's attribute never changes: the core keeps the queue sorted as jobs arrive and leave
    static = True

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        return sorted(jobs, key=attrgetter(self.attribute))

    def static_key(self, job: QueuedJob) -> Any:
        return getattr(job, self.attribute)


#: First come, first served: submission time, then arrival order.
fcfs = AttributeOrder("fcfs", "subtime_s")
