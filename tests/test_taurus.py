"""Taurus node model: energy-budget paper table I and Batsim's DVFS pstates (energy_models/taurus.py)."""

from __future__ import annotations

import dataclasses

import pytest

from wattsched.energy_models import TAURUS
from wattsched.energy_models.taurus import (
    PstateKind,
    all_computing_power_w,
    all_idle_power_w,
    budget_energy_j,
)


def test_table_one_values() -> None:
    assert TAURUS.idle_w == 95.00
    assert TAURUS.comp_w == 190.74
    assert TAURUS.off_w == 9.75
    assert (TAURUS.switch_on_s, TAURUS.switch_on_w) == (151.52, 125.17)
    assert (TAURUS.switch_off_s, TAURUS.switch_off_w) == (6.10, 101.00)
    assert (TAURUS.estimated_idle_w, TAURUS.estimated_comp_w) == (100.0, 203.12)
    assert TAURUS.monitoring_period_s == 600.0


def test_sixteen_pstates_in_order() -> None:
    kinds = [p.kind for p in TAURUS.pstates]
    assert kinds == [PstateKind.COMPUTATION] * 13 + [PstateKind.SLEEP, PstateKind.SWITCH_OFF, PstateKind.SWITCH_ON]
    assert [p.index for p in TAURUS.pstates] == list(range(16))
    assert (TAURUS.sleep_pstate, TAURUS.switch_off_pstate, TAURUS.switch_on_pstate) == (13, 14, 15)
    assert len(TAURUS.computation_pstates) == 13


def test_dvfs_speeds_and_powers() -> None:
    dvfs = TAURUS.computation_pstates
    assert [round(p.speed_flops / 1e6, 3) for p in dvfs] == [
        100.0, 88.959, 83.68, 80.571, 76.216, 72.494, 68.78, 64.679, 60.776, 58.628, 50.089, 49.215, 44.976
    ]
    assert dvfs[1].speed_value == 88.95899053627761
    assert dvfs[12].speed_value == 44.97607655502392
    assert [p.full_w for p in dvfs] == [
        190.738, 171.02, 165.62, 160.47, 155.729, 151.3, 146.92, 142.95, 138.928, 135.368, 132.519, 128.87, 125.88
    ]
    assert all(p.idle_w == 95.0 for p in dvfs)
    assert TAURUS.max_speed_flops == 100e6
    # Table I's Pcomp is pstate 0's full power rounded.
    assert round(dvfs[0].full_w, 2) == TAURUS.comp_w


def test_virtual_pstates_match_reference_xml_and_table_one() -> None:
    sleep, off, on = TAURUS.pstates[13:]
    assert (sleep.speed_value, sleep.speed_unit, sleep.idle_w, sleep.full_w) == (1e-9, "Mf", 9.75, 9.75)
    assert off.speed_flops == 0.1639344262295082 == 1 / 6.1
    assert off.idle_w == off.full_w == 100.99672131147543
    assert on.speed_flops == 0.006599788806758183 == 1 / 151.52
    assert on.idle_w == on.full_w == 125.1743848996832
    # One flop at the virtual pstate lasts the transition; table I prints the mean power rounded.
    assert 1 / off.speed_flops == pytest.approx(TAURUS.switch_off_s)
    assert 1 / on.speed_flops == pytest.approx(TAURUS.switch_on_s)
    assert round(off.full_w, 2) == TAURUS.switch_off_w
    assert round(on.full_w, 2) == TAURUS.switch_on_w
    assert TAURUS.switch_off_energy_j == pytest.approx(616.08)
    assert TAURUS.switch_on_energy_j == pytest.approx(18966.4228)


def test_model_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TAURUS.idle_w = 0.0  # type: ignore[misc]


def test_budget_helpers() -> None:
    assert all_computing_power_w(16) == pytest.approx(16 * 203.12)
    assert all_idle_power_w(16) == pytest.approx(1600.0)
    # The paper's 49 % budget is "all processors idle" with the estimates.
    assert all_idle_power_w(1152) / all_computing_power_w(1152) == pytest.approx(0.492, abs=1e-3)
    assert budget_energy_j(1152, 60, 3 * 86400) == pytest.approx(0.6 * 1152 * 203.12 * 3 * 86400)
