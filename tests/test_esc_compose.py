"""ESC composed with other pieces, end to end on a small ESC machine: behind EASY, under an energy budget
and a powercap (``-s compose -o '{"power": "esc", ...}'``), and through pybatsim (the class registered for
``pybatsim esc`` and the Docker image) with the same schedule as in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.analysis.metrics import energy_in_window_j
from wattsched.analysis.outputs import load_outputs
from wattsched.energy_models.esc import ESC
from wattsched.platforms.generate import esc_platform_xml
from wattsched.schedulers.adapter import Esc, load_scheduler, pybatsim_handler
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.workloads.synthetic import synthetic_week

N = 16
DAY_S = 86400.0
WINDOW = (0.5 * DAY_S, 1.5 * DAY_S)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("esc")
    platform = folder / "esc_16.xml"
    platform.write_text(esc_platform_xml(N))
    workload = folder / "w.json"
    week = synthetic_week(N, seed=3, duration_s=2 * DAY_S, target_load=0.5, speed_flops=ESC.max_speed_flops, users=6)
    workload.write_text(json.dumps(week))
    return platform, workload


def run(inputs, scheduler: str, options: dict, prefix: Path, handler=None):
    platform, workload = inputs
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, handler or scheduler_handler(scheduler, options))
    write_outputs(sim, prefix)
    return sim, load_outputs(prefix)


def switched(outputs) -> int:
    changes = outputs.pstate_changes
    return int((changes["new_pstate"] == -2).sum())


def test_esc_behind_easy_backfills_and_switches(inputs, tmp_path):
    sim, out = run(inputs, "compose", {"power": "esc", "backfill": "easy", "idle_s": 900.0}, tmp_path / "easy")
    jobs = out.jobs
    assert set(jobs["final_state"]) <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    assert switched(out) > 0
    ran = jobs.sort_values("submission_time")
    # EASY started some job before a job submitted earlier
    assert (ran["starting_time"].cummax().shift(1) > ran["starting_time"]).any()
    _, fcfs = run(inputs, "esc", {"idle_s": 900.0}, tmp_path / "fcfs")
    assert out.jobs["waiting_time"].mean() < fcfs.jobs["waiting_time"].mean()


@pytest.mark.parametrize("admission", ["energy-bud", "powercap"])
def test_esc_under_an_energy_budget_keeps_the_window_energy_within_it(inputs, tmp_path, admission):
    # the budget's estimates are the ESC node's powers (its defaults are the Taurus node's)
    budget = {"budget_fraction": 0.45, "window_start_s": WINDOW[0], "window_end_s": WINDOW[1],
              "estimated_idle_w": ESC.idle_w, "estimated_comp_w": ESC.loaded_w}
    sim, out = run(inputs, "compose", {"power": "esc", "admission": admission, "idle_s": 600.0, **budget},
                   tmp_path / admission)
    assert set(out.jobs["final_state"]) <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    b_j = 0.45 * N * ESC.loaded_w * (WINDOW[1] - WINDOW[0])  # a fraction of N × P̃comp × window
    assert energy_in_window_j(out.consumed_energy, WINDOW) <= b_j
    assert switched(out) > 0


def test_pybatsim_class_gives_the_same_schedule_as_the_translator(inputs, tmp_path):
    assert load_scheduler("esc", {}).__class__ is Esc
    options = {"idle_s": 600.0, "period_s": 120.0}
    _, ours = run(inputs, "esc", options, tmp_path / "translator")
    _, theirs = run(inputs, "esc", options, tmp_path / "pybatsim", handler=pybatsim_handler(Esc(options)))
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    assert ours.jobs[columns].equals(theirs.jobs[columns])
    assert ours.pstate_changes.equals(theirs.pstate_changes)
