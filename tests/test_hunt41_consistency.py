"""Hunt 41: the embedded simulator's outputs are consistent, to the joule, with what its inputs and Batsim's rules
make them.

:class:`Checker` reads a finished run's five output files, the platform XML, the workload JSON and the scheduler's
replies (dynamic registrations, QUERY, KILL_JOB and EXECUTE_JOB order), and recomputes from the behaviours of
``tests/fixtures/batsim-reference/README.md`` (B*n*), without the engine, what the outputs must be:

* ``_jobs.csv``: each job's execution time from its profile and the pstates its hosts had over time (B14 walltimes,
  B15 kills, B16 failures, B17 zero work, B19 flops per host, B20 the slowest host's pace, B22 composed profiles,
  B24 DVFS under a job), waiting / turnaround / stretch, completion order (B28), no two jobs on a host at once and
  none on a host switching or asleep;
* energy: each host's power over time (idle wattage of its pstate, ``idle + (full - idle) x load`` when computing
  with SimGrid's epsilon when ``wattage_per_state`` has three values, the virtual pstates' wattage while switching,
  the sleep pstate's asleep; B3, B20, B21, B23, B25) integrated, with the lazy billing of B42, gives every
  ``_consumed_energy.csv`` row, every ANSWER (B26), each job's ``consumed_energy`` (B27) and ``consumed_joules``
  (B29); ``wattmin`` and ``epower`` (B30, B40);
* ``_machine_states.csv``: the counts after each job start and end, request applied and switch completed (B32, B40);
* ``_schedule.csv``: job counts, means and maxima, makespan, switches, and ``time_<state>`` up to each host's last
  change (B29).

The checker reproduces all 14 recordings of real Batsim (the first test), then checks runs of the presets on seeded
random workloads, and metamorphic relations: permuting the jobs of the file, renaming them in id order, adding a
rejected job, and writing a platform's clusters as hosts change nothing else.

Behaviour of real Batsim the checker allows for (task_execution.cpp of Batsim 4.2.1): a compute part that ends at the
walltime leaves ``remaining_time = walltime - (clock at its end - clock at its start)`` at 0 or a few ulps off; at or
above 0 the next part is cut at once, below 0 the job has no walltime any more (``*remaining_time < 0`` means none)
and runs to its end. See :func:`test_b14_a_compute_part_ending_at_the_walltime_leaves_the_rest_to_the_doubles`.
"""

from __future__ import annotations

import bisect
import copy
import csv
import json
import math
import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wattsched.platforms.generate import eamc_platform_xml, esc_platform_xml, taurus_platform_xml, upas_platform_xml
from wattsched.schedulers.protocol import needs_dynamic_jobs, scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE, SCENARIOS


_UNITS = {"f": 1.0, "kf": 1e3, "Mf": 1e6, "Gf": 1e9, "Tf": 1e12}
EPS_T = 2.5e-6  # times are printed with 6 decimals: a difference of two of them is off by up to 1e-6


