"""The pybatsim adapter (schedulers/adapter.py), driven through pybatsim's real ``Batsim`` class with an
in-memory network instead of ZeroMQ (the adapter's own InProcessBatsim)."""

from __future__ import annotations

import heapq
import json
import re
from pathlib import Path

import pytest
from procset import ProcSet
from pybatsim.batsim.batsim import BatsimScheduler
from pybatsim.cmdline import get_scheduler_by_name
from pybatsim.plugin import find_ambiguous_scheduler_names, find_plugin_schedulers

from wattsched.schedulers.adapter import (
    PRESET_CLASSES,
    Compose,
    EasyBackfill,
    Fcfs,
    WattschedScheduler,
    load_scheduler,
    pybatsim_handler,
)
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.schedulers.presets import PRESETS
from wattsched.base.errors import OptionError

RECORDING = Path(__file__).parent / "fixtures" / "batsim-reference" / "pybatsim-easy" / "messages.jsonl"


# ----------------------------------------------------------------- pybatsim's Batsim fed in memory
def recording():
    return [json.loads(line) for line in RECORDING.read_text().splitlines()]


def begins(nb_hosts: int = 16) -> dict:
    """The recorded SIMULATION_BEGINS (first line), optionally with fewer hosts."""
    msg = recording()[0]["message"]
    data = msg["events"][0]["data"]
    data["compute_resources"] = data["compute_resources"][:nb_hosts]
    data["nb_resources"] = data["nb_compute_resources"] = nb_hosts
    return msg


def submitted(now: float, job_id: str, res: int, walltime: float | None = None, **extra) -> dict:
    job = {"id": job_id, "subtime": now, "res": res, "profile": "p", **extra}
    if walltime is not None:
        job["walltime"] = walltime
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": job}}


def drive(scheduler: BatsimScheduler, messages: list[dict]) -> list[dict]:
    """Feed ``messages`` one by one to pybatsim's own client (in memory); return the replies as JSON
    would carry them."""
    handler = pybatsim_handler(scheduler)
    return [json.loads(json.dumps(handler(message))) for message in messages]


def assert_well_formed(request: dict, reply: dict) -> None:
    assert reply["now"] == request["now"] and type(reply["now"]) is type(request["now"])
    for event in reply["events"]:
        assert event["timestamp"] == request["now"]
        assert event["type"] in {"EXECUTE_JOB", "REJECT_JOB", "SET_RESOURCE_STATE", "CALL_ME_LATER", "QUERY"}
        if event["type"] == "EXECUTE_JOB":
            alloc = event["data"]["alloc"]
            assert re.fullmatch(r"\d+(-\d+)?( \d+(-\d+)?)*", alloc)
            assert str(ProcSet.from_str(alloc)) == alloc


# ----------------------------------------------------------------- against the pybatsim-easy recording
@pytest.mark.parametrize("per_event", [False, True])
def test_replies_match_pybatsim_easy_until_allocations_differ(per_event):
    lines = recording()
    batsim = [line["message"] for line in lines if line["from"] == "batsim"]
    replies_recorded = [line["message"] for line in lines if line["from"] == "scheduler"]
    # messages 1..33: our first-fit and pybatsim's free-space allocator agree; at line 36 pybatsim puts
    # w0!7 on 3-11 (the end of the merged free space) where first-fit takes 0-8
    count = 17
    scheduler = EasyBackfill({})
    scheduler.per_event = per_event
    replies = drive(scheduler, batsim[:count])
    for request, reply in zip(batsim, replies):
        assert_well_formed(request, reply)
    assert replies == replies_recorded[:count]
    assert [e["data"]["alloc"] for r in replies for e in r["events"]] == ["0-14", "15", "0-11", "12-13", "14-15",
                                                                         "12-13"]


def test_wide_job_rejected_in_the_reply_to_its_submission():
    now = 1318.000001
    replies = drive(EasyBackfill({}), [
        begins(16),
        {"now": now, "events": [submitted(now, "w0!15", 20, 245.0), submitted(now, "w0!16", 2, 10.0),
                                submitted(now, "w0!17", 0, 10.0)]},
    ])
    assert replies[0] == {"now": 0.0, "events": []}
    assert replies[1] == {"now": now, "events": [
        {"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": "w0!15"}},
        {"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": "w0!17"}},
        {"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": "w0!16", "alloc": "0-1"}},
    ]}


