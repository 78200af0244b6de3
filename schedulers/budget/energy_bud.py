"""energyBud and reducePC: admission constraints that keep the window's energy within the budget.

Energy-budget paper (Glesser et al., "energy-budget-backfilling"), §IV. During the
window ``[ts, te)`` the platform may consume at most ``B`` joules. Outside the window every constraint
here admits everything, so the schedule is plain EASY there.

**energyBud** (:class:`EnergyBud`; §IV-B, Algorithm 2):

- Rule 1: energy becomes available at ``R = B / (te − ts)`` J/s (:attr:`EnergyBudget.rate_w`).
- The counter ``Cea`` (:attr:`EnergyBudget.cea_j`) = energy made available since ``ts`` − energy consumed
  since ``ts``. At every call of the algorithm it is advanced by ``R·Δt`` minus the consumption since the
  previous call, *overestimated* by counting computing hosts at P̃comp, idle ones at P̃idle, and hosts
  asleep or switching at their platform wattage (§IV-C1, :meth:`EnergyBudget.on_clock`).
- Monitoring stage every ``monitoring_period_s`` (§IV-C1): a QUERY of the consumed energy, and on its
  ANSWER ``Cea ← R·(t − ts) − (E(t) − E(ts))``, the available energy minus the energy really consumed
  (:meth:`EnergyBudget.on_energy`); the algorithm also runs then (the pass after the ANSWER).
- Rule 2, no energy debt: a job starts only if the balance stays ≥ 0 at every instant from now to ``te``,
  counting the energy still to be released (``R`` J/s) and the estimated future consumption of the whole
  cluster: running jobs at P̃comp until start + walltime (at their pstate), the new job likewise, then their hosts idle
  (P̃idle) or, with opportunistic shutdown, switching off and asleep; hosts asleep or in transition at
  their platform wattage (:meth:`EnergyBudget.can_start`). The balance is piecewise linear, so its
  minimum is checked at the breakpoints (exact; see "How it is computed" below).
- Algorithm 2, line "Reserve energy in the future for firstJob": while EASY backfills, the head job's
  energy ``J`` (its hosts at P̃comp above their baseline over ``[q, q + walltime) ∩ [ts, te)``, ``q`` its
  reservation time) is reserved *in the future*: it is subtracted from the balance as the head will
  consume it from ``q`` on, so a backfilled job is admitted only if ``Cea`` still pays the head at ``q``
  (:meth:`EnergyBudget.reserve_head`); it is released at the line "Remove the energy reservation"
  (:meth:`EnergyBudget.release_head`). (Subtracting ``J`` from ``Cea`` *now* would refuse every backfill
  at the start of the window, where ``Cea = 0``, even with a huge budget, against §IV-C4's "B = ∞ gives
  EASY's schedules".)

**reducePC** (:class:`ReducePC`, §IV-D): the head's energy is not reserved at ``q``; instead the number
of joules made available per second is lowered by ``J / (q − now)`` during ``[now, q)`` (so ``J`` is put
aside by ``q``): a backfilled job must keep the balance ≥ 0 with that lowered rate **and**, as under a
powercap, keep the estimated platform power ≤ ``R − J / (q − now)`` until ``q`` ("as if the powercap had
been reduced": the saved energy does not let it exceed the lowered rate). When ``q ≤ now`` (the head
waits for energy, not hosts) the reservation is made as in energyBud.

The powercap baseline of §V-C is :mod:`.powercap`.

With ``B = ∞`` nothing is checked and no call is made: the schedule is exactly EASY's.

**How it is computed** (energyBud / reducePC; the decisions are those of the straightforward version kept
as the test oracle ``tests/budget_oracle.py``, which rebuilds the whole plan as segments at every call).
Once per scheduling pass, :meth:`EnergyBudget._future` builds a :class:`~.plan.Plan`: the plan's power as a
step function on sorted breakpoints ``t0 = max(now, ts) < … < te`` (numpy), the balance ``G`` at each
breakpoint, and the power counted by the balance (plan + energyBud's reservation or reducePC's lowered
rate). The running jobs' part of the plan is cached across passes while ``view.running_version`` does not
change; the ``Plan`` itself is rebuilt only when the view, Cea, the reservation / cut, the power
manager's ``plan_version`` or the jobs started in the pass change. A candidate then only adds its
own few pieces (:meth:`EnergyBudget._job_extra`: computing hosts, minus their free / kept baseline), and
:meth:`~.plan.Plan.admits` checks the balance at the candidate's breakpoints (bisect into ``G``) and at the
plan's (one vectorized expression), and reducePC's power cap piece by piece. Refusals are remembered for
the pass, by the allocation's kept hosts: a job with the same kept hosts, at least as many hosts and an
expected end at least as late is refused without evaluation. That shortcut is exact only when a job's extra
power grows pointwise with its hosts and walltime (P̃comp ≥ P̃idle ≥ 0, or with shutdown P̃comp ≥ switch-off
power ≥ sleep power ≥ 0; :meth:`EnergyBudget._monotone`), so it is used only then; jobs started later in
the pass only add power, so the refusals stay valid, and they are dropped whenever the ``Plan`` is
rebuilt for another state.

Wake-ups: CALL_ME_LATER at ``ts``, at every monitoring stage inside the window and at ``te`` (so that jobs
waiting for energy start at the end of the window), never once the work is done (NOTIFY
no_more_static_job_to_submit, empty queue, nothing running: Batsim would never end the simulation).

The powers of hosts asleep or switching come from the platform (:mod:`.estimates`).
"""

from __future__ import annotations

import logging
import math
import operator
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.hostsets import contains_many, intervals, minus, plus, size
from wattsched.schedulers.budget.estimates import Segment
from wattsched.schedulers.budget.plan import (PY_MAX_SEGMENTS, KeptIndex, Plan, PlanSegments, Staircase, same_state,
                                              unique_inverse)
from wattsched.schedulers.budget.window import TIME_EPS_S, BudgetWindow
from wattsched.schedulers.pieces import register
from wattsched.schedulers.queue import WallGroups
from wattsched.schedulers.state import Assignment, ClusterView, QueuedJob

logger = logging.getLogger(__name__)

