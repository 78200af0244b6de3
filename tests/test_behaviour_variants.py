"""Variants of the behaviours of ``tests/fixtures/batsim-reference/README.md`` (B1..B45).

The recordings of real Batsim fix each behaviour on one set of numbers; the held-out recordings
are variants of them (other platforms, hosts, times, pstates, switch durations, simultaneous
events). Each test here runs the embedded simulator on a tiny platform and workload built in the
test, with numbers that differ from the recording's, and asserts only what the README's rule says
must then happen. The behaviour is cited in each docstring.

Toy host model used by most tests (numbers chosen so that every value is exact in binary):
pstate 0 = 2 Mf at 10:30 W, pstate 1 = 1 Mf at 8:18 W, pstate 2 = sleep (1 W), pstate 3 =
switch-off virtual pstate (1 flop at 0.25 f: 4 s at 5 W), pstate 4 = switch-on virtual pstate
(1 flop at 0.125 f: 8 s at 7 W).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

TOY_SPEED = "2Mf, 1Mf, 1e-9Mf, 0.25f, 0.125f"
TOY_WATTS = "10:30, 8:18, 1:1, 5:5, 7:7"
TOY_SLEEP = "2:3:4"


def host_xml(name: str, speed: str = TOY_SPEED, watts: str = TOY_WATTS, sleep: str | None = TOY_SLEEP,
             pstate: int = 0, props: dict[str, str] | None = None) -> str:
    lines = [f'  <host id="{name}" coordinates="0 0 0" speed="{speed}" pstate="{pstate}">',
             f'    <prop id="wattage_per_state" value="{watts}" />']
    if sleep is not None:
        lines.append(f'    <prop id="sleep_pstates" value="{sleep}" />')
        lines.append(f'    <prop id="wattage_off" value="{watts.split(",")[int(sleep.split(":")[0])].split(":")[0].strip()}" />')
    for k, v in (props or {}).items():
        lines.append(f'    <prop id="{k}" value="{v}" />')
    lines.append("  </host>")
    return "\n".join(lines)


def platform_xml(hosts: list[str], master_watts: str = "100:100", master_first: bool = True) -> str:
    master = (f'  <host id="master_host" coordinates="0 0 0" speed="100Mf">\n'
              f'    <prop id="wattage_per_state" value="{master_watts}" />\n  </host>')
    body = [master, *hosts] if master_first else [*hosts, master]
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            '<platform version="4.1">\n<zone id="AS0" routing="Vivaldi">\n' + "\n".join(body) + "\n</zone>\n</platform>\n")


def toy_platform(n: int) -> str:
    return platform_xml([host_xml(f"h{i}") for i in range(n)])


def compute(flops: float, **extra) -> dict:
    return {"type": "parallel_homogeneous", "cpu": flops, "com": 0, **extra}


def delay(seconds: float, **extra) -> dict:
    return {"type": "delay", "delay": seconds, **extra}


def composed(seq: list[str], repeat: int = 1) -> dict:
    return {"type": "composed", "repeat": repeat, "seq": seq}


def jb(i, subtime: float = 0, res: int = 1, profile: str = "p", walltime: float | None = None, **extra) -> dict:
    j = {"id": i, "subtime": subtime, "res": res, "profile": profile, **extra}
    if walltime is not None:
        j["walltime"] = walltime
    return j


Script = Callable[[dict, "Run"], list]


@dataclass
class Run:
    """One simulation driven by a scripted scheduler; messages and CSV rows kept."""

    sim: Simulation
    msgs: list[dict] = field(default_factory=list)  # Batsim's messages, in order
    csv: dict[str, list[dict]] = field(default_factory=dict)

    def types(self, i: int) -> list[str]:
        return [e["type"] for e in self.msgs[i]["events"]]

    def find(self, pred) -> int:
        """Index of the first message with an event matching ``pred``."""
        for i, m in enumerate(self.msgs):
            if any(pred(e) for e in m["events"]):
                return i
        raise AssertionError("no such event")

    def completion(self, job_id: str) -> tuple[int, dict]:
        i = self.find(lambda e: e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == job_id)
        ev = next(e for e in self.msgs[i]["events"]
                  if e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == job_id)
        return i, ev

    def job_row(self, bare_id: str) -> dict:
        return next(r for r in self.csv["jobs"] if r["job_id"] == bare_id)

    def summary(self) -> list[tuple[float, list[str]]]:
        out = []
        for m in self.msgs:
            evs = []
            for e in m["events"]:
                d = e["data"]
                s = e["type"]
                if "job_id" in d:
                    s += " " + d["job_id"]
                if "resources" in d:
                    s += f" {d['resources']}>{d['state']}"
                if e["type"] == "NOTIFY":
                    s += " " + d["type"]
                evs.append(s)
            out.append((m["now"], evs))
        return out


def run(tmp_path: Path, platform: str, profiles: dict, jobs: list[dict], script: Script,
        **kwargs: bool) -> Run:
    (tmp_path / "platform.xml").write_text(platform)
    (tmp_path / "workload.json").write_text(json.dumps({"nb_res": 1, "jobs": jobs, "profiles": profiles}))
    sim = Simulation(load_platform(tmp_path / "platform.xml"), load_workload(tmp_path / "workload.json"),
                     workload_label="workload.json", **kwargs)
    r = Run(sim)
    msg: dict | None = sim.start()
    while msg is not None:
        r.msgs.append(msg)
        assert len(r.msgs) < 500, "runaway"
        ends = msg["events"][0]["type"] == "SIMULATION_ENDS"
        events = [] if ends else script(msg, r)
        now = msg["now"]  # the scripted schedulers echo Batsim's now (B39)
        msg = sim.step({"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]})
    paths = write_outputs(sim, tmp_path / "out")
    for name, path in paths.items():
        lines = path.read_text().splitlines()
        header = lines[0].split(",")
        r.csv[name] = [dict(zip(header, line.split(","))) for line in lines[1:]]
    return r


def by_index(table: dict[int, list], reject_others: bool = False) -> Script:
    """A script answering Batsim message ``i`` (0-based) with ``table[i]`` (nothing otherwise);
    ``reject_others``: submissions answered by nothing are rejected."""
    def script(msg: dict, r: Run) -> list:
        out = table.get(len(r.msgs) - 1)
        if out is None and reject_others:
            out = [("REJECT_JOB", {"job_id": e["data"]["job_id"]}) for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
        return out or []
    return script


def on_event(handlers: dict[tuple[str, str | None], list]) -> Script:
    """A script answering the first message holding (type, job_id) with the listed events."""
    done: set = set()

    def script(msg: dict, r: Run) -> list:
        out = []
        for e in msg["events"]:
            key = (e["type"], e["data"].get("job_id") if isinstance(e["data"], dict) else None)
            for k in (key, (e["type"], None)):
                if k in handlers and k not in done:
                    done.add(k)
                    out.extend(handlers[k])
        return out

    return script


def execute(jid: str, alloc: str) -> tuple[str, dict]:
    return ("EXECUTE_JOB", {"job_id": jid, "alloc": alloc})


def state(resources: str, pstate: int) -> tuple[str, dict]:
    return ("SET_RESOURCE_STATE", {"resources": resources, "state": str(pstate)})


QUERY: tuple[str, dict] = ("QUERY", {"requests": {"consumed_energy": {}}})


def call(t: float) -> tuple[str, dict]:
    return ("CALL_ME_LATER", {"timestamp": t})


def kill(*ids: str) -> tuple[str, dict]:
    return ("KILL_JOB", {"job_ids": list(ids)})


def answers(r: Run) -> list[tuple[float, float]]:
    return [(m["now"], e["data"]["consumed_energy"]) for m in r.msgs for e in m["events"] if e["type"] == "ANSWER"]


# ============================================================================ resources and platform

def test_b1_b2_ids_follow_byte_order_of_names_wherever_the_master_is(tmp_path) -> None:
    """B1, B2: ids follow the byte-wise order of the names (not the XML order), the master gets none,
    nb_resources = nb_compute_resources = compute hosts; properties = role "" + the host's props;
    zone_properties {} in a zone without props; config and empty storage."""
    names = ["node-2", "node-10-gpu", "Zeta", "node-10", "alpha", "node-1"]
    hosts = [host_xml(n, props={"kind": n[:2]}) for n in names]
    platform = platform_xml(hosts[:3], master_first=False).replace("</zone>", "\n".join(hosts[3:]) + "\n</zone>")
    r = run(tmp_path, platform, {"p": compute(1e6)}, [jb(1)], on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "5")]}))
    data = r.msgs[0]["events"][0]["data"]
    expected = sorted(names, key=lambda s: s.encode())
    assert [(c["id"], c["name"]) for c in data["compute_resources"]] == list(enumerate(expected))
    assert expected[:2] == ["Zeta", "alpha"] and expected.index("node-10") < expected.index("node-10-gpu") < expected.index("node-2")
    assert data["nb_resources"] == data["nb_compute_resources"] == 6 and data["nb_storage_resources"] == 0
    first = data["compute_resources"][0]
    assert first["state"] == "idle" and first["zone_properties"] == {}
    assert first["properties"]["role"] == "" and first["properties"]["kind"] == "Ze"
    assert data["storage_resources"] == [] and data["allow_compute_sharing"] is False
    assert data["config"]["dynamic-jobs-enabled"] is False and data["config"]["profiles-forwarded-on-submission"] is False
    assert data["workloads"] == {"w0": "workload.json"}
    assert data["profiles"] == {"w0": {"p": compute(1e6)}}
    # the job ran on host id 5 = node-2
    assert r.completion("w0!1")[1]["data"]["alloc"] == "5"


def test_b3_the_master_is_never_billed_whatever_its_wattage(tmp_path) -> None:
    """B3: ANSWER, out_consumed_energy.csv and job energies sum the compute hosts only (here a master
    drawing 5000 W)."""
    platform = platform_xml([host_xml(f"h{i}") for i in range(3)], master_watts="5000:5000")
    r = run(tmp_path, platform, {"p": compute(6e6)}, [jb(1)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1")], ("JOB_COMPLETED", "w0!1"): [QUERY]}))
    # 3 s: host 1 at 30 W, hosts 0 and 2 at 10 W
    assert answers(r) == [(3.0, 3 * (30 + 2 * 10))]
    assert float(r.job_row("1")["consumed_energy"]) == 90.0
    assert [float(x["energy"]) for x in r.csv["consumed_energy"]] == [0.0, 150.0]


# ============================================================================ envelope, numbers, time

def test_b4_every_double_is_printed_with_six_decimals_and_timestamps_equal_now(tmp_path) -> None:
    """B4: ``now``, ``timestamp``, ``consumed_energy`` and ``progress`` are %f values; every event's
    timestamp is its message's now (here a job ending at 2/3 s and 1/3 of a task done)."""
    profiles = {"p": compute(4e6 / 3), "long": compute(6e6)}
    r = run(tmp_path, toy_platform(2), profiles, [jb(1), jb(2, profile="long")],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "1")],
                      ("JOB_COMPLETED", "w0!1"): [QUERY, kill("w0!2")]}))
    for m in r.msgs:
        assert m["now"] == float(f"{m['now']:.6f}")
        assert all(e["timestamp"] == m["now"] for e in m["events"])
    i, _ = r.completion("w0!1")
    assert r.msgs[i]["now"] == 0.666667
    (t, e), = answers(r)
    assert e == float(f"{e:.6f}")
    killed = next(e for m in r.msgs for e in m["events"] if e["type"] == "JOB_KILLED")
    assert killed["data"]["job_progress"]["w0!2"]["progress"] == 0.222222  # 0.666667 s of 3 s


