"""FairShare, EnergyFairShare and FS+EFS orders of schedulers/fairshare.py (EFS paper §III-B..§IV-A)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType

import pytest
from procset import ProcSet

from wattsched.base.errors import OptionError, ProtocolError
from wattsched.schedulers.backfill import FcfsNoBackfill
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.fairshare import (
    EnergyFairShare,
    FairShare,
    FairSharePlusEnergy,
)
from wattsched.schedulers.order import Fifo
from wattsched.schedulers.pieces import REGISTRY
from wattsched.schedulers.presets import build
from wattsched.schedulers.state import (
    ClusterView,
    JobState,
    QueuedJob,
    RunningJob,
    StartJob,
)

HOUR = 3600.0
ROOT = Path(__file__).resolve().parent.parent


def qjob(job_id: str, user: str | None, subtime: float = 0.0, res: int = 1, factor: float | None = None) -> QueuedJob:
    extra = MappingProxyType({} if factor is None else {"energy_factor": factor})
    return QueuedJob(job_id, res=res, walltime_s=100.0, subtime_s=subtime, user=user, extra=extra)


def view(nb_hosts: int, now: float = 0.0) -> ClusterView:
    from wattsched.energy_models.power import PlatformPower
    from wattsched.energy_models.taurus import TAURUS

    v = ClusterView.idle_machine(nb_hosts, now)
    v.power = PlatformPower.uniform(TAURUS.node_model, nb_hosts)
    return v


def run(order, v: ClusterView, job: QueuedJob, hosts: ProcSet, start: float, end: float, pstate: int | None = 0) -> None:
    """Tell ``order`` that ``job`` ran on ``hosts`` from ``start`` to ``end``."""
    v.now_s = start
    order.on_submitted(job, v)
    running = RunningJob(job.id, hosts, start, end, pstate, job)
    order.on_started(running, v)
    v.now_s = end
    order.on_completed(running, JobState.COMPLETED_SUCCESSFULLY, v)


def test_the_pieces_are_registered() -> None:
    assert REGISTRY["order"]["fifo"] is Fifo
    assert REGISTRY["order"]["fairshare"] is FairShare
    assert REGISTRY["order"]["efs"] is EnergyFairShare
    assert REGISTRY["order"]["fs-efs"] is FairSharePlusEnergy


# ------------------------------------------------------------------------------ the paper's numbers
def test_worked_example_of_section_iii_b() -> None:
    """50 CPUs, only the last 100 hours (no decay), five 30-hour jobs of 10 CPUs → U = 0.3."""
    fs = FairShare(half_life_s=math.inf)
    v = view(50)
    fs.on_platform(v)
    for k in range(5):
        run(fs, v, qjob(f"j{k}", "alice"), ProcSet((10 * k, 10 * k + 9)), 0.0, 30 * HOUR)
    assert fs.normalized_usage("alice", "cpu", 100 * HOUR) == pytest.approx(0.3)


def test_slurm_examples_no_usage_is_one_usage_equal_to_share_is_one_half() -> None:
    fs = FairShare(half_life_s=math.inf)
    v = view(4)
    fs.on_platform(v)
    for user in ("a", "b"):  # two users with equal shares: S = 1/2
        fs.on_submitted(qjob(f"{user}0", user), v)
    assert fs.normalized_share("a") == 0.5
    assert fs.factor("a", "cpu", 10.0) == 1.0
    # b uses 2 of the 4 hosts for the whole 100 s: U_b = 200 / 400 = 0.5 = S_b
    run(fs, v, qjob("b1", "b"), ProcSet((0, 1)), 0.0, 100.0)
    assert fs.normalized_usage("b", "cpu", 100.0) == pytest.approx(0.5)
    assert fs.factor("b", "cpu", 100.0) == pytest.approx(0.5)
    assert fs.factor("a", "cpu", 100.0) == 1.0
    # a usage that vastly exceeds the share gives a factor close to 0; damping d flattens it
    run(fs, v, qjob("b2", "b"), ProcSet((0, 3)), 100.0, 1000.0)  # U_b = 3800 / 4000
    assert fs.factor("b", "cpu", 1000.0) == pytest.approx(2 ** -(0.95 / 0.5))
    v.now_s = 0.0
    damped = FairShare(half_life_s=math.inf, damping=4.0)
    damped.on_platform(v)
    damped.on_submitted(qjob("a0", "a"), v)
    run(damped, v, qjob("b1", "b"), ProcSet((0, 1)), 0.0, 100.0)
    assert damped.factor("b", "cpu", 100.0) == pytest.approx(2 ** -(0.5 / 0.5 / 4.0))


def test_shares_are_normalized_over_named_and_seen_users() -> None:
    fs = FairShare(shares={"a": 3, "b": 1})
    v = view(4)
    fs.on_platform(v)
    assert fs.normalized_share("a") == pytest.approx(3 / 4)
    fs.on_submitted(qjob("c1", "c"), v)  # c gets default_share 1
    assert fs.normalized_share("a") == pytest.approx(3 / 5)
    assert fs.normalized_share("c") == pytest.approx(1 / 5)


def test_decay_halves_a_users_usage_after_one_half_life() -> None:
    fs = FairShare(half_life_s=HOUR)
    v = view(10)
    fs.on_platform(v)
    run(fs, v, qjob("j", "u"), ProcSet((0, 9)), 0.0, 60.0)
    assert fs.usage["cpu"].usage("u", 60.0 + HOUR) == pytest.approx(600.0 / 2)


# ------------------------------------------------------------------------------------------ orders
def test_users_with_less_usage_per_share_come_first_ties_by_arrival() -> None:
    fs = FairShare()
    v = view(4)
    fs.on_platform(v)
    run(fs, v, qjob("old", "heavy"), ProcSet((0, 3)), 0.0, 100.0)
    run(fs, v, qjob("old2", "light"), ProcSet((0, 0)), 100.0, 110.0)
    queue = [qjob("h1", "heavy", 200), qjob("n1", "new", 201), qjob("l1", "light", 202), qjob("n2", "new", 203),
             qjob("h2", "heavy", 204)]
    for job in queue:
        fs.on_submitted(job, v)
    v.now_s = 300.0
    assert [j.id for j in fs.sort(queue, v)] == ["n1", "n2", "l1", "h1", "h2"]
    assert [j.id for j in Fifo().sort(queue, v)] == ["h1", "n1", "l1", "n2", "h2"]


def test_efs_charges_joules_with_the_energy_factor_fs_does_not() -> None:
    v = view(4)
    efs, fs = EnergyFairShare(half_life_s=math.inf), FairShare(half_life_s=math.inf)
    for order in (efs, fs):
        order.on_platform(v)
        # same CPU-seconds; green's jobs count 0.7 of their joules, glutton's 1.3
        run(order, v, qjob("g", "green", factor=0.7), ProcSet((0, 1)), 0.0, 100.0)
        run(order, v, qjob("x", "glutton", factor=1.3), ProcSet((2, 3)), 100.0, 200.0)
    full = v.power.host(0).full_w[0]  # type: ignore[union-attr]
    assert efs.usage["energy"].usage("green", 300.0) == pytest.approx(0.7 * 2 * full * 100.0)
    assert efs.usage["energy"].usage("glutton", 300.0) == pytest.approx(1.3 * 2 * full * 100.0)
    assert fs.usage["cpu"].usage("green", 300.0) == fs.usage["cpu"].usage("glutton", 300.0) == 200.0
    queue = [qjob("x2", "glutton", 300.0), qjob("g2", "green", 301.0)]
    v.now_s = 300.0
    assert [j.id for j in efs.sort(queue, v)] == ["g2", "x2"]
    assert [j.id for j in fs.sort(queue, v)] == ["x2", "g2"]  # equal usage: arrival order


def test_efs_charges_the_pstate_a_job_ran_at() -> None:
    v = view(2)
    efs = EnergyFairShare(half_life_s=math.inf)
    efs.on_platform(v)
    run(efs, v, qjob("slow", "u"), ProcSet((0, 0)), 0.0, 10.0, pstate=5)
    assert efs.usage["energy"].usage("u", 10.0) == pytest.approx(v.power.host(0).full_w[5] * 10.0)  # type: ignore[union-attr]
    v.pstates[1] = 3  # a job without pstate of its own runs at its hosts' pstates
    run(efs, v, qjob("kept", "w"), ProcSet((1, 1)), 10.0, 20.0, pstate=None)
    assert efs.usage["energy"].usage("w", 20.0) == pytest.approx(v.power.host(1).full_w[3] * 10.0)  # type: ignore[union-attr]


def test_fs_plus_efs_sums_the_two_factors_each_divided_by_its_maximum() -> None:
    v = view(4)
    both = FairSharePlusEnergy(half_life_s=math.inf)
    both.on_platform(v)
    run(both, v, qjob("a", "a", factor=0.5), ProcSet((0, 3)), 0.0, 100.0)  # most CPU, little energy
    run(both, v, qjob("b", "b", factor=2.0), ProcSet((0, 1)), 100.0, 200.0)  # half the CPU, more energy
    run(both, v, qjob("c", "c", factor=1.0), ProcSet((0, 0)), 200.0, 300.0)
    now = 300.0
    keys = both.user_keys(["a", "b", "c"], now)
    expected = {}
    for u in "abc":
        total = 0.0
        for m in ("cpu", "energy"):
            factors = {w: both.factor(w, m, now) for w in "abc"}
            total += factors[u] / max(factors.values())
        expected[u] = -total
    assert keys == pytest.approx(expected)
    queue = [qjob("a2", "a", 300.0), qjob("b2", "b", 301.0), qjob("c2", "c", 302.0)]
    assert [j.id for j in both.sort(queue, v)] == [j for _, j in sorted((expected[u], f"{u}2") for u in "abc")]


# ------------------------------------------------------------------------------ when usage is charged
def test_end_charge_counts_nothing_while_a_job_runs_running_charge_does() -> None:
    v = view(4)
    end, running = FairShare(charge="end"), FairShare(charge="running")
    job = qjob("j", "u", res=2)
    rj = RunningJob("j", ProcSet((0, 1)), 0.0, 100.0, 0, job)
    for order in (end, running):
        order.on_platform(v)
        order.on_submitted(job, v)
        order.on_started(rj, v)
    assert end.usage["cpu"].usage("u", 50.0) == 0.0
    assert running.usage["cpu"].usage("u", 50.0) == pytest.approx(2 * 50.0, rel=1e-4)  # slightly decayed
    v.now_s = 100.0
    for order in (end, running):
        order.on_completed(rj, JobState.COMPLETED_SUCCESSFULLY, v)
    # at the end: the same usage up to the decay of what was charged during the run
    assert end.usage["cpu"].usage("u", 100.0) == 200.0
    assert running.usage["cpu"].usage("u", 100.0) == pytest.approx(200.0, rel=1e-4)
    assert running.usage["cpu"].usage("u", 100.0) < 200.0


def test_in_a_scheduler_the_charge_happens_at_completion() -> None:
    """With the default charge at end, a user's running job does not lower her priority yet."""
    order = FairShare()
    policy = PolicyScheduler(order=order, backfill=FcfsNoBackfill())
    policy.start(2)
    policy.on_submitted(qjob("a1", "alice", 0.0, res=2))
    assert policy.schedule() == [StartJob("a1", ProcSet((0, 1)))]
    policy.set_time(10.0)
    policy.on_submitted(qjob("a2", "alice", 10.0, res=2))
    policy.on_submitted(qjob("b1", "bob", 11.0, res=2))
    assert [j.id for j in order.sort(policy.queue, policy.view)] == ["a2", "b1"]  # no usage yet: arrival
    policy.set_time(50.0)
    policy.on_completed("a1", JobState.COMPLETED_SUCCESSFULLY)
    assert policy.schedule() == [StartJob("b1", ProcSet((0, 1)))]


