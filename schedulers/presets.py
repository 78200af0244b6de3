"""Named schedulers, and any combination of pieces from the command line (``-s compose``).

A scheduler is one registered piece per slot (:mod:`wattsched.schedulers.pieces`). A :class:`Preset` is a
named combination: some slots fixed (energy-bud: ``fcfs`` order, ``easy`` backfilling, ``energy-bud``
admission) and some chosen by an option (:class:`Switch`: ``placement`` picks the placement piece,
``shutdown: true`` the ``shutdown`` power manager). ``compose`` is the preset whose six slots are all
options, so every combination runs without a new preset::

    -s compose -o '{"admission": "energy-bud", "power": "shutdown", "budget_fraction": 0.5,
                    "window_start_s": 0, "window_end_s": 86400}'

The valid options of a scheduler are its switches plus the options of the pieces they select;
:func:`build` validates them (unknown name, wrong type, out-of-range value, an option of a piece that is
not chosen → :class:`~wattsched.base.errors.OptionError` on one line listing the valid ones) and returns a
fresh :class:`~wattsched.schedulers.core.PolicyScheduler`.

Presets:

- ``fcfs``: first come, first served, no backfilling.
- ``easy-backfill``: EASY backfilling (Lifka 1995; energy-budget paper §II, Algorithm 1).
- ``energy-bud``: EASY + energy budget, energyBud (energy-budget paper §IV-B, Algorithm 2).
- ``reduce-pc``: EASY + energy budget, reducePC (energy-budget paper §IV-D).
- ``powercap``: EASY under the powercap ``B / (te − ts)`` inside the window (energy-budget paper §V-C).
- ``fairshare``: EASY behind FairShare on CPU-seconds (EFS paper §III-B, eq. 1-4).
- ``efs``: EASY behind EnergyFairShare, FairShare on joules (EFS paper §III-C).
- ``fs-efs``: EASY behind FS+EFS, both factors normalized to their maximum and summed (EFS paper §IV-A).
- ``esc``: FCFS on any free nodes (the ESC paper's SGE-like queue, §2.4) with EnergySaving Cluster's
  periodic on/off rules (ESC paper §2.5, :mod:`wattsched.schedulers.esc`).
- ``upas``: EASY with UPAS's frequency assignment (UPAS paper §2.2, eq. 1-2, :mod:`wattsched.schedulers.upas`);
  it lowers jobs' gears, so its runs need dynamic jobs (``wattsched run`` enables them).
- ``eamc-reorder``, ``eamc-priority-inc``, ``eamc-priority-inc-v``: EASY across partitions over job-partition
  entries, each job at its f_opt on the partition it runs on (EAMC paper §4, eq. 4-5,
  :mod:`wattsched.schedulers.eamc`); ``eamc-base`` (Base Slurm: the favoured partition only, top frequency),
  ``min-runtime`` and ``min-energy`` (both partitions in requested order, the frequency of the least time or
  energy): the paper's baselines (§5). All need Batsim's dynamic jobs.
- ``compose``: any piece in any slot.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

# importing the slot modules registers their pieces
from wattsched.schedulers import (  # noqa: F401
    admission, backfill, budget, eamc, esc, fairshare, frequency, order, placement, power, upas)
from wattsched.base.errors import OptionError
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.options import Option, Options, _got, describe_all, unknown_option
from wattsched.schedulers.pieces import REGISTRY, SLOTS, build_piece


@dataclass(frozen=True)
class Switch:
    """An option that chooses the piece of a slot: ``pieces[value]`` is the piece's name."""

    option: Option
    slot: str
    pieces: Mapping[Any, str]


def slot_switch(slot: str, default: str, help: str, *, partitioned: bool = True) -> Switch:
    """The switch named after ``slot`` whose values are every piece registered there (without the placements
    that keep a job inside one partition, EAMC's, when ``partitioned`` is false: the single-partition presets)."""
    names = tuple(n for n, cls in REGISTRY[slot].items() if partitioned or not getattr(cls, "partitioned", False))
    return Switch(Option(slot, str, default, choices=names, help=help), slot, {n: n for n in names})


PLACEMENT = slot_switch("placement", "first-fit",
                        "host placement: lowest contiguous interval (first-fit, like pybatsim's easyBackfill), "
                        "smallest contiguous interval (best-fit), or lowest free ids (non-contiguous)",
                        partitioned=False)
#: ESC's queue takes any free nodes (SGE-like, ESC paper §2.4): nodes switched off leave gaps between ids.
ESC_PLACEMENT = slot_switch("placement", "non-contiguous",
                            "host placement: lowest free ids (non-contiguous, SGE-like, the default here), lowest "
                            "contiguous interval (first-fit) or smallest contiguous interval (best-fit)",
                            partitioned=False)
SHUTDOWN = Switch(Option("shutdown", bool, False,
                         help="opportunistic shutdown: switch idle hosts off, boot them when a job can use them"),
                  "power", {False: "none", True: "shutdown"})