def test_b5_a_now_rounded_up_moves_the_clock_and_rounding_down_does_not(tmp_path) -> None:
    """B5: decisions are applied at the reply's now: the job started after a completion printed
    rounded up starts at the printed time (its 's' row), and the platform energy between the 'e' and
    's' rows is the idle power over the rounding gap. A now rounded down changes nothing."""
    profiles = {"a": compute(4e6 / 3), "b": compute(2e6 / 3), "c": compute(2e6)}
    jobs = [jb(1, profile="a"), jb(2, profile="b"), jb(3, profile="c"), jb(4, profile="c")]
    r = run(tmp_path, toy_platform(2), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "1")],
                      ("JOB_COMPLETED", "w0!1"): [execute("w0!3", "0")],
                      ("JOB_COMPLETED", "w0!2"): [execute("w0!4", "1")]}))
    # job 1 ends at 0.6666666.. printed 0.666667 (rounded up): job 3 starts at 0.666667
    assert r.sim.jobs["w0!3"].start_s == 0.666667
    assert r.sim.jobs["w0!3"].end_s == pytest.approx(0.666667 + 1.0, abs=1e-12)
    # job 2 ends at 0.3333333.. printed 0.333333 (rounded down): job 4 starts at the true end
    assert r.sim.jobs["w0!4"].start_s == pytest.approx(1 / 3, abs=1e-15)
    rows = r.csv["consumed_energy"]
    e1 = next(i for i, x in enumerate(rows) if x["time"] == "0.666667" and x["event_type"] == "e")
    assert rows[e1 + 1]["event_type"] == "s" and rows[e1 + 1]["time"] == "0.666667"
    gap = 0.666667 - 2 / 3
    # during the gap: host 0 idle (10 W), host 1 computing job 4 (30 W)
    diff = float(rows[e1 + 1]["energy"]) - float(rows[e1]["energy"])
    assert diff == pytest.approx(gap * 40, abs=2e-6)


def test_b6_job_submitted_carries_the_entry_with_the_string_id(tmp_path) -> None:
    """B6: job ids are "w0!<id>" (string ids too); the job object is the workload entry with the id
    rewritten, extra fields kept, no walltime key when there is none, the profile not forwarded."""
    jobs = [jb("alpha", walltime=7.5, user="u1"), jb(3, extra={"k": [1, 2]})]
    r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, jobs,
            on_event({("JOB_SUBMITTED", None): [execute("w0!3", "0"), execute("w0!alpha", "1")]}))
    subs = {e["data"]["job_id"]: e["data"]["job"] for m in r.msgs for e in m["events"] if e["type"] == "JOB_SUBMITTED"}
    assert subs == {
        "w0!3": {"id": "w0!3", "subtime": 0, "res": 1, "profile": "p", "extra": {"k": [1, 2]}},
        "w0!alpha": {"id": "w0!alpha", "subtime": 0, "res": 1, "profile": "p", "user": "u1", "walltime": 7.5},
    }
    assert "walltime" not in subs["w0!3"]


# ============================================================================ batching and event order

def test_b7_first_reply_results_of_its_first_event_then_t0_submissions_then_the_rest(tmp_path) -> None:
    """B7: the second message holds the results of the first reply event, then every t=0
    JOB_SUBMITTED, then the results of the other reply events (here ANSWER first, DVFS second and
    a second ANSWER third, two jobs at t=0 and one later)."""
    jobs = [jb(2), jb(1), jb(3, subtime=5)]
    r = run(tmp_path, toy_platform(3), {"p": compute(2e6)}, jobs,
            on_event({("SIMULATION_BEGINS", None): [QUERY, state("1-2", 1), QUERY],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "1")],
                      ("JOB_SUBMITTED", "w0!3"): [execute("w0!3", "2")]}))
    assert r.summary()[1] == (0.0, ["ANSWER", "JOB_SUBMITTED w0!1", "JOB_SUBMITTED w0!2",
                                    "RESOURCE_STATE_CHANGED 1-2>1", "ANSWER"])


def test_b7_b11_all_jobs_at_t0_and_a_dvfs_first(tmp_path) -> None:
    """B7, B11: DVFS acknowledgement first, then the t=0 submissions, then the other results; the
    NOTIFY of the last submission shares that message, at its end, since events followed it
    (``composed-profiles-c:3``), here with three hosts and a QUERY."""
    r = run(tmp_path, toy_platform(3), {"p": compute(2e6)}, [jb(1), jb(2)],
            by_index({0: [state("2", 1), QUERY, state("0", 1)], 1: [execute("w0!1", "0"), execute("w0!2", "1")]}))
    assert r.summary()[1] == (0.0, ["RESOURCE_STATE_CHANGED 2>1", "JOB_SUBMITTED w0!1", "JOB_SUBMITTED w0!2",
                                    "ANSWER", "RESOURCE_STATE_CHANGED 0>1", "NOTIFY no_more_static_job_to_submit"])


def test_b7_b11_all_jobs_at_t0_and_an_empty_first_reply(tmp_path) -> None:
    """B7, B11: nothing followed the last (t=0) submission: NOTIFY opens the next message, with the
    same now, before the results of the reply (``fcfs-compute:25``, ``shutdown-boot:39``)."""
    r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, [jb(1), jb(2)],
            by_index({1: [QUERY, execute("w0!1", "1"), execute("w0!2", "0")]}))
    assert r.summary()[1:3] == [(0.0, ["JOB_SUBMITTED w0!1", "JOB_SUBMITTED w0!2"]),
                                (0.0, ["NOTIFY no_more_static_job_to_submit", "ANSWER"])]