# ---------------------------------------------------------------------------------------------- platform
def _flops(text: str) -> float:
    text = text.strip()
    for unit in ("Tf", "Gf", "Mf", "kf", "f"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * _UNITS[unit]
    return float(text)


@dataclass
class Model:
    speeds: list[float]
    idle: list[float]
    full: list[float]
    eps: list[float]  # SimGrid's 'idle:epsilon:full': a loaded host draws epsilon + load x (full - epsilon)
    sleep: int | None
    off: int | None
    on: int | None


def _radical(text: str) -> list[str]:
    out = []
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        out.extend(str(v) for v in range(int(a), int(b or a) + 1))
    return out


def read_platform(xml_text: str) -> list[Model]:
    """The compute hosts' models, in id order (byte-wise order of names, B1; master excluded, B3)."""
    root = ET.fromstring(xml_text)
    hosts: list[tuple[bytes, Model]] = []

    def model(elem: ET.Element) -> tuple[Model, dict[str, str]]:
        props = {p.get("id"): p.get("value") for p in elem.findall("prop")}
        speeds = [_flops(s) for s in elem.get("speed").split(",")]
        text = props.get("wattage_per_state", "")
        watts = [[float(x) for x in pair.split(":")] for pair in text.split(",") if pair.strip()]
        sleep = off = on = None
        if "sleep_pstates" in props:
            sleep, off, on = (int(x) for x in props["sleep_pstates"].split(":"))
        eps = [w[1] if len(w) == 3 else w[0] for w in watts]
        return Model(speeds, [w[0] for w in watts], [w[-1] for w in watts], eps, sleep, off, on), props

    for elem in root.iter():
        if elem.tag == "host":
            m, props = model(elem)
            if elem.get("id") == "master_host" or props.get("role") == "master":
                continue
            hosts.append((elem.get("id").encode(), m))
        elif elem.tag == "cluster":
            m, props = model(elem)
            if props.get("role") == "master":
                continue
            for v in _radical(elem.get("radical")):
                hosts.append((f"{elem.get('prefix')}{v}{elem.get('suffix')}".encode(), m))
    hosts.sort(key=lambda x: x[0])
    return [m for _, m in hosts]


# ---------------------------------------------------------------------------------------------- helpers
def hosts_of(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split():
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return sorted(out)


def flatten(name: str, profiles: dict) -> list[tuple[str, object, int]]:
    """Parts of a profile in order (B22): ('delay', s, ret) or ('compute', desc, ret) (B16: ret)."""
    desc = profiles[name]
    if desc["type"] == "composed":
        return [p for _ in range(desc.get("repeat", 1)) for sub in desc["seq"] for p in flatten(sub, profiles)]
    if desc["type"] == "delay":
        return [("delay", float(desc["delay"]), int(desc.get("ret", 0)))]
    return [("compute", desc, int(desc.get("ret", 0)))]


def host_flops(desc: dict, n: int) -> list[float]:
    """B19."""
    if desc["type"] == "parallel_homogeneous":
        return [float(desc["cpu"])] * n
    if desc["type"] == "parallel_homogeneous_total":
        return [float(desc["cpu"]) / n] * n
    if desc["type"] == "parallel":
        return [float(c) for c in desc["cpu"]]
    raise ValueError(desc["type"])


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


class Failures(list):
    def check(self, ok: bool, *what: object) -> None:
        if not ok:
            self.append(" ".join(str(w) for w in what))


def row_is_request(row: dict[str, str]) -> bool:
    """A _pstate_changes.csv row written when a request is applied (-1: to a computation pstate, -2: to sleep, B31)."""
    return int(row["new_pstate"]) < 0


def same_g(printed: str, t: float) -> bool:
    """``printed`` (%g, 6 significant digits, B33) is ``t`` (printed %f) as far as %g shows it."""
    if t == 0:
        return float(printed) == 0
    return abs(float(printed) - t) <= 0.5 * 10 ** (math.floor(math.log10(abs(t))) - 5) + 1e-6


def close(a: float, b: float, abs_tol: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= abs_tol + rel * max(abs(a), abs(b))


# ---------------------------------------------------------------------------------------------- the run
@dataclass
class Job:
    jid: str  # "w0!3"
    row: dict[str, str]
    hosts: list[int]
    start: float
    finish: float
    parts: list[tuple[str, object, int]]
    walltime: float | None
    # computed: (begin, end, kind, flops per host or None)
    schedule: list[tuple[float, float, str, list[float] | None]] = field(default_factory=list)
    end_pred: float = math.nan
    state_pred: str = ""
    zero: bool = False


class Checker:
    def __init__(self, platform_xml: str, workload: dict, replies: list[dict], answers: list[tuple[float, float]],
                 prefix: Path, completions: list[tuple[float, str, str]] | None = None) -> None:
        self.models = read_platform(platform_xml)
        self.n = len(self.models)
        self.workload = workload
        self.replies = replies
        self.answers = answers  # (now of the message holding the ANSWER, value)
        self.completions = completions  # (now, job id, job_state) of every JOB_COMPLETED sent to the scheduler
        self.prefix = prefix
        self.fail = Failures()
        self.jobs_rows = read_csv(Path(f"{prefix}_jobs.csv"))
        self.schedule = read_csv(Path(f"{prefix}_schedule.csv"))[0]
        self.energy_rows = read_csv(Path(f"{prefix}_consumed_energy.csv"))
        self.machine_rows = read_csv(Path(f"{prefix}_machine_states.csv"))
        self.pstate_rows = read_csv(Path(f"{prefix}_pstate_changes.csv"))
        self.profiles: dict[str, dict[str, dict]] = {"w0": workload["profiles"]}
        self.entries: dict[str, dict] = {f"w0!{j['id']}": j for j in workload["jobs"]}
        self.query_times: list[float] = []
        self.kills: dict[str, float] = {}
        self.started: list[str] = []  # EXECUTE_JOB in reply order: the order of the 's' rows
        for reply in replies:
            for ev in reply["events"]:
                d = ev["data"]
                if ev["type"] == "REGISTER_PROFILE":
                    self.profiles.setdefault(d["workload_name"], {})[d["profile_name"]] = d["profile"]
                elif ev["type"] == "REGISTER_JOB":
                    self.entries[d["job_id"]] = d["job"]
                elif ev["type"] == "QUERY":
                    self.query_times.append(float(reply["now"]))
                elif ev["type"] == "EXECUTE_JOB":
                    self.started.append(d["job_id"])
                elif ev["type"] == "KILL_JOB":
                    for jid in d["job_ids"]:
                        self.kills.setdefault(jid, float(reply["now"]))

    # ------------------------------------------------------------------ pstates (B23, B31)
    def build_pstates(self) -> None:
        """Each host's pstate and mode over time, from _pstate_changes.csv, with precise times taken from the
        'p' rows of _consumed_energy.csv (one per pstate row after the initial ones, in the same order, B30-31)."""
        rows = self.pstate_rows
        initial = []
        k = 0
        covered: set[int] = set()
        while k < len(rows) and float(rows[k]["time"]) == 0 and covered.isdisjoint(hosts_of(rows[k]["machine_id"])) \
                and int(rows[k]["new_pstate"]) >= 0 and len(covered) < self.n:
            initial.append(rows[k])
            covered.update(hosts_of(rows[k]["machine_id"]))
            k += 1
        self.fail.check(covered == set(range(self.n)), "initial pstate rows do not cover every host", covered)
        p_rows = [r for r in self.energy_rows if r["event_type"] == "p"]
        later = self.later = rows[k:]
        self.fail.check(len(p_rows) == len(later), "pstate rows after the initial ones", len(later),
                        "!= 'p' energy rows", len(p_rows))
        self.pstate_now = [0] * self.n
        for r in initial:
            for h in hosts_of(r["machine_id"]):
                self.pstate_now[h] = int(r["new_pstate"])
        timeline: list[list[tuple[float, int, int, str]]] = [[(0.0, -1, self.pstate_now[h], "normal")]
                                                              for h in range(self.n)]
        dvfs_hosts: dict[str, list[list[int]]] = {}
        mode = ["normal"] * self.n
        pstate = list(self.pstate_now)
        self.requests: list[tuple[float, float, list[int], int]] = []  # (t request, t done, hosts, target)
        req_start: dict[str, list[float]] = {}
        # per 'p' row: the hosts whose pstate it changes (for wattmin, B30) and whether it ends a switch (B40)
        self.effects: list[list[tuple[int, int]]] = []
        self.ends_switch: list[bool] = []
        self.moving: list[list[int]] = []  # per completion row: the hosts that switched (not DVFS)
        for order, (r, e) in enumerate(zip(later, p_rows)):
            effect: list[tuple[int, int]] = []
            self.effects.append(effect)
            self.ends_switch.append(False)
            self.moving.append([])
            t = float(e["time"])
            self.fail.check(same_g(r["time"], t), "pstate row time", r["time"], "vs energy p row", e["time"])
            hs = hosts_of(r["machine_id"])
            target = int(r["new_pstate"])
            if target == -2:
                for h in hs:
                    m = self.models[h]
                    self.fail.check(mode[h] == "normal", "switch-off of host", h, "in mode", mode[h], "at", t)
                    mode[h] = "off"
                    pstate[h] = m.off
                    effect.append((h, m.off))
                    timeline[h].append((t, order, m.off, "off"))
                req_start.setdefault(r["machine_id"], []).append(t)
            elif target == -1:
                moving, dvfs = [], []
                for h in hs:
                    if mode[h] == "asleep":
                        moving.append(h)
                        mode[h] = "on"
                        pstate[h] = self.models[h].on
                        effect.append((h, self.models[h].on))
                        timeline[h].append((t, order, self.models[h].on, "on"))
                    else:
                        self.fail.check(mode[h] == "normal", "request -1 on host", h, "in mode", mode[h], "at", t)
                        dvfs.append(h)
                dvfs_hosts.setdefault(r["machine_id"], []).append(dvfs)
                req_start.setdefault(r["machine_id"], []).append(t)
                # DVFS hosts change at once (B23) but the target is only printed at completion: set then below
            else:
                starts = req_start.get(r["machine_id"]) or [None]
                t0 = starts.pop(0)
                self.fail.check(t0 is not None, "completion row without request", r)
                if t0 is None:
                    continue
                dv = dvfs_hosts.get(r["machine_id"], [[]]).pop(0) if dvfs_hosts.get(r["machine_id"]) else []
                self.ends_switch[order] = t > t0
                for h in hs:
                    m = self.models[h]
                    if h in dv:
                        # instantaneous DVFS at the request's time
                        timeline[h].append((t0, order, target, "normal"))
                        pstate[h] = target
                        effect.append((h, target))  # wattmin: after the completion row (same time)
                        continue
                    if target == m.sleep:
                        self.fail.check(mode[h] == "off", "sleep completion of host", h, mode[h])
                        mode[h] = "asleep"
                    else:
                        self.fail.check(mode[h] == "on", "boot completion of host", h, mode[h])
                        mode[h] = "normal"
                    pstate[h] = target
                    effect.append((h, target))
                    self.moving[order].append(h)
                    timeline[h].append((t, order, target, mode[h]))
                self.requests.append((t0, t, hs, target))
        for h in range(self.n):
            timeline[h].sort(key=lambda x: (x[0], x[1]))
        self.timeline = timeline
        self.timeline_t = [[p[0] for p in tl] for tl in timeline]
        self.fail.check(all(not v for v in req_start.values()), "requests never completed", req_start)

    def at(self, h: int, t: float) -> tuple[int, str]:
        """Pstate and mode of host h just after every event at t (for midpoints: at t)."""
        i = bisect.bisect_right(self.timeline_t[h], t) - 1
        _, _, p, m = self.timeline[h][i]
        return p, m

    def changes_between(self, hosts: list[int], a: float, b: float) -> list[float]:
        out = set()
        for h in hosts:
            ts = self.timeline_t[h]
            i = bisect.bisect_right(ts, a)
            j = bisect.bisect_left(ts, b)
            out.update(ts[i:j])
        return sorted(out)

    # ------------------------------------------------------------------ jobs (B14, B17, B19-B24, B28)
    def build_jobs(self) -> None:
        self.jobs: list[Job] = []
        self.rejected: list[dict[str, str]] = []
        for row in self.jobs_rows:
            jid = f"{row['workload_name']}!{row['job_id']}"
            entry = self.entries.get(jid)
            self.fail.check(entry is not None, "unknown job", jid)
            if entry is None:
                continue
            self.fail.check(float(row["submission_time"]) == float(entry["subtime"]), jid, "submission_time")
            self.fail.check(int(row["requested_number_of_resources"]) == int(entry["res"]), jid, "res")
            wall = entry.get("walltime")
            wall = None if wall is None or float(wall) <= 0 else float(wall)
            self.fail.check(close(float(row["requested_time"]), wall if wall is not None else -1.0, 1e-6), jid,
                            "requested_time")
            self.fail.check(row["profile"] == entry["profile"], jid, "profile")
            if row["final_state"] == "REJECTED":
                self.fail.check(row["success"] == "0" and row["starting_time"] == "" and row["consumed_energy"] == "",
                                jid, "rejected row", row)
                self.rejected.append(row)
                continue
            hosts = hosts_of(row["allocated_resources"])
            self.fail.check(len(hosts) == int(entry["res"]), jid, "allocation size", row["allocated_resources"])
            start, execution = float(row["starting_time"]), float(row["execution_time"])
            finish = float(row["finish_time"])
            sub = float(row["submission_time"])
            self.fail.check(start >= sub - 1e-9, jid, "starts before its submission")
            self.fail.check(close(finish, start + execution, 1.5e-6), jid, "finish != start + execution")
            self.fail.check(close(float(row["waiting_time"]), start - sub, 1.5e-6), jid, "waiting_time")
            self.fail.check(close(float(row["turnaround_time"]), finish - sub, 1.5e-6), jid, "turnaround")
            stretch = (finish - sub) / execution
            self.fail.check(close(float(row["stretch"]), stretch, 1.5e-6, 1e-6), jid, "stretch", row["stretch"],
                            stretch)
            self.fail.check((row["success"] == "1") == (row["final_state"] == "COMPLETED_SUCCESSFULLY"), jid, "success")
            parts = flatten(entry["profile"], self.profiles[row["workload_name"]])
            self.jobs.append(Job(jid, row, hosts, start, finish, parts, wall))
        self.jobs_in_file_order = list(self.jobs)  # completion order (B28): the order of the 'e' rows
        self.jobs.sort(key=lambda j: (j.start, j.finish))
        self.ties = 0
        for job in self.jobs:
            if self.predict(job):
                self.ties += 1
                if job.row["final_state"] != "COMPLETED_WALLTIME_REACHED":
                    self.predict(job, lose_walltime_on_tie=True)

    def predict(self, job: Job, *, lose_walltime_on_tie: bool = False) -> bool:
        """The job's parts from its start, at the pstates its hosts had (B14, B19-B24). Returns whether a compute
        part that is not the last one ends at the walltime (a tie).

        A tie leaves Batsim's ``remaining_time`` (walltime - (clock at the end - clock at the start),
        task_execution.cpp) at 0 or a few ulps above or below it, as the doubles fall: at or above 0 the next part
        is cut at once (B14, ``composed-profiles-c`` job 4); below 0 the job has no walltime any more and runs to
        its end (``*remaining_time < 0`` means none). ``lose_walltime_on_tie`` predicts the latter."""
        job.schedule = []
        t = job.start
        wall_end = job.start + job.walltime if job.walltime is not None else math.inf
        kill = self.kills.get(job.jid, math.inf)
        n = len(job.hosts)
        state, tie = "COMPLETED_SUCCESSFULLY", False

        for k, (kind, value, ret) in enumerate(job.parts):
            if kind == "delay":
                end = t + value
                cut = end >= wall_end - 1e-9  # B14: a delay reaching the walltime is cut
                if cut:
                    end = wall_end
                if kill < end:  # B15
                    job.schedule.append((t, kill, "delay", None))
                    t, state = kill, "COMPLETED_KILLED"
                    break
                job.schedule.append((t, end, "delay", None))
                t = end
                if cut:
                    state = "COMPLETED_WALLTIME_REACHED"
                    break
                if ret:
                    state = "COMPLETED_FAILED"
                    break
                continue
            flops = host_flops(value, n)
            if all(f == 0 for f in flops):
                job.schedule.append((t, t, "compute", flops))
                continue
            done, u = 0.0, t
            while True:
                speeds = [self.models[h].speeds[self.at(h, u)[0]] for h in job.hosts]
                longest = max(f / s for f, s in zip(flops, speeds))
                end = u + (1.0 - done) * longest
                nxt = [c for c in self.changes_between(job.hosts, u + 2e-6, end - 2e-6)]
                if nxt:
                    done += (nxt[0] - u) / longest
                    u = nxt[0]
                    continue
                break
            if kill < min(end, wall_end) - 1e-9:
                job.schedule.append((t, kill, "compute", flops))
                t, state = kill, "COMPLETED_KILLED"
                break
            if abs(end - wall_end) <= 1e-7 and k + 1 < len(job.parts) and not ret:
                tie = True
                job.schedule.append((t, end, "compute", flops))
                t = end
                if lose_walltime_on_tie:
                    wall_end = math.inf
                    continue
                t, state = wall_end, "COMPLETED_WALLTIME_REACHED"
                break
            if end > wall_end + 1e-7:
                job.schedule.append((t, wall_end, "compute", flops))
                t, state = wall_end, "COMPLETED_WALLTIME_REACHED"
                break
            job.schedule.append((t, end, "compute", flops))
            t = end
            if ret:
                state = "COMPLETED_FAILED"
                break
        job.end_pred, job.state_pred = t, state
        job.zero = t == job.start and state == "COMPLETED_SUCCESSFULLY"
        return tie

    def check_jobs(self) -> None:
        for job in self.jobs:
            row = job.row
            state = row["final_state"]
            if job.zero:  # B17
                self.fail.check(row["execution_time"] == "0.000010", job.jid, "zero work: execution",
                                row["execution_time"])
                self.fail.check(state == "COMPLETED_SUCCESSFULLY", job.jid, state)
                continue
            self.fail.check(close(job.finish, job.end_pred, EPS_T), job.jid, "finish", job.finish, "predicted",
                            job.end_pred, job.parts, job.hosts)
            if abs(job.end_pred - (job.start + (job.walltime or math.inf))) > 1e-5:
                want = job.state_pred
                self.fail.check(state == want, job.jid, "final state", state, "predicted", want)
            if state == "COMPLETED_WALLTIME_REACHED":
                self.fail.check(close(float(row["execution_time"]), job.walltime, 1.5e-6), job.jid, "walltime end")
        # no two jobs on one host at once; no job on a host switching or asleep
        by_host: dict[int, list[Job]] = {}
        for job in self.jobs:
            for h in job.hosts:
                by_host.setdefault(h, []).append(job)
                if job.zero:
                    continue
                for t in [job.start, *self.changes_between([h], job.start, job.end_pred - 2e-6)]:
                    self.fail.check(self.at(h, t)[1] == "normal", job.jid, "runs on host", h, "in mode",
                                    self.at(h, t)[1], "at", t)
        for h, js in by_host.items():
            js.sort(key=lambda j: (j.start, j.end_pred))
            for a, b in zip(js, js[1:]):
                self.fail.check(b.start >= a.end_pred - 2e-6, "jobs", a.jid, b.jid, "overlap on host", h)
        self.job_on: list[list[Job]] = [sorted(by_host.get(h, []), key=lambda j: j.start) for h in range(self.n)]

    # ------------------------------------------------------------------ power and energy (B20-B27, B42)
    def job_at(self, h: int, t: float) -> Job | None:
        for job in self.job_on[h]:
            if job.start < t < job.end_pred:
                return job
        return None

    def power(self, h: int, t: float) -> float:
        p, mode = self.at(h, t)
        m = self.models[h]
        job = self.job_at(h, t) if mode == "normal" else None
        if job is not None:
            for a, b, kind, flops in job.schedule:
                if a < t < b and kind == "compute":
                    speeds = [self.models[k].speeds[self.at(k, t)[0]] for k in job.hosts]
                    times = [f / s for f, s in zip(flops, speeds)]
                    load = times[job.hosts.index(h)] / max(times)
                    if load == 0:
                        return m.idle[p]
                    return m.eps[p] + (m.full[p] - m.eps[p]) * load
        return m.idle[p]

    def build_energy(self) -> None:
        times = {0.0}
        for job in self.jobs:
            for a, b, _, _ in job.schedule:
                times.update((a, b))
        for tl in self.timeline:
            times.update(p[0] for p in tl)
        times.update(float(r["time"]) for r in self.energy_rows)
        times.update(t for t, _ in self.answers)
        times.update(float(e["subtime"]) for e in self.entries.values())
        self.breaks = sorted(times)
        self.breaks.append(self.breaks[-1] + 1.0)  # the last interval goes on for ever
        self.cum = [[0.0] * len(self.breaks) for _ in range(self.n)]
        self.watts = [[0.0] * len(self.breaks) for _ in range(self.n)]  # power on [breaks[i], breaks[i+1])
        for i, (a, b) in enumerate(zip(self.breaks, self.breaks[1:])):
            mid = (a + b) / 2
            for h in range(self.n):
                w = self.power(h, mid)
                self.watts[h][i] = w
                self.cum[h][i + 1] = self.cum[h][i] + w * (b - a)
        # B42: on the hosts other than the first of a job, the time from their previous reading to the start of
        # a compute part that follows delay parts is billed at that compute part's power
        readings = sorted({float(r["time"]) for r in self.energy_rows if r["event_type"] != "e"}
                          | set(self.query_times))
        e_rows = sorted({float(r["time"]) for r in self.energy_rows if r["event_type"] == "e"})
        self.jumps: list[list[tuple[float, float]]] = [[] for _ in range(self.n)]
        for job in self.jobs:
            if len(job.hosts) < 2:
                continue
            last_compute_end = job.start
            for k, (a, b, kind, flops) in enumerate(job.schedule):
                if kind == "compute":
                    if k > 0 and job.schedule[k - 1][2] == "delay" and a > last_compute_end and a < job.end_pred:
                        r = last_compute_end
                        i = bisect.bisect_left(readings, a) - 1
                        if i >= 0:
                            r = max(r, readings[i])
                        i = bisect.bisect_right(e_rows, a + 1e-7) - 1
                        if i >= 0:
                            r = max(r, min(e_rows[i], a))
                        for h in job.hosts[1:]:
                            p = self.power(h, min(a + 1e-7, (a + b) / 2)) if b > a \
                                else self.models[h].idle[self.at(h, a)[0]]
                            idle = self.models[h].idle[self.at(h, (r + a) / 2)[0]]
                            self.jumps[h].append((a, (p - idle) * (a - r)))
                    last_compute_end = b

    def energy(self, h: int, t: float, *, before_jumps_at_t: bool = False) -> float:
        i = bisect.bisect_right(self.breaks, t) - 1
        i = max(0, min(i, len(self.breaks) - 1))
        i = min(i, len(self.breaks) - 2)
        e = self.cum[h][i] + self.watts[h][i] * (t - self.breaks[i])
        for tj, c in self.jumps[h]:
            if tj < t or (tj == t and not before_jumps_at_t) or (abs(tj - t) < 1e-6 and not before_jumps_at_t):
                e += c
        return e

    def total(self, t: float, **kw) -> float:
        return sum(self.energy(h, t, **kw) for h in range(self.n))

    def max_power(self) -> float:
        return sum(max(max(m.full), max(m.idle)) for m in self.models)

    def check_energy(self) -> None:
        tol = self.max_power() * 1.2e-6 + 2e-5
        for r in self.energy_rows:
            t = float(r["time"])
            e = float(r["energy"])
            want = self.total(t, before_jumps_at_t=r["event_type"] == "e")
            self.fail.check(close(e, want, tol), "energy row", r, "expected", want)
        for t, value in self.answers:
            want = self.total(t)
            self.fail.check(close(value, want, tol), "ANSWER at", t, value, "expected", want)
        for job in self.jobs:
            want = sum(self.energy(h, job.end_pred, before_jumps_at_t=True) - self.energy(h, job.start)
                       for h in job.hosts)
            if job.zero:
                want = 0.0
            self.fail.check(close(float(job.row["consumed_energy"]), want, len(job.hosts) * 400 * 2e-6 + 2e-5),
                            job.jid, "consumed_energy", job.row["consumed_energy"], "expected", want)
        # consumed_joules: E(last job end) - E(first static submission), each -1 when there was none (B29, context.hpp)
        ends = [j.end_pred for j in self.jobs]
        subs = [float(e["subtime"]) for jid, e in self.entries.items() if jid.startswith("w0!")]
        want = ((self.total(max(ends), before_jumps_at_t=True) if ends else -1.0)
                - (self.total(min(subs)) if subs else -1.0))
        self.fail.check(close(float(self.schedule["consumed_joules"]), want, tol * 2), "consumed_joules",
                        self.schedule["consumed_joules"], "expected", want)
        # epower: the energy since the previous row over the time since it, NA at the same time (B30)
        prev_t, prev_e = 0.0, 0.0
        for r in self.energy_rows:
            t, e = float(r["time"]), float(r["energy"])
            if t == prev_t:
                pass  # NA, or a tiny interval a few ulps long (B43): its quotient is not checkable from printed values
            elif t - prev_t >= 0.01:
                self.fail.check(r["epower"] != "NA" and close(float(r["epower"]), (e - prev_e) / (t - prev_t),
                                                               (2e-6 + self.max_power() * 2e-6) / (t - prev_t) + 1e-6),
                                "epower", r, "expected", (e - prev_e) / (t - prev_t))
            self.fail.check(t >= prev_t and e >= prev_e - 1e-6, "energy rows go back", r)
            prev_t, prev_e = t, e
        nb_queries = len(self.query_times)
        self.fail.check(len(self.answers) == nb_queries, "ANSWERs", len(self.answers), "!= QUERY events", nb_queries)
        # wattmin (B30): the idle wattage of each host's pstate; a request's row when it is applied is written before it
        # changes anything, its row when it completes after; the switches ending at one time are all applied before
        # the first of their rows (B40)
        pstate = list(self.pstate_now)
        p_rows = [x for x in self.energy_rows if x["event_type"] == "p"]
        k = 0
        applied_upto = -1
        for r in self.energy_rows:
            if r["event_type"] == "p" and k < len(self.effects):
                completion = not any(row_is_request(x) for x in [self.later[k]])
                if not completion:
                    want = sum(self.models[h].eps[pstate[h]] for h in range(self.n))
                    self.fail.check(close(float(r["wattmin"]), want, 2e-6), "wattmin", r, "expected", want)
                last = k
                if self.ends_switch[k]:
                    t = float(r["time"])
                    while last + 1 < len(self.ends_switch) and self.ends_switch[last + 1] \
                            and float(p_rows[last + 1]["time"]) == t:
                        last += 1
                for i in range(max(k, applied_upto + 1), last + 1):
                    for h, p in self.effects[i]:
                        pstate[h] = p
                applied_upto = max(applied_upto, last)
                k += 1
                if not completion:
                    continue
            want = sum(self.models[h].eps[pstate[h]] for h in range(self.n))
            self.fail.check(close(float(r["wattmin"]), want, 2e-6), "wattmin", r, "expected", want)

    # ------------------------------------------------------------------ machine states and schedule (B29, B32)
    def state(self, h: int, t: float) -> str:
        """Machine state just after everything at t."""
        p, mode = self.at(h, t)
        if mode == "off":
            return "switching_off"
        if mode == "on":
            return "switching_on"
        if mode == "asleep":
            return "sleeping"
        for job in self.job_on[h]:
            if job.start <= t < job.end_pred:
                return "computing"
        return "idle"

    def check_machine_states(self) -> None:
        """_machine_states.csv (B32): one row after each job start and end ('s' and 'e' rows of the energy file, in
        the same order), each request applied and each switch request completed ('p' rows; not the completion of a
        pure DVFS request); the switches ending at one time are all applied before the first of their rows (B40)."""
        for r in self.machine_rows:
            self.fail.check(sum(int(v) for k, v in r.items() if k != "time") == self.n, "machine row", r)
        by_id = {j.jid: j for j in self.jobs}
        starts = [by_id[jid] for jid in self.started if jid in by_id]
        ends = list(self.jobs_in_file_order)
        state = ["idle"] * self.n
        rows = iter(self.machine_rows)
        p_rows = [x for x in self.energy_rows if x["event_type"] == "p"]
        k, applied_upto = 0, -1
        si = ei = 0
        for r in self.energy_rows:
            kind = r["event_type"]
            if kind == "s":
                job = starts[si] if si < len(starts) else None
                si += 1
                for h in job.hosts if job else []:
                    state[h] = "computing"
            elif kind == "e":
                job = ends[ei] if ei < len(ends) else None
                ei += 1
                for h in job.hosts if job else []:
                    state[h] = "idle"
            else:
                if k >= len(self.effects):
                    break
                row = self.later[k]
                if row_is_request(row):
                    for h in hosts_of(row["machine_id"]):
                        if row["new_pstate"] == "-2":
                            state[h] = "switching_off"
                        elif state[h] == "sleeping":
                            state[h] = "switching_on"
                else:
                    if not self.ends_switch[k]:  # a pure DVFS request completes: no row
                        k += 1
                        continue
                    last = k
                    while last + 1 < len(self.ends_switch) and self.ends_switch[last + 1] \
                            and float(p_rows[last + 1]["time"]) == float(r["time"]):
                        last += 1
                    for i in range(max(k, applied_upto + 1), last + 1):
                        for h in self.moving[i]:
                            asleep = int(self.later[i]["new_pstate"]) == self.models[h].sleep
                            state[h] = "sleeping" if asleep else "idle"
                    applied_upto = max(applied_upto, last)
                k += 1
            m = next(rows, None)
            self.fail.check(m is not None, "missing machine state row for energy row", r)
            if m is None:
                return
            self.fail.check(same_g(m["time"], float(r["time"])), "machine row time", m, "energy row", r)
            want = {c: sum(1 for x in state if x == c) for c in ("sleeping", "switching_on", "switching_off", "idle",
                                                                 "computing")}
            got = {c: int(m[f"nb_{c}"]) for c in want}
            self.fail.check(got == want, "machine states", m, "expected", want)
        self.fail.check(next(rows, None) is None, "more machine state rows than events")

    def check_completions(self) -> None:
        """Each JOB_COMPLETED the scheduler received is a _jobs.csv row with that state, at that time (B13, B17)."""
        if self.completions is None:
            return
        by_id = {j.jid: j for j in self.jobs}
        self.fail.check(sorted(c[1] for c in self.completions) == sorted(by_id), "JOB_COMPLETED events",
                        len(self.completions), "!= jobs that ran", len(by_id))
        for now, jid, state in self.completions:
            job = by_id.get(jid)
            if job is not None:
                self.fail.check(state == job.row["final_state"] and close(now, job.finish, 1.2e-5), jid,
                                "JOB_COMPLETED", now, state, "vs _jobs.csv", job.finish, job.row["final_state"])

    def check_order(self) -> None:
        """_jobs.csv in completion order (B28); the rows of _machine_states.csv and _pstate_changes.csv in time
        order."""
        ends = [j.end_pred for j in self.jobs_in_file_order]
        self.fail.check(all(b >= a - 1e-6 for a, b in zip(ends, ends[1:])), "jobs not in completion order", ends)
        for name, rows in (("machine states", self.machine_rows), ("pstate changes", self.pstate_rows)):
            times = [float(r["time"]) for r in rows]
            self.fail.check(all(b >= a for a, b in zip(times, times[1:])), name, "rows not in time order")

    def check_schedule(self) -> None:
        s = self.schedule
        finished = [j for j in self.jobs]
        nb = len(self.jobs_rows)
        succ = sum(1 for j in finished if j.row["final_state"] == "COMPLETED_SUCCESSFULLY")
        self.fail.check(int(s["nb_jobs"]) == nb, "nb_jobs")
        self.fail.check(int(s["nb_jobs_finished"]) == len(finished), "nb_jobs_finished")
        self.fail.check(int(s["nb_jobs_rejected"]) == len(self.rejected), "nb_jobs_rejected")
        self.fail.check(int(s["nb_jobs_success"]) == succ, "nb_jobs_success")
        self.fail.check(int(s["nb_jobs_killed"]) == len(finished) - succ, "nb_jobs_killed")
        self.fail.check(int(s["nb_computing_machines"]) == self.n, "nb_computing_machines")
        self.fail.check(int(s["nb_grouped_switches"]) == len(self.requests), "nb_grouped_switches",
                        s["nb_grouped_switches"], len(self.requests))
        self.fail.check(int(s["nb_machine_switches"]) == sum(len(r[2]) for r in self.requests), "nb_machine_switches")
        if nb:
            for col, key in (("waiting_time", "mean_waiting_time"), ("turnaround_time", "mean_turnaround_time"),
                             ("stretch", "mean_slowdown")):
                vals = [float(j.row[col]) for j in finished]
                self.fail.check(close(float(s[key]), math.fsum(vals) / nb, 2e-6, 1e-6), key, s[key])
                self.fail.check(close(float(s[key.replace("mean", "max")]), max([0.0, *vals]), 2e-6, 1e-6), key)
            self.fail.check(close(float(s["success_rate"]), succ / nb, 1e-6), "success_rate")
        makespan = max([float(j.row["finish_time"]) for j in finished], default=0.0)
        self.fail.check(close(float(s["makespan"]), makespan, 1.5e-6), "makespan", s["makespan"], makespan)
        # time_<state>: per host, the intervals between its state changes, up to its last change (B29)
        sums = {k: 0.0 for k in ("idle", "computing", "switching_on", "switching_off", "sleeping")}
        for h in range(self.n):
            points = [0.0]
            for job in self.job_on[h]:
                points += [job.start, job.end_pred]
            tl = self.timeline[h]
            points += [p[0] for prev, p in zip(tl, tl[1:]) if p[3] != prev[3]]
            points = sorted(set(points))
            for a, b in zip(points, points[1:]):
                sums[self.state(h, (a + b) / 2)] += b - a
        for k, v in sums.items():
            self.fail.check(close(float(s[f"time_{k}"]), v, 1e-6 * self.n * 4 + 1e-5, 1e-7), f"time_{k}",
                            s[f"time_{k}"], "expected", v)

    def stats(self) -> dict[str, int]:
        """What the run exercised (to see that the inputs reach the cases checked)."""
        return {
            "jobs": len(self.jobs), "rejected": len(self.rejected), "answers": len(self.answers),
            "requests": len(self.requests),
            "switches": sum(1 for r in self.requests if r[1] > r[0]),
            "dvfs": sum(1 for r in self.requests if r[1] == r[0]),
            "walltime": sum(1 for j in self.jobs if j.row["final_state"] == "COMPLETED_WALLTIME_REACHED"),
            "zero": sum(1 for j in self.jobs if j.zero),
            "b42": sum(1 for h in range(self.n) for _, c in self.jumps[h] if abs(c) > 1e-9),
            "ties": self.ties,
            "partial_load": sum(1 for j in self.jobs for a, b, kind, flops in j.schedule
                                if kind == "compute" and b > a and len(j.hosts) > 1 and self._partial(j, (a + b) / 2)),
        }

    def _partial(self, job: Job, t: float) -> bool:
        for a, b, kind, flops in job.schedule:
            if a < t < b and kind == "compute":
                speeds = [self.models[k].speeds[self.at(k, t)[0]] for k in job.hosts]
                times = [f / s for f, s in zip(flops, speeds)]
                return min(times) < max(times) * (1 - 1e-9)
        return False

    def run(self) -> Failures:
        self.build_pstates()
        self.build_jobs()
        self.check_jobs()
        self.build_energy()
        self.check_energy()
        self.check_machine_states()
        self.check_order()
        self.check_completions()
        self.check_schedule()
        return self.fail


# ------------------------------------------------------------------------------------------ runs
@dataclass
class Run:
    prefix: Path
    replies: list[dict]
    answers: list[tuple[float, float]]
    completions: list[tuple[float, str, str]]
    sim: Simulation


def simulate(folder: Path, platform_xml: str, workload: dict, scheduler: str, options: dict,
             *, dynamic: bool | None = None, workload_name: str = "w.json") -> Run:
    folder.mkdir(parents=True, exist_ok=True)
    ppath, wpath = folder / "platform.xml", folder / workload_name
    ppath.write_text(platform_xml)
    wpath.write_text(json.dumps(workload))
    handler = scheduler_handler(scheduler, options)
    if dynamic is None:
        dynamic = needs_dynamic_jobs(handler) or scheduler.startswith(("eamc", "min-"))
    sim = Simulation(load_platform(ppath), load_workload(wpath), dynamic_jobs=dynamic, acknowledge_dynamic_jobs=dynamic)
    replies: list[dict] = []
    answers: list[tuple[float, float]] = []
    completions: list[tuple[float, str, str]] = []

    def recording(msg: dict) -> dict:
        for ev in msg["events"]:
            if ev["type"] == "ANSWER":
                answers.append((msg["now"], ev["data"]["consumed_energy"]))
            elif ev["type"] == "JOB_COMPLETED":
                completions.append((msg["now"], ev["data"]["job_id"], ev["data"]["job_state"]))
        reply = handler(msg)
        replies.append(json.loads(json.dumps(reply)))
        return reply

    run_inprocess(sim, recording)
    prefix = folder / "out"
    write_outputs(sim, prefix)
    return Run(prefix, replies, answers, completions, sim)


def check(folder: Path, platform_xml: str, workload: dict, scheduler: str, options: dict,
          **kw) -> tuple[Run, list[str]]:
    run = simulate(folder, platform_xml, workload, scheduler, options, **kw)
    fails = Checker(platform_xml, workload, run.replies, run.answers, run.prefix, run.completions).run()
    return run, list(fails)


# ------------------------------------------------------------------------------------------ workloads
def random_workload(rng: random.Random, n_hosts: int, speed: float, *, jobs: int = 12, kinds=("compute", "delay",
                    "total", "composed", "parallel"), wider: bool = True, multi_delay_compute: bool = True,
                    gaps=(0, 0, 1, 30, 200, 900), max_run: int = 900) -> dict:
    """Jobs on ``n_hosts`` hosts of top speed ``speed``: every profile kind, walltimes shorter than, equal to and
    longer than the run time, none; some jobs wider than the machine (rejected)."""
    profiles: dict[str, dict] = {}
    out = []
    t = 0
    for k in range(1, jobs + 1):
        t += rng.choice(gaps)
        res = rng.randint(1, n_hosts + (1 if wider else 0))
        kind = rng.choice(kinds)
        run = rng.randint(0, max_run)
        name = f"p{k}"
        if kind == "compute" or run == 0:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": run * speed, "com": 0}
        elif kind == "total":
            profiles[name] = {"type": "parallel_homogeneous_total", "cpu": run * speed * res, "com": 0}
        elif kind == "parallel":
            profiles[name] = {"type": "parallel", "cpu": [rng.randint(1, run) * speed for _ in range(res)],
                              "com": [0] * (res * res)}
        elif kind == "delay":
            profiles[name] = {"type": "delay", "delay": run}
        else:
            profiles[f"{name}c"] = {"type": "parallel_homogeneous", "cpu": run * speed / 2, "com": 0}
            profiles[f"{name}d"] = {"type": "delay", "delay": max(1, run // 3)}
            seq = [f"{name}c", f"{name}d"]
            if multi_delay_compute or res == 1:
                rng.shuffle(seq)
            repeat = rng.randint(1, 2) if (multi_delay_compute or res == 1) else 1
            profiles[name] = {"type": "composed", "repeat": repeat, "seq": seq}
        job = {"id": k, "subtime": t, "res": res, "profile": name}
        factor = rng.choice([None, 0.5, 1.0, 2.0, 10.0])
        if factor is not None and run > 0:
            job["walltime"] = max(1, round(run * factor))
        out.append(job)
    return {"nb_res": n_hosts, "jobs": out, "profiles": profiles}


TAURUS_SPEED = 100e6
ESC_SPEED = 1e9
UPAS_SPEED = 2300e6



EAMC_SIZES = (3, 5)
EAMC_TOP = {"p1": 2.7e9, "p2": 3.1e9}


def eamc_workload(rng: random.Random, *, jobs: int = 10, wider: bool = True) -> dict:
    """Jobs of the EAMC paper's form (``app``, ``partitions``) on eamc_platform_xml(EAMC_SIZES): parallel_homogeneous
    or delay profiles for the first partition's top frequency, walltimes at or above the run time, none, or below."""
    out, profiles = [], {}
    t = 0
    for i in range(1, jobs + 1):
        t += rng.choice([0, 0, 10, 100, 400])
        parts = rng.choice([["p1"], ["p2"], ["p1", "p2"], ["p2", "p1"]])
        most = min(EAMC_SIZES[0 if p == "p1" else 1] for p in parts)
        res = sum(EAMC_SIZES) + 1 if wider and rng.random() < 0.1 else rng.randint(1, most)  # wider: rejected
        run = rng.randint(1, 1500)
        name = f"r{i}"
        if rng.random() < 0.5:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": run * EAMC_TOP[parts[0]], "com": 0}
        else:
            profiles[name] = {"type": "delay", "delay": run}
        job = {"id": i, "subtime": t, "res": res, "profile": name, "app": rng.randint(1, 8), "partitions": parts}
        factor = rng.choice([None, 0.7, 1.0, 1.5, 3.0])
        if factor is not None:
            job["walltime"] = max(1, round(run * factor))
        out.append(job)
    return {"nb_res": sum(EAMC_SIZES), "jobs": out, "profiles": profiles}


def upas_workload(rng: random.Random, n_hosts: int, *, jobs: int = 12) -> dict:
    """UPAS β jobs (workloads/upas.py's form): a composed profile of β·T at the top gear's speed then a delay of
    (1 - β)·T, the job's ``beta`` field, walltimes above, at or below T."""
    out, profiles = [], {}
    t = 0
    for i in range(1, jobs + 1):
        t += rng.choice([0, 0, 30, 300, 900])
        res = rng.randint(1, n_hosts + (1 if rng.random() < 0.1 else 0))
        run = rng.randint(1, 1500)
        beta = rng.choice([0.0, 0.25, 0.5, 1.0])
        parts = []
        if beta > 0:
            profiles[f"b{i}.c"] = {"type": "parallel_homogeneous", "cpu": beta * run * UPAS_SPEED, "com": 0}
            parts.append(f"b{i}.c")
        if beta < 1:
            profiles[f"b{i}.d"] = {"type": "delay", "delay": (1 - beta) * run}
            parts.append(f"b{i}.d")
        profiles[f"b{i}"] = {"type": "composed", "repeat": 1, "seq": parts}
        job = {"id": i, "subtime": t, "res": res, "profile": f"b{i}", "beta": beta,
               "walltime": max(1, round(run * rng.choice([0.6, 1.0, 1.3, 3.0])))}
        out.append(job)
    return {"nb_res": n_hosts, "jobs": out, "profiles": profiles}


def epsilon_platform(nb_hosts: int) -> str:
    """Taurus hosts whose computation pstates have SimGrid's three-value wattage ``idle:epsilon:full``."""
    xml = taurus_platform_xml(nb_hosts)
    head, _, rest = xml.partition('<prop id="wattage_per_state" value="95.0')
    values, _, tail = ("95.0" + rest).partition('"')
    pairs = values.split(", ")
    pairs = [f"{p.split(':')[0]}:{float(p.split(':')[0]) + 7.5 + i}:{p.split(':')[1]}" if i < 13 else p
             for i, p in enumerate(pairs)]
    return f'{head}<prop id="wattage_per_state" value="{", ".join(pairs)}"{tail}'


def _random(n_hosts: int, speed: float):
    return lambda rng: random_workload(rng, n_hosts, speed, jobs=rng.randint(1, 14))


MIXED = REFERENCE / "cluster-platform" / "platform.xml"  # 12 Taurus + 4 slower hosts of other powers, no sleep

#: name: (platform, workload, scheduler, options, what the examples must exercise together)
CASES = {
    "fcfs": (lambda: taurus_platform_xml(8), _random(8, TAURUS_SPEED), "fcfs", {},
             {"walltime": 1, "b42": 1, "partial_load": 1, "rejected": 1}),
    "easy-backfill": (lambda: taurus_platform_xml(8), _random(8, TAURUS_SPEED), "easy-backfill",
                      {"placement": "non-contiguous"}, {"walltime": 1, "b42": 1}),
    "energy-bud": (lambda: taurus_platform_xml(8), _random(8, TAURUS_SPEED), "energy-bud",
                   {"budget_fraction": 0.5, "window_start_s": 600, "window_end_s": 4000}, {"answers": 1}),
    "energy-bud-shutdown": (lambda: taurus_platform_xml(8), _random(8, TAURUS_SPEED), "energy-bud",
                            {"budget_fraction": 0.5, "window_start_s": 600, "window_end_s": 4000, "shutdown": True},
                            {"answers": 1, "switches": 1}),
    "shutdown-epsilon": (lambda: epsilon_platform(8), _random(8, TAURUS_SPEED), "energy-bud", {"shutdown": True},
                         {"switches": 1}),
    "esc": (lambda: esc_platform_xml(6), _random(6, ESC_SPEED), "esc",
            {"idle_s": 100.0, "period_s": 60.0, "upper_wait_s": 0.0}, {"switches": 1}),
    "esc-compose": (lambda: esc_platform_xml(6), _random(6, ESC_SPEED), "compose",
                    {"power": "esc", "backfill": "easy", "idle_s": 0.0, "period_s": 7.0, "upper_wait_s": None,
                     "lower_wait_s": 0.0, "min_on": 1}, {"switches": 1}),
    "upas-shutdown": (lambda: upas_platform_xml(8), lambda rng: upas_workload(rng, 8, jobs=rng.randint(1, 14)), "upas",
                      {"shutdown": True, "wq_threshold": 4}, {"switches": 1, "dvfs": 1, "walltime": 1}),
    "upas-composed": (lambda: upas_platform_xml(8), _random(8, UPAS_SPEED), "upas",
                      {"wq_threshold": None, "u_upper": 0.95, "u_lower": 0.9, "f_lower_ghz": 0.8}, {"dvfs": 1}),
    "eamc-reorder-shutdown": (lambda: eamc_platform_xml(EAMC_SIZES),
                              lambda rng: eamc_workload(rng, jobs=rng.randint(1, 12)), "eamc-reorder",
                              {"shutdown": True}, {"switches": 1, "dvfs": 1}),
    "min-energy": (lambda: eamc_platform_xml(EAMC_SIZES), lambda rng: eamc_workload(rng, jobs=rng.randint(1, 12)),
                   "min-energy", {}, {"dvfs": 1}),
    "heterogeneous": (lambda: MIXED.read_text(), _random(16, 120e6), "easy-backfill", {"placement": "non-contiguous"},
                      {"partial_load": 1}),
}
EXAMPLES = 8


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_checker_reproduces_every_recording_of_real_batsim(scenario: str) -> None:
    """The checker is right where real Batsim is known: its recordings' outputs pass it unchanged."""
    folder = REFERENCE / scenario
    replies, answers, completions = [], [], []
    for line in (folder / "messages.jsonl").read_text().splitlines():
        entry = json.loads(line)
        msg = entry["message"]
        if entry["from"] == "scheduler":
            replies.append(msg)
            continue
        for ev in msg["events"]:
            if ev["type"] == "ANSWER":
                answers.append((msg["now"], ev["data"]["consumed_energy"]))
            elif ev["type"] == "JOB_COMPLETED":
                completions.append((msg["now"], ev["data"]["job_id"], ev["data"]["job_state"]))
    checker = Checker((folder / "platform.xml").read_text(), json.loads((folder / "workload.json").read_text()),
                      replies, answers, folder / "out", completions)
    assert not checker.run()


@pytest.mark.parametrize("case", CASES)
def test_every_output_is_what_the_inputs_make_it(case: str, tmp_path: Path) -> None:
    platform, workload, scheduler, options, coverage = CASES[case]
    xml = platform()
    seen: dict[str, int] = {}
    for seed in range(EXAMPLES):
        w = workload(random.Random(seed))
        run = simulate(tmp_path / str(seed), xml, w, scheduler, options)
        checker = Checker(xml, w, run.replies, run.answers, run.prefix, run.completions)
        failures = checker.run()
        assert not failures, (case, seed, failures[:5])
        for key, value in checker.stats().items():
            seen[key] = seen.get(key, 0) + value
    assert all(seen[key] >= n for key, n in coverage.items()), seen


_MUTATIONS = [  # (file, row, column, change): each must be caught
    ("consumed_energy", lambda r: r["event_type"] == "e", "energy", lambda v: f"{float(v) + 0.01:f}"),
    ("consumed_energy", lambda r: r["event_type"] == "s", "wattmin", lambda v: f"{float(v) + 1:f}"),
    ("jobs", lambda r: r["consumed_energy"] != "", "consumed_energy", lambda v: f"{float(v) + 0.01:f}"),
    ("jobs", lambda r: r["execution_time"] != "", "execution_time", lambda v: f"{float(v) + 0.001:f}"),
    ("schedule", lambda r: True, "consumed_joules", lambda v: f"{float(v) + 0.05:f}"),
    ("schedule", lambda r: True, "time_idle", lambda v: f"{float(v) + 0.01:f}"),
    ("schedule", lambda r: True, "time_switching_off", lambda v: f"{float(v) - 0.01:f}"),
    ("schedule", lambda r: True, "makespan", lambda v: f"{float(v) + 0.01:f}"),
    ("machine_states", lambda r: int(r["nb_idle"]) > 0, "nb_idle", lambda v: str(int(v) - 1)),
    ("pstate_changes", lambda r: r["new_pstate"] == "13", "new_pstate", lambda v: "12"),
]


@pytest.mark.parametrize("mutation", range(len(_MUTATIONS)))
def test_the_checker_catches_a_hundredth_of_a_joule(tmp_path: Path, mutation: int) -> None:
    name, which, column, change = _MUTATIONS[mutation]
    xml = taurus_platform_xml(8)
    w = random_workload(random.Random(3), 8, TAURUS_SPEED, jobs=10)
    run = simulate(tmp_path, xml, w, "energy-bud", {"shutdown": True, "budget_fraction": 0.5, "window_start_s": 600,
                                                    "window_end_s": 4000})
    assert not Checker(xml, w, run.replies, run.answers, run.prefix).run()
    path = Path(f"{run.prefix}_{name}.csv")
    rows = list(csv.reader(path.read_text().splitlines()))
    k = rows[0].index(column)
    hit = next(r for r in rows[1:] if which(dict(zip(rows[0], r))))
    hit[k] = change(hit[k])
    path.write_text("".join(",".join(r) + "\n" for r in rows))
    assert Checker(xml, w, run.replies, run.answers, run.prefix).run()


# ------------------------------------------------------------------------------------------ metamorphic
_FILES = ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes")
METAMORPHIC = ["fcfs", "energy-bud-shutdown", "esc", "upas-shutdown", "eamc-reorder-shutdown"]


def _outputs(run: Run) -> dict[str, list[list[str]]]:
    out = {n: list(csv.reader(Path(f"{run.prefix}_{n}.csv").read_text().splitlines())) for n in _FILES}
    head, values = out["schedule"]
    out["schedule"] = [[k, v] for k, v in zip(head, values) if k not in ("scheduling_time", "simulation_time")]
    return out


def _pair(tmp_path: Path, case: str, seed: int, change, platform=None) -> tuple[dict, dict]:
    make_platform, workload, scheduler, options, _ = CASES[case]
    w = workload(random.Random(seed))
    w2 = copy.deepcopy(w)
    change(w2, random.Random(1000 + seed))
    a = simulate(tmp_path / f"{seed}a", make_platform(), w, scheduler, options)
    b = simulate(tmp_path / f"{seed}b", (platform or make_platform)(), w2, scheduler, options)
    return _outputs(a), _outputs(b)


@pytest.mark.parametrize("case", METAMORPHIC)
def test_the_order_of_the_jobs_in_the_file_changes_nothing(tmp_path: Path, case: str) -> None:
    """B10: same-time jobs are submitted in the order of their id strings, whatever the file's order."""
    for seed in range(3):
        a, b = _pair(tmp_path, case, seed, lambda w, rng: rng.shuffle(w["jobs"]))
        assert a == b, (case, seed)


@pytest.mark.parametrize("case", METAMORPHIC)
def test_renaming_the_jobs_in_id_order_changes_nothing_but_their_names(tmp_path: Path, case: str) -> None:
    def rename(w: dict, rng: random.Random) -> None:
        for job in w["jobs"]:
            job["id"] = f"job{job['id']}"  # the same byte-wise order of the ids (B10)

    for seed in range(3):
        a, b = _pair(tmp_path, case, seed, rename)
        names = [r[0] for r in b["jobs"][1:]]
        assert all("job" in n for n in names), names
        for out in (a, b):  # ids and profile names (a replacement's name holds the original's id)
            out["jobs"] = [[r[1], *r[3:]] for r in out["jobs"]]
        assert a == b, (case, seed)


@pytest.mark.parametrize("same_time", [True, False], ids=["at-a-submission-time", "at-another-time"])
@pytest.mark.parametrize("case", METAMORPHIC)
def test_a_rejected_job_changes_nothing_else(tmp_path: Path, case: str, same_time: bool) -> None:
    """A job wider than the platform, submitted at the time of another submission or between two, is rejected
    and changes no other output: only its own _jobs.csv row and the counts and means of _schedule.csv. (A
    submission at another time is one more step of SimGrid's clock: the ``epower`` of rows a few ulps apart, B43,
    may differ; their times and energies do not.)"""
    def add(w: dict, rng: random.Random) -> None:
        subs = sorted({j["subtime"] for j in w["jobs"]})
        t = rng.choice(subs) if same_time else min(rng.choice(subs) + rng.choice([0.5, 7, 333.25]), subs[-1] + 0.5)
        w["jobs"].append({"id": "zz", "subtime": t, "res": w["nb_res"] + 1, "profile": next(iter(w["profiles"]))})

    counts = {"nb_jobs", "nb_jobs_rejected", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
              "success_rate"}
    for seed in range(3):
        a, b = _pair(tmp_path, case, seed, add)
        rows = [r for r in b["jobs"] if r[0] == "zz"]
        assert len(rows) == 1 and rows[0][7] == "REJECTED"
        b["jobs"] = [r for r in b["jobs"] if r[0] != "zz"]
        for out in (a, b):
            out["schedule"] = [r for r in out["schedule"] if r[0] not in counts]
            out["consumed_energy"] = [r[:4] for r in out["consumed_energy"]]
        assert a == b, (case, seed)


@pytest.mark.parametrize("case,flat", [
    ("energy-bud-shutdown", lambda: taurus_platform_xml(8, cluster=False)),
    ("esc", lambda: esc_platform_xml(6, cluster=False)),
    ("upas-shutdown", lambda: upas_platform_xml(8, cluster=False)),
], ids=["taurus", "esc", "upas"])
def test_a_cluster_and_its_hosts_written_one_by_one_give_the_same_outputs(tmp_path: Path, case: str, flat) -> None:
    """B34-B36: a <cluster> of zero-cost links runs as the same hosts in one flat zone."""
    for seed in range(3):
        a, b = _pair(tmp_path, case, seed, lambda w, rng: None, platform=flat)
        assert a == b, (case, seed)


# ------------------------------------------------------------------------------------------ B14 and the doubles
def _walltime_tie(tmp_path: Path, start: float, walltime: float = 327.0) -> tuple[str, float]:
    """A job [c(walltime at 100 Mf), d5, c(walltime)] with that walltime, started at ``start`` on a Taurus host:
    its first compute part ends exactly at the walltime. Final state and execution time."""
    folder = tmp_path / f"{start}"
    folder.mkdir()
    (folder / "p.xml").write_text(taurus_platform_xml(1))
    (folder / "w.json").write_text(json.dumps({
        "nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "j", "walltime": walltime}],
        "profiles": {"j": {"type": "composed", "repeat": 1, "seq": ["c", "d", "c"]},
                     "c": {"type": "parallel_homogeneous", "cpu": walltime * 100e6, "com": 0},
                     "d": {"type": "delay", "delay": 5}}}))
    sim = Simulation(load_platform(folder / "p.xml"), load_workload(folder / "w.json"))
    msg = sim.start()
    while msg is not None:
        now, events = msg["now"], []
        for ev in msg["events"]:
            if ev["type"] == "JOB_SUBMITTED":
                events.append(("CALL_ME_LATER", {"timestamp": start}))
            elif ev["type"] == "REQUESTED_CALL":
                events.append(("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}))
        msg = sim.step({"now": now, "events": [{"timestamp": now, "type": t, "data": d} for t, d in events]})
    (job,) = sim.iter_jobs()
    return job.final_state, job.end_s - job.start_s


def test_b14_a_compute_part_ending_at_the_walltime_leaves_the_rest_to_the_doubles(tmp_path: Path) -> None:
    """Batsim 4.2.1 (task_execution.cpp) subtracts ``clock at the end - clock at the start`` of a compute part from
    the walltime left, and a negative walltime left means none (``*remaining_time < 0``). When the part ends exactly
    at the walltime, the difference of the two clock values decides: 0 (``composed-profiles-c`` job 4) or a few ulps
    above cuts the next part at once (COMPLETED_WALLTIME_REACHED at the walltime); a few ulps below, the job runs
    every part to its end. The embedded simulator does as Batsim, start time by start time (here the double
    ``(start + 327) - start`` against 327). Seen first as a UPAS job that lowered gears stretch to exactly its
    stretched walltime, run for 1090 s with a walltime of 327 s."""
    outcomes = {}
    for start in (852.575635, 798.967998, 3987.223834, 672.686856, 3819.10932, 2477.68):
        residue = 327.0 - ((start + 327.0) - start)
        state, execution = _walltime_tie(tmp_path, start)
        if residue < 0:
            assert (state, execution) == ("COMPLETED_SUCCESSFULLY", pytest.approx(659.0)), start
        else:
            assert (state, execution) == ("COMPLETED_WALLTIME_REACHED", pytest.approx(327.0)), start
        outcomes[residue < 0] = True
    assert len(outcomes) == 2
