"""The embedded engine on hand-built conversations: protocol errors and edge cases."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE, reply
from wattsched.base.errors import ProtocolError

PLATFORM = REFERENCE / "dvfs-energy" / "platform.xml"  # 4 Taurus hosts with sleep pstates


def make_sim(tmp_path: Path, jobs: list[dict], profiles: dict | None = None) -> Simulation:
    profiles = profiles or {"c1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    return Simulation(load_platform(PLATFORM), load_workload(path))


def job(i: int, subtime: float = 0, res: int = 1, walltime: float | None = 100, profile: str = "c1") -> dict:
    j = {"id": i, "subtime": subtime, "res": res, "profile": profile}
    if walltime is not None:
        j["walltime"] = walltime
    return j


def types(msg: dict) -> list[str]:
    return [e["type"] for e in msg["events"]]


def test_simple_run_to_the_end(tmp_path) -> None:
    sim = make_sim(tmp_path, [job(1)])
    assert types(sim.start()) == ["SIMULATION_BEGINS"]
    msg = sim.step(reply(0))
    assert types(msg) == ["JOB_SUBMITTED", "NOTIFY"] or types(msg) == ["JOB_SUBMITTED"]
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "2"})))
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 10.0  # 1e9 flops at 100 Mflop/s
    end = sim.step(reply(msg["now"]))
    assert types(end) == ["SIMULATION_ENDS"]
    assert sim.step(reply(end["now"])) is None
    # 10 s at 190.738 W on host 2, 95 W on the three others
    assert sim.energy_j == pytest.approx(10 * (190.738 + 3 * 95))


def _submitted(tmp_path, jobs):
    sim = make_sim(tmp_path, jobs)
    sim.start()
    msg = sim.step(reply(0))
    if types(msg) == ["NOTIFY"]:
        msg = sim.step(reply(0))
    return sim


def test_allocating_a_busy_host_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1), job(2)])
    with pytest.raises(ProtocolError, match=r"EXECUTE_JOB w0!2: host 1 \(host1\) is computing, not idle"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "1"}),
                          ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1"})))


def test_allocating_a_sleeping_host_is_an_error(tmp_path) -> None:
    sim = make_sim(tmp_path, [job(1, subtime=50)])
    sim.start()
    msg = sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "3", "state": "13"})))
    assert types(msg) == ["RESOURCE_STATE_CHANGED"] and msg["now"] == 6.1
    msg = sim.step(reply(msg["now"]))
    assert types(msg)[0] == "JOB_SUBMITTED"
    with pytest.raises(ProtocolError, match=r"host 3 \(host3\) is sleeping, not idle"):
        sim.step(reply(msg["now"], ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "3"})))


def test_allocating_a_switching_host_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="switching_off, not idle"):
        sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "0-1", "state": "13"}),
                          ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "1"})))


def test_wrong_allocation_size_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1, res=2)])
    with pytest.raises(ProtocolError, match="field 'alloc' has 1 host but the job requests 2"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "1"})))


def test_allocation_beyond_the_platform_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="beyond 0-3"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "7"})))


def test_unknown_event_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="unknown or unsupported event type 'EXECUTE_JOBS'"):
        sim.step(reply(0, ("EXECUTE_JOBS", {"job_id": "w0!1", "alloc": "1"})))


def test_unknown_job_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="unknown job 'w0!9'"):
        sim.step(reply(0, ("REJECT_JOB", {"job_id": "w0!9"})))


def test_job_started_twice_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="cannot start: it is running"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}),
                          ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "1"})))


def test_job_started_before_its_submission_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1), job(2, subtime=100)])
    with pytest.raises(ProtocolError, match="w0!2 cannot start: it is pending"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "0"})))


def test_switching_off_a_computing_host_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="only idle hosts can be switched off"):
        sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}),
                          ("SET_RESOURCE_STATE", {"resources": "0", "state": "13"})))


def test_switching_a_host_in_transition_is_an_error(tmp_path) -> None:
    """A host switching off can be neither booted nor switched off again before its RESOURCE_STATE_CHANGED."""
    for state, message in (("0", "wait for its RESOURCE_STATE_CHANGED"), ("13", "only idle hosts can be switched off")):
        sim = _submitted(tmp_path, [job(1)])
        with pytest.raises(ProtocolError, match=message):
            sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "1", "state": "13"}),
                              ("SET_RESOURCE_STATE", {"resources": "1", "state": state})))


def test_virtual_pstate_request_is_an_error(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1)])
    with pytest.raises(ProtocolError, match="not a computation or sleep pstate"):
        sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "0", "state": "14"})))


def test_deadlock_names_the_forgotten_jobs(tmp_path) -> None:
    sim = _submitted(tmp_path, [job(1), job(2)])
    with pytest.raises(ProtocolError, match=r"deadlock .* 1 job was never started nor rejected by the scheduler \(w0!2\)"):
        msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))
        while msg is not None:
            msg = sim.step(reply(msg["now"]))


def test_simulation_waits_for_pending_calls(tmp_path) -> None:
    """B12: the end waits for every CALL_ME_LATER, even after the last job."""
    sim = _submitted(tmp_path, [job(1)])
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}), ("CALL_ME_LATER", {"timestamp": 500})))
    seen = []
    while msg is not None:
        seen.append((msg["now"], types(msg)))
        msg = sim.step(reply(msg["now"]))
    assert (500.0, ["REQUESTED_CALL"]) in seen
    assert seen[-1] == (500.0, ["SIMULATION_ENDS"])


def test_job_without_walltime_is_never_killed(tmp_path) -> None:
    sim = make_sim(tmp_path, [job(1, walltime=None)], {"c1": {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0}})
    sim.start()
    sim.step(reply(0))
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 10000.0
    assert msg["events"][-1]["data"]["job_state"] == "COMPLETED_SUCCESSFULLY"


def test_dvfs_on_a_sleeping_host_boots_it(tmp_path) -> None:
    sim = make_sim(tmp_path, [job(1, subtime=1000)])
    sim.start()
    msg = sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "0-3", "state": "13"})))
    assert msg["now"] == 6.1
    msg = sim.step(reply(6.1, ("SET_RESOURCE_STATE", {"resources": "0-3", "state": "5"})))
    assert types(msg) == ["RESOURCE_STATE_CHANGED"]
    assert msg["now"] == round(6.1 + 151.52, 6)
    assert msg["events"][0]["data"] == {"resources": "0-3", "state": "5"}


def test_simulation_ends_right_after_a_kill(tmp_path) -> None:
    """B41: the killed task's former end neither keeps the simulation alive nor moves the clock."""
    sim = _submitted(tmp_path, [job(1)])
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}), ("CALL_ME_LATER", {"timestamp": 4})))
    while types(msg) != ["REQUESTED_CALL"]:
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 4.0
    msg = sim.step(reply(4, ("KILL_JOB", {"job_ids": ["w0!1"]})))
    assert types(msg) == ["JOB_COMPLETED", "JOB_KILLED"]
    end = sim.step(reply(4))
    assert types(end) == ["SIMULATION_ENDS"] and end["now"] == 4.0
    assert sim.energy_j == pytest.approx(4 * (190.738 + 3 * 95))