def test_every_other_batsim_event_is_handled():
    now = 10.5
    replies = drive(Fcfs({"placement": "non-contiguous"}), [
        begins(4),
        {"now": 1.0, "events": [submitted(1.0, "w0!1", 2, None, user="alice", extra_field=3)]},
        {"now": now, "events": [
            {"timestamp": now, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": "2-3", "state": "5"}},
            {"timestamp": now, "type": "ANSWER", "data": {"consumed_energy": 1234.5}},
            {"timestamp": now, "type": "REQUESTED_CALL", "data": {}},
            {"timestamp": now, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}},
            {"timestamp": now, "type": "JOB_COMPLETED", "data": {"job_id": "w0!1", "job_state": "COMPLETED_KILLED",
                                                                  "return_code": -2, "alloc": "0-1"}},
            {"timestamp": now, "type": "JOB_KILLED", "data": {"job_ids": ["w0!1"], "job_progress": {
                "w0!1": {"profile_name": "p", "progress": 0.5}}}},
        ]},
        {"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}]},
    ])
    assert replies[1]["events"] == [
        {"timestamp": 1.0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}}]
    assert replies[2:] == [{"now": now, "events": []}, {"now": now, "events": []}]


def test_no_callback_raises_not_implemented():
    scheduler = EasyBackfill({})
    drive(scheduler, [begins(4)])
    scheduler.onJobsKilled([])
    scheduler.onMachinePStateChanged((0, 1), "3")
    assert scheduler.policy.view.pstates == [3, 3, 0, 0]
    scheduler.onReportEnergyConsumed(12.5)
    assert scheduler.policy.view.energy_j == 12.5
    scheduler.onRequestedCall()
    scheduler.onJobMessage(0.0, type("J", (), {"id": "x"})(), "hello")
    scheduler.onAddResources(ProcSet(5))
    scheduler.onRemoveResources(ProcSet(5))
    scheduler.onNotifyEventMachineUnavailable(ProcSet(1))
    scheduler.onNotifyEventMachineAvailable(ProcSet(1))
    scheduler.onNotifyGenericEvent({"type": "x"})
    scheduler.onDatasetArrivedOnStorage("d", 0, 1)
    scheduler.onDataTransferNotTerminated("d", 0, 1)
    scheduler.onNoMoreJobsInWorkloads()
    scheduler.onSimulationEnds()
    with pytest.raises(RuntimeError, match="-t -1"):
        scheduler.onDeadlock()


# ----------------------------------------------------------------- closed loop with a tiny Batsim
def _upas_properties() -> dict:
    from wattsched.energy_models.upas import UPAS_NODE
    from wattsched.platforms.generate import speed_attribute, wattage_per_state_attribute

    node = UPAS_NODE
    return {"speed_per_state": speed_attribute(node), "wattage_per_state": wattage_per_state_attribute(node),
            "sleep_pstates": f"{node.sleep_pstate}:{node.switch_off_pstate}:{node.switch_on_pstate}",
            **node.extra_properties}


UPAS_PROPERTIES = _upas_properties()


