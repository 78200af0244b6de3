"""Admission constraints: may this job start now on these hosts? (third policy slot, DESIGN §5)

The backfilling rule finds hosts; an admission constraint can still say no (energy budget, powercap).
EASY with an energy budget (energyBud / reducePC, energy-budget paper §IV-B, Algorithm 2) also reserves
*energy* for the head job while it backfills; the hooks :meth:`AdmissionConstraint.reserve_head` and
:meth:`AdmissionConstraint.release_head` bracket that phase, and :meth:`AdmissionConstraint.on_start`
tells the constraint that a job it admitted really starts. A constraint may also move the head's
reservation later (:meth:`AdmissionConstraint.earliest_start_s`: a powercap that cannot run it yet).

Extend by subclassing :class:`AdmissionConstraint` and overriding the hooks you need; every default
admits everything and does nothing.
"""

from __future__ import annotations

from procset import ProcSet

from wattsched.schedulers.state import ClusterView, QueuedJob


class AdmissionConstraint:
    """Base class: admits every job; override the hooks."""

    name = "none"

    def can_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> bool:
        """Whether ``job`` may start now on ``alloc`` (already known to be free)."""
        return True

    def on_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> None:
        """``job`` starts now on ``alloc`` (called during the pass, after :meth:`can_start` said yes)."""

    def earliest_start_s(self, job: QueuedJob, start_s: float, view: ClusterView) -> float:
        """The earliest time from ``start_s`` (when the head ``job`` has hosts) at which the constraint
        will admit it, as far as the running jobs tell (EASY's shadow time then moves there)."""
        return start_s

    def reserve_head(self, job: QueuedJob, start_s: float, alloc: ProcSet, view: ClusterView) -> None:
        """EASY reserved ``alloc`` from ``start_s`` for the head ``job``: reserve what it will need."""

    def release_head(self) -> None:
        """End of the backfilling phase: drop the head job's reservation."""


class NoConstraint(AdmissionConstraint):
    """No admission constraint: only hosts limit what starts (plain EASY / FCFS)."""

    name = "none"
