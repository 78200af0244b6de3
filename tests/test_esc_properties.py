"""Properties of whole ESC simulations (hypothesis): no job starts on a node that is off or switching,
every job ends, and with ``idle_s`` = ∞ and no wait threshold ESC's schedule is always-on FCFS's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.platforms.generate import esc_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.schedulers.backfill import FcfsNoBackfill
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.esc import EnergySavingCluster
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.placement import FirstFit, NonContiguous
from wattsched.schedulers.protocol import BatsimTranslator
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation, r6
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

N = 6
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
USERS = ("ann", "bob", "cid")

jobs_strategy = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 20, 300, 1500, 4000]),  # gap to the previous submission, s
        st.integers(1, N + 1),  # nodes (N + 1: wider than the machine, rejected)
        st.integers(0, 2000),  # run time, s
        st.sampled_from(USERS),
    ),
    min_size=1, max_size=14,
)
options_strategy = st.fixed_dictionaries({
    "period_s": st.sampled_from([7.0, 60.0, 300.0]),
    "idle_s": st.sampled_from([0.0, 100.0, 1000.0]),
    "upper_wait_s": st.sampled_from([None, 0.0, 600.0]),
    "lower_wait_s": st.sampled_from([None, 0.0]),
    "max_queued": st.sampled_from([None, 1, 3]),
    "min_on": st.sampled_from([0, 2]),
    "user_groups": st.sampled_from([None, {"ann": "g"}, {"ann": "g", "bob": "g"}]),
    "placement": st.sampled_from(["non-contiguous", "first-fit"]),
})


@pytest.fixture(scope="module")
def platform_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("platform") / f"esc_{N}.xml"
    path.write_text(esc_platform_xml(N))
    return path


def workload(path: Path, specs) -> Path:
    jobs, profiles, t = [], {}, 0
    for k, (gap, res, runtime, user) in enumerate(specs, start=1):
        t += gap
        profiles[f"c{runtime}"] = {"type": "parallel_homogeneous", "cpu": runtime * 1e9, "com": 0}
        jobs.append({"id": k, "subtime": t, "res": res, "profile": f"c{runtime}", "walltime": runtime + 10,
                     "user": user})
    path.write_text(json.dumps({"nb_res": N, "jobs": jobs, "profiles": profiles}))
    return path


def simulate(platform: Path, work: Path, handler) -> Simulation:
    sim = Simulation(load_platform(platform), load_workload(work))
    run_inprocess(sim, handler)
    return sim


def unavailable(sim: Simulation) -> dict[int, list[tuple[float, float]]]:
    """Per host, the intervals ``[from, to)`` during which it is switching off, asleep or booting, read
    from the simulation's pstate changes (-2: switch-off requested; -1 then 0: a boot and its end)."""
    out: dict[int, list[tuple[float, float]]] = {h: [] for h in range(sim.nb_hosts)}
    down_since: dict[int, float] = {}
    for t, machines, pstate in sim.pstate_rows:
        for h in ProcSet.from_str(machines):
            if pstate == -2:
                down_since[h] = t
            elif pstate == 0 and h in down_since:
                out[h].append((down_since.pop(h), t))
    for h, t in down_since.items():
        out[h].append((t, math.inf))
    return out


@given(specs=jobs_strategy, options=options_strategy)
@SETTINGS
def test_no_job_on_a_node_off_or_switching_and_every_job_ends(platform_path, tmp_path_factory, specs, options):
    work = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    groups = {"g": {"upper_wait_s": 30.0, "max_queued": 1}} if options["user_groups"] else None
    sim = simulate(platform_path, work, scheduler_handler("esc", {**options, "groups": groups}))
    rows = sim.jobs_rows
    assert sorted(int(r.job.id.split("!")[1]) for r in rows) == list(range(1, len(specs) + 1))  # each once
    down = unavailable(sim)
    for r in rows:
        if r.job.res > N:
            assert r.final_state == "REJECTED"
            continue
        assert r.final_state == "COMPLETED_SUCCESSFULLY", r.final_state
        for h in r.alloc:
            for a, b in down[h]:
                assert r.end_s <= a or r.start_s >= b, (r.job.id, h, (r.start_s, r.end_s), (a, b))


@given(specs=jobs_strategy, period=st.sampled_from([7.0, 60.0, 300.0]))
@SETTINGS
def test_without_idle_timeout_and_thresholds_esc_is_always_on_fcfs(platform_path, tmp_path_factory, specs, period):
    work = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    policy = PolicyScheduler(order=Fcfs(), backfill=FcfsNoBackfill(), placement=NonContiguous(), name="esc",
                             power=EnergySavingCluster(period_s=period, idle_s=math.inf, upper_wait_s=None))
    esc = simulate(platform_path, work, BatsimTranslator(policy))
    fcfs = simulate(platform_path, work, scheduler_handler("fcfs", {"placement": "non-contiguous"}))
    schedule = [(r.job.id, r.final_state, r.start_s, r.end_s, str(r.alloc)) for r in esc.jobs_rows]
    assert schedule == [(r.job.id, r.final_state, r.start_s, r.end_s, str(r.alloc)) for r in fcfs.jobs_rows]
    assert not esc.pstate_rows[1:]  # nothing was ever switched
    # the same energy to the last job end (a pass asked for while a job waited may end the run later)
    assert esc.energy_rows == fcfs.energy_rows and esc.makespan_s == fcfs.makespan_s


@given(specs=jobs_strategy, options=options_strategy, period=st.sampled_from([61.7, 7.3]))
@SETTINGS
def test_passes_not_asked_for_are_passes_that_would_do_nothing(platform_path, tmp_path_factory, specs, options,
                                                                period):
    """The same schedule and switches as with a pass every period (pass times k × 61.7 s or k × 7.3 s never
    meet the workload's events here: a pass at the time of an event it was not asked for sees the event).
    Times as Batsim prints them (B4): the extra passes are extra solver steps of SimGrid's clock, after
    which a later CALL_ME_LATER lands an ulp or so away from where it lands without them (B43)."""
    work = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    placement = options.pop("placement")
    groups = {"g": {"upper_wait_s": 30.0, "max_queued": 1}} if options["user_groups"] else None
    runs = []
    for every in (False, True):
        power = EnergySavingCluster(**{**options, "period_s": period, "groups": groups}, every_period=every)
        policy = PolicyScheduler(order=Fcfs(), backfill=FcfsNoBackfill(), power=power, name="esc",
                                 placement=NonContiguous() if placement == "non-contiguous" else FirstFit())
        sim = simulate(platform_path, work, BatsimTranslator(policy))
        # up to the last job end: a pass asked for while a job ran may come after it (the work is then done)
        runs.append(([(r.job.id, r6(r.start_s), r6(r.end_s), str(r.alloc)) for r in sim.jobs_rows],
                     [(r6(t), *rest) for t, *rest in sim.pstate_rows if t <= sim.makespan_s]))
    assert runs[0] == runs[1]
