"""The five-state node of the ESC paper (EnergySaving Cluster simulator, §2.1 and §3), as Batsim pstates.

The ESC paper (Dolz et al., "A flexible simulator to evaluate a power saving system for HPC clusters",
GCM'11) models a node with five states (§2.1, figure 1) and gives their parameters in §3:

==============  ==========================  =====================================================
state           paper (§3)                  Batsim / SimGrid (docs/architecture.md §4)
==============  ==========================  =====================================================
loaded          230 W                       pstate 0 computing (1 Gf, ``150:230``)
idle            150 W                       pstate 0 not computing
standby         2 W                         pstate 1, the sleep pstate (1e-9 Mf, ``2:2``)
powering off    480 s using 10.79 Wh        virtual pstate 2: one flop at 1/480 flop/s, 38844 J / 480 s
                                            = 80.925 W
powering on     555 s using 13.71 Wh        virtual pstate 3: one flop at 1/555 flop/s, 49356 J / 555 s
                                            = 88.92972972972973 W
==============  ==========================  =====================================================

``sleep_pstates="1:2:3"``, ``wattage_off`` 2 W (not used by Batsim, behaviour 23), speeds written ``1000.0Mf,
1e-9Mf, 0.0020833333333333333f, 0.0018018018018018018f`` (the recording writes pstate 0 as ``1Gf``, the same
speed). This is the node of the ``esc-states`` recording of real Batsim 4.2.1 (behaviour 45), with one
difference: the recording's platform writes the boot's mean power rounded to 88.92 W, so that a boot there
costs 555 × 88.92 = 49350.6 J = 13.7085 Wh. Here the boot costs the paper's 13.71 Wh exactly (49356 J, 5.4 J
more per boot, 0.011 %); :func:`esc_node` with ``switch_on_w=88.92`` gives the recording's node
(``tests/test_esc_node.py`` checks both). The speed of pstate 0 (1 Gf) only scales the flops of a job's
profile: the paper assumes a running job uses the node's full power (§2.1 "Loaded").
"""

from __future__ import annotations

from dataclasses import dataclass

from wattsched.energy_models.power import NodeModel
from wattsched.energy_models.taurus import Pstate, PstateKind

__all__ = ["ESC", "EscNode", "esc_node", "WH_J"]

#: Joules in one watt-hour.
WH_J = 3600.0

# ESC paper §3 ("To obtain the results ... we have determined the following parameters").
SWITCH_OFF_S = 480.0
SWITCH_ON_S = 555.0
SWITCH_OFF_WH = 10.79
SWITCH_ON_WH = 13.71
STANDBY_W = 2.0
IDLE_W = 150.0
LOADED_W = 230.0
#: Speed of the computation pstate (the paper gives none; the ``esc-states`` recording's 1 Gf).
SPEED_FLOPS = 1e9


@dataclass(frozen=True)
class EscNode:
    """The five-state node and its SimGrid pstates (same attributes the platform generator reads as
    :class:`~wattsched.energy_models.taurus.TaurusNode`: ``pstates``, ``sleep_pstate``,
    ``switch_off_pstate``, ``switch_on_pstate``, ``off_w``).

    Attributes:
        idle_w, loaded_w, standby_w: powers of the idle, loaded and standby states (§3).
        switch_off_s, switch_on_s: durations of powering off and on (§3).
        switch_off_j, switch_on_j: energy of one powering off and one powering on (§3, in joules).
        pstates: 0 computation, 1 sleep, 2 virtual switch-off, 3 virtual switch-on.
    """

    idle_w: float
    loaded_w: float
    standby_w: float
    switch_off_s: float
    switch_on_s: float
    switch_off_j: float
    switch_on_j: float
    pstates: tuple[Pstate, ...]
    sleep_pstate: int = 1
    switch_off_pstate: int = 2
    switch_on_pstate: int = 3

    @property
    def off_w(self) -> float:
        """``wattage_off``: the standby power."""
        return self.standby_w

    @property
    def max_speed_flops(self) -> float:
        return self.pstates[0].speed_flops

    @property
    def node_model(self) -> NodeModel:
        """The node as the platform model every simulator and scheduler reads."""
        return NodeModel.from_pstates(self.pstates, self.off_w, self.sleep_pstate, self.switch_off_pstate,
                                      self.switch_on_pstate)


def esc_node(switch_off_w: float | None = None, switch_on_w: float | None = None) -> EscNode:
    """The paper's node; ``switch_off_w`` / ``switch_on_w`` override the transitions' mean powers (default:
    the paper's energy over the paper's duration; ``switch_on_w=88.92`` is the ``esc-states`` recording's)."""
    off_w = SWITCH_OFF_WH * WH_J / SWITCH_OFF_S if switch_off_w is None else switch_off_w
    on_w = SWITCH_ON_WH * WH_J / SWITCH_ON_S if switch_on_w is None else switch_on_w
    pstates = (
        Pstate(0, PstateKind.COMPUTATION, SPEED_FLOPS / 1e6, "Mf", IDLE_W, LOADED_W),
        Pstate(1, PstateKind.SLEEP, 1e-9, "Mf", STANDBY_W, STANDBY_W),
        Pstate(2, PstateKind.SWITCH_OFF, 1.0 / SWITCH_OFF_S, "f", off_w, off_w),
        Pstate(3, PstateKind.SWITCH_ON, 1.0 / SWITCH_ON_S, "f", on_w, on_w),
    )
    return EscNode(IDLE_W, LOADED_W, STANDBY_W, SWITCH_OFF_S, SWITCH_ON_S, off_w * SWITCH_OFF_S,
                   on_w * SWITCH_ON_S, pstates)


#: The ESC paper's node (§3), a boot costing exactly 13.71 Wh and a shutdown 10.79 Wh.
ESC: EscNode = esc_node()
