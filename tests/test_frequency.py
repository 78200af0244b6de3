"""A frequency choice composed with EASY and opportunistic shutdown, on the embedded simulator.

A toy DVFS policy runs narrow jobs at half speed. The core gives each job its walltime at its pstate
(runtime model, β = 1: twice as long) and re-registers a slowed job with that walltime (dynamic jobs), so
EASY's reservation sees the slowed jobs' real ends and Batsim does not kill them. Checked on whole
simulations: the simulator runs the slowed jobs exactly as long as the policy expected, none is killed, and
no head job starts after the reservation computed when it became the head.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.energy_models.taurus import TAURUS
from wattsched.platforms.generate import taurus_platform_xml
from wattsched.schedulers.backfill import EasyBackfilling, admitted_reservation
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.frequency import FrequencyChoice, TopFrequency
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.power import OpportunisticShutdown
from wattsched.schedulers.protocol import BatsimTranslator
from wattsched.schedulers.state import ClusterView, QueuedJob
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.base.batsim_files import original_job_id

N = 16
HALF = 10  # Taurus pstate 10: 50.09 Mflop/s, about half of pstate 0's 100 Mflop/s
SLOWDOWN = TAURUS.pstates[0].speed_flops / TAURUS.pstates[HALF].speed_flops


class HalfSpeedForNarrow(FrequencyChoice):
    """Jobs of at most two hosts at pstate 10, the others at pstate 0."""

    name = "half-speed-narrow"

    def pstate_for(self, job: QueuedJob, hosts: ProcSet, view: ClusterView) -> int | None:
        return HALF if job.res <= 2 else 0


@pytest.fixture(scope="module")
def platform_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("platform") / f"taurus_{N}.xml"
    path.write_text(taurus_platform_xml(N))
    return path


def workload(path: Path, seed: int, nb_jobs: int) -> tuple[Path, dict[str, float]]:
    """Seeded jobs: 1-6 hosts, 10-900 s of computation at pstate 0, walltime 1.05-1.5 × that (a slowed job
    runs past it: the core re-registers it with its walltime at pstate 10), submitted over half an hour; also
    the top-speed run time of each job."""
    rng = random.Random(seed)
    jobs, profiles, runtimes = [], {}, {}
    t = 0.0
    for k in range(nb_jobs):
        t += rng.choice([0.0, 0.0, 5.0, 60.0, 300.0])
        runtime = float(rng.randint(10, 900))
        res = rng.choice([1, 1, 2, 2, 3, 4, 6])
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * TAURUS.pstates[0].speed_flops, "com": 0}
        jobs.append({"id": str(k), "subtime": t, "res": res, "profile": f"p{k}",
                     "walltime": round(runtime * rng.uniform(1.05, 1.5))})
        runtimes[f"w0!{k}"] = runtime
    path.write_text(json.dumps({"nb_res": N, "jobs": jobs, "profiles": profiles}))
    return path, runtimes


def run(platform_path: Path, workload_path: Path):
    """EASY + shutdown + the toy frequency; returns the simulation, the policy and, for each job, the start
    its reservation promised when it first became the head (after a pass)."""
    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), power=OpportunisticShutdown(),
                             frequency=HalfSpeedForNarrow())
    translator = BatsimTranslator(policy)
    promised: dict[str, float] = {}

    def handler(message: dict) -> dict:
        reply = translator(message)
        if translator.ended or policy._view is None or not policy.queue:
            return reply
        view = policy.view
        head = policy.order.sort(policy.queue, view)[0]
        if head.id not in promised:
            seen = policy.backfill_view(view)
            reservation = admitted_reservation(head, view.now_s, seen.free, seen.by_end(), policy,
                                               policy.admission, view)
            promised[head.id] = math.inf if reservation is None else reservation.start_s
        return reply

    sim = Simulation(load_platform(platform_path), load_workload(workload_path), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    run_inprocess(sim, handler)
    return sim, policy, promised


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), nb_jobs=st.integers(5, 40))
def test_slowed_jobs_run_as_expected_and_easy_never_delays_the_head(platform_path, tmp_path_factory, seed, nb_jobs):
    workload_path, runtimes = workload(tmp_path_factory.mktemp("w") / "w.json", seed, nb_jobs)
    sim, policy, promised = run(platform_path, workload_path)
    # a slowed job ran as its registered twin, resized!w0.<id> (the original is rejected)
    rows = {original_job_id(rj.job.id): rj for rj in sim.iter_jobs() if rj.final_state != "REJECTED"}
    assert set(rows) == set(runtimes)
    slowed = 0
    for job_id, rj in rows.items():
        assert rj.final_state == "COMPLETED_SUCCESSFULLY", job_id
        expected = runtimes[job_id] * (SLOWDOWN if rj.job.res <= 2 else 1.0)
        assert rj.end_s - rj.start_s == pytest.approx(expected, rel=1e-9, abs=1e-6), job_id
        slowed += rj.job.res <= 2
    assert slowed  # the toy did slow jobs down
    for job_id, promised_s in promised.items():
        assert rows[job_id].start_s <= promised_s + 1e-6, f"{job_id} started after its reservation"
    assert set(sim.pstate_rows[i][2] for i in range(len(sim.pstate_rows))) >= {HALF}


def test_a_booked_job_does_not_delay_a_later_head(platform_path, tmp_path):
    """The example hypothesis found (seed 5000, 30 jobs): EASY's promise to a head must hold with shutdown."""
    workload_path, _ = workload(tmp_path / "w.json", 5000, 30)
    sim, _, promised = run(platform_path, workload_path)
    rows = {original_job_id(rj.job.id): rj for rj in sim.iter_jobs() if rj.final_state != "REJECTED"}
    assert [job_id for job_id, s in promised.items() if rows[job_id].start_s > s + 1e-6] == []


