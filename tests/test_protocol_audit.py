"""Protocol audit: what Batsim 4.2.1 does with each event a scheduler sends, against the engine.

Batsim 4.2.1 sources cited per test: ``protocol.cpp`` (``JsonProtocolReader::parse_and_apply_message``,
``parse_and_apply_event``, ``handle_*``), ``server.cpp`` (``server_on_*``), ``export.cpp``
(``JobsTracer::write_job``). Each test fails on the engine before ``engine_protocol.diff`` and passes after.
"""

from __future__ import annotations

import json

import pytest

from tests.test_behaviour_variants import compute, jb, toy_platform
from wattsched.base.errors import ProtocolError
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

PHT = {"type": "parallel_homogeneous_total", "cpu": 4e6, "com": 0}


def sim_at_submission(tmp_path, jobs=None, profiles=None, n=2) -> Simulation:
    (tmp_path / "p.xml").write_text(toy_platform(n))
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": n, "jobs": jobs or [jb(1), jb(2)],
                                                 "profiles": profiles or {"p": compute(4e6)}}))
    sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"))
    sim.start()
    sim.step({"now": 0.0, "events": []})  # the t=0 JOB_SUBMITTED
    return sim


def ev(etype: str, data: dict, t: float = 0.0) -> dict:
    return {"timestamp": t, "type": etype, "data": data}


EXEC = {"job_id": "w0!1", "alloc": "0"}

