"""Presets, composition and option validation of schedulers/presets.py."""

import re

import pytest

from wattsched.base.errors import OptionError
from wattsched.schedulers.admission import AdmissionConstraint, NoConstraint
from wattsched.schedulers.backfill import EasyBackfilling, FcfsNoBackfill
from wattsched.schedulers.budget import EnergyBud, ReducePC
from wattsched.schedulers.frequency import TopFrequency
from wattsched.schedulers.options import Option
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.pieces import REGISTRY, SLOTS
from wattsched.schedulers.placement import BestFit, FirstFit, NonContiguous
from wattsched.schedulers.power import NoPowerManager, OpportunisticShutdown
from wattsched.schedulers.presets import PRESETS, Preset, build

VALID = "valid options: placement (first-fit|best-fit|non-contiguous, default first-fit)"


def kinds(policy):
    return tuple(type(piece) for piece in policy.pieces)


def test_presets_compose_the_pieces():
    easy = build("easy-backfill", {})
    assert kinds(easy) == (Fcfs, EasyBackfilling, FirstFit, NoConstraint, NoPowerManager, TopFrequency)
    assert type(build("easy-backfill", {"placement": "best-fit"}).placement) is BestFit
    plain = build("fcfs", {"placement": "non-contiguous"})
    assert (type(plain.backfill), type(plain.placement)) == (FcfsNoBackfill, NonContiguous)
    assert type(build("fcfs").placement) is FirstFit
    assert build("easy-backfill").admission is not build("easy-backfill").admission  # fresh pieces per run
    shut = build("energy-bud", {"shutdown": True, "budget_j": 1e6, "window_end_s": 100.0})
    assert (type(shut.admission), type(shut.power)) == (EnergyBud, OpportunisticShutdown)
    assert shut.admission.power_manager is shut.power  # the budget plans the manager's switches


def test_compose_runs_any_combination_without_a_preset():
    policy = build("compose", {"admission": "reduce-pc", "power": "shutdown", "placement": "best-fit",
                               "budget_fraction": 0.5, "window_end_s": 1000.0, "sleep_pstate": 13})
    assert kinds(policy) == (Fcfs, EasyBackfilling, BestFit, ReducePC, OpportunisticShutdown, TopFrequency)
    assert kinds(build("compose")) == kinds(build("easy-backfill"))  # the defaults are EASY's
    with pytest.raises(OptionError, match="option 'order' of compose must be one of fcfs"):
        build("compose", {"order": "fairest"})


def test_options_of_pieces_not_chosen_are_refused_with_their_owner():
    with pytest.raises(OptionError) as error:
        build("compose", {"budget_j": 5.0})
    message = str(error.value)
    assert "'budget_j'" in message and "admission 'energy-bud'" in message and "not chosen" in message
    with pytest.raises(OptionError, match="'sleep_pstate' of energy-bud belongs to power 'shutdown'"):
        build("energy-bud", {"sleep_pstate": 13})


def test_every_preset_and_piece_is_documented():
    assert set(PRESETS) == {"fcfs", "easy-backfill", "energy-bud", "reduce-pc", "powercap", "fairshare", "efs", "fs-efs",
                            "esc", "upas", "eamc-reorder", "eamc-priority-inc", "eamc-priority-inc-v", "eamc-base",
                            "min-runtime", "min-energy", "compose"}
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.description and preset.reference
        for option in preset.options:
            assert option.help and option.describe().startswith(option.name + " (")
    for slot in SLOTS:
        assert REGISTRY[slot], slot
        for name, cls in REGISTRY[slot].items():
            assert cls.slot == slot and cls.name == name and cls.description, cls


def test_unknown_option_lists_the_valid_ones_on_one_line():
    with pytest.raises(OptionError) as error:
        build("easy-backfill", {"alloc": "first-fit"})
    assert str(error.value) == f"unknown option 'alloc' for easy-backfill; {VALID}"
    assert "\n" not in str(error.value)


def test_wrong_type():
    with pytest.raises(OptionError, match=re.escape("option 'placement' of fcfs must be a string, got 3; " + VALID)):
        build("fcfs", {"placement": 3})


def test_value_out_of_the_allowed_set():
    with pytest.raises(OptionError, match=re.escape('must be one of first-fit|best-fit|non-contiguous, got "worst-fit"')):
        build("easy-backfill", {"placement": "worst-fit"})