def test_b8_results_of_a_reply_come_next_in_reply_order(tmp_path) -> None:
    """B8: ANSWERs (one per QUERY, duplicates too), DVFS acknowledgements and kills of one reply come
    in the next message with the same now, in the order of the reply's events; a zero-work job's
    JOB_COMPLETED comes one message later still. (The reply answers the last submission, alone in its
    message: the NOTIFY opens the next message, before the results, B11.)"""
    profiles = {"p": compute(20e6), "z": compute(0)}
    jobs = [jb(1), jb(2), jb(3, subtime=1, profile="z")]
    r = run(tmp_path, toy_platform(3), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "2")],
                      ("JOB_SUBMITTED", "w0!3"): [state("0", 1), execute("w0!3", "1"), QUERY, kill("w0!2", "w0!1"),
                                                  QUERY, state("1-2", 1)]}))
    i = r.find(lambda e: e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!3")
    assert r.summary()[i + 1] == (1.0, ["NOTIFY no_more_static_job_to_submit", "RESOURCE_STATE_CHANGED 0>1", "ANSWER", "JOB_COMPLETED w0!2",
                                        "JOB_COMPLETED w0!1", "JOB_KILLED", "ANSWER", "RESOURCE_STATE_CHANGED 1-2>1"])
    assert r.summary()[i + 2] == (1.0, ["JOB_COMPLETED w0!3"])
    killed = next(e for e in r.msgs[i + 1]["events"] if e["type"] == "JOB_KILLED")
    assert killed["data"]["job_ids"] == ["w0!2", "w0!1"]
    a1, a2 = [e for e in r.msgs[i + 1]["events"] if e["type"] == "ANSWER"]
    # 1 s of hosts 0 and 2 at 30 W and host 1 at 10 W: both queries of one reply read the same
    assert a1["data"]["consumed_energy"] == a2["data"]["consumed_energy"] == 70.0
    assert r.job_row("3")["execution_time"] == "0.000010"


def test_b9_b37_timers_in_fifo_order_then_completions_in_start_order(tmp_path) -> None:
    """B9, B37: at one time, REQUESTED_CALL and JOB_SUBMITTED in the order their wait began (a call
    asked before the submitter slept comes first, one asked after comes after), then every
    JOB_COMPLETED (normal and walltime ends mixed) in the order the jobs started, whatever their
    hosts and however early they started."""
    profiles = {"p": compute(100e6), "q": compute(20e6), "r": compute(100e6)}
    # the jobs at t=50 are the last: the submitter sleeps from t=4 (submission of job 2) on
    jobs = [jb(1, profile="q"), jb(2, subtime=4, profile="q"), jb(3, subtime=4, profile="r", walltime=46),
            jb(4, subtime=50, profile="p"), jb(5, subtime=50, profile="p")]
    r = run(tmp_path, toy_platform(4), profiles, jobs,
            by_index({0: [call(50)],  # before the submitter's first sleep (B7)
                      1: [execute("w0!1", "3")],  # 0 -> 10 s, later restarted below
                      2: [call(50), execute("w0!3", "2"), execute("w0!2", "0")],  # t=4, after the submitter's sleep
                      }, reject_others=True))
    # w0!2 (started at 4 on host 0, 20e6/2e6 = 10 s) ends at 14; w0!3 walltime 46 -> ends at 50
    assert r.summary()[r.find(lambda e: e["type"] == "REQUESTED_CALL")] == (
        50.0, ["REQUESTED_CALL", "JOB_SUBMITTED w0!4", "JOB_SUBMITTED w0!5", "REQUESTED_CALL", "JOB_COMPLETED w0!3",
              "NOTIFY no_more_static_job_to_submit"])


def test_b37_same_time_completions_in_start_order_with_a_walltime_end_mixed_in(tmp_path) -> None:
    """B9, B37: jobs ending together come in start order, not in host or id order; a walltime end
    sits among them by its job's start; submissions at that time come before all of them."""
    profiles = {"c12": compute(24e6), "c6": compute(12e6), "long": compute(100e6)}
    jobs = [jb(1, profile="c12"), jb(2, profile="long", walltime=9), jb(3, subtime=3, profile="c6"),
            jb(4, subtime=12, profile="c6")]
    r = run(tmp_path, toy_platform(3), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "2")],
                      ("JOB_SUBMITTED", "w0!3"): [execute("w0!2", "1"), execute("w0!3", "0")],
                      ("JOB_SUBMITTED", "w0!4"): [execute("w0!4", "0")]}))
    # w0!1 0-12 on host 2; w0!2 3-12 on host 1 (walltime); w0!3 6 s from 3... ends at 9 -> not 12
    i = r.find(lambda e: e["type"] == "JOB_COMPLETED")
    assert r.summary()[i] == (9.0, ["JOB_COMPLETED w0!3"])
    j = r.find(lambda e: e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!4")
    assert r.summary()[j] == (12.0, ["JOB_SUBMITTED w0!4", "JOB_COMPLETED w0!1", "JOB_COMPLETED w0!2",
                                     "NOTIFY no_more_static_job_to_submit"])
    assert r.completion("w0!2")[1]["data"]["job_state"] == "COMPLETED_WALLTIME_REACHED"


def test_b9_b23_switches_ending_together_give_one_event_each_in_request_order(tmp_path) -> None:
    """B9, B23, B40: separate switch requests that finish together give one RESOURCE_STATE_CHANGED
    each, in one message, in request order (not host order); an overlapping request completes on its
    own (here a switch-off of 4 s and boots of 8 s)."""
    r = run(tmp_path, toy_platform(5), {"p": compute(2e6)}, [jb(1, subtime=30)], _b9_switch_script())
    s = r.summary()
    assert (4.0, ["RESOURCE_STATE_CHANGED 3-4>2", "RESOURCE_STATE_CHANGED 0>2"]) in s
    assert (7.0, ["RESOURCE_STATE_CHANGED 1>2"]) in s  # asked at 3, while 0 and 3-4 were switching off
    assert (15.5, ["RESOURCE_STATE_CHANGED 0>1", "RESOURCE_STATE_CHANGED 3-4>0"]) in s


def _b9_switch_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        ts = [e["type"] for e in msg["events"]]
        if ts == ["SIMULATION_BEGINS"]:
            return [state("3-4", 2), state("0", 2), call(3), call(7.5)]
        if msg["now"] == 3.0:
            return [state("1", 2)]
        if msg["now"] == 7.5 and "REQUESTED_CALL" in ts:
            return [state("0", 1), state("3-4", 0)]
        if "JOB_SUBMITTED" in ts:
            return [execute("w0!1", "2")]
        return []
    return script


def test_b10_same_subtime_jobs_are_submitted_in_id_string_order(tmp_path) -> None:
    """B10: same-subtime jobs come sorted by their id string (not file order, not numerically),
    whatever their file order, subtimes in the file unsorted."""
    ids = [9, "b", 100, 10, "a", 1]
    jobs = [jb(i, subtime=2.5) for i in ids] + [jb(7, subtime=0)]
    r = run(tmp_path, toy_platform(1), {"p": compute(0)}, jobs,
            lambda msg, r: [("REJECT_JOB", {"job_id": e["data"]["job_id"]}) for e in msg["events"] if e["type"] == "JOB_SUBMITTED"])
    subs = [e["data"]["job_id"] for m in r.msgs for e in m["events"] if e["type"] == "JOB_SUBMITTED"]
    assert subs == ["w0!7", "w0!1", "w0!10", "w0!100", "w0!9", "w0!a", "w0!b"]
    assert r.summary()[2][0] == 2.5 and len(r.summary()[2][1]) == 6
    assert [x["final_state"] for x in r.csv["jobs"]] == ["REJECTED"] * 7


def test_b11_notify_shares_the_message_when_a_same_time_completion_follows(tmp_path) -> None:
    """B11 (with B37): the last submission followed by a same-time JOB_COMPLETED: the NOTIFY closes
    that message."""
    r = run(tmp_path, toy_platform(2), {"p": compute(14e6)}, [jb(1), jb(2, subtime=7)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1")], ("JOB_SUBMITTED", "w0!2"): [execute("w0!2", "0")]}))
    i = r.find(lambda e: e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!2")
    assert r.summary()[i] == (7.0, ["JOB_SUBMITTED w0!2", "JOB_COMPLETED w0!1", "NOTIFY no_more_static_job_to_submit"])


def test_b12_the_end_comes_with_the_last_switch_and_every_call_gives_its_event(tmp_path) -> None:
    """B12: SIMULATION_ENDS (data {}) comes alone with the now of the last thing that happened,
    here a switch-off ending after the last job and after three CALL_ME_LATER for one time (three
    REQUESTED_CALL, data {})."""
    r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, [jb(1, subtime=0.25)],
            on_event({("SIMULATION_BEGINS", None): [call(1.125), call(1.125), call(1.125)],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1")],
                      ("JOB_COMPLETED", "w0!1"): [state("0-1", 2)]}))
    s = r.summary()
    assert (1.125, ["REQUESTED_CALL"] * 3) in s
    assert all(e["data"] == {} for m in r.msgs for e in m["events"] if e["type"] == "REQUESTED_CALL")
    assert s[-2] == (5.25, ["RESOURCE_STATE_CHANGED 0-1>2"])
    assert s[-1] == (5.25, ["SIMULATION_ENDS"]) and r.msgs[-1]["events"][0]["data"] == {}


def test_b13_alloc_is_the_interval_set_string_of_a_non_contiguous_allocation(tmp_path) -> None:
    """B13, B28: JOB_COMPLETED.data has job_id, job_state, return_code, alloc; alloc (and the CSV's
    allocated_resources) is the space-separated interval set, as in EXECUTE_JOB."""
    r = run(tmp_path, toy_platform(7), {"p": compute(2e6)}, [jb(1, res=5)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0-1 3 5-6")]}))
    _, ev = r.completion("w0!1")
    assert ev["data"] == {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-1 3 5-6"}
    assert r.job_row("1")["allocated_resources"] == "0-1 3 5-6"
    # 1 s of 5 computing hosts and 2 idle ones
    assert float(r.job_row("1")["consumed_energy"]) == 5 * 30.0


# ============================================================================ walltime, kills, failure

def test_b14_walltime_boundaries_on_other_numbers(tmp_path) -> None:
    """B14: a compute task ending exactly at the walltime succeeds; a delay equal to the walltime is
    cut (WALLTIME_REACHED, return_code -1, no JOB_KILLED, execution_time = walltime); a running job
    at start + walltime ends then; no walltime -> requested_time -1.000000."""
    profiles = {"c": compute(5e6), "d": delay(2.5), "long": compute(100e6), "cd": composed(["c", "d"])}
    jobs = [jb(1, profile="c", walltime=2.5), jb(2, profile="d", walltime=2.5), jb(3, profile="long", walltime=3.75),
            jb(4, profile="cd", walltime=5), jb(5, profile="c")]
    r = run(tmp_path, toy_platform(5), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute(f"w0!{k}", str(k - 1)) for k in range(1, 6)]}))
    state_of = {k: r.completion(f"w0!{k}")[1]["data"] for k in range(1, 6)}
    assert state_of[1]["job_state"] == "COMPLETED_SUCCESSFULLY" and state_of[1]["return_code"] == 0
    for k in (2, 3, 4):
        assert state_of[k]["job_state"] == "COMPLETED_WALLTIME_REACHED" and state_of[k]["return_code"] == -1
    assert not any(e["type"] == "JOB_KILLED" for m in r.msgs for e in m["events"])
    assert r.completion("w0!3")[0] == r.find(lambda e: e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == "w0!3")
    ends = {k: r.msgs[r.completion(f"w0!{k}")[0]]["now"] for k in range(1, 6)}
    assert ends == {1: 2.5, 2: 2.5, 3: 3.75, 4: 5.0, 5: 2.5}
    rows = {k: r.job_row(str(k)) for k in range(1, 6)}
    assert [rows[k]["success"] for k in range(1, 6)] == ["1", "0", "0", "0", "1"]
    assert rows[3]["execution_time"] == "3.750000" and rows[4]["execution_time"] == "5.000000"
    assert rows[5]["requested_time"] == "-1.000000" and rows[3]["requested_time"] == "3.750000"
    assert r.csv["schedule"][0]["nb_jobs_killed"] == "3"  # B29: finished but not successful


def test_b15_kill_return_codes_and_progress_trees(tmp_path) -> None:
    """B15: one KILL_JOB for two jobs: one JOB_COMPLETED each (COMPLETED_KILLED, -2 in a parallel
    task, -1 in a delay), then one JOB_KILLED with the progress trees: leaf {profile_name,
    progress}, work-based for a parallel task (also after a DVFS change), elapsed/delay for a delay;
    composed nodes with current_task_index = iteration x len(seq) + position."""
    profiles = {"c": compute(8e6), "d": delay(4), "rep": composed(["c", "d"], repeat=3), "outer": composed(["d", "rep"]),
                "big": compute(10e6)}
    jobs = [jb(1, profile="outer"), jb(2, profile="big"), jb(3, profile="rep", res=2)]
    # job 1 on host 0: d (0-4), then rep: c (4-8) d (8-12) c (12-16) d (16-20): killed at 17 in rep's
    # index 3 (d), 1 s of 4; job 3 on hosts 2-3: c (0-4) d (4-8) c (8-12) d (12-16) c (16-20): at 17,
    # 1 s of 4 of rep's index 4; job 2 on host 1 (DVFS 0 -> 1 at t=1) killed alone at 3
    r = run(tmp_path, toy_platform(4), profiles, jobs, _b15_script())
    i = r.find(lambda e: e["type"] == "JOB_KILLED" and len(e["data"]["job_ids"]) == 2)
    assert r.summary()[i] == (17.0, ["JOB_COMPLETED w0!3", "JOB_COMPLETED w0!1", "JOB_KILLED"])
    data = {e["data"]["job_id"]: e["data"] for e in r.msgs[i]["events"] if e["type"] == "JOB_COMPLETED"}
    assert data["w0!3"]["job_state"] == data["w0!1"]["job_state"] == "COMPLETED_KILLED"
    assert data["w0!3"]["return_code"] == -2 and data["w0!1"]["return_code"] == -1
    killed = r.msgs[i]["events"][-1]["data"]
    assert killed["job_ids"] == ["w0!3", "w0!1"]
    assert killed["job_progress"] == {
        "w0!3": {"profile_name": "rep", "current_task_index": 4, "current_task": {"profile_name": "c", "progress": 0.25}},
        "w0!1": {"profile_name": "outer", "current_task_index": 1, "current_task": {
            "profile_name": "rep", "current_task_index": 3, "current_task": {"profile_name": "d", "progress": 0.25}}},
    }
    j = r.find(lambda e: e["type"] == "JOB_KILLED" and "w0!2" in e["data"]["job_progress"])
    # job 2: 1 s at 2 Mf then 1 Mf from t=1; killed at 3: 2e6 + 2e6 of 10e6 done
    assert r.msgs[j]["now"] == 3.0
    assert r.msgs[j]["events"][-1]["data"]["job_progress"] == {"w0!2": {"profile_name": "big", "progress": 0.4}}
    assert r.job_row("2")["final_state"] == "COMPLETED_KILLED" and r.job_row("2")["execution_time"] == "3.000000"


def _b15_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        ts = [e["type"] for e in msg["events"]]
        if "JOB_SUBMITTED" in ts:
            return [execute("w0!1", "0"), execute("w0!2", "1"), execute("w0!3", "2-3"), call(1), call(3), call(17)]
        if "REQUESTED_CALL" in ts and msg["now"] == 1.0:
            return [state("1", 1)]
        if "REQUESTED_CALL" in ts and msg["now"] == 3.0:
            return [kill("w0!2")]
        if "REQUESTED_CALL" in ts and msg["now"] == 17.0:
            return [kill("w0!3", "w0!1")]
        return []
    return script


def test_b16_a_failing_part_ends_the_job_and_the_rest_never_runs(tmp_path) -> None:
    """B16: a profile with ret k > 0 ends the job with COMPLETED_FAILED and return_code k, at the
    end of that part; the following parts of the sequence never run (here ret 3 on the second
    part of three, and ret 2 on a whole parallel job)."""
    profiles = {"d": delay(1.5), "cf": compute(4e6, ret=3), "c": compute(4e6), "seq": composed(["d", "cf", "c"]),
                "f": compute(1e6, ret=2)}
    r = run(tmp_path, toy_platform(2), profiles, [jb(1, profile="seq"), jb(2, profile="f")],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "1")]}))
    i1, e1 = r.completion("w0!1")
    i2, e2 = r.completion("w0!2")
    assert (r.msgs[i1]["now"], e1["data"]["job_state"], e1["data"]["return_code"]) == (3.5, "COMPLETED_FAILED", 3)
    assert (r.msgs[i2]["now"], e2["data"]["job_state"], e2["data"]["return_code"]) == (0.5, "COMPLETED_FAILED", 2)
    assert r.job_row("1")["success"] == "0" and r.job_row("1")["execution_time"] == "3.500000"


