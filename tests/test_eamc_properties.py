"""Properties of EAMC's presets on random workloads (hypothesis), on the embedded simulator with dynamic jobs:
every job runs on exactly one of its requested partitions and ends, for exactly the EAR model's time there;
Base never lowers a frequency; Min energy's frequency minimizes the model's energy on the job's partition; EASY
across partitions never starts a job twice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wattsched.analysis.eamc import parse_metadata
from wattsched.analysis.outputs import load_outputs
from wattsched.energy_models.ear import load_ear_model
from wattsched.platforms.generate import eamc_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

SIZES = (3, 5)  # p1: hosts 0-2, p2: hosts 3-7
HOSTS = {"p1": range(0, 3), "p2": range(3, 8)}
MODULE = {"p1": "normal", "p2": "normal2"}
TOP_GHZ = {"p1": 2.7, "p2": 3.1}
PRESETS = ("eamc-reorder", "eamc-priority-inc", "eamc-priority-inc-v", "eamc-base", "min-runtime", "min-energy")


@pytest.fixture(scope="module")
def platform(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("eamc-prop") / "platform.xml"
    path.write_text(eamc_platform_xml(SIZES))
    return path


@st.composite
def workloads(draw) -> dict:
    n = draw(st.integers(1, 14))
    jobs, profiles = [], {}
    subtime = 0
    for i in range(n):
        subtime += draw(st.integers(0, 400))
        partitions = draw(st.permutations(["p1", "p2"]).flatmap(lambda p: st.sampled_from([p, p[:1]])))
        res = draw(st.integers(1, min(SIZES[0 if p == "p1" else 1] for p in partitions)))
        run = draw(st.integers(1, 2000))
        walltime = run + draw(st.integers(0, 3000))
        speed = TOP_GHZ[partitions[0]] * 1e9
        profiles[f"r{i}"] = {"type": "parallel_homogeneous", "cpu": run * speed, "com": 0} if draw(st.booleans()) \
            else {"type": "delay", "delay": run}
        jobs.append({"id": i, "subtime": subtime, "res": res, "profile": f"r{i}", "walltime": walltime,
                     "app": draw(st.integers(1, 8)), "partitions": list(partitions)})
    return {"nb_res": sum(SIZES), "jobs": jobs, "profiles": profiles}


def simulate(tmp: Path, platform: Path, workload: dict, preset: str, options: dict) -> tuple:
    path = tmp / "w.json"
    path.write_text(json.dumps(workload))
    sim = Simulation(load_platform(platform), load_workload(path), dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    run_inprocess(sim, scheduler_handler(preset, options))
    write_outputs(sim, tmp / "out")
    return load_outputs(tmp / "out"), path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads(), preset=st.sampled_from(PRESETS), t_weight=st.sampled_from([1.0, 1.5]),
       epm=st.sampled_from(["paper", "plugin"]))
def test_every_job_runs_once_on_one_requested_partition_for_the_models_time(tmp_path_factory, platform: Path,
                                                                            workload: dict, preset: str,
                                                                            t_weight: float, epm: str) -> None:
    tmp = tmp_path_factory.mktemp("run")
    outputs, _ = simulate(tmp, platform, workload, preset, {"t_weight": t_weight, "epm": epm})
    jobs = outputs.jobs
    model = load_ear_model()
    entries = {str(j["id"]): j for j in workload["jobs"]}
    assert sorted(jobs["job_id"]) == sorted(entries)  # each job once (its replacement merged)
    for _, row in jobs.iterrows():
        entry = entries[row["job_id"]]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        hosts = [int(h) for part in str(row["allocated_resources"]).split() for h in _expand(part)]
        inside = [p for p, ids in HOSTS.items() if all(h in ids for h in hosts)]
        assert len(hosts) == entry["res"] and len(inside) == 1 and inside[0] in entry["partitions"]
        meta = parse_metadata(row["metadata"])
        part, ghz = meta["partition"], float(meta["ghz"])
        assert part == inside[0]
        projection = model.projection(entry["app"], MODULE[part])
        k = int(round(ghz * 10)) - 12
        assert projection.available[k]
        primary = entry["partitions"][0]
        profile = workload["profiles"][entry["profile"]]
        reference = profile["delay"] if profile["type"] == "delay" else profile["cpu"] / (TOP_GHZ[primary] * 1e9)
        expected = reference * projection.time_s[k] / model.projection(entry["app"], MODULE[primary]).time_s[-1]
        assert row["execution_time"] == pytest.approx(expected, abs=2e-6)
        if preset == "eamc-base":  # never lowers a frequency, on the favoured partition only
            assert ghz == TOP_GHZ[part] and part == meta["favoured"]
        if preset == "min-energy":  # the least energy of the model on that partition
            assert projection.energy_j[k] == np.nanmin(projection.energy_j)
    if preset == "eamc-base":
        changes = outputs.pstate_changes
        assert changes is not None and set(changes["new_pstate"]) == {0}


def _expand(part: str) -> list[int]:
    a, _, b = part.partition("-")
    return list(range(int(a), int(b or a) + 1))


def _schedule_and_skips(platform: Path, workload_path: Path, preset: str, keep: bool) -> tuple[list, int]:
    """Every job's (id, state, start, end, hosts) and how many passes kept the previous one's conclusions. With
    ``keep`` False, every pass is a full one over every entry (a plain list: no index by width)."""
    from wattsched.schedulers import backfill as backfill_module
    from wattsched.schedulers.eamc import _EntryOrder

    same_machine = backfill_module._same_machine
    sort = _EntryOrder.sort
    skips = 0

    def counting(*args):  # type: ignore[no-untyped-def]
        nonlocal skips
        answer = same_machine(*args)
        skips += answer
        return answer

    old = backfill_module.KEEP_PASSES
    backfill_module.KEEP_PASSES, backfill_module._same_machine = keep, counting
    if not keep:
        _EntryOrder.sort = lambda self, jobs, view: list(sort(self, jobs, view))  # type: ignore[method-assign]
    try:
        sim = Simulation(load_platform(platform), load_workload(workload_path), dynamic_jobs=True,
                         acknowledge_dynamic_jobs=True)
        run_inprocess(sim, scheduler_handler(preset, {}))
    finally:
        backfill_module.KEEP_PASSES, backfill_module._same_machine = old, same_machine
        _EntryOrder.sort = sort  # type: ignore[method-assign]
    return sorted((str(j.job.id), str(j.status), j.start_s, j.end_s, j.alloc_str) for j in sim.iter_jobs()), skips


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads(), preset=st.sampled_from(PRESETS))
def test_a_pass_after_acknowledgements_only_decides_as_a_full_pass(tmp_path_factory, platform: Path, workload: dict,
                                                                  preset: str) -> None:
    """EASY over partition entries does not make a pass that follows nothing but the acknowledgements of the core's
    own requests (the re-registered jobs and their DVFS: ``EasyBackfilling._select_entries``), and visits only the
    entries their partition's widest fit holds (``EntryQueue.fitting``): every job starts at the same time on the
    same hosts as with a full pass over every entry at every message."""
    path = tmp_path_factory.mktemp("keep") / "w.json"
    path.write_text(json.dumps(workload))
    kept, _ = _schedule_and_skips(platform, path, preset, True)
    full, none = _schedule_and_skips(platform, path, preset, False)
    assert kept == full and none == 0


def test_passes_after_acknowledgements_only_are_skipped_on_a_busy_queue(tmp_path: Path) -> None:
    """On a queue that stays long (the reproduction's workload, 40 + 40 nodes), most acknowledgements of a
    re-registered job come while jobs wait: those passes are not made, and the schedule is a full pass's."""
    from wattsched.workloads.eamc import eamc_workload

    platform = tmp_path / "p.xml"
    platform.write_text(eamc_platform_xml((40, 40)))
    path = tmp_path / "w.json"
    path.write_text(json.dumps(eamc_workload(seed=3, mix="33", nb_jobs=300, max_res=40, mean_res=8.0, span_days=1.0)))
    for preset in ("eamc-priority-inc", "min-energy"):
        kept, skips = _schedule_and_skips(platform, path, preset, True)
        full, _ = _schedule_and_skips(platform, path, preset, False)
        assert kept == full
        assert skips > 50, (preset, skips)
