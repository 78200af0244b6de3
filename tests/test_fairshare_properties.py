"""Properties of the fair-share orders (hypothesis), on their own and on whole simulations:

* with one user, every order (fairshare, efs, fs-efs) schedules exactly as FIFO;
* with equal energy factors, EFS (and FS+EFS) schedule exactly as FS;
* a user's factor never rises when her usage rises;
* every job ends, with the orders composed with every other kind of piece (budget, shutdown, placement).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.schedulers.protocol import scheduler_handler
from wattsched.schedulers.fairshare import EnergyFairShare, FairShare, FairSharePlusEnergy
from wattsched.schedulers.state import ClusterView, JobState, QueuedJob, RunningJob
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

N = 8
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

jobs_strategy = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 1, 30, 200]),  # gap to the previous submission, s
        st.integers(1, N),  # hosts
        st.integers(1, 900),  # run time, s
        st.sampled_from([None, 1.0, 2.0, 0.5]),  # walltime / run time
        st.sampled_from(["a", "b", "c", 7]),  # user
        st.sampled_from([None, 0.7, 1.0, 1.3]),  # energy factor
    ),
    min_size=1, max_size=14,
)


@pytest.fixture(scope="module")
def platform_path(taurus_platform) -> Path:
    return taurus_platform(N)


@pytest.fixture(scope="module")
def pow2_platform_path(platform_path) -> Path:
    """Taurus with every wattage a power of two: joules are then CPU-seconds times 2^k exactly, so EFS's
    arithmetic is FS's scaled without rounding (equal factors must give bit-identical orders)."""
    xml = re.sub(r'(id="wattage_per_state" value=")([^"]*,[^"]*)"',  # the compute hosts' (master_host has 1)
                 lambda m: m.group(1) + ", ".join(["64:128"] * len(m.group(2).split(","))) + '"',
                 platform_path.read_text())
    path = platform_path.with_name(f"pow2_{N}.xml")
    path.write_text(xml)
    return path


def workload(path: Path, specs, *, one_user: bool = False, factors: bool = True) -> Path:
    profiles, jobs, t = {}, [], 0
    for k, (gap, res, runtime, wall, user, factor) in enumerate(specs, start=1):
        t += gap
        profiles[f"p{k}"] = {"type": "parallel_homogeneous", "cpu": runtime * 100e6, "com": 0}
        job = {"id": k, "subtime": t, "res": res, "profile": f"p{k}", "user": "solo" if one_user else user}
        if wall is not None:
            job["walltime"] = max(1, round(runtime * wall))
        if factors and factor is not None:
            job["energy_factor"] = factor
        jobs.append(job)
    path.write_text(json.dumps({"nb_res": N, "jobs": jobs, "profiles": profiles}))
    return path


def simulate(platform: Path, path: Path, scheduler: str, options: dict) -> list[tuple[str, str, float, float, str]]:
    sim = Simulation(load_platform(platform), load_workload(path))
    run_inprocess(sim, scheduler_handler(scheduler, options))
    return sorted((r.job.id, r.final_state, r.start_s, r.end_s, r.alloc_str) for r in sim.jobs_rows)


ORDERS = [("fairshare", {}), ("efs", {}), ("fs-efs", {}), ("efs", {"charge": "running", "half_life_s": 600.0}),
          ("fs-efs", {"normalization": "total", "half_life_s": 300.0})]


@pytest.mark.parametrize("preset,options", ORDERS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(ORDERS)])
@SETTINGS
@given(specs=jobs_strategy)
def test_with_one_user_every_order_is_fifo(platform_path, tmp_path_factory, preset, options, specs) -> None:
    path = workload(tmp_path_factory.mktemp("w") / "w.json", specs, one_user=True)
    assert simulate(platform_path, path, preset, options) == \
        simulate(platform_path, path, "compose", {"order": "fifo"})


@pytest.mark.parametrize("options", [{}, {"charge": "running", "half_life_s": 900.0}, {"normalization": "total"}],
                         ids=["end", "running", "total"])
@SETTINGS
@given(specs=jobs_strategy)
def test_with_equal_efficiencies_efs_orders_as_fs(pow2_platform_path, tmp_path_factory, options, specs) -> None:
    path = workload(tmp_path_factory.mktemp("w") / "w.json", specs, factors=False)
    fs = simulate(pow2_platform_path, path, "fairshare", options)
    assert simulate(pow2_platform_path, path, "efs", options) == fs
    assert simulate(pow2_platform_path, path, "fs-efs", options) == fs


def test_with_unequal_efficiencies_efs_does_differ(platform_path, tmp_path) -> None:
    """The property above is not vacuous: energy factors change EFS's schedule, not FS's."""
    specs = [(0, N, 100, 1.0, "a", None), (0, N, 100, 1.0, "b", None),  # both users use the same
             (200, N, 50, 1.0, "a", 0.5), (0, N, 50, 1.0, "b", 1.5),  # a green, b glutton (charged at 250, 300)
             (100, N, 10, 1.0, "b", 1.0), (0, N, 10, 1.0, "a", 1.0)]  # b arrives first
    path = workload(tmp_path / "w.json", specs)
    no_decay = {"half_life_s": 1e300}  # else a's usage, charged earlier, would have decayed more than b's
    fs, efs = simulate(platform_path, path, "fairshare", no_decay), simulate(platform_path, path, "efs", no_decay)
    start = {job: s for job, _, s, _, _ in efs}
    assert start["w0!6"] < start["w0!5"]  # EFS: the green user first
    start = {job: s for job, _, s, _, _ in fs}
    assert start["w0!5"] < start["w0!6"]  # FS: equal usage, arrival order