def test_b17_zero_work_tasks_end_at_their_start_with_the_epsilon_in_the_csv(tmp_path) -> None:
    """B17: a parallel task with zero work (homogeneous or total, several hosts) completes at its
    start; out_jobs.csv: execution_time 0.000010, finish_time start + 1e-5, consumed_energy 0."""
    profiles = {"z": compute(0), "zt": {"type": "parallel_homogeneous_total", "cpu": 0, "com": 0}}
    r = run(tmp_path, toy_platform(3), profiles, [jb(1, subtime=2.25, profile="z"), jb(2, subtime=2.25, res=2, profile="zt")],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), execute("w0!2", "1-2")]}))
    for k in (1, 2):
        i, _ = r.completion(f"w0!{k}")
        assert r.msgs[i]["now"] == 2.25
        row = r.job_row(str(k))
        assert (row["starting_time"], row["execution_time"], row["finish_time"], row["consumed_energy"]) == (
            "2.250000", "0.000010", "2.250010", "0.000000")
        assert row["success"] == "1"


def test_b18_rejected_jobs_have_no_event_and_an_empty_row(tmp_path) -> None:
    """B18, B28, B29: REJECT_JOB gives no event back; the CSV row (at rejection time in completion
    order) has REJECTED, success 0 and empty time/energy/allocation fields; nb_jobs counts it."""
    r = run(tmp_path, toy_platform(1), {"p": compute(2e6)}, [jb(1, subtime=1), jb(2, subtime=1.5, walltime=9)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")], ("JOB_SUBMITTED", "w0!2"): [("REJECT_JOB", {"job_id": "w0!2"})]}))
    i = r.find(lambda e: e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!2")
    assert r.summary()[i + 1] == (1.5, ["NOTIFY no_more_static_job_to_submit"])
    assert [x["job_id"] for x in r.csv["jobs"]] == ["2", "1"]
    row = r.csv["jobs"][0]
    assert row == {**row, "success": "0", "final_state": "REJECTED", "starting_time": "", "execution_time": "",
                   "finish_time": "", "waiting_time": "", "turnaround_time": "", "stretch": "",
                   "allocated_resources": "", "consumed_energy": "", "requested_time": "9.000000",
                   "submission_time": "1.500000"}
    sched = r.csv["schedule"][0]
    assert sched["nb_jobs"] == "2" and sched["nb_jobs_finished"] == "1" and sched["nb_jobs_rejected"] == "1"
    assert sched["success_rate"] == "0.500000"
    assert sched["mean_turnaround_time"] == "0.500000"  # job 1's 1 s over the two jobs (the rejected one adds 0)


# ============================================================================ profiles and energy

SLOW_SPEED, SLOW_WATTS = "1Mf, 0.5Mf", "20:40, 15:25"


def hetero_platform() -> str:
    """a0, a1: toy hosts (2 Mf / 1 Mf, 10:30 / 8:18 W); b0, b1: slow hosts without sleep (1 Mf /
    0.5 Mf, 20:40 / 15:25 W). Ids: a0 0, a1 1, b0 2, b1 3."""
    return platform_xml([host_xml("b1", SLOW_SPEED, SLOW_WATTS, None), host_xml("a1"), host_xml("b0", SLOW_SPEED, SLOW_WATTS, None),
                         host_xml("a0")])


def test_b19_b20_b25_b27_multi_host_tasks_on_heterogeneous_hosts(tmp_path) -> None:
    """B19, B20, B25, B27: a multi-host task runs at the pace of its slowest host; a faster host
    draws idle + (busy - idle) x load with load = its time / the slowest host's time;
    parallel_homogeneous_total splits cpu evenly; ``parallel`` gives per-host flops; a job's energy
    is that of its hosts between its start and its end."""
    profiles = {"h": compute(4e6), "t": {"type": "parallel_homogeneous_total", "cpu": 8e6, "com": 0},
                "p": {"type": "parallel", "cpu": [6e6, 2e6], "com": [0, 0, 0, 0]}}
    jobs = [jb(1, profile="h", res=2), jb(2, subtime=10, profile="t", res=2), jb(3, subtime=20, profile="p", res=2)]
    r = run(tmp_path, hetero_platform(), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1-2")], ("JOB_SUBMITTED", "w0!2"): [execute("w0!2", "1-2")],
                      ("JOB_SUBMITTED", "w0!3"): [execute("w0!3", "1-2")],
                      **{("JOB_COMPLETED", f"w0!{k}"): [QUERY] for k in (1, 2, 3)}}))
    ends = {k: r.msgs[r.completion(f"w0!{k}")[0]]["now"] for k in (1, 2, 3)}
    assert ends == {1: 4.0, 2: 14.0, 3: 23.0}
    # job 1 and 2: a1 at load 0.5 (20 W), b0 at load 1 (40 W), 4 s; job 3: a1 6e6 in 3 s (30 W), b0 2e6 in
    # 2 of 3 s (20 + 20 x 2/3 W)
    e = {k: float(r.job_row(str(k))["consumed_energy"]) for k in (1, 2, 3)}
    assert e[1] == pytest.approx(240.0, abs=1e-9) and e[2] == pytest.approx(240.0, abs=1e-9)
    assert e[3] == pytest.approx(3 * (30 + 20 + 20 * 2 / 3), abs=1e-6)
    idle_rest = 10 + 20  # a0 and b1
    expected = [4 * (60 + idle_rest), 4 * (60 + idle_rest) + 6 * 60 + 4 * (60 + idle_rest),
                4 * (60 + idle_rest) + 6 * 60 + 4 * (60 + idle_rest) + 6 * 60 + 3 * (30 + 20 + 20 * 2 / 3 + idle_rest)]
    assert [a for _, a in answers(r)] == pytest.approx(expected, abs=2e-6)


def test_b21_b22_b24_delays_composed_and_dvfs_under_a_heterogeneous_job(tmp_path) -> None:
    """B21, B22, B24: delay parts draw idle power whatever the pstate and take their delay; compute
    parts run at the current pstate speed; a DVFS change under a running multi-host job keeps the
    work done and runs the rest at the new pace (here the slow host slows down further), the
    powers switching at the change."""
    profiles = {"c": compute(4e6), "d": delay(2), "cd": composed(["d", "c"]), "big": compute(8e6)}
    jobs = [jb(1, profile="c", res=2), jb(2, subtime=20, profile="big"), jb(3, subtime=40, profile="d", res=2)]
    r = run(tmp_path, hetero_platform(), profiles, jobs, _b24_script())
    ends = {k: r.msgs[r.completion(f"w0!{k}")[0]]["now"] for k in (1, 2, 3)}
    # job 1 on a0 + b0: 1 s at full pace (1/4 done), then b0 at 0.5 Mf: 3e6 flops left -> 6 s
    # job 2 on a1 at pstate 1 (1 Mf) from t=20: 8 s; job 3: delay 2 on a0-a1 at pstates 0 and 1
    assert ends == {1: 7.0, 2: 28.0, 3: 42.0}
    e = {k: float(r.job_row(str(k))["consumed_energy"]) for k in (1, 2, 3)}
    # job 1: 1 s of 20 + 40 W; 6 s of a0 at load 0.25 (15 W) + b0 busy at pstate 1 (25 W)
    assert e[1] == pytest.approx(60 + 6 * 40, abs=1e-6)
    assert e[2] == pytest.approx(8 * 18, abs=1e-6)
    assert e[3] == pytest.approx(2 * (10 + 8), abs=1e-6)


def _b24_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        out = []
        for e in msg["events"]:
            d = e["data"]
            if e["type"] == "JOB_SUBMITTED" and d["job_id"] == "w0!1":
                out += [execute("w0!1", "0 2"), call(1)]
            elif e["type"] == "REQUESTED_CALL":
                out += [state("2", 1)]
            elif e["type"] == "JOB_SUBMITTED" and d["job_id"] == "w0!2":
                out += [state("1", 1), execute("w0!2", "1")]  # a pstate set before EXECUTE_JOB applies to all the job
            elif e["type"] == "JOB_SUBMITTED" and d["job_id"] == "w0!3":
                out += [execute("w0!3", "0-1")]
        return out
    return script


def test_b42_lazy_billing_of_the_other_hosts_on_heterogeneous_hosts(tmp_path) -> None:
    """B42 (refines B21, B25): on a two-host composed job [d2, c], the host that does not run the
    job's actor (not the lowest id) is not read when the compute part starts: its time since its
    previous reading (the 's' row at the job's start) is billed at its compute power; the first host
    is read then (its delay at idle power)."""
    profiles = {"c": compute(2e6), "d": delay(2), "dc": composed(["d", "c"])}
    r = run(tmp_path, hetero_platform(), profiles, [jb(1, profile="dc", res=2)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1-2")]}))
    assert r.msgs[r.completion("w0!1")[0]]["now"] == 4.0
    # a1 (first host): 2 s at 10 W then 1 s of 2 at load 0.5 (20 W); b0: 4 s at 40 W
    assert float(r.job_row("1")["consumed_energy"]) == pytest.approx(2 * 10 + 2 * 20 + 4 * 40, abs=1e-9)
    assert float(r.csv["consumed_energy"][-1]["energy"]) == pytest.approx(220 + 4 * (10 + 20), abs=1e-9)


def test_b42_a_query_during_the_delay_is_the_other_hosts_last_reading(tmp_path) -> None:
    """B42: the lazily billed time of the other hosts starts at their previous reading: here a QUERY
    during the delay part (t=1) of a three-host job on a non-contiguous allocation whose first
    host is the fast one (load 0.5) and the two others slow (load 1)."""
    profiles = {"c": compute(2e6), "d": delay(2), "dc": composed(["d", "c"])}
    r = run(tmp_path, hetero_platform(), profiles, [jb(1, profile="dc", res=3)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0 2-3"), call(1)], ("REQUESTED_CALL", None): [QUERY]}))
    assert answers(r) == [(1.0, 10 + 10 + 20 + 20)]  # every host idle for 1 s
    # a0: 2 s at 10 W then 2 s at 20 W; b0, b1: 1 s at 20 W (read by the QUERY), then 3 s at 40 W
    assert float(r.job_row("1")["consumed_energy"]) == pytest.approx(60 + 2 * (20 + 120), abs=1e-9)


def test_b23_b25_b30_switches_with_other_durations_and_powers(tmp_path) -> None:
    """B23, B25, B26, B30: a switch-off is one flop at the switch-off virtual pstate (here 4 s at
    5 W), the host then sleeps at the sleep pstate's wattage_per_state value (1 W, not wattage_off
    = 50); a boot is one flop at the switch-on virtual pstate (8 s at 7 W) into the requested
    pstate; wattmin is the sum of the idle wattages of the current pstates (virtual and sleep
    values during transitions); ANSWERs integrate it all."""
    hosts = [host_xml(f"h{i}").replace('<prop id="wattage_off" value="1" />', '<prop id="wattage_off" value="50" />')
             for i in range(3)]
    r = run(tmp_path, platform_xml(hosts), {"p": compute(2e6)}, [jb(1, subtime=30)], _b23_script())
    a = dict(answers(r))
    assert a[2.0] == 2 * (5 + 5 + 10)
    assert a[10.0] == pytest.approx(40 + 2 * 20 + 6 * (1 + 1 + 10))
    # boot of host 1 into pstate 1 at 10: 8 s at 7 W; host 0 asleep; done at 18
    assert a[20.0] == pytest.approx(a[10.0] + 8 * (7 + 1 + 10) + 2 * (8 + 1 + 10))
    rows = [(x["time"], x["event_type"], x["wattmin"]) for x in r.csv["consumed_energy"]]
    assert rows[:4] == [("0.000000", "p", "30.000000"), ("4.000000", "p", "12.000000"),
                        ("10.000000", "p", "12.000000"), ("18.000000", "p", "19.000000")]
    changes = [(x["time"], x["machine_id"], x["new_pstate"]) for x in r.csv["pstate_changes"]]
    assert changes[:5] == [("0", "0-2", "0"), ("0", "0-1", "-2"), ("4", "0-1", "2"), ("10", "1", "-1"), ("18", "1", "1")]
    states = [tuple(x.values()) for x in r.csv["machine_states"]]
    assert states[:4] == [("0", "0", "0", "2", "1", "0"), ("4", "2", "0", "0", "1", "0"),
                          ("10", "1", "1", "0", "1", "0"), ("18", "1", "0", "0", "2", "0")]
    sched = r.csv["schedule"][0]
    assert sched["time_switching_off"] == "8.000000" and sched["time_switching_on"] == "8.000000"
    assert sched["nb_grouped_switches"] == "2" and sched["nb_machine_switches"] == "3"


def _b23_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        ts = [e["type"] for e in msg["events"]]
        if ts == ["SIMULATION_BEGINS"]:
            return [state("0-1", 2), call(2), call(10), call(20)]
        if "REQUESTED_CALL" in ts and msg["now"] == 10.0:
            return [QUERY, state("1", 1)]
        if "REQUESTED_CALL" in ts:
            return [QUERY]
        if "JOB_SUBMITTED" in ts:
            return [execute("w0!1", "1")]
        return []
    return script


# ============================================================================ output files

def test_b28_b29_b32_outputs_of_a_small_run(tmp_path) -> None:
    """B28: jobs.csv in completion order with the metadata wrapped in quotes; B29: consumed_joules =
    E(last completion) - E(first submission), makespan = last completion, time_<state> accumulated
    only at changes (the open interval after each host's last change is not counted), DVFS counted
    in nb_grouped_switches / nb_machine_switches; B32: one machine-state row per start, end and
    request applied, none initially, a pure DVFS request giving one row with counts unchanged."""
    profiles = {"long": compute(8e6), "short": compute(2e6)}
    jobs = [jb(1, subtime=1, profile="long"), jb(2, subtime=1, profile="short")]
    r = run(tmp_path, toy_platform(3), profiles, jobs,
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), ("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": "a b;c"}),
                                                   execute("w0!2", "2"), state("1", 1)]}))
    assert [x["job_id"] for x in r.csv["jobs"]] == ["2", "1"]
    assert r.job_row("1")["metadata"] == '"a b;c"' and r.job_row("2")["metadata"] == '""'
    sched = r.csv["schedule"][0]
    # 1 -> 2: hosts 0, 2 computing (30 W), host 1 at pstate 1 idle (8 W); 2 -> 5: host 0 only
    assert float(sched["consumed_joules"]) == pytest.approx(1 * (30 + 30 + 8) + 3 * (30 + 10 + 8))
    assert sched["makespan"] == "5.000000"
    assert sched["time_idle"] == "2.000000"  # hosts 0 and 2 idle from 0 to 1 (host 1 never changes, 2's end idle not counted)
    assert sched["time_computing"] == "5.000000"  # 4 s of job 1 + 1 s of job 2
    assert sched["nb_grouped_switches"] == "1" and sched["nb_machine_switches"] == "1"
    assert sched["nb_jobs_killed"] == "0" and sched["nb_computing_machines"] == "3"
    assert list(sched) == sorted(sched)
    states = [tuple(x.values()) for x in r.csv["machine_states"]]
    assert states == [("1", "0", "0", "0", "2", "1"), ("1", "0", "0", "0", "1", "2"), ("1", "0", "0", "0", "1", "2"),
                      ("2", "0", "0", "0", "2", "1"), ("5", "0", "0", "0", "3", "0")]
    kinds = [(x["time"], x["event_type"]) for x in r.csv["consumed_energy"]]
    assert kinds == [("1.000000", "s"), ("1.000000", "s"), ("1.000000", "p"), ("1.000000", "p"),
                     ("2.000000", "e"), ("5.000000", "e")]
    epower = [x["epower"] for x in r.csv["consumed_energy"]]
    assert epower[0] == "30.000000" and epower[1:4] == ["NA"] * 3  # from t=0, E=0; NA at the same time
    assert epower[4] == "68.000000"