def test_a_dvfs_shortened_task_leaves_no_trace_of_its_former_end(tmp_path) -> None:
    """B41: the end the task would have had at its former pstate is never an event."""
    sim = make_sim(tmp_path, [job(1)])
    sim.start()
    msg = sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "0", "state": "12"}),
                        ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}), ("CALL_ME_LATER", {"timestamp": 5})))
    while types(msg) != ["REQUESTED_CALL"]:
        msg = sim.step(reply(msg["now"]))
    msg = sim.step(reply(5, ("SET_RESOURCE_STATE", {"resources": "0", "state": "0"})))
    assert types(msg) == ["RESOURCE_STATE_CHANGED"]
    msg = sim.step(reply(5))
    assert types(msg) == ["JOB_COMPLETED"] and msg["now"] < 20.0
    end = sim.step(reply(msg["now"]))
    assert types(end) == ["SIMULATION_ENDS"] and end["now"] == msg["now"]


def test_switches_ending_together_are_applied_before_their_rows(tmp_path) -> None:
    """B40: one RESOURCE_STATE_CHANGED, 'p' row, pstate row and machine-state row per request, all
    written from the state after every switch ending then."""
    sim = make_sim(tmp_path, [job(1, subtime=100)])
    sim.start()
    msg = sim.step(reply(0, *[("SET_RESOURCE_STATE", {"resources": str(h), "state": "13"}) for h in (1, 2, 3)]))
    while "RESOURCE_STATE_CHANGED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 6.1
    assert [e["data"]["resources"] for e in msg["events"]] == ["1", "2", "3"]
    # rows when applied change one request at a time; rows when done are all equal
    assert sim.machine_rows[:3] == [(0.0, 0, 0, k, 4 - k, 0) for k in (1, 2, 3)]
    assert sim.machine_rows[3:] == [(6.1, 3, 0, 0, 1, 0)] * 3
    done = [r for r in sim.energy_rows if r[0] == 6.1]
    assert len(done) == 3 and len({r[1:] for r in done}) == 1
    assert done[0][3] == pytest.approx(95 + 3 * 9.75)
    assert [r for r in sim.pstate_rows if r[0] == 6.1] == [(6.1, "1", 13), (6.1, "2", 13), (6.1, "3", 13)]


