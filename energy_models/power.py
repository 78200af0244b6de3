"""The per-host power model: pstate speeds and powers, sleep and transitions (docs/architecture.md §4).

One :class:`NodeModel` describes a kind of host the way a SimGrid platform does (Batsim behaviours
20-25): a speed and an ``idle:full`` wattage per pstate; optionally a
sleep pstate and two *virtual* pstates for the transitions (``sleep_pstates="sleep:switch_off:switch_on"``).
A transition runs one flop at its virtual pstate, so it lasts ``1 / speed`` seconds at that pstate's
wattage. A :class:`PlatformPower` maps every host id to its model (hosts of one kind share one object).

Both sides read the same model, from the same text:

- the embedded simulator builds it from the platform XML (:mod:`wattsched.simulator.platform`: the
  ``speed`` attribute and the ``<prop>``s);
- a scheduler builds it from the resource ``properties`` Batsim sends in SIMULATION_BEGINS
  (:meth:`PlatformPower.from_properties`). Batsim does not send host speeds, so platforms written by
  :mod:`wattsched.platforms.generate` also carry them as a ``speed_per_state`` property (the ``speed``
  attribute's text); without it the speeds are unknown (NaN) and so are the transition times.

Units are in the names: ``_w`` watts, ``_s`` seconds, ``_j`` joules, ``_flops`` flop/s.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.errors import quoted_cut
from wattsched.base.hostsets import intervals
from wattsched.base.validate import plain_int

__all__ = [
    "ModelTextError",
    "NodeModel",
    "PlatformPower",
    "parse_sleep_pstates",
    "parse_speed_list",
    "parse_wattage_per_state",
]

#: :meth:`PlatformPower.model_counts` counts a host set by its intervals on a platform of at most this many runs of
#: one model (a host array and ``np.unique`` above)
MODEL_RUNS_BY_INTERVALS = 64


# --------------------------------------------------------------------------------------------- text
class ModelTextError(ValueError):
    """A malformed speed or power text: ``field`` is the attribute or property (``"wattage_per_state"``)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


_SPEED_UNITS: dict[str, float] = {"": 1.0}  # a bare number is flop/s (SimGrid warns but accepts it)
for _prefix, _mult in (("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12), ("P", 1e15),
                       ("E", 1e18), ("Z", 1e21), ("Y", 1e24)):
    _SPEED_UNITS[_prefix + "f"] = _mult
    _SPEED_UNITS[_prefix + "flops"] = _mult

#: A speed as SimGrid reads one pstate's (``xbt_parse_get_all_speeds`` trims it, ``strtod`` reads the number and
#: the rest must be a unit): the unit follows the number with no space between them.
#: ``re.ASCII``: ``\d`` alone would take other scripts' digits (``'١Gf'``, ``'１Gf'``), which ``strtod`` does not read.
_NUMBER_UNIT = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-z]*)\s*$", re.ASCII)
_SPACED_UNIT = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(\s+[A-Za-z]+)\s*$", re.ASCII)
#: A number of watts as SimGrid's ``xbt_str_parse_double`` (``strtod``) reads it: ASCII digits, no ``_`` (Python's
#: :func:`float` would read ``'1_0'`` as 10 and ``'١'`` as 1, values SimGrid refuses); NaN and the infinities are
#: read, to be refused as no finite watts.
_PLAIN_FLOAT = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)\s*",
                          re.ASCII | re.IGNORECASE)


def _shown(text: str) -> str:
    """``text`` stripped, quoted and cut for a message (:func:`~wattsched.base.errors.quoted_cut`)."""
    return quoted_cut(text.strip())


def _plain_float(text: str) -> float:
    """``text`` as ``strtod`` reads a whole field (ASCII digits, an exponent; no ``_``). ValueError."""
    if _PLAIN_FLOAT.fullmatch(text) is None:
        raise ValueError(f"{_shown(text)} is not a number")
    return float(text)