# ---------------------------------------------------------------------------------------- options
@pytest.mark.parametrize("options,fragment", [
    ({"shares": {"alice": 0}}, "share of user 'alice' must be a number > 0, got 0"),
    ({"shares": {"alice": -2}}, "share of user 'alice'"),
    ({"shares": {"alice": "big"}}, "share of user 'alice'"),
    ({"shares": [1, 2]}, "option 'shares' of efs must be a JSON object"),
    ({"default_share": 0}, "option 'default_share' of order 'efs' must be > 0, got 0.0"),
    ({"half_life_s": 0}, "option 'half_life_s' of order 'efs' must be > 0"),
    ({"half_life_s": -86400}, "option 'half_life_s' of order 'efs' must be > 0"),
    ({"damping": 0}, "option 'damping' of order 'efs' must be > 0"),
    ({"charge": "start"}, "option 'charge' of efs must be one of end|running"),
])
def test_bad_options_are_one_line_before_the_run(options, fragment) -> None:
    with pytest.raises(OptionError) as info:
        build("efs", options)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_an_energy_factor_that_is_not_positive_is_refused_at_submission() -> None:
    efs = EnergyFairShare()
    v = view(2)
    efs.on_platform(v)
    with pytest.raises(ProtocolError, match="job w0!7: field 'energy_factor' must be a finite number > 0, got 0"):
        efs.on_submitted(qjob("w0!7", "u", factor=0), v)
    FairShare().on_submitted(qjob("w0!7", "u", factor=0), v)  # FS does not read it


