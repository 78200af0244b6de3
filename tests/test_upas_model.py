"""The UPAS paper's DVFS model (energy_models/upas.py): table 2 and the 21 % idle power derived from eq. 3, the β
law, the processor as Batsim pstates, and the enlarged machine sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wattsched.energy_models.upas import (
    BETA_LAW,
    FREQUENCY_PROPERTY,
    GEARS,
    PAPER_NORMALIZED_POWER,
    UPAS_POWER,
    UpasPowerModel,
    enlarged_size,
    parse_frequencies,
    upas_node,
)
from wattsched.platforms.generate import upas_platform_xml
from wattsched.simulator.platform import load_platform


def test_table_2_normalized_powers_come_out_of_eq_3_to_two_decimals():
    assert [round(UPAS_POWER.running(g), 2) for g in GEARS] == list(PAPER_NORMALIZED_POWER)
    assert UPAS_POWER.running(UPAS_POWER.top) == pytest.approx(1.0)


def test_idle_at_the_lowest_gear_is_21_percent_of_the_top_running_power():
    assert round(UPAS_POWER.idle_lowest, 2) == 0.21
    # by hand: 0.75 / 2.5 · (0.8 · 1²) / (2.3 · 1.5²) + 0.25 · 1 / 1.5
    assert UPAS_POWER.idle_lowest == pytest.approx(0.3 * 0.8 / (2.3 * 2.25) + 0.25 / 1.5, rel=1e-12)


def test_the_assumptions_of_section_3_3_hold_in_the_model():
    top = UPAS_POWER.top
    assert UPAS_POWER.static(top) == pytest.approx(0.25)  # static = 25 % of the running power at the top gear
    for gear in GEARS:  # a running CPU is 2.5 times as active as an idle one; static power ∝ V
        assert UPAS_POWER.dynamic(gear) == pytest.approx(2.5 * UPAS_POWER.dynamic(gear, running=False))
        assert UPAS_POWER.static(gear) / gear.voltage_v == pytest.approx(0.25 / 1.5)
    # other assumptions, other numbers: the model is not a table
    assert UpasPowerModel(static_fraction=0.5).running(GEARS[0]) > UPAS_POWER.running(GEARS[0])
    with pytest.raises(ValueError, match="static_fraction"):
        UpasPowerModel(static_fraction=1.5)
    with pytest.raises(ValueError, match="not a gear"):
        UPAS_POWER.gear(2.1)


def test_beta_law_by_job_size():
    assert BETA_LAW.parameters(1) == (0.5, pytest.approx(0.1))
    assert BETA_LAW.parameters(4) == (0.5, pytest.approx(0.1))
    assert BETA_LAW.parameters(5) == (0.4, pytest.approx(0.1))
    assert BETA_LAW.parameters(32) == (0.4, pytest.approx(0.1))
    assert BETA_LAW.parameters(33) == (0.3, pytest.approx(0.08))
    rng = np.random.default_rng(7)
    for size, mean, sigma in ((2, 0.5, 0.1), (16, 0.4, 0.1), (512, 0.3, 0.08)):
        draws = BETA_LAW.draw([size] * 20000, rng)
        assert draws.mean() == pytest.approx(mean, abs=0.005)
        assert draws.std() == pytest.approx(sigma, rel=0.05)
        assert draws.min() >= 0.01 and draws.max() <= 1.0
    same = BETA_LAW.draw([1, 64, 8], np.random.default_rng(3)), BETA_LAW.draw([1, 64, 8], np.random.default_rng(3))
    assert list(same[0]) == list(same[1])


def test_the_processor_as_batsim_pstates(tmp_path):
    node = upas_node(200.0)
    assert node.frequencies_ghz == (2.3, 2.0, 1.7, 1.4, 1.1, 0.8)
    for p, f in enumerate(node.frequencies_ghz):
        assert node.pstates[p].speed_flops == pytest.approx(f * 1e9)  # speed ∝ f
        gear = UPAS_POWER.gear(f)
        assert node.pstates[p].full_w == pytest.approx(200.0 * UPAS_POWER.running(gear))
        assert node.pstates[p].idle_w == pytest.approx(200.0 * UPAS_POWER.idle(gear))
    assert (node.sleep_pstate, node.switch_off_pstate, node.switch_on_pstate) == (6, 7, 8)
    assert node.off_w == 0.0 and node.pstate_of(1.4) == 3
    path = tmp_path / "upas.xml"
    path.write_text(upas_platform_xml(5, top_power_w=200.0))
    platform = load_platform(path)
    assert len(platform.hosts) == 5
    assert platform.models == [node.node_model]
    assert parse_frequencies(platform.hosts[0].properties[FREQUENCY_PROPERTY]) == node.frequencies_ghz


def test_enlarged_sizes_of_the_papers_machines():
    assert [enlarged_size(430, p) for p in (0, 10, 20, 50, 75)] == [430, 473, 516, 645, 753]
    assert [enlarged_size(9216, p) for p in (10, 20, 50, 75)] == [10138, 11059, 13824, 16128]
    assert enlarged_size(128, 75) == 224


@pytest.mark.parametrize("text", ["", "2.3, x", "2.3, -1", "nan"])
def test_malformed_frequency_lists(text):
    with pytest.raises(ValueError):
        parse_frequencies(text)
    assert math.isclose(parse_frequencies("2.3, 2")[1], 2.0)
