"""Energy-budget admission constraints: energyBud, reducePC and the powercap baseline (third policy slot).

Energy-budget paper (Glesser et al., "energy-budget-backfilling"), §IV and §V-C; DESIGN §5. During the
window ``[ts, te)`` the platform may consume at most ``B`` joules. Outside the window every constraint
here admits everything, so the schedule is plain EASY there.

**energyBud** (:class:`EnergyBudget`, ``mode="energy-bud"``; §IV-B, Algorithm 2):

- Rule 1: energy becomes available at ``R = B / (te − ts)`` J/s (:attr:`EnergyBudget.rate_w`).
- The counter ``Cea`` (:attr:`EnergyBudget.cea_j`) = energy made available since ``ts`` − energy consumed
  since ``ts``. At every call of the algorithm it is advanced by ``R·Δt`` minus the consumption since the
  previous call, *overestimated* by counting computing hosts at P̃comp, idle ones at P̃idle, and hosts
  asleep or switching at their platform wattage (§IV-C1, :meth:`EnergyBudget.advance`).
- Monitoring stage every ``monitoring_period_s`` (§IV-C1): a QUERY of the consumed energy, and on its
  ANSWER ``Cea ← R·(t − ts) − (E(t) − E(ts))``, the available energy minus the energy really consumed
  (:meth:`EnergyBudget.on_energy`); the algorithm also runs then (the pass after the ANSWER).
- Rule 2, no energy debt: a job starts only if the balance stays ≥ 0 at every instant from now to ``te``,
  counting the energy still to be released (``R`` J/s) and the estimated future consumption of the whole
  cluster: running jobs at P̃comp until start + walltime, the new job likewise, then their hosts idle
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

**reducePC** (``mode="reduce-pc"``, §IV-D): the head's energy is not reserved at ``q``; instead the number
of joules made available per second is lowered by ``J / (q − now)`` during ``[now, q)`` (so ``J`` is put
aside by ``q``): a backfilled job must keep the balance ≥ 0 with that lowered rate **and**, as under a
powercap, keep the estimated platform power ≤ ``R − J / (q − now)`` until ``q`` ("as if the powercap had
been reduced": the saved energy does not let it exceed the lowered rate). When ``q ≤ now`` (the head
waits for energy, not hosts) the reservation is made as in energyBud.

**powercap** (:class:`Powercap`, §V-C): EASY where a job whose run meets the window starts only if
``P̃platform = n_idle·P̃idle + n_comp·P̃comp`` (every non-computing host counted idle, as the paper does)
stays ≤ ``B / (te − ts)``; the head's reservation is at the first time the cap lets it run (at ``te`` when
it never can inside the window), as in the authors' scheduler.

With ``B = ∞`` nothing is checked and no call is made: the schedule is exactly EASY's.

**How it is computed** (energyBud / reducePC; the decisions are those of the straightforward version kept
as the test oracle ``tests/budget_oracle.py``, which rebuilds the whole plan as segments at every call).
Once per scheduling pass, :meth:`EnergyBudget._future` builds a :class:`_Future`: the plan's power as a
step function on sorted breakpoints ``t0 = max(now, ts) < … < te`` (numpy), the balance ``G`` at each
breakpoint, and the power counted by the balance (plan + energyBud's reservation or reducePC's lowered
rate). The running jobs' part of the plan is cached across passes while ``view.running_version`` does not
change; the ``_Future`` itself is rebuilt only when the view, Cea, the reservation / cut, the power
manager's ``version`` or the jobs started in the pass change. A candidate then only adds its
own few pieces (:meth:`EnergyBudget._job_extra`: computing hosts, minus their free / kept baseline), and
:meth:`_Future.admits` checks the balance at the candidate's breakpoints (bisect into ``G``) and at the
plan's (one vectorized expression), and reducePC's power cap piece by piece. Refusals are remembered for
the pass, by the allocation's kept hosts: a job with the same kept hosts, at least as many hosts and an
expected end at least as late is refused without evaluation. That shortcut is exact only when a job's extra
power grows pointwise with its hosts and walltime (P̃comp ≥ P̃idle ≥ 0, or with shutdown P̃comp ≥ switch-off
power ≥ sleep power ≥ 0; :meth:`EnergyBudget._monotone`), so it is used only then; jobs started later in
the pass only add power, so the refusals stay valid, and they are dropped whenever the ``_Future`` is
rebuilt for another state.

Wake-ups: CALL_ME_LATER at ``ts``, at every monitoring stage inside the window and at ``te`` (so that jobs
waiting for energy start at the end of the window), never once the work is done (NOTIFY
no_more_static_job_to_submit, empty queue, nothing running: DESIGN §3).

The energies of boots and shutdowns (:class:`PowerModel`) come from the platform's ``wattage_per_state``
and ``sleep_pstates`` when SIMULATION_BEGINS gives them, else from table I; durations from table I.
"""