@dataclass(frozen=True)
class Preset:
    """A named scheduler: fixed pieces for some slots, switches for others (``top`` frequency, no
    admission constraint and no power manager unless said otherwise).

    Attributes:
        name, description, reference: for ``wattsched schedulers`` and error messages.
        fixed: slot → piece name.
        switches: options that choose a slot's piece.
    """

    name: str
    description: str
    reference: str
    fixed: Mapping[str, str]
    switches: tuple[Switch, ...] = (PLACEMENT,)
    defaults: Mapping[str, str] = field(default_factory=lambda: {
        "placement": "first-fit", "admission": "none", "power": "none", "frequency": "top"})

    def _slots(self, switch_values: Mapping[str, Any]) -> dict[str, str]:
        chosen = {**self.defaults, **self.fixed}
        for sw in self.switches:
            chosen[sw.slot] = sw.pieces[switch_values[sw.option.name]]
        return chosen

    def _piece_options(self, chosen: Mapping[str, str]) -> list[Option]:
        """The options of the chosen pieces, once each (two pieces may share an option of one meaning)."""
        seen: dict[str, Option] = {}
        for slot in SLOTS:
            for opt in REGISTRY[slot][chosen[slot]].options:
                other = seen.setdefault(opt.name, opt)
                if other != opt:
                    raise OptionError(f"{self.name}: option '{opt.name}' means different things to two chosen pieces")
        return list(seen.values())

    @property
    def options(self) -> tuple[Option, ...]:
        """Every option the preset may take: its switches, then the options of every piece they may select."""
        out: dict[str, Option] = {sw.option.name: sw.option for sw in self.switches}
        for slot in SLOTS:
            names = [self.fixed.get(slot) or self.defaults.get(slot)]
            for sw in self.switches:
                if sw.slot == slot:
                    names = list(sw.pieces.values())
            for name in names:
                if name is None:
                    continue
                for opt in REGISTRY[slot][name].options:
                    out.setdefault(opt.name, opt)
        return tuple(out.values())

    def describe_options(self) -> str:
        """``placement (first-fit|best-fit|non-contiguous, default first-fit), ...`` or ``none``."""
        return describe_all(self.options, f"wattsched schedulers {self.name}")

    def validate(self, options: Options | None) -> tuple[dict[str, str], dict[str, Any]]:
        """The chosen piece of every slot and every option with its value (defaults filled in).

        Raises:
            OptionError: not an object, an unknown option, a bad value, an option of a piece not chosen, or
                options a chosen piece refuses together (:meth:`~.pieces.Piece.check_given`).
        """
        if options is None:
            options = {}
        valid = self.describe_options()
        if not isinstance(options, Mapping):
            raise OptionError(f"options of {self.name} must be a JSON object, got {_got(options)}; valid options: {valid}")
        known = {o.name: o for o in self.options}
        for key in options:
            if key not in known:
                raise OptionError(f"{unknown_option(key, known)} for {self.name}; valid options: {valid}")
        switch_values = {sw.option.name: sw.option.check(options[sw.option.name], self.name, valid)
                         if sw.option.name in options else sw.option.default for sw in self.switches}
        chosen = self._slots(switch_values)
        declared = self._piece_options(chosen)
        usable = set(switch_values) | {o.name for o in declared}
        for key in options:
            if key not in usable:
                owners = [f"{slot} '{name}'" for slot in SLOTS for name, cls in REGISTRY[slot].items()
                          if any(o.name == key for o in cls.options)]
                raise OptionError(f"option '{key}' of {self.name} belongs to {' or '.join(owners)}, which is not chosen "
                                  f"here; valid options: {valid}")
        values = dict(switch_values)
        for opt in declared:
            values[opt.name] = opt.check(options[opt.name], self.name, valid) if opt.name in options else opt.default
        for slot in SLOTS:  # here only is it known which values the user gave and which are defaults
            REGISTRY[slot][chosen[slot]].check_given(values, set(options))
        return chosen, values

    def build(self, options: Options | None = None) -> PolicyScheduler:
        """A fresh policy scheduler with these options."""
        chosen, values = self.validate(options)
        pieces = {slot: build_piece(slot, chosen[slot], values) for slot in SLOTS}
        return PolicyScheduler(name=self.name, **pieces)  # type: ignore[arg-type]


#: The EAMC paper's policies and baselines: (preset, order, frequency, description, reference).
_EAMC = (
    ("eamc-reorder", "eamc-reorder", "eamc",
     "EAMC-Reorder: EASY across partitions, jobs FCFS with their partitions best first, each at its f_opt",
     "EAMC paper §4.2, eq. 4-5, figure 1"),
    ("eamc-priority-inc", "eamc-priority-inc", "eamc",
     "EAMC-PriorityInc: EASY across partitions, every job's best partition before any second choice, at f_opt",
     "EAMC paper §4.2, eq. 4-5, figure 2"),
    ("eamc-priority-inc-v", "eamc-priority-inc-v", "eamc",
     "EAMC-PriorityInc-V: PriorityInc with the partitions beyond the threshold (35 %) last, at f_opt",
     "EAMC paper §4.2, eq. 4-5"),
    ("eamc-base", "favoured-partition", "top",
     "Base Slurm: EASY, each job on its favoured partition only, at the top frequency", "EAMC paper §5"),
    ("min-runtime", "requested-partitions", "min-runtime",
     "Min runtime: EASY across partitions in requested order, at the frequency of the least predicted time",
     "EAMC paper §5, after Auweter et al."),
    ("min-energy", "requested-partitions", "min-energy",
     "Min energy: EASY across partitions in requested order, at the frequency of the least predicted energy",
     "EAMC paper §5, after Auweter et al."),
)


