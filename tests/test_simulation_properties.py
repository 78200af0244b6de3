"""Properties of whole simulations (docs/architecture.md §9) on random workloads, for every preset, with and without
switching hosts off: every job ends completed, killed or rejected, once; no two jobs share a host at the
same time; host counts always add up; energy is accounted to the joule (every job's energy fits in the
platform's, the platform's equals the integral of the CSV's power)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.platforms.generate import taurus_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import consumed_energy_lines
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

N = 8
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
SCHEDULERS = [
    ("fcfs", {}),
    ("easy-backfill", {}),
    ("easy-backfill", {"placement": "non-contiguous"}),
    ("energy-bud", {"budget_fraction": 0.5, "window_start_s": 600, "window_end_s": 4000, "shutdown": True}),
    ("reduce-pc", {"budget_fraction": 0.6, "window_start_s": 0, "window_end_s": 3000}),
    ("powercap", {"budget_fraction": 0.7, "window_start_s": 300, "window_end_s": 3000}),
    ("reduce-pc", {"budget_fraction": 0.4, "window_start_s": 0, "window_end_s": 3000, "shutdown": True}),
    ("powercap", {"budget_fraction": 0.7, "window_start_s": 300, "window_end_s": 3000, "shutdown": True}),
    ("energy-bud", {"shutdown": True}),  # no budget: EASY with opportunistic shutdown
]

jobs_strategy = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 1, 30, 200]),  # gap to the previous submission, s
        st.integers(1, N + 1),  # hosts (N + 1: wider than the machine, must be rejected)
        st.sampled_from(["compute", "compute", "delay", "composed"]),
        st.integers(0, 900),  # run time, s
        st.sampled_from([None, 0.5, 1.0, 2.0]),  # walltime / run time (None: no walltime)
    ),
    min_size=1, max_size=12,
)


@pytest.fixture(scope="module")
def platform_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("platform") / f"taurus_{N}.xml"
    path.write_text(taurus_platform_xml(N))
    return path


def workload(path: Path, specs) -> Path:
    profiles = {
        "d": {"type": "delay", "delay": 1},
    }
    jobs, t = [], 0
    for k, (gap, res, kind, runtime, factor) in enumerate(specs, start=1):
        t += gap
        name = f"p{k}"
        if kind == "compute" or runtime == 0:  # Batsim refuses a delay of 0 s: a zero-length job computes nothing
            profiles[name] = {"type": "parallel_homogeneous", "cpu": runtime * 100e6, "com": 0}
        elif kind == "delay":
            profiles[name] = {"type": "delay", "delay": runtime}
        else:
            profiles[f"{name}c"] = {"type": "parallel_homogeneous", "cpu": runtime * 50e6, "com": 0}
            profiles[f"{name}d"] = {"type": "delay", "delay": runtime / 2}
            profiles[name] = {"type": "composed", "repeat": 2, "seq": [f"{name}c", f"{name}d"]}
        job = {"id": k, "subtime": t, "res": res, "profile": name}
        if factor is not None and runtime > 0:
            job["walltime"] = max(1, round(runtime * factor))
        jobs.append(job)
    path.write_text(json.dumps({"nb_res": N, "jobs": jobs, "profiles": profiles}))
    return path


@pytest.mark.parametrize("name,options", SCHEDULERS,
                         ids=["fcfs", "easy", "easy-noncontiguous", "energy-bud-shutdown", "reduce-pc", "powercap",
                              "reduce-pc-shutdown", "powercap-shutdown", "easy-shutdown"])
@SETTINGS
@given(specs=jobs_strategy)
def test_simulation_invariants(platform_path, tmp_path_factory, name, options, specs) -> None:
    path = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    sim = Simulation(load_platform(platform_path), load_workload(path))
    run_inprocess(sim, scheduler_handler(name, options))
    rows = sim.jobs_rows
    # every job ends once: completed (any way) or rejected; jobs wider than the machine are rejected
    assert sorted(r.job.id for r in rows) == sorted(j.id for j in sim.workload.jobs)
    for r in rows:
        assert r.final_state in {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "REJECTED"}
        if r.job.res > N:
            assert r.final_state == "REJECTED"
        if r.final_state == "COMPLETED_WALLTIME_REACHED":
            assert r.end_s - r.start_s == pytest.approx(r.job.walltime_s)
    # no host runs two jobs at once
    ran = [r for r in rows if r.final_state != "REJECTED"]
    for i, a in enumerate(ran):
        for b in ran[i + 1:]:
            if a.start_s < b.end_s and b.start_s < a.end_s and a.end_s > a.start_s and b.end_s > b.start_s:
                assert ProcSet.from_str(a.alloc_str).isdisjoint(ProcSet.from_str(b.alloc_str)), (a.job.id, b.job.id)
    # host counts add up in every machine_states row
    for row in sim.machine_rows:
        assert sum(row[1:]) == N
    # energy: each job's energy is at most its hosts at full power; the jobs together fit in the total
    for r in ran:
        assert 0 <= r.energy_j <= len(ProcSet.from_str(r.alloc_str)) * 190.738 * (r.end_s - r.start_s) + 1e-6
    assert sum(r.energy_j for r in ran) <= sim.energy_j + 1e-6
    # the cumulative energy column is the integral of the power: non-decreasing, ends at the total
    energies = [float(line.split(",")[1]) for line in list(consumed_energy_lines(sim))[1:]]
    assert all(b >= a - 1e-6 for a, b in zip(energies, energies[1:]))
    if energies:
        assert energies[-1] <= sim.energy_j + 1e-6
