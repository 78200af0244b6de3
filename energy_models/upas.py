"""The UPAS paper's DVFS model: its gear set, its CPU power model, the β law of its jobs, and its node.

Etinski, Corbalan, Labarta, Valero, "Utilization driven power-aware parallel job scheduling", Computer
Science - Research and Development 25(3-4), 2010 (the *UPAS paper*), §3.3-3.4. One host is one processor,
as the paper counts processors.

**Gear set** (table 2): six frequency / voltage pairs, 0.8 GHz / 1.0 V … 2.3 GHz / 1.5 V (:data:`GEARS`).

**Power model** (eq. 3): a CPU draws a dynamic power ``A·C·f·V²`` and a static power ``α·V``. The paper
fixes (§3.3): the static power is 25 % of the running power at the top gear; every running CPU has the same
activity factor ``A``, and an idle CPU an activity 2.5 times lower. Normalized to the running power at the
top gear (``f_top``, ``V_top``), with ``s`` = 0.25 and ``r`` = 2.5::

    P_run(f, V)  = (1 − s) · f·V² / (f_top·V_top²) + s · V / V_top
    P_idle(f, V) = (1 − s) / r · f·V² / (f_top·V_top²) + s · V / V_top

which gives table 2's last row (0.28, 0.38, 0.49, 0.63, 0.80, 1 to two decimals; :data:`PAPER_NORMALIZED_POWER`)
and an idle CPU at the lowest gear drawing 21.3 % of the top running power ("21 % of top running power in our
case", §4.1). ``tests/test_upas_model.py`` derives both from the model.

**Time model** (eq. 4, :class:`~wattsched.energy_models.dvfs.BetaModel`): ``T(f) = T(f_top)·(β·(f_top/f − 1) + 1)``.
The β of a job is drawn by its size (§3.4, :data:`BETA_LAW`): N(0.5, 0.01) for at most 4 CPUs, N(0.4, 0.01) for
5-32, N(0.3, 0.0064) above. **Our reading**: the second parameter is the variance (σ = 0.1, 0.1, 0.08: 0.0064 is
0.08²); a draw is clipped to [0.01, 1] (β is a fraction; the lower bound, reached with probability 1.6·10⁻⁴ for
wide jobs, keeps a job's gear readable from its run time, :mod:`wattsched.analysis.dvfs`).

**The node as Batsim pstates** (:func:`upas_node`, docs/architecture.md §4): pstates 0-5 are the gears from the
fastest (pstate 0 = 2.3 GHz) to the slowest, at a speed proportional to the frequency (1 flop per cycle:
2300 Mflop/s … 800 Mflop/s) and ``idle:full`` watts of ``top_power_w`` × the model's normalized powers; pstate
6 sleeps at 0 W (the paper: "low power modes in which power consumption is negligible"), pstates 7 and 8 are
the virtual switch-off and switch-on pstates (``transition_s`` each, 1 s by default, at the idle power of the
lowest gear: the paper deems transitions negligible and gives no number). A ``frequency_ghz_per_state``
property names the gear of each computation pstate, so that a scheduler can find f_upper and f_lower.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from wattsched.energy_models.power import NodeModel
from wattsched.energy_models.taurus import Pstate, PstateKind

__all__ = [
    "Gear",
    "GEARS",
    "PAPER_NORMALIZED_POWER",
    "UpasPowerModel",
    "UPAS_POWER",
    "BetaLaw",
    "BETA_LAW",
    "UpasNode",
    "upas_node",
    "UPAS_NODE",
    "FREQUENCY_PROPERTY",
    "parse_frequencies",
    "enlarged_size",
]

#: Name of the platform property listing the frequency (GHz) of each computation pstate, in pstate order.
FREQUENCY_PROPERTY = "frequency_ghz_per_state"


@dataclass(frozen=True)
class Gear:
    """One DVFS gear: frequency (GHz) and supply voltage (V)."""

    frequency_ghz: float
    voltage_v: float


#: Table 2, from the slowest gear to the fastest.
GEARS: tuple[Gear, ...] = tuple(Gear(f, v) for f, v in ((0.8, 1.0), (1.1, 1.1), (1.4, 1.2), (1.7, 1.3), (2.0, 1.4),
                                                       (2.3, 1.5)))
#: Table 2's last row: normalized average power per processor, as printed (two decimals), same order.
PAPER_NORMALIZED_POWER: tuple[float, ...] = (0.28, 0.38, 0.49, 0.63, 0.80, 1.0)


@dataclass(frozen=True)
class UpasPowerModel:
    """Eq. 3 with the paper's assumptions (module docstring); powers are normalized to the running power at
    the top gear.

    Attributes:
        gears: the gear set (table 2).
        static_fraction: static share of the running power at the top gear (0.25, §3.3).
        idle_activity_ratio: activity of a running CPU over that of an idle one (2.5, §3.3).
    """

    gears: tuple[Gear, ...] = GEARS
    static_fraction: float = 0.25
    idle_activity_ratio: float = 2.5

    def __post_init__(self) -> None:
        if not self.gears:
            raise ValueError("a gear set needs at least one gear")
        if not 0.0 <= self.static_fraction <= 1.0:
            raise ValueError(f"static_fraction must be in [0, 1], got {self.static_fraction!r}")
        if not self.idle_activity_ratio >= 1.0:
            raise ValueError(f"idle_activity_ratio must be at least 1, got {self.idle_activity_ratio!r}")

    @property
    def top(self) -> Gear:
        """The fastest gear."""
        return max(self.gears, key=lambda g: g.frequency_ghz)

    @property
    def lowest(self) -> Gear:
        """The slowest gear."""
        return min(self.gears, key=lambda g: g.frequency_ghz)

    def gear(self, frequency_ghz: float) -> Gear:
        """The gear of that frequency.

        Raises:
            ValueError: no such gear.
        """
        for g in self.gears:
            if math.isclose(g.frequency_ghz, frequency_ghz, rel_tol=1e-9):
                return g
        raise ValueError(f"{frequency_ghz:g} GHz is not a gear (gears: "
                         f"{', '.join(f'{g.frequency_ghz:g}' for g in self.gears)} GHz)")

    def dynamic(self, gear: Gear, running: bool = True) -> float:
        """``A·C·f·V²``, normalized: the running activity, or the idle one (``running=False``)."""
        top = self.top
        share = (1.0 - self.static_fraction) * (gear.frequency_ghz * gear.voltage_v ** 2) / (
            top.frequency_ghz * top.voltage_v ** 2)
        return share if running else share / self.idle_activity_ratio

    def static(self, gear: Gear) -> float:
        """``α·V``, normalized (α is fixed by the static share at the top gear)."""
        return self.static_fraction * gear.voltage_v / self.top.voltage_v

    def running(self, gear: Gear) -> float:
        """Power of a CPU running a job at ``gear`` (1 at the top gear)."""
        return self.dynamic(gear) + self.static(gear)

    def idle(self, gear: Gear) -> float:
        """Power of an idle CPU at ``gear``."""
        return self.dynamic(gear, running=False) + self.static(gear)

    @property
    def idle_lowest(self) -> float:
        """Idle power at the lowest gear: the paper's idle CPU in its second energy scenario (≈ 0.21)."""
        return self.idle(self.lowest)


