"""Named schedulers: each preset is one line of composition plus its validated options.

A :class:`Preset` names a queue order, a backfilling rule, an allocator, an admission constraint, a power
manager and a frequency choice. A slot holds either a piece, an :class:`Option` (the piece is chosen by
that option's value, e.g. ``allocation``), or a :class:`FromOptions` factory (for pieces with parameters
or state, built fresh for each run from the validated options). :func:`build` validates user options
(unknown name, wrong type, out-of-range value → :class:`~wattsched.base.errors.OptionError` with the valid
options on one line) and returns a fresh :class:`~schedulers.core.PolicyScheduler`.

Presets:

- ``fcfs``: first come, first served, no backfilling.
- ``easy-backfill``: EASY backfilling (Lifka 1995; energy-budget paper §II, Algorithm 1).
- ``energy-bud``: EASY + energy budget, energyBud (energy-budget paper §IV-B, Algorithm 2).
- ``reduce-pc``: EASY + energy budget, reducePC (energy-budget paper §IV-D).
- ``powercap``: EASY under the powercap ``B / (te − ts)`` inside the window (energy-budget paper §V-C).

The three budget presets share :data:`BUDGET_OPTIONS` (budget, window, monitoring period, estimates P̃,
``shutdown`` for opportunistic shutdown, ``sleep_pstate``); without ``budget_j`` / ``budget_fraction`` the
budget is unlimited and the schedule is EASY's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from wattsched.schedulers.admission import NoConstraint
from wattsched.schedulers.budget import EnergyBudget, PowerModel, Powercap
from wattsched.schedulers.allocation import ALLOCATORS
from wattsched.schedulers.backfill import Backfill, easy_backfill, fcfs_no_backfill
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.frequency import TopFrequency
from wattsched.schedulers.order import QueueOrder, fcfs
from wattsched.schedulers.power import NoPowerManager, OpportunisticShutdown
from wattsched.base.errors import OptionError

Options = Mapping[str, Any]

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


@dataclass(frozen=True)
class Option:
    """One scheduler option.

    Attributes:
        name: key in the JSON options.
        type: ``str``, ``int``, ``float`` or ``bool`` (an ``int`` is accepted for ``float``; ``bool`` is
            never accepted for numbers).
        default: value when absent.
        choices: allowed values; when they map to pieces, the option can fill a preset slot.
        min, max: inclusive range for numbers.
        help: one line for ``wattsched schedulers`` and the docs.
    """

    name: str
    type: type
    default: Any
    choices: Mapping[str, Any] | None = None
    min: float | None = None
    max: float | None = None
    help: str = ""

    def describe(self) -> str:
        """Short form for error messages: ``allocation (first-fit|best-fit|non-contiguous, default first-fit)``."""
        if self.choices is not None:
            allowed = "|".join(self.choices)
        elif self.min is not None or self.max is not None:
            lo = "-inf" if self.min is None else f"{self.min:g}"
            hi = "inf" if self.max is None else f"{self.max:g}"
            allowed = f"{self.type.__name__} in [{lo}, {hi}]"
        else:
            allowed = self.type.__name__
        return f"{self.name} ({allowed}, default {_show(self.default)})"

    def check(self, value: Any, preset: str, valid: str) -> Any:
        """``value`` converted to the option's type, or :class:`OptionError`."""
        ok = isinstance(value, self.type) and not (self.type is not bool and isinstance(value, bool))
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise OptionError(
                f"option '{self.name}' of {preset} must be {_TYPE_NAMES.get(self.type, self.type.__name__)}, "
                f"got {_got(value)}; valid options: {valid}"
            )
        if self.choices is not None and value not in self.choices:
            raise OptionError(
                f"option '{self.name}' of {preset} must be one of {'|'.join(self.choices)}, got {_got(value)}; "
                f"valid options: {valid}"
            )
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise OptionError(
                f"option '{self.name}' of {preset} is out of range, got {_got(value)}; valid options: {valid}"
            )
        return value


