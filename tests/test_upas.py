"""UPAS's frequency assignment (schedulers/upas.py): eq. 1 from events, eq. 2 on hand-built states, its options
refused on one line before the run, hypothesis properties on whole simulations, and compositions end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.energy_models.power import PlatformPower
from wattsched.energy_models.upas import UPAS_NODE
from wattsched.platforms.generate import speed_attribute, taurus_platform_xml, upas_platform_xml, wattage_per_state_attribute
from wattsched.schedulers.protocol import needs_dynamic_jobs, scheduler_handler
from wattsched.schedulers.presets import build
from wattsched.schedulers.protocol import BatsimTranslator
from wattsched.schedulers.state import ClusterView, JobState, QueuedJob, RunningJob
from wattsched.schedulers.upas import IntervalUtilization, Upas
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.workloads.upas import beta_workload
from wattsched.base.batsim_files import original_job_id

N = 16
TOP, UPPER, LOWER = 0, 1, 3  # pstates of 2.3, 2.0 and 1.4 GHz on the UPAS processor
PROPERTIES = {"speed_per_state": speed_attribute(UPAS_NODE), "wattage_per_state": wattage_per_state_attribute(UPAS_NODE),
              "sleep_pstates": "6:7:8", **UPAS_NODE.extra_properties}


# ------------------------------------------------------------------------------------------ eq. 1
def test_utilization_of_the_previous_interval_from_start_and_end_events():
    u = IntervalUtilization(100.0, 10)
    assert u.previous(0.0) == 0.0  # before the first interval ends: the empty machine before the start
    u.change(0.0, +5)
    u.change(50.0, +5)
    assert u.previous(99.9) == 0.0
    assert u.previous(100.0) == pytest.approx((5 * 50 + 10 * 50) / 1000)  # interval 0: 0.75
    u.change(150.0, -10)
    assert u.previous(199.0) == pytest.approx(0.75)
    assert u.previous(250.0) == pytest.approx(10 * 50 / 1000)  # interval 1: 0.5
    assert u.previous(450.0) == 0.0  # intervals 2, 3 empty
    u.change(460.0, +3)
    assert u.previous(2000.0) == pytest.approx(0.3)  # many intervals later, 3 busy all along


# ------------------------------------------------------------------------------------------ eq. 2
@pytest.mark.parametrize("busy, waiting, wq, expected", [
    (13, 1, 0, TOP),      # U = 0.8125 ≥ U_upper
    (12, 1, 0, UPPER),    # U = 0.75: between the thresholds, nothing else waits
    (8, 1, 0, UPPER),     # U = 0.5 = U_lower: f_upper (U_lower ≤ U)
    (7, 1, 0, LOWER),     # U = 0.4375 < U_lower
    (7, 2, 0, TOP),       # another job waits: WQ_size 1 > 0
    (7, 5, 4, LOWER),     # WQ_size 4 ≤ 4
    (7, 6, 4, TOP),       # WQ_size 5 > 4
    (7, 500, None, LOWER),  # no limit
])
def test_eq_2(busy, waiting, wq, expected):
    piece = Upas(wq_threshold=wq)
    view = ClusterView.idle_machine(N)
    view.power = PlatformPower.uniform(UPAS_NODE.node_model, N)
    view.host_properties = [PROPERTIES] * N
    view.dynamic_jobs = True
    piece.on_platform(view)
    if busy:
        piece.on_started(RunningJob("r", ProcSet((0, busy - 1)), 0.0, 1e9, 0), view)
    view.now_s = 601.0
    view.nb_waiting = waiting  # the job asked about is one of them
    job = QueuedJob("w0!1", 1, 100.0, 0.0)
    assert piece.pstate_for(job, ProcSet(15), view) == expected
    piece.on_completed(RunningJob("r", ProcSet((0, busy - 1)), 0.0, 1e9, 0), JobState.COMPLETED_SUCCESSFULLY, view)


def test_the_walltime_at_a_gear_uses_the_jobs_beta_or_the_worst_case():
    from wattsched.energy_models.dvfs import BetaModel

    for worst, expected in ((False, 100.0 * (0.3 * (2.3 / 1.4 - 1) + 1)), (True, 100.0 * 2.3 / 1.4)):
        policy = build("upas", {"beta_at_start": "worst-case"} if worst else {})
        policy.start(N, 0.0, [PROPERTIES] * N, dynamic_jobs=True, profiles={"w0": {"p": {"type": "delay", "delay": 1}}})
        policy.on_submitted(QueuedJob("w0!1", 2, 100.0, 0.0, "p", runtime=BetaModel(0.3)))
        policy.schedule()
        running = policy.view.running["resized!w0.1"]  # re-registered with its walltime at its gear
        assert running.pstate == LOWER and running.expected_end_s == pytest.approx(expected)


# ------------------------------------------------------------------------------------------ options
@pytest.mark.parametrize("options, fragment", [
    ({"u_upper": 1.5}, "'u_upper' of upas is out of range"),
    ({"u_lower": -0.1}, "'u_lower' of upas is out of range"),
    ({"u_lower": 0.9}, "'u_lower' (0.9) and 'u_upper' (0.8) of upas are reversed"),
    ({"f_lower_ghz": 2.0, "f_upper_ghz": 1.7}, "'f_lower_ghz' (2) and 'f_upper_ghz' (1.7) of upas are reversed"),
    ({"interval_s": 0}, "'interval_s' of upas must be positive, got 0"),
    ({"interval_s": -600}, "'interval_s' of upas must be positive"),
    ({"wq_threshold": -1}, "'wq_threshold' of upas is out of range"),
    ({"beta_at_start": "guess"}, "'beta_at_start' of upas must be one of known|worst-case"),
])
def test_bad_options_are_one_line_before_the_run(options, fragment):
    with pytest.raises(OptionError) as info:
        build("upas", options)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("upas")
    paths = {"upas": folder / "upas.xml", "taurus": folder / "taurus.xml", "work": folder / "w.json"}
    paths["upas"].write_text(upas_platform_xml(N))
    paths["taurus"].write_text(taurus_platform_xml(N))
    paths["work"].write_text(json.dumps(random_workload(11, 30)))
    return paths


@pytest.mark.parametrize("platform, options, fragment", [
    ("upas", {"f_upper_ghz": 2.1}, "option 'f_upper_ghz' of upas: 2.1 GHz is not a gear of the platform (gears: 2.3, 2"),
    ("upas", {"f_lower_ghz": 0.5}, "option 'f_lower_ghz' of upas: 0.5 GHz is not a gear"),
    ("taurus", {}, "no 'frequency_ghz_per_state' property"),
    ("upas", {"u_upper": 2}, "out of range"),
])
def test_the_cli_refuses_bad_options_and_platforms_on_one_line_without_outputs(inputs, tmp_path, capsys, platform,
                                                                                 options, fragment):
    from wattsched.cli import main

    status = main(["run", str(inputs[platform]), str(inputs["work"]), "-s", "upas", "-o", json.dumps(options),
                   "-e", str(tmp_path / "out" / "run"), "-q"])
    err = capsys.readouterr().err
    assert status == 2 and fragment in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_real_batsim_without_dynamic_jobs_is_refused_at_simulation_begins(inputs):
    policy = build("upas")
    with pytest.raises(OptionError, match="--enable-dynamic-jobs --acknowledge-dynamic-jobs"):
        policy.start(N, 0.0, [PROPERTIES] * N, dynamic_jobs=False)
    never = build("upas", {"u_upper": 0.0, "u_lower": 0.0})  # never scales: needs nothing
    never.start(N, 0.0, [PROPERTIES] * N, dynamic_jobs=False)
    assert not never.needs_dynamic_jobs and build("upas").needs_dynamic_jobs
    assert needs_dynamic_jobs(scheduler_handler("compose", {"frequency": "upas"}))
    assert not needs_dynamic_jobs(scheduler_handler("easy-backfill", {}))


# ------------------------------------------------------------------------------------------ whole runs
def random_workload(seed: int, nb_jobs: int) -> dict:
    """Seeded β jobs on N processors: 1-8 wide, 10-2000 s, walltimes 1-2× the run time, one job in eight that ran
    as long as its request (killed at its walltime), bursts of submissions."""
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for k in range(nb_jobs):
        t += rng.choice([0.0, 0.0, 10.0, 120.0, 900.0, 3000.0])
        run = float(rng.randint(10, 2000))
        wall = run if rng.random() < 0.125 else round(run * rng.uniform(1.0, 2.0)) + 1
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": run * UPAS_NODE.max_speed_flops, "com": 0}
        jobs.append({"id": k, "subtime": t, "res": rng.choice([1, 1, 2, 3, 4, 6, 8]), "profile": f"p{k}",
                     "walltime": wall})
    return beta_workload({"nb_res": N, "jobs": jobs, "profiles": profiles}, seed=seed)


def simulate(platform: Path, workload: Path, scheduler: str, options: dict, on_reply=None):
    handler = scheduler_handler(scheduler, options)
    translator = handler
    if on_reply is not None:
        def handler(message):  # noqa: F811 - the wrapped handler
            reply = translator(message)
            on_reply(translator, reply)
            return reply
    dynamic = needs_dynamic_jobs(translator)
    sim = Simulation(load_platform(platform), load_workload(workload), dynamic_jobs=dynamic,
                     acknowledge_dynamic_jobs=dynamic)
    run_inprocess(sim, handler)
    rows = {original_job_id(rj.job.id): rj for rj in sim.iter_jobs() if rj.final_state != "REJECTED"}
    return sim, rows


OPTIONS = st.fixed_dictionaries({
    "interval_s": st.sampled_from([60.0, 300.0, 600.0]),
    "u_upper": st.sampled_from([0.3, 0.6, 0.8, 1.0]),
    "u_lower": st.sampled_from([0.0, 0.2, 0.3]),
    "wq_threshold": st.sampled_from([0, 1, 4, None]),
    "beta_at_start": st.sampled_from(["known", "worst-case"]),
    "f_upper_ghz": st.sampled_from([2.0, 1.7]),
    "f_lower_ghz": st.sampled_from([1.4, 1.1]),
})


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), nb_jobs=st.integers(5, 40), options=OPTIONS)
def test_properties_on_whole_runs(inputs, tmp_path_factory, seed, nb_jobs, options):
    work = random_workload(seed, nb_jobs)
    path = tmp_path_factory.mktemp("w") / "w.json"
    path.write_text(json.dumps(work))
    platform = inputs["upas"]
    p_lower = UPAS_NODE.pstate_of(options["f_lower_ghz"])
    reduced_with_others_waiting = []

    def check_reply(translator: BatsimTranslator, reply: dict) -> None:
        policy = translator.policy
        if policy._view is None:
            return
        started = [e["data"]["job_id"] for e in reply["events"] if e["type"] == "EXECUTE_JOB"]
        for i, job_id in enumerate(started):
            if policy.view.running[job_id].pstate != TOP and (i < len(started) - 1 or policy.queue):
                reduced_with_others_waiting.append(job_id)

    easy_sim, easy = simulate(platform, path, "easy-backfill", {})
    sim, rows = simulate(platform, path, "upas", options, check_reply)
    # every job runs; the only jobs killed at their walltime are those EASY kills too (they ran as long as their
    # request: 1 s more work than it), whatever their gear — none because of DVFS
    assert set(rows) == set(easy)
    killed = {j for j, rj in rows.items() if rj.final_state != "COMPLETED_SUCCESSFULLY"}
    easy_killed = {j for j, rj in easy.items() if rj.final_state != "COMPLETED_SUCCESSFULLY"}
    assert all(rows[j].final_state == "COMPLETED_WALLTIME_REACHED" for j in killed)
    if options["beta_at_start"] == "known":
        assert killed == easy_killed
    else:  # the worst-case walltime may let a job that overran its request finish
        assert killed <= easy_killed
    # no job ever started below f_lower: the pstates requested are the top gear, f_upper and f_lower only
    pstates = {p for _, _, p in sim.pstate_rows if p >= 0}
    assert pstates <= {0, UPAS_NODE.pstate_of(options["f_upper_ghz"]), p_lower}
    if options["wq_threshold"] == 0:
        assert reduced_with_others_waiting == []
    # never scaling gives EASY's schedule, job for job
    _, never = simulate(platform, path, "upas", {**options, "u_upper": 0.0, "u_lower": 0.0})
    assert {j: (rj.start_s, str(rj.alloc)) for j, rj in never.items()} == \
           {j: (rj.start_s, str(rj.alloc)) for j, rj in easy.items()}


def test_the_properties_would_catch_a_job_killed_because_of_dvfs(inputs, tmp_path):
    """Without re-registration (dynamic jobs off), slowed jobs are killed at their original walltime: the check
    of the property above sees it."""
    from wattsched.schedulers.backfill import EasyBackfilling
    from wattsched.schedulers.core import PolicyScheduler
    from wattsched.schedulers.order import Fcfs

    path = tmp_path / "w.json"
    work = random_workload(3, 30)
    for job in work["jobs"]:
        job["walltime"] = 2010  # above every run time (≤ 2001 s), but not at 1.4 GHz for the long jobs
    path.write_text(json.dumps(work))
    piece = Upas(wq_threshold=None, u_upper=1.0, u_lower=1.0)  # always f_lower
    piece.needs_dynamic_jobs = lambda: False  # type: ignore[method-assign]  # as if run without the flags
    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), frequency=piece)
    sim = Simulation(load_platform(inputs["upas"]), load_workload(path))
    run_inprocess(sim, BatsimTranslator(policy))
    assert any(rj.final_state == "COMPLETED_WALLTIME_REACHED" for rj in sim.iter_jobs())


# ------------------------------------------------------------------------------------------ compositions
def test_upas_with_shutdown_end_to_end(inputs):
    sim, rows = simulate(inputs["upas"], inputs["work"], "compose",
                         {"frequency": "upas", "power": "shutdown", "wq_threshold": None})
    _, easy = simulate(inputs["upas"], inputs["work"], "easy-backfill", {})
    states = {rj.final_state for rj in rows.values()}
    assert states <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"} and len(rows) == len(easy)
    assert {j for j, r in rows.items() if r.final_state != "COMPLETED_SUCCESSFULLY"} == \
           {j for j, r in easy.items() if r.final_state != "COMPLETED_SUCCESSFULLY"}
    pstates = {p for _, _, p in sim.pstate_rows}
    assert {6, LOWER} <= pstates  # hosts slept (pstate 6) and jobs ran at f_lower


def test_upas_under_an_energy_budget_end_to_end(inputs):
    from wattsched.analysis.metrics import energy_in_window_j
    from wattsched.analysis.outputs import read_consumed_energy
    from wattsched.simulator.outputs import write_outputs

    window = (3000.0, 20000.0)
    budget = {"admission": "energy-bud", "budget_fraction": 0.6, "window_start_s": window[0], "window_end_s": window[1],
              "estimated_idle_w": 55.0, "estimated_comp_w": 100.0}
    sim, rows = simulate(inputs["upas"], inputs["work"], "compose", {**budget, "frequency": "upas", "wq_threshold": None})
    assert {rj.final_state for rj in rows.values()} <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    assert {p for _, _, p in sim.pstate_rows} >= {UPPER, LOWER} or {p for _, _, p in sim.pstate_rows} >= {LOWER}
    paths = write_outputs(sim, Path(inputs["work"]).parent / "budget" / "out")
    energy = energy_in_window_j(read_consumed_energy(paths["consumed_energy"]), window)
    assert energy <= 0.6 * N * 100.0 * (window[1] - window[0]) * (1 + 1e-9)


def test_wattsched_run_enables_dynamic_jobs_for_a_composition_with_upas(inputs, tmp_path, capsys, caplog):
    from wattsched.cli import main

    status = main(["run", str(inputs["upas"]), str(inputs["work"]), "-s", "compose", "-o",
                   json.dumps({"frequency": "upas", "power": "shutdown"}), "-e", str(tmp_path / "r"), "--json"])
    captured = capsys.readouterr()
    assert status == 0 and "dynamic jobs enabled" in caplog.text
    metrics = json.loads(captured.out)
    assert metrics["nb_jobs"] == 30 and metrics["nb_jobs_started"] == 30  # replacements shown once each


def test_upas_behind_the_efs_order_end_to_end(inputs):
    """UPAS is a frequency piece, not a scheduler: behind EnergyFairShare's queue order it slows jobs, kills none
    because of DVFS, and when it never scales the schedule is EFS's own, job for job."""
    efs = {"order": "efs", "backfill": "easy"}
    sim, rows = simulate(inputs["upas"], inputs["work"], "compose", {**efs, "frequency": "upas", "wq_threshold": None})
    _, plain = simulate(inputs["upas"], inputs["work"], "compose", efs)
    _, never = simulate(inputs["upas"], inputs["work"], "compose",
                        {**efs, "frequency": "upas", "wq_threshold": None, "u_upper": 0.0, "u_lower": 0.0})
    assert set(rows) == set(plain) == set(never)
    assert {j for j, r in rows.items() if r.final_state != "COMPLETED_SUCCESSFULLY"} == \
           {j for j, r in plain.items() if r.final_state != "COMPLETED_SUCCESSFULLY"}
    assert LOWER in {p for _, _, p in sim.pstate_rows}
    schedule = {j: (rj.start_s, str(rj.alloc)) for j, rj in plain.items()}
    assert {j: (rj.start_s, str(rj.alloc)) for j, rj in never.items()} == schedule
    assert {j: (rj.start_s, rj.end_s) for j, rj in rows.items()} != \
           {j: (rj.start_s, rj.end_s) for j, rj in plain.items()}