#: The paper's model.
UPAS_POWER = UpasPowerModel()


@dataclass(frozen=True)
class BetaLaw:
    """β per job by size (§3.4): ``(max CPUs, mean, variance)`` bands in increasing order, the last one
    open-ended; draws clipped to ``[low, high]``."""

    bands: tuple[tuple[float, float, float], ...] = ((4, 0.5, 0.01), (32, 0.4, 0.01), (math.inf, 0.3, 0.0064))
    low: float = 0.01
    high: float = 1.0

    def parameters(self, cpus: int) -> tuple[float, float]:
        """(mean, standard deviation) of β for a job of ``cpus`` CPUs."""
        for limit, mean, variance in self.bands:
            if cpus <= limit:
                return mean, math.sqrt(variance)
        raise ValueError(f"no β band for {cpus} CPUs")  # pragma: no cover - the last band is open-ended

    def draw(self, sizes: np.ndarray | list[int], rng: np.random.Generator) -> np.ndarray:
        """One β per job of ``sizes`` CPUs, in order (one normal draw each, then clipped)."""
        sizes = np.asarray(sizes)
        means = np.empty(len(sizes))
        sigmas = np.empty(len(sizes))
        for i, cpus in enumerate(sizes):
            means[i], sigmas[i] = self.parameters(int(cpus))
        return np.clip(rng.normal(means, sigmas), self.low, self.high)


#: The paper's law.
BETA_LAW = BetaLaw()


