"""(b) Jobs that end at their start time.

Batsim 4.2.1, ``jobs_execution.cpp``: ``execute_job_process`` computes ``runtime = clock - starting_time``
(long double) and, when it is exactly 0, logs "computed in null time" and uses ``1e-5``, whatever
the profile and the outcome (success, ``ret`` failure, walltime, kill of a running task);
``killer_process`` does the same for a job killed while no parallel task runs (a delay part).
``export.cpp`` (``JobsTracer::write_job``) prints ``execution_time`` = runtime, ``finish_time`` =
start + runtime and takes ``makespan`` as the largest start + runtime. ``profiles.cpp`` refuses a
``delay`` profile whose delay is not strictly positive, so no delay part takes 0 s.
"""

from __future__ import annotations

import json

import pytest

from tests.test_behaviour_variants import composed, compute, delay, execute, jb, kill, on_event, run, toy_platform
from wattsched.base.errors import InputError
from wattsched.simulator.workload import load_workload


def test_b_every_zero_time_job_gets_the_epsilon(tmp_path) -> None:
    """Zero work of every kind (homogeneous, total, per-host list, composed of them, failing), and
    jobs killed in the reply that starts them (a compute part: -2, a delay part: -1)."""
    profiles = {"z": compute(0), "zt": {"type": "parallel_homogeneous_total", "cpu": 0, "com": 0},
                "zp": {"type": "parallel", "cpu": [0, 0], "com": [0, 0, 0, 0]},
                "zz": composed(["z", "zt"], repeat=2), "zf": compute(0, ret=1), "c": compute(8e6), "d": delay(4)}
    jobs = [jb(1, profile="z"), jb(2, profile="zp", res=2), jb(3, profile="zz", res=2), jb(4, profile="zf"),
            jb(5, profile="c"), jb(6, profile="d")]
    start = [execute("w0!1", "0"), execute("w0!2", "1-2"), execute("w0!3", "3-4"), execute("w0!4", "5"),
             execute("w0!5", "6"), execute("w0!6", "7"), kill("w0!5", "w0!6")]
    r = run(tmp_path, toy_platform(8), profiles, [{**j, "subtime": 1.5} for j in jobs],
            on_event({("JOB_SUBMITTED", "w0!1"): start}))
    states = {}
    for k in range(1, 7):
        i, ev = r.completion(f"w0!{k}")
        assert r.msgs[i]["now"] == 1.5
        states[k] = (ev["data"]["job_state"], ev["data"]["return_code"])
        row = r.job_row(str(k))
        assert (row["execution_time"], row["finish_time"], row["consumed_energy"]) == ("0.000010", "1.500010", "0.000000")
    assert states[4] == ("COMPLETED_FAILED", 1)
    assert states[5] == ("COMPLETED_KILLED", -2) and states[6] == ("COMPLETED_KILLED", -1)


def test_b_the_makespan_counts_the_epsilon_of_the_last_job(tmp_path) -> None:
    """makespan = max(start + runtime): a zero-work job ending last gives start + 1e-5."""
    r = run(tmp_path, toy_platform(2), {"z": compute(0), "c": compute(2e6)},
            [jb(1, profile="c"), jb(2, profile="z", subtime=2.25)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")], ("JOB_SUBMITTED", "w0!2"): [execute("w0!2", "1")]}))
    sched = r.csv["schedule"][0]
    assert sched["makespan"] == "2.250010"
    assert sched["max_turnaround_time"] == "1.000000" and sched["mean_turnaround_time"] == "0.500005"


def test_b_a_delay_of_zero_seconds_is_refused(tmp_path) -> None:
    """profiles.cpp: "has a non-strictly-positive 'delay' field"."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 1, "jobs": [jb(1, profile="d0")], "profiles": {"d0": delay(0)}}))
    with pytest.raises(InputError, match="delay"):
        load_workload(path)


def test_b_jobs_rows_follow_the_order_of_the_completions(tmp_path) -> None:
    """``server.cpp`` ``server_on_job_completed`` writes a job's ``_jobs.csv`` row as it appends its
    JOB_COMPLETED: the rows follow the messages, also when a composed job of zero-work parts ends in a later
    round of the step than a job the engine's actors ended after it (3 and 4 here)."""
    profiles = {"z": compute(0), "zt": {"type": "parallel_homogeneous_total", "cpu": 0, "com": 0},
                "zz": composed(["z", "zt"], repeat=2), "zf": compute(0, ret=1), "c": compute(8e6), "d": delay(1)}
    jobs = [jb(1, profile="z"), jb(3, profile="zz", res=2), jb(4, profile="zf"), jb(5, profile="c"), jb(7, profile="d")]
    start = [execute("w0!1", "0"), execute("w0!3", "3-4"), execute("w0!4", "5"), execute("w0!5", "6"), kill("w0!5"),
             execute("w0!7", "8")]
    r = run(tmp_path, toy_platform(9), profiles, jobs, on_event({("JOB_SUBMITTED", "w0!1"): start}))
    sent = [e["data"]["job_id"].split("!")[1] for m in r.msgs for e in m["events"] if e["type"] == "JOB_COMPLETED"]
    assert sorted(sent) == ["1", "3", "4", "5", "7"]
    assert [row["job_id"] for row in r.csv["jobs"]] == sent
