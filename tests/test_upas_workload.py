"""β workloads (workloads/upas.py): a seeded β per job, composed profiles that run T(f) exactly at every gear of
the embedded simulator, and the walltime rules (estimates for jobs without one, kills at the walltime)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.base.errors import InputError
from wattsched.energy_models.upas import UPAS_NODE
from wattsched.platforms.generate import upas_platform_xml
from wattsched.schedulers.backfill import EasyBackfilling
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.frequency import FrequencyChoice
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.protocol import BatsimTranslator
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.base.batsim_files import original_job_id
from wattsched.simulator.workload import load_workload
from wattsched.workloads.swf import swf_to_batsim
from wattsched.workloads.upas import (
    beta_workload,
    estimated_walltime_s,
    job_runtimes_s,
    profile_runtime_s,
    read_workload,
)

FIXTURES = Path(__file__).parent / "fixtures" / "swf"
TOP = UPAS_NODE.max_speed_flops


def base_workload(specs: list[tuple[int, float, float | None]], speed: float = TOP) -> dict:
    """Jobs (res, run time, walltime or None) submitted at 0, parallel_homogeneous at ``speed``."""
    jobs, profiles = [], {}
    for k, (res, run, wall) in enumerate(specs):
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": run * speed, "com": 0}
        job = {"id": k, "subtime": 0, "res": res, "profile": f"p{k}"}
        if wall is not None:
            job["walltime"] = wall
        jobs.append(job)
    return {"nb_res": 64, "jobs": jobs, "profiles": profiles}


def test_every_job_gets_a_seeded_beta_by_its_size_and_its_own_beta_profile():
    base = base_workload([(1, 100.0, 200.0), (16, 50.0, 60.0), (128, 3600.0, 7200.0)] * 20)
    work = beta_workload(base, seed=5)
    again = beta_workload(base, seed=5)
    other = beta_workload(base, seed=6)
    betas = [j["beta"] for j in work["jobs"]]
    assert betas == [j["beta"] for j in again["jobs"]] and betas != [j["beta"] for j in other["jobs"]]
    for job in work["jobs"]:
        assert 0.01 <= job["beta"] <= 1.0
        profile = work["profiles"][job["profile"]]
        assert profile["type"] == "composed" and profile["seq"] == [f"b{job['id']}.c", f"b{job['id']}.d"]
        compute, delay = (work["profiles"][p] for p in profile["seq"])
        run = base["profiles"][f"p{job['id']}"]["cpu"] / TOP
        assert compute["cpu"] == pytest.approx(job["beta"] * run * TOP)
        assert delay["delay"] == pytest.approx((1 - job["beta"]) * run)
        assert profile_runtime_s(work["profiles"], job["profile"], TOP) == pytest.approx(run)
    wide = [j["beta"] for j in work["jobs"] if j["res"] > 32]
    narrow = [j["beta"] for j in work["jobs"] if j["res"] <= 4]
    assert sum(wide) / len(wide) < sum(narrow) / len(narrow)  # N(0.3, ·) against N(0.5, ·)
    assert work["meta"]["upas"]["seed"] == 5 and base["jobs"][0]["profile"] == "p0"  # the input is untouched


def test_walltime_rules():
    base = base_workload([(1, 100.0, None), (1, 120.0, None), (2, 300.0, 300.0), (2, 400.0, 300.0), (4, 50.0, 60.0)],
                         speed=100e6)
    work = beta_workload(base, seed=1, base_speed_flops=100e6)
    runtimes = job_runtimes_s(work, TOP)
    jobs = {str(j["id"]): j for j in work["jobs"]}
    assert jobs["0"]["walltime"] == 120.0 and jobs["1"]["walltime"] == 180.0  # next whole minute strictly above
    assert estimated_walltime_s(59.5) == 60.0 and estimated_walltime_s(60.0) == 120.0
    # a job that ran as long as its request, or longer, holds 1 s more work: Batsim kills it at its walltime
    assert runtimes["2"] == pytest.approx(301.0) and runtimes["3"] == pytest.approx(301.0)
    assert runtimes["4"] == pytest.approx(50.0) and jobs["4"]["walltime"] == 60.0
    assert work["meta"]["upas"]["nb_estimated_walltimes"] == 2 and work["meta"]["upas"]["nb_killed_at_walltime"] == 2


class GearPerJob(FrequencyChoice):
    """Job ``k`` at pstate ``k % 6``: every gear."""

    name = "gear-per-job"

    def pstate_for(self, job, hosts, view):
        return int(job.id.split("!")[1]) % 6


def test_beta_profiles_run_t_of_f_to_the_microsecond_at_every_gear(tmp_path):
    """T(f) = T·(β·(f_top/f − 1) + 1) on the embedded simulator, the gear set before the job starts; the slowed jobs
    are re-registered with their walltime at their gear and none is killed; Batsim bills the compute part at the
    gear's full power and the delay at its idle power."""
    specs = [(1 + (k % 3), 37.0 + 113.0 * k, 10_000.0) for k in range(18)]
    work = beta_workload(base_workload(specs), seed=3)
    for job in work["jobs"]:
        job["subtime"] = 20_000 * job["id"]  # one job at a time
    (tmp_path / "w.json").write_text(json.dumps(work))
    (tmp_path / "p.xml").write_text(upas_platform_xml(4))
    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=GearPerJob())
    sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    run_inprocess(sim, BatsimTranslator(policy))
    rows = {original_job_id(rj.job.id): rj for rj in sim.iter_jobs() if rj.final_state != "REJECTED"}
    assert len(rows) == len(specs)
    for job in work["jobs"]:
        rj = rows[f"w0!{job['id']}"]
        pstate = job["id"] % 6
        f = UPAS_NODE.frequencies_ghz[pstate]
        run = specs[job["id"]][1]
        expected = run * (job["beta"] * (2.3 / f - 1.0) + 1.0)
        assert rj.final_state == "COMPLETED_SUCCESSFULLY"
        assert abs((rj.end_s - rj.start_s) - expected) < 1e-6, (job["id"], f)
        p = UPAS_NODE.pstates[pstate]
        res = specs[job["id"]][0]
        compute_s = job["beta"] * run * 2.3 / f
        assert rj.energy_j == pytest.approx(res * (p.full_w * compute_s + p.idle_w * (expected - compute_s)), rel=1e-9)


