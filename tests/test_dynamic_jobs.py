"""Dynamic job registration (behaviour 44 of the recordings' README): REGISTER_PROFILE, REGISTER_JOB,
acknowledgements, the end rule, and one-line errors where real Batsim aborts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.base.errors import ProtocolError
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE, reply

PLATFORM = REFERENCE / "dynamic-jobs" / "platform.xml"  # 4 Taurus hosts
C10 = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}  # 10 s at pstate 0


def make_sim(tmp_path: Path, jobs: list[dict] | None = None, **options: bool) -> Simulation:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs or [], "profiles": {"c10": C10}}))
    return Simulation(load_platform(PLATFORM), load_workload(path), **options)


def types(msg: dict) -> list[str]:
    return [e["type"] for e in msg["events"]]


def register_profile(name: str = "p", workload: str = "dyn", profile: dict | None = None) -> tuple[str, dict]:
    return "REGISTER_PROFILE", {"workload_name": workload, "profile_name": name, "profile": profile or C10}


def register_job(job_id: str = "dyn!a", **job: object) -> tuple[str, dict]:
    body = {"id": job_id, "subtime": 0.0, "res": 1, "profile": "p", **job}
    return "REGISTER_JOB", {"job_id": job_id, "job": body}


def started(tmp_path: Path, **options: bool) -> Simulation:
    """A simulation with one static job (t=0) submitted and answered nothing yet."""
    sim = make_sim(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "c10"}], **options)
    begins = sim.start()
    config = begins["events"][0]["data"]["config"]
    assert config["dynamic-jobs-enabled"] is options.get("dynamic_jobs", False)
    assert config["dynamic-jobs-acknowledged"] is options.get("acknowledge_dynamic_jobs", False)
    assert types(sim.step(reply(0))) == ["JOB_SUBMITTED"]
    return sim


def test_registered_job_runs_and_is_acknowledged(tmp_path) -> None:
    sim = started(tmp_path, dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}),
                         register_profile(), ("QUERY", {"requests": {"consumed_energy": {}}}),
                         register_job("dyn!a", id="a", subtime=5, note="kept"),
                         ("EXECUTE_JOB", {"job_id": "dyn!a", "alloc": "1"})))
    # results of the reply, in reply order; the job as sent, with its full id (B44)
    assert types(msg) == ["NOTIFY", "ANSWER", "JOB_SUBMITTED"]
    assert msg["events"][2]["data"] == {
        "job_id": "dyn!a", "job": {"id": "dyn!a", "subtime": 5, "res": 1, "profile": "p", "note": "kept"},
    }
    msg = sim.step(reply(0, ("NOTIFY", {"type": "registration_finished"})))
    assert types(msg) == ["JOB_COMPLETED", "JOB_COMPLETED"] and msg["now"] == 10.0
    assert types(sim.step(reply(10.0))) == ["SIMULATION_ENDS"]
    paths = write_outputs(sim, tmp_path / "out")
    rows = paths["jobs"].read_text().splitlines()
    assert rows[2].startswith("a,dyn,p,5.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,")
    schedule = dict(zip(*(line.split(",") for line in paths["schedule"].read_text().splitlines())))
    assert schedule["nb_jobs"] == "2" and schedule["nb_jobs_finished"] == "2"


def test_no_acknowledgement_without_the_option(tmp_path) -> None:
    sim = started(tmp_path, dynamic_jobs=True)
    msg = sim.step(reply(0, register_profile(), register_job(), ("QUERY", {"requests": {"consumed_energy": {}}})))
    assert types(msg) == ["NOTIFY", "ANSWER"]


def test_the_simulation_cannot_end_while_registration_is_open(tmp_path) -> None:
    sim = started(tmp_path, dynamic_jobs=True)
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))
    msg = sim.step(reply(msg["now"]))
    assert types(msg) == ["JOB_COMPLETED"]
    with pytest.raises(ProtocolError, match="registration_finished") as info:
        sim.step(reply(msg["now"]))
    assert "\n" not in str(info.value)


def test_continue_registration_reopens_it(tmp_path) -> None:
    sim = started(tmp_path, dynamic_jobs=True)
    sim.step(reply(0, ("NOTIFY", {"type": "registration_finished"}), ("NOTIFY", {"type": "continue_registration"}),
                   register_profile(), ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))


@pytest.mark.parametrize("events, fragments", [
    ([register_profile(), register_profile()], ["REGISTER_PROFILE", "profile_name", "'p' already exists in workload 'dyn'"]),
    ([register_profile("c10", "w0")], ["REGISTER_PROFILE", "profile_name", "'c10' already exists in workload 'w0'"]),
    ([register_profile(profile={"type": "delay"})], ["REGISTER_PROFILE", "profile 'p'.delay", "missing"]),
    ([register_profile(profile={"type": "composed", "seq": ["nope"]})], ["REGISTER_PROFILE", "seq", "'nope' does not exist"]),
    ([register_profile(), ("REGISTER_PROFILE", {"workload_name": "dyn", "profile": C10})], ["REGISTER_PROFILE", "'profile_name'"]),
    ([register_job("zz!a")], ["REGISTER_JOB", "job_id", "workload 'zz' does not exist"]),
    ([register_profile(), register_job("dyn!a", profile="c10")], ["REGISTER_JOB dyn!a", ".profile", "'c10' does not exist"]),
    ([register_profile(), register_job("dyn!a"), register_job("dyn!a")], ["REGISTER_JOB", "job dyn!a already exists"]),
    ([register_profile(), register_job("dyn!a", subtime="soon")], ["REGISTER_JOB dyn!a", ".subtime", "not a number"]),
    ([register_profile(), register_job("dyn!a", res=-1)], ["REGISTER_JOB dyn!a", ".res"]),
    ([register_profile(), register_job("dyn!a", walltime=0)], ["REGISTER_JOB dyn!a", ".walltime"]),
    ([register_profile(), ("REGISTER_JOB", {"job_id": "dyn!a", "job": {"subtime": 0, "res": 1, "profile": "p"}})],
     ["REGISTER_JOB dyn!a", ".id", "missing"]),
    ([register_profile(), ("REGISTER_JOB", {"job_id": "dyn!a", "job": {"id": "b", "subtime": 0, "res": 1, "profile": "p"}})],
     ["REGISTER_JOB dyn!a", "'job.id'"]),
    ([register_profile(), ("REGISTER_JOB", {"job_id": "dyn!a", "job": [1]})], ["REGISTER_JOB dyn!a", "JSON object"]),
    ([register_profile(), ("REGISTER_JOB", {"job_id": "dyn!a"})], ["REGISTER_JOB dyn!a", "'job'"]),
    ([register_profile(), ("REGISTER_JOB", {"job_id": "a", "job": {}})], ["REGISTER_JOB", "'job_id'"]),
    ([("NOTIFY", {"type": "registration_finished"}), register_profile()], ["REGISTER_PROFILE", "registration_finished"]),
    ([register_profile(), ("NOTIFY", {"type": "registration_finished"}), register_job()], ["REGISTER_JOB", "registration_finished"]),
    ([("REGISTER_JOB", [])], ["REGISTER_JOB", "'data'"]),
])
def test_what_real_batsim_aborts_on_is_one_clear_line(tmp_path, events, fragments) -> None:
    sim = started(tmp_path, dynamic_jobs=True)
    with pytest.raises(ProtocolError) as info:
        sim.step(reply(0, *events))
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("event", [register_profile(), register_job()])
def test_registration_needs_the_option(tmp_path, event) -> None:
    sim = started(tmp_path)
    with pytest.raises(ProtocolError, match=f"{event[0]}: dynamic job registration is disabled"):
        sim.step(reply(0, event))


def test_registration_finished_is_accepted_without_dynamic_jobs(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, ("NOTIFY", {"type": "registration_finished"}), ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))
    assert types(msg) == ["NOTIFY"]