def test_a_row_at_the_start_of_a_compute_part_reads_its_hosts_before_it(tmp_path) -> None:
    """B42 at one time: job 2 ends (its 'e' row, written by its actor) when job 1's delay ends and
    its compute part starts. SimGrid solves the loads of the new part only after that round, so the
    row bills job 1's second host at idle power up to then, and nothing is billed back later."""
    profiles = {"d5": {"type": "delay", "delay": 5}, "c10": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
                "d5c10": {"type": "composed", "seq": ["d5", "c10"]}}
    sim = make_sim(tmp_path, [job(1, res=2, profile="d5c10"), job(2, profile="d5")], profiles)
    sim.start()
    msg = sim.step(reply(0))
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-1"}),
                        ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "2"})))
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 5.0
    msg = sim.step(reply(5, ("QUERY", {"requests": {"consumed_energy": {}}})))
    assert msg["events"][0]["data"]["consumed_energy"] == pytest.approx(4 * 95 * 5)
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == 15.0
    assert sim.energy_rows[-1][1] == pytest.approx(4 * 95 * 5 + 10 * (2 * 190.738 + 2 * 95))


def test_a_call_me_later_at_infinity_comes_last_and_the_run_ends(tmp_path) -> None:
    """Regression (issue 10, the SimGrid clock): an in-process scheduler's CALL_ME_LATER at +inf (JSON
    cannot carry it; the shutdown manager sent one before c4c848b for a head behind a job without
    walltime) is a sleep of +inf. Its step moved the clock to +inf and left its remains at inf - inf =
    NaN, which never fell below the threshold: the clock stepped on the spot forever. It now ends in
    that step: the jobs complete at their times, then the REQUESTED_CALL at +inf, then the end."""
    sim = _submitted(tmp_path, [job(1, walltime=None), job(2, res=3, walltime=None)])
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}),
                         ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1-3"}),
                         ("CALL_ME_LATER", {"timestamp": math.inf})))
    seen = []
    while msg is not None:
        seen.append((msg["now"], types(msg)))
        msg = sim.step(reply(msg["now"]))
    assert [s for s in seen if s[1] != ["NOTIFY"]][0] == (10.0, ["JOB_COMPLETED", "JOB_COMPLETED"])
    assert seen[-2:] == [(math.inf, ["REQUESTED_CALL"]), (math.inf, ["SIMULATION_ENDS"])]
    assert sim.jobs["w0!1"].end_s == sim.jobs["w0!2"].end_s == 10.0


