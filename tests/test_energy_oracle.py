"""Every energy the embedded simulator reports equals an independent oracle of Batsim's billing.

Random conversations (hypothesis) drive :class:`Simulation` through ``start()``/``step()``: jobs with
nested composed profiles (sequences inside repeats inside sequences), ``parallel_homogeneous``,
``parallel_homogeneous_total``, ``parallel`` (per-host flops) and ``delay`` parts, DVFS (also under
running jobs), switch-offs and boots (also mixed with DVFS in one request), kills, walltimes and
energy queries. Every ANSWER, every ``out_consumed_energy.csv`` energy and every job's
``consumed_energy`` must equal the oracle below.

The oracle is written from the README of the recordings (``tests/fixtures/batsim-reference``), not
from the engine: it keeps one energy account per host and bills it only when the host is *read*,
the time since its previous reading at the power the host has at that moment (B42). Readings: every
host at each CSV row and QUERY; the hosts of a parallel task when it ends (also cut by the walltime
or killed); the first host of the allocation (where the job's actor runs) when a part starts after
another; a switching host when its one-flop transition ends (B23). Power (B20, B21, B23, B25): idle
power of the pstate for an idle host or a host in a delay part, ``idle + (full - idle) x load`` in a
compute part, load = (this host's time) / (the slowest host's time), the pstate's constant value
during a switch and asleep. Times: B14, B19, B22, B23, B24; B5 (a reply acts at its ``now``).

Two rules are not in the README; the oracle follows the engine's decisions, taken from Batsim's and
SimGrid's source (see ``Simulation._pop_batch``). (1) At one time: the parallel tasks that end are
read first; then the jobs that end write their rows, in start order, before the jobs that go on
start their next part (SimGrid knows the load of a new task only after the round of actors that
started it, and those rows are written by the jobs' actors in that round); the rows of switch
requests completing then come last (Batsim's server), after all their switches are applied (B40).
(2) Nothing else happens within the 5e-7 s between an event and a reply whose ``now`` was rounded
up (B5): the inputs keep compute parts from ending within a microsecond of another event.
"""

from __future__ import annotations

import json
import math
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE

PLATFORM = REFERENCE / "dvfs-energy" / "platform.xml"  # 4 Taurus hosts: 13 DVFS pstates, sleep 13 via 14/15
SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, print_blob=True)
ABS_TOL_J = 2e-5  # values are printed with 6 decimals


# ----------------------------------------------------------------------------------------- platform

_UNITS = {"f": 1.0, "kf": 1e3, "Mf": 1e6, "Gf": 1e9}


