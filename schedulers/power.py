"""Power managers: which hosts to switch off or on (fourth policy slot, DESIGN §5).

After the backfilling rule has started what it can, the core asks the power manager for decisions
(:class:`~schedulers.state.SetPState` to a sleep pstate or back, :class:`~schedulers.state.CallMeLater`
for its next check). Opportunistic shutdown (energy-budget paper §IV-C3) and ESC thresholds (ESC paper §2)
will subclass :class:`PowerManager`. A manager must stop asking for calls once the work is done, or the
simulation never ends (DESIGN §3).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from procset import ProcSet

from schedulers.state import ClusterView, Decision, QueuedJob, RunningJob, SetPState
from wattsched.hostsets import contains, from_sorted_ids


class PowerManager:
    """Base class: never switches anything; override :meth:`decide`."""

    name = "none"

    def decide(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        """Decisions after a scheduling pass; ``queue`` is what still waits, in scheduling order."""
        return []


class NoPowerManager(PowerManager):
    """Hosts stay on, idle at their pstate when no job runs."""

    name = "none"


class OpportunisticShutdown(PowerManager):
    """Opportunistic shutdown (energy-budget paper §III-A and §IV-C3; §V-C "as soon as idle nodes are
    witnessed, the decision of shutting them down is made").

    After each pass:

    1. **Boot for the head job.** EASY's reservation of the head is computed with hosts off or switching
       counted as free once they can be on (:meth:`pending_hosts`: boot time included). When the reserved
       hosts include hosts asleep, they are booted (pstate 0) and the reserved hosts that are idle are kept
       idle until the head can start, provided the admission constraint agrees (``can_prepare``: an energy
       budget counts the boots and the head's run). The head then waits for the boot (its hosts are not
       free until RESOURCE_STATE_CHANGED).
    2. **Switch off** every other idle host (the sleep pstate: ``sleep_pstates`` of SIMULATION_BEGINS'
       resource properties, or pstate 13 of table I).

    A host that is switching is never switched again (only idle hosts are switched off, only asleep hosts
    are booted). No CALL_ME_LATER: nothing here keeps the simulation alive.

    Args:
        sleep_pstate: the sleep pstate, or ``None`` to read it from the platform (default 13).
        switch_on_s, switch_off_s: transition times (table I: 151.52 s and 6.1 s).
    """

    name = "shutdown"

    def __init__(self, sleep_pstate: int | None = None, switch_on_s: float | None = None,
                 switch_off_s: float | None = None) -> None:
        from energy_models.taurus import TAURUS

        self._sleep_option = sleep_pstate
        self.sleep_pstate: int = TAURUS.sleep_pstate if sleep_pstate is None else sleep_pstate
        self.switch_on_s = TAURUS.switch_on_s if switch_on_s is None else switch_on_s
        self.switch_off_s = TAURUS.switch_off_s if switch_off_s is None else switch_off_s
        self.policy: Any = None
        self.admission: Any = None
        #: requested transitions still running: (hosts, booting?, end time)
        self.transitions: list[tuple[ProcSet, bool, float]] = []
        #: free hosts kept idle for the head job, until when
        self._kept: dict[int, float] = {}
        #: bumped whenever ``transitions`` or the kept hosts change (an energy budget caches its plan)
        self.version = 0

    def bind(self, policy: Any) -> None:
        """The core hands itself over: the allocator and the admission constraint (which learns of us)."""
        self.policy = policy
        self.admission = policy.admission
        if hasattr(self.admission, "power_manager"):
            self.admission.power_manager = self

    def on_platform(self, nb_hosts: int, properties: Sequence[Mapping[str, Any]]) -> None:
        """The sleep pstate from the platform's ``sleep_pstates`` (checked against the option).

        Raises:
            OptionError: the platform declares no sleep pstate, or another one than the option.
        """
        from schedulers.budget import PowerModel

        model = PowerModel().with_platform(properties, self._sleep_option, need_sleep=True)
        self.sleep_pstate = model.sleep_pstate

    # ------------------------------------------------------------ what others ask
    def kept(self, view: ClusterView) -> Mapping[int, float]:
        """Free hosts kept idle for the head job, with the time until which they are kept."""
        return self._kept

    def switching_segments(self, view: ClusterView, budget: Any) -> list[tuple[float, float, float]]:
        """The estimated power of the hosts in transition (for an energy budget's plan)."""
        p = budget.power
        now = view.now_s
        segs: list[tuple[float, float, float]] = []
        counted = ProcSet()
        for hosts, booting, end in self.transitions:
            hs = hosts & view.switching
            if not hs:
                continue
            counted |= hs
            n = len(hs)
            if booting:
                until = max([self._kept.get(h, end) for h in hs] + [end])
                segs += [(now, end, n * p.switch_on_w), (end, until, n * p.est_idle_w)] + budget._tail(n, until)
            else:
                segs += [(now, end, n * p.switch_off_w), (end, math.inf, n * p.sleep_w)]
        rest = len(view.switching - counted)
        if rest:
            segs += [(now, now + p.switch_on_s, rest * p.switch_w)] + budget._tail(rest, now + p.switch_on_s)
        return segs

    def pending_hosts(self, view: ClusterView) -> list[RunningJob]:
        """Hosts off or switching as pseudo running jobs ending when they can be on (boot included)."""
        now = view.now_s
        out: list[RunningJob] = []
        counted = ProcSet()
        for k, (hosts, booting, end) in enumerate(self.transitions):
            hs = hosts & view.switching
            if hs:
                counted |= hs
                ready = end if booting else end + self.switch_on_s
                out.append(RunningJob(f"~switching{k}", hs, now, max(ready, now)))
        rest = view.switching - counted
        if rest:
            out.append(RunningJob("~switching", rest, now, now + self.switch_on_s + self.switch_off_s))
        if view.off:
            out.append(RunningJob("~off", ProcSet(view.off), now, now + self.switch_on_s))
        return out

    # ------------------------------------------------------------ decisions
    def decide(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        now = view.now_s
        self.transitions = [t for t in self.transitions if not t[0].isdisjoint(view.switching)]
        free = view.free
        self._kept = {h: t for h, t in self._kept.items() if t > now and contains(free, h)}
        self.version += 1
        boot = ProcSet()
        head = queue[0] if queue else None
        if head is not None and self.policy is not None and head.res <= view.nb_hosts:
            boot = self._prepare_head(head, view)
        decisions: list[Decision] = []
        off = view.free - from_sorted_ids(sorted(self._kept)) if self._kept else ProcSet(view.free)
        if off:
            decisions.append(SetPState(off, self.sleep_pstate))
            self.transitions.append((off, False, now + self.switch_off_s))
        if boot:
            decisions.append(SetPState(boot, 0))
            self.transitions.append((boot, True, now + self.switch_on_s))
        self.version += 1
        return decisions

    def _prepare_head(self, head: QueuedJob, view: ClusterView) -> ProcSet:
        """Boot the asleep hosts of the head's reservation and keep its idle ones (if admitted)."""
        from schedulers.backfill import head_reservation

        now = view.now_s
        running = self.policy.backfill_view(view).running_by_end  # hosts off or switching included
        reservation = head_reservation(head, now, view.free, running, self.policy.allocator)
        if reservation is None:
            return ProcSet()
        hosts = reservation.hosts
        boot = hosts & view.off
        booting = hosts & view.switching
        if not boot and not booting:
            return ProcSet()
        start_s = max(reservation.start_s, now + self.switch_on_s if boot else now)
        keep = (hosts & view.free) - from_sorted_ids(sorted(self._kept)) if self._kept else hosts & view.free
        ask = getattr(self.admission, "can_prepare", None)
        if ask is not None and (boot or keep) and not ask(head, boot, keep, start_s, view):
            return ProcSet()
        for h in keep:
            self._kept[h] = start_s
        return boot
