"""Power managers: which hosts to switch off or on (fourth policy slot, DESIGN §5).

After the backfilling rule has started what it can, the core asks the power manager for decisions
(:class:`~schedulers.state.SetPState` to a sleep pstate or back, :class:`~schedulers.state.CallMeLater`
for its next check). Opportunistic shutdown (energy-budget paper §IV-C3) and ESC thresholds (ESC paper §2)
will subclass :class:`PowerManager`. A manager must stop asking for calls once the work is done, or the
simulation never ends (DESIGN §3).
"""

from __future__ import annotations

from typing import Sequence

from schedulers.state import ClusterView, Decision, QueuedJob


class PowerManager:
    """Base class: never switches anything; override :meth:`decide`."""

    name = "none"

    def decide(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        """Decisions after a scheduling pass; ``queue`` is what still waits, in scheduling order."""
        return []


class NoPowerManager(PowerManager):
    """Hosts stay on, idle at their pstate when no job runs."""

    name = "none"
