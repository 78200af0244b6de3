"""Frequency choice: the pstate a job runs at (slot ``frequency``).

Called for a job and the hosts the placement chose, before backfilling and admission decide (UPAS, EAMC
and user-requested frequencies all choose once, at start). The core turns the answer into the job's
:class:`~wattsched.schedulers.state.Assignment`: its walltime at that pstate comes from the job's runtime
model (β model, :mod:`wattsched.energy_models.dvfs`) and the hosts' speeds
(:mod:`wattsched.energy_models.power`), so that EASY's reservation and an energy budget see the real
expected end. When the job starts, the core sends a :class:`~wattsched.schedulers.state.SetPState` before
its EXECUTE_JOB for the hosts whose pstate differs (Batsim applies a pstate set in the same reply to the
whole job, behaviour 24).
"""

from __future__ import annotations

from typing import ClassVar

from procset import ProcSet

from wattsched.energy_models.dvfs import BetaModel
from wattsched.schedulers.pieces import Piece, register, unvouched_if_overridden
from wattsched.schedulers.state import ClusterView, QueuedJob


class FrequencyChoice(Piece):
    """Base of the ``frequency`` slot: leaves the hosts at their pstates. Override :meth:`pstate_for`."""

    slot = "frequency"
    #: the pstate depends on the job and on the partition (node model) of its hosts alone, never on the clock, the
    #: queue or the machine's load: a pass may keep the previous one's conclusions
    #: (``PolicyScheduler.keeps_reservation``); lost by a subclass that overrides :meth:`pstate_for` or
    #: :meth:`runtime_model` unless it declares it again
    per_partition: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        unvouched_if_overridden(cls, "per_partition", ("pstate_for", "runtime_model"))

    def pstate_for(self, job: QueuedJob, hosts: ProcSet, view: ClusterView) -> int | None:
        """The computation pstate for ``job`` on ``hosts``, or ``None`` to leave the hosts as they are."""
        return None

    def runtime_model(self, job: QueuedJob) -> BetaModel:
        """The runtime model that gives ``job``'s walltime at a lower pstate (the core stretches the requested
        time with it): the job's own (its β) unless the choice assumes another (UPAS's worst case β = 1)."""
        return job.runtime


@register
class TopFrequency(FrequencyChoice):
    """Every job at the top frequency (the fastest computation pstate, pstate 0 on the shipped
    platforms)."""

    name = "top"
    description = "every job at the fastest computation pstate"
    reference = "baseline of every paper"
    per_partition = True

    def __init__(self) -> None:
        self._top: int | None = 0  # the top pstate when every host has the same, else None

    def on_platform(self, view: ClusterView) -> None:
        power = view.power
        tops = {model.top_pstate for model in power.models} if power is not None else {0}
        self._top = tops.pop() if len(tops) == 1 else None

    def pstate_for(self, job: QueuedJob, hosts: ProcSet, view: ClusterView) -> int | None:
        return self._top if self._top is not None else top_pstate_of(hosts, view)


def top_pstate_of(hosts: ProcSet, view: ClusterView) -> int | None:
    """The top pstate of ``hosts``, None when their models number it differently (the hosts are left as they are)."""
    assert view.power is not None
    tops = {model.top_pstate for model, _ in view.power.model_counts(hosts)}
    return tops.pop() if len(tops) == 1 else None