def test_b33_times_of_two_csvs_use_percent_g(tmp_path) -> None:
    """B33: out_pstate_changes.csv and out_machine_states.csv print times with %g (6 significant
    digits, exponent notation from 1e6 s); the other CSVs use 6 decimals."""
    r = run(tmp_path, toy_platform(1), {"p": compute(2e6)}, [jb(1, subtime=1234567.25), jb(2, subtime=123.456789)],
            on_event({("JOB_SUBMITTED", "w0!2"): [execute("w0!2", "0")],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), state("0", 1)]}))
    assert [x["time"] for x in r.csv["machine_states"]] == ["123.457", "124.457", "1.23457e+06", "1.23457e+06",
                                                            "1.23457e+06"]
    assert [x["time"] for x in r.csv["pstate_changes"]][1:] == ["1.23457e+06", "1.23457e+06"]
    assert r.csv["consumed_energy"][0]["time"] == "123.456789"
    assert r.job_row("1")["starting_time"] == "1234567.250000"


def test_b31_initial_rows_for_each_initial_pstate_then_minus_one_and_minus_two(tmp_path) -> None:
    """B31: one initial row per initial pstate with its host set; per request a row at request time
    with -1 (computation target) or -2 (sleep target) and one with the target at completion; virtual
    pstates never appear."""
    hosts = [host_xml("h0", pstate=1), host_xml("h1"), host_xml("h2", pstate=1), host_xml("h3")]
    r = run(tmp_path, platform_xml(hosts), {"p": compute(2e6)}, [jb(1, subtime=20)],
            on_event({("SIMULATION_BEGINS", None): [state("0 2-3", 2)],
                      ("RESOURCE_STATE_CHANGED", None): [state("2-3", 0)],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "1")]}))
    rows = [(x["time"], x["machine_id"], x["new_pstate"]) for x in r.csv["pstate_changes"]]
    assert sorted(rows[:2]) == [("0", "0 2", "1"), ("0", "1 3", "0")]
    assert rows[2:] == [("0", "0 2-3", "-2"), ("4", "0 2-3", "2"), ("4", "2-3", "-1"), ("12", "2-3", "0")]
    # the initial pstates: host 0 and 2 idle at 8 W, hosts 1 and 3 at 10 W
    assert r.csv["consumed_energy"][0]["wattmin"] == "36.000000"