@pytest.mark.parametrize("entry,fragment", [
    ({"user": [1, 2]}, "job 'w0!3'.user: must be a string or a number, got a list"),
    ({"user": None}, "job 'w0!3'.user: must be a string or a number, got null"),
    ({"user": True}, "job 'w0!3'.user: must be a string or a number, got true"),
    ({"user": ""}, "job 'w0!3'.user: must name an account, got an empty string"),
    ({"user": " "}, "job 'w0!3'.user: must name an account, got a blank string"),
    ({"energy_factor": 0}, "job 'w0!3'.energy_factor: must be a finite number > 0, got 0"),
    ({"energy_factor": -1.3}, "job 'w0!3'.energy_factor: must be a finite number > 0"),
    ({"energy_factor": "0.7"}, "job 'w0!3'.energy_factor: must be a number > 0, got the string '0.7'"),
])
def test_wattsched_run_refuses_bad_user_or_factor_fields_before_the_run(tmp_path, capsys, entry, fragment) -> None:
    from wattsched.cli import main

    workload = json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())
    workload["jobs"][2].update(entry)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(workload))
    status = main(["run", str(ROOT / "platforms" / "taurus_16.xml"), str(path), "-s", "efs",
                   "-e", str(tmp_path / "out" / "o"), "-q"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "bad.json" in err and fragment in err, err
    assert not (tmp_path / "out").exists()  # nothing written


def test_wattsched_run_per_user_prints_each_users_stretch(tmp_path, capsys) -> None:
    from wattsched.cli import main

    assert main(["run", str(ROOT / "platforms" / "taurus_16.xml"), str(ROOT / "workloads" / "demo_taurus16.json"),
                 "-s", "fairshare", "-o", '{"half_life_s": 86400}', "-e", str(tmp_path / "o"), "-q", "--json",
                 "--per-user"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert {f"mean_stretch_user_{u}" for u in range(1, 9)} <= set(metrics)


def test_pybatsim_class_and_translator_schedule_alike(tmp_path) -> None:
    """The presets registered for pybatsim (what 'pybatsim efs' and the Docker image run) read users and
    energy factors from pybatsim's job objects exactly as the in-process translator does."""
    from wattsched.platforms.generate import taurus_platform_xml
    from wattsched.schedulers.adapter import PRESET_CLASSES, pybatsim_handler
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.workloads.lightesp import light_esp

    (tmp_path / "p.xml").write_text(taurus_platform_xml(15))
    (tmp_path / "w.json").write_text(json.dumps(light_esp(copies=2)))
    for preset in ("fairshare", "efs", "fs-efs"):
        rows = []
        for handler in (scheduler_handler(preset, {}), pybatsim_handler(PRESET_CLASSES[preset]({}))):
            sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"))
            run_inprocess(sim, handler)
            rows.append(sorted((r.job.id, r.start_s, r.alloc_str) for r in sim.jobs_rows))
        assert rows[0] == rows[1], preset
    assert rows[0] != sorted((r.job.id, r.start_s, r.alloc_str) for r in _fifo_rows(tmp_path))


def _fifo_rows(tmp_path):
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"))
    run_inprocess(sim, scheduler_handler("compose", {"order": "fifo"}))
    return sim.jobs_rows


def test_batched_exponents_equal_the_equations() -> None:
    v = view(4)
    both = FairSharePlusEnergy(shares={"a": 2.0}, half_life_s=500.0, damping=1.5)
    both.on_platform(v)
    run(both, v, qjob("a", "a", factor=0.5), ProcSet((0, 3)), 0.0, 100.0)
    run(both, v, qjob("b", "b", factor=2.0), ProcSet((0, 1)), 100.0, 200.0)
    both.on_submitted(qjob("c", "c"), v)
    for m in ("cpu", "energy"):
        assert both.exponents(["a", "b", "c"], m, 400.0) == pytest.approx(
            [both.exponent(u, m, 400.0) for u in "abc"], rel=1e-12)
    fs = FairShare(half_life_s=500.0)
    fs.on_platform(v)
    run(fs, v, qjob("a", "a"), ProcSet((0, 3)), 200.0, 300.0)
    run(fs, v, qjob("b", "b"), ProcSet((0, 1)), 300.0, 400.0)
    keys = fs.user_keys(["a", "b"], 450.0)
    assert (keys["a"] < keys["b"]) == (fs.exponent("a", "cpu", 450.0) < fs.exponent("b", "cpu", 450.0))


# ------------------------------------------------------------------------------ SLURM's age factor
def _heavy_alice(order, hosts: int = 4) -> ClusterView:
    """alice used the whole machine for 10 hours (U = 1 at t = 10 h without decay), bob nothing."""
    v = view(hosts)
    order.on_platform(v)
    run(order, v, qjob("used", "alice"), ProcSet((0, hosts - 1)), 0.0, 10 * HOUR)
    order.on_submitted(qjob("b0", "bob"), v)
    return v


@pytest.mark.parametrize("cls", [FairShare, FairSharePlusEnergy])
def test_without_age_weight_the_heavy_user_waits_behind_newer_jobs(cls) -> None:
    order = cls(half_life_s=math.inf)
    v = _heavy_alice(order)
    old, new = qjob("a_old", "alice", subtime=10 * HOUR), qjob("b_new", "bob", subtime=20 * HOUR)
    v.now_s = 30 * HOUR
    assert [j.id for j in order.sort([old, new], v)] == ["b_new", "a_old"]


def test_the_age_factor_lifts_a_job_that_waited_long_enough() -> None:
    """F_alice = 2^-(U/S) with U = 10 h·4 / (30 h·4) = 1/3 and S = 1/2 at t = 30 h: 2^(-2/3) ≈ 0.63; F_bob = 1.
    With w = 1 and max_age = 20 h, alice's job of age 20 h gets 0.63 + 1 = 1.63 against bob's 1 + 0.5·0 = 1."""
    order = FairShare(half_life_s=math.inf, age_weight=1.0, max_age_s=20 * HOUR)
    v = _heavy_alice(order)
    old, new = qjob("a_old", "alice", subtime=10 * HOUR), qjob("b_new", "bob", subtime=30 * HOUR)
    v.now_s = 30 * HOUR
    assert order.user_factors(["alice", "bob"], v.now_s) == pytest.approx({"alice": 2 ** (-2 / 3), "bob": 1.0})
    assert [j.id for j in order.sort([old, new], v)] == ["a_old", "b_new"]
    # a small weight is not enough: 0.63 + 0.2 < 1 + 0
    light = FairShare(half_life_s=math.inf, age_weight=0.2, max_age_s=20 * HOUR)
    v = _heavy_alice(light)
    v.now_s = 30 * HOUR
    assert [j.id for j in light.sort([old, new], v)] == ["b_new", "a_old"]
    # the age saturates at max_age_s: a job twice as old gets no more than 1·w
    assert [j.id for j in light.sort([qjob("a_older", "alice", subtime=-100 * HOUR), new], v)] == ["b_new", "a_older"]


def test_the_age_factor_keeps_arrival_order_for_one_user() -> None:
    order = FairShare(age_weight=5.0, max_age_s=HOUR)
    v = view(4, now=10 * HOUR)
    order.on_platform(v)
    jobs = [qjob(f"j{k}", "alice", subtime=k * 600.0) for k in range(5)]
    assert order.sort(jobs, v) == jobs


@pytest.mark.parametrize("options, field", [
    ({"age_weight": -1}, "age_weight"), ({"age_weight": 1e7}, "age_weight"), ({"age_weight": math.nan}, "age_weight"),
    ({"max_age_s": 0}, "max_age_s"), ({"max_age_s": math.inf}, "max_age_s"),
])
def test_bad_age_options_are_refused(options, field) -> None:
    with pytest.raises(OptionError, match=f"option '{field}' of order 'fairshare'"):
        FairShare(**options)


def test_the_age_factor_changes_a_run_of_the_fairshare_preset() -> None:
    """Through the preset and its options, on a small workload of two users where one submits a burst."""
    jobs = [{"id": f"a{k}", "subtime": 0.0, "res": 16, "walltime": 3600.0, "profile": "p", "user": "alice"}
            for k in range(3)]
    jobs += [{"id": f"b{k}", "subtime": 100.0 + k, "res": 16, "walltime": 3600.0, "profile": "p", "user": "bob"}
             for k in range(3)]
    workload = {"nb_res": 16, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 3000.0}}}
    from wattsched import api

    starts = {}
    for w in (0.0, 1e5):  # 100 s of age weigh 10, a fair-share factor at most 1
        result = api.simulate(str(ROOT / "platforms" / "taurus_16.xml"), workload, scheduler="fairshare",
                              options={"age_weight": w, "max_age_s": 1e6})
        ran = result.jobs.sort_values("starting_time")
        starts[w] = [str(j).split("!")[-1] for j in ran["job_id"]]
    assert starts[0.0][:2] == ["a0", "b0"]  # bob's first job jumps ahead of alice's second (usage alone)
    assert starts[1e5] == ["a0", "a1", "a2", "b0", "b1", "b2"]  # the age dominates: arrival order