from __future__ import annotations

import logging
import math
import operator
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.state import CallMeLater, ClusterView, Decision, QueryEnergy, QueuedJob
from wattsched.base.errors import OptionError
from wattsched.base.hostsets import contains, size

logger = logging.getLogger(__name__)

INF = math.inf
#: Batsim prints times with 6 decimals (B4): a REQUESTED_CALL for ``t`` may arrive at ``t − 5e-7``.
TIME_EPS_S = 1e-5

#: A piece of estimated power: ``watts`` during ``[t0, t1)``.
Segment = tuple[float, float, float]


# --------------------------------------------------------------------------- power model
def parse_wattage_per_state(text: str) -> list[tuple[float, float]]:
    """``"95.0:190.738, 9.75:9.75"`` → ``[(95.0, 190.738), (9.75, 9.75)]`` (idle, full) per pstate."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        idle, _, full = part.partition(":")
        out.append((float(idle), float(full or idle)))
    return out


@dataclass(frozen=True)
class PowerModel:
    """What the budget needs to know of a host's power (energy-budget paper table I, DESIGN §4).

    Attributes:
        est_idle_w, est_comp_w: the estimates P̃idle and P̃comp (options).
        sleep_w: power asleep; switch_off_w / switch_on_w: mean power of a shutdown / boot;
        switch_off_s / switch_on_s: their durations (table I: 6.1 s and 151.52 s).
        sleep_pstate: the sleep pstate; nb_pstates: how many pstates the platform declares (0: unknown).
    """

    est_idle_w: float = TAURUS.estimated_idle_w
    est_comp_w: float = TAURUS.estimated_comp_w
    sleep_w: float = TAURUS.pstates[TAURUS.sleep_pstate].idle_w
    switch_off_w: float = TAURUS.pstates[TAURUS.switch_off_pstate].full_w
    switch_on_w: float = TAURUS.pstates[TAURUS.switch_on_pstate].full_w
    switch_off_s: float = TAURUS.switch_off_s
    switch_on_s: float = TAURUS.switch_on_s
    sleep_pstate: int = TAURUS.sleep_pstate
    nb_pstates: int = 0

    @property
    def switch_w(self) -> float:
        """Power counted for a host in a transition whose direction is unknown (the larger one)."""
        return max(self.switch_on_w, self.switch_off_w)

    def with_platform(self, properties: Sequence[Mapping[str, Any]], sleep_pstate: int | None,
                      need_sleep: bool) -> "PowerModel":
        """This model with the real powers of the platform's first compute host, when given.

        Raises:
            OptionError: ``sleep_pstate`` (option) or the shutdown's pstates do not exist on the platform.
        """
        props = properties[0] if properties else {}
        wattage = props.get("wattage_per_state")
        sleeps = props.get("sleep_pstates")
        model = self
        states = parse_wattage_per_state(wattage) if wattage else []
        if states:
            model = replace(model, nb_pstates=len(states))
        declared: tuple[int, int, int] | None = None
        if sleeps:
            try:
                a, b, c = (int(x) for x in str(sleeps).split(":"))
                declared = (a, b, c)
            except ValueError:
                raise OptionError(f"platform property sleep_pstates {sleeps!r} is not 'sleep:off:on'") from None
        if sleep_pstate is None:
            sleep_pstate = declared[0] if declared else (self.sleep_pstate if not states else None)
        if need_sleep:
            if sleep_pstate is None:
                raise OptionError("option 'shutdown': the platform has no sleep_pstates (no pstate to switch hosts off)")
            if states and not 0 <= sleep_pstate < len(states):
                raise OptionError(f"option 'sleep_pstate' {sleep_pstate}: the platform has pstates 0-{len(states) - 1}")
            if declared is not None and sleep_pstate != declared[0]:
                raise OptionError(f"option 'sleep_pstate' {sleep_pstate}: the platform's sleep pstate is {declared[0]}")
            if states and declared is None:
                raise OptionError("option 'shutdown': the platform has no sleep_pstates (no pstate to switch hosts off)")
        if sleep_pstate is not None:
            model = replace(model, sleep_pstate=sleep_pstate)
        if states and declared is not None:
            for p in declared:
                if not 0 <= p < len(states):
                    raise OptionError(f"platform sleep_pstates {sleeps!r}: pstate {p} is not among pstates 0-{len(states) - 1}")
            model = replace(model, sleep_w=states[declared[0]][0], switch_off_w=states[declared[1]][1],
                            switch_on_w=states[declared[2]][1])
        return model


# --------------------------------------------------------------------------- balance arithmetic
def _extra_knots(segments: Sequence[Segment], t0: float, t1: float) -> tuple[float, dict[float, float]]:
    """``segments`` clipped to ``[t0, t1]`` as ``min_balance`` does (tests/budget_oracle.py): the summed
    power at ``t0`` and the power changes at the later breakpoints (``t0 < at < t1``)."""
    power = 0.0
    events: dict[float, float] = {}
    for a, b, w in segments:
        if w == 0.0:
            continue
        if a < t0:
            a = t0
        if b > t1:
            b = t1
        if b <= a:
            continue
        if a <= t0:
            power += w
        else:
            events[a] = events.get(a, 0.0) + w
        if b < t1:
            events[b] = events.get(b, 0.0) - w
    return power, events


def _same(a: tuple, b: tuple) -> bool:
    """Whether two :class:`_Future` keys are the same state: objects by identity, then values."""
    return all(map(operator.is_, a[0], b[0])) and a[1] == b[1]


class _Future:
    """The estimated future of the cluster during one scheduling pass (the plan, DESIGN §5), as arrays.

    Breakpoints ``T[0] = t0 < T[1] < … < T[-1] = te``; on ``[T[k], T[k+1])`` the plan's power is ``plan[k]``
    and the power counted by the balance (plan + the head's reservation or reducePC's lowered rate) is
    ``bal[k]``; ``G[k]`` is the balance at ``T[k]`` (piecewise linear in between). A candidate job then only
    adds its own few pieces (:meth:`EnergyBudget._admits`): its minimum balance is checked at its own
    breakpoints (bisect) and at the plan's (one vectorized expression), its peak power with one ``max``
    per piece: the same quantities as ``min_balance`` and ``max_power`` of tests/budget_oracle.py over the
    whole plan.
    """

    __slots__ = ("key", "started", "t0", "te", "rate", "tol", "T", "G", "bal", "plan", "T_np", "G_np", "kept_groups")

    def __init__(self, key: tuple, t0: float, te: float, rate: float, tol: float, cea: float,
                 plan: tuple[np.ndarray, np.ndarray, np.ndarray], other: Sequence[Segment],
                 kept: Mapping[int, float]) -> None:
        self.key = key
        self.t0, self.te, self.rate, self.tol = t0, te, rate, tol
        groups: dict[float, list[int]] = {}
        for h, until in kept.items():
            groups.setdefault(until, []).append(h)
        self.kept_groups = [(until, sorted(hosts)) for until, hosts in sorted(groups.items())]
        a, b, w = plan
        p0, times, deltas = self._clip(a, b, w, t0, te)
        if other:
            oa, ob, ow = (np.array(x, dtype=float) for x in zip(*other))
            q0, otimes, odeltas = self._clip(oa, ob, ow, t0, te)
        else:
            q0, otimes, odeltas = 0.0, times[:0], deltas[:0]
        uniq, inverse = np.unique(np.concatenate((times, otimes)), return_inverse=True)
        inverse = inverse.reshape(-1)
        k = len(uniq)
        d_plan = np.bincount(inverse[:len(times)], weights=deltas, minlength=k)
        d_other = np.bincount(inverse[len(times):], weights=odeltas, minlength=k)
        T = np.empty(k + 2)
        T[0], T[1:-1], T[-1] = t0, uniq, te
        plan_w = np.empty(k + 1)
        plan_w[0] = p0
        np.cumsum(d_plan, out=plan_w[1:])
        plan_w[1:] += p0
        bal_w = plan_w.copy()
        if other:
            extra_w = np.empty(k + 1)
            extra_w[0] = q0
            np.cumsum(d_other, out=extra_w[1:])
            extra_w[1:] += q0
            bal_w += extra_w
        G = np.empty(k + 2)
        G[0] = cea
        np.cumsum((rate - bal_w) * np.diff(T), out=G[1:])
        G[1:] += cea
        self.T_np, self.G_np = T, G
        self.T, self.G = T.tolist(), G.tolist()
        self.bal, self.plan = bal_w.tolist(), plan_w.tolist()

    @staticmethod
    def _clip(a: np.ndarray, b: np.ndarray, w: np.ndarray, t0: float, t1: float
              ) -> tuple[float, np.ndarray, np.ndarray]:
        a = np.maximum(a, t0)
        b = np.minimum(b, t1)
        ok = (b > a) & (w != 0.0)
        a, b, w = a[ok], b[ok], w[ok]
        first = a <= t0
        later = ~first
        ends = b < t1
        return (float(w[first].sum()), np.concatenate((a[later], b[ends])),
                np.concatenate((w[later], -w[ends])))

    def kept_in(self, alloc: ProcSet) -> tuple[tuple[float, int], ...]:
        """The kept hosts among ``alloc``: ``((until, how many), …)`` by increasing ``until``."""
        out = []
        itvs = alloc._itvs
        for until, hosts in self.kept_groups:
            count = 0
            for lo, hi in itvs:
                count += bisect_right(hosts, hi) - bisect_left(hosts, lo)
            if count:
                out.append((until, count))
        return tuple(out)

    def admits(self, segments: Sequence[Segment], cap: float | None, cap_until: float) -> bool:
        """Whether the balance with ``segments`` added stays ≥ −tol on ``[t0, te]`` and, when ``cap`` is
        given, the plan's power with ``segments`` stays ≤ ``cap + 1e-9`` on ``[t0, cap_until)``."""
        t0, te, rate, tol = self.t0, self.te, self.rate, self.tol
        T, G, bal = self.T, self.G, self.bal
        if G[0] < -tol:
            return False
        power, events = _extra_knots(segments, t0, te)
        if cap is not None and cap_until > t0:
            plan = self.plan
            if plan[0] + power > cap + 1e-9:
                return False
        # the balance at the candidate's own breakpoints (where it is most often lowest)
        xs = [t0]
        energy = [0.0]
        levels = [power]
        x = 0.0
        prev = t0
        for at in sorted(events):
            x += power * (at - prev)
            k = bisect_right(T, at) - 1
            if G[k] + (rate - bal[k]) * (at - T[k]) - x < -tol:
                return False
            xs.append(at)
            energy.append(x)
            power += events[at]
            levels.append(power)
            prev = at
        x += power * (te - prev)
        if G[-1] - x < -tol:
            return False
        xs.append(te)
        energy.append(x)
        if len(T) > 2:
            inner = slice(1, -1)
            if float((self.G_np[inner] - np.interp(self.T_np[inner], xs, energy)).min()) < -tol:
                return False
        if cap is not None and cap_until > t0:
            limit = cap + 1e-9
            plan = self.plan
            for i in range(len(levels)):
                lo_t = xs[i]
                if lo_t >= cap_until:
                    break
                hi_t = xs[i + 1] if xs[i + 1] < cap_until else cap_until
                if hi_t <= lo_t:
                    continue
                lo = bisect_right(T, lo_t) - 1
                hi = bisect_left(T, hi_t)
                if max(plan[lo:hi]) + levels[i] > limit:
                    return False
        return True