# ============================================================================ B40 - B45

def test_b40_one_host_requests_ending_together_are_all_applied_before_their_rows(tmp_path) -> None:
    """B40: several one-host requests of one reply complete together: one RESOURCE_STATE_CHANGED,
    'p' row, pstate row and machine-state row each, all written after every host that completes then
    is in its new state (equal rows, wattmin of the final states); the rows written when the
    requests are applied change one request at a time."""
    r = run(tmp_path, toy_platform(5), {"p": compute(2e6)}, [jb(1, subtime=50)], _b40_script())
    s = r.summary()
    assert (4.0, ["RESOURCE_STATE_CHANGED 3>2", "RESOURCE_STATE_CHANGED 1>2", "RESOURCE_STATE_CHANGED 4>2"]) in s
    assert (18.0, ["RESOURCE_STATE_CHANGED 1>1", "RESOURCE_STATE_CHANGED 3-4>0"]) in s
    states = [tuple(x.values()) for x in r.csv["machine_states"]]
    assert states[:6] == [("0", "0", "0", "1", "4", "0"), ("0", "0", "0", "2", "3", "0"), ("0", "0", "0", "3", "2", "0"),
                          ("4", "3", "0", "0", "2", "0"), ("4", "3", "0", "0", "2", "0"), ("4", "3", "0", "0", "2", "0")]
    assert states[8:10] == [("18", "0", "0", "0", "5", "0")] * 2
    p = [(x["time"], x["wattmin"]) for x in r.csv["consumed_energy"] if x["event_type"] == "p"]
    assert p[:6] == [("0.000000", "50.000000"), ("0.000000", "45.000000"), ("0.000000", "40.000000"),
                     ("4.000000", "23.000000"), ("4.000000", "23.000000"), ("4.000000", "23.000000")]
    # at 18: host 1 idle at pstate 1 (8 W), hosts 3-4 at pstate 0, hosts 0 and 2 at 10 W
    assert p[-2:] == [("18.000000", "48.000000")] * 2
    changes = [(x["time"], x["machine_id"], x["new_pstate"]) for x in r.csv["pstate_changes"]]
    assert changes[4:7] == [("4", "3", "2"), ("4", "1", "2"), ("4", "4", "2")]


