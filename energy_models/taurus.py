"""The Taurus node: power states of the energy-budget paper's calibration (table I) and Batsim's DVFS table.

The energy-budget paper (energyBud / reducePC, §V-B, table I) calibrates its simulator on the Grid'5000
Taurus cluster (16 Dell PowerEdge R720, 2× Xeon E5-2630 each) and attributes per-node measures to one
"processor" of the model. :data:`TAURUS` holds those measures and the 16 SimGrid pstates every shipped
platform and every ``batsim-reference`` recording uses (docs/architecture.md §4):

=========  ==========================================  ======================================
pstate     speed                                       wattage ``idle:full`` (W)
=========  ==========================================  ======================================
0..12      DVFS, 100.0 .. 44.976 Mflop/s               95.0 : 190.738 .. 125.88
13         sleep, 1e-9 Mflop/s (never computes)        9.75 : 9.75  (= Poff)
14         virtual switch-off, 1/6.1 flop/s            100.99672131147543 (both)
15         virtual switch-on, 1/151.52 flop/s          125.1743848996832 (both)
=========  ==========================================  ======================================

How the virtual pstates derive from table I (docs/architecture.md §4): SimGrid has no notion of a transition, so Batsim
runs **one flop** in a virtual pstate; its speed is therefore ``1 / duration`` and its wattage the mean
power of the transition, ``energy / duration``:

* on→off: 6.10 s and 616.08 J → speed ``1/6.1 = 0.1639344262295082`` flop/s, ``616.08 / 6.1 =
  100.99672131147543`` W (table I prints the mean power rounded to 10 mW: Pon→off = 101.00 W);
* off→on: 151.52 s and 18966.4228 J → speed ``1/151.52 = 0.006599788806758183`` flop/s,
  ``18966.4228 / 151.52 = 125.1743848996832`` W (table I: Poff→on = 125.17 W).

Those are the exact numbers real Batsim 4.2.1 was run with in ``tests/fixtures/batsim-reference``
(README behaviour 23: 6.1 s at 100.99672131147543 W = 616.08 J; 151.52 s at 125.1743848996832 W =
18966.4228 J). Likewise table I's Pcomp = 190.74 W is pstate 0's full wattage 190.738 W rounded.

The speeds are kept as the literal Mflop/s values of the reference XML (``88.95899053627761`` is not
``88958990.53627761 / 1e6`` bit for bit), so that :mod:`platforms.generate` writes them back unchanged.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from wattsched.energy_models.power import NodeModel

__all__ = [
    "PstateKind",
    "Pstate",
    "TaurusNode",
    "TAURUS",
    "SWITCH_OFF_ENERGY_J",
    "SWITCH_ON_ENERGY_J",
    "all_computing_power_w",
    "all_idle_power_w",
    "budget_energy_j",
]

# Mean transition energies behind table I's Pon→off / Poff→on (see the module docstring).
SWITCH_OFF_ENERGY_J: float = 616.08
SWITCH_ON_ENERGY_J: float = 18966.4228

_MEGA = 1e6


class PstateKind(enum.Enum):
    """What a SimGrid pstate of a Taurus host stands for."""

    COMPUTATION = "computation"
    SLEEP = "sleep"
    SWITCH_OFF = "switch_off"  # virtual: one flop = the on→off transition
    SWITCH_ON = "switch_on"  # virtual: one flop = the off→on transition


@dataclass(frozen=True)
class Pstate:
    """One SimGrid pstate: speed and ``wattage_per_state`` ``idle:full``.

    Attributes:
        index: the pstate number (position in the host's ``speed`` list).
        kind: computation, sleep or one of the two virtual transition states.
        speed_value: the speed as written in the XML, in ``speed_unit``.
        speed_unit: ``"Mf"`` (Mflop/s) or ``"f"`` (flop/s), the SimGrid unit suffix.
        idle_w: power when the host does not compute at this pstate.
        full_w: power when the host computes at full load at this pstate.
    """

    index: int
    kind: PstateKind
    speed_value: float
    speed_unit: str
    idle_w: float
    full_w: float

    @property
    def speed_flops(self) -> float:
        """Speed in flop/s."""
        return self.speed_value * (_MEGA if self.speed_unit == "Mf" else 1.0)

    @property
    def is_computation(self) -> bool:
        """True for the DVFS states that can run jobs (docs/architecture.md §4: only those run jobs)."""
        return self.kind is PstateKind.COMPUTATION


@dataclass(frozen=True)
class TaurusNode:
    """The calibrated Taurus node (energy-budget paper, table I) and its SimGrid pstates.

    Attributes mirror table I; ``pstates`` is the full SimGrid list (13 DVFS + sleep + 2 virtual).
    """

    idle_w: float  # Pidle
    comp_w: float  # Pcomp (pstate 0 full wattage, rounded)
    off_w: float  # Poff
    switch_on_s: float  # toff→on
    switch_on_w: float  # Poff→on (rounded, see SWITCH_ON_ENERGY_J)
    switch_off_s: float  # ton→off
    switch_off_w: float  # Pon→off (rounded, see SWITCH_OFF_ENERGY_J)
    estimated_idle_w: float  # P̃idle, used by the energyBud / reducePC algorithms
    estimated_comp_w: float  # P̃comp
    monitoring_period_s: float  # energy counter correction period (§IV-C)
    pstates: tuple[Pstate, ...]
    sleep_pstate: int
    switch_off_pstate: int
    switch_on_pstate: int

    @property
    def computation_pstates(self) -> tuple[Pstate, ...]:
        """The DVFS pstates, fastest first."""
        return tuple(p for p in self.pstates if p.is_computation)

    @property
    def max_speed_flops(self) -> float:
        """Speed of pstate 0 in flop/s."""
        return self.pstates[0].speed_flops

    @property
    def switch_on_energy_j(self) -> float:
        """Energy of one off→on transition."""
        p = self.pstates[self.switch_on_pstate]
        return p.full_w * self.switch_on_s

    @property
    def switch_off_energy_j(self) -> float:
        """Energy of one on→off transition."""
        p = self.pstates[self.switch_off_pstate]
        return p.full_w * self.switch_off_s

    @property
    def node_model(self) -> NodeModel:
        """The node as the platform model every simulator and scheduler reads (:mod:`.power`)."""
        return NodeModel.from_pstates(self.pstates, self.off_w, self.sleep_pstate, self.switch_off_pstate,
                                      self.switch_on_pstate)


# Batsim's Taurus DVFS calibration, literal strings of the reference platform XML.
_DVFS_SPEEDS_MFLOPS: tuple[float, ...] = (
    100.0,
    88.95899053627761,
    83.67952522255192,
    80.57142857142857,
    76.21621621621621,
    72.49357326478149,
    68.78048780487805,
    64.6788990825688,
    60.775862068965516,
    58.62785862785863,
    50.088809946714036,
    49.21465968586388,
    44.97607655502392,
)
_DVFS_FULL_W: tuple[float, ...] = (
    190.738,
    171.02,
    165.62,
    160.47,
    155.729,
    151.3,
    146.92,
    142.95,
    138.928,
    135.368,
    132.519,
    128.87,
    125.88,
)
_IDLE_W = 95.0
_OFF_W = 9.75
_SWITCH_OFF_S = 6.10
_SWITCH_ON_S = 151.52


def _taurus_pstates() -> tuple[Pstate, ...]:
    pstates = [
        Pstate(i, PstateKind.COMPUTATION, speed, "Mf", _IDLE_W, full)
        for i, (speed, full) in enumerate(zip(_DVFS_SPEEDS_MFLOPS, _DVFS_FULL_W, strict=True))
    ]
    n = len(pstates)
    off_w = SWITCH_OFF_ENERGY_J / _SWITCH_OFF_S
    on_w = SWITCH_ON_ENERGY_J / _SWITCH_ON_S
    pstates += [
        Pstate(n, PstateKind.SLEEP, 1e-9, "Mf", _OFF_W, _OFF_W),
        Pstate(n + 1, PstateKind.SWITCH_OFF, 1.0 / _SWITCH_OFF_S, "f", off_w, off_w),
        Pstate(n + 2, PstateKind.SWITCH_ON, 1.0 / _SWITCH_ON_S, "f", on_w, on_w),
    ]
    return tuple(pstates)


TAURUS: TaurusNode = TaurusNode(
    idle_w=_IDLE_W,
    comp_w=190.74,
    off_w=_OFF_W,
    switch_on_s=_SWITCH_ON_S,
    switch_on_w=125.17,
    switch_off_s=_SWITCH_OFF_S,
    switch_off_w=101.00,
    estimated_idle_w=100.0,
    estimated_comp_w=203.12,
    monitoring_period_s=600.0,
    pstates=_taurus_pstates(),
    sleep_pstate=13,
    switch_off_pstate=14,
    switch_on_pstate=15,
)


def all_computing_power_w(nb_hosts: int, node: TaurusNode = TAURUS) -> float:
    """Power of ``nb_hosts`` nodes all computing, with the estimate P̃comp.

    The energy-budget paper (§V-C) expresses a budget as a percentage of the energy the cluster "would
    have consumed if all the processors were computing"; its "49 % = all idle" only holds with the
    estimates (P̃idle / P̃comp = 100 / 203.12 = 49.2 %, whereas 95 / 190.74 = 49.8 %), so the 100 %
    reference uses P̃comp.
    """
    return nb_hosts * node.estimated_comp_w


def all_idle_power_w(nb_hosts: int, node: TaurusNode = TAURUS) -> float:
    """Power of ``nb_hosts`` idle nodes, with the estimate P̃idle (the paper's 49 % budget)."""
    return nb_hosts * node.estimated_idle_w


def budget_energy_j(nb_hosts: int, percent: float, window_s: float, node: TaurusNode = TAURUS) -> float:
    """Energy budget B of the paper's experiments: ``percent`` % of all-computing energy over the window.

    Example: ``budget_energy_j(1152, 60, 3 * 86400)`` is SDSC-Blue's 60 % budget for the 3-day window.
    """
    return all_computing_power_w(nb_hosts, node) * window_s * percent / 100.0
