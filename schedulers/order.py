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
from typing import Any, Callable, Iterable, Protocol

from schedulers.state import ClusterView, QueuedJob


class QueueOrder(Protocol):
    """The order in which waiting jobs are considered."""

    name: str

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        """Return ``jobs`` (given in arrival order) in scheduling order; must be deterministic."""
        ...


@dataclass(frozen=True)
class KeyOrder:
    """A queue order given by a sort key; ties keep arrival order (the sort is stable).

    Attributes:
        name: short name used in logs and docs, e.g. ``"fcfs"``.
        key: ``key(job, view)``; smaller keys come first.
    """

    name: str
    key: Callable[[QueuedJob, ClusterView], Any]

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        key = self.key
        return sorted(jobs, key=lambda job: key(job, view))


def _submission_time(job: QueuedJob, view: ClusterView) -> float:
    return job.subtime_s


#: First come, first served: submission time, then arrival order.
fcfs = KeyOrder("fcfs", _submission_time)