@dataclass(frozen=True)
class UpasNode:
    """A processor of the paper's model as SimGrid pstates (attributes read by :mod:`wattsched.platforms.generate`
    as for :class:`~wattsched.energy_models.taurus.TaurusNode`).

    Attributes:
        top_power_w: running power at the top gear, watts.
        transition_s: duration of a switch-off and of a switch-on.
        pstates: 0-5 gears from the fastest, 6 sleep, 7 virtual switch-off, 8 virtual switch-on.
        frequencies_ghz: the gear of each computation pstate, in pstate order.
        model: the power model the watts come from.
    """

    top_power_w: float
    transition_s: float
    pstates: tuple[Pstate, ...]
    frequencies_ghz: tuple[float, ...]
    model: UpasPowerModel
    sleep_pstate: int
    switch_off_pstate: int
    switch_on_pstate: int

    @property
    def off_w(self) -> float:
        """``wattage_off``: the sleep power (0 W)."""
        return self.pstates[self.sleep_pstate].idle_w

    @property
    def extra_properties(self) -> Mapping[str, str]:
        """Properties written beside the energy ones: the frequency of each computation pstate."""
        return {FREQUENCY_PROPERTY: ", ".join(f"{f:g}" for f in self.frequencies_ghz)}

    @property
    def max_speed_flops(self) -> float:
        return self.pstates[0].speed_flops

    def pstate_of(self, frequency_ghz: float) -> int:
        """The pstate of the gear of that frequency (ValueError when there is none)."""
        for p, f in enumerate(self.frequencies_ghz):
            if math.isclose(f, frequency_ghz, rel_tol=1e-9):
                return p
        raise ValueError(f"{frequency_ghz:g} GHz is not a gear of the node")

    @property
    def node_model(self) -> NodeModel:
        """The node as the platform model every simulator and scheduler reads."""
        return NodeModel.from_pstates(self.pstates, self.off_w, self.sleep_pstate, self.switch_off_pstate,
                                      self.switch_on_pstate)


def upas_node(top_power_w: float = 100.0, *, transition_s: float = 1.0,
              model: UpasPowerModel = UPAS_POWER) -> UpasNode:
    """The paper's processor with a running power of ``top_power_w`` at the top gear (module docstring).

    Raises:
        ValueError: a non-positive power or transition time.
    """
    if not (math.isfinite(top_power_w) and top_power_w > 0):
        raise ValueError(f"top power must be a positive number of watts, got {top_power_w!r}")
    if not (math.isfinite(transition_s) and transition_s > 0):
        raise ValueError(f"transition time must be a positive number of seconds, got {transition_s!r}")
    gears = sorted(model.gears, key=lambda g: -g.frequency_ghz)
    pstates = [Pstate(i, PstateKind.COMPUTATION, g.frequency_ghz * 1000.0, "Mf", top_power_w * model.idle(g),
                      top_power_w * model.running(g)) for i, g in enumerate(gears)]
    n = len(gears)
    transition_w = top_power_w * model.idle_lowest
    pstates += [Pstate(n, PstateKind.SLEEP, 1e-9, "Mf", 0.0, 0.0),
                Pstate(n + 1, PstateKind.SWITCH_OFF, 1.0 / transition_s, "f", transition_w, transition_w),
                Pstate(n + 2, PstateKind.SWITCH_ON, 1.0 / transition_s, "f", transition_w, transition_w)]
    return UpasNode(top_power_w, transition_s, tuple(pstates), tuple(g.frequency_ghz for g in gears), model,
                    sleep_pstate=n, switch_off_pstate=n + 1, switch_on_pstate=n + 2)


#: The paper's processor at 100 W of top running power (watts then read as percentages of it).
UPAS_NODE = upas_node()


#: A frequency as a platform writes it: ASCII digits (``re.ASCII``), an optional fraction and exponent (NaN and the
#: infinities are read, to be refused as no positive frequency).
_PLAIN_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)\s*",
                           re.ASCII | re.IGNORECASE)


def parse_frequencies(text: str) -> tuple[float, ...]:
    """``"2.3, 2, 1.7"`` (the :data:`FREQUENCY_PROPERTY`) → GHz per computation pstate. ValueError."""
    shown = repr(text) if len(text) <= 60 else f"{text[:40]!r}... ({len(text)} characters)"
    parts = text.split(",")
    if not all(_PLAIN_NUMBER.fullmatch(part) for part in parts):  # float() would read '2_3' as 23, '٢' as 2
        raise ValueError(f"{shown} is not a comma-separated list of frequencies in GHz")
    values = tuple(float(part) for part in parts)
    if not values or any(not (math.isfinite(v) and v > 0) for v in values):
        raise ValueError(f"{shown}: every frequency must be a positive number of GHz")
    return values


def enlarged_size(nb_processors: int, percent: float) -> int:
    """A machine of ``nb_processors`` enlarged by ``percent`` % (§4.2), rounded half up: 430 → 473, 516, 645, 753."""
    return int(math.floor(nb_processors * (1.0 + percent / 100.0) + 0.5))