@SETTINGS
@given(
    charges=st.lists(st.tuples(st.sampled_from(["u", "v", "w"]), st.integers(1, 8), st.floats(0, 500),
                               st.floats(1, 1000), st.sampled_from([0.5, 1.0, 2.0])), min_size=1, max_size=20),
    half_life=st.sampled_from([60.0, 3600.0, 7 * 86400.0]),
    damping=st.sampled_from([0.5, 1.0, 3.0]),
)
def test_a_users_factor_never_rises_when_her_usage_rises(charges, half_life, damping) -> None:
    from wattsched.energy_models.power import PlatformPower
    from wattsched.energy_models.taurus import TAURUS

    view = ClusterView.idle_machine(8)
    view.power = PlatformPower.uniform(TAURUS.node_model, 8)
    orders = [cls(half_life_s=half_life, damping=damping) for cls in (FairShare, EnergyFairShare)]
    for order in orders:
        order.on_platform(view)
    t = 0.0
    for i, (user, hosts, gap, run_s, factor) in enumerate(charges):
        t += gap
        job = QueuedJob(f"j{i}", hosts, None, t, user=user,
                        extra={"energy_factor": factor})  # type: ignore[arg-type]
        running = RunningJob(job.id, ProcSet((0, hosts - 1)), t, math.inf, 0, job)
        view.now_s = t
        for order in orders:
            order.on_submitted(job, view)
            order.on_started(running, view)
        t += run_s
        view.now_s = t
        for order in orders:
            measure = order.measures[0]
            before = order.factor(user, measure, t)
            before_usage = order.usage[measure].usage(user, t)
            order.on_completed(running, JobState.COMPLETED_SUCCESSFULLY, view)
            assert order.usage[measure].usage(user, t) > before_usage
            assert order.factor(user, measure, t) <= before
    # and F is monotone in the usage for a fixed share and damping
    fs = orders[0]
    xs = sorted(fs.exponent(u, "cpu", t) for u in "uvw")
    assert [2.0 ** -x for x in xs] == sorted((2.0 ** -x for x in xs), reverse=True)


COMPOSITIONS = [
    ("fairshare", {"shutdown": True}),
    ("efs", {"placement": "best-fit", "charge": "running"}),
    ("fs-efs", {"placement": "non-contiguous", "shutdown": True}),
    ("compose", {"order": "efs", "admission": "energy-bud", "power": "shutdown", "budget_fraction": 0.5,
                 "window_start_s": 300, "window_end_s": 3000}),
    ("compose", {"order": "fs-efs", "admission": "reduce-pc", "budget_fraction": 0.6, "window_start_s": 0,
                 "window_end_s": 3000}),
    ("compose", {"order": "fairshare", "admission": "powercap", "power": "shutdown", "budget_fraction": 0.7,
                 "window_start_s": 0, "window_end_s": 3000, "backfill": "fcfs"}),
    ("compose", {"order": "efs", "frequency": "top", "placement": "best-fit", "half_life_s": 100.0}),
]


@pytest.mark.parametrize("preset,options", COMPOSITIONS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(COMPOSITIONS)])
@SETTINGS
@given(specs=jobs_strategy)
def test_every_job_ends_with_every_composition(platform_path, tmp_path_factory, preset, options, specs) -> None:
    path = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    rows = simulate(platform_path, path, preset, options)
    assert [r[0] for r in rows] == sorted(f"w0!{k}" for k in range(1, len(specs) + 1))
    assert all(state in {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"} for _, state, *_ in rows)
    ran = [r for r in rows]
    for i, a in enumerate(ran):  # no host runs two jobs at once
        for b in ran[i + 1:]:
            if a[2] < b[3] and b[2] < a[3]:
                assert ProcSet.from_str(a[4]).isdisjoint(ProcSet.from_str(b[4]))


@pytest.mark.parametrize("preset,options", ORDERS + COMPOSITIONS,
                         ids=[f"{p}-{i}" for i, (p, _) in enumerate(ORDERS + COMPOSITIONS)])
@SETTINGS
@given(specs=jobs_strategy)
def test_the_order_kept_from_the_previous_pass_is_the_order_sorted_again(platform_path, tmp_path_factory, preset,
                                                                        options, specs) -> None:
    """A fair share reuses the previous pass's order while the same jobs wait and its users' keys rank alike
    (``FairShareOrder.sort``): the same schedule as sorting again at every pass."""
    from wattsched.schedulers import fairshare

    path = workload(tmp_path_factory.mktemp("w") / "w.json", specs)
    kept = simulate(platform_path, path, preset, options)
    ranks = fairshare._ranks
    fairshare._ranks = lambda keys: None  # (no ranks: never reused)
    try:
        assert kept == simulate(platform_path, path, preset, options)
    finally:
        fairshare._ranks = ranks