def _speed_value(text: str) -> float:
    match = _NUMBER_UNIT.match(text)
    if match is None:
        spaced = _SPACED_UNIT.match(text)
        if spaced is not None:  # SimGrid 3.32 (src/xbt/xbt_parse_units.cpp): "unknown unit:  Gf"
            joined = "".join(text.split())
            raise ValueError(f"{_shown(text)}: a space between the number and its unit (SimGrid reads "
                             f"{spaced.group(1)!r} as the unit and refuses it; write {joined!r})")
        raise ValueError(f"cannot read speed {_shown(text)}")
    number, unit = match.groups()
    try:
        mult = _SPEED_UNITS[unit]
    except KeyError:
        raise ValueError(
            f"unknown speed unit {_shown(unit)} in {_shown(text)} (use f, kf, Mf, Gf, Tf, Pf, Ef, Zf, Yf)"
        ) from None
    value = float(number) * mult
    if not 0.0 < value < math.inf:
        raise ValueError(f"speed {_shown(text)} must be a positive number of flop/s")
    return value


def parse_speed_list(text: str) -> tuple[float, ...]:
    """``"100Mf, 50Mf, 1e-9Mf"`` → speeds in flop/s, one per pstate (SimGrid's ``speed``). ValueError."""
    parts = text.split(",")
    if not text.strip() or any(not p.strip() for p in parts):
        raise ValueError(f"empty speed in {_shown(text)}")
    return tuple(_speed_value(p) for p in parts)


def parse_wattage_per_state(text: str, nb_pstates: int | None = None
                            ) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """``"95:190.738, 9.75:9.75"`` (or SimGrid 3.32's ``idle:epsilon:full``) → (idle, epsilon, full) watts per
    pstate. SimGrid's energy plugin (``host_energy.cpp``, ``HostEnergy::get_current_watts_value``) draws
    ``idle`` at load 0 and ``epsilon + load × (full − epsilon)`` at any load above 0; with two values, epsilon
    is the idle value.

    Raises:
        ValueError: a malformed entry, a negative or infinite value, or not ``nb_pstates`` entries.
    """
    entries = text.split(",")
    if nb_pstates is not None and len(entries) != nb_pstates:
        raise ValueError(f"{len(entries)} entries for {nb_pstates} pstates (one 'idle:full' per pstate)")
    idle: list[float] = []
    epsilon: list[float] = []
    full: list[float] = []
    for i, entry in enumerate(entries):
        values = entry.split(":")
        if len(values) not in (2, 3):
            raise ValueError(f"entry {i} {_shown(entry)} is not 'idle:full'")
        try:
            numbers = [_plain_float(v) for v in values]
        except ValueError:
            raise ValueError(f"entry {i} {_shown(entry)} is not numeric") from None
        if any(not 0.0 <= n < math.inf for n in numbers):
            raise ValueError(f"entry {i} {_shown(entry)} must hold finite non-negative watts")
        idle.append(numbers[0])
        epsilon.append(numbers[-2] if len(numbers) == 3 else numbers[0])
        full.append(numbers[-1])
    return tuple(idle), tuple(epsilon), tuple(full)


def parse_sleep_pstates(text: str, nb_pstates: int) -> tuple[int, int, int]:
    """``"13:14:15"`` → (sleep, switch_off, switch_on) pstates, checked against ``nb_pstates``. ValueError."""
    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        sleep, off, on = (plain_int(p.strip()) for p in parts)  # int() would read '1_0' as 10, '١' as 1
    except ValueError:
        raise ValueError(f"{_shown(text)} is not 'sleep:switch_off:switch_on' (3 integers)") from None
    for label, p in (("sleep", sleep), ("switch_off", off), ("switch_on", on)):
        if not 0 <= p < nb_pstates:
            raise ValueError(f"{label} pstate {p} does not exist (host has {nb_pstates} pstates)")
    if sleep in (off, on):
        raise ValueError(f"sleep pstate {sleep} is also a transition pstate")
    return sleep, off, on