def test_the_policy_expects_a_slowed_job_to_end_later():
    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=HalfSpeedForNarrow())
    policy.start(5)
    policy.on_submitted(QueuedJob("narrow", 2, 100.0, 0.0))
    policy.on_submitted(QueuedJob("wide", 3, 100.0, 0.0))
    decisions = policy.schedule()
    assert decisions[0].pstate == HALF and decisions[0].hosts == ProcSet((0, 1))  # type: ignore[union-attr]
    running = policy.view.running
    assert running["narrow"].expected_end_s == pytest.approx(100.0 * SLOWDOWN)
    assert (running["narrow"].pstate, running["wide"].pstate, running["wide"].expected_end_s) == (HALF, 0, 100.0)


def test_a_lower_pstate_needs_the_platforms_speeds():
    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=HalfSpeedForNarrow())
    properties = [{"wattage_per_state": ", ".join(f"{p.idle_w}:{p.full_w}" for p in TAURUS.pstates)}] * 4
    policy.start(4, 0.0, properties)  # no speed_per_state: Batsim does not send speeds
    policy.on_submitted(QueuedJob("narrow", 1, 100.0, 0.0))
    with pytest.raises(OptionError, match="speed_per_state"):
        policy.schedule()
    top = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=TopFrequency())
    top.start(4, 0.0, properties)
    top.on_submitted(QueuedJob("any", 1, 100.0, 0.0))
    assert top.schedule()  # the top pstate needs no speed


def test_a_slowed_job_is_re_registered_with_its_longer_walltime(platform_path, tmp_path):
    """With dynamic jobs, a job slowed past its walltime is not killed: the core rejects it and registers its
    twin with the walltime at its pstate (Batsim behaviour 44); the outputs show it once, as the original."""
    from wattsched.analysis.outputs import load_outputs
    from wattsched.simulator.outputs import write_outputs

    runtime = 300.0
    workload_path = tmp_path / "w.json"
    workload_path.write_text(json.dumps({"nb_res": N, "jobs": [
        {"id": "narrow", "subtime": 0, "res": 1, "profile": "p", "walltime": runtime * 1.2, "user": "u"},
        {"id": "wide", "subtime": 0, "res": 4, "profile": "p", "walltime": runtime * 1.2}],
        "profiles": {"p": {"type": "parallel_homogeneous", "cpu": runtime * TAURUS.pstates[0].speed_flops, "com": 0}}}))
    for dynamic in (False, True):
        policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=HalfSpeedForNarrow())
        sim = Simulation(load_platform(platform_path), load_workload(workload_path), dynamic_jobs=dynamic,
                         acknowledge_dynamic_jobs=dynamic)
        run_inprocess(sim, BatsimTranslator(policy))
        write_outputs(sim, tmp_path / f"out{dynamic}")
        jobs = load_outputs(tmp_path / f"out{dynamic}").jobs.set_index("job_id")
        assert jobs.loc["wide", "final_state"] == "COMPLETED_SUCCESSFULLY"
        if not dynamic:  # Batsim kills the slowed job at the walltime of its workload entry
            assert jobs.loc["narrow", "final_state"] == "COMPLETED_WALLTIME_REACHED"
            continue
        assert len(jobs) == 2 and jobs.loc["narrow", "final_state"] == "COMPLETED_SUCCESSFULLY"
        assert jobs.loc["narrow", "execution_time"] == pytest.approx(runtime * SLOWDOWN, abs=1e-6)
        assert jobs.loc["narrow", "submission_time"] == 0.0 and jobs.loc["narrow", "workload_name"] == "w0"
        assert any(rj.job.id == "resized!w0.narrow" for rj in sim.iter_jobs())