def _compose() -> Preset:
    helps = {
        "order": "queue order", "backfill": "backfilling rule", "placement": "host placement",
        "admission": "admission constraint (energy budget, powercap)", "power": "power manager (host shutdown)",
        "frequency": "frequency choice (DVFS)",
    }
    defaults = {"order": "fcfs", "backfill": "easy", "placement": "first-fit", "admission": "none", "power": "none",
                "frequency": "top"}
    switches = tuple(slot_switch(slot, defaults[slot], f"{helps[slot]}: {', '.join(REGISTRY[slot])}") for slot in SLOTS)
    return Preset("compose", "any combination of pieces: one option per slot, plus the chosen pieces' options",
                  "see PIECES in 'wattsched schedulers'", fixed={}, switches=switches, defaults=defaults)


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("fcfs", "first come, first served, no backfilling", "baseline",
           fixed={"order": "fcfs", "backfill": "fcfs"}),
    Preset("easy-backfill", "EASY backfilling, one reservation for the head job",
           "Lifka 1995; energy-budget paper §II, Algorithm 1", fixed={"order": "fcfs", "backfill": "easy"}),
    Preset("energy-bud", "EASY with an energy budget: energyBud (energy reservation of the head job)",
           "energy-budget paper §IV-B, Algorithm 2",
           fixed={"order": "fcfs", "backfill": "easy", "admission": "energy-bud"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("reduce-pc", "EASY with an energy budget: reducePC (the head's energy lowers the power rate)",
           "energy-budget paper §IV-D",
           fixed={"order": "fcfs", "backfill": "easy", "admission": "reduce-pc"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("powercap", "EASY under the powercap B / (te - ts) inside the window", "energy-budget paper §V-C",
           fixed={"order": "fcfs", "backfill": "easy", "admission": "powercap"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("fairshare", "EASY behind FairShare: the users with the least decayed CPU-seconds per share first",
           "EFS paper §III-B, eq. 1-4 (SLURM classic fair share)",
           fixed={"order": "fairshare", "backfill": "easy"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("efs", "EASY behind EnergyFairShare: the users with the least decayed joules per share first",
           "EFS paper §III-C", fixed={"order": "efs", "backfill": "easy"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("fs-efs", "EASY behind FS+EFS: FairShare and EnergyFairShare factors normalized to their maximum, summed",
           "EFS paper §IV-A", fixed={"order": "fs-efs", "backfill": "easy"}, switches=(PLACEMENT, SHUTDOWN)),
    Preset("esc", "FCFS on any free nodes with EnergySaving Cluster's on/off rules (idle time, per-group wait "
           "thresholds)", "ESC paper §2.4-2.5",
           fixed={"order": "fcfs", "backfill": "fcfs", "power": "esc"}, switches=(ESC_PLACEMENT,)),
    Preset("upas", "EASY with UPAS: a job's gear from the previous interval's utilization and the wait queue",
           "UPAS paper §2.2, eq. 1-2", fixed={"order": "fcfs", "backfill": "easy", "frequency": "upas"},
           switches=(PLACEMENT, SHUTDOWN)),
    *(Preset(name, description, reference, switches=(SHUTDOWN,),
             fixed={"order": order_piece, "backfill": "easy", "placement": "partitions", "frequency": frequency_piece})
      for name, order_piece, frequency_piece, description, reference in _EAMC),
    _compose(),
)}


def unknown_scheduler(name: str, others: Iterable[str] = ()) -> str:
    """The start of the error for an unknown scheduler ``name``: ``unknown scheduler 'X'``, with the closest
    preset (or one of ``others``) as a suggestion when one is close (a typo)."""
    close = difflib.get_close_matches(name, [*PRESETS, *others], n=1)
    return f"unknown scheduler '{name}'" + (f" (did you mean '{close[0]}'?)" if close else "")


def unknown_preset(name: str) -> str:
    """The error for an unknown preset ``name``: :func:`unknown_scheduler`'s, then the presets."""
    return f"{unknown_scheduler(name)}; presets: {', '.join(PRESETS)}"


def build(name: str, options: Options | None = None) -> PolicyScheduler:
    """The policy scheduler of preset ``name`` with ``options``; :class:`OptionError` if either is bad."""
    preset = _compose() if name == "compose" else PRESETS.get(name)  # compose sees pieces registered since
    if preset is None:
        raise OptionError(unknown_preset(name))
    return preset.build(options)
