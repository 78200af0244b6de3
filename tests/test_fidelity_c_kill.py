"""(c) KILL_JOB of jobs that are not simply running.

Batsim 4.2.1:

* ``protocol.cpp`` ``handle_kill_job``: ``job_ids`` must be a non-empty array (else abort);
* ``server.cpp`` ``server_on_kill_jobs``: ``workloads.job_at(id)`` aborts ("Cannot get job ... it does
  not exist", ``jobs.cpp`` ``Jobs::operator[]``) for a job already deleted, and the server deletes a
  job once the message reporting its completion (or its rejection) is sent (``generate_and_send_message``
  then ``delete_jobs``); a job whose kill was already requested (``kill_requested``) is discarded,
  and no killer (so no JOB_KILLED) is created when nothing is left; otherwise the job must be
  running or complete;
* ``jobs_execution.cpp`` ``killer_process``: a rejected or not-started job aborts ("Bad kill"); a job
  that is complete (ended, completion not sent yet) gets no progress and no second JOB_COMPLETED;
* ``server_on_killing_done``: one JOB_KILLED with the ids of that kill, progress only for the jobs
  really killed (``append_job_killed`` skips null progress).
"""

from __future__ import annotations

import json

import pytest

from tests.test_behaviour_variants import call, compute, execute, jb, kill, on_event, run, toy_platform
from wattsched.base.errors import ProtocolError
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload


def killed_events(r) -> list[tuple[float, dict]]:
    return [(m["now"], e["data"]) for m in r.msgs for e in m["events"] if e["type"] == "JOB_KILLED"]


def test_c_a_job_named_twice_in_one_kill_is_listed_once(tmp_path) -> None:
    r = run(tmp_path, toy_platform(1), {"p": compute(4e6)}, [jb(1)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), call(1)], ("REQUESTED_CALL", None): [kill("w0!1", "w0!1")]}))
    assert killed_events(r) == [(1.0, {"job_ids": ["w0!1"], "job_progress": {"w0!1": {"profile_name": "p", "progress": 0.5}}})]


def test_c_a_second_kill_of_one_job_in_one_reply_is_discarded(tmp_path) -> None:
    r = run(tmp_path, toy_platform(1), {"p": compute(4e6)}, [jb(1)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), call(1)], ("REQUESTED_CALL", None): [kill("w0!1"), kill("w0!1")]}))
    assert [t for t, _ in killed_events(r)] == [1.0]
    assert [x["final_state"] for x in r.csv["jobs"]] == ["COMPLETED_KILLED"]


@pytest.mark.parametrize("case", ["empty", "reported", "rejected"])
def test_c_kills_batsim_aborts_on(tmp_path, case) -> None:
    """An empty list; a job whose JOB_COMPLETED was in the message answered (deleted since); a job
    rejected earlier in the same reply."""
    handlers = {
        "empty": {("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), call(1)], ("REQUESTED_CALL", None): [kill()]},
        "reported": {("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")], ("JOB_COMPLETED", "w0!1"): [kill("w0!1")]},
        "rejected": {("JOB_SUBMITTED", "w0!1"): [("REJECT_JOB", {"job_id": "w0!1"}), kill("w0!1")]},
    }[case]
    with pytest.raises(ProtocolError, match="KILL_JOB"):
        run(tmp_path, toy_platform(1), {"p": compute(4e6)}, [jb(1), jb(2, subtime=5)], on_event(handlers))


def _kill_at_3_of_a_job_ending_at_2(tmp_path) -> dict:
    """Job 1 started at 0 ends at 2; the reply's KILL_JOB is stamped 3 (the reply sleeps to its timestamp, B5):
    the message that follows."""
    (tmp_path / "p.xml").write_text(toy_platform(1))
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 1, "jobs": [jb(1)], "profiles": {"p": compute(4e6)}}))
    sim = Simulation(load_platform(tmp_path / "p.xml"), load_workload(tmp_path / "w.json"))
    sim.start()
    sim.step({"now": 0.0, "events": []})
    sim.step({"now": 0.0, "events": [{"timestamp": 0.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]})
    return sim.step({"now": 3.0, "events": [{"timestamp": 3.0, "type": "KILL_JOB", "data": {"job_ids": ["w0!1"]}}]})


def test_c_a_job_ended_while_the_reply_waits_is_listed_without_progress(tmp_path) -> None:
    """The job's normal JOB_COMPLETED, then a JOB_KILLED naming it with no progress."""
    msg = _kill_at_3_of_a_job_ending_at_2(tmp_path)
    assert [(e["type"], e["data"]) for e in msg["events"]] == [
        ("JOB_COMPLETED", {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0"}),
        ("JOB_KILLED", {"job_ids": ["w0!1"], "job_progress": {}}),
    ]


def test_each_event_keeps_the_time_it_happened_in_a_later_message(tmp_path) -> None:
    """Batsim's server stamps an event with its clock when it appends it (``server.cpp``: every
    ``append_*`` takes ``Engine::get_clock()``) and sets only the message's ``now`` when it sends it
    (``generate_current_message``): the job ending at 2 while the reply sleeps to its timestamp 3 (B5)
    is stamped 2 in the message of ``now`` 3, the JOB_KILLED of the reply 3."""
    msg = _kill_at_3_of_a_job_ending_at_2(tmp_path)
    assert msg["now"] == 3.0
    assert [(e["type"], e["timestamp"]) for e in msg["events"]] == [("JOB_COMPLETED", 2.0), ("JOB_KILLED", 3.0)]