class TinyBatsim:
    """Answers a scheduler like Batsim would for delay-like jobs: submissions at their subtime,
    completions at start + min(runtime, walltime), same-time submissions before completions, then
    SIMULATION_ENDS. Checks that no host is double-booked and that replies are well formed."""

    def __init__(self, nb_hosts, jobs, properties=None):
        self.nb_hosts, self.jobs, self.properties = nb_hosts, jobs, properties
        self.events = [(j["subtime"], 0, k, "submit", j["id"]) for k, j in enumerate(jobs.values())]
        heapq.heapify(self.events)
        self.seq = len(jobs)
        self.busy = ProcSet()
        self.allocs, self.rejected, self.sent = {}, set(), []
        self.ended = False

    def run(self, handler) -> None:
        request = begins(self.nb_hosts)
        if self.properties is not None:
            for resource in request["events"][0]["data"]["compute_resources"]:
                resource["properties"] = dict(self.properties)
        while request is not None:
            reply = json.loads(json.dumps(handler(request)))
            assert_well_formed(request, reply)
            self.sent.append(reply)
            self.apply(reply)
            request = self.next_request(request["now"])

    def next_request(self, last_now: float) -> dict | None:
        if self.ended:
            return None
        if not self.events:
            self.ended = True
            return {"now": last_now, "events": [{"timestamp": last_now, "type": "SIMULATION_ENDS", "data": {}}]}
        now, events = self.events[0][0], []
        while self.events and self.events[0][0] == now:
            _, _, _, kind, job_id = heapq.heappop(self.events)
            if kind == "submit":
                job = dict(self.jobs[job_id])
                job.pop("runtime")
                events.append({"timestamp": now, "type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": job}})
            else:
                self.busy = self.busy - self.allocs[job_id]
                events.append({"timestamp": now, "type": "JOB_COMPLETED", "data": {
                    "job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                    "alloc": str(self.allocs[job_id])}})
        return {"now": now, "events": events}

    def apply(self, reply) -> None:
        now = reply["now"]
        for event in reply["events"]:
            job_id = event["data"].get("job_id")
            if event["type"] == "REJECT_JOB":
                self.rejected.add(job_id)
            elif event["type"] == "EXECUTE_JOB":
                alloc = ProcSet.from_str(event["data"]["alloc"])
                job = self.jobs[job_id]
                assert alloc.isdisjoint(self.busy) and len(alloc) == job["res"]
                self.busy = self.busy | alloc
                self.allocs[job_id] = alloc
                end = now + min(job["runtime"], job.get("walltime", float("inf")))
                self.seq += 1
                heapq.heappush(self.events, (end, 1, self.seq, "complete", job_id))


@pytest.mark.parametrize("path", ["pybatsim", "translator"])
@pytest.mark.parametrize("name", list(PRESETS))
def test_closed_loop_every_job_runs_or_is_rejected(name, path):
    specs = [(0.0, 3, 100.0, 80.0), (0.0, 4, 50.0, 50.0), (0.1 + 0.2, 2, 30.0, 10.0), (5.0, 9, 10.0, 10.0),
             (7.0, 1, None, 12.0), (8.0, 4, 20.0, 5.0), (8.0, 2, 500.0, 400.0), (60.0, 8, 10.0, 1.0)]
    jobs = {}
    for k, (sub, res, wall, runtime) in enumerate(specs):
        job = {"id": f"w0!{k}", "subtime": sub, "res": res, "profile": "p", "runtime": runtime, "user": "u"}
        if wall is not None:
            job["walltime"] = wall
        jobs[job["id"]] = job
    # UPAS needs hosts that name their gears, and dynamic jobs (which this tiny Batsim lacks) unless it never scales
    options, properties = ({"u_upper": 0.0, "u_lower": 0.0}, UPAS_PROPERTIES) if name == "upas" else ({}, None)
    batsim = TinyBatsim(8, jobs, properties)
    batsim.run(pybatsim_handler(load_scheduler(name, options)) if path == "pybatsim"
               else scheduler_handler(name, options))
    assert batsim.ended
    assert batsim.rejected == {"w0!3"}
    assert set(batsim.allocs) | batsim.rejected == set(jobs)
    assert batsim.sent[-1]["events"] == []


# ----------------------------------------------------------------- registration and loading
def test_presets_are_registered_for_pybatsim():
    plugins = dict(find_plugin_schedulers())
    assert set(PRESET_CLASSES) == set(PRESETS)
    for name, cls in PRESET_CLASSES.items():
        assert plugins[name] is cls and cls.preset == name
    assert find_ambiguous_scheduler_names() == {}
    assert isinstance(get_scheduler_by_name("easy-backfill", options={"placement": "best-fit"}), EasyBackfill)


def test_load_scheduler_by_name_entry_point_and_module():
    easy = load_scheduler("easy-backfill", {"placement": "best-fit"})
    assert isinstance(easy, EasyBackfill) and easy.policy.placement.name == "best-fit"
    assert type(load_scheduler("backfill-easy", {})).__module__ == "pybatsim.schedulers.easyBackfill"
    assert type(load_scheduler("wattsched.schedulers.adapter:Fcfs", {})) is Fcfs
    assert type(load_scheduler("pybatsim.schedulers.easyBackfill", {})).__name__ == "EasyBackfill"
    generic = WattschedScheduler({}, preset="fcfs")
    assert generic.policy.name == "fcfs"


def test_load_scheduler_from_a_file(tmp_path):
    path = tmp_path / "my_sched.py"
    path.write_text(
        "from pybatsim.batsim.batsim import BatsimScheduler\n"
        "class First(BatsimScheduler):\n    pass\n"
        "class Second(BatsimScheduler):\n    pass\n"
    )
    assert type(load_scheduler(str(path), {"a": 1})).__name__ == "First"
    second = load_scheduler(f"{path}:Second", {"a": 1})
    assert type(second).__name__ == "Second" and second.options == {"a": 1}


def test_load_scheduler_errors():
    with pytest.raises(OptionError, match="unknown scheduler 'nope'; presets: fcfs, easy-backfill"):
        load_scheduler("nope", {})
    with pytest.raises(OptionError, match="no file"):
        load_scheduler("missing/sched.py", {})
    with pytest.raises(OptionError, match="cannot import"):
        load_scheduler("no_such_package.module", {})
    with pytest.raises(OptionError, match="no BatsimScheduler subclass 'Nope'"):
        load_scheduler("wattsched.schedulers.adapter:Nope", {})
    with pytest.raises(OptionError, match="unknown option 'alloc' for easy-backfill"):
        load_scheduler("easy-backfill", {"alloc": "best-fit"})


# ----------------------------------------------------------------- a preset's refusal under pybatsim's own launcher
def test_a_refusal_under_pybatsims_launcher_is_one_line_and_ours_still_raises(tmp_path):
    """``pybatsim upas`` (pybatsim's launcher, what the Docker image runs) on Batsim without dynamic jobs printed
    pybatsim's traceback, whose last line gave the reason (exit 1); so did a bad option. Now one line, exit 2. Under
    our launchers (the in-process pybatsim client of ``run`` and of the API; ``serve``'s) the preset's error still goes
    up as the exception, which wattsched prints on one line naming the Batsim message."""
    import socket
    import subprocess
    import sys

    from wattsched.base.errors import ProtocolError
    from wattsched.simulator.drivers import run_inprocess, run_zmq
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    pybatsim = Path(sys.executable).parent / "pybatsim"
    if not pybatsim.exists():
        pytest.skip("pybatsim's launcher is not installed")
    root = Path(__file__).resolve().parent.parent

    def sim() -> Simulation:  # Batsim without --enable-dynamic-jobs
        return Simulation(load_platform(root / "platforms" / "upas_16.xml"),
                          load_workload(root / "workloads" / "demo_upas16.json"))

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        endpoint = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    proc = subprocess.Popen([str(pybatsim), "-t", "-1", "-s", endpoint, "upas"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        with pytest.raises(ProtocolError, match="closed the connection"):
            run_zmq(sim(), endpoint, timeout_s=60)  # the embedded simulator as Batsim
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("pybatsim: error: frequency 'upas' lowers jobs' gears") and \
        "--enable-dynamic-jobs --acknowledge-dynamic-jobs" in err, err
    bad = subprocess.run([str(pybatsim), "-s", endpoint, "upas", "-o", '{"bogus": 1}'], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("pybatsim: error: unknown option 'bogus' for upas"), bad
    assert bad.stderr.count("\n") == 1, bad.stderr
    # our launchers: the exception, as before
    with pytest.raises(OptionError, match="--enable-dynamic-jobs --acknowledge-dynamic-jobs"):
        run_inprocess(sim(), pybatsim_handler(PRESET_CLASSES["upas"]({})))
    with pytest.raises(OptionError, match="unknown option 'bogus'"):
        PRESET_CLASSES["upas"]({"bogus": 1})


@pytest.mark.parametrize("through", ["translator", "pybatsim"])
def test_per_event_scheduling_still_acts_on_switch_ends_and_calls(through, tmp_path):
    """``per_event`` (a pass after every submission and completion, like pybatsim's easyBackfill) also schedules at
    the end of a message that held another event the policy reads: with the opportunistic shutdown the hosts a job
    waits for are booted and the job started when their switch ends. (Hunt 48: passes only after submissions and
    completions left a job waiting for booted hosts for ever, and the run ended in a deadlock.)"""
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    root = Path(__file__).resolve().parent.parent
    options = {"power": "shutdown"}
    if through == "translator":
        handler = scheduler_handler("compose", options)
        handler.per_event = True  # type: ignore[attr-defined]
    else:
        class PerEvent(Compose):
            per_event = True

        handler = pybatsim_handler(PerEvent(options))
    workload = tmp_path / "w.json"  # a: one host, the others off; b, later: every host, booted for it
    workload.write_text(json.dumps({"nb_res": 16, "profiles": {"d": {"type": "delay", "delay": 100}}, "jobs": [
        {"id": "a", "subtime": 0, "res": 1, "walltime": 200, "profile": "d"},
        {"id": "b", "subtime": 50, "res": 16, "walltime": 200, "profile": "d"}]}))
    sim = Simulation(load_platform(root / "platforms" / "taurus_16.xml"), load_workload(workload))
    run_inprocess(sim, handler)
    jobs = {job.job.id: job for job in sim.iter_jobs()}
    assert {job.final_state for job in jobs.values()} == {"COMPLETED_SUCCESSFULLY"}
    assert jobs["w0!b"].start_s > 100.0 and sim.nb_machine_switches >= 30  # after the boot of the 15 hosts
