"""Presets and option validation of schedulers/presets.py."""

import re

import pytest

from wattsched.schedulers.allocation import BEST_FIT, FIRST_FIT, NON_CONTIGUOUS
from wattsched.schedulers.backfill import easy_backfill, fcfs_no_backfill
from wattsched.schedulers.order import fcfs
from wattsched.schedulers.presets import PRESETS, Option, Preset, build
from wattsched.base.errors import OptionError

VALID = "valid options: allocation (first-fit|best-fit|non-contiguous, default first-fit)"


def test_presets_compose_the_pieces():
    easy = build("easy-backfill", {})
    assert (easy.order, easy.backfill, easy.allocator) == (fcfs, easy_backfill, FIRST_FIT)
    assert build("easy-backfill", {"allocation": "best-fit"}).allocator is BEST_FIT
    plain = build("fcfs", {"allocation": "non-contiguous"})
    assert (plain.backfill, plain.allocator) == (fcfs_no_backfill, NON_CONTIGUOUS)
    assert build("fcfs").allocator is FIRST_FIT
    assert build("easy-backfill") is not build("easy-backfill")  # fresh pieces per run


def test_every_preset_is_documented():
    assert set(PRESETS) == {"fcfs", "easy-backfill", "energy-bud", "reduce-pc", "powercap"}
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.description and preset.reference
        for option in preset.options:
            assert option.help and option.describe().startswith(option.name + " (")


def test_unknown_option_lists_the_valid_ones_on_one_line():
    with pytest.raises(OptionError) as error:
        build("easy-backfill", {"alloc": "first-fit"})
    assert str(error.value) == f"unknown option 'alloc' for easy-backfill; {VALID}"
    assert "\n" not in str(error.value)


def test_wrong_type():
    with pytest.raises(OptionError, match=re.escape("option 'allocation' of fcfs must be a string, got 3; " + VALID)):
        build("fcfs", {"allocation": 3})


def test_value_out_of_the_allowed_set():
    with pytest.raises(OptionError, match=re.escape('must be one of first-fit|best-fit|non-contiguous, got "worst-fit"')):
        build("easy-backfill", {"allocation": "worst-fit"})


def test_options_must_be_an_object_and_the_preset_must_exist():
    with pytest.raises(OptionError, match="must be a JSON object"):
        build("easy-backfill", ["allocation"])  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="unknown scheduler 'easy'; presets: fcfs, easy-backfill"):
        build("easy", {})


def test_numeric_options_check_type_and_range():
    rate = Option("rate_w", float, 100.0, min=0.0, max=1e6, help="power rate")
    count = Option("every", int, 10, min=1, help="period")
    preset = Preset("toy", "toy", "none", order=fcfs, backfill=fcfs_no_backfill, extra_options=(rate, count))
    assert preset.validate({"rate_w": 5}) == {"allocation": "first-fit", "rate_w": 5.0, "every": 10}
    valid = ("valid options: allocation (first-fit|best-fit|non-contiguous, default first-fit), "
             "rate_w (float in [0, 1e+06], default 100.0), every (int in [1, inf], default 10)")
    with pytest.raises(OptionError) as error:
        preset.validate({"rate_w": -1.0})
    assert str(error.value) == f"option 'rate_w' of toy is out of range, got -1.0; {valid}"
    with pytest.raises(OptionError, match="'every' of toy must be an integer, got true"):
        preset.validate({"every": True})
    with pytest.raises(OptionError, match="'rate_w' of toy must be a number, got \"5\""):
        preset.validate({"rate_w": "5"})
    with pytest.raises(OptionError, match="'every' of toy must be an integer, got 2.5"):
        preset.validate({"every": 2.5})


def test_preset_without_options_says_none():
    bare = Preset("bare", "no options", "none", order=fcfs, backfill=fcfs_no_backfill, allocation=FIRST_FIT)
    assert bare.options == ()
    with pytest.raises(OptionError, match="unknown option 'x' for bare; valid options: none"):
        bare.build({"x": 1})
    assert bare.build({}).allocator is FIRST_FIT
