"""Frequency choice: the pstate a job runs at (fifth policy slot, DESIGN §5).

Called once per job at its start (UPAS, EAMC and user-requested frequencies all choose at start). The
core compares the answer with the hosts' current pstates and sends a
:class:`~schedulers.state.SetPState` before the job's EXECUTE_JOB only for hosts that differ (Batsim
applies a pstate set in the same reply to the whole job, README behaviour 24).
"""

from __future__ import annotations

from procset import ProcSet

from wattsched.schedulers.state import ClusterView, QueuedJob


class FrequencyChoice:
    """Base class: override :meth:`pstate_for`."""

    name = "top"

    def pstate_for(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> int | None:
        """The computation pstate for ``job`` on ``alloc``, or ``None`` to leave the hosts as they are."""
        return None


class TopFrequency(FrequencyChoice):
    """Every job at the top frequency, pstate 0: no decision while hosts are at pstate 0."""

    name = "top"

    def pstate_for(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> int | None:
        return 0
