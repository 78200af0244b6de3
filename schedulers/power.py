"""Power managers: which hosts to switch off or on (slot ``power``).

After the backfilling rule has started what it can, the core asks the power manager for decisions
(:class:`~wattsched.schedulers.state.SetPState` to a sleep pstate or back,
:class:`~wattsched.schedulers.state.CallMeLater` for its next check). :class:`OpportunisticShutdown` is the
energy-budget paper's (§IV-C3); ESC's thresholds (ESC paper §2.5) are :mod:`wattsched.schedulers.esc`. A
manager must stop asking for calls once the work is done, or the simulation never ends.

**The contract with the rest of the scheduler** (all declared on :class:`PowerManager`, no-ops there):

- :attr:`PowerManager.sleep_pstate`: the pstate meaning "asleep" (``None``: hosts are never switched off);
- :meth:`PowerManager.pending_hosts`: hosts off or switching shown to backfilling as pseudo running jobs
  ending when they can be on (so that EASY's reservation counts boot time);
- :meth:`PowerManager.ready_jobs`: jobs to start first in a pass, on hosts booted for them;
- :meth:`PowerManager.decide`: the decisions after the pass, with the scheduler as :class:`PassContext`
  (placement, admission constraint, backfilling view);
- for an energy budget's plan (:mod:`wattsched.schedulers.budget`): :meth:`PowerManager.kept_hosts` (free
  or booting hosts kept on for a job, until when), :meth:`PowerManager.transitions` (the switches it
  requested that still run) and :attr:`PowerManager.plan_version` (bumped whenever either changes).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.base.hostsets import (Accumulator, copy, disjoint, from_sorted_ids, inter, intervals, longest, minus,
                                     plus, size, union_if_disjoint)
from wattsched.energy_models.power import NodeModel
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.backfill import Placer, Start, admitted_reservation
from wattsched.schedulers.options import Option
from wattsched.schedulers.pieces import Piece, register
from wattsched.schedulers.queue import JobsBehind, Staircase, WallGroups, narrowest_and_shortest
from wattsched.schedulers.state import CallMeLater, ClusterView, Decision, QueuedJob, RunningJob, SetPState

logger = logging.getLogger(__name__)

#: :func:`transition_pseudo_jobs` checks that the switches' hosts are disjoint with one sort from this many switches on
SORT_MIN_PARTS = 8
#: A boot is started when the head can start within ``switch_on_s`` + this (a wake-up call arrives rounded).
BOOT_SLACK_S = 1e-3
#: :meth:`OpportunisticShutdown._prepare_backfill` drops the rest of the queue's jobs dominated by the pass's
#: refusals at once (:meth:`JobsBehind.narrow`) once it passed over this many one by one since the last time,
#: and when the share passed over, times the jobs left, is worth a narrow (about this many jobs' visits, plus
#: 1/32 per job left: the numpy pass)
NARROW_AFTER_DOMINATED = 32
NARROW_COST_JOBS = 64


class PassContext(Placer, Protocol):
    """What a power manager may use of its scheduler during :meth:`PowerManager.decide`."""

    @property
    def admission(self) -> AdmissionConstraint:
        """The admission constraint (asked before booting hosts for a job)."""
        ...

    def backfill_view(self, view: ClusterView) -> ClusterView:
        """The view backfilling sees (hosts off or switching as pseudo running jobs)."""
        ...


@dataclass(frozen=True)
class Transition:
    """A switch requested by the power manager and still running: ``hosts`` boot (``booting``) or switch
    off until ``end_s``."""

    hosts: ProcSet
    booting: bool
    end_s: float


def transition_times_s(model: NodeModel) -> tuple[float, float]:
    """``(switch_on_s, switch_off_s)`` of ``model``: one flop at each virtual pstate; table I's 151.52 s and
    6.1 s when the platform does not give the speeds (no ``speed_per_state`` property: Batsim does not
    send speeds to schedulers)."""
    if model.speeds_known:
        return model.switch_on_s, model.switch_off_s
    return TAURUS.switch_on_s, TAURUS.switch_off_s


def platform_sleep_model(view: ClusterView, sleep_pstate: int | None, owner: str = "option 'shutdown'") -> NodeModel:
    """The node model of a platform whose hosts are switched off, checked against the ``sleep_pstate``
    option (every host must have the same sleep and transition pstates); ``owner`` names what needs it
    in the error messages.

    Raises:
        OptionError: the platform has no sleep pstate, hosts differ, or the option names another pstate.
    """
    power = view.power
    assert power is not None
    models = power.models
    if any(m.sleep_pstate != models[0].sleep_pstate or m.switch_on_pstate != models[0].switch_on_pstate
           or m.switch_off_pstate != models[0].switch_off_pstate for m in models):
        raise OptionError(f"{owner}: hosts have different sleep_pstates (one sleep pstate is needed for all)")
    model = models[0]
    if sleep_pstate is not None and not 0 <= sleep_pstate < model.nb_pstates:
        raise OptionError(f"option 'sleep_pstate' {sleep_pstate}: the platform has pstates 0-{model.nb_pstates - 1}")
    if model.sleep_pstate is None:
        raise OptionError(f"{owner}: the platform has no sleep_pstates (no pstate to switch hosts off)")
    if sleep_pstate is not None and sleep_pstate != model.sleep_pstate:
        raise OptionError(f"option 'sleep_pstate' {sleep_pstate}: the platform's sleep pstate is {model.sleep_pstate}")
    return model


#: what :func:`transition_pseudo_jobs` keeps of a switch from one call to the next, by ``id`` of the transition:
#: ``(the transition, its hosts switching as intervals, its pseudo job)``
PseudoMemo = dict[int, tuple["Transition", list, "RunningJob"]]


def transition_pseudo_jobs(view: ClusterView, parts: Sequence[tuple[int, Transition, ProcSet]], counted: ProcSet,
                           prefix: str, ready_after_switch_off: Callable[[float], float], other_switching_ready_s: float,
                           off_ready_s: float, memo: PseudoMemo | None = None) -> list[RunningJob]:
    """Hosts switching or asleep as pseudo running jobs for EASY's reservation (:meth:`PowerManager.pending_hosts`):
    the hosts still switching of each requested transition (``parts``, :meth:`PowerManager.switching_parts`),
    except those ``counted`` already, until they can be on (the boot's end, or
    ``ready_after_switch_off(end of the switch-off)``), other switching hosts until
    ``other_switching_ready_s``, asleep hosts until ``off_ready_s``.

    With ``memo`` (the caller's, kept from one call to the next), a switch that holds none of the hosts counted before
    it, with the same hosts switching and the same end as at the previous call, keeps its pseudo job: the job's
    ``start_s`` (and the index in its id) is then that of the call that made it, not now. Only the order of pseudo jobs
    of one expected end depends on it, and EASY's reservation releases those together
    (:func:`~wattsched.schedulers.backfill.head_reservation`). Issue 15: at 80,640 hosts under EASY + shutdown, 27
    switches a pass were each made a job again, 16 % of the pseudo jobs' cost."""
    now = view.now_s
    out: list[RunningJob] = []
    # Parts share no host but on platforms whose hosts switch at several speeds (a host whose switch-off ended while
    # others of its request still switch may be booted again): checked with one sort of their intervals when they
    # are many (27 a call at 80,640 hosts under EASY + shutdown, where adding them one by one to a growing union was
    # 13 % of the run); each then loses only the hosts `counted` holds, else those counted so far
    union = union_if_disjoint(hs for _, _, hs in parts) if len(parts) >= SORT_MIN_PARTS else None
    seen = Accumulator(counted) if union is None else None  # the hosts counted so far
    kept: PseudoMemo = {}
    for k, t, hs in parts:
        taken = counted if seen is None else seen.hosts
        ready = t.end_s if t.booting else ready_after_switch_off(t.end_s)
        end_s = ready if ready > now else now
        if taken and not disjoint(hs, taken):
            hs = minus(hs, taken)  # (a copy: the parts are shared and never changed)
            job = RunningJob(f"{prefix}{k}", hs, now, end_s) if hs else None
        else:
            entry = memo.get(id(t)) if memo is not None else None
            if entry is not None and entry[0] is t and entry[2].expected_end_s == end_s and entry[1] == intervals(hs):
                job = entry[2]
                hs = job.alloc
            else:
                job = RunningJob(f"{prefix}{k}", hs, now, end_s)
                entry = (t, list(intervals(hs)), job)
            kept[id(t)] = entry
        if job is not None:
            if seen is not None:
                seen.add(hs)
            out.append(job)
    if memo is not None:
        memo.clear()
        memo.update(kept)
    if seen is not None:
        rest = minus(view.switching, seen.hosts)
    elif size(union) == size(view.switching):  # the parts (of switching hosts only) hold every switching host
        rest = ProcSet()
    else:
        rest = minus(minus(view.switching, union), counted)
    if rest:
        out.append(RunningJob("~switching", rest, now, other_switching_ready_s))
    if view.off:
        out.append(RunningJob("~off", copy(view.off), now, off_ready_s))
    return out


class PowerManager(Piece):
    """Base of the ``power`` slot: never switches anything. Override :meth:`decide` (and declare
    :attr:`sleep_pstate`)."""

    slot = "power"
    #: the pstate in which a host is asleep, None when this manager never switches hosts off
    sleep_pstate: int | None = None
    #: bumped whenever :meth:`kept_hosts` or :meth:`transitions` change (an energy budget caches its plan)
    plan_version: int = 0
    #: bumped whenever the mapping :meth:`kept_hosts` returns is changed in place (a manager that returns a new
    #: mapping for each change needs no bump: an energy budget caches what it builds of the mapping by both)
    kept_version: int = 0
    #: boots the hosts the placement chooses for a job (False: hosts in id order, whatever partition a job
    #: needs, so it cannot serve a partitioned placement: the core refuses the combination)
    follows_placement: bool = True

    def decide(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> list[Decision]:
        """Decisions after a scheduling pass; ``queue`` is what still waits, in scheduling order."""
        return []

    def pending_hosts(self, view: ClusterView) -> list[RunningJob]:
        """Hosts off or switching (and jobs booked on booting hosts) as pseudo running jobs that end when
        the hosts can be used."""
        return []

    def ready_jobs(self, waiting: Mapping[str, QueuedJob], view: ClusterView, ctx: PassContext) -> list[Start]:
        """Jobs to start first in the pass, on hosts booted for them (``waiting``: the queue by id)."""
        return []

    def kept_hosts(self, view: ClusterView) -> Mapping[int, float]:
        """Hosts kept on for a job (free, or booting for it), with the time until which they are kept."""
        return {}

    def transitions(self, view: ClusterView) -> Sequence[Transition]:
        """The switches this manager requested that still run."""
        return ()

    def switching_parts(self, view: ClusterView) -> list[tuple[int, Transition, ProcSet]]:
        """``(k, transitions[k], its hosts still switching)`` for each of :meth:`transitions` with hosts still
        switching, in request order. Cached while ``view.switching`` (a set the core and the managers replace,
        never change in place) and the list of transitions (only appended to, or replaced) stay the same:
        the energy budget and EASY's view of hosts off ask several times per pass (issue 15)."""
        transitions = self.transitions(view)
        cached = self._parts_cache
        if (cached is not None and cached[0] is view.switching and cached[1] is transitions
                and cached[2] == len(transitions)):
            return cached[3]
        switching = view.switching
        parts = []
        for k, t in enumerate(transitions):
            hs = inter(t.hosts, switching)
            if hs:
                parts.append((k, t, hs))
        self._parts_cache = (switching, transitions, len(transitions), parts)
        return parts

    _parts_cache: tuple[ProcSet, Sequence[Transition], int, list[tuple[int, Transition, ProcSet]]] | None = None


@register
class NoPowerManager(PowerManager):
    """Hosts stay on, idle at their pstate when no job runs."""

    name = "none"
    description = "hosts stay on"


@register
class OpportunisticShutdown(PowerManager):
    """Opportunistic shutdown (energy-budget paper §III-A and §IV-C3; §V-C "as soon as idle nodes are
    witnessed, the decision of shutting them down is made"): idle hosts are switched off, and booted when a
    job needs them; the job waits for the boot.

    After each pass:

    1. **The head job.** EASY's reservation of the head (hosts and shadow time ``q``) is computed with
       hosts off or switching counted as free once they can be on (:meth:`pending_hosts`: boot time
       included), and moved later when the admission constraint cannot run it then (a powercap:
       :func:`~wattsched.schedulers.backfill.admitted_reservation`). Its hosts that are asleep are booted
       when ``q ≤ now + switch_on_s`` (the boot is what the head waits for); when ``q`` is later they are
       booted *just in time*, at ``q − switch_on_s``, for which a CALL_ME_LATER is requested (booting
       earlier would leave them idle, and a later pass would switch them off again). Its free hosts are kept
       idle until ``q`` when switching them off and on again could not be done by then
       (``q < now + switch_off_s + switch_on_s``). Both only if the admission constraint agrees
       (``can_prepare``: an energy budget counts the boots and the head's run).
    2. **Backfilling with boots.** With the head's reservation made (``reserve_head``, as during EASY's
       backfilling), every later job in queue order that could start once booted hosts are on (at
       ``now + switch_on_s``, on free hosts not kept and hosts asleep) without delaying the head (it ends
       by ``q`` or uses no reserved host) gets its asleep hosts booted and its free hosts kept, if the
       admission constraint agrees (``can_prepare`` then ``on_prepare``: it counts the job's run in the rest
       of the pass). Such a job is *booked*: committed to these hosts, as a resource manager's power saving
       allocates a job to nodes that are booting. Until the boot ends all its hosts, booting and kept free,
       appear to EASY as running it until its expected end (:meth:`pending_hosts`; the backfill view takes
       the free ones out of its free hosts, so that a later head's reservation never counts on them), and
       when the boot ends it starts there first in the pass (:meth:`ready_jobs`, if the admission
       constraint still agrees). Without this step a powercap whose wide head
       is not admitted would never start a job on switched-off hosts (paper §V-D: "PC SHUT also has the
       same performance as the PC mechanism").
       A job is not asked about again while its boot runs, nor when a job with at most as many hosts and
       an end no later was refused in the pass.
    3. **Switch off** every other idle host (the platform's sleep pstate).

    A host that is switching is never switched again (only idle hosts are switched off, only asleep hosts
    are booted). The only wake-ups requested are for a head waiting for a just-in-time boot (while a job
    waits, so they never keep a finished simulation alive).

    Args:
        sleep_pstate: the sleep pstate, checked against the platform's ``sleep_pstates`` (None: the
            platform's).
    """

    name = "shutdown"
    description = "opportunistic shutdown: idle hosts off at once, booted when a job can use them"
    reference = "energy-budget paper §III-A, §IV-C3"
    options = (
        Option("sleep_pstate", int, None, help="sleep pstate for shutdown (default: the platform's sleep_pstates)"),
    )

    def __init__(self, sleep_pstate: int | None = None) -> None:
        self._sleep_option = sleep_pstate
        self.sleep_pstate = TAURUS.sleep_pstate if sleep_pstate is None else sleep_pstate
        self.switch_on_s, self.switch_off_s = TAURUS.switch_on_s, TAURUS.switch_off_s
        #: requested transitions still running
        self._transitions: list[Transition] = []
        #: hosts kept on for a job (the head or a booked one), free or booting, until when
        self._kept: dict[int, float] = {}
        #: later jobs booted for, committed to their hosts until these are on: id → (hosts, start, end)
        self._booked: dict[str, tuple[ProcSet, float, float]] = {}
        self._booked_version = 0  # bumped at every change of _booked (the cache of pending_hosts)
        #: times of the CALL_ME_LATER requested for a just-in-time boot, not yet past
        self._calls: list[float] = []
        self._kept_hosts: ProcSet | None = None  # the hosts of _kept (cache of _kept_set)
        #: until → the hosts kept until then when they were booked (a host booked again since, or dropped, is
        #: still listed here: :meth:`_forget_kept` checks :attr:`_kept`)
        self._kept_groups: dict[float, ProcSet] = {}
        self._pseudo_memo: PseudoMemo = {}  # the switches' pseudo jobs kept between passes (transition_pseudo_jobs)
        #: a job started since :meth:`_forget_kept` last looked (it may have taken kept hosts: :meth:`on_started`)
        self._started_since = True
        self.plan_version = 0
        self.kept_version = 0

    def on_platform(self, view: ClusterView) -> None:
        """The sleep pstate and the transition times from the platform (checked against the option).

        Raises:
            OptionError: the platform declares no sleep pstate, or another one than the option.
        """
        model = platform_sleep_model(view, self._sleep_option)
        assert model.sleep_pstate is not None
        self.sleep_pstate = model.sleep_pstate
        self.switch_on_s, self.switch_off_s = transition_times_s(model)

    # ------------------------------------------------------------ what others ask
    def kept_hosts(self, view: ClusterView) -> Mapping[int, float]:
        return self._kept

    def transitions(self, view: ClusterView) -> Sequence[Transition]:
        return self._transitions

    def pending_hosts(self, view: ClusterView) -> list[RunningJob]:
        """Hosts off or switching as pseudo running jobs ending when they can be on (boot included), and
        the jobs booted for as running on their booting hosts until their expected end.

        Asked twice per pass (EASY's view, then :meth:`decide`'s): the second time, when nothing it reads
        changed (the time, the sets of hosts off and switching, which the core and :meth:`_book` replace
        and never change in place, the bookings and the transitions), the list of the first is returned
        (callers do not change it)."""
        sets = (view.off, view.switching, self._transitions)  # compared by identity
        values = (view.now_s, self._booked_version, len(self._transitions))
        cached = self._pending_cache
        if cached is not None and cached[1] == values and all(a is b for a, b in zip(cached[0], sets)):
            return cached[2]
        out = self._pending_hosts(view)
        self._pending_cache = (sets, values, out)
        return out

    _pending_cache: tuple[tuple, tuple, list[RunningJob]] | None = None

    def _pending_hosts(self, view: ClusterView) -> list[RunningJob]:
        now = view.now_s
        out: list[RunningJob] = []
        counted = ProcSet()
        for job_id, (alloc, _, end) in self._booked.items():
            if not disjoint(alloc, view.switching):  # committed: its free hosts too (backfill_view)
                out.append(RunningJob(f"~booked:{job_id}", alloc, now, end))
                counted = plus(counted, inter(alloc, view.switching))
        return out + transition_pseudo_jobs(view, self.switching_parts(view), counted, "~switching",
                                            lambda end_s: end_s + self.switch_on_s,
                                            now + self.switch_on_s + self.switch_off_s, now + self.switch_on_s,
                                            self._pseudo_memo)

    def ready_jobs(self, waiting: Mapping[str, QueuedJob], view: ClusterView, ctx: PassContext) -> list[Start]:
        """The jobs booted for whose hosts are all on and free when the boot ends: they start first in the
        pass (if the admission constraint still agrees). A booking ends there, or when its job started
        elsewhere, or when its hosts are not all free at the end of the boot (another job took one)."""
        out: list[Start] = []
        free = view.free
        now = view.now_s
        for job_id, (alloc, start_s, _) in list(self._booked.items()):
            job = waiting.get(job_id)
            if job is not None and now <= start_s + BOOT_SLACK_S:
                if minus(alloc, free):
                    continue  # still booting
                out.append((job, ctx.assign(job, alloc)))
                free = minus(free, alloc)
            del self._booked[job_id]
            self._booked_version += 1
        return out

    # ------------------------------------------------------------ decisions
    def on_started(self, job: RunningJob, view: ClusterView) -> None:
        self._started_since = True

    def on_hosts_changed(self, hosts: ProcSet, pstate: int, view: ClusterView) -> None:
        """Switches ended: the transitions with no host still switching are dropped here, before the pass (the
        only event that takes hosts out of ``view.switching``), so that EASY's pass and :meth:`decide` read the
        same list (and :meth:`pending_hosts` computed once serves both)."""
        running = [t for t in self._transitions if not disjoint(t.hosts, view.switching)]
        if len(running) != len(self._transitions):
            self._transitions = running
            self.plan_version += 1

    def decide(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> list[Decision]:
        now = view.now_s
        changed = self._forget_kept(now, view)
        self._calls = [t for t in self._calls if t > now + BOOT_SLACK_S]
        booked = {j: b for j, b in self._booked.items() if now <= b[1] + BOOT_SLACK_S}
        if len(booked) != len(self._booked):
            self._booked = booked
            self._booked_version += 1
        if changed:  # an energy budget's plan reads the kept hosts and the transitions, not the rest
            self.plan_version += 1
        decisions: list[Decision] = []
        boot = ProcSet()
        if queue:
            boot, wakeup = self._prepare(queue, view, ctx)
            # never (a head behind a job without walltime): no call, the job's end will bring a pass anyway
            if wakeup is not None and wakeup < math.inf and not any(t <= wakeup for t in self._calls):
                self._calls.append(wakeup)
                decisions.append(CallMeLater(wakeup))
        free = view.free  # the boots above took hosts out of it
        off = minus(free, self._kept_set())
        if off and self.sleep_pstate is not None:
            decisions.append(SetPState(off, self.sleep_pstate))
            self._transitions.append(Transition(copy(off), False, now + self.switch_off_s))
            self.plan_version += 1
        if boot:
            decisions.append(SetPState(boot, 0))
        return decisions

    def _prepare(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> tuple[ProcSet, float | None]:
        """Steps 1 and 2 of the class docstring: the hosts to boot, and when to come back for the head."""
        now = view.now_s
        head = queue[0]
        admission = ctx.admission
        seen = ctx.backfill_view(view)  # hosts off, switching or booked for a job
        reservation = admitted_reservation(head, now, seen.free, seen.by_end(), ctx, admission, view)
        if reservation is None:  # cannot happen while every host can be booted; nothing to prepare
            return ProcSet(), None
        hosts, start_s, assignment = reservation.hosts, reservation.start_s, reservation.assignment
        boot = ProcSet()
        wakeup = None
        asleep = inter(hosts, view.off)
        if asleep and start_s - now > self.switch_on_s + BOOT_SLACK_S:
            wakeup = start_s - self.switch_on_s  # booting now would leave them idle: boot just in time
        else:
            boot = asleep
        keep = ProcSet()
        if start_s - now < self.switch_off_s + self.switch_on_s:  # off and on again would be late
            keep = minus(inter(hosts, view.free), self._kept_set())
        if (boot or keep) and admission.can_prepare(head, boot, keep, start_s, assignment, view):
            self._book(boot, keep, start_s, view)  # its run is the reservation below
        else:
            boot = ProcSet()
        admission.reserve_head(head, start_s, assignment, view)
        try:
            boot = plus(boot, self._prepare_backfill(queue, view, ctx, start_s, hosts))
        finally:
            admission.release_head()
        return boot, wakeup

    def _prepare_backfill(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext, shadow_s: float,
                          reserved: ProcSet) -> ProcSet:
        """Boot hosts for the later jobs that could start once they are on (EASY's rule, with the boot).

        Cost: one scan of the queue (of the jobs an indexed queue does not rule out; on a long queue, the jobs
        the refusals dominate are dropped in bulk once many were passed over: :data:`NARROW_AFTER_DOMINATED`);
        an allocation is attempted at most once per width and pool (a width that does not fit, or whose hosts
        need no boot, is remembered until the pool changes; per fit key with a partitioned placement, whose
        queue may hold job-partition entries)."""
        if not view.off:
            return ProcSet()
        now = view.now_s
        start_s = now + self.switch_on_s
        pool = plus(minus(view.free, self._kept_set()), view.off)  # hosts a later job may get
        extra = minus(pool, reserved)  # ... and those the head does not need
        pool_n, extra_n = size(pool), size(extra)
        # no contiguous allocation wider than the longest interval fits (on a fragmented machine most widths tried
        # do not: without this, each such try scanned every interval, 12 % of EASY + shutdown at 80,640 hosts)
        contiguous = ctx.contiguous
        pool_fit, extra_fit = (longest(pool), longest(extra)) if contiguous else (pool_n, extra_n)
        # no waiting job fits in the pool (or, ending after the head's start, in the extra hosts): the loop below
        # would pass over every one (`may_fit`). On the week of issue 15, 22,700 of the 62,900 boot plannings of
        # EASY + shutdown, each of which built the queue's index for nothing
        narrowest, shortest_s = narrowest_and_shortest(queue)
        if narrowest > pool_fit or (narrowest > extra_fit and start_s + shortest_s > shadow_s):
            return ProcSet()
        booted = ProcSet()
        refused = Staircase()  # (hosts, end) of the jobs the admission constraint refused to boot for
        tried: set[tuple[object, int, bool]] = set()  # (fit key, width, on extra hosts only): no fit, or no boot
        admission = ctx.admission
        keyed = ctx.partitioned
        key: object = None
        # no free host left to keep (they are all kept for other jobs): every host a job gets is booted
        boots_all = not minus(view.free, self._kept_set())

        def may_fit(res: np.ndarray, wall: np.ndarray) -> np.ndarray:
            """The jobs the loop below does not pass over by their width alone, as the pool stands (the widths
            that fit in the pool's longest interval, and in the extra hosts' for a job that would end after the
            head's start). Most jobs of a busy queue are wider than every interval left: visited one by one they
            were most of this scan (issue 15)."""
            return (res <= pool_fit) & ((start_s + wall <= shadow_s) | (res <= extra_fit))

        def may_prepare(res: np.ndarray, wall: np.ndarray, groups: WallGroups | None) -> np.ndarray | None:
            """... and that the admission constraint may admit (:meth:`AdmissionConstraint.may_prepare`), asked
            of the jobs that may fit only."""
            return admission.may_prepare(res, wall, start_s, view, groups, boots_all=boots_all)

        # an indexed queue gives only the jobs that may fit in the pool and that the admission may admit
        later = JobsBehind(queue, 0, pool_n, may_prepare, rule=may_fit)
        dominated = visited = visited_at = 0  # jobs passed over as dominated, and visited, since the last narrow

        def not_dominated(res: np.ndarray, wall: np.ndarray) -> np.ndarray:
            """The check below, on the jobs not visited yet (no walltime: ``inf``, never passed over there)."""
            return ~(np.isfinite(wall) & refused.dominates_many(res, start_s + wall))

        for job in later:
            visited += 1
            if pool_n == 0:
                break
            n = job.res
            if n > pool_n or job.id in self._booked:
                continue
            if keyed:
                key = ctx.fit_key(job)
            # dominated by a refusal whatever its hosts (its end is at least start + walltime; not on another
            # partition, whose time model may shorten it)
            elif job.walltime_s is not None and refused.dominates(n, start_s + job.walltime_s):
                dominated += 1
                if dominated >= NARROW_AFTER_DOMINATED:  # on a long queue most of the rest may be dominated too
                    left = later.left()
                    if dominated * left >= (visited - visited_at) * (NARROW_COST_JOBS + left // 32):
                        later.narrow(pool_n, not_dominated, refilter=False)
                        dominated, visited_at = 0, visited
                continue
            # would delay the head on its hosts? (the walltime at the top frequency is a lower bound)
            outside = job.walltime_s is None or not start_s + job.walltime_s <= shadow_s
            assignment = None
            if not outside:
                if (key, n, False) in tried:
                    continue
                assignment = ctx.place(job, pool) if n <= pool_fit else None
                if assignment is not None and not assignment.end_s(start_s) <= shadow_s:
                    outside = True  # slowed past the head's reservation by its pstate
            if outside:
                if n > extra_n or (key, n, True) in tried:
                    continue
                assignment = ctx.place(job, extra) if n <= extra_fit else None
            boot = minus(assignment.hosts, view.free) if assignment is not None else None
            if not boot:  # no fit, or only hosts that are on: the backfilling rule's business
                tried.add((key, n, outside))
                continue
            assert assignment is not None
            end_s = assignment.end_s(start_s)
            if refused.dominates(n, end_s):
                continue
            keep = minus(assignment.hosts, boot)
            if not admission.can_prepare(job, boot, keep, start_s, assignment, view):
                refused.add(n, end_s)
                continue
            self._book(boot, keep, start_s, view)
            admission.on_prepare(job, boot, keep, start_s, assignment, view)
            self._booked[job.id] = (assignment.hosts, start_s, end_s)
            self._booked_version += 1
            booted = plus(booted, boot)
            pool, extra = minus(pool, assignment.hosts), minus(extra, assignment.hosts)
            pool_n, extra_n = size(pool), size(extra)
            pool_fit, extra_fit = (longest(pool), longest(extra)) if contiguous else (pool_n, extra_n)
            tried.clear()
            later.narrow(pool_n, may_fit)
        return booted

    def _kept_set(self) -> ProcSet:
        """The hosts of :attr:`_kept` as a set (cached until :attr:`_kept` changes: :meth:`_book`,
        :meth:`_forget_kept`)."""
        if self._kept_hosts is None:
            self._kept_hosts = from_sorted_ids(sorted(self._kept)) if self._kept else ProcSet()
        return self._kept_hosts

    def _forget_kept(self, now: float, view: ClusterView) -> bool:
        """Drop the kept hosts whose time has come or that are neither free nor booting any more (a job took
        them); whether any went. Costs set operations and the hosts that go (found through
        :attr:`_kept_groups` and a set difference), not a visit of every kept host; the others keep their
        order."""
        kept = self._kept
        started, self._started_since = self._started_since, False
        if not kept:
            return False
        groups = self._kept_groups
        # only a job that started takes a kept host out of the free and switching ones (a kept host is never switched
        # off, and a boot's end makes it free): without one since the last look, the two differences of large sets are
        # not made (issue 15: 27 µs a pass at 80,640 hosts under EASY + shutdown)
        gone = minus(minus(self._kept_set(), view.free), view.switching) if started else ()
        due = [until for until in groups if until <= now]
        if not gone and not due:
            return False
        dropped = [h for until in due for h in groups.pop(until) if kept.get(h) == until]
        dropped += [h for h in gone if kept[h] > now]  # (a host whose time has come is listed above)
        for h in dropped:
            del kept[h]
        if not dropped:
            return False
        self.kept_version += 1
        self._kept_hosts = minus(self._kept_set(), from_sorted_ids(sorted(dropped)))
        return True

    def _keep(self, hosts: ProcSet, until: float) -> None:
        """Keep ``hosts`` on until ``until`` (booking a kept host again replaces its time)."""
        kept = self._kept
        for h in hosts:
            kept[h] = until
        self.kept_version += 1
        group = self._kept_groups.get(until)
        self._kept_groups[until] = plus(group, hosts) if group is not None else copy(hosts)
        if self._kept_hosts is not None:
            self._kept_hosts = plus(self._kept_hosts, hosts)

    def _book(self, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> None:
        """Boot ``boot`` and keep ``keep`` idle for a job until ``start_s``, in the view at once (so that
        the next job asked about sees them)."""
        if keep:
            self._keep(keep, start_s)
        if boot:
            self._keep(boot, start_s)
            view.switching = plus(view.switching, boot)
            view.off = minus(view.off, boot)
            self._transitions.append(Transition(copy(boot), True, view.now_s + self.switch_on_s))
        self.plan_version += 1