# --------------------------------------------------------------------------- the window and its calls
class _WindowConstraint(AdmissionConstraint):
    """Shared by the budget and the powercap: window, rate, wake-ups, platform check."""

    name = "window"

    def __init__(self, *, budget_j: float | None = None, budget_fraction: float | None = None,
                 window_start_s: float = 0.0, window_end_s: float | None = None,
                 monitoring_period_s: float = TAURUS.monitoring_period_s, shutdown: bool = False,
                 power: PowerModel | None = None, sleep_pstate: int | None = None) -> None:
        if budget_j is not None and budget_fraction is not None:
            raise OptionError("options 'budget_j' and 'budget_fraction' exclude each other; give one")
        if budget_j is not None and budget_j < 0:
            raise OptionError(f"option 'budget_j' must be ≥ 0, got {budget_j}")
        if budget_fraction is not None and not budget_fraction > 0:
            raise OptionError(f"option 'budget_fraction' must be > 0, got {budget_fraction}")
        if not monitoring_period_s > 0:
            raise OptionError(f"option 'monitoring_period_s' must be > 0, got {monitoring_period_s}")
        limited = budget_j is not None or budget_fraction is not None
        if window_end_s is not None and not window_end_s > window_start_s:
            raise OptionError(f"option 'window_end_s' ({window_end_s}) must be after window_start_s ({window_start_s})")
        if limited and window_end_s is None:
            raise OptionError("option 'window_end_s' is required with a budget (the window is [window_start_s, window_end_s))")
        self.budget_j = budget_j
        self.budget_fraction = budget_fraction
        self.ts = float(window_start_s)
        self.te = float(window_end_s) if window_end_s is not None else INF
        self.monitoring_period_s = float(monitoring_period_s)
        self.shutdown = shutdown
        self.power = power or PowerModel()
        self.sleep_pstate_option = sleep_pstate
        self.nb_hosts = 0
        self.unlimited = not limited or budget_j == INF
        self.B = INF if self.unlimited else (budget_j if budget_j is not None else INF)
        self._calls: list[float] = []  # CALL_ME_LATER times requested and not yet past
        self._next_stage = self.ts
        self.power_manager: Any = None  # set by the power manager's bind()

    # ------------------------------------------------------------ platform
    @property
    def rate_w(self) -> float:
        """``R = B / (te − ts)``: energy released per second (rule 1), or the powercap."""
        return INF if self.unlimited else self.B / (self.te - self.ts)

    def on_platform(self, nb_hosts: int, properties: Sequence[Mapping[str, Any]]) -> None:
        """SIMULATION_BEGINS: real powers from the platform; budget fraction → joules; checks.

        Raises:
            OptionError: pstates the platform lacks, or a budget no schedule can meet (shutdown off:
                below P̃idle × hosts × window).
        """
        self.nb_hosts = nb_hosts
        self.power = self.power.with_platform(properties, self.sleep_pstate_option, self.shutdown)
        if self.unlimited:
            return
        window = self.te - self.ts
        if self.budget_fraction is not None:
            self.B = self.budget_fraction * nb_hosts * self.power.est_comp_w * window
        idle_j = nb_hosts * self.power.est_idle_w * window
        if not self.shutdown and self.B < idle_j * (1 - 1e-12):
            name = "budget_fraction" if self.budget_fraction is not None else "budget_j"
            raise OptionError(
                f"option '{name}': budget {self.B:.6g} J is below the platform held idle over the window "
                f"({nb_hosts} hosts × {self.power.est_idle_w:g} W × {window:g} s = {idle_j:.6g} J); "
                "no schedule can meet it without shutdown")

    def in_window(self, start_s: float, end_s: float) -> bool:
        """Whether ``[start_s, end_s)`` meets the window (a job running there must be checked)."""
        return start_s < self.te - TIME_EPS_S and end_s > self.ts  # the call at te arrives rounded (B4)

    def exempt(self, job: QueuedJob, start_s: float) -> bool:
        """Nothing to check for ``job`` started at ``start_s``: no budget, or its run misses the window."""
        return self.unlimited or not self.in_window(start_s, job.expected_end_s(start_s))

    # ------------------------------------------------------------ wake-ups
    def on_call(self) -> None:
        """A REQUESTED_CALL arrived (ours or the power manager's: they carry no id, so the calls
        requested are forgotten by time in :meth:`decisions`)."""

    def _stage_due(self, now: float) -> bool:
        """Whether a monitoring stage is due now (and book the next one)."""
        return False

    def decisions(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        """Monitoring queries inside the window and the next wake-up (ts, stages, te)."""
        if self.unlimited:
            return []
        now = view.now_s
        for mark in (self.ts, self.te, self._next_stage):  # a call for `mark` arrives rounded (B4)
            if 0 < mark - now <= TIME_EPS_S:
                now = mark
        out: list[Decision] = []
        if self._stage_due(now):
            out.append(QueryEnergy())
        done = view.no_more_jobs and not queue and not view.running
        self._calls = [t for t in self._calls if t > now + TIME_EPS_S]
        if not self._calls and not done and now < self.te:
            target = self._next_wakeup(now)
            if target is not None and target > now:
                self._calls.append(target)
                out.append(CallMeLater(target))
        return out

    def _next_wakeup(self, now: float) -> float | None:
        if now < self.ts:
            return self.ts
        return self.te if now < self.te else None


class EnergyBudget(_WindowConstraint):
    """energyBud / reducePC (energy-budget paper §IV, Algorithm 2 and §IV-D); see the module docstring.

    Args:
        mode: ``"energy-bud"`` (reservation subtracted from Cea) or ``"reduce-pc"`` (rate lowered).
        budget_j / budget_fraction: B in joules, or as a fraction of the window's all-computing energy
            (hosts × P̃comp × window, the paper's 100 %); neither = unlimited (plain EASY).
        window_start_s, window_end_s: ``[ts, te)``.
        monitoring_period_s: period of the monitoring stage (table I: 600 s).
        shutdown: whether idle hosts are switched off (the future of a freed host is then off, not idle).
        power: estimates and transition powers (:class:`PowerModel`).
    """

    def __init__(self, mode: str = "energy-bud", **kwargs: Any) -> None:
        if mode not in ("energy-bud", "reduce-pc"):
            raise ValueError(f"unknown energy budget mode {mode!r}")
        super().__init__(**kwargs)
        self.mode = mode
        self.name = mode
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
        # fast path (see _Future): the pass's plan as arrays, the running jobs' segments, refusals
        self._fut: _Future | None = None
        self._running_cache: tuple[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        #: refusals of the pass by kept hosts of the allocation: (hosts, expected end)
        self._refused: dict[tuple, list[tuple[int, float]]] = {}

    # ------------------------------------------------------------ the counter (rule 1, monitoring)
    def estimated_power_w(self, view: ClusterView) -> float:
        """P̃ of the platform in the state ``view`` describes: computing hosts at P̃comp, idle ones at
        P̃idle, asleep and switching ones at their platform wattage (§IV-C1 "counting the number of
        computing and non-computing nodes")."""
        p = self.power
        comp = sum(len(job.alloc) for job in view.running.values())
        return (comp * p.est_comp_w + len(view.free) * p.est_idle_w + len(view.off) * p.sleep_w
                + len(view.switching) * p.switch_w)

    def advance(self, view: ClusterView, now_s: float) -> None:
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
        """What the plan counts for the free hosts ``alloc`` (to replace when a job takes them)."""
        p = self.power
        now = view.now_s
        kept: Mapping[int, float] = self.power_manager.kept(view) if self.power_manager is not None else {}
        segs: list[Segment] = []
        plain = 0
        for h in alloc:
            if h in kept:
                segs += [(now, kept[h], p.est_idle_w)] + self._tail(1, kept[h])
            else:
                plain += 1
        return segs + self._tail(plain, now)

    def head_energy_j(self, job: QueuedJob, start_s: float, n: int) -> float:
        """``J``: the head's energy above its hosts' baseline over its walltime inside the window."""
        p = self.power
        end = job.expected_end_s(start_s)
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
    def _running_arrays(self, view: ClusterView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The plan's segments of the running jobs (:meth:`_run` from now), as arrays; cached while the
        running jobs do not change. The computing segment starts at ``-inf`` instead of now: the plan is
        only read from ``t0 ≥ now`` on, where both are the same."""
        key = (id(view.running), view.running_version, len(view.running))
        cached = self._running_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        p = self.power
        jobs = list(view.running.values())
        n = np.array([size(job.alloc) for job in jobs], dtype=float)
        end = np.array([job.expected_end_s for job in jobs], dtype=float)
        start = np.full(len(jobs), -INF)
        if not self.shutdown:
            a = np.concatenate((start, end))
            b = np.concatenate((end, np.full(len(jobs), INF)))
            w = np.concatenate((n * p.est_comp_w, n * p.est_idle_w))
        else:
            off = end + p.switch_off_s
            a = np.concatenate((start, end, off))
            b = np.concatenate((end, off, np.full(len(jobs), INF)))
            w = np.concatenate((n * p.est_comp_w, n * p.switch_off_w, n * p.sleep_w))
        arrays = (a, b, w)
        self._running_cache = (key, arrays)
        return arrays

    def _future(self, view: ClusterView, reserved: Sequence[Segment], cut: tuple[float, float] | None) -> _Future:
        """The plan (``plan`` of tests/budget_oracle.py, with ``reserved`` and ``cut`` in the balance) as a
        :class:`_Future`, rebuilt only when the view, Cea, the jobs started in the pass or the power manager
        changed."""
        pm = self.power_manager
        key = ((view, view.running, view.free, view.off, view.switching),
               (view.now_s, self.cea_j, view.running_version, list(reserved), cut,
                getattr(pm, "version", None) if pm is not None else None))
        started = (len(self._started), len(self._prepared))
        fut = self._fut
        if fut is not None and _same(fut.key, key):
            if fut.started == started:
                return fut
        else:  # not only more jobs started in the pass: the refusals no longer hold
            self._refused = {}
        now = view.now_s
        p = self.power
        t0, cea = self._t0(now)
        segs: list[Segment] = []
        used = 0
        for n, end in self._started:
            segs += self._run(n, now, end)
            used += n
        segs += self._prepared
        kept: Mapping[int, float] = {}
        if pm is not None:
            kept = pm.kept(view)
        free = view.free
        free_kept = [until for h, until in kept.items() if contains(free, h)] if kept else []
        for until in free_kept:
            segs += [(now, until, p.est_idle_w)] + self._tail(1, until)
        segs += self._tail(size(free) - used - len(free_kept), now)
        if view.off:
            segs.append((now, INF, size(view.off) * p.sleep_w))
        if view.switching:
            planned = pm.switching_segments(view, self) if pm is not None else None
            if planned is None:
                k = size(view.switching)
                planned = [(now, now + p.switch_on_s, k * p.switch_w)] + self._tail(k, now + p.switch_on_s)
            segs += planned
        a, b, w = self._running_arrays(view)
        if segs:
            sa, sb, sw = (np.array(x, dtype=float) for x in zip(*segs))
            a, b, w = np.concatenate((a, sa)), np.concatenate((b, sb)), np.concatenate((w, sw))
        other = list(reserved)
        if cut is not None:
            other.append((t0, cut[1], cut[0]))
        fut = _Future(key, t0, self.te, self.rate_w, 1e-9 * max(1.0, self.B), cea, (a, b, w), other, kept)
        fut.started = started
        self._fut = fut
        return fut

    def _job_extra(self, n: int, now: float, end: float, kept: Sequence[tuple[float, int]]) -> list[Segment]:
        """What starting a job now adds to the plan (``job_segments`` of tests/budget_oracle.py) for ``n``
        hosts of which ``count`` are kept until ``until`` for each ``(until, count)`` of ``kept`` (hosts kept
        until the same time summed in one segment)."""
        p = self.power
        segs = self._run(n, now, end)
        plain = n
        for until, count in kept:
            segs.append((now, until, -count * p.est_idle_w))
            segs += [(a, b, -w) for a, b, w in self._tail(count, until)]
            plain -= count
        segs += [(a, b, -w) for a, b, w in self._tail(plain, now)]
        return segs

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

    def end_pass(self, view: ClusterView) -> None:
        """The pass's starts are applied to ``view`` (they are running jobs now, no longer counted apart)."""
        self.begin_pass((), view)

    def can_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> bool:
        """Algorithm 2, "enough energy is available to start job now" (plus reducePC's lowered rate)."""
        now = view.now_s
        if self.exempt(job, now):
            return True
        end = job.expected_end_s(now)
        fut = self._future(view, self._reserved, self._cut)
        itvs = alloc._itvs
        if len(itvs) == 1:
            lo, hi = itvs[0]
            n = hi - lo + 1
            kept = fut.kept_in(alloc) if fut.kept_groups else ()
        else:
            n = size(alloc)
            kept = fut.kept_in(alloc)
        refused = self._refused.get(kept)
        if refused:
            for n2, end2 in refused:
                if n2 <= n and end2 <= end:
                    return False
        ok = self._admits(fut, self._job_extra(n, now, end, kept), end)
        if not ok and self._monotone():
            self._refused.setdefault(kept, []).append((n, end))
        return ok

    def on_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> None:
        if not self.unlimited:
            self._started.append((size(alloc), job.expected_end_s(view.now_s)))

    def reserve_head(self, job: QueuedJob, start_s: float, alloc: ProcSet, view: ClusterView) -> None:
        """Algorithm 2, "Reserve energy in the future for firstJob"."""
        if self.unlimited:
            return
        t0, _ = self._t0(view.now_s)
        if self.mode == "reduce-pc" and start_s > t0:
            J = self.head_energy_j(job, start_s, len(alloc))
            self._cut = (J / (start_s - t0), start_s)
        else:
            p = self.power
            base = p.sleep_w if self.shutdown else p.est_idle_w
            self._reserved = [(start_s, job.expected_end_s(start_s), len(alloc) * (p.est_comp_w - base))]

    def release_head(self) -> None:
        """Algorithm 2, "Remove the energy reservation of firstJob"."""
        self._reserved = []
        self._cut = None

    def can_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> bool:
        """Opportunistic shutdown asks before booting ``boot`` and keeping the free hosts ``keep`` idle for
        ``job``, which would then start at ``start_s`` on its hosts: boots count in the budget. For the head
        job it asks outside the backfilling phase; for a later job, while the head's reservation is made
        (:meth:`reserve_head`), so that the answer is the one :meth:`can_start` will give at ``start_s``."""
        if self.unlimited:
            return True
        now = view.now_s
        p = self.power
        end = job.expected_end_s(start_s)
        if not self.in_window(now, max(end, now + p.switch_on_s)):
            return True
        fut = self._future(view, self._reserved, self._cut)
        return self._admits(fut, self._prepare_segments(job, boot, keep, start_s, view), end)

    def _admits(self, fut: _Future, extra: Sequence[Segment], end: float) -> bool:
        """Rule 2 with ``extra`` added to the plan, and under reducePC's lowered rate also the powercap
        ``R − J / (q − now)`` until ``min(q, end, te)``."""
        cut = self._cut
        if cut is not None:
            return fut.admits(extra, self.rate_w - cut[0], min(cut[1], end, self.te))
        return fut.admits(extra, None, -INF)

    def on_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> None:
        """The power manager booted ``boot`` / kept ``keep`` for ``job``: its run from ``start_s`` counts in
        the rest of the pass (the boots and kept hosts themselves are in the power manager's segments)."""
        if self.unlimited:
            return
        n, end = job.res, job.expected_end_s(start_s)
        self._prepared += self._run(n, start_s, end) + [(a, b, -w) for a, b, w in self._tail(n, start_s)]

    def _prepare_segments(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float,
                          view: ClusterView) -> list[Segment]:
        """What booting ``boot``, keeping ``keep`` and running ``job`` from ``start_s`` add to the plan."""
        now = view.now_s
        p = self.power
        end = job.expected_end_s(start_s)
        k = len(boot)
        extra: list[Segment] = []
        if k:  # asleep in the plan until start_s; booting, then idle until the job starts
            extra += [(now, now + p.switch_on_s, k * p.switch_on_w), (now + p.switch_on_s, start_s, k * p.est_idle_w),
                      (now, start_s, -k * p.sleep_w)]
        if keep:  # idle until the job starts instead of switching off now; asleep baseline after
            extra += [(now, start_s, len(keep) * p.est_idle_w), (start_s, INF, len(keep) * p.sleep_w)]
            extra += [(a, b, -w) for a, b, w in self._free_baseline(keep, view)]
        # the job's hosts computing from start_s above the asleep baseline, then switching off again
        extra += [(start_s, end, job.res * (p.est_comp_w - p.sleep_w)),
                  (end, end + p.switch_off_s, job.res * (p.switch_off_w - p.sleep_w))]
        return extra


class Powercap(_WindowConstraint):
    """The powercap baseline (energy-budget paper §V-C): EASY where a job meeting the window starts only
    if the estimated platform power ``n_idle·P̃idle + n_comp·P̃comp`` stays ≤ ``B / (te − ts)`` (hosts off
    or switching count as idle, so shutdown does not help it, as in the paper).

    "Roughly the same as EASY Backfilling" (§V-C), with the cap in EASY's reservation too: the head's
    reservation is at the first time its hosts are free *and* the cap lets it run (as the running jobs
    end by their walltime), or at ``te`` when it never can inside the window
    (:meth:`earliest_start_s`); a backfilled job that would still run then must leave the head room
    under the cap. Without that, a head wider than the cap allows would hold its hosts from now to
    ``te`` and only the few hosts outside its reservation could work: the paper finds powercap at 90 %
    *above* EASY's utilization scaled by the budget (§V-G), not at half of it."""

    name = "powercap"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._comp = 0  # hosts computing, with the jobs started in the pass
        self._started: list[tuple[int, float]] = []  # jobs started in the pass: (hosts, expected end)
        self._prepared_hosts = 0  # hosts of the jobs the power manager prepared in the pass
        #: during backfilling: (shadow time, hosts computing then with the head) when the head meets the window
        self._at_shadow: tuple[float, int] | None = None

    def begin_pass(self, queue: Sequence[QueuedJob], view: ClusterView) -> None:
        self._comp = sum(len(job.alloc) for job in view.running.values())
        self._started = []
        self._prepared_hosts = 0
        self._at_shadow = None

    def end_pass(self, view: ClusterView) -> None:
        self.begin_pass((), view)

    def platform_power_w(self, comp_hosts: int) -> float:
        """``P̃platform`` with ``comp_hosts`` computing and every other host counted idle."""
        p = self.power
        return comp_hosts * p.est_comp_w + (self.nb_hosts - comp_hosts) * p.est_idle_w

    def _fits(self, comp_hosts: int) -> bool:
        return self.platform_power_w(comp_hosts) <= self.rate_w * (1 + 1e-12)

    def _ends(self, view: ClusterView) -> list[tuple[float, int]]:
        """``(expected end, hosts)`` of the running jobs and of those started in the pass."""
        return ([(running.expected_end_s, len(running.alloc)) for running in view.running.values()]
                + [(end, n) for n, end in self._started])

    def earliest_start_s(self, job: QueuedJob, start_s: float, view: ClusterView) -> float:
        """The first time from ``start_s`` at which the head fits under the cap as the running jobs end by
        their walltime, or ``te`` (its run then no longer meets the window)."""
        n = job.res
        if self.exempt(job, start_s) or self._fits(self._comp + n):
            return start_s  # (fits even if nothing ends by then)
        ends = sorted(self._ends(view))
        comp = self._comp
        t = start_s
        i = 0
        while True:
            while i < len(ends) and ends[i][0] <= t:
                comp -= ends[i][1]
                i += 1
            if not self.in_window(t, job.expected_end_s(t)) or self._fits(comp + n):
                return t
            if i == len(ends) or ends[i][0] >= self.te:
                return max(t, self.te)
            t = ends[i][0]

    def can_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> bool:
        now = view.now_s
        if self.exempt(job, now):
            return True
        end = job.expected_end_s(now)
        if not self._fits(self._comp + len(alloc)):
            return False
        shadow = self._at_shadow
        return shadow is None or end <= shadow[0] or self._fits(shadow[1] + len(alloc))

    def on_start(self, job: QueuedJob, alloc: ProcSet, view: ClusterView) -> None:
        n, end = len(alloc), job.expected_end_s(view.now_s)
        self._comp += n
        self._started.append((n, end))
        if self._at_shadow is not None and end > self._at_shadow[0]:
            self._at_shadow = (self._at_shadow[0], self._at_shadow[1] + n)

    def reserve_head(self, job: QueuedJob, start_s: float, alloc: ProcSet, view: ClusterView) -> None:
        """The head's room under the cap at its reservation: a backfilled job still running then must fit
        with it (when the head's run meets the window)."""
        if self.exempt(job, start_s):
            return
        still = sum(n for end, n in self._ends(view) if end > start_s)  # computing then
        self._at_shadow = (start_s, still + job.res)

    def release_head(self) -> None:
        self._at_shadow = None

    def can_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> bool:
        """Boot hosts for ``job`` only if the powercap will let it start then, counting the jobs already
        prepared in this pass (no boot/shutdown churn). Transitions are not counted in ``P̃platform`` (hosts
        off count as idle, as in the paper), so with shutdown the powercap bounds the estimated power of
        idle and computing hosts only."""
        if self.exempt(job, start_s):
            return True
        return self.platform_power_w(self._comp + self._prepared_hosts + job.res) <= self.rate_w * (1 + 1e-12)

    def on_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, view: ClusterView) -> None:
        self._prepared_hosts += job.res
