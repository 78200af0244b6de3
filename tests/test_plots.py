"""Tests of wattsched.analysis.plots on every recorded Batsim scenario."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from matplotlib.patches import Rectangle

from wattsched.analysis.outputs import load_outputs
from wattsched.analysis.plots import (
    gantt_figure,
    machine_states_figure,
    plot_all,
    plot_power,
    power_figure,
    power_steps,
)

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if p.is_dir())
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def job_rectangles(scenario: str) -> list[Rectangle]:
    axes = gantt_figure(REFERENCE / scenario).axes[0]
    return [p for p in axes.patches if isinstance(p, Rectangle) and (p.get_gid() or "").startswith("job ")]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_plot_all_writes_three_pngs(scenario: str, tmp_path: Path) -> None:
    written = plot_all(REFERENCE / scenario, tmp_path / "plots")
    assert [p.name for p in written] == ["gantt.png", "power.png", "machine_states.png"]
    for path in written:
        assert path.stat().st_size > 1000
        assert path.read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(p.name for p in written)


def test_gantt_has_one_rectangle_per_job_that_ran() -> None:
    # pybatsim's EASY allocates one interval per job: one rectangle per non-rejected job
    jobs = load_outputs(REFERENCE / "pybatsim-easy").jobs
    ran = jobs[jobs["final_state"] != "REJECTED"]
    assert len(ran) == 79  # 80 jobs, 1 rejection
    rectangles = job_rectangles("pybatsim-easy")
    assert len(rectangles) == len(ran)
    assert {r.get_gid() for r in rectangles} == {f"job {j}" for j in ran["job_id"]}
    # each spans its job's hosts and times
    by_job = {r.get_gid(): r for r in rectangles}
    first = ran.iloc[0]
    rectangle = by_job[f"job {first['job_id']}"]
    assert rectangle.get_x() == pytest.approx(first["starting_time"])
    assert rectangle.get_width() == pytest.approx(first["execution_time"])
    assert rectangle.get_height() == first["requested_number_of_resources"]


def test_gantt_splits_non_contiguous_allocations() -> None:
    jobs = load_outputs(REFERENCE / "long-shutdown-fcfs").jobs
    ran = jobs[jobs["final_state"] != "REJECTED"]
    expected = {f"job {j}": a.count(" ") + 1 for j, a in zip(ran["job_id"], ran["allocated_resources"])}
    assert max(expected.values()) > 1  # the scenario has non-contiguous allocations
    rectangles = job_rectangles("long-shutdown-fcfs")
    assert Counter(r.get_gid() for r in rectangles) == expected
    heights = Counter()
    for r in rectangles:
        heights[r.get_gid()] += r.get_height()
    assert heights == dict(zip((f"job {j}" for j in ran["job_id"]), ran["requested_number_of_resources"]))


def test_power_steps_are_energy_slopes() -> None:
    energy = load_outputs(REFERENCE / "fcfs-compute").consumed_energy
    times, power = power_steps(energy)
    assert times[0] == 0.0 and times[1] == 50.0
    assert power[0] == pytest.approx(33360.7 / 50.0)  # Batsim's epower of the row at t=50
    assert len(times) == len(power) == energy["time"].nunique()


def test_power_plot_shows_budget(tmp_path: Path) -> None:
    figure = power_figure(REFERENCE / "dvfs-energy", budget_window=(100.0, 300.0), budget_power_w=500.0)
    axes = figure.axes[0]
    labels = [line.get_label() for line in axes.get_lines()]
    assert "platform power" in labels and "budget power 500 W" in labels
    assert [p for p in [*axes.patches, *axes.collections] if p.get_label() == "budget window"]
    path = plot_power(REFERENCE / "dvfs-energy", tmp_path / "power.png", (100.0, 300.0), 500.0)
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_machine_states_stack_to_the_number_of_hosts() -> None:
    figure = machine_states_figure(REFERENCE / "shutdown-boot")
    axes = figure.axes[0]
    assert len(axes.collections) == 5
    assert axes.get_ylim() == (0.0, 4.0)
    top = axes.collections[-1].get_paths()[0].vertices[:, 1]
    assert np.all(top <= 4.0 + 1e-9)