def test_the_hypothesis_example_that_looped_runs_to_the_end(taurus_platform, tmp_path) -> None:
    """The example hypothesis found (tests/test_fairshare_properties.py, fairshare + shutdown): jobs of 1, 3
    and 5 hosts of user a at t=0 on 8 hosts, 1 s each, the second without walltime. The head (5 hosts)
    waits behind a job that may run forever; the old shutdown manager then asked for a call at +inf,
    which the handler below adds to its first decisions."""
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess

    specs = [(1, 10), (3, None), (5, 10)]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({
        "nb_res": 8, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 100e6, "com": 0}},
        "jobs": [{"id": k, "subtime": 0, "res": res, "profile": "p", "user": "a", **({"walltime": w} if w else {})}
                 for k, (res, w) in enumerate(specs, start=1)]}))
    sim = Simulation(load_platform(taurus_platform(8)), load_workload(path))
    handler = scheduler_handler("fairshare", {"shutdown": True})
    asked = []

    def with_a_call_at_infinity(msg: dict) -> dict:
        out = handler(msg)
        if not asked and any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
            asked.append(msg["now"])
            out = {**out, "events": out["events"] + [
                {"timestamp": msg["now"], "type": "CALL_ME_LATER", "data": {"timestamp": math.inf}}]}
        return out

    run_inprocess(sim, with_a_call_at_infinity)
    assert asked == [0.0]
    assert sorted(r.job.id for r in sim.jobs_rows) == ["w0!1", "w0!2", "w0!3"]
    assert all(r.final_state == "COMPLETED_SUCCESSFULLY" and r.end_s - r.start_s == 1.0 for r in sim.jobs_rows)
    assert sim.now_s == math.inf  # the REQUESTED_CALL at +inf came last


def test_a_clock_that_no_longer_moves_is_an_internal_error_not_a_hang(tmp_path, monkeypatch) -> None:
    """The guard: solver steps that neither move the clock nor produce an event, STALL_STEPS in a row,
    raise EngineStalled naming the time, the solver step and the pending actions."""
    from wattsched.simulator import engine as engine_mod

    sim = _submitted(tmp_path, [job(1)])
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})))
    assert types(msg) == ["NOTIFY"]
    clock = sim._clock
    calls = []

    def stuck() -> list:
        calls.append(1)
        return []  # a step that ends nothing and keeps the clock where it is

    monkeypatch.setattr(clock, "solve_step", stuck)
    with pytest.raises(engine_mod.EngineStalled,
                       match=r"clock is stuck at t=0\.0 \(solver step 0\): 10000 solver steps in a row .* "
                             r"pending: execution of job w0!1 \(remains 1\.0 at rate 0\.1"):
        sim.step(reply(0))
    assert len(calls) == engine_mod.STALL_STEPS


def test_a_non_finite_number_in_a_reply_names_the_message_it_answers(tmp_path) -> None:
    """The driver describes the message only when a reply is refused (lazily): the error still names it."""
    from wattsched.simulator.drivers import run_inprocess

    sim = make_sim(tmp_path, [job(1)])

    def nan_call(msg: dict) -> dict:
        return {"now": msg["now"], "events": [
            {"timestamp": msg["now"], "type": "CALL_ME_LATER", "data": {"timestamp": math.nan}}]}

    with pytest.raises(ProtocolError, match=r"^the scheduler's reply to Batsim message 1 \(t=0, SIMULATION_BEGINS\) "
                                            r"at events\[0\]\.data\.timestamp: NaN is not a number$"):
        run_inprocess(sim, nan_call)


