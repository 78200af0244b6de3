"""Slow checks at the paper's scale (``make test-slow``): the properties of the small tests hold on the
machines of the energy-budget paper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation, r6
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.workloads.synthetic import synthetic_week

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _run(platform: Path, workload: Path, scheduler: str, options: dict) -> Simulation:
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, scheduler_handler(scheduler, options))
    return sim


def test_unlimited_energy_budget_is_easy_on_sdsc_blue(tmp_path) -> None:
    """§IV-C4 at full SDSC-Blue size: with B = ∞ energyBud's schedule is EASY's."""
    workload = tmp_path / "week.json"
    workload.write_text(json.dumps(synthetic_week(1152, seed=2)))
    platform = ROOT / "platforms" / "taurus_1152.xml"
    easy = _run(platform, workload, "easy-backfill", {})
    bud = _run(platform, workload, "energy-bud", {"budget_fraction": 10.0, "window_start_s": 172800.0,
                                                  "window_end_s": 432000.0})
    # start times as Batsim prints them: the window's calls are extra solver steps of SimGrid's
    # clock, which may round other ends by an ulp (B43)
    assert [(r.job.id, r6(r.start_s), r.alloc_str) for r in easy.jobs_rows] == \
        [(r.job.id, r6(r.start_s), r.alloc_str) for r in bud.jobs_rows]


def test_curie_scale_run_completes(tmp_path) -> None:
    """80,640 hosts: a synthetic day runs to its end, every job accounted for, host counts add up."""
    workload = tmp_path / "day.json"
    workload.write_text(json.dumps(synthetic_week(80640, seed=3, duration_s=86400.0)))
    sim = _run(ROOT / "platforms" / "taurus_80640.xml", workload, "easy-backfill", {})
    assert len(sim.jobs_rows) == len(sim.workload.jobs)
    assert all(sum(row[1:]) == 80640 for row in sim.machine_rows)
