"""What an energy budget counts a host as drawing: the paper's estimates and the platform's own powers.

energyBud, reducePC and powercap count computing hosts at P̃comp and idle ones at P̃idle (options; the
energy-budget paper's table I: 203.12 W and 100 W, §IV-C1), and hosts asleep or switching at the
platform's wattages, read from the same per-host model as everything else
(:class:`~wattsched.energy_models.power.NodeModel`): the sleep pstate's wattage, the mean power of a
switch-off and of a boot, and their durations (one flop at the virtual pstates; table I's when the
platform does not give its speeds, see :func:`~wattsched.schedulers.power.transition_times_s`).
"""

from __future__ import annotations

from dataclasses import dataclass

from wattsched.base.errors import OptionError
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.power import transition_times_s
from wattsched.schedulers.state import ClusterView

#: A piece of estimated power: ``watts`` during ``[t0, t1)``.
Segment = tuple[float, float, float]


@dataclass(frozen=True)
class BudgetPower:
    """The powers an energy budget plans with.

    Attributes:
        est_idle_w, est_comp_w: the estimates P̃idle and P̃comp (options).
        sleep_w: power asleep; switch_off_w / switch_on_w: mean power of a shutdown / boot;
        switch_off_s / switch_on_s: their durations (all from the platform; 0 W when hosts never sleep).
    """

    est_idle_w: float = TAURUS.estimated_idle_w
    est_comp_w: float = TAURUS.estimated_comp_w
    sleep_w: float = 0.0
    switch_off_w: float = 0.0
    switch_on_w: float = 0.0
    switch_off_s: float = TAURUS.switch_off_s
    switch_on_s: float = TAURUS.switch_on_s

    @classmethod
    def of_platform(cls, view: ClusterView, est_idle_w: float, est_comp_w: float) -> "BudgetPower":
        """The estimates with the sleep and transition powers of the platform's hosts.

        Raises:
            OptionError: hosts that can sleep differ in their sleep or transition powers (the plan counts
                hosts, not which ones).
        """
        power = view.power
        assert power is not None
        sleepers = {(m.sleep_w, m.switch_off_w, m.switch_on_w, transition_times_s(m))
                    for m in power.models if m.has_sleep}
        if len(sleepers) > 1:
            raise OptionError("energy budget: hosts differ in their sleep or transition powers; the budget's plan "
                              "needs one sleep model for all hosts")
        if not sleepers:
            return cls(est_idle_w, est_comp_w)
        sleep_w, off_w, on_w, (on_s, off_s) = sleepers.pop()
        return cls(est_idle_w, est_comp_w, sleep_w, off_w, on_w, off_s, on_s)

    @property
    def switch_w(self) -> float:
        """Power counted for a host in a transition whose direction is unknown (the larger one)."""
        return max(self.switch_on_w, self.switch_off_w)