def _flops(text: str) -> float:
    text = text.strip()
    for unit in ("Gf", "Mf", "kf", "f"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * _UNITS[unit]
    return float(text)


@dataclass
class HostModel:
    speeds: list[float]
    idle_w: list[float]
    full_w: list[float]
    sleep: int
    switch_off: int
    switch_on: int


def read_platform(path: Path) -> tuple[int, HostModel]:
    """Number of compute hosts and their (common) model, read from the XML (B1, B3)."""
    hosts = [h for h in ET.parse(path).iter("host") if h.get("id") != "master_host"]
    props = {p.get("id"): p.get("value") for p in hosts[0].iter("prop")}
    watts = [pair.split(":") for pair in props["wattage_per_state"].split(",")]
    sleep, off, on = (int(x) for x in props["sleep_pstates"].split(":"))
    model = HostModel([_flops(s) for s in hosts[0].get("speed").split(",")],
                      [float(w[0]) for w in watts], [float(w[-1]) for w in watts], sleep, off, on)
    return len(hosts), model


# ------------------------------------------------------------------------------------------- oracle

def flatten(name: str, profiles: dict) -> list[tuple[str, object]]:
    """Parts of a profile in execution order: ('delay', s) or ('compute', spec) (B22)."""
    desc = profiles[name]
    if desc["type"] == "composed":
        return [part for _ in range(desc.get("repeat", 1)) for sub in desc["seq"] for part in flatten(sub, profiles)]
    if desc["type"] == "delay":
        return [("delay", float(desc["delay"]))]
    return [("compute", desc)]


def host_flops(desc: dict, n: int) -> list[float]:
    """B19: flops of each of the ``n`` hosts."""
    if desc["type"] == "parallel_homogeneous":
        return [float(desc["cpu"])] * n
    if desc["type"] == "parallel_homogeneous_total":
        return [float(desc["cpu"]) / n] * n
    return [float(c) for c in desc["cpu"]]


@dataclass
class Run:
    """A running job as the oracle sees it."""

    jid: str
    hosts: list[int]
    parts: list[tuple[str, object]]
    seq: int
    wall_end: float
    start_energy: float
    index: int = 0
    part_start: float = 0.0
    done: float = 0.0  # fraction of the current compute part done at ``updated``
    updated: float = 0.0
    flops: list[float] = field(default_factory=list)

    @property
    def computing(self) -> bool:
        return self.parts[self.index][0] == "compute"


@dataclass
class Request:
    resources: str
    hosts: list[int]
    target: int
    end: float
    seq: int


class Oracle:
    def __init__(self, nb_hosts: int, model: HostModel, profiles: dict, jobs: dict[str, dict]) -> None:
        self.m = model
        self.profiles = profiles
        self.jobs = jobs
        self.now = 0.0
        self.pstate = [0] * nb_hosts
        self.state = ["idle"] * nb_hosts  # idle | busy | off (switching off) | on (switching on) | asleep
        self.energy = [0.0] * nb_hosts
        self.read_at = [0.0] * nb_hosts
        self.job_on = [None] * nb_hosts
        self.running: dict[str, Run] = {}
        self.requests: list[Request] = []
        self.seq = 0
        self.rows: list[tuple[float, float, str]] = []
        self.answers: list[float] = []
        self.job_energy: dict[str, float] = {}
        self.job_end: dict[str, tuple[float, str]] = {}

    # -- power and readings
    def longest(self, run: Run) -> float:
        return max(f / self.m.speeds[self.pstate[h]] for f, h in zip(run.flops, run.hosts))

    def power(self, h: int) -> float:
        p = self.pstate[h]
        run = self.job_on[h]
        if run is None or not run.computing:
            return self.m.idle_w[p]  # idle, in a delay, switching or asleep (constant pstates)
        load = run.flops[run.hosts.index(h)] / self.m.speeds[p] / self.longest(run)
        return self.m.idle_w[p] + (self.m.full_w[p] - self.m.idle_w[p]) * load

    def read(self, h: int) -> None:
        self.energy[h] += self.power(h) * (self.now - self.read_at[h])
        self.read_at[h] = self.now

    def row(self, kind: str) -> None:
        for h in range(len(self.energy)):
            self.read(h)
        self.rows.append((self.now, sum(self.energy), kind))

    # -- time
    def part_end(self, run: Run) -> tuple[float, bool]:
        """End of the current part and whether the walltime cuts it (B14)."""
        kind, value = run.parts[run.index]
        if kind == "delay":
            end = run.part_start + value
            return (run.wall_end, True) if end >= run.wall_end else (end, False)
        end = run.updated + (1.0 - run.done) * self.longest(run)
        return (run.wall_end, True) if end > run.wall_end else (end, False)

    def next_time(self) -> float:
        times = [self.part_end(r)[0] for r in self.running.values()] + [q.end for q in self.requests]
        return min(times, default=math.inf)

    def advance(self, limit: float) -> None:
        """Everything that happens up to ``limit``, one time after the other."""
        while (t := self.next_time()) <= limit:
            self.now = max(self.now, t)
            ending = sorted((r for r in self.running.values() if self.part_end(r)[0] == t), key=lambda r: r.seq)
            cut = {r.jid: self.part_end(r)[1] for r in ending}
            for run in ending:  # a parallel task ends: its hosts are read
                if run.computing:
                    for h in run.hosts:
                        self.read(h)
            going_on = []
            for run in ending:
                if cut[run.jid]:
                    self.end_job(run, "COMPLETED_WALLTIME_REACHED")
                elif run.index + 1 == len(run.parts):
                    self.end_job(run, "COMPLETED_SUCCESSFULLY")
                else:
                    going_on.append(run)
            for run in going_on:  # the next part starts: the first host is read
                self.read(run.hosts[0])
                run.index += 1
                self.start_part(run)
            done = sorted((q for q in self.requests if q.end == t), key=lambda q: q.seq)
            for q in done:
                for h in q.hosts:
                    self.read(h)
                    self.pstate[h] = q.target
                    self.state[h] = "asleep" if q.target == self.m.sleep else "idle"
            self.requests = [q for q in self.requests if q.end != t]
            for q in done:
                self.row("p")

    def start_part(self, run: Run) -> None:
        run.part_start = run.updated = self.now
        run.done = 0.0
        kind, value = run.parts[run.index]
        run.flops = host_flops(value, len(run.hosts)) if kind == "compute" else []

    def end_job(self, run: Run, state: str) -> None:
        self.row("e")
        self.job_energy[run.jid] = sum(self.energy[h] for h in run.hosts) - run.start_energy
        self.job_end[run.jid] = (self.now, state)
        for h in run.hosts:
            self.job_on[h] = None
            self.state[h] = "idle"
        del self.running[run.jid]

    # -- the scheduler's events, at the reply's time (B5)
    def apply(self, now: float, events: list[dict]) -> None:
        self.advance(now)
        self.now = max(self.now, now)
        for ev in events:
            getattr(self, "on_" + ev["type"].lower())(ev["data"])

    def on_execute_job(self, data: dict) -> None:
        jid, hosts = data["job_id"], parse_hosts(data["alloc"])
        self.row("s")
        job = self.jobs[jid]
        wall = job.get("walltime", -1)
        self.seq += 1
        run = Run(jid, hosts, flatten(job["profile"], self.profiles), self.seq,
                  self.now + wall if wall > 0 else math.inf, sum(self.energy[h] for h in hosts))
        self.running[jid] = run
        for h in hosts:
            self.job_on[h] = run
            self.state[h] = "busy"
        self.start_part(run)

    def on_kill_job(self, data: dict) -> None:
        for jid in data["job_ids"]:
            run = self.running.get(jid)
            if run is None:
                continue  # it ended at this very time: nothing to kill
            for h in run.hosts:
                self.read(h)
            self.end_job(run, "COMPLETED_KILLED")

    def on_query(self, data: dict) -> None:
        for h in range(len(self.energy)):
            self.read(h)
        self.answers.append(sum(self.energy))

    def on_call_me_later(self, data: dict) -> None:
        pass

    def on_set_resource_state(self, data: dict) -> None:
        hosts, target = parse_hosts(data["resources"]), int(data["state"])
        self.row("p")
        self.seq += 1
        if target == self.m.sleep:
            virtual, moving = self.m.switch_off, hosts
        else:
            virtual, moving = self.m.switch_on, [h for h in hosts if self.state[h] == "asleep"]
            dvfs = [h for h in hosts if self.state[h] != "asleep"]
            runs = {id(self.job_on[h]): self.job_on[h] for h in dvfs if self.job_on[h] is not None}
            for run in runs.values():  # B24: the work done is kept, the rest runs at the new speed
                if run.computing:
                    run.done += (self.now - run.updated) / self.longest(run)
                    run.updated = self.now
            for h in dvfs:
                self.pstate[h] = target
        for h in moving:
            self.pstate[h] = virtual
            self.state[h] = "off" if target == self.m.sleep else "on"
        if moving:
            end = self.now + 1.0 / self.m.speeds[virtual]
            self.requests.append(Request(data["resources"], moving, target, end, self.seq))
        else:
            self.row("p")


def parse_hosts(text: str) -> list[int]:
    hosts: list[int] = []
    for part in text.split():
        a, _, b = part.partition("-")
        hosts.extend(range(int(a), int(b or a) + 1))
    return sorted(hosts)


def format_hosts(hosts: list[int]) -> str:
    hosts = sorted(hosts)
    parts, start = [], hosts[0]
    for prev, cur in zip(hosts, hosts[1:] + [None]):
        if cur != prev + 1:
            parts.append(f"{start}-{prev}" if prev > start else str(start))
            start = cur
    return " ".join(parts)


# ------------------------------------------------------------------------------------------ inputs

def part_strategy(res: int):
    """A profile tree for a job on ``res`` hosts (compute flops made unique later)."""
    cpu = st.integers(2, 25).map(lambda k: k * 1e8)
    leaf = st.one_of(
        # few delay values: parts of different jobs often end together (the order at one time, B42)
        st.sampled_from([3, 5, 5, 10, 10, 15]).map(lambda d: {"type": "delay", "delay": d}),
        cpu.map(lambda c: {"type": "parallel_homogeneous", "cpu": c, "com": 0}),
        cpu.map(lambda c: {"type": "parallel_homogeneous_total", "cpu": c * res, "com": 0}),
        st.lists(cpu, min_size=res, max_size=res).map(
            lambda cs: {"type": "parallel", "cpu": cs, "com": [0] * (res * res)}),
    )
    return st.recursive(
        leaf,
        lambda children: st.tuples(st.lists(children, min_size=1, max_size=3), st.integers(1, 3)).map(
            lambda sr: {"type": "composed", "seq": sr[0], "repeat": sr[1]}),
        max_leaves=6,
    )


def delays_then_compute(res: int):
    """Delay parts then a compute part: with jobs started together, a compute part often starts
    when another job ends (B42 at one time)."""
    delay = st.sampled_from([5, 10]).map(lambda d: {"type": "delay", "delay": d})
    compute = st.integers(2, 25).map(lambda k: {"type": "parallel_homogeneous", "cpu": k * 1e8, "com": 0})
    return st.tuples(st.lists(delay, min_size=1, max_size=2), compute).map(
        lambda dc: {"type": "composed", "seq": [*dc[0], dc[1]], "repeat": 1})


job_strategy = st.sampled_from([1, 1, 2, 2, 3, 4]).flatmap(lambda res: st.fixed_dictionaries({
    "res": st.just(res),
    "subtime": st.sampled_from([0, 0, 0, 7, 30]),
    "walltime": st.one_of(st.none(), st.integers(5, 150)),
    "tree": st.one_of(part_strategy(res), delays_then_compute(res),
                      st.sampled_from([5, 10]).map(lambda d: {"type": "delay", "delay": d})),
}))


def build_workload(specs: list[dict]) -> dict:
    """The workload JSON. Every compute leaf gets its own flops (up to 1e8 more, spread by the golden
    ratio): compute parts never end together or within a microsecond of another event by chance (a
    decision would then land in the 5e-7 s window of B5, where real Batsim goes on with the
    simulation while the scheduler's reply waits for its timestamp); delay parts (whole seconds) do."""
    profiles: dict[str, dict] = {}
    golden = (math.sqrt(5) - 1) / 2
    counter = iter(range(1, 10**6))

    def unique(cpu: float) -> float:
        return cpu + 1e8 * ((next(counter) * golden) % 1.0)

    def register(node: dict, name: str) -> str:
        if node["type"] == "composed":
            seq = [register(child, f"{name}.{i}") for i, child in enumerate(node["seq"])]
            profiles[name] = {"type": "composed", "repeat": node["repeat"], "seq": seq}
        elif node["type"] == "delay":
            profiles[name] = dict(node)
        else:
            desc = dict(node)
            desc["cpu"] = [unique(c) for c in desc["cpu"]] if isinstance(desc["cpu"], list) else unique(desc["cpu"])
            profiles[name] = desc
        return name

    jobs = []
    for i, spec in enumerate(specs, start=1):
        job = {"id": i, "subtime": spec["subtime"], "res": spec["res"], "profile": register(spec["tree"], f"j{i}")}
        if spec["walltime"] is not None:
            job["walltime"] = spec["walltime"]
        jobs.append(job)
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


# ------------------------------------------------------------------------------------ the scheduler

class Scheduler:
    """Random but valid replies (drawn from hypothesis), then a finishing FCFS phase."""

    def __init__(self, data, nb_hosts: int, model: HostModel, budget: int) -> None:
        self.data = data
        self.model = model
        self.hosts = ["idle"] * nb_hosts  # idle | busy | switching | asleep, as the scheduler knows them
        self.waiting: list[tuple[str, int]] = []
        self.running: dict[str, list[int]] = {}
        self.pending: dict[str, list[tuple[list[int], str]]] = {}
        self.killed: set[str] = set()
        self.budget = budget

    def receive(self, events: list[dict]) -> None:
        for ev in events:
            d = ev["data"]
            if ev["type"] == "JOB_SUBMITTED":
                self.waiting.append((d["job_id"], d["job"]["res"]))
            elif ev["type"] == "JOB_COMPLETED":
                for h in self.running.pop(d["job_id"]):
                    self.hosts[h] = "idle"
            elif ev["type"] == "RESOURCE_STATE_CHANGED" and self.pending.get(d["resources"]):
                hosts, new = self.pending[d["resources"]].pop(0)
                for h in hosts:
                    self.hosts[h] = new

    def idle(self) -> list[int]:
        return [h for h, s in enumerate(self.hosts) if s == "idle"]

    def execute(self, out: list, jid: str, res: int, hosts: list[int]) -> None:
        self.waiting.remove((jid, res))
        self.running[jid] = hosts
        for h in hosts:
            self.hosts[h] = "busy"
        out.append(("EXECUTE_JOB", {"job_id": jid, "alloc": format_hosts(hosts)}))

    def request(self, out: list, hosts: list[int], target: int) -> None:
        resources = format_hosts(hosts)
        if target == self.model.sleep:
            moving, new = hosts, "asleep"
        else:
            moving, new = [h for h in hosts if self.hosts[h] == "asleep"], "idle"
        self.pending.setdefault(resources, []).append((moving, new))  # one RESOURCE_STATE_CHANGED each
        for h in moving:
            self.hosts[h] = "switching"
        out.append(("SET_RESOURCE_STATE", {"resources": resources, "state": str(target)}))

    def reply(self, now: float) -> list[tuple[str, dict]]:
        out: list[tuple[str, dict]] = []
        draw = self.data.draw
        if self.budget > 0:
            self.budget -= 1
            for action in draw(st.lists(st.sampled_from(["start", "start", "dvfs", "off", "on", "kill", "query"]), max_size=4)):
                if action == "start":  # some of the waiting jobs that fit, together
                    for jid, res in draw(st.lists(st.sampled_from(self.waiting), min_size=1, unique=True)) if self.waiting else []:
                        if len(self.idle()) >= res:
                            hosts = draw(st.lists(st.sampled_from(self.idle()), min_size=res, max_size=res, unique=True))
                            self.execute(out, jid, res, sorted(hosts))
                elif action == "dvfs":
                    usable = [h for h, s in enumerate(self.hosts) if s in ("idle", "busy", "asleep")]
                    if usable:
                        hosts = draw(st.lists(st.sampled_from(usable), min_size=1, unique=True))
                        self.request(out, sorted(hosts), draw(st.integers(0, 12)))
                elif action == "off" and self.idle():
                    hosts = draw(st.lists(st.sampled_from(self.idle()), min_size=1, unique=True))
                    self.request(out, sorted(hosts), self.model.sleep)
                elif action == "on":
                    asleep = [h for h, s in enumerate(self.hosts) if s == "asleep"]
                    if asleep:
                        self.request(out, [draw(st.sampled_from(asleep))], draw(st.integers(0, 12)))
                elif action == "kill" and set(self.running) - self.killed:
                    jid = draw(st.sampled_from(sorted(set(self.running) - self.killed)))
                    self.killed.add(jid)
                    out.append(("KILL_JOB", {"job_ids": [jid]}))
                elif action == "query":
                    out.append(("QUERY", {"requests": {"consumed_energy": {}}}))
            out.append(("CALL_ME_LATER", {"timestamp": now + draw(st.integers(1, 40)) + 0.5}))
            return out
        # finishing: boot every sleeping host, start what fits (first fit), query now and then
        asleep = [h for h, s in enumerate(self.hosts) if s == "asleep"]
        if asleep:
            self.request(out, asleep, 0)
        for jid, res in list(self.waiting):
            if len(self.idle()) >= res:
                self.execute(out, jid, res, self.idle()[:res])
        if draw(st.booleans()):
            out.append(("QUERY", {"requests": {"consumed_energy": {}}}))
        return out


# ------------------------------------------------------------------------------------------- test

def run_and_check(data, specs: list[dict], budget: int) -> None:
    nb_hosts, model = read_platform(PLATFORM)
    doc = build_workload(specs)
    jobs = {f"w0!{j['id']}": j for j in doc["jobs"]}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "workload.json"
        path.write_text(json.dumps(doc))
        sim = Simulation(load_platform(PLATFORM), load_workload(path))
        oracle = Oracle(nb_hosts, model, doc["profiles"], jobs)
        scheduler = Scheduler(data, nb_hosts, model, budget)
        answers: list[float] = []
        msg = sim.start()
        while msg is not None:
            now = msg["now"]
            oracle.advance(now + 5.000001e-7)  # what happened up to this message (times printed %f, B4)
            scheduler.receive(msg["events"])
            for ev in msg["events"]:
                if ev["type"] == "ANSWER":
                    answers.append(ev["data"]["consumed_energy"])
                elif ev["type"] == "JOB_COMPLETED":
                    t, state = oracle.job_end[ev["data"]["job_id"]]
                    assert abs(t - now) <= 1e-6 and state == ev["data"]["job_state"], (ev, t, state)
            events = [] if msg["events"][0]["type"] == "SIMULATION_ENDS" else scheduler.reply(now)
            reply = {"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]}
            oracle.apply(now, reply["events"])
            msg = sim.step(reply)
        assert not scheduler.waiting and not scheduler.running
        # ANSWER (B26)
        assert len(answers) == len(oracle.answers)
        for ours, expected in zip(answers, oracle.answers):
            assert ours == pytest.approx(expected, abs=ABS_TOL_J, rel=1e-10)
        # out_consumed_energy.csv (B30) and out_jobs.csv (B27)
        paths = write_outputs(sim, Path(tmp) / "out")
        rows = [line.split(",") for line in paths["consumed_energy"].read_text().splitlines()[1:]]
        assert [r[2] for r in rows] == [kind for _, _, kind in oracle.rows]
        for r, (t, energy, kind) in zip(rows, oracle.rows):
            assert float(r[0]) == pytest.approx(t, abs=1e-6), (r, t)
            assert float(r[1]) == pytest.approx(energy, abs=ABS_TOL_J, rel=1e-10), (r, t, energy, kind)
        lines = paths["jobs"].read_text().splitlines()
        header = lines[0].split(",")
        for line in lines[1:]:
            row = dict(zip(header, line.split(",")))
            expected = oracle.job_energy[f"w0!{row['job_id']}"]
            assert float(row["consumed_energy"]) == pytest.approx(expected, abs=ABS_TOL_J, rel=1e-10), row
        assert len(lines) - 1 == len(jobs)


@settings(max_examples=100, **SETTINGS)
@given(data=st.data(), specs=st.lists(job_strategy, min_size=1, max_size=6))
def test_every_reported_energy_equals_the_oracle(data, specs) -> None:
    run_and_check(data, specs, budget=12)


def _d(seconds: int) -> dict:
    return {"type": "delay", "delay": seconds}


def _c(k: int) -> dict:
    return {"type": "parallel_homogeneous", "cpu": k * 1e8, "com": 0}


#: Profiles whose parts end at whole seconds from the start, or start a compute part then.
TIE_TREES = [
    _d(5), _d(10), _d(15),
    {"type": "composed", "seq": [_d(5), _c(7)], "repeat": 1},
    {"type": "composed", "seq": [_d(10), _c(9)], "repeat": 1},
    {"type": "composed", "seq": [_d(5), _d(5), _c(4)], "repeat": 1},
    {"type": "composed", "seq": [{"type": "composed", "seq": [_d(5)], "repeat": 2}, _c(6)], "repeat": 1},
    {"type": "composed", "seq": [_d(5), _c(3), _d(5)], "repeat": 2},
]

tie_job_strategy = st.fixed_dictionaries({
    "res": st.sampled_from([1, 1, 2, 2, 3]),
    "subtime": st.just(0),
    "walltime": st.one_of(st.none(), st.sampled_from([5, 10, 15, 40])),
    "tree": st.sampled_from(TIE_TREES),
})


@settings(max_examples=60, **SETTINGS)
@given(data=st.data(), specs=st.lists(tie_job_strategy, min_size=2, max_size=6))
def test_energy_at_one_time_equals_the_oracle(data, specs) -> None:
    """Jobs started together whose parts end at the same times: rows of ending jobs and starts of
    compute parts at one time (the order at one time, see the module docstring)."""
    run_and_check(data, specs, budget=2)


@pytest.mark.slow
@settings(max_examples=1500, **SETTINGS)
@given(data=st.data(), specs=st.lists(job_strategy, min_size=1, max_size=8))
def test_every_reported_energy_equals_the_oracle_many_examples(data, specs) -> None:
    run_and_check(data, specs, budget=25)