INF = math.inf
_NB_HOSTS = operator.attrgetter("nb_hosts")
_EXPECTED_END = operator.attrgetter("expected_end_s")


class EnergyBudget(BudgetWindow):
    """energyBud / reducePC (energy-budget paper §IV, Algorithm 2 and §IV-D); see the module docstring.

    Args (:data:`~.window.BUDGET_OPTIONS`):
        budget_j / budget_fraction: B in joules, or as a fraction of the window's all-computing energy
            (hosts × P̃comp × window, the paper's 100 %); neither = unlimited (plain EASY).
        window_start_s, window_end_s: ``[ts, te)``.
        monitoring_period_s: period of the monitoring stage (table I: 600 s).
        estimated_idle_w, estimated_comp_w: P̃idle and P̃comp.

    Whether idle hosts are switched off (the future of a freed host is then off, not idle) is the power
    manager's business (:attr:`~.window.BudgetWindow.shutdown`).
    """

    #: ``"energy-bud"`` (reservation in the future) or ``"reduce-pc"`` (rate lowered until q)
    mode: ClassVar[str] = "energy-bud"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cea_j = 0.0  # Cea at time _last_t (0 before ts)
        self._last_t: float | None = None
        self._e_ref: float | None = None  # measured energy at the first stage (≈ ts)
        self._t_ref = self.ts
        self._cea_at_ref = 0.0
        self._stage_times: list[float] = []
        self._started: list[tuple[int, float]] = []  # jobs started in this pass: (hosts, expected end)
        #: what the jobs the power manager prepared (booted / kept hosts for) in this pass add to the plan
        self._prepared: list[Segment] = []
        self._reserved: list[Segment] = []  # energyBud: the head's run at q, during backfilling
        self._cut: tuple[float, float] | None = None  # reducePC: (lowered power J/(q-now), q)
        # fast path (see Plan): the pass's plan as arrays, the running jobs' segments, refusals
        self._fut: Plan | None = None
        self._running_cache: tuple[tuple, tuple[Any, Any, Any, list]] | None = None
        #: the kept mapping, kept_version and free hosts of the last _kept_arrays, what it built of the mapping (index,
        #: hosts, distinct times, each host's time among them), which of the hosts were free, and its answer
        self._kept_cache: tuple[Mapping[int, float], int, ProcSet,
                                tuple[KeptIndex, np.ndarray, np.ndarray, np.ndarray], np.ndarray,
                                tuple[Mapping[int, float], KeptIndex, int,
                                      tuple[np.ndarray, np.ndarray, np.ndarray]]] | None = None
        #: _kept_arrays's answer when no host is kept (built once)
        self._no_kept: tuple[Mapping[int, float], KeptIndex, int,
                             tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        #: the plan's segments of one state of the pass (_plan_segments): (key, started, kept hosts, arrays)
        self._plan_cache: tuple[tuple, tuple[int, int], KeptIndex, PlanSegments] | None = None
        #: refusals of the pass by kept hosts of the allocation: (hosts, expected end)
        self._refused: dict[tuple, Staircase] = {}
        #: the plan, hosts and end of a job that can_start refused by more than the rounding, without the head's
        #: reservation, no host kept (refuses_all then knows the answer with the head reserved in its place: see there)
        self._clearly_refused: tuple[Plan, int, float] | None = None

    # ------------------------------------------------------------ the counter (rule 1, monitoring)
    def estimated_power_w(self, view: ClusterView) -> float:
        """P̃ of the platform in the state ``view`` describes: computing hosts at P̃comp, idle ones at
        P̃idle, asleep and switching ones at their platform wattage (§IV-C1 "counting the number of
        computing and non-computing nodes")."""
        p = self.power
        comp = view.nb_running_hosts
        return (comp * p.est_comp_w + size(view.free) * p.est_idle_w + size(view.off) * p.sleep_w
                + size(view.switching) * p.switch_w)

    def on_clock(self, now_s: float, view: ClusterView) -> None:
        """Before the clock moves to ``now_s``: Cea += R·Δt − P̃·Δt over the part of the elapsed time
        inside the window (§IV-C1, "whenever the algorithm is called")."""
        if self.unlimited:
            return
        last = view.now_s if self._last_t is None else self._last_t
        a, b = max(last, self.ts), min(now_s, self.te)
        if b > a:
            self.cea_j += (self.rate_w - self.estimated_power_w(view)) * (b - a)
        self._last_t = max(last, now_s)

    def on_energy(self, energy_j: float, view: ClusterView) -> None:
        """ANSWER of a monitoring stage: Cea ← R·(t − ts) − measured consumption since ts (§IV-C1)."""
        if self.unlimited:
            return
        now = view.now_s
        if self._e_ref is None:
            if now >= self.ts - TIME_EPS_S:
                self._e_ref, self._t_ref = energy_j, max(now, self.ts)
            return
        if now > self.te:
            return
        measured = self.rate_w * (now - self._t_ref) - (energy_j - self._e_ref)
        if self._t_ref > self.ts:  # the reference came late: keep the estimate of [ts, t_ref)
            measured += self._cea_at_ref
        logger.debug("monitoring at %s: Cea %.1f J estimated, %.1f J measured", now, self.cea_j, measured)
        self.cea_j = measured

    def _stage_due(self, now: float) -> bool:
        """A monitoring stage (QUERY) is due: the first pass in the window (measures E(ts)), then every
        ``monitoring_period_s`` from ts."""
        if not self.ts <= now < self.te:
            return False
        due = (self._e_ref is None and not self._stage_times) or now >= self._next_stage
        if due:
            if not self._stage_times:
                self._cea_at_ref = self.cea_j if now > self.ts else 0.0
            self._stage_times.append(now)
            while self._next_stage <= now:
                self._next_stage += self.monitoring_period_s
        return due

    def _next_wakeup(self, now: float) -> float | None:
        if now < self.ts:
            return self.ts
        if now < self.te:
            return min(self._next_stage, self.te)
        return None

    # ------------------------------------------------------------ the plan (rule 2)
    def _tail(self, n: int, t: float) -> list[Segment]:
        """``n`` hosts that become free at ``t``: idle for ever, or (shutdown) switching off then asleep."""
        p = self.power
        if n <= 0:
            return []
        if not self.shutdown:
            return [(t, INF, n * p.est_idle_w)]
        return [(t, t + p.switch_off_s, n * p.switch_off_w), (t + p.switch_off_s, INF, n * p.sleep_w)]

    def _run(self, n: int, start: float, end: float) -> list[Segment]:
        """``n`` hosts computing during ``[start, end)`` then free."""
        return [(start, end, n * self.power.est_comp_w)] + self._tail(n, end)

    def _free_baseline(self, alloc: ProcSet, view: ClusterView) -> list[Segment]:
        """What the plan counts for the free hosts ``alloc`` (to replace when a job takes them): those the power
        manager keeps idle until a time, then their tail, summed per time (ESC keeps every idle node, and one
        segment per host was most of its switch-off rule's budget check), and the others' tail from now
        (:meth:`_baseline`). The kept hosts are counted here host by host, not through the plan's
        :class:`~.plan.KeptIndex` as :meth:`can_start` counts them: tests/budget_oracle.py checks one against the
        other."""
        kept: Mapping[int, float] = self.power_manager.kept_hosts(view) if self.power_manager is not None else {}
        counts: dict[float, int] = {}
        if kept:
            for lo, hi in intervals(alloc):
                for h in range(lo, hi + 1):
                    until = kept.get(h)
                    if until is not None:
                        counts[until] = counts.get(until, 0) + 1
        return self._baseline(size(alloc), view.now_s, [(until, counts[until]) for until in sorted(counts)])

    def _baseline(self, n: int, now: float, kept: Sequence[tuple[float, int]]) -> list[Segment]:
        """What the plan counts from ``now`` for ``n`` free hosts of which ``count`` are kept until ``until`` for
        each ``(until, count)`` of ``kept``: those idle until then and their tail (:meth:`_tail`) after, one
        segment per time, then the others' tail from now."""
        idle_w = self.power.est_idle_w
        segs: list[Segment] = []
        plain = n
        for until, count in kept:
            segs.append((now, until, count * idle_w))
            segs += self._tail(count, until)
            plain -= count
        return segs + self._tail(plain, now)

    def _switching_segments(self, view: ClusterView, kept: Mapping[int, float]) -> list[Segment]:
        """The estimated power of the hosts in transition: the power manager's switches (a boot, then idle
        while kept for a job, then the tail; a switch-off, then asleep), the rest the larger of both.

        The switches' segments start at ``-inf`` instead of now (the plan is read from ``t0 ≥ now`` on, where
        both are the same) and are kept while the switches (:meth:`~wattsched.schedulers.power.PowerManager.
        switching_parts`, the same list while they stay), the kept hosts (the mapping and its ``kept_version``)
        and the hosts switching stay: across passes too (issue 15)."""
        p = self.power
        pm = self.power_manager
        parts = pm.switching_parts(view) if pm is not None else []
        objects = (parts, kept, view.switching)
        version = pm.kept_version if pm is not None else 0
        cached = self._switching_cache
        if cached is not None and cached[1] == version and all(map(operator.is_, cached[0], objects)):
            segs, rest = cached[2], cached[3]
        else:
            segs = []
            counted = ProcSet()
            for _, t, hs in parts:
                counted = plus(counted, hs)
                n = size(hs)
                end = t.end_s
                if t.booting:
                    until = max([kept.get(h, end) for h in hs] + [end])
                    segs += [(-INF, end, n * p.switch_on_w), (end, until, n * p.est_idle_w)] + self._tail(n, until)
                else:
                    segs += [(-INF, end, n * p.switch_off_w), (end, INF, n * p.sleep_w)]
            rest = size(minus(view.switching, counted))
            self._switching_cache = (objects, version, segs, rest)
        if not rest:
            return list(segs)
        now = view.now_s
        return segs + [(now, now + p.switch_on_s, rest * p.switch_w)] + self._tail(rest, now + p.switch_on_s)

    _switching_cache: tuple[tuple, int, list[Segment], int] | None = None

    def head_energy_j(self, assignment: Assignment, start_s: float) -> float:
        """``J``: the head's energy above its hosts' baseline over its walltime inside the window."""
        p = self.power
        n = size(assignment.hosts)
        end = assignment.end_s(start_s)
        dur = max(0.0, min(end, self.te) - max(start_s, self.ts))
        base = p.sleep_w if self.shutdown else p.est_idle_w
        return n * (p.est_comp_w - base) * dur

    def _t0(self, now: float) -> tuple[float, float]:
        """Where the balance starts: ``(max(now, ts), Cea there)`` (0 at ts when now is before it)."""
        return (now, self.cea_j) if now >= self.ts else (self.ts, 0.0)

    def balance_ok(self, extra: Sequence[Segment], view: ClusterView, *, reserved: Sequence[Segment] = (),
                   cut: tuple[float, float] | None = None) -> bool:
        """Rule 2: the balance with ``extra`` (and the head's reservation) stays ≥ 0 from now (or ts) to te.

        Args:
            reserved: energyBud's reservation, the head's run from ``q``.
            cut: reducePC's ``(J / (q − now), q)``: the rate is lowered by the first until ``q``.
        """
        return self._future(view, reserved, cut).admits(extra, None, -INF)

    # ------------------------------------------------------------ the plan as arrays (fast path)
    def _running_segments(self, view: ClusterView) -> tuple[Any, Any, Any, list]:
        """The plan's segments of the running jobs (:meth:`_run` from now) as three lists ``a, b, w`` (and a slot
        for their arrays, :meth:`_running_arrays`), or as the arrays themselves when they are too many for a plan
        built in Python (:meth:`_running_segment_arrays`); cached while the running jobs do not change. The
        computing segment starts at ``-inf`` instead of now: the plan is only read from ``t0 ≥ now`` on, where both
        are the same."""
        key = (id(view.running), view.running_version, len(view.running))
        cached = self._running_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        p = self.power
        if (3 if self.shutdown else 2) * len(view.running) > PY_MAX_SEGMENTS:  # a plan the Plan builds with numpy
            arrays = self._running_segment_arrays(view)
            self._running_cache = (key, arrays)
            return arrays
        sizes = list(map(_NB_HOSTS, view.running.values()))
        end = [job.expected_end_s for job in view.running.values()]
        comp = [n * p.est_comp_w for n in sizes]
        if not self.shutdown:
            a = [-INF] * len(end) + end
            b = end + [INF] * len(end)
            w = comp + [n * p.est_idle_w for n in sizes]
        else:
            off = [t + p.switch_off_s for t in end]
            a = [-INF] * len(end) + end + off
            b = end + off + [INF] * len(end)
            w = comp + [n * p.switch_off_w for n in sizes] + [n * p.sleep_w for n in sizes]
        segments: tuple[list[float], list[float], list[float], list] = (a, b, w, [])
        self._running_cache = (key, segments)
        return segments

    def _running_segment_arrays(self, view: ClusterView) -> tuple[Any, Any, Any, list]:
        """:meth:`_running_segments` of many running jobs, made as arrays directly (the same floats in the same order:
        a job's size times a power is the same product in numpy; a Python list of each, converted afterwards, was a
        tenth of energyBud's time with 11,500 small jobs running, the nineteenth session)."""
        p = self.power
        running = view.running.values()
        n = len(view.running)
        sizes = np.fromiter(map(_NB_HOSTS, running), dtype=float, count=n)
        end = np.fromiter(map(_EXPECTED_END, running), dtype=float, count=n)
        below, above = np.full(n, -INF), np.full(n, INF)
        if not self.shutdown:
            a, b = np.concatenate((below, end)), np.concatenate((end, above))
            w = np.concatenate((sizes * p.est_comp_w, sizes * p.est_idle_w))
        else:
            off = end + p.switch_off_s
            a, b = np.concatenate((below, end, off)), np.concatenate((end, off, above))
            w = np.concatenate((sizes * p.est_comp_w, sizes * p.switch_off_w, sizes * p.sleep_w))
        return a, b, w, [a, b, w]

    def _running_arrays(self, view: ClusterView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_running_segments` as arrays (the same floats), made once per state of the running jobs."""
        a, b, w, arrays = self._running_segments(view)
        if not arrays:
            arrays += (np.array(a, dtype=float), np.array(b, dtype=float), np.array(w, dtype=float))
        return arrays[0], arrays[1], arrays[2]

    def _state_key(self, view: ClusterView, reserved: Sequence[Segment], cut: tuple[float, float] | None) -> tuple:
        """What the plan depends on, beyond the jobs started in the pass: the view's objects (by identity), the
        clock, Cea, the running jobs, the head's reservation or reducePC's cut, the power manager's plan."""
        pm = self.power_manager
        return ((view, view.running, view.free, view.off, view.switching),
                (view.now_s, self.cea_j, view.running_version, list(reserved), cut,
                 pm.plan_version if pm is not None else None))

    def _future(self, view: ClusterView, reserved: Sequence[Segment], cut: tuple[float, float] | None) -> Plan:
        """The plan (``plan`` of tests/budget_oracle.py, with ``reserved`` and ``cut`` in the balance) as a
        :class:`~.plan.Plan`, rebuilt only when the view, Cea, the jobs started in the pass, the power
        manager, the head's reservation or the cut changed (the plan's own segments, :meth:`_plan_segments`,
        only for the first four)."""
        key = self._state_key(view, reserved, cut)
        started = (len(self._started), len(self._prepared))
        fut = self._fut
        if fut is not None and same_state(fut.key, key):
            if fut.started == started:
                return fut
        else:  # not only more jobs started in the pass: the refusals no longer hold
            self._refused = {}
        t0, cea = self._t0(view.now_s)
        kept, arrays = self._plan_segments(view, (key[0], key[1][:3] + key[1][5:]), started)
        other = list(reserved)
        if cut is not None:
            other.append((t0, cut[1], cut[0]))
        fut = Plan(key, t0, self.te, self.rate_w, 1e-9 * max(1.0, self.B), cea, arrays, other, kept)
        fut.started = started
        self._fut = fut
        return fut

    def _plan_segments(self, view: ClusterView, key: tuple, started: tuple[int, int]) -> tuple[KeptIndex, PlanSegments]:
        """The power manager's kept hosts and the plan's segments ``(a, b, w)`` (arrays, or lists for a plan that
        :class:`~.plan.Plan` builds in plain Python, :data:`~.plan.PY_MAX_SEGMENTS`): the running jobs,
        the jobs started and prepared in the pass, the free hosts, the hosts asleep and switching. Cached
        for ``key`` (:meth:`_state_key` without the reservation and the cut: the head's reservation is made
        and released several times in a pass, the rest stays) and ``started``."""
        cached = self._plan_cache
        if cached is not None and cached[1] == started and same_state(cached[0], key):
            return cached[2], cached[3]
        now = view.now_s
        p = self.power
        segs: list[Segment] = []
        used = 0
        for n, end in self._started:
            segs += self._run(n, now, end)
            used += n
        segs += self._prepared
        kept, index, nb_kept, kept_arrays = self._kept_arrays(view)
        after = self._tail(size(view.free) - used - nb_kept, now)
        if view.off:
            after.append((now, INF, size(view.off) * p.sleep_w))
        if view.switching:
            after += self._switching_segments(view, kept)
        ra, rb, rw, _ = self._running_segments(view)
        plan: PlanSegments
        if len(ra) + len(segs) + len(after) + (len(kept_arrays[0]) if nb_kept else 0) <= PY_MAX_SEGMENTS:
            # a plan the Plan builds in plain Python (most passes at 1,152 hosts): lists, no numpy call; the same
            # segments in the same order as the arrays below
            a, b, w = list(ra), list(rb), list(rw)
            for x, y, v in segs:
                a.append(x)
                b.append(y)
                w.append(v)
            if nb_kept:
                a += kept_arrays[0].tolist()
                b += kept_arrays[1].tolist()
                w += kept_arrays[2].tolist()
            for x, y, v in after:
                a.append(x)
                b.append(y)
                w.append(v)
            plan = (a, b, w)
        else:
            parts = [self._running_arrays(view)]
            if segs:
                parts.append(_segment_arrays(segs))
            if nb_kept:
                parts.append(kept_arrays)
            if after:
                parts.append(_segment_arrays(after))
            a_np, b_np, w_np = parts[0] if len(parts) == 1 else (np.concatenate(x) for x in zip(*parts))
            plan = (a_np, b_np, w_np)
        self._plan_cache = (key, started, index, plan)
        return index, plan

    def _kept_arrays(self, view: ClusterView
                     ) -> tuple[Mapping[int, float], KeptIndex, int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The power manager's kept hosts (and their :class:`~.plan.KeptIndex`, which every plan shares while they
        stay), how many of them are free, and the plan's segments of those: idle until their time, then the tail
        (:meth:`_tail`), summed per time (count × power, by increasing time: ESC keeps every idle node, 634 on 7
        distinct times on average on the week of issue 15, and three segments per host made most plans too long to be
        built in Python). Built with numpy (a Python loop over the hosts per plan was most of a pass) and cached
        while the mapping (by identity), the power manager's
        :attr:`~wattsched.schedulers.power.PowerManager.kept_version` (bumped whenever the mapping changes in place)
        and the free hosts (a set the core and the managers replace, never change in place) stay: across passes too,
        as the idle segment starts at ``-inf`` instead of now (the plan is read from ``t0 ≥ now`` on, where both are
        the same, as for the running jobs: :meth:`_running_arrays`; issue 15: the arrays and the index were built
        again at almost every plan of energy-bud with shutdown)."""
        pm = self.power_manager
        kept: Mapping[int, float] = pm.kept_hosts(view) if pm is not None else {}
        if not kept:  # (every pass without a power manager that keeps hosts: no arrays to build)
            if self._no_kept is None:
                empty = np.zeros(0)
                self._no_kept = ({}, KeptIndex({}), 0, (empty, empty, empty))
            return self._no_kept
        assert pm is not None
        version, free = pm.kept_version, view.free
        cached = self._kept_cache
        if cached is not None and cached[0] is kept and cached[1] == version:
            if cached[2] is free:
                return cached[5]
            index, ids, times, codes = cached[3]
        else:
            ids = np.fromiter(kept.keys(), dtype=np.int64, count=len(kept))
            # the distinct times, increasing, and each host's among them (few: hosts kept for one job, or idle since
            # one pass)
            times, codes = unique_inverse(np.fromiter(kept.values(), dtype=float, count=len(kept)), True)
            index = KeptIndex.from_codes(ids, times, codes)
            cached = None
        mask = contains_many(free, ids)  # the free ones, in the mapping's order
        if cached is not None and np.array_equal(mask, cached[4]):
            out = cached[5]
        else:
            counts = np.bincount(codes[mask], minlength=len(times))  # the free kept hosts per time
            present = counts > 0
            untils, counts = times[present], counts[present]
            k = int(counts.sum())
            p = self.power
            since = np.full(len(untils), -INF)
            inf = np.full(len(untils), INF)
            starts: tuple[np.ndarray, ...]
            ends: tuple[np.ndarray, ...]
            if self.shutdown:  # (-inf, until, idle), (until, until + off, switch-off), (until + off, INF, sleep)
                off = untils + p.switch_off_s
                starts, ends = (since, untils, off), (untils, off, inf)
                powers = [p.est_idle_w, p.switch_off_w, p.sleep_w]
            else:  # (-inf, until, idle), (until, INF, idle)
                starts, ends, powers = (since, untils), (untils, inf), [p.est_idle_w, p.est_idle_w]
            a, b = np.stack(starts, axis=1).reshape(-1), np.stack(ends, axis=1).reshape(-1)
            w = (counts[:, None] * np.array(powers, dtype=float)).reshape(-1)  # count × power, as _baseline sums
            out = (kept, index, k, (a, b, w))
        self._kept_cache = (kept, version, free, (index, ids, times, codes), mask, out)
        return out

    def _job_extra(self, n: int, now: float, end: float, kept: Sequence[tuple[float, int]]) -> list[Segment]:
        """What starting a job now adds to the plan (``job_segments`` of tests/budget_oracle.py) for ``n``
        hosts of which ``count`` are kept until ``until`` for each ``(until, count)`` of ``kept``: its run, minus
        its hosts' baseline (:meth:`_baseline`)."""
        return self._run(n, now, end) + [(a, b, -w) for a, b, w in self._baseline(n, now, kept)]

    def _filters_apply(self, now: float) -> bool:
        """Whether the pass-wide tests (:meth:`may_start`, :meth:`may_prepare`, :meth:`refuses_all`) can tell: a
        budget, ``now`` inside the window (from its start: the plan's ``t0`` is now), refusals monotone."""
        return not self.unlimited and self.ts <= now < self.te - TIME_EPS_S and self._monotone()

    def _monotone(self) -> bool:
        """Whether a job's extra power only grows with its hosts and walltime (so that a refusal in a pass
        refuses every larger and longer job without kept hosts for the rest of the pass)."""
        p = self.power
        if self.shutdown:
            return p.est_comp_w >= p.switch_off_w >= p.sleep_w >= 0.0
        return p.est_comp_w >= p.est_idle_w >= 0.0

    # ------------------------------------------------------------ the admission hooks
    def begin_pass(self, queue: Sequence[QueuedJob], view: ClusterView) -> None:
        self._started = []
        self._prepared = []
        self._reserved = []
        self._cut = None
        self._fut = None
        self._refused = {}
        self._clearly_refused = None

    def end_pass(self, view: ClusterView) -> None:
        """The pass's starts are applied to ``view`` (they are running jobs now, no longer counted apart)."""
        self.begin_pass((), view)

    def can_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> bool:
        """Algorithm 2, "enough energy is available to start job now" (plus reducePC's lowered rate)."""
        now = view.now_s
        end = assignment.end_s(now)
        if self.exempt(now, end):
            return True
        fut = self._future(view, self._reserved, self._cut)
        alloc = assignment.hosts
        itvs = intervals(alloc)
        if len(itvs) == 1:
            lo, hi = itvs[0]
            n = hi - lo + 1
        else:
            n = size(alloc)
        kept = fut.kept.within(alloc)
        if not self._refused_at(fut, n, end, now, kept):
            return True
        if not (self._reserved or self._cut or kept or fut.kept or self.shutdown) and self._filters_apply(now):
            extra_w = n * (self.power.est_comp_w - self.power.est_idle_w)
            if not fut.admits(self._job_extra(n, now, end, ()), None, -INF, fut.rounding_margin_j(extra_w)):
                self._clearly_refused = (fut, n, end)
        return False

    def _refused_at(self, fut: Plan, n: int, end: float, now: float, kept: tuple[tuple[float, int], ...] = ()) -> bool:
        """Whether a job of ``n`` hosts, of which ``count`` are kept until ``until`` for each ``(until, count)`` of
        ``kept``, starting now and ending at ``end``, is refused: dominated by a refusal of the pass with the same
        kept hosts, else tested on the plan ``fut`` (a refusal is then recorded when refusals are monotone)."""
        refused = self._refused.get(kept)
        if refused is not None and refused.dominates(n, end):
            return True
        if self._admits(fut, self._job_extra(n, now, end, kept), end):
            return False
        if self._monotone():
            self._refused.setdefault(kept, Staircase()).add(n, end)
        return True

    def refuses(self, job: QueuedJob, view: ClusterView) -> bool:
        """Before placement: a job with at most as many hosts and an end no later was refused in this state
        of the pass (:meth:`refuses_from`); the job's end is at least ``now + walltime`` (a lower pstate
        only stretches it)."""
        walltime = job.walltime_s
        return walltime is not None and self.refuses_from(job.res, view.now_s + walltime, view)

    def refuses_from(self, res: int, end_s: float, view: ClusterView) -> bool:
        """Every job of at least ``res`` hosts ending no sooner than ``end_s`` is refused now: a refusal of
        this state of the pass dominates ``(res, end_s)``, and no host is kept (so every allocation has the
        refusals' key: no kept hosts). Exact, as the refusals are (:meth:`_monotone`). Refusals are dropped
        when the state changes: the plan is rebuilt for another state (:meth:`_future`), the head's
        reservation is released, a pass begins or ends."""
        refused = self._refused.get(())
        fut = self._fut
        if refused is None or fut is None or fut.kept:
            return False
        now = view.now_s
        if not (now < self.te - TIME_EPS_S and end_s > self.ts):  # exempt
            return False
        return refused.dominates(res, end_s)

    def may_start(self, res: np.ndarray, walltime_s: np.ndarray, view: ClusterView,
                  groups: WallGroups | None = None) -> np.ndarray | None:
        """Which of these jobs :meth:`can_start` may still admit in this backfilling phase (False: certainly
        refused; :meth:`~.plan.Plan.may_admit`). Only inside the window, from its start (``t0 = now``), when
        refusals are monotone (:meth:`_monotone`); None otherwise. The bound per host of a job starting now:

        - **No host kept**, or hosts idle for ever without shutdown (a kept host's baseline is then a free
          host's): every allocation adds the same, ``P̃comp − P̃idle`` until its end (shutdown:
          ``P̃comp − off`` for the switch-off time, then ``P̃comp − sleep``, then the switch-off of its hosts
          after its end), so its extra energy at ``t`` is ``slope · (t − now) + offset`` while it computes
          and ``slope · (end − now)`` once its hosts are back to their baseline.
        - **Hosts kept** by the power manager (with shutdown; ESC keeps every idle node until its idle
          deadline): a kept host's baseline is idle until its ``until``, then switching off, then asleep, so
          the job may cost less there than on a free host, and after its end even save energy (its host is
          asleep while the baseline's would still be idle). Whatever the allocation, while it computes its
          extra power is at least ``P̃comp − P_hi`` (``P_hi``: the highest of idle, switch-off and asleep),
          and once every tail is over (from ``max(end, H)`` + the switch-off time, ``H``: the latest kept
          ``until``) its extra energy is at least ``(P̃comp − P_hi) · (end − now) − max(0, P̃idle − sleep) ·
          max(0, H − end)``, and in between at least its energy at its end less ``P_hi − min(off, sleep)`` per
          second. A looser filter, still exact: only certain refusals are marked.

        First, with no host kept, the smallest of these jobs (the fewest hosts, the shortest walltime: maybe no
        such job) is asked as :meth:`can_start` would ask it (:meth:`_refuses_smallest`): when it is refused,
        every one of them is (:meth:`_monotone`), and the bounds are not computed (issue 15: on the week of
        1,152 hosts, once EASY asked :meth:`refuses_all`, it still spares the bounds of 800 of the 8,400 filters
        inside the window under energyBud, and of 800 of the 1,900 under reducePC: after a start, or when no
        waiting job has one host)."""
        now = view.now_s
        if not self._filters_apply(now):
            return None
        fut = self._future(view, self._reserved, self._cut)
        if not fut.kept and len(res) and self._refuses_smallest(fut, int(res.min()), now + float(walltime_s.min()), now):
            return np.zeros(len(res), dtype=bool)
        p = self.power
        saving = None
        if self.shutdown and fut.kept:
            high_w = max(p.est_idle_w, p.switch_off_w, p.sleep_w)
            slope = p.est_comp_w - high_w
            a, offset, tail_s, total_offset = now, 0.0, p.switch_off_s, 0.0
            saving = (max(0.0, p.est_idle_w - p.sleep_w), max(now, fut.kept.untils[-1]),
                      high_w - min(p.switch_off_w, p.sleep_w))
        elif self.shutdown:
            slope = p.est_comp_w - p.sleep_w
            a, offset, tail_s = now + p.switch_off_s, -(p.switch_off_w - p.sleep_w) * p.switch_off_s, p.switch_off_s
            total_offset = 0.0
        else:
            slope = p.est_comp_w - p.est_idle_w
            a, offset, tail_s, total_offset = now, 0.0, 0.0, 0.0
        return fut.may_admit(res, now + walltime_s, a=a, origin=now, slope=slope, offset=offset, tail_s=tail_s,
                             total_offset=total_offset, saving=saving, cap=self._cap(), groups=_ends(now, groups))

    def refuses_all(self, end_s: float, view: ClusterView) -> bool:
        """Inside the window, with monotone refusals and no host kept: whether a job of one host ending at ``end_s``
        is refused (:meth:`_refuses_smallest`), and so every job ending no sooner. On the week of issue 15 (1,152
        hosts), 9,600 of the 14,700 backfilling phases inside the window under energyBud and 11,800 of the 12,600
        under reducePC, where EASY then neither filters nor scans its queue (about 1,500 jobs under energyBud)."""
        now = view.now_s
        if not self._filters_apply(now):
            return False
        pm = self.power_manager
        if pm is not None and pm.kept_hosts(view):  # (asked before the plan: with shutdown most passes keep hosts)
            return False
        if self._head_refused_now(end_s, view):
            return True
        return self._refuses_smallest(self._future(view, self._reserved, self._cut), 1, end_s, now)

    def _head_refused_now(self, end_s: float, view: ClusterView) -> bool:
        """Whether the head, whose energy is now reserved from now on (its hosts are free: EASY reserved it now), was
        refused by :meth:`can_start` in this state of the pass by more than the rounding (:attr:`_clearly_refused`):
        then every job ending at ``end_s`` or later is refused, without the plan with the reservation (issue 15:
        7,000 passes of energyBud's week at 1,152 hosts built it for that). Without shutdown or kept hosts the
        reservation, ``n · (P̃comp − P̃idle)`` from now to its end, is the head's extra power as :meth:`can_start`
        tested it, so the balance with it is the balance the head left, below zero somewhere; another job's
        energy (never negative: :meth:`_monotone`) only lowers it there. Both plans' balances are sums over the
        same segments, so they differ by their rounding, which the margin of the head's test bounds."""
        refused = self._clearly_refused
        if refused is None or not end_s < INF or self._cut is not None or refused[0] is not self._fut:
            return False
        fut, n, end = refused
        now = view.now_s
        p = self.power
        if self._reserved != [(now, end, n * (p.est_comp_w - p.est_idle_w))] or fut.started != (len(self._started), 0):
            return False
        return same_state(fut.key, self._state_key(view, [], None))

    def _refuses_smallest(self, fut: Plan, n: int, end: float, now: float) -> bool:
        """Whether a job of ``n`` hosts, none kept, starting now and ending at ``end`` is refused (:meth:`can_start`'s
        test and refusal record, :meth:`_refused_at`, inside the window with monotone refusals): then so is every job
        at least as wide and as long, whatever its hosts (:meth:`refuses_from`)."""
        return end < INF and self._refused_at(fut, n, end, now)

    def may_prepare(self, res: np.ndarray, walltime_s: np.ndarray, start_s: float, view: ClusterView,
                    groups: WallGroups | None = None, *, boots_all: bool = False) -> np.ndarray | None:
        """Which of these jobs :meth:`can_prepare` may still admit, for a start at ``start_s`` on hosts free
        or asleep (none kept): booting ``k`` of its ``n`` hosts and keeping the other ``n − k`` idle until
        ``start_s`` costs at least ``n · min(boot, keep)`` joules once both are over (``a``), then the job
        adds ``n · (P̃comp − sleep)`` until its end (:meth:`~.plan.Plan.may_admit`). Inside the window, with
        shutdown, a start no sooner than a boot and monotone refusals only; None otherwise.

        With ``boots_all`` (no free host is left to keep: every host of a job is booted) under reducePC's
        lowered rate, the boots' own power counts too: ``n · (P_on − sleep)`` from now until the boot ends,
        above the plan's highest power then, must stay under the cap (:meth:`can_prepare` checks it first:
        on the 20,000-job week with reduce-pc and shutdown, 290,000 of its 302,000 refusals were there)."""
        now = view.now_s
        p = self.power
        d = start_s - now
        if not self.shutdown or d < p.switch_on_s or not self._filters_apply(now):
            return None
        fut = self._future(view, self._reserved, self._cut)
        boot = p.switch_on_w * p.switch_on_s + p.est_idle_w * (d - p.switch_on_s) - p.sleep_w * d
        keep = p.est_idle_w * d - p.switch_off_w * p.switch_off_s - p.sleep_w * (d - p.switch_off_s)
        pre = min(boot, keep)
        cap = self._cap()
        mask = fut.may_admit(res, start_s + walltime_s, a=max(start_s, now + p.switch_off_s), origin=start_s,
                             slope=p.est_comp_w - p.sleep_w, offset=pre, tail_s=0.0, total_offset=pre,
                             cap=cap, groups=_ends(start_s, groups))
        if cap is None:
            return mask
        limit, until = cap
        boot_w = p.switch_on_w - p.sleep_w
        if boots_all and boot_w > 0.0:
            mask = mask & (res <= self._prepare_room(fut, boot_w, fut.t0, min(now + p.switch_on_s, until, self.te), limit))
        # whatever hosts it gets, from the end of a switch-off on each host adds at least min(P_on, P̃idle) − sleep until
        # the job starts (booted: P_on, then idle; kept free: idle, where its baseline is asleep): under reducePC's cap
        # (on the week with shutdown, 73,800 of the 93,400 boot checks were refused by the cap, 70,400 of them for a job
        # that boots all its hosts while some free host was left to keep)
        prepare_w = min(p.switch_on_w, p.est_idle_w) - p.sleep_w
        if prepare_w > 0.0:
            mask = mask & (res <= self._prepare_room(fut, prepare_w, max(fut.t0, now + p.switch_off_s),
                                                     min(start_s, until, self.te), limit))
        return mask

    @staticmethod
    def _prepare_room(fut: Plan, per_host_w: float, from_s: float, until_s: float, limit: float) -> float:
        """How many hosts, each adding ``per_host_w`` to the plan's power from ``from_s`` to ``until_s``, stay under the
        cap ``limit`` (:meth:`~.plan.Plan.admits` adds ``1e-9``): ``inf`` when the span is empty. With the margin of
        :meth:`~.plan.Plan.may_admit`'s cap bound, never below what :meth:`can_prepare`'s own sums would accept."""
        if not until_s > from_s:
            return INF
        peak = fut.peak_power_w(until_s, from_s)
        return (limit + 1e-9 - peak + 1e-12 * (abs(limit) + abs(peak))) / (per_host_w * (1.0 - 1e-12))

    def keeps_refusals(self, since_s: float, now_s: float) -> bool:
        """Both times before the window (or both from its end on, where every job is exempt; or no budget): with
        nothing else changed, the plan is the same (it starts at ``ts`` with Cea = 0 before the window) and a job
        starting later only uses more of the window's energy by any time in it (its run covers ``[ts, start +
        walltime)`` from ``ts`` on), and under reducePC's cut more of ``[ts, q)``: a refusal stays a refusal.
        (Not inside the window: a job starting later consumes its energy later, which the balance may then
        allow.)"""
        return self.unlimited or now_s < self.ts - TIME_EPS_S or since_s >= self.te - TIME_EPS_S

    def _cap(self) -> tuple[float, float] | None:
        """reducePC's power cap while the head's energy is put aside: ``(R − J / (q − now), q)``."""
        cut = self._cut
        return None if cut is None else (self.rate_w - cut[0], cut[1])

    def on_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> None:
        if not self.unlimited:
            self._started.append((size(assignment.hosts), assignment.end_s(view.now_s)))

    def reserve_head(self, job: QueuedJob, start_s: float, assignment: Assignment, view: ClusterView) -> None:
        """Algorithm 2, "Reserve energy in the future for firstJob"."""
        if self.unlimited:
            return
        t0, _ = self._t0(view.now_s)
        if self.mode == "reduce-pc" and start_s > t0:
            J = self.head_energy_j(assignment, start_s)
            self._cut = (J / (start_s - t0), start_s)
        else:
            p = self.power
            base = p.sleep_w if self.shutdown else p.est_idle_w
            self._reserved = [(start_s, assignment.end_s(start_s), size(assignment.hosts) * (p.est_comp_w - base))]

    def release_head(self) -> None:
        """Algorithm 2, "Remove the energy reservation of firstJob" (the pass's refusals no longer hold)."""
        self._reserved = []
        self._cut = None
        self._refused = {}

    def can_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                    view: ClusterView) -> bool:
        """Opportunistic shutdown asks before booting ``boot`` and keeping the free hosts ``keep`` idle for
        ``job``, which would then start at ``start_s`` on its hosts: boots count in the budget. For the head
        job it asks outside the backfilling phase; for a later job, while the head's reservation is made
        (:meth:`reserve_head`), so that the answer is the one :meth:`can_start` will give at ``start_s``."""
        if self.unlimited:
            return True
        now = view.now_s
        p = self.power
        end = assignment.end_s(start_s)
        if not self.in_window(now, max(end, now + p.switch_on_s)):
            return True
        fut = self._future(view, self._reserved, self._cut)
        return self._admits(fut, self._prepare_segments(assignment, boot, keep, start_s, view), end)

    def _admits(self, fut: Plan, extra: Sequence[Segment], end: float) -> bool:
        """Rule 2 with ``extra`` added to the plan, and under reducePC's lowered rate also the powercap
        ``R − J / (q − now)`` until ``min(q, end, te)``."""
        cut = self._cut
        if cut is not None:
            return fut.admits(extra, self.rate_w - cut[0], min(cut[1], end, self.te))
        return fut.admits(extra, None, -INF)

    def on_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                   view: ClusterView) -> None:
        """The power manager booted ``boot`` / kept ``keep`` for ``job``: its run from ``start_s`` counts in
        the rest of the pass (the boots and kept hosts themselves are in the power manager's plan)."""
        if self.unlimited:
            return
        n, end = size(assignment.hosts), assignment.end_s(start_s)
        self._prepared += self._run(n, start_s, end) + [(a, b, -w) for a, b, w in self._tail(n, start_s)]

    def _prepare_segments(self, assignment: Assignment, boot: ProcSet, keep: ProcSet, start_s: float,
                          view: ClusterView) -> list[Segment]:
        """What booting ``boot``, keeping ``keep`` and running a job with ``assignment`` from ``start_s``
        add to the plan."""
        now = view.now_s
        p = self.power
        n = size(assignment.hosts)
        end = assignment.end_s(start_s)
        k = len(boot)
        extra: list[Segment] = []
        if k:  # asleep in the plan until start_s; booting, then idle until the job starts
            extra += [(now, now + p.switch_on_s, k * p.switch_on_w), (now + p.switch_on_s, start_s, k * p.est_idle_w),
                      (now, start_s, -k * p.sleep_w)]
        if keep:  # idle until the job starts instead of switching off now; asleep baseline after
            extra += [(now, start_s, len(keep) * p.est_idle_w), (start_s, INF, len(keep) * p.sleep_w)]
            extra += [(a, b, -w) for a, b, w in self._free_baseline(keep, view)]
        # the job's hosts computing from start_s above the asleep baseline, then switching off again
        extra += [(start_s, end, n * (p.est_comp_w - p.sleep_w)),
                  (end, end + p.switch_off_s, n * (p.switch_off_w - p.sleep_w))]
        return extra


def _segment_arrays(segs: Sequence[Segment]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments ``(a, b, w)`` as three float arrays, in their order."""
    a, b, w = (np.array(x, dtype=float) for x in zip(*segs))
    return a, b, w


def _ends(start_s: float, groups: WallGroups | None) -> WallGroups | None:
    """``groups`` with the distinct walltimes turned into the ends of a start at ``start_s`` (the same
    addition as for each job)."""
    return None if groups is None else (start_s + groups[0], groups[1])


@register
class EnergyBud(EnergyBudget):
    """energyBud (energy-budget paper §IV-B, Algorithm 2): the head job's energy is reserved in the future."""

    name = "energy-bud"
    description = "energy budget, energyBud: the head job's energy is reserved while EASY backfills"
    reference = "energy-budget paper §IV-B, Algorithm 2"
    mode = "energy-bud"


@register
class ReducePC(EnergyBudget):
    """reducePC (energy-budget paper §IV-D): the head job's energy lowers the power rate until it starts."""

    name = "reduce-pc"
    description = "energy budget, reducePC: the head job's energy lowers the power rate until it starts"
    reference = "energy-budget paper §IV-D"
    mode = "reduce-pc"