def _b40_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        ts = [e["type"] for e in msg["events"]]
        if ts == ["SIMULATION_BEGINS"]:
            return [state("3", 2), state("1", 2), state("4", 2), call(10)]
        if "REQUESTED_CALL" in ts:
            return [state("1", 1), state("3-4", 0)]
        if "JOB_SUBMITTED" in ts:
            return [execute("w0!1", "0")]
        return []
    return script


def test_b41_the_end_comes_right_after_the_kill_of_the_last_job(tmp_path) -> None:
    """B41 (refines B12): the kill of the last running job (inside a composed job's compute part,
    on two hosts) is followed by SIMULATION_ENDS at the kill's time; the killed parts leave no event."""
    profiles = {"c": compute(20e6), "d": delay(3), "cd": composed(["d", "c"], repeat=2)}
    r = run(tmp_path, toy_platform(2), profiles, [jb(1, profile="cd", res=2)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0-1"), call(4.5)],
                      ("REQUESTED_CALL", None): [kill("w0!1"), QUERY]}))
    assert r.summary()[-2:] == [(4.5, ["JOB_COMPLETED w0!1", "JOB_KILLED", "ANSWER"]), (4.5, ["SIMULATION_ENDS"])]
    assert r.completion("w0!1")[1]["data"]["return_code"] == -2
    assert r.sim.now_s == 4.5


def test_b45_a_model_whose_sleep_pstate_sits_between_computation_pstates(tmp_path) -> None:
    """B45 (B23, B25, B29-B33 with other numbers): computation pstates 0 and 4, standby pstate 1,
    switch-off / switch-on virtual pstates 2 and 3 (sleep_pstates="1:2:3"); a boot into pstate 4."""
    speed, watts = "2Mf, 1e-9Mf, 0.5f, 0.25f, 1Mf", "10:30, 2:2, 6:6, 9:9, 8:18"
    hosts = [host_xml(f"n{i}", speed, watts, "1:2:3") for i in range(3)]
    r = run(tmp_path, platform_xml(hosts), {"p": compute(2e6)}, [jb(1, subtime=3), jb(2, subtime=3, res=2)],
            _b45_script())
    s = r.summary()
    assert (2.0, ["RESOURCE_STATE_CHANGED 0-1>1"]) in s  # 1 flop at 0.5 f
    assert (9.0, ["RESOURCE_STATE_CHANGED 0-1>4"]) in s  # asked at 5: 1 flop at 0.25 f
    a = dict(answers(r))
    # 0-2: 2 hosts at 6 W, host 2 idle 10 W; 2-3: 2 x 2 W + 10; 3-4: job 1 on host 2 (30 W); 4-5: idle
    assert a[5.0] == pytest.approx(2 * 22 + 1 * 14 + 1 * 34 + 1 * 14)
    row = r.job_row("2")
    # job 2 on hosts 0-1 at pstate 4 (1 Mf): 2 s at 18 W each
    assert (row["starting_time"], row["execution_time"], row["consumed_energy"]) == ("9.000000", "2.000000", "72.000000")
    assert [x["new_pstate"] for x in r.csv["pstate_changes"]] == ["0", "-2", "1", "-1", "4"]
    sched = r.csv["schedule"][0]
    assert sched["time_switching_off"] == "4.000000" and sched["time_switching_on"] == "8.000000"
    assert sched["time_sleeping"] == "6.000000"


def _b45_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        out = []
        for e in msg["events"]:
            d = e["data"]
            if e["type"] == "SIMULATION_BEGINS":
                out += [state("0-1", 1), call(5)]
            elif e["type"] == "JOB_SUBMITTED" and d["job_id"] == "w0!1":
                out += [execute("w0!1", "2")]
            elif e["type"] == "REQUESTED_CALL":
                out += [QUERY, state("0-1", 4)]
            elif e["type"] == "RESOURCE_STATE_CHANGED" and d["state"] == "4":
                out += [execute("w0!2", "0-1")]
        return out
    return script


def test_b23_one_request_on_hosts_of_two_models_completes_with_its_last_host(tmp_path) -> None:
    """B23, B25, B30-B32: one switch-off request on a toy host (4 s at 5 W) and a host of another
    model (10 s at 6 W): each host sleeps once its own transition ends (1 W / 2 W), and the request
    gives one RESOURCE_STATE_CHANGED, one 'p' row, one pstate row and one machine-state row, when
    its last host is done."""
    other = host_xml("h1", "1Mf, 0.5Mf, 1e-9Mf, 0.1f, 0.05f", "20:40, 15:25, 2:2, 6:6, 9:9", "2:3:4")
    r = run(tmp_path, platform_xml([host_xml("h0"), other]), {"p": compute(2e6)}, [jb(1, subtime=40)],
            _b23_two_models_script())
    s = r.summary()
    assert (10.0, ["RESOURCE_STATE_CHANGED 0-1>2"]) in s
    assert (60.0, ["RESOURCE_STATE_CHANGED 0-1>0"]) in s  # booted at 40: 8 s and 20 s
    assert dict(answers(r))[5.0] == 4 * 5 + 1 * 1 + 5 * 6
    p = [(x["time"], x["wattmin"]) for x in r.csv["consumed_energy"] if x["event_type"] == "p"]
    assert p == [("0.000000", "30.000000"), ("10.000000", "3.000000"), ("40.000000", "3.000000"),
                 ("60.000000", "30.000000")]
    assert [tuple(x.values()) for x in r.csv["machine_states"]][:2] == [("0", "0", "0", "2", "0", "0"),
                                                                        ("10", "2", "0", "0", "0", "0")]
    e = {x["time"]: float(x["energy"]) for x in r.csv["consumed_energy"] if x["event_type"] == "p"}
    assert e["10.000000"] == 4 * 5 + 6 * 1 + 10 * 6
    # boot: h0 8 s at 7 W then idle 10 W; h1 20 s at 9 W
    assert e["60.000000"] == pytest.approx(e["40.000000"] + 8 * 7 + 12 * 10 + 20 * 9)
    assert r.csv["schedule"][0]["time_switching_off"] == "14.000000"


