"""The budget window shared by energyBud, reducePC and the powercap: options, rate, wake-ups, checks.

During the window ``[ts, te)`` the platform may consume at most ``B`` joules (energy-budget paper §IV);
outside it every constraint here admits everything, so the schedule is plain EASY there. ``B`` is given in
joules or as a fraction of the window's all-computing energy (hosts × P̃comp × window, the paper's 100 %).
Without a budget nothing is checked and no call is made: the schedule is exactly EASY's.
"""

from __future__ import annotations

import logging
import math
from typing import Sequence

from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.budget.estimates import BudgetPower
from wattsched.schedulers.options import Option
from wattsched.schedulers.state import CallMeLater, ClusterView, Decision, QueryEnergy, QueuedJob

logger = logging.getLogger(__name__)

INF = math.inf
#: Batsim prints times with 6 decimals (B4): a REQUESTED_CALL for ``t`` may arrive at ``t − 5e-7``.
TIME_EPS_S = 1e-5

#: The options of every budget piece.
BUDGET_OPTIONS: tuple[Option, ...] = (
    Option("budget_j", float, None,
           help="energy budget B in joules over the window (absent: unlimited, plain EASY)"),
    Option("budget_fraction", float, None,
           help="B as a fraction of the window's all-computing energy, hosts × P̃comp × window (paper: 1.0 … 0.3)"),
    Option("window_start_s", float, 0.0, min=0.0, help="start ts of the budget window, in seconds"),
    Option("window_end_s", float, None, min=0.0,
           help="end te of the budget window, in seconds (required with a budget)"),
    Option("monitoring_period_s", float, TAURUS.monitoring_period_s,
           help="period of the monitoring stage that queries the energy (> 0)"),
    Option("estimated_idle_w", float, TAURUS.estimated_idle_w, help="P̃idle: estimated power of an idle host, in watts"),
    Option("estimated_comp_w", float, TAURUS.estimated_comp_w,
           help="P̃comp: estimated power of a computing host, in watts"),
)