# -------------------------------------------------------------------------------------------- model
@dataclass(frozen=True)
class NodeModel:
    """Speeds and powers of a kind of host; one object shared by all hosts with identical tables.

    Attributes:
        speeds_flops: speed per pstate (NaN when unknown: a scheduler's model of a platform without
            ``speed_per_state``).
        idle_w, full_w: ``wattage_per_state`` per pstate: power idle (or in a delay) and computing at
            full load (Batsim behaviour 25).
        wattage_off_w: the ``wattage_off`` property (Batsim does not use it: a sleeping host draws its
            sleep pstate's wattage, behaviour 23).
        sleep_pstate, switch_off_pstate, switch_on_pstate: ``sleep_pstates``, or None.
        epsilon_w: the middle values of a three-value ``wattage_per_state`` (``idle:epsilon:full``): the power
            at a load just above 0, from which a partial load rises to ``full_w``, and Batsim's ``wattmin``; None
            when they are the idle values (two values per pstate). :meth:`power_w` is the schedulers' model and
            ignores them; the embedded simulator bills them.
    """

    speeds_flops: tuple[float, ...]
    idle_w: tuple[float, ...]
    full_w: tuple[float, ...]
    wattage_off_w: float | None = None
    sleep_pstate: int | None = None
    switch_off_pstate: int | None = None
    switch_on_pstate: int | None = None
    epsilon_w: tuple[float, ...] | None = None

    @classmethod
    def from_pstates(cls, pstates: Sequence[Any], wattage_off_w: float | None, sleep_pstate: int | None,
                     switch_off_pstate: int | None, switch_on_pstate: int | None) -> "NodeModel":
        """The model of a node described by its pstates (each with ``speed_flops``, ``idle_w`` and ``full_w``,
        as :class:`~wattsched.energy_models.taurus.Pstate`) and its sleep pstates."""
        return cls(tuple(p.speed_flops for p in pstates), tuple(p.idle_w for p in pstates),
                   tuple(p.full_w for p in pstates), wattage_off_w, sleep_pstate, switch_off_pstate, switch_on_pstate)

    @classmethod
    def from_text(cls, speed: str | None, wattage_per_state: str | None, wattage_off: str | None = None,
                  sleep_pstates: str | None = None, nb_pstates: int | None = None) -> "NodeModel":
        """The model of a host described by SimGrid's texts: its ``speed`` (None: unknown) and props.

        Without speeds, ``nb_pstates`` or the ``wattage_per_state`` entries give the number of pstates; a
        host without ``wattage_per_state`` draws 0 W.

        Raises:
            ModelTextError: naming the malformed text (``field`` is ``speed``, ``wattage_per_state``,
                ``wattage_off`` or ``sleep_pstates``).
        """
        speeds: tuple[float, ...] | None = None
        if speed is not None:
            try:
                speeds = parse_speed_list(speed)
            except ValueError as exc:
                raise ModelTextError("speed", str(exc)) from None
            nb_pstates = len(speeds)
        if wattage_per_state is None:
            if nb_pstates is None:
                raise ModelTextError("wattage_per_state", "missing (the number of pstates is unknown)")
            idle = epsilon = full = (0.0,) * nb_pstates
        else:
            try:
                idle, epsilon, full = parse_wattage_per_state(wattage_per_state, nb_pstates)
            except ValueError as exc:
                raise ModelTextError("wattage_per_state", str(exc)) from None
        n = len(idle)
        off_w: float | None = None
        if wattage_off is not None:
            try:
                off_w = _plain_float(wattage_off)
            except ValueError:
                raise ModelTextError("wattage_off", f"{_shown(wattage_off)} is not a number") from None
            if not 0.0 <= off_w < math.inf:
                raise ModelTextError("wattage_off", f"{_shown(wattage_off)} must be non-negative")
        sleep = off = on = None
        if sleep_pstates is not None:
            try:
                sleep, off, on = parse_sleep_pstates(sleep_pstates, n)
            except ValueError as exc:
                raise ModelTextError("sleep_pstates", str(exc)) from None
        return cls(speeds if speeds is not None else (math.nan,) * n, idle, full, off_w, sleep, off, on,
                   None if epsilon == idle else epsilon)

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> "NodeModel":
        """The model a scheduler reads from a host's Batsim ``properties`` (``speed_per_state`` optional;
        a host with neither speeds nor wattages has one pstate at 0 W).

        Raises:
            ModelTextError: a malformed property (``field`` is ``speed_per_state`` for the speeds); ``sleep_pstates``
                on a host with neither speeds nor wattages (its number of pstates is unknown).
        """
        def text(key: str) -> str | None:
            value = properties.get(key)
            return None if value is None else str(value)

        if text("sleep_pstates") is not None and text("wattage_per_state") is None and text("speed_per_state") is None:
            # it was read against one pstate: "sleep pstate 13 does not exist (host has 1 pstates)" of a 16-pstate host
            raise ModelTextError("sleep_pstates", "the host's pstates cannot be counted (Batsim sends no speeds) "
                                                  "without a wattage_per_state or speed_per_state property: give one "
                                                  "of them")
        try:
            return cls.from_text(text("speed_per_state"), text("wattage_per_state"), text("wattage_off"),
                                 text("sleep_pstates"),
                                 nb_pstates=None if "wattage_per_state" in properties else 1)
        except ModelTextError as exc:
            if exc.field == "speed":
                raise ModelTextError("speed_per_state", exc.problem) from None
            raise

    # ------------------------------------------------------------------------------ pstates
    @property
    def nb_pstates(self) -> int:
        return len(self.idle_w)

    @property
    def has_sleep(self) -> bool:
        return self.sleep_pstate is not None

    @property
    def speeds_known(self) -> bool:
        return not any(math.isnan(s) for s in self.speeds_flops)

    def is_computation(self, pstate: int) -> bool:
        """True when ``pstate`` exists and is neither the sleep pstate nor a transition pstate."""
        if not isinstance(pstate, int) or isinstance(pstate, bool):
            return False
        if pstate < 0 or pstate >= self.nb_pstates:
            return False
        return pstate not in (self.sleep_pstate, self.switch_off_pstate, self.switch_on_pstate)

    @cached_property
    def computation_pstates(self) -> tuple[int, ...]:
        return tuple(p for p in range(self.nb_pstates) if self.is_computation(p))

    @cached_property
    def top_pstate(self) -> int:
        """The fastest computation pstate (the first one when speeds are unknown or equal): walltimes
        are given for it."""
        pstates = self.computation_pstates
        if not self.speeds_known:
            return pstates[0]
        return max(pstates, key=lambda p: (self.speeds_flops[p], -p))

    def slowdown(self, pstate: int) -> float:
        """How many times longer a computation takes at ``pstate`` than at :attr:`top_pstate` (NaN when
        the speeds are unknown and ``pstate`` is not the top one)."""
        if pstate == self.top_pstate:
            return 1.0
        return self.speeds_flops[self.top_pstate] / self.speeds_flops[pstate]

    # ------------------------------------------------------------------------------ power
    def power_w(self, pstate: int, load: float = 1.0) -> float:
        """``idle + (full − idle) × load`` at ``pstate`` (Batsim behaviours 20, 25)."""
        return self.idle_w[pstate] + (self.full_w[pstate] - self.idle_w[pstate]) * load

    @property
    def sleep_w(self) -> float:
        """Power asleep: the sleep pstate's wattage (``wattage_off`` is not used, behaviour 23)."""
        return self.idle_w[self._need(self.sleep_pstate)]

    @property
    def switch_off_w(self) -> float:
        """Mean power of a switch-off: the wattage of its virtual pstate."""
        return self.full_w[self._need(self.switch_off_pstate)]

    @property
    def switch_on_w(self) -> float:
        """Mean power of a boot: the wattage of its virtual pstate."""
        return self.full_w[self._need(self.switch_on_pstate)]

    @property
    def switch_off_s(self) -> float:
        """Duration of a switch-off: one flop at its virtual pstate (NaN when speeds are unknown)."""
        return 1.0 / self.speeds_flops[self._need(self.switch_off_pstate)]

    @property
    def switch_on_s(self) -> float:
        """Duration of a boot: one flop at its virtual pstate (NaN when speeds are unknown)."""
        return 1.0 / self.speeds_flops[self._need(self.switch_on_pstate)]

    def _need(self, pstate: int | None) -> int:
        if pstate is None:
            raise ValueError("the host has no sleep_pstates (no sleep or transition pstate)")
        return pstate