def _b23_two_models_script() -> Script:
    def script(msg: dict, r: Run) -> list:
        out = []
        for e in msg["events"]:
            if e["type"] == "SIMULATION_BEGINS":
                out += [state("0-1", 2), call(5)]
            elif e["type"] == "REQUESTED_CALL":
                out += [QUERY]
            elif e["type"] == "JOB_SUBMITTED":
                out += [state("0-1", 0)]
            elif e["type"] == "RESOURCE_STATE_CHANGED" and e["data"]["state"] == "0":
                out += [execute("w0!1", "0")]
        return out
    return script


def test_b24_a_pstate_set_after_execute_job_in_the_same_reply_applies_to_the_whole_job(tmp_path) -> None:
    """B24: DVFS sent after EXECUTE_JOB in the same reply: the whole job runs at the new pstate (here
    the fast host of a two-host job slowed to the slow host's pace: load 1 on both)."""
    r = run(tmp_path, hetero_platform(), {"c": compute(4e6)}, [jb(1, profile="c", res=2, subtime=0.5)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0 2"), state("0", 1)]}))
    assert r.msgs[r.completion("w0!1")[0]]["now"] == 4.5
    assert float(r.job_row("1")["consumed_energy"]) == pytest.approx(4 * (18 + 40), abs=1e-9)
    rows = [(x["event_type"], x["wattmin"]) for x in r.csv["consumed_energy"]]
    assert rows == [("s", "60.000000"), ("p", "60.000000"), ("p", "58.000000"), ("e", "58.000000")]


@pytest.mark.parametrize("flops, first, second, walltime, end, final", [
    (4e6, 0, 1, 3.0, 3.0, "COMPLETED_SUCCESSFULLY"),  # slowed down: ends exactly at the walltime
    (4e6, 0, 1, 2.5, 2.5, "COMPLETED_WALLTIME_REACHED"),  # slowed down past its walltime
    (8e6, 1, 0, 3.5, 3.5, "COMPLETED_WALLTIME_REACHED"),  # sped up, still past it
    (8e6, 1, 0, 4.5, 4.5, "COMPLETED_SUCCESSFULLY"),  # sped up: exactly at it
])
def test_b14_b24_walltime_of_a_task_whose_pace_changes(tmp_path, flops, first, second, walltime, end, final) -> None:
    """B14, B24: after a DVFS change at t=1 the task ends at 1 + remaining / new speed; it still
    succeeds when that is exactly start + walltime and is cut at start + walltime otherwise."""
    r = run(tmp_path, toy_platform(1), {"c": compute(flops)}, [jb(1, profile="c", walltime=walltime)],
            on_event({("SIMULATION_BEGINS", None): [state("0", first)],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0"), call(1)],
                      ("REQUESTED_CALL", None): [state("0", second)]}))
    i, ev = r.completion("w0!1")
    assert (r.msgs[i]["now"], ev["data"]["job_state"]) == (end, final)


def test_b34_b35_b36_a_cluster_platform_runs_as_its_flat_twin(tmp_path) -> None:
    """B34-B36: hosts of <cluster>s (radical list, nested zone with props, zero-cost links) get
    ids by byte order of their names over all clusters, their cluster's props in properties and
    zone_properties (enclosing zones' props, inner overriding outer); everything else (messages,
    energies, CSVs) is identical to a run on the same hosts as <host>s of one flat zone."""
    props = (f'<prop id="wattage_per_state" value="{TOY_WATTS}"/><prop id="sleep_pstates" value="{TOY_SLEEP}"/>'
             '<prop id="wattage_off" value="1"/>')
    slow_props = f'<prop id="wattage_per_state" value="{SLOW_WATTS}"/>'
    cluster = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               '<platform version="4.1">\n<zone id="AS0" routing="Full"><prop id="site" value="x"/>'
               '<prop id="owner" value="me"/>'
               f'<cluster id="toy" prefix="n-" suffix=".a" radical="0,2,10-11" speed="{TOY_SPEED}" bw="1e300Bps" lat="0s">{props}</cluster>'
               '<zone id="inner" routing="Full"><prop id="site" value="y"/>'
               f'<cluster id="slow" prefix="n-" suffix="" radical="1,10" speed="{SLOW_SPEED}" bw="1e300Bps" lat="0s">{slow_props}</cluster>'
               '</zone>'
               '<zone id="m" routing="Vivaldi"><host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:100"/></host></zone>'
               '<link id="l" bandwidth="1e300Bps" latency="0s"/>'
               '<zoneRoute src="inner" dst="m" gw_src="n-1" gw_dst="master_host"><link_ctn id="l"/></zoneRoute>'
               '</zone>\n</platform>\n')
    flat = platform_xml([host_xml(f"n-{v}.a", props=None) for v in (0, 2, 10, 11)]
                        + [host_xml(f"n-{v}", SLOW_SPEED, SLOW_WATTS, None) for v in (1, 10)])
    profiles = {"c": compute(4e6), "d": delay(1.5), "dc": composed(["d", "c"])}
    jobs = [jb(1, profile="dc", res=3), jb(2, subtime=1, profile="c", res=2)]

    def script() -> Script:
        return on_event({("SIMULATION_BEGINS", None): [state("2", 1), state("4", 2), call(5)],
                         ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0-1 3")],
                         ("JOB_SUBMITTED", "w0!2"): [execute("w0!2", "2 5")],
                         ("REQUESTED_CALL", None): [QUERY, state("4", 0), state("0-1", 1)]})

    (tmp_path / "c").mkdir()
    (tmp_path / "f").mkdir()
    rc = run(tmp_path / "c", cluster, profiles, jobs, script())
    rf = run(tmp_path / "f", flat, profiles, jobs, script())
    names = [c["name"] for c in rc.msgs[0]["events"][0]["data"]["compute_resources"]]
    assert names == ["n-0.a", "n-1", "n-10", "n-10.a", "n-11.a", "n-2.a"]
    res = {c["name"]: c for c in rc.msgs[0]["events"][0]["data"]["compute_resources"]}
    assert res["n-10"]["properties"] == {"role": "", "wattage_per_state": SLOW_WATTS}
    assert res["n-10"]["zone_properties"] == {"site": "y", "owner": "me", "wattage_per_state": SLOW_WATTS}
    assert res["n-2.a"]["zone_properties"]["site"] == "x"
    for a, b in zip(rc.msgs[1:], rf.msgs[1:]):
        assert a == b
    assert len(rc.msgs) == len(rf.msgs)
    assert rc.csv == rf.csv
    assert len(answers(rc)) == 1 and rc.completion("w0!2")[1]["data"]["alloc"] == "2 5"


def test_b44_a_registration_at_a_requested_call_with_an_earlier_subtime(tmp_path) -> None:
    """B44: REGISTER_PROFILE + REGISTER_JOB (id without the workload prefix, an extra field, a
    subtime earlier than the registration) + EXECUTE_JOB in one reply at a REQUESTED_CALL: the job
    runs at once, its JOB_SUBMITTED comes among the results in reply order with the full id, the
    CSV row has the bare id, the dynamic workload, the registered profile and waiting_time counted
    from its subtime; nb_jobs counts it."""
    job = {"id": "late", "subtime": 1.25, "res": 2, "profile": "dynp", "note": "x"}
    r = run(tmp_path, hetero_platform(), {"p": compute(2e6)}, [jb(1)],
            on_event({("SIMULATION_BEGINS", None): [call(7.5)],
                      ("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "3")],
                      ("REQUESTED_CALL", None): [
                          ("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "dynp", "profile": compute(3e6)}),
                          QUERY, ("REGISTER_JOB", {"job_id": "dyn!late", "job": job}), execute("dyn!late", "1-2"),
                          ("NOTIFY", {"type": "registration_finished"})]}),
            dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    i = r.find(lambda e: e["type"] == "REQUESTED_CALL")
    assert r.summary()[i + 1] == (7.5, ["ANSWER", "JOB_SUBMITTED dyn!late"])
    assert r.msgs[i + 1]["events"][1]["data"]["job"] == {**job, "id": "dyn!late"}
    assert r.msgs[r.completion("dyn!late")[0]]["now"] == 10.5  # 3e6 flops at 2 Mf and 1 Mf hosts: 3 s
    row = r.job_row("late")
    assert (row["workload_name"], row["profile"], row["submission_time"], row["waiting_time"], row["requested_time"]) == (
        "dyn", "dynp", "1.250000", "6.250000", "-1.000000")
    assert r.csv["schedule"][0]["nb_jobs"] == "2"
    assert r.summary()[-1] == (10.5, ["SIMULATION_ENDS"])