class BudgetWindow(AdmissionConstraint):
    """Shared by the budget and the powercap: window, rate, wake-ups, platform check.

    Raises:
        OptionError: options that exclude each other, a window that ends before it starts, a missing end,
            a non-positive period or estimate.
    """

    options = BUDGET_OPTIONS

    def __init__(self, *, budget_j: float | None = None, budget_fraction: float | None = None,
                 window_start_s: float = 0.0, window_end_s: float | None = None,
                 monitoring_period_s: float = TAURUS.monitoring_period_s,
                 estimated_idle_w: float = TAURUS.estimated_idle_w,
                 estimated_comp_w: float = TAURUS.estimated_comp_w) -> None:
        if budget_j is not None and budget_fraction is not None:
            raise OptionError("options 'budget_j' and 'budget_fraction' exclude each other; give one")
        if budget_j is not None and budget_j < 0:
            raise OptionError(f"option 'budget_j' must be ≥ 0, got {budget_j}")
        if budget_fraction is not None and not budget_fraction > 0:
            raise OptionError(f"option 'budget_fraction' must be > 0, got {budget_fraction}")
        if not monitoring_period_s > 0:
            raise OptionError(f"option 'monitoring_period_s' must be > 0, got {monitoring_period_s}")
        for name, value in (("estimated_idle_w", estimated_idle_w), ("estimated_comp_w", estimated_comp_w)):
            if not value > 0:
                raise OptionError(f"option '{name}' must be > 0, got {value}")
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
        self.power = BudgetPower(estimated_idle_w, estimated_comp_w)
        self.nb_hosts = 0
        self.unlimited = not limited or budget_j == INF
        #: a window given without a budget (hunt 44: it ran as plain EASY without a word; said at the platform)
        self._window_unused = not limited and window_end_s is not None
        self.B = INF if self.unlimited else (budget_j if budget_j is not None else INF)
        self._calls: list[float] = []  # CALL_ME_LATER times requested and not yet past
        self._next_stage = self.ts

    @property
    def shutdown(self) -> bool:
        """Whether the scheduler's power manager switches idle hosts off (a freed host's future is then
        off, not idle)."""
        return self.power_manager is not None and self.power_manager.sleep_pstate is not None

    @property
    def rate_w(self) -> float:
        """``R = B / (te − ts)``: energy released per second (rule 1), or the powercap."""
        return INF if self.unlimited else self.B / (self.te - self.ts)

    def on_platform(self, view: ClusterView) -> None:
        """SIMULATION_BEGINS: the platform's powers; budget fraction → joules; checks.

        Raises:
            OptionError: a budget no schedule can meet (shutdown off: below P̃idle × hosts × window).
        """
        nb_hosts = view.nb_hosts
        self.nb_hosts = nb_hosts
        self.power = BudgetPower.of_platform(view, self.power.est_idle_w, self.power.est_comp_w)
        if self._window_unused:
            logger.warning("admission '%s': a window (window_end_s %g) but no budget (budget_j or budget_fraction): "
                           "nothing is limited, the schedule is plain EASY", self.name, self.te)
        if self.unlimited:
            return
        window = self.te - self.ts
        if self.budget_fraction is not None:
            self.B = self.budget_fraction * nb_hosts * self.power.est_comp_w * window
            if not math.isfinite(self.B):  # (1e308: an infinite budget is no budget; leave the option out)
                raise OptionError(
                    f"option 'budget_fraction' {self.budget_fraction:g}: a budget of {self.B:g} J over the window "
                    f"({nb_hosts} hosts × estimated_comp_w {self.power.est_comp_w:g} W × {window:g} s) is beyond "
                    "the largest number a double holds (for no budget, leave the budget options out)")
        if not math.isfinite(self.rate_w):  # (a window of 1e-300 s: the rate, the powercap, would be infinite)
            raise OptionError(
                f"option 'budget_j' {self.B:g} J over a window of {window:g} s: a rate (and powercap) of B / (te − ts) "
                "beyond the largest number a double holds; give a longer window, or leave the budget options out")
        idle_j = nb_hosts * self.power.est_idle_w * window
        if not self.shutdown and self.B < idle_j * (1 - 1e-12):
            name = "budget_fraction" if self.budget_fraction is not None else "budget_j"
            raise OptionError(
                f"option '{name}': budget {self.B:.6g} J is below the policy's estimate of the platform held idle "
                f"over the window ({nb_hosts} hosts × estimated_idle_w {self.power.est_idle_w:g} W × {window:g} s = "
                f"{idle_j:.6g} J); "
                "no schedule can meet it without shutdown")

    def check_platform(self, view: ClusterView) -> None:
        """With shutdown, a budget below the least the platform can draw over the window is refused (it used to be
        taken, then exceeded). Batsim starts every host on, so a host draws at least, over the window, the least
        of: idle all along at its lowest idle power, or switched off at 0 s, then asleep. (Without shutdown
        :meth:`on_platform` refuses a budget below the policy's estimate of the idle platform.)

        Raises:
            OptionError: such a budget.
        """
        if self.unlimited or not self.shutdown or view.power is None:
            return
        p = self.power
        window = self.te - self.ts
        early = max(0.0, min(self.te, p.switch_off_s) - self.ts)  # part of the window a host cannot be asleep
        off_j = p.switch_off_w * early + p.sleep_w * (window - early)
        floor_j = 0.0
        idle_ws = []
        for model, count in view.power.model_counts(ProcSet((0, self.nb_hosts - 1))):
            idle_w = min(model.idle_w[k] for k in model.computation_pstates)
            idle_ws.append(idle_w)
            floor_j += count * (min(idle_w * window, off_j) if model.has_sleep else idle_w * window)
        if self.B < floor_j * (1 - 1e-12):
            name = "budget_fraction" if self.budget_fraction is not None else "budget_j"
            raise OptionError(
                f"option '{name}': budget {self.B:.6g} J is below the least the platform can draw over the window "
                f"({floor_j:.6g} J: each of the {self.nb_hosts} hosts switched off at 0 s, {p.switch_off_w:g} W for "
                f"{early:g} s of the window, then asleep at {p.sleep_w:g} W, or idle at {min(idle_ws):g} W all "
                "along when that is less); no schedule can meet it")

    def in_window(self, start_s: float, end_s: float) -> bool:
        """Whether ``[start_s, end_s)`` meets the window (a job running there must be checked)."""
        return start_s < self.te - TIME_EPS_S and end_s > self.ts  # the call at te arrives rounded (B4)

    def exempt(self, start_s: float, end_s: float) -> bool:
        """Nothing to check for a run over ``[start_s, end_s)``: no budget, or it misses the window."""
        return self.unlimited or not self.in_window(start_s, end_s)

    # ------------------------------------------------------------ wake-ups
    def _stage_due(self, now: float) -> bool:
        """Whether a monitoring stage is due now (and book the next one)."""
        return False

    def decisions(self, queue: Sequence[QueuedJob], view: ClusterView) -> list[Decision]:
        """Monitoring queries inside the window and the next wake-up (ts, stages, te). REQUESTED_CALLs carry
        no id, so the calls requested (ours or the power manager's) are forgotten by time."""
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