def test_a_finished_job_releases_its_host_index(tmp_path) -> None:
    """A running job on non-contiguous hosts holds their ids as an index array; once it ends only its alloc
    (and the CSV's string) remain: on a whole log under ESC the arrays of finished jobs took gigabytes."""
    sim = make_sim(tmp_path, [job(1, res=2)])
    sim.start()
    sim.step(reply(0))
    msg = sim.step(reply(0, ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0 2"})))
    rj = sim.jobs["w0!1"]
    assert rj.nb_hosts == 2 and not isinstance(rj.hosts, slice)  # hosts 0 and 2: an index array while it runs
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert isinstance(rj.hosts, slice) and rj.hosts == slice(0, 0)
    assert rj.alloc_str == "0 2" and rj.final_state == "COMPLETED_SUCCESSFULLY"


def test_a_job_beside_sleeping_hosts_runs_at_the_pstate_of_its_hosts(tmp_path) -> None:
    """With hosts asleep (a shutdown) the hosts that are on share pstate 0, and a job's speed and power come from
    it without a per-host lookup (issue 15); once an idle host is at another pstate (DVFS) that shortcut is off,
    and a job on it runs at that pstate's speed and power."""
    sim = _submitted(tmp_path, [job(1, res=2), job(2, subtime=30, res=1)])
    msg = sim.step(reply(0, ("SET_RESOURCE_STATE", {"resources": "3", "state": "13"}),
                         ("SET_RESOURCE_STATE", {"resources": "1", "state": "2"})))
    assert sim._uniform_pstate() is None  # host 1 at pstate 2, hosts 0 and 2 at 0
    msg = sim.step(reply(msg["now"], ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0 2"})))
    assert sim._uniform_pstate() is None
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == pytest.approx(10.0)  # pstate 0: 1e9 flops at 100 Mflop/s
    msg = sim.step(reply(msg["now"], ("SET_RESOURCE_STATE", {"resources": "1", "state": "0"})))
    assert sim._uniform_pstate() == 0  # host 3 asleep or switching off: aside
    while "JOB_SUBMITTED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    start = msg["now"]
    energy = sim.energy_j
    msg = sim.step(reply(start, ("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1"})))
    while "JOB_COMPLETED" not in types(msg):
        msg = sim.step(reply(msg["now"]))
    assert msg["now"] == pytest.approx(start + 10.0)
    # host 1 computing at pstate 0 (190.738 W), hosts 0 and 2 idle (95 W), host 3 asleep (9.75 W)
    assert sim.energy_j - energy == pytest.approx(10.0 * (190.738 + 2 * 95.0 + 9.75))


def test_a_switchs_state_times_are_summed_as_the_per_state_count_sums_them(tmp_path, monkeypatch) -> None:
    """The hosts of a switch are all in one state: their times in it are summed one after the other in Python
    (``Simulation._set_machine_state(uniform=)``), as ``np.bincount`` sums them: the outputs of a run with
    shutdown are the same to the byte with every switch summed by ``bincount`` (``UNIFORM_MAX_HOSTS = 0``)."""
    from wattsched.experiments.runner import run_simulation
    from wattsched.simulator import engine

    root = Path(__file__).resolve().parents[1]
    platform, workload = root / "platforms" / "taurus_16.xml", root / "workloads" / "demo_taurus16.json"
    outputs = {}
    for bound in (engine.UNIFORM_MAX_HOSTS, 0):
        monkeypatch.setattr(engine, "UNIFORM_MAX_HOSTS", bound)
        prefix = tmp_path / f"b{bound}" / "out"
        run_simulation(str(platform), str(workload), str(prefix), scheduler="compose", options={"power": "shutdown"})
        schedule = (prefix.parent / "out_schedule.csv").read_text().splitlines()
        header, row = schedule[0].split(","), schedule[1].split(",")
        outputs[bound] = ({h: v for h, v in zip(header, row) if h.startswith("time_")},
                          (prefix.parent / "out_machine_states.csv").read_text(),
                          (prefix.parent / "out_consumed_energy.csv").read_text())
        assert float(outputs[bound][0]["time_sleeping"]) > 0.0  # hosts were switched off
    assert outputs[engine.UNIFORM_MAX_HOSTS] == outputs[0]


def test_a_run_makes_the_garbage_collector_less_eager_and_restores_it():
    """``run_inprocess`` raises the young generation's threshold for the run (issue 15: collections traversed every
    live object), then restores the caller's, also when the run fails."""
    import gc

    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import GC_GEN0_THRESHOLD, run_inprocess

    root = Path(__file__).resolve().parent.parent
    handler = scheduler_handler("easy-backfill", {})
    seen: list[tuple[int, int, int]] = []

    def watching(msg: dict) -> dict:
        seen.append(gc.get_threshold())
        return handler(msg)

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        platform, workload = root / "platforms/taurus_16.xml", root / "workloads/demo_taurus16.json"
        run_inprocess(Simulation(load_platform(platform), load_workload(workload)), watching)
        assert seen and all(t == (GC_GEN0_THRESHOLD, 10, 10) for t in seen)
        assert gc.get_threshold() == (700, 10, 10)

        def failing(msg: dict) -> dict:
            raise RuntimeError("a scheduler's bug")

        with pytest.raises(RuntimeError):
            run_inprocess(Simulation(load_platform(platform), load_workload(workload)), failing)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
