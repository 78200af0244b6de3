"""Power managers: which hosts to switch off or on (fourth policy slot, DESIGN §5).

After the backfilling rule has started what it can, the core asks the power manager for decisions
(:class:`~schedulers.state.SetPState` to a sleep pstate or back, :class:`~schedulers.state.CallMeLater`
for its next check). :class:`OpportunisticShutdown` is the energy-budget paper's (§IV-C3); ESC
thresholds (ESC paper §2) will be another :class:`PowerManager`. A manager must stop asking for calls
once the work is done, or the simulation never ends (DESIGN §3).
"""

from __future__ import annotations

import math
from itertools import islice
from typing import Any, Mapping, Sequence

from procset import ProcSet

from wattsched.schedulers.state import CallMeLater, ClusterView, Decision, QueuedJob, RunningJob, SetPState
from wattsched.base.hostsets import contains, from_sorted_ids, minus, plus, size


#: A boot is started when the head can start within ``switch_on_s`` + this (a wake-up call arrives rounded).
BOOT_SLACK_S = 1e-3


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
    witnessed, the decision of shutting them down is made"): idle hosts are switched off, and booted when a
    job needs them; the job waits for the boot.

    After each pass:

    1. **The head job.** EASY's reservation of the head (hosts and shadow time ``q``) is computed with
       hosts off or switching counted as free once they can be on (:meth:`pending_hosts`: boot time
       included), and moved later when the admission constraint cannot run it then (a powercap:
       :func:`~schedulers.backfill.admitted_reservation`). Its hosts that are asleep are booted when ``q ≤ now + switch_on_s`` (the boot is what
       the head waits for); when ``q`` is later they are booted *just in time*, at ``q − switch_on_s``,
       for which a CALL_ME_LATER is requested (booting earlier would leave them idle, and a later pass
       would switch them off again). Its free hosts are kept idle until ``q`` when switching them off and
       on again could not be done by then (``q < now + switch_off_s + switch_on_s``). Both only if the
       admission constraint agrees (``can_prepare``: an energy budget counts the boots and the head's run).
    2. **Backfilling with boots.** With the head's reservation made (``reserve_head``, as during EASY's
       backfilling), every later job in queue order that could start once booted hosts are on (at
       ``now + switch_on_s``, on free hosts not kept and hosts asleep) without delaying the head (it ends
       by ``q`` or uses no reserved host) gets its asleep hosts booted and its free hosts kept, if the
       admission constraint agrees (``can_prepare`` then ``on_prepare``: it counts the job's run in the rest
       of the pass). Such a job is *booked*: committed to these hosts, as a resource manager's power saving
       allocates a job to nodes that are booting. Until the boot ends its booting hosts appear to EASY as
       running it until its expected end (:meth:`pending_hosts`), and when the boot ends it starts there
       first in the pass (:meth:`ready_jobs`, if the admission constraint still agrees; if another job took
       one of its free hosts meanwhile, the booking lapses). Without this step a powercap whose wide head
       is not admitted would never start a job on switched-off hosts (paper §V-D: "PC SHUT also has the
       same performance as the PC mechanism").
       A job is not asked about again while its boot runs, nor when a job with at most as many hosts and
       an end no later was refused in the pass.
    3. **Switch off** every other idle host (the sleep pstate: ``sleep_pstates`` of SIMULATION_BEGINS'
       resource properties, or pstate 13 of table I).

    A host that is switching is never switched again (only idle hosts are switched off, only asleep hosts
    are booted). The only wake-ups requested are for a head waiting for a just-in-time boot (while a job
    waits, so they never keep a finished simulation alive).

    Args:
        sleep_pstate: the sleep pstate, or ``None`` to read it from the platform (default 13).
        switch_on_s, switch_off_s: transition times (table I: 151.52 s and 6.1 s).
    """

    name = "shutdown"

    def __init__(self, sleep_pstate: int | None = None, switch_on_s: float | None = None,
                 switch_off_s: float | None = None) -> None:
        from wattsched.energy_models.taurus import TAURUS

        self._sleep_option = sleep_pstate
        self.sleep_pstate: int = TAURUS.sleep_pstate if sleep_pstate is None else sleep_pstate
        self.switch_on_s = TAURUS.switch_on_s if switch_on_s is None else switch_on_s
        self.switch_off_s = TAURUS.switch_off_s if switch_off_s is None else switch_off_s
        self.policy: Any = None
        self.admission: Any = None
        #: requested transitions still running: (hosts, booting?, end time)
        self.transitions: list[tuple[ProcSet, bool, float]] = []
        #: hosts kept on for a job (the head or a booked one), free or booting, until when
        self._kept: dict[int, float] = {}
        #: later jobs booted for, committed to their hosts until these are on: id → (hosts, start, end)
        self._booked: dict[str, tuple[ProcSet, float, float]] = {}
        #: times of the CALL_ME_LATER requested for a just-in-time boot, not yet past
        self._calls: list[float] = []
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
        from wattsched.schedulers.budget import PowerModel

        model = PowerModel().with_platform(properties, self._sleep_option, need_sleep=True)
        self.sleep_pstate = model.sleep_pstate

    # ------------------------------------------------------------ what others ask
    def kept(self, view: ClusterView) -> Mapping[int, float]:
        """Hosts kept on for a job (free, or booting for it), with the time until which they are kept."""
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
        """Hosts off or switching as pseudo running jobs ending when they can be on (boot included), and
        the jobs booted for as running on their booting hosts until their expected end."""
        now = view.now_s
        out: list[RunningJob] = []
        counted = ProcSet()
        for job_id, (alloc, _, end) in self._booked.items():
            booting = alloc & view.switching  # its free hosts stay free (another job may take them)
            if booting:
                out.append(RunningJob(f"~booked:{job_id}", booting, now, end))
                counted = plus(counted, booting)
        for k, (hosts, booting, end) in enumerate(self.transitions):
            hs = minus(hosts & view.switching, counted)
            if hs:
                counted = plus(counted, hs)
                ready = end if booting else end + self.switch_on_s
                out.append(RunningJob(f"~switching{k}", hs, now, max(ready, now)))
        rest = minus(view.switching, counted)
        if rest:
            out.append(RunningJob("~switching", rest, now, now + self.switch_on_s + self.switch_off_s))
        if view.off:
            out.append(RunningJob("~off", ProcSet(view.off), now, now + self.switch_on_s))
        return out

    def ready_jobs(self, waiting: Mapping[str, QueuedJob], view: ClusterView) -> list[tuple[QueuedJob, ProcSet]]:
        """The jobs booted for whose hosts are all on and free when the boot ends: they start first in the
        pass (if the admission constraint still agrees). A booking ends there, or when its job started
        elsewhere, or when its hosts are not all free at the end of the boot (another job took one)."""
        out = []
        free = view.free
        now = view.now_s
        for job_id, (alloc, start_s, _) in list(self._booked.items()):
            job = waiting.get(job_id)
            if job is not None and now <= start_s + BOOT_SLACK_S:
                if minus(alloc, free):
                    continue  # still booting
                out.append((job, alloc))
                free = minus(free, alloc)
            del self._booked[job_id]
        return out

    # ------------------------------------------------------------ decisions
    def decide(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        now = view.now_s
        self.transitions = [t for t in self.transitions if not t[0].isdisjoint(view.switching)]
        free, switching = view.free, view.switching
        self._kept = {h: t for h, t in self._kept.items()
                      if t > now and (contains(free, h) or contains(switching, h))}
        self._calls = [t for t in self._calls if t > now + BOOT_SLACK_S]
        self._booked = {j: b for j, b in self._booked.items() if now <= b[1] + BOOT_SLACK_S}
        self.version += 1
        decisions: list[Decision] = []
        boot = ProcSet()
        if queue and self.policy is not None:
            boot, wakeup = self._prepare(queue, view)
            if wakeup is not None and not any(t <= wakeup for t in self._calls):
                self._calls.append(wakeup)
                decisions.append(CallMeLater(wakeup))
        free = view.free  # the boots above took hosts out of it
        off = minus(free, self._kept_set())
        if off:
            decisions.append(SetPState(off, self.sleep_pstate))
            self.transitions.append((ProcSet(off), False, now + self.switch_off_s))
        if boot:
            decisions.append(SetPState(boot, 0))
        self.version += 1
        return decisions

    def _prepare(self, queue: Sequence[QueuedJob], view: ClusterView) -> tuple[ProcSet, float | None]:
        """Steps 1 and 2 of the class docstring: the hosts to boot, and when to come back for the head."""
        from wattsched.schedulers.backfill import admitted_reservation

        now = view.now_s
        head = queue[0]
        running = self.policy.backfill_view(view).running_by_end  # hosts off, switching or booked for a job
        reservation = admitted_reservation(head, now, view.free, running, self.policy.allocator, self.admission,
                                           view)
        if reservation is None:  # cannot happen while every host can be booted; nothing to prepare
            return ProcSet(), None
        hosts, start_s = reservation.hosts, reservation.start_s
        boot = ProcSet()
        wakeup = None
        asleep = hosts & view.off
        if asleep and start_s - now > self.switch_on_s + BOOT_SLACK_S:
            wakeup = start_s - self.switch_on_s  # booting now would leave them idle: boot just in time
        else:
            boot = asleep
        keep = ProcSet()
        if start_s - now < self.switch_off_s + self.switch_on_s:  # off and on again would be late
            keep = minus(hosts & view.free, self._kept_set())
        if (boot or keep) and self._ask(head, boot, keep, start_s, view):
            self._book(head, boot, keep, start_s, view, tell=False)  # its run is the reservation below
        else:
            boot = ProcSet()
        ask_reserve = getattr(self.admission, "reserve_head", None)
        if ask_reserve is not None:
            ask_reserve(head, start_s, hosts, view)
        try:
            boot = boot | self._prepare_backfill(queue, view, start_s, hosts)
        finally:
            release = getattr(self.admission, "release_head", None)
            if release is not None:
                release()
        return boot, wakeup

    def _prepare_backfill(self, queue: Sequence[QueuedJob], view: ClusterView, shadow_s: float,
                          reserved: ProcSet) -> ProcSet:
        """Boot hosts for the later jobs that could start once they are on (EASY's rule, with the boot).

        Cost: one scan of the queue; an allocation is attempted at most once per width and pool (a width
        that does not fit, or whose hosts need no boot, is remembered until the pool changes)."""
        if not view.off:
            return ProcSet()
        now = view.now_s
        start_s = now + self.switch_on_s
        pool = plus(minus(view.free, self._kept_set()), view.off)  # hosts a later job may get
        extra = minus(pool, reserved)  # ... and those the head does not need
        pool_n, extra_n = size(pool), size(extra)
        allocator = self.policy.allocator
        booted = ProcSet()
        refused: list[tuple[int, float]] = []
        tried: set[tuple[int, bool]] = set()  # (width, on extra hosts only): no fit, or no boot needed
        for job in islice(queue, 1, None):
            if pool_n == 0:
                break
            n = job.res
            if n > pool_n or job.id in self._booked:
                continue
            end_s = job.expected_end_s(start_s)
            outside = not end_s <= shadow_s or end_s == math.inf  # would delay the head on its hosts
            if (outside and n > extra_n) or (n, outside) in tried:
                continue
            alloc = allocator(extra if outside else pool, n)
            boot = minus(alloc, view.free) if alloc is not None else None
            if not boot:  # no fit, or only hosts that are on: the backfilling rule's business
                tried.add((n, outside))
                continue
            if any(n2 <= n and e2 <= end_s for n2, e2 in refused):
                continue
            keep = minus(alloc, boot)
            if not self._ask(job, boot, keep, start_s, view):
                refused.append((n, end_s))
                continue
            self._book(job, boot, keep, start_s, view, tell=True)
            self._booked[job.id] = (alloc, start_s, end_s)
            booted = plus(booted, boot)
            pool, extra = minus(pool, alloc), minus(extra, alloc)
            pool_n, extra_n = size(pool), size(extra)
            tried.clear()
        return booted

    def _kept_set(self) -> ProcSet:
        return from_sorted_ids(sorted(self._kept)) if self._kept else ProcSet()

    def _ask(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> bool:
        ask = getattr(self.admission, "can_prepare", None)
        return ask is None or ask(job, boot, keep, start_s, view)

    def _book(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView,
              tell: bool) -> None:
        """Boot ``boot`` and keep ``keep`` idle for ``job`` until ``start_s``, in the view at once (so that
        the next job asked about sees them); ``tell``: the admission constraint counts the job's run."""
        for h in keep:
            self._kept[h] = start_s
        if boot:
            for h in boot:
                self._kept[h] = start_s
            view.switching = view.switching | boot
            view.off = view.off - boot
            self.transitions.append((ProcSet(boot), True, view.now_s + self.switch_on_s))
        self.version += 1
        told = getattr(self.admission, "on_prepare", None) if tell else None
        if told is not None:
            told(job, boot, keep, start_s, view)