# (name, events, now, match): Batsim aborts on each
ABORTS = [
    # protocol.cpp parse_and_apply_event
    ("no timestamp", [{"type": "QUERY", "data": {"requests": {"consumed_energy": {}}}}], 0.0, "timestamp"),
    ("no data", [{"timestamp": 0.0, "type": "NOTIFY"}], 0.0, "data"),
    ("timestamp after now", [ev("CALL_ME_LATER", {"timestamp": 9.0}, t=5.0)], 1.0, "timestamp"),
    ("timestamp a string", [ev("CALL_ME_LATER", {"timestamp": 9.0}, t="0")], 0.0, "timestamp"),  # type: ignore[arg-type]
    # handle_execute_job
    ("execute: 4 members", [ev("EXECUTE_JOB", {**EXEC, "a": 1, "b": 2})], 0.0, "EXECUTE_JOB"),
    ("execute: alloc not a string", [ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": 0})], 0.0, "alloc"),
    ("execute: empty mapping", [ev("EXECUTE_JOB", {**EXEC, "mapping": {}})], 0.0, "mapping"),
    ("execute: mapping outside alloc", [ev("EXECUTE_JOB", {**EXEC, "mapping": {"0": 3}})], 0.0, "mapping"),
    ("execute: mapping gap", [ev("EXECUTE_JOB", {**EXEC, "alloc": "0-1", "mapping": {"0": 0, "2": 1}})], 0.0, "mapping"),
    ("execute: storage_mapping not int", [ev("EXECUTE_JOB", {**EXEC, "storage_mapping": {"pfs": "x"}})], 0.0, "storage_mapping"),
    # handle_reject_job / handle_kill_job / handle_call_me_later: data of size 1
    ("reject: 2 members", [ev("REJECT_JOB", {"job_id": "w0!1", "x": 1})], 0.0, "REJECT_JOB"),
    ("kill: 2 members", [ev("EXECUTE_JOB", EXEC), ev("KILL_JOB", {"job_ids": ["w0!1"], "x": 1})], 0.0, "KILL_JOB"),
    ("call: 2 members", [ev("CALL_ME_LATER", {"timestamp": 3.0, "x": 1})], 0.0, "CALL_ME_LATER"),
    ("call: timestamp a string", [ev("CALL_ME_LATER", {"timestamp": "3"})], 0.0, "CALL_ME_LATER"),
    # server_on_call_me_later: target_time > clock
    ("call: at now", [ev("CALL_ME_LATER", {"timestamp": 0.0})], 0.0, "CALL_ME_LATER"),
    ("call: in the past", [ev("CALL_ME_LATER", {"timestamp": 3.0}, t=5.0)], 5.0, "CALL_ME_LATER"),
    # handle_set_resource_state: size 2, strings
    ("state: 3 members", [ev("SET_RESOURCE_STATE", {"resources": "0", "state": "1", "x": 1})], 0.0, "SET_RESOURCE_STATE"),
    ("state: state an int", [ev("SET_RESOURCE_STATE", {"resources": "0", "state": 1})], 0.0, "SET_RESOURCE_STATE"),
    ("state: resources an int", [ev("SET_RESOURCE_STATE", {"resources": 0, "state": "1"})], 0.0, "SET_RESOURCE_STATE"),
    # handle_set_job_metadata: size 2, metadata a string
    ("metadata: missing", [ev("SET_JOB_METADATA", {"job_id": "w0!1"})], 0.0, "SET_JOB_METADATA"),
    ("metadata: an int", [ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": 5})], 0.0, "metadata"),
    ("metadata: 3 members", [ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": "a", "x": 1})], 0.0, "SET_JOB_METADATA"),
    # handle_query: size 1, consumed_energy's value empty
    ("query: 2 members", [ev("QUERY", {"requests": {"consumed_energy": {}}, "x": 1})], 0.0, "QUERY"),
    ("query: non-empty request", [ev("QUERY", {"requests": {"consumed_energy": {"a": 1}}})], 0.0, "QUERY"),
]


@pytest.mark.parametrize("name,events,now,match", ABORTS, ids=[a[0] for a in ABORTS])
def test_batsim_aborts_on(tmp_path, name, events, now, match) -> None:
    sim = sim_at_submission(tmp_path)
    with pytest.raises(ProtocolError, match=match):
        sim.step({"now": now, "events": events})


@pytest.mark.parametrize("reply_now", ["0", False])
def test_batsim_aborts_on_a_now_that_is_not_a_number(tmp_path, reply_now) -> None:
    sim = sim_at_submission(tmp_path)
    with pytest.raises(ProtocolError, match="now"):
        sim.step({"now": reply_now, "events": []})


def test_metadata_of_a_job_whose_completion_was_sent_aborts(tmp_path) -> None:
    """server_on_set_job_metadata: job_at() of a job deleted once its JOB_COMPLETED was sent."""
    sim = sim_at_submission(tmp_path, jobs=[jb(1)])
    msg = sim.step({"now": 0.0, "events": [ev("EXECUTE_JOB", EXEC)]})
    while not any(e["type"] == "JOB_COMPLETED" for e in msg["events"]):
        msg = sim.step({"now": msg["now"], "events": []})
    with pytest.raises(ProtocolError, match="SET_JOB_METADATA"):
        sim.step({"now": msg["now"], "events": [ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": "x"}, msg["now"])]})


def test_metadata_after_a_rejection_is_not_in_the_row(tmp_path) -> None:
    """server_on_reject_job writes the job's row (JobsTracer::write_job, metadata included) at once: a
    SET_JOB_METADATA later in the same reply is accepted but too late for _jobs.csv."""
    sim = sim_at_submission(tmp_path, jobs=[jb(1)])
    msg = sim.step({"now": 0.0, "events": [ev("REJECT_JOB", {"job_id": "w0!1"}),
                                           ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": "late"})]})
    while msg is not None:
        msg = sim.step({"now": msg["now"], "events": []})
    paths = write_outputs(sim, tmp_path / "out")
    row = paths["jobs"].read_text().splitlines()[1]
    assert row.endswith('""'), row


@pytest.mark.parametrize("field", [{"mapping": {"0": 1, "1": 0}}, {"additional_io_job": {"profile_name": "p", "alloc": "1"}}])
def test_what_changes_the_execution_and_is_not_simulated_is_refused(tmp_path, field) -> None:
    """A non-default mapping (executors on other hosts) and an additional IO job are accepted by Batsim and
    change the execution; the engine ignored them silently."""
    sim = sim_at_submission(tmp_path, jobs=[jb(1, res=2)])
    with pytest.raises(ProtocolError, match="not supported"):
        sim.step({"now": 0.0, "events": [ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-1", **field})]})


def test_a_parallel_homogeneous_total_job_may_run_on_another_number_of_hosts(tmp_path) -> None:
    """server_on_execute_job: the alloc-size == res check skips parallel_homogeneous_total profiles (and
    sequences of them): 4 Mf over 2 hosts at 2 Mf/s ends at 1 s."""
    sim = sim_at_submission(tmp_path, jobs=[jb(1, res=1)], profiles={"p": PHT})
    msg = sim.step({"now": 0.0, "events": [ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-1"})]})
    while not any(e["type"] == "JOB_COMPLETED" for e in msg["events"]):
        msg = sim.step({"now": msg["now"], "events": []})
    done = next(e for e in msg["events"] if e["type"] == "JOB_COMPLETED")
    assert (msg["now"], done["data"]["alloc"]) == (1.0, "0-1")


@pytest.mark.parametrize("given", ["1abc", "1.0"])
def test_a_state_std_stoi_reads_is_accepted(tmp_path, given) -> None:
    """handle_set_resource_state reads 'state' with std::stoi: a leading integer is enough; the
    RESOURCE_STATE_CHANGED carries std::to_string of it."""
    sim = sim_at_submission(tmp_path)
    msg = sim.step({"now": 0.0, "events": [ev("SET_RESOURCE_STATE", {"resources": "0", "state": given})]})
    changed = [e["data"] for e in msg["events"] if e["type"] == "RESOURCE_STATE_CHANGED"]
    assert changed == [{"resources": "0", "state": "1"}]


@pytest.mark.parametrize("event", [
    ev("ANSWER", {"estimate_waiting_time": {"job_id": "w0!1", "estimated_waiting_time": 3}}),
    ev("TO_JOB_MSG", {"job_id": "w0!1", "msg": "hello"}),
], ids=["ANSWER", "TO_JOB_MSG"])
def test_events_batsim_accepts_without_effect(tmp_path, event) -> None:
    """handle_answer logs a warning; server_on_to_job_msg queues the message for the job (read only by
    profiles that receive messages): the simulation goes on as without them."""
    sim = sim_at_submission(tmp_path)
    msg = sim.step({"now": 0.0, "events": [event]})
    assert [e["type"] for e in msg["events"]] == ["NOTIFY"]
