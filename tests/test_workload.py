"""simulator.workload: Batsim JSON workload loading, checked against the Batsim 4.2.1 recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.simulator.workload import ComposedProfile, DelayProfile, ParallelProfile, load_workload
from tests.conftest import assert_input_error
from wattsched.base.errors import InputError

REF = Path(__file__).parent / "fixtures" / "batsim-reference"
SCENARIOS = sorted(p.name for p in REF.iterdir() if (p / "workload.json").exists())


def batsim_messages(scenario: str) -> list[dict]:
    with open(REF / scenario / "messages.jsonl") as f:
        return [json.loads(line)["message"] for line in f if json.loads(line)["from"] == "batsim"]


def typed(obj) -> str:
    """JSON text that tells 1 from 1.0 (dict equality does not)."""
    return json.dumps(obj, sort_keys=True)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_profiles_json_match_recording(scenario):
    workload = load_workload(REF / scenario / "workload.json")
    begins = batsim_messages(scenario)[0]["events"][0]
    assert begins["type"] == "SIMULATION_BEGINS"
    recorded = begins["data"]["profiles"]["w0"]
    assert workload.profiles_json == recorded
    assert typed(workload.profiles_json) == typed(recorded)
    assert set(workload.profiles) == set(recorded)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_jobs_match_recorded_submissions(scenario):
    workload = load_workload(REF / scenario / "workload.json")
    # the static workload's submissions (dynamically registered jobs are acknowledged with
    # JOB_SUBMITTED too, B44: they belong to other workloads)
    submitted = [e["data"] for m in batsim_messages(scenario) for e in m["events"]
                 if e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"].startswith("w0!")]
    # same jobs, same order (subtime, then id string), same forwarded entries (key order too)
    assert [s["job_id"] for s in submitted] == [j.id for j in workload.jobs]
    for sub, job in zip(submitted, workload.jobs):
        assert typed(sub["job"]) == typed(job.entry)
        assert list(sub["job"]) == list(job.entry)
    assert workload.name == "w0"


def test_composed_profiles_scenario():
    workload = load_workload(REF / "composed-profiles" / "workload.json")
    p = workload.profiles
    assert p["d30"] == DelayProfile("d30", 30.0, 0)
    assert p["c10_ret1"].ret == 1
    rep = p["rep2_c50_d30"]
    assert isinstance(rep, ComposedProfile) and rep.repeat == 2
    assert rep.seq == (p["c50"], p["d30"])
    assert isinstance(rep.seq[0], ParallelProfile) and rep.seq[0].cpu == 5e9
    assert p["seq_fail_d30"].seq[0].ret == 1
    total = p["tot_1e10"]
    assert total.kind == "parallel_homogeneous_total" and total.nb_res is None
    assert total.flops_per_host(2) == (5e9, 5e9)
    jobs = {j.id: j for j in workload.jobs}
    assert [j.id for j in workload.jobs[:8]] == ["w0!1", "w0!2", "w0!3", "w0!4", "w0!10", "w0!11",
                                                 "w0!12", "w0!5"]
    assert jobs["w0!1"].walltime_s == 1000.0 and jobs["w0!1"].subtime_s == 0.0


def test_no_walltime_two_clusters():
    workload = load_workload(REF / "two-clusters" / "workload.json")
    job = workload.jobs[0]
    assert job.walltime_s is None and "walltime" not in job.entry
    assert job.entry == {"id": "w0!1", "subtime": 0, "res": 1, "profile": "w24"}


def test_flops_per_host():
    hom = ParallelProfile("h", "parallel_homogeneous", 3e9)
    assert hom.flops_per_host(3) == (3e9, 3e9, 3e9)
    tot = ParallelProfile("t", "parallel_homogeneous_total", 3e9)
    assert tot.flops_per_host(3) == (1e9, 1e9, 1e9)
    par = ParallelProfile("p", "parallel", (1.0, 2.0), 2)
    assert par.flops_per_host(2) == (1.0, 2.0)
    with pytest.raises(ValueError):
        par.flops_per_host(3)
    with pytest.raises(ValueError):
        hom.flops_per_host(0)


# -- building workloads in tmp_path --------------------------------------------------------------------
PROFILES = {
    "c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
    "d": {"type": "delay", "delay": 10},
}


def write(tmp_path: Path, doc, name: str = "workload.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def wl(jobs=None, profiles=None, **extra) -> dict:
    doc = {"nb_res": 4, "jobs": jobs if jobs is not None else [
        {"id": 1, "subtime": 0, "res": 1, "profile": "c"}], "profiles": profiles or PROFILES}
    doc.update(extra)
    return doc


def test_all_profile_types(tmp_path):
    profiles = {
        "c": {"type": "parallel_homogeneous", "cpu": 1e9},  # com absent
        "t": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 0.0, "ret": 3},
        "p": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 0, 0, 0]},
        "p1": {"type": "parallel", "cpu": [5]},
        "d": {"type": "delay", "delay": 2.5},
        "s": {"type": "composed", "seq": ["c", "d", "inner"]},
        "inner": {"type": "composed", "repeat": 3, "seq": ["p"]},
    }
    w = load_workload(write(tmp_path, wl(profiles=profiles)))
    p = w.profiles
    assert p["c"] == ParallelProfile("c", "parallel_homogeneous", 1e9, None, 0)
    assert p["t"].ret == 3
    assert p["p"] == ParallelProfile("p", "parallel", (1e9, 2e9), 2, 0)
    assert p["p1"].nb_res == 1 and p["p1"].cpu == (5.0,)
    assert p["d"] == DelayProfile("d", 2.5)
    assert p["s"].repeat == 1 and p["s"].seq == (p["c"], p["d"], p["inner"])
    assert p["inner"].seq == (p["p"],) and p["inner"].repeat == 3
    assert w.profiles_json is not None and w.profiles_json["s"] == profiles["s"]


def test_job_ids_extra_fields_and_order(tmp_path):
    jobs = [
        {"id": "b", "subtime": 5, "res": 1, "profile": "c", "walltime": -1, "user": "ann"},
        {"id": 10, "subtime": 5.0, "res": 2, "profile": "d", "walltime": 30.5},
        {"id": "w0!7", "subtime": 1, "res": 1, "profile": "c"},
        {"id": 2, "subtime": 5, "res": 1, "profile": "c"},
    ]
    w = load_workload(write(tmp_path, wl(jobs)))
    assert [j.id for j in w.jobs] == ["w0!7", "w0!10", "w0!2", "w0!b"]
    b = w.jobs[3]
    assert b.walltime_s is None
    assert b.entry == {"id": "w0!b", "subtime": 5, "res": 1, "profile": "c", "walltime": -1, "user": "ann"}
    assert w.jobs[1].walltime_s == 30.5 and w.jobs[1].res == 2 and w.jobs[1].profile == "d"
    assert list(w.jobs[1].entry) == ["id", "subtime", "res", "profile", "walltime"]
    assert jobs[0]["id"] == "b"  # caller's data not modified


def test_other_workload_name(tmp_path):
    w = load_workload(write(tmp_path, wl()), name="w1")
    assert w.name == "w1" and w.jobs[0].id == "w1!1"


def test_job_larger_than_any_platform_is_accepted(tmp_path):
    w = load_workload(write(tmp_path, wl([{"id": 1, "subtime": 0, "res": 100000, "profile": "c"}])))
    assert w.jobs[0].res == 100000


def test_20000_jobs_sorted_by_submission(tmp_path):
    # How fast they load is measured by benchmarks/bench_simulator.py, not asserted here (a loaded CI machine).
    jobs = [{"id": i, "subtime": (i * 7919) % 100000, "res": 1 + i % 64, "profile": "c" if i % 2 else "d",
             "walltime": 1000} for i in range(20000)]
    path = write(tmp_path, wl(jobs))
    w = load_workload(path)
    assert len(w.jobs) == 20000
    keys = [(j.subtime_s, j.id) for j in w.jobs]
    assert keys == sorted(keys)


# -- errors -------------------------------------------------------------------------------------------
def assert_error(path: Path, *fragments: str) -> InputError:
    return assert_input_error(load_workload, path, *fragments)


def test_error_malformed_json(tmp_path):
    path = write(tmp_path, '{"jobs": [],\n  "profiles": {,}}\n', name="broken.json")
    assert_error(path, "line 2, column", "malformed JSON")


def test_error_missing_file(tmp_path):
    assert_error(tmp_path / "nope.json", "cannot read")


def test_error_not_object(tmp_path):
    assert_error(write(tmp_path, "[1, 2]"), "JSON object")


@pytest.mark.parametrize("missing", ["jobs", "profiles"])
def test_error_missing_section(tmp_path, missing):
    doc = wl()
    del doc[missing]
    assert_error(write(tmp_path, doc), missing, "missing")


@pytest.mark.parametrize("key", ["subtime", "res", "profile"])
def test_error_job_missing_field(tmp_path, key):
    job = {"id": 3, "subtime": 0, "res": 1, "profile": "c"}
    del job[key]
    assert_error(write(tmp_path, wl([job])), f"job 'w0!3'.{key}", "missing")


def test_error_job_missing_id(tmp_path):
    assert_error(write(tmp_path, wl([{"subtime": 0, "res": 1, "profile": "c"}])), "jobs[0].id", "missing")


@pytest.mark.parametrize("bad_id", [1.5, None, "", True, "w1!3"])
def test_error_job_bad_id(tmp_path, bad_id):
    assert_error(write(tmp_path, wl([{"id": bad_id, "subtime": 0, "res": 1, "profile": "c"}])), "jobs[0].id")


def test_error_duplicate_job_ids(tmp_path):
    jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "c"}, {"id": "1", "subtime": 3, "res": 1, "profile": "c"}]
    assert_error(write(tmp_path, wl(jobs)), "job 'w0!1'.id", "duplicate")


@pytest.mark.parametrize("field,value,problem", [
    ("subtime", -1, "negative"), ("subtime", "0", "not a number"),
    ("res", 0, "at least 1"), ("res", -2, "at least 1"), ("res", 1.5, "not an integer"),
    ("res", "2", "not an integer"),
    ("walltime", -5, "strictly positive"), ("walltime", 0, "strictly positive"),
    ("walltime", "10", "not a number"),
    ("profile", "nope", "does not exist"), ("profile", 3, "not a profile name"),
])
def test_error_job_fields(tmp_path, field, value, problem):
    job = {"id": 4, "subtime": 0, "res": 1, "profile": "c", "walltime": 10}
    job[field] = value
    assert_error(write(tmp_path, wl([job])), f"job 'w0!4'.{field}", problem)


@pytest.mark.parametrize("profile,field,problem", [
    ({"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}, "com", "network-dependent profiles are not supported"),
    ({"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 5}, "com", "network-dependent"),
    ({"type": "parallel", "cpu": [1, 1], "com": [0, 1, 0, 0]}, "com", "network-dependent"),
    ({"type": "parallel", "cpu": [1, 1], "com": [0, 0]}, "com", "expected 4"),
    ({"type": "parallel", "cpu": []}, "cpu", "non-empty list"),
    ({"type": "parallel", "cpu": [1, -1]}, "cpu", "non-negative"),
    ({"type": "smpi", "trace": "x"}, "type", "not supported"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}, "type", "not supported"),
    ({"cpu": 1}, "type", "missing"),
    ({"type": "delay"}, "delay", "missing"),
    ({"type": "delay", "delay": -1}, "delay", "negative"),
    ({"type": "delay", "delay": "5"}, "delay", "not a number"),
    ({"type": "parallel_homogeneous", "cpu": -1e9}, "cpu", "negative"),
    ({"type": "parallel_homogeneous"}, "cpu", "missing"),
    ({"type": "delay", "delay": 1, "ret": 1.5}, "ret", "not an integer"),
    ({"type": "composed", "seq": ["c", "missing"]}, "seq", "profile 'missing' does not exist"),
    ({"type": "composed", "seq": []}, "seq", "non-empty"),
    ({"type": "composed", "seq": ["c"], "repeat": 0}, "repeat", ">= 1"),
    ({"type": "composed", "seq": ["c"], "repeat": 1.5}, "repeat", ">= 1"),
    ("not an object", "", "not a JSON object"),
])
def test_error_profiles(tmp_path, profile, field, problem):
    profiles = dict(PROFILES, bad=profile)
    where = "profile 'bad'" + (f".{field}" if field else "")
    assert_error(write(tmp_path, wl(profiles=profiles)), where, problem)


def test_error_composed_cycle(tmp_path):
    profiles = dict(PROFILES, a={"type": "composed", "seq": ["c", "b"]},
                    b={"type": "composed", "seq": ["a"]})
    assert_error(write(tmp_path, wl(profiles=profiles)), ".seq", "cycle", "a -> b -> a")


def test_error_composed_self_cycle(tmp_path):
    profiles = dict(PROFILES, a={"type": "composed", "seq": ["a"]})
    assert_error(write(tmp_path, wl(profiles=profiles)), "profile 'a'.seq", "cycle")
