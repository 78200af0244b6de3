"""Admission constraints: may this job start now with this assignment? (slot ``admission``)

The backfilling rule finds hosts; an admission constraint can still say no (energy budget, powercap).
EASY with an energy budget (energyBud / reducePC, energy-budget paper §IV-B, Algorithm 2) also reserves
*energy* for the head job while it backfills. The hooks, in the order of a scheduling pass:

1. :meth:`~AdmissionConstraint.begin_pass` (the queue in scheduling order);
2. for each start the backfilling rule considers: :meth:`~AdmissionConstraint.may_start` (once for all the
   waiting jobs behind the head, vectorized, when the queue is indexed), :meth:`~AdmissionConstraint.refuses`
   (before placing it, a cheap "certainly not"), :meth:`~AdmissionConstraint.can_start`, then
   :meth:`~AdmissionConstraint.on_start` when it starts; around EASY's backfilling phase,
   :meth:`~AdmissionConstraint.reserve_head` / :meth:`~AdmissionConstraint.release_head`, and
   :meth:`~AdmissionConstraint.earliest_start_s` may move the head's reservation later (a powercap that
   cannot run it yet);
3. :meth:`~AdmissionConstraint.end_pass` once the pass's starts are running jobs of the view;
4. a power manager asks :meth:`~AdmissionConstraint.can_prepare` before booting hosts for a job (after
   :meth:`~AdmissionConstraint.may_prepare` for all of them) and tells :meth:`~AdmissionConstraint.on_prepare`
   after;
5. :meth:`~AdmissionConstraint.decisions`: the constraint's own requests (monitoring calls, energy queries).

Every default admits everything and does nothing; a constraint overrides the hooks it needs. It hears the
events of every piece too (:class:`~wattsched.schedulers.pieces.Piece`), and the power manager of its
scheduler is given to it at construction (:meth:`AdmissionConstraint.bind_power`): an energy budget plans
the hosts that manager keeps on, boots or switches off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
from procset import ProcSet

from wattsched.schedulers.pieces import Piece, register
from wattsched.schedulers.queue import WallGroups
from wattsched.schedulers.state import Assignment, ClusterView, Decision, QueuedJob

if TYPE_CHECKING:
    from wattsched.schedulers.power import PowerManager


class AdmissionConstraint(Piece):
    """Base of the ``admission`` slot: admits every job."""

    slot = "admission"
    power_manager: "PowerManager | None" = None

    def bind_power(self, power: "PowerManager") -> None:
        """The power manager of the same scheduler (called once, at construction)."""
        self.power_manager = power

    def check_platform(self, view: ClusterView) -> None:
        """After every piece of the scheduler took the platform (:meth:`~.core.PolicyScheduler.start`): raise
        :class:`~wattsched.base.errors.OptionError` when no schedule can meet the options on it."""

    def begin_pass(self, queue: Sequence[QueuedJob], view: ClusterView) -> None:
        """A scheduling pass starts; ``queue`` is the waiting jobs in scheduling order."""

    def can_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> bool:
        """Whether ``job`` may start now with ``assignment`` (its hosts are known to be free)."""
        return True

    def refuses(self, job: QueuedJob, view: ClusterView) -> bool:
        """A cheap answer before placement: True only when ``job`` certainly cannot start now, whatever its
        hosts and pstate (e.g. it is dominated by a job refused earlier in the pass). Backfilling then skips
        it without placing it. False when unsure."""
        return False

    def refuses_from(self, res: int, end_s: float, view: ClusterView) -> bool:
        """True only when every job of at least ``res`` hosts ending no sooner than ``end_s`` certainly
        cannot start now (backfilling then stops scanning the queue). False when unsure."""
        return False

    def refuses_all(self, end_s: float, view: ClusterView) -> bool:
        """Asked once before backfilling scans the queue (with the head's reservation made): True only when every
        job ending no sooner than ``end_s`` certainly cannot start now, whatever its width and hosts (a constraint
        may find it out by testing the smallest such job: backfilling then scans nothing). False when unsure."""
        return False

    def may_start(self, res: np.ndarray, walltime_s: np.ndarray, view: ClusterView,
                  groups: WallGroups | None = None) -> np.ndarray | None:
        """:meth:`refuses` for many jobs at once, before any of them is placed: for jobs of ``res`` hosts and
        walltimes ``walltime_s`` (at the top frequency, ``inf`` for none), a boolean array that is False only
        where such a job certainly cannot start now, whatever its hosts and pstate, nor later in this
        backfilling phase (the jobs started meanwhile only tighten the constraint). None when the constraint
        cannot tell (every job may start). Backfilling then visits only the jobs marked True. ``groups``
        (:data:`~wattsched.schedulers.queue.WallGroups`, from an indexed queue): the same walltimes as
        distinct values and each job's index among them."""
        return None

    def may_prepare(self, res: np.ndarray, walltime_s: np.ndarray, start_s: float, view: ClusterView,
                    groups: WallGroups | None = None, *, boots_all: bool = False) -> np.ndarray | None:
        """:meth:`may_start` for :meth:`can_prepare`: False only where a job of ``res`` hosts and walltime
        ``walltime_s`` that a power manager would boot hosts for, to start at ``start_s`` on free or asleep
        hosts not kept for another job, will certainly be refused, now and later in the same pass.
        ``boots_all``: no such free host is left, so every host of the job would be booted."""
        return None

    def on_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> None:
        """``job`` starts now with ``assignment`` (during the pass, after :meth:`can_start` said yes)."""

    def earliest_start_s(self, job: QueuedJob, assignment: Assignment, start_s: float, view: ClusterView) -> float:
        """The earliest time from ``start_s`` (when the head ``job`` has its hosts) at which the constraint
        will admit it, as far as the running jobs tell (EASY's shadow time then moves there)."""
        return start_s

    def reserve_head(self, job: QueuedJob, start_s: float, assignment: Assignment, view: ClusterView) -> None:
        """EASY reserved ``assignment`` from ``start_s`` for the head ``job``: reserve what it will need."""

    def release_head(self) -> None:
        """End of the backfilling phase: drop the head job's reservation."""

    def end_pass(self, view: ClusterView) -> None:
        """The pass's starts are applied to ``view`` (they are running jobs from now on)."""

    def can_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                    view: ClusterView) -> bool:
        """Whether a power manager may boot ``boot`` and keep the free hosts ``keep`` idle for ``job``, which
        would then start at ``start_s`` with ``assignment``."""
        return True

    def on_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                   view: ClusterView) -> None:
        """The power manager booted ``boot`` / kept ``keep`` for ``job`` (after :meth:`can_prepare`)."""

    def decisions(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        """The constraint's own requests after the pass (``queue``: what still waits)."""
        return []

    def keeps_refusals(self, since_s: float, now_s: float) -> bool:
        """Whether a job this constraint refused at ``since_s`` would still be refused at ``now_s`` (later) if
        nothing but the clock changed in between (no job started or ended, no energy answer, no call): EASY may
        then answer a pass that follows only submissions from what the previous pass concluded
        (:meth:`~wattsched.schedulers.backfill.EasyBackfilling._only_new_jobs_can_start`), and, over partition
        entries, not make a pass that follows only the acknowledgements of the core's own requests
        (:meth:`~wattsched.schedulers.backfill.EasyBackfilling._select_entries`). False unless the constraint
        knows it."""
        return False


@register
class NoConstraint(AdmissionConstraint):
    """No admission constraint: only hosts limit what starts (plain EASY / FCFS)."""

    name = "none"
    description = "no admission constraint: only hosts limit what starts"

    def keeps_refusals(self, since_s: float, now_s: float) -> bool:
        return True  # it refuses nothing
