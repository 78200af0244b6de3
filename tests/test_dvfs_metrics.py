"""The UPAS paper's metrics (wattsched/analysis/dvfs.py): gears read back from run times, the model's CPU energy in
both idle scenarios, eq. 5-6 BSLD, and the series of figure 4 — on hand-built frames and on a whole run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from wattsched.analysis.dvfs import (
    job_gears,
    jobs_per_gear,
    model_cpu_energy,
    share_of_time_below,
    time_series,
    upas_bsld,
)
from wattsched.analysis.metrics import bounded_slowdowns
from wattsched.energy_models.upas import UPAS_NODE, UPAS_POWER
from wattsched.base.batsim_files import original_job_id

GEARS = UPAS_NODE.frequencies_ghz
TOP = UPAS_NODE.max_speed_flops


def workload(specs):
    """(res, run time at the top gear, walltime, β) per job, as beta_workload writes them."""
    jobs, profiles = [], {}
    for k, (res, run, wall, beta) in enumerate(specs):
        profiles[f"b{k}.c"] = {"type": "parallel_homogeneous", "cpu": beta * run * TOP, "com": 0}
        profiles[f"b{k}.d"] = {"type": "delay", "delay": (1 - beta) * run}
        profiles[f"b{k}"] = {"type": "composed", "repeat": 1, "seq": [f"b{k}.c", f"b{k}.d"]}
        jobs.append({"id": k, "subtime": 0, "res": res, "profile": f"b{k}", "walltime": wall, "beta": beta})
    return {"jobs": jobs, "profiles": profiles}


def jobs_frame(rows):
    """(job_id, res, submit, start, run, final state) → a _jobs.csv frame."""
    frame = pd.DataFrame(rows, columns=["job_id", "requested_number_of_resources", "submission_time", "starting_time",
                                        "execution_time", "final_state"])
    frame["job_id"] = frame["job_id"].astype(str)
    frame["finish_time"] = frame["starting_time"] + frame["execution_time"]
    frame["waiting_time"] = frame["starting_time"] - frame["submission_time"]
    return frame


def slowed(run, beta, f):
    return run * (beta * (2.3 / f - 1) + 1)


def test_gears_are_read_back_from_run_times():
    work = workload([(2, 1000.0, 2000.0, 0.5), (1, 100.0, 200.0, 0.3), (4, 600.0, 600.0, 0.4), (4, 600.0, 600.0, 0.4),
                     (1, 50.0, 100.0, 0.2)])
    frame = jobs_frame([
        (0, 2, 0.0, 0.0, slowed(1000.0, 0.5, 1.4), "COMPLETED_SUCCESSFULLY"),
        (1, 1, 0.0, 10.0, 100.0, "COMPLETED_SUCCESSFULLY"),
        (2, 4, 0.0, 0.0, slowed(600.0, 0.4, 2.0), "COMPLETED_WALLTIME_REACHED"),  # killed at its rescaled walltime
        (3, 4, 0.0, 0.0, 600.0 * 2.3 / 2.0, "COMPLETED_WALLTIME_REACHED"),  # ... by a worst-case (β = 1) walltime
        (4, 1, 0.0, 0.0, 77.0, "COMPLETED_SUCCESSFULLY"),  # matches no gear
    ])
    gears = job_gears(frame, work, gears_ghz=GEARS, top_speed_flops=TOP)
    assert list(gears["gear_ghz"].iloc[:4]) == [1.4, 2.3, 2.0, 2.0] and np.isnan(gears["gear_ghz"].iloc[4])
    assert list(gears["runtime_top_s"].iloc[:4]) == pytest.approx([1000.0, 100.0, 600.0, 600.0])
    counts = jobs_per_gear(gears)
    assert list(counts)[:3] == [2.3, 2.0, 1.4] and [counts[g] for g in (2.3, 2.0, 1.4)] == [1, 2, 1]
    assert np.isnan(list(counts)[-1]) and list(counts.values())[-1] == 1  # no gear matched: last


def test_model_energy_in_both_scenarios_by_hand():
    gears = pd.DataFrame({"res": [2, 1], "start_s": [0.0, 50.0], "end_s": [100.0, 150.0], "wait_s": [0.0, 50.0],
                          "run_s": [100.0, 100.0], "runtime_top_s": [80.0, 100.0], "beta": [0.5, 0.5],
                          "gear_ghz": [1.4, 2.3], "slowdown": [1.25, 1.0]})
    energy = model_cpu_energy(gears, 4, top_power_w=100.0)
    p14 = UPAS_POWER.running(UPAS_POWER.gear(1.4))
    assert energy["busy_j"] == pytest.approx(100.0 * (2 * 100 * p14 + 1 * 100 * 1.0))
    assert energy["window_s"] == 150.0 and energy["busy_area_s"] == 300.0
    assert energy["idle_j"] == pytest.approx(100.0 * (4 * 150 - 300) * UPAS_POWER.idle_lowest)
    assert energy["with_idle_j"] == pytest.approx(energy["busy_j"] + energy["idle_j"])


def test_bsld_of_eq_6_divides_a_slowed_job_by_its_top_gear_run_time():
    frame = jobs_frame([(0, 1, 0.0, 300.0, 1200.0, "COMPLETED_SUCCESSFULLY"),
                        (1, 1, 0.0, 0.0, 60.0, "COMPLETED_SUCCESSFULLY")])
    gears = pd.DataFrame({"runtime_top_s": [1000.0, 60.0]}, index=pd.Index(["0", "1"], name="job_id"))
    # job 0: (300 + 1200) / max(600, 1000) = 1.5 (eq. 6), not (300 + 1200) / 1200; job 1: max(1, 60 / 600) = 1
    assert upas_bsld(frame, gears) == pytest.approx((1.5 + 1.0) / 2)
    assert list(bounded_slowdowns(frame, 600.0)) == pytest.approx([1500 / 1200, 1.0])  # eq. 5 with its own time


def test_time_series_of_figure_4():
    gears = pd.DataFrame({"res": [2, 2], "start_s": [0.0, 100.0], "end_s": [200.0, 200.0], "wait_s": [0.0, 100.0],
                          "run_s": [200.0, 100.0], "gear_ghz": [1.4, 2.3]})
    series = time_series(gears, 4, bin_s=100.0)
    assert list(series["t_s"]) == [0.0, 100.0]
    assert list(series["utilization"]) == pytest.approx([0.5, 1.0])
    assert list(series["busy_frequency_ghz"]) == pytest.approx([1.4, (1.4 + 2.3) / 2])
    assert list(series["waiting_jobs"]) == pytest.approx([1.0, 0.0])
    assert share_of_time_below(gears, 4, 0.8, interval_s=100.0) == 0.5
    assert share_of_time_below(gears, 4, 0.5, interval_s=100.0) == 0.0


def test_on_a_whole_run_the_gears_read_back_are_those_the_scheduler_chose(tmp_path):
    from wattsched.analysis.outputs import load_outputs
    from wattsched.platforms.generate import upas_platform_xml
    from wattsched.schedulers.presets import build
    from wattsched.schedulers.protocol import BatsimTranslator
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.outputs import write_outputs
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from tests.test_upas import random_workload

    work = random_workload(5, 40)
    (tmp_path / "w.json").write_text(json.dumps(work))
    (tmp_path / "p.xml").write_text(upas_platform_xml(16))
    policy = build("upas", {"wq_threshold": None, "interval_s": 300.0})
    chosen: dict[str, int] = {}
    translator = BatsimTranslator(policy)

    def handler(message):
        reply = translator(message)
        for event in reply["events"]:
            if event["type"] == "EXECUTE_JOB":
                job_id = event["data"]["job_id"]
                chosen[original_job_id(job_id).split("!")[1]] = policy.view.running[job_id].pstate
        return reply

    sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    run_inprocess(sim, handler)
    write_outputs(sim, tmp_path / "out")
    gears = job_gears(load_outputs(tmp_path / "out").jobs, work, gears_ghz=GEARS, top_speed_flops=TOP)
    assert len(gears) == 40 and gears["gear_ghz"].notna().all()
    assert {j: GEARS[p] for j, p in chosen.items()} == gears["gear_ghz"].to_dict()
    assert set(gears["gear_ghz"]) > {2.3}