@dataclass(frozen=True, eq=False)
class PlatformPower:
    """The power model of every compute host: ``models[model_of[h]]`` is host ``h``'s.

    Attributes:
        models: the distinct node models, in order of first host.
        model_of: index into ``models`` per host id (int32 array).
    """

    models: tuple[NodeModel, ...]
    model_of: np.ndarray

    @classmethod
    def uniform(cls, model: NodeModel, nb_hosts: int) -> "PlatformPower":
        return cls((model,), np.zeros(nb_hosts, dtype=np.int32))

    @classmethod
    def from_properties(cls, properties: Sequence[Mapping[str, Any]], source: str = "SIMULATION_BEGINS"
                        ) -> "PlatformPower":
        """The model of each host from its Batsim ``properties`` (hosts with the same texts share a model).

        Raises:
            InputError: a property is malformed (names the resource and the property).
        """
        from wattsched.base.errors import InputError

        models: list[NodeModel] = []
        by_text: dict[tuple, int] = {}
        model_of = np.zeros(len(properties), dtype=np.int32)
        keys = ("speed_per_state", "wattage_per_state", "wattage_off", "sleep_pstates")
        for h, props in enumerate(properties):
            key = tuple(props.get(k) for k in keys)
            index = by_text.get(key)
            if index is None:
                try:
                    model = NodeModel.from_properties(props)
                except ModelTextError as exc:
                    raise InputError(source, f"compute resource {h} property '{exc.field}'", exc.problem) from None
                index = by_text[key] = len(models)
                models.append(model)
            model_of[h] = index
        return cls(tuple(models), model_of)

    @property
    def nb_hosts(self) -> int:
        return len(self.model_of)

    def host(self, host: int) -> NodeModel:
        return self.models[int(self.model_of[host])]

    @property
    def uniform_model(self) -> NodeModel | None:
        """The model of every host when all hosts share one, else None."""
        return self.models[0] if len(self.models) == 1 else None

    @cached_property
    def _model_runs(self) -> tuple[list[int], list[int], list[int]]:
        """The hosts as maximal runs of one model: ``(first host of each run, last host, model index)``, by
        host id (a partitioned platform has one run per partition)."""
        m = self.model_of
        if len(m) == 0:
            return [], [], []
        cuts = np.flatnonzero(m[1:] != m[:-1]) + 1
        firsts = np.concatenate(([0], cuts))
        lasts = np.concatenate((cuts - 1, [len(m) - 1]))
        return firsts.tolist(), lasts.tolist(), m[firsts].tolist()

    def model_counts(self, hosts: Any) -> list[tuple[NodeModel, int]]:
        """``(model, number of hosts)`` for the distinct models of ``hosts`` (a ProcSet or host ids), by
        increasing model index. A ProcSet on a platform of few runs of one model (:attr:`_model_runs`) is
        counted interval by interval against the runs, without a host array (issue 15: EAMC asks at every
        placement)."""
        if len(self.models) == 1:
            return [(self.models[0], len(hosts))]
        if isinstance(hosts, ProcSet) and len(self._model_runs[0]) <= MODEL_RUNS_BY_INTERVALS:
            firsts, lasts, index = self._model_runs
            per_model = [0] * len(self.models)
            for lo, hi in intervals(hosts):
                k = bisect_right(firsts, lo) - 1
                while k < len(firsts) and firsts[k] <= hi:
                    per_model[index[k]] += min(hi, lasts[k]) - max(lo, firsts[k]) + 1
                    k += 1
            return [(self.models[i], c) for i, c in enumerate(per_model) if c]
        if isinstance(hosts, ProcSet):
            hosts = np.concatenate([np.arange(a, b + 1) for a, b in hosts.intervals()]) if len(hosts) else []
        indexes, counts = np.unique(self.model_of[hosts], return_counts=True)
        return [(self.models[int(i)], int(c)) for i, c in zip(indexes, counts)]

    def slowdown(self, hosts: Any, pstate: int) -> float:
        """How many times longer a computation of ``hosts`` takes at ``pstate`` than at their top pstates:
        a multi-host task runs at the pace of its slowest host (Batsim behaviour 20)."""
        return max(model.slowdown(pstate) for model, _ in self.model_counts(hosts))

    def job_energy_j(self, hosts: Any, pstate: int, run_s: float, compute_s: float | None = None) -> float:
        """Energy of a job on ``hosts`` at ``pstate`` running ``run_s`` seconds, of which ``compute_s``
        (default: all) at full load and the rest idle (a delay part, behaviour 21)."""
        compute = run_s if compute_s is None else compute_s
        return sum(n * (m.full_w[pstate] * compute + m.idle_w[pstate] * (run_s - compute))
                   for m, n in self.model_counts(hosts))