def test_the_llnl_thunder_excerpt_gets_estimates_for_its_missing_requests():
    base = swf_to_batsim(FIXTURES / "llnl-thunder-2007-excerpt.swf", speed_flops=TOP, nb_hosts=4008,
                         job_numbers=(20000, 20099), walltime_rule="none")
    assert all("walltime" not in j for j in base["jobs"]) and len(base["jobs"]) <= 100
    assert all(20000 <= j["id"] <= 20099 for j in base["jobs"])
    assert base["meta"]["filtered"]["outside_job_numbers"] == 100
    work = beta_workload(base, seed=1)
    runtimes = job_runtimes_s(work, TOP)
    for job in work["jobs"]:
        assert runtimes[str(job["id"])] < job["walltime"] <= runtimes[str(job["id"])] + 60.0
        assert job["walltime"] % 60 == 0


def test_a_workload_that_cannot_be_read_is_one_line(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text("{\"jobs\": [")
    with pytest.raises(InputError, match="w.json.*line 1") as info:
        read_workload(bad)
    assert "\n" not in str(info.value)
    bad.write_text(json.dumps({"jobs": [{"id": 1, "res": 1, "subtime": 0, "profile": "nope"}], "profiles": {}}))
    with pytest.raises(InputError, match="profile 'nope' does not exist"):
        beta_workload(read_workload(bad), seed=1)