def test_options_must_be_an_object_and_the_preset_must_exist():
    with pytest.raises(OptionError, match="must be a JSON object"):
        build("easy-backfill", ["placement"])  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="unknown scheduler 'easy'; presets: fcfs, easy-backfill"):
        build("easy", {})


class Toy(AdmissionConstraint):
    """A piece with numeric options, registered by the fixture below only."""

    name = "toy"
    description = "toy"
    options = (Option("rate_w", float, 100.0, min=0.0, max=1e6, help="power rate"),
               Option("every", int, 10, min=1, help="period"))

    def __init__(self, rate_w: float, every: int) -> None:
        self.rate_w, self.every = rate_w, every


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(REGISTRY["admission"], "toy", Toy)
    return Preset("toy", "toy", "none", fixed={"order": "fcfs", "backfill": "fcfs", "admission": "toy"})


def test_numeric_options_check_type_and_range(toy):
    assert toy.validate({"rate_w": 5})[1] == {"placement": "first-fit", "rate_w": 5.0, "every": 10}
    assert toy.build({"every": 3}).admission.every == 3
    valid = ("valid options: placement (first-fit|best-fit|non-contiguous, default first-fit), "
             "rate_w (float in [0, 1e+06], default 100.0), every (int in [1, inf), default 10)")
    with pytest.raises(OptionError) as error:
        toy.validate({"rate_w": -1.0})
    assert str(error.value) == f"option 'rate_w' of toy is out of range, got -1.0; {valid}"
    with pytest.raises(OptionError, match="'every' of toy must be an integer, got true"):
        toy.validate({"every": True})
    with pytest.raises(OptionError, match="'rate_w' of toy must be a number, got \"5\""):
        toy.validate({"rate_w": "5"})
    with pytest.raises(OptionError, match="'every' of toy must be an integer, got 2.5"):
        toy.validate({"every": 2.5})
    with pytest.raises(OptionError, match="'rate_w' of toy must be a finite number"):
        toy.validate({"rate_w": float("nan")})


def test_preset_without_options_says_none():
    bare = Preset("bare", "no options", "none", fixed={"order": "fcfs", "backfill": "fcfs"}, switches=())
    assert bare.options == ()
    with pytest.raises(OptionError, match="unknown option 'x' for bare; valid options: none"):
        bare.build({"x": 1})
    assert type(bare.build({}).placement) is FirstFit


def test_a_typo_in_a_scheduler_name_gets_a_suggestion() -> None:
    with pytest.raises(OptionError, match=r"unknown scheduler 'energy-budd' \(did you mean 'energy-bud'\?\); presets: "):
        build("energy-budd")
    with pytest.raises(OptionError, match=r"unknown scheduler 'xyzzy'; presets: "):  # nothing close: no guess
        build("xyzzy")


def test_compose_option_errors_name_the_options_without_describing_fifty_of_them():
    """``compose`` has about fifty options: describing each (type, range, default) in an error made a line of 2,000
    characters. Its errors name them, say where they are described, suggest the closest name to a typo, and describe
    the option whose value is refused."""
    from wattsched.schedulers.presets import PRESETS

    compose = PRESETS["compose"]
    with pytest.raises(OptionError) as error:
        compose.validate({"bogus": 1})
    message = str(error.value)
    assert message.startswith("unknown option 'bogus' for compose; valid options: order, backfill, placement, ")
    assert "(`wattsched schedulers compose` gives each one's values and default)" in message and len(message) < 1000
    assert "(first-fit|" not in message
    with pytest.raises(OptionError, match=r"unknown option 'threshhold' \(did you mean 'threshold'\?\) for compose"):
        compose.validate({"threshhold": 0.5})
    with pytest.raises(OptionError) as error:
        compose.validate({"power": "shutdwn"})
    assert str(error.value) == ("option 'power' of compose must be one of none|shutdown|esc, got \"shutdwn\"; "
                                "expected power (none|shutdown|esc, default none)")
    with pytest.raises(OptionError) as error:
        compose.validate({"admission": "energy-bud", "budget_fraction": float("inf")})
    assert str(error.value).endswith("; expected budget_fraction (float, default unset)")