def _got(value: Any) -> str:
    """A user's value as JSON (``"5"`` is a string, ``5`` a number)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


@dataclass(frozen=True)
class FromOptions:
    """A slot filled by ``factory(options)`` at build time (pieces with parameters or state)."""

    factory: Callable[[Options], Any]


ALLOCATION = Option(
    "allocation",
    str,
    "first-fit",
    choices=ALLOCATORS,
    help="host placement: lowest contiguous interval (first-fit, like pybatsim's easyBackfill), "
    "smallest contiguous interval (best-fit), or lowest free ids (non-contiguous)",
)


@dataclass(frozen=True)
class Preset:
    """A named scheduler: the composition of the five policy slots and its options."""

    name: str
    description: str
    reference: str
    order: QueueOrder | Option | FromOptions
    backfill: Backfill | Option | FromOptions
    allocation: Any = ALLOCATION
    admission: Any = FromOptions(lambda options: NoConstraint())
    power: Any = FromOptions(lambda options: NoPowerManager())
    frequency: Any = FromOptions(lambda options: TopFrequency())
    extra_options: tuple[Option, ...] = field(default=())

    @property
    def options(self) -> tuple[Option, ...]:
        """Every option of the preset: the option-chosen slots first, then the extra ones."""
        slots = (self.order, self.backfill, self.allocation, self.admission, self.power, self.frequency)
        return tuple(s for s in slots if isinstance(s, Option)) + self.extra_options

    def describe_options(self) -> str:
        """``allocation (first-fit|best-fit|non-contiguous, default first-fit), ...`` or ``none``."""
        return ", ".join(o.describe() for o in self.options) or "none"

    def validate(self, options: Options | None) -> dict[str, Any]:
        """Every option with its value (defaults filled in); :class:`OptionError` on a bad one."""
        if options is None:
            options = {}
        valid = self.describe_options()
        if not isinstance(options, Mapping):
            raise OptionError(f"options of {self.name} must be a JSON object, got {_got(options)}; valid options: {valid}")
        known = {o.name: o for o in self.options}
        for key in options:
            if key not in known:
                raise OptionError(f"unknown option '{key}' for {self.name}; valid options: {valid}")
        return {name: opt.check(options[name], self.name, valid) if name in options else opt.default
                for name, opt in known.items()}

    def build(self, options: Options | None = None) -> PolicyScheduler:
        """A fresh policy scheduler with these options."""
        values = self.validate(options)

        def fill(slot: Any) -> Any:
            if isinstance(slot, Option):
                slot = slot.choices[values[slot.name]]  # type: ignore[index]
            if isinstance(slot, FromOptions):
                slot = slot.factory(values)
            return slot

        return PolicyScheduler(
            order=fill(self.order),
            backfill=fill(self.backfill),
            allocator=fill(self.allocation),
            admission=fill(self.admission),
            power=fill(self.power),
            frequency=fill(self.frequency),
            name=self.name,
        )


BUDGET_OPTIONS: tuple[Option, ...] = (
    Option("budget_j", float, None, help="energy budget B in joules over the window (absent: unlimited, plain EASY)"),
    Option("budget_fraction", float, None,
           help="B as a fraction of the window's all-computing energy, hosts × P̃comp × window (paper: 1.0 … 0.3)"),
    Option("window_start_s", float, 0.0, help="start ts of the budget window, in seconds"),
    Option("window_end_s", float, None, help="end te of the budget window, in seconds (required with a budget)"),
    Option("monitoring_period_s", float, 600.0, help="period of the monitoring stage that queries the energy (> 0)"),
    Option("estimated_idle_w", float, 100.0, help="P̃idle: estimated power of an idle host, in watts"),
    Option("estimated_comp_w", float, 203.12, help="P̃comp: estimated power of a computing host, in watts"),
    Option("shutdown", bool, False, help="opportunistic shutdown: switch idle hosts off, boot them when a job can use them"),
    Option("sleep_pstate", int, None, help="sleep pstate for shutdown (default: the platform's sleep_pstates, else 13)"),
)


def _budget_kwargs(options: Options) -> dict[str, Any]:
    for name in ("estimated_idle_w", "estimated_comp_w"):
        if not options[name] > 0:
            raise OptionError(f"option '{name}' must be > 0, got {options[name]}")
    return dict(
        budget_j=options["budget_j"], budget_fraction=options["budget_fraction"],
        window_start_s=options["window_start_s"], window_end_s=options["window_end_s"],
        monitoring_period_s=options["monitoring_period_s"], shutdown=options["shutdown"],
        sleep_pstate=options["sleep_pstate"],
        power=PowerModel(est_idle_w=options["estimated_idle_w"], est_comp_w=options["estimated_comp_w"]),
    )


def _shutdown(options: Options) -> Any:
    return OpportunisticShutdown(options["sleep_pstate"]) if options["shutdown"] else NoPowerManager()


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("fcfs", "first come, first served, no backfilling", "baseline", order=fcfs, backfill=fcfs_no_backfill),
    Preset("easy-backfill", "EASY backfilling, one reservation for the head job",
           "Lifka 1995; energy-budget paper §II, Algorithm 1", order=fcfs, backfill=easy_backfill),
    Preset("energy-bud", "EASY with an energy budget: energyBud (energy reservation of the head job)",
           "energy-budget paper §IV-B, Algorithm 2", order=fcfs, backfill=easy_backfill,
           admission=FromOptions(lambda o: EnergyBudget("energy-bud", **_budget_kwargs(o))),
           power=FromOptions(_shutdown), extra_options=BUDGET_OPTIONS),
    Preset("reduce-pc", "EASY with an energy budget: reducePC (the head's energy lowers the power rate)",
           "energy-budget paper §IV-D", order=fcfs, backfill=easy_backfill,
           admission=FromOptions(lambda o: EnergyBudget("reduce-pc", **_budget_kwargs(o))),
           power=FromOptions(_shutdown), extra_options=BUDGET_OPTIONS),
    Preset("powercap", "EASY under the powercap B / (te - ts) inside the window",
           "energy-budget paper §V-C", order=fcfs, backfill=easy_backfill,
           admission=FromOptions(lambda o: Powercap(**_budget_kwargs(o))),
           power=FromOptions(_shutdown), extra_options=BUDGET_OPTIONS),
)}


def build(name: str, options: Options | None = None) -> PolicyScheduler:
    """The policy scheduler of preset ``name`` with ``options``; :class:`OptionError` if either is bad."""
    preset = PRESETS.get(name)
    if preset is None:
        raise OptionError(f"unknown scheduler '{name}'; presets: {', '.join(PRESETS)}")
    return preset.build(options)
