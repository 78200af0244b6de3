"""Hunt 46: an independent oracle of the Paraver export (``wattsched paraver``, analysis/paraver.py) and of the
ESC node statistics (``wattsched node-stats``, analysis/node_states.py).

Nothing here calls the project's readers, writers or statistics to build an expectation: the trace is read
with a strict reader written from Paraver's grammar, and every host's timeline and every statistic is
recomputed from the raw Batsim CSVs with the ``csv`` module.

**Paraver grammar** (REFERENCE.md §4, confirmed in ``bsc-performance-tools/paraver-kernel``):

- header (``utils/traceparser/traceheader.h`` ``parseTraceHeader``): ``#Paraver (<date>):<ftime>[_ns|_ms|_us]:
  <resources>:<nAppl>:<appl>[:<appl>...][,<nComms>]``; the date runs to the first ``)``; an end time without
  ``_`` suffix is in microseconds (``traceTimeUnit = US``); ``<resources>`` is ``0`` or ``N(c1,...,cN)``
  (``resourcemodel.cpp``: N nodes, node i has ci CPUs, CPUs numbered 1.. globally in node order); each
  ``<appl>`` is ``T(t1:n1,...,tT:nT)`` (``processmodel.cpp``: task j has tj threads, all running on node nj;
  0 threads, 0 tasks or, with resources, node 0 are fatal header errors);
- records (``tracebodyio_v1.cpp``): ``1:cpu:appl:task:thread:begin:end:state``,
  ``2:cpu:appl:task:thread:time:type:value[:type:value...]``; appl, task, thread 1-based and inside the
  header's model, cpu 0 (none) or a CPU of the node the thread runs on (``validRecordLocation``), time ≥ 0;
  an invalid record is dropped with "Error reading ... record" (so the trace would silently show less);
  an end of -1 means "open". Paraver's own writer puts events of one thread and time on one line, in the
  order they were recorded; the reader keeps same-time records of a thread in file order (``stable_sort``
  in ``vectorblocks.cpp``), so the last value written at a time is the one in force after it. Records
  must be sorted by time (REFERENCE §4; the no-load reader reads the file in order); begin==end state
  records are dropped (``tracebodyio_v2.cpp``); a thread's states may not overlap (its state at a time
  would depend on the order of the records);
- ``.pcf`` (``pcffileparser.cpp``): lines trimmed, tabs as spaces, ``#`` comments, sections named by a line
  ``DEFAULT_OPTIONS``, ``DEFAULT_SEMANTIC``, ``STATES``, ``STATES_COLOR``, ``EVENT_TYPE``, ``GRADIENT_COLOR``,
  ``GRADIENT_NAMES``; ``STATES`` lines ``<id> <label>``, ``STATES_COLOR`` lines ``<id> {r,g,b}``,
  ``EVENT_TYPE`` lines ``<gradient> <type> <label>`` then ``VALUES`` then ``<value> <label>``; ids, types and
  values are read with ``std::stoi`` (a 32-bit int: a larger one is silently ignored), a line without a
  label is silently ignored; a line of blanks only is undefined behaviour (``trimAndCleanTabs``);
- ``.row`` (``rowfileparser.cpp``): ``LEVEL <CPU|NODE|THREAD|TASK|APPL|SYSTEM|WORKLOAD> SIZE <n>`` then n
  names.

**Batsim files** (/work/shared/batsim-reference/README.md, behaviours 28-33, 40): ``_pstate_changes.csv``
starts with one row per initial pstate (time 0), then per request a row ``-2`` (switch-off: the hosts *switch
off*) or ``-1`` (a boot of sleeping hosts: *switch on*; a DVFS change of hosts that are on), then a row with
the pstate reached when it completes (asleep, booted, or the new DVFS pstate); its times are ``%g``, so the
exact one is the matching ``p`` row of ``_consumed_energy.csv`` (one per request and one per completion, in
the same order, 6 decimals). ``_jobs.csv``: a job *runs* on ``allocated_resources`` from ``starting_time`` to
``finish_time``, but a job of no work really ends at its start (its JOB_COMPLETED comes at that time,
behaviour 8) while its ``execution_time`` is Batsim's 1e-5 s (behaviour 17): the next job may start on the
host, or the host switch off, before its printed finish, and it ends there (:func:`_clip_zero_work`). A host
that is on and runs no job is *idle*. The run ends at the last time the files give with 6 decimals (jobs,
``_consumed_energy.csv``, the exact pstate changes; ``_machine_states.csv`` holds nothing else and prints
``%g``, 155.745 for 155.744681). The timeline is checked against ``_machine_states.csv``'s counts
(:func:`check_against_machine_states`). A job is named by its ``job_id`` (a replacement by the job it replaced,
:func:`job_label`); the trace's job-id event value is read through the ``.pcf``'s VALUES label.

**The trace of a run** (project's layout, ``analysis/paraver.py``): one node of one CPU per host, one
application with task h+1 of one thread on node h+1, the five states 0-4 of ``analysis/node_states.py``,
events 1000 (job id, 0 when none) and 1001 (pstate). Every state and event value the ``.prv`` uses must be
named in the ``.pcf`` (the brief's rule: Paraver shows an unnamed value as a bare number).

**ESC statistics** (ESC paper, energy-saving-cluster_ESC.txt): the five states of §2.1 (standby, powering on,
idle, loaded, powering off); §2.7's statistics ("maximum number of active nodes, number of shutdowns ...,
active time, idle time, total time") and table 2 ("Number of shutdowns", "Maximum active nodes", "Active
time", "Inactive time", "Active time with average of active intervals per node", "Inactive time with average
of inactive intervals per node", each as total and per node = total / nodes; active + inactive = nodes ×
simulated time, 24010 d + 32782 d = 57 × 996.4 d, and "active" is "the time that the nodes are powered on":
everything but standby), table 1 (time to process all jobs and its energy, against the run without ESC).
Definitions used here (:func:`statistics`):

- number of shutdowns: the hosts of every ``-2`` row (one "node turn-off start" per host, §2.6), also a
  switch-off that takes no time;
- maximum active nodes: the largest number of hosts not in standby over any interval of positive length;
- active / inactive time: node-seconds not in / in standby over ``[0, end]``;
- "... with average of active (inactive) intervals per node": for each host, the mean length of its maximal
  runs of active (standby) time, summed over the hosts (a host without such a run adds 0); per node: / nodes
  (table 2's total 34 d 14 h 20 m 42 s is 57 × its per-node 14 h 34 m 2 s);
- mean time between shutdowns of a node (not in the paper: the project's own row): for each host with two
  shutdowns or more the mean gap between its consecutive switch-off starts, averaged over those hosts;
- time in each state: node-seconds;
- makespan: the last ``finish_time`` of a job that ran (Batsim's ``makespan``); energy: the cumulative energy
  of ``_consumed_energy.csv`` at the makespan (last row of that time; linear between rows; past the last row
  at its ``wattmin``); ratios against a baseline: makespan / baseline makespan, energy / baseline energy.

Tolerances: node-stats' JSON equals these within a relative 1e-9; its text rounds durations to the second
(so within 0.5 s), the energy to 1e-4 MWh (within 5e-5). Trace times are integer microseconds: every time of
the files has 6 decimals at most, so ``round(t * 1e6)`` is exact.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REFERENCE
from wattsched.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden"
OFF, RUNNING, IDLE, SWITCHING_ON, SWITCHING_OFF = 0, 1, 2, 3, 4
STATE_NAMES = {OFF: "off", RUNNING: "running", IDLE: "idle", SWITCHING_ON: "switching on",
               SWITCHING_OFF: "switching off"}
JOB_EVENT, PSTATE_EVENT = 1000, 1001
INT32_MAX = 2**31 - 1


class TraceError(AssertionError):
    """A trace Paraver would reject or misread."""


# ============================================================================ strict Paraver reader
@dataclass
class Trace:
    unit_per_s: int
    end: int
    cpus_per_node: list[int]
    #: per application, per task: (threads, node 1-based)
    appls: list[list[tuple[int, int]]]
    #: (appl, task, thread) -> [(begin, end, state)] in file order
    states: dict[tuple[int, int, int], list[tuple[int, int, int]]] = field(default_factory=dict)
    #: (appl, task, thread) -> [(time, type, value)] in file order
    events: dict[tuple[int, int, int], list[tuple[int, int, int]]] = field(default_factory=dict)
    state_labels: dict[int, str] = field(default_factory=dict)
    state_colours: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    event_labels: dict[int, str] = field(default_factory=dict)
    event_values: dict[int, dict[int, str]] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    rows: dict[str, list[str]] = field(default_factory=dict)

    @property
    def nb_cpus(self) -> int:
        return sum(self.cpus_per_node)

    def threads(self) -> list[tuple[int, int, int]]:
        return [(a, t, th) for a, tasks in enumerate(self.appls, 1) for t, (n, _) in enumerate(tasks, 1)
                for th in range(1, n + 1)]


_UNIT = {"": 10**6, "_us": 10**6, "_ns": 10**9, "_ms": 10**3}
_HEADER = re.compile(r"#Paraver \((?P<date>[^)]*)\):(?P<end>\d+)(?P<unit>_ns|_us|_ms)?:(?P<rest>.*)")
_INT = re.compile(r"0|[1-9]\d*")


def _count(text: str, what: str, minimum: int = 1) -> int:
    if not _INT.fullmatch(text) or int(text) < minimum:
        raise TraceError(f"header: {what} {text!r} is not an integer ≥ {minimum}")
    return int(text)


def parse_header(line: str) -> Trace:
    m = _HEADER.fullmatch(line)
    if not m:
        raise TraceError(f"header: not '#Paraver (date):end:resources:nAppl:appl...': {line[:80]!r}")
    if not re.fullmatch(r"\d\d/\d\d/\d\d(\d\d)? at \d\d:\d\d", m["date"]):
        raise TraceError(f"header: date {m['date']!r} is not 'dd/mm/yy at HH:MM'")
    rest = m["rest"]
    # resources: 0 or N(c1,...,cN)
    r = re.match(r"(?:0|(\d+)\(([^)]*)\)):", rest)
    if not r:
        raise TraceError(f"header: resources {rest[:40]!r} are not '0' or 'N(c1,...,cN)'")
    cpus: list[int] = []
    if r[1] is not None:
        nodes = _count(r[1], "number of nodes")
        cpus = [_count(c, "CPUs of a node") for c in r[2].split(",")]
        if len(cpus) != nodes:
            raise TraceError(f"header: {nodes} nodes but {len(cpus)} CPU counts")
    rest = rest[r.end():]
    a = re.match(r"(\d+):", rest)
    if not a:
        raise TraceError(f"header: number of applications missing in {rest[:40]!r}")
    nb_appl = _count(a[1], "number of applications")
    rest = rest[a.end():]
    appls = []
    for k in range(nb_appl):
        am = re.match(r"(\d+)\(([^)]*)\)", rest)
        if not am:
            raise TraceError(f"header: application {k + 1} {rest[:40]!r} is not 'T(t1:n1,...)'")
        nb_tasks = _count(am[1], "number of tasks")
        tasks = []
        for spec in am[2].split(","):
            tn = spec.split(":")
            if len(tn) != 2:
                raise TraceError(f"header: task {spec!r} is not 'threads:node'")
            threads = _count(tn[0], "threads of a task")
            node = _count(tn[1], "node of a task", 1 if cpus else 0)
            if cpus and node > len(cpus):
                raise TraceError(f"header: task on node {node} of {len(cpus)}")
            tasks.append((threads, node))
        if len(tasks) != nb_tasks:
            raise TraceError(f"header: application {k + 1} has {nb_tasks} tasks but {len(tasks)} specs")
        appls.append(tasks)
        rest = rest[am.end():]
        if k < nb_appl - 1:
            if not rest.startswith(":"):
                raise TraceError(f"header: {nb_appl} applications announced, {k + 1} given")
            rest = rest[1:]
    if rest and not re.fullmatch(r",0", rest):  # communicators: none expected (no c: lines are written)
        raise TraceError(f"header: unexpected trailing {rest!r}")
    return Trace(_UNIT[m["unit"] or ""], int(m["end"]), cpus, appls)


def _ints(fields: list[str], line_no: int) -> list[int]:
    out = []
    for f in fields:
        if not _INT.fullmatch(f):
            raise TraceError(f".prv line {line_no}: field {f!r} is not a non-negative integer")
        out.append(int(f))
    return out


def parse_prv(text: str) -> Trace:
    if not text.endswith("\n"):
        raise TraceError(".prv: last line not terminated")
    lines = text.split("\n")[:-1]
    if not lines:
        raise TraceError(".prv: empty")
    trace = parse_header(lines[0])
    node_of_cpu = [n for n, c in enumerate(trace.cpus_per_node, 1) for _ in range(c)]
    last_time = 0
    for no, line in enumerate(lines[1:], 2):
        if line.startswith("#"):
            continue
        fields = line.split(":")
        if fields[0] not in ("1", "2"):
            raise TraceError(f".prv line {no}: record kind {fields[0]!r} (only 1 state, 2 event written)")
        if fields[0] == "1" and len(fields) != 8:
            raise TraceError(f".prv line {no}: a state record has 8 fields, not {len(fields)}")
        if fields[0] == "2" and (len(fields) < 8 or len(fields) % 2):
            raise TraceError(f".prv line {no}: an event record has 6 + 2k fields (k ≥ 1), not {len(fields)}")
        kind, cpu, appl, task, thread, time, *more = _ints(fields, no)
        if not 1 <= appl <= len(trace.appls):
            raise TraceError(f".prv line {no}: appl {appl} outside 1..{len(trace.appls)}")
        tasks = trace.appls[appl - 1]
        if not 1 <= task <= len(tasks):
            raise TraceError(f".prv line {no}: task {task} outside 1..{len(tasks)}")
        threads, node = tasks[task - 1]
        if not 1 <= thread <= threads:
            raise TraceError(f".prv line {no}: thread {thread} outside 1..{threads}")
        if cpu > trace.nb_cpus:
            raise TraceError(f".prv line {no}: cpu {cpu} beyond {trace.nb_cpus}")
        if cpu and node_of_cpu[cpu - 1] != node:
            raise TraceError(f".prv line {no}: cpu {cpu} is on node {node_of_cpu[cpu - 1]}, the thread on {node}")
        if time < last_time:
            raise TraceError(f".prv line {no}: time {time} before {last_time}: records not sorted by time")
        last_time = time
        key = (appl, task, thread)
        if kind == 1:
            end, state = more
            if end <= time:
                raise TraceError(f".prv line {no}: state record ends at {end}, not after its begin {time}")
            if end > trace.end:
                raise TraceError(f".prv line {no}: state ends at {end}, after the trace end {trace.end}")
            trace.states.setdefault(key, []).append((time, end, state))
        else:
            if time > trace.end:
                raise TraceError(f".prv line {no}: event at {time}, after the trace end {trace.end}")
            for etype, value in zip(more[::2], more[1::2]):
                if etype >= 2**32 or value >= 2**63:
                    raise TraceError(f".prv line {no}: event {etype}:{value} out of range")
                trace.events.setdefault(key, []).append((time, etype, value))
    for key, ivs in trace.states.items():
        ordered = sorted(ivs)
        for (a1, b1, s1), (a2, b2, s2) in zip(ordered, ordered[1:]):
            if a2 < b1:
                raise TraceError(f".prv: thread {key} has overlapping states [{a1},{b1}):{s1} and [{a2},{b2}):{s2}")
    return trace


_PCF_SECTIONS = ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC", "STATES", "STATES_COLOR", "EVENT_TYPE", "GRADIENT_COLOR",
                 "GRADIENT_NAMES")


def _label_line(line: str, where: str) -> tuple[int, str]:
    parts = line.split(" ", 1)
    if len(parts) != 2 or not parts[1].strip():
        raise TraceError(f".pcf {where}: {line!r} has no label (Paraver ignores it)")
    if not re.fullmatch(r"-?\d+", parts[0]) or abs(int(parts[0])) > INT32_MAX:
        raise TraceError(f".pcf {where}: {parts[0]!r} is not a 32-bit integer (std::stoi)")
    return int(parts[0]), parts[1].strip()


def parse_pcf(text: str, trace: Trace) -> None:
    section = None
    current_types: list[int] = []
    in_values = False
    for no, raw in enumerate(text.split("\n"), 1):
        if not raw:
            continue
        if not raw.strip():
            raise TraceError(f".pcf line {no}: a line of blanks only (undefined behaviour in Paraver's parser)")
        line = re.sub(r" +", " ", raw.strip().replace("\t", " "))
        if line.startswith("#"):
            continue
        if line in _PCF_SECTIONS:
            section, current_types, in_values = line, [], False
            continue
        where = f"line {no} ({section})"
        if section is None:
            raise TraceError(f".pcf line {no}: {line!r} outside any section")
        if section in ("DEFAULT_OPTIONS", "DEFAULT_SEMANTIC"):
            key, _, value = line.partition(" ")
            if not value:
                raise TraceError(f".pcf {where}: option {key!r} without value")
            trace.options[key] = value
        elif section == "STATES":
            k, label = _label_line(line, where)
            if k in trace.state_labels:
                raise TraceError(f".pcf {where}: state {k} declared twice")
            trace.state_labels[k] = label
        elif section == "STATES_COLOR":
            m = re.fullmatch(r"(\d+) \{(\d+),(\d+),(\d+)\}", line)
            if not m or max(int(m[i]) for i in (2, 3, 4)) > 255:
                raise TraceError(f".pcf {where}: {line!r} is not '<id> {{r,g,b}}' with 0-255")
            trace.state_colours[int(m[1])] = (int(m[2]), int(m[3]), int(m[4]))
        elif section == "EVENT_TYPE":
            if line == "VALUES":
                if not current_types or in_values:
                    raise TraceError(f".pcf {where}: VALUES without event type")
                in_values = True
            elif not in_values:
                m = re.fullmatch(r"(\d+) (\d+) (.+)", line)
                if not m or int(m[2]) > INT32_MAX:
                    raise TraceError(f".pcf {where}: {line!r} is not '<gradient> <type> <label>'")
                etype = int(m[2])
                if etype in trace.event_labels:
                    raise TraceError(f".pcf {where}: event type {etype} declared twice")
                trace.event_labels[etype] = m[3]
                trace.event_values.setdefault(etype, {})
                current_types.append(etype)
            else:
                value, label = _label_line(line, where)
                for etype in current_types:
                    if value in trace.event_values[etype]:
                        raise TraceError(f".pcf {where}: value {value} of type {etype} declared twice")
                    trace.event_values[etype][value] = label


def parse_row(text: str, trace: Trace) -> None:
    lines = text.split("\n")
    i = 0
    sizes = {"CPU": trace.nb_cpus, "NODE": len(trace.cpus_per_node), "THREAD": len(trace.threads()),
             "TASK": sum(len(t) for t in trace.appls), "APPL": len(trace.appls)}
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"LEVEL (CPU|NODE|THREAD|TASK|APPL) SIZE (\d+)", line)
        if not m:
            raise TraceError(f".row line {i}: {line!r} is not 'LEVEL <level> SIZE <n>'")
        level, size = m[1], int(m[2])
        if level in trace.rows:
            raise TraceError(f".row line {i}: level {level} twice")
        if size != sizes[level]:
            raise TraceError(f".row line {i}: {size} {level} names for {sizes[level]} {level} rows of the .prv")
        names = lines[i:i + size]
        if len(names) != size or any(not n.strip() for n in names):
            raise TraceError(f".row line {i}: level {level} needs {size} non-empty names")
        trace.rows[level] = names
        i += size


def read_trace(prefix: Path) -> Trace:
    """The three files, parsed and checked (module docstring); raises TraceError."""
    trace = parse_prv(Path(f"{prefix}.prv").read_text(encoding="utf-8"))
    parse_pcf(Path(f"{prefix}.pcf").read_text(encoding="utf-8"), trace)
    parse_row(Path(f"{prefix}.row").read_text(encoding="utf-8"), trace)
    used_states = {s for ivs in trace.states.values() for *_, s in ivs}
    for s in sorted(used_states):
        if s not in trace.state_labels:
            raise TraceError(f".pcf: state {s} used in the .prv is not in STATES")
        if s not in trace.state_colours:
            raise TraceError(f".pcf: state {s} used in the .prv has no STATES_COLOR")
    for evs in trace.events.values():
        for _, etype, value in evs:
            if etype not in trace.event_labels:
                raise TraceError(f".pcf: event type {etype} used in the .prv is not declared")
            if value not in trace.event_values[etype]:
                raise TraceError(f".pcf: value {value} of event type {etype} used in the .prv is not declared")
    if trace.options.get("UNITS") != {10**6: "MICROSEC", 10**9: "NANOSEC", 10**3: "MILLISEC"}[trace.unit_per_s]:
        raise TraceError(f".pcf: UNITS {trace.options.get('UNITS')!r} is not the header's time unit")
    if "NUM_OF_STATE_COLORS" in trace.options and int(trace.options["NUM_OF_STATE_COLORS"]) != len(trace.state_colours):
        raise TraceError(".pcf: NUM_OF_STATE_COLORS is not the number of STATES_COLOR lines")
    return trace


# ============================================================================ oracle from the raw CSVs
def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _hosts(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split():
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def _g_error(t: float) -> float:
    """Half a unit of the 6th significant digit of ``%g``."""
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(t))) - 5) if t else 0.0


@dataclass
class Timeline:
    nb_hosts: int
    end_s: float
    #: per host: [(begin_s, end_s, state)] covering [0, end], adjacent equal states merged
    states: list[list[tuple[float, float, int]]]
    #: per host: [(time_s, type, value-or-job-id)] in the order they happen (a job's end before the next start)
    events: list[list[tuple[float, int, object]]]
    #: per host: [time_s] of each switch-off request
    shutdowns: list[list[float]]


def timeline(prefix: Path) -> Timeline:
    """Every host's states and events from ``<prefix>_*.csv`` (module docstring)."""
    base = str(prefix)
    schedule = _rows(Path(base + "_schedule.csv"))[0]
    n = int(float(schedule["nb_computing_machines"]))
    jobs = [j for j in _rows(Path(base + "_jobs.csv")) if j["final_state"] != "REJECTED" and j["starting_time"]]
    changes = _rows(Path(base + "_pstate_changes.csv"))
    energy_path = Path(base + "_consumed_energy.csv")
    energy = _rows(energy_path) if energy_path.exists() else []

    # initial pstates: the leading rows at time 0 with a pstate ≥ 0, one per host
    pstate0: dict[int, int] = {}
    k = 0
    while k < len(changes) and float(changes[k]["time"]) == 0 and int(changes[k]["new_pstate"]) >= 0:
        for h in _hosts(changes[k]["machine_id"]):
            assert h not in pstate0, f"host {h} has two initial pstates"
            pstate0[h] = int(changes[k]["new_pstate"])
        k += 1
    assert sorted(pstate0) == list(range(n)), "initial pstate rows do not cover the hosts once"
    requests = changes[k:]
    p_rows = [float(r["time"]) for r in energy if r["event_type"] == "p"]
    if energy:
        assert len(p_rows) == len(requests), (len(p_rows), len(requests))
        for row, t in zip(requests, p_rows):
            assert abs(float(row["time"]) - t) <= _g_error(t) * (1 + 1e-9), (row, t)
        times = p_rows
    else:
        times = [float(r["time"]) for r in requests]

    # power state per host: "on" (idle or running, from the jobs), off, switching on/off
    ON = IDLE
    power: list[list[tuple[float, int]]] = [[(0.0, ON)] for _ in range(n)]
    events: list[list[tuple[float, int, object]]] = [[(0.0, PSTATE_EVENT, pstate0[h])] for h in range(n)]
    shutdowns: list[list[float]] = [[] for _ in range(n)]
    current = [ON] * n
    for row, t in zip(requests, times):
        target = int(row["new_pstate"])
        for h in _hosts(row["machine_id"]):
            state = current[h]
            if target == -2:
                assert state == ON, f"switch-off of host {h} at {t} while {STATE_NAMES[state]}"
                new = SWITCHING_OFF
                shutdowns[h].append(t)
            elif target == -1:
                assert state in (ON, OFF), f"request on host {h} at {t} while {STATE_NAMES[state]}"
                new = SWITCHING_ON if state == OFF else ON
            else:
                new = {SWITCHING_OFF: OFF, SWITCHING_ON: ON, ON: ON}[state]
                events[h].append((t, PSTATE_EVENT, target))
            if new != state:
                power[h].append((t, new))
                current[h] = new

    per_host: list[list[tuple[float, float, str]]] = [[] for _ in range(n)]
    rejected = {(j.get("workload_name", ""), j["job_id"]) for j in _rows(Path(base + "_jobs.csv"))
                if j["final_state"] == "REJECTED"}
    labels = [job_label(j, rejected) for j in jobs]
    assert len(set(labels)) == len(labels), "two jobs that ran have one name"
    for j, label in zip(jobs, labels):
        for h in _hosts(j["allocated_resources"]):
            per_host[h].append((float(j["starting_time"]), float(j["finish_time"]), label))
    end = max([float(j["finish_time"]) for j in jobs] + [float(r["time"]) for r in energy] + list(times) + [0.0])

    states: list[list[tuple[float, float, int]]] = []
    for h in range(n):
        runs = _clip_zero_work(per_host[h], [t for t, s in power[h] if s != ON], h)
        bounds = power[h] + [(end, -1)]
        out: list[tuple[float, float, int]] = []
        for (a, s), (b, _) in zip(bounds, bounds[1:]):
            if b <= a:
                continue
            if s != ON:
                for ja, jb, i in runs:
                    assert jb <= a or ja >= b, f"job {i} runs on host {h} while {STATE_NAMES[s]} [{a}, {b})"
                out.append((a, b, s))
                continue
            t = a
            for ja, jb, _ in runs:
                if jb <= a or ja >= b:
                    continue
                assert ja >= t, f"two jobs at once on host {h} at {ja}"
                out.append((t, ja, IDLE))
                out.append((ja, min(jb, b), RUNNING))
                t = min(jb, b)
            out.append((t, b, IDLE))
        states.append(_merge(out))
        # job events: start (its id) and end (0); at one time the end before the start, pstates in file order
        for a, b, i in runs:
            events[h].append((a, JOB_EVENT, i))
            events[h].append((b, JOB_EVENT, 0))
        events[h].sort(key=lambda e: (e[0], e[1], e[1] == JOB_EVENT and e[2] != 0))
    return Timeline(n, end, states, events, shutdowns)


def job_label(job: dict[str, str], rejected: set[tuple[str, str]]) -> str:
    """The name a job is shown with: its ``job_id``, but a replacement (the project's convention,
    ``wattsched.base.batsim_files.REPLACEMENT_WORKLOAD``: a scheduler that changes a job's walltime or profile
    rejects it and registers ``resized!<workload>.<id>`` or ``<workload>!resized.<id>``) is the job it
    replaced."""
    workload, name = job.get("workload_name", ""), job["job_id"]
    if workload == "resized":
        return name.partition(".")[2]
    if name.startswith("resized.") and (workload, name[len("resized."):]) in rejected:
        return name[len("resized."):]
    return name


#: Batsim gives a job of no work 1e-5 s of execution_time (behaviour 17; its JOB_COMPLETED comes at its start,
#: behaviour 8), printed with 6 decimals: its printed finish may pass the next start on the host by this much.
ZERO_WORK_S = 1e-5 + 5e-7


def _clip_zero_work(jobs: list[tuple[float, float, str]], changes: list[float], host: int) -> list:
    """A host's jobs as running intervals: one job at a time; a job of no work ends at the next thing that
    happens on the host (the next job's start, a switch), not ``ZERO_WORK_S`` later."""
    out = []
    ordered = sorted(jobs)
    for k, (a, b, i) in enumerate(ordered):
        later = [x for x, _, _ in ordered[k + 1:] if x >= a] + [t for t in changes if t >= a]
        if later and min(later) < b:
            assert b - min(later) <= ZERO_WORK_S, f"job {i} on host {host} [{a}, {b}) overlaps {min(later)}"
            b = min(later)
        if b > a:
            out.append((a, b, i))
    return out


def _merge(ivs: list) -> list:
    out: list = []
    for a, b, s in ivs:
        if b <= a:
            continue
        if out and out[-1][2] == s and out[-1][1] == a:
            out[-1] = (out[-1][0], b, s)
        else:
            out.append((a, b, s))
    return out


def energy_at(prefix: Path, t: float) -> float:
    path = Path(f"{prefix}_consumed_energy.csv")
    if not path.exists() or math.isnan(t):
        return math.nan
    rows = [(float(r["time"]), float(r["energy"]), r["wattmin"]) for r in _rows(path)]
    if not rows:
        return math.nan
    at = [e for ti, e, _ in rows if ti == t]
    if at:
        return at[-1]
    if t > rows[-1][0]:
        return rows[-1][1] + float(rows[-1][2]) * (t - rows[-1][0])
    prev = (0.0, 0.0)
    for ti, e, _ in rows:
        if ti > t:
            return prev[1] + (e - prev[1]) * (t - prev[0]) / (ti - prev[0])
        prev = (ti, e)
    raise AssertionError("unreachable")


def makespan(prefix: Path) -> float:
    ends = [float(j["finish_time"]) for j in _rows(Path(f"{prefix}_jobs.csv"))
            if j["final_state"] != "REJECTED" and j["starting_time"]]
    return max(ends) if ends else math.nan


def statistics(prefix: Path, tl: Timeline, baseline: Path | None = None) -> dict:
    """Every value of ``node-stats --json`` (module docstring for the definitions)."""
    n = tl.nb_hosts
    by_state = {s: 0.0 for s in STATE_NAMES}
    active_means, inactive_means, gaps = [], [], []
    for h in range(n):
        runs: dict[bool, list[float]] = {True: [], False: []}
        for a, b, s in tl.states[h]:
            by_state[s] += b - a
        for active, a, b in _groups(tl.states[h]):
            runs[active].append(b - a)
        active_means.append(sum(runs[True]) / len(runs[True]) if runs[True] else 0.0)
        inactive_means.append(sum(runs[False]) / len(runs[False]) if runs[False] else 0.0)
        starts = tl.shutdowns[h]
        if len(starts) > 1:
            gaps.append((starts[-1] - starts[0]) / (len(starts) - 1))
    # active hosts on every interval of positive length: all the changes of a time, then the level
    changes: dict[float, int] = defaultdict(int)
    for ivs in tl.states:
        for active, a, b in _groups(ivs):
            if active:
                changes[a] += 1
                changes[b] -= 1
    level = peak = 0
    for t in sorted(changes):
        level += changes[t]
        if t < tl.end_s:
            peak = max(peak, level)
    active = sum(v for s, v in by_state.items() if s != OFF)
    shutdowns = sum(len(times) for times in tl.shutdowns)
    span = makespan(prefix)
    out = {
        "nb_hosts": n, "end_s": tl.end_s, "makespan_s": span,
        "nb_shutdowns": shutdowns, "nb_shutdowns_per_node": shutdowns / n,
        "max_active_nodes": peak,
        "active_s": active, "active_per_node_s": active / n,
        "inactive_s": by_state[OFF], "inactive_per_node_s": by_state[OFF] / n,
        "mean_active_interval_total_s": sum(active_means), "mean_active_interval_per_node_s": sum(active_means) / n,
        "mean_inactive_interval_total_s": sum(inactive_means),
        "mean_inactive_interval_per_node_s": sum(inactive_means) / n,
        "mean_time_between_shutdowns_s": sum(gaps) / len(gaps) if gaps else math.nan,
        "energy_j": energy_at(prefix, span),
    }
    out.update({f"time_{name.replace(' ', '_')}_s": by_state[s] for s, name in STATE_NAMES.items()})
    if baseline is not None:
        base_span = makespan(baseline)
        base_energy = energy_at(baseline, base_span)
        out.update({"baseline_makespan_s": base_span, "baseline_energy_j": base_energy,
                    "time_ratio": span / base_span if base_span else math.nan,
                    "energy_ratio": out["energy_j"] / base_energy if base_energy else math.nan})
    return out


def _groups(ivs: list[tuple[float, float, int]]) -> list[tuple[bool, float, float]]:
    """Maximal runs of active (not standby) and inactive time: (active, begin, end)."""
    out: list[tuple[bool, float, float]] = []
    for a, b, s in ivs:
        active = s != OFF
        if out and out[-1][0] == active and out[-1][2] == a:
            out[-1] = (active, out[-1][1], b)
        else:
            out.append((active, a, b))
    return out


# ============================================================================ comparison
def check_against_machine_states(prefix: Path, tl: Timeline) -> None:
    """The oracle's own check: after the last ``_machine_states.csv`` row of each printed time, the hosts in
    each state are the oracle's at the latest change that prints as that time (``%g``, behaviour 33)."""
    columns = {"nb_sleeping": OFF, "nb_switching_on": SWITCHING_ON, "nb_switching_off": SWITCHING_OFF,
               "nb_idle": IDLE, "nb_computing": RUNNING}
    last: dict[float, dict[str, str]] = {}
    for row in _rows(Path(f"{prefix}_machine_states.csv")):
        last[float(row["time"])] = row
    bounds = sorted({t for ivs in tl.states for a, b, _ in ivs for t in (a, b)})
    for printed, row in last.items():
        near = [b for b in bounds if abs(b - printed) <= _g_error(printed) * (1 + 1e-9)]
        t = max(near) if near else printed
        if t >= tl.end_s:
            continue  # the state after the end is no interval
        counts = {s: 0 for s in STATE_NAMES}
        for ivs in tl.states:
            counts[next(s for a, b, s in ivs if a <= t < b)] += 1
        assert {c: counts[s] for c, s in columns.items()} == {c: int(row[c]) for c in columns}, (prefix, printed)


def _us(t: float) -> int:
    return round(t * 1e6)


def compare_trace(prefix: Path, tl: Timeline, trace: Trace) -> None:
    """The trace shows ``tl``: one thread per host (task h+1 on node h+1, CPU h+1), every state interval and
    every event, in microseconds."""
    n = tl.nb_hosts
    assert trace.unit_per_s == 10**6
    assert trace.cpus_per_node == [1] * n and trace.appls == [[(1, h) for h in range(1, n + 1)]]
    assert trace.end == _us(tl.end_s), (trace.end, tl.end_s)
    for h in range(n):
        key = (1, h + 1, 1)
        got = _merge(sorted(trace.states.get(key, [])))
        want = _merge([(_us(a), _us(b), s) for a, b, s in tl.states[h]])
        assert got == want, f"{prefix} host {h}: first difference at " + next(
            (f"{g} vs {w}" for g, w in zip(got, want) if g != w), f"lengths {len(got)} vs {len(want)}")
        got_ev = []
        for t, etype, value in trace.events.get(key, []):
            if etype == JOB_EVENT and value:
                value = trace.event_values[JOB_EVENT].get(value, str(value))
            got_ev.append((t, etype, value))
        want_ev = [(_us(t), etype, value) for t, etype, value in tl.events[h]]
        # same-time events of one type keep their order (the last one is in force); types are independent
        for etype in (JOB_EVENT, PSTATE_EVENT):
            g = [e for e in got_ev if e[1] == etype]
            w = [e for e in want_ev if e[1] == etype]
            assert g == w, f"{prefix} host {h} events {etype}: " + next(
                (f"{a} vs {b}" for a, b in zip(g, w) if a != b), f"lengths {len(g)} vs {len(w)}")
    assert trace.state_labels.keys() >= {OFF, RUNNING, IDLE, SWITCHING_ON, SWITCHING_OFF}
    for s, name in STATE_NAMES.items():
        assert trace.state_labels[s].lower().startswith(name), (s, trace.state_labels[s])


def compare_stats(got: dict, want: dict, where: str) -> None:
    assert got.keys() == want.keys(), (where, got.keys() ^ want.keys())
    for k, w in want.items():
        g = got[k]
        if isinstance(w, float) and math.isnan(w):
            assert g is None, (where, k, g)
        elif isinstance(w, int) and not isinstance(w, bool) and k in ("nb_hosts", "nb_shutdowns", "max_active_nodes"):
            assert g == w, (where, k, g, w)
        else:
            assert g == pytest.approx(w, rel=1e-9, abs=1e-9), (where, k, g, w)


# ============================================================================ helpers of the tests
def _cli(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def check_outputs(prefix: Path, out_dir: Path, capsys, baseline: Path | None = None) -> Timeline:
    """``wattsched paraver`` and ``node-stats`` (JSON and text) of ``prefix`` against the oracle."""
    tl = timeline(prefix)
    check_against_machine_states(prefix, tl)
    written = _cli(capsys, "paraver", str(prefix), "-d", str(out_dir)).split()
    stem = out_dir / prefix.name
    assert written == [f"{stem}.prv", f"{stem}.pcf", f"{stem}.row"]
    compare_trace(prefix, tl, read_trace(stem))
    extra = ["--baseline", str(baseline)] if baseline is not None else []
    want = statistics(prefix, tl, baseline)
    compare_stats(json.loads(_cli(capsys, "node-stats", str(prefix), "--json", *extra)), want, str(prefix))
    compare_text(_cli(capsys, "node-stats", str(prefix), *extra), want)
    return tl


def _seconds(text: str) -> float:
    """``24010d 19h 27m 52s`` → seconds (table 2's notation)."""
    m = re.fullmatch(r"(?:(\d+)d )?(\d+)h (\d+)m (\d+)s", text.strip())
    assert m, text
    return int(m[1] or 0) * 86400 + int(m[2]) * 3600 + int(m[3]) * 60 + int(m[4])


def compare_text(text: str, want: dict) -> None:
    """The table of ``node-stats``: each row's total and per-node value within the rounding of its print."""
    n = want["nb_hosts"]
    rows = {"Active time": "active_s", "Inactive time": "inactive_s",
            "Active time with average of active intervals per node": "mean_active_interval_total_s",
            "Inactive time with average of inactive intervals per node": "mean_inactive_interval_total_s"}
    lines = text.splitlines()

    def row(label: str) -> list[str]:
        found = [ln for ln in lines if re.match(re.escape(label) + r"  ", ln)]
        assert len(found) == 1, (label, text)
        return re.split(r" {2,}", found[0][len(label):].strip())

    total, per_node = row("Number of shutdowns")
    assert int(total) == want["nb_shutdowns"] and abs(float(per_node) - want["nb_shutdowns"] / n) <= 0.005 + 1e-12
    assert row("Maximum active nodes") == [f"{want['max_active_nodes']} of {n}"]
    for label, key in rows.items():
        total, per_node = row(label)
        assert abs(_seconds(total) - want[key]) <= 0.5 and abs(_seconds(per_node) - want[key] / n) <= 0.5, label
    (between,) = row("Mean time between shutdowns of a node")
    if math.isnan(want["mean_time_between_shutdowns_s"]):
        assert between == "n/a"
    else:
        assert abs(_seconds(between) - want["mean_time_between_shutdowns_s"]) <= 0.5
    states = re.search(r"time in each state \(node-seconds\): (.*)", text)[1]
    for part in states.split(", "):
        name, value = part.rsplit(" ", 1)
        assert abs(float(value) - want[f"time_{name.replace(' ', '_')}_s"]) <= 0.5, part
    if not math.isnan(want["makespan_s"]):
        m = re.search(r"makespan (.+?) \((\d+) s\), energy to the makespan (\S+)", text)
        assert abs(_seconds(m[1]) - want["makespan_s"]) <= 0.5 and abs(int(m[2]) - want["makespan_s"]) <= 0.5
        if not math.isnan(want["energy_j"]):
            assert abs(float(m[3]) - want["energy_j"] / 3.6e9) <= 5e-5
    if "time_ratio" in want:
        m = re.search(r"time ratio ([\d.]+), energy ratio ([\d.]+)", text)
        assert abs(float(m[1]) - want["time_ratio"]) <= 5e-7 and abs(float(m[2]) - want["energy_ratio"]) <= 5e-5


def _has_switches_or_dvfs(folder: Path) -> bool:
    rows = _rows(folder / "out_pstate_changes.csv")
    return any(int(r["new_pstate"]) < 0 for r in rows)


GOLDEN_CASES = sorted(str(p.relative_to(GOLDEN)) for p in GOLDEN.glob("*/*") if _has_switches_or_dvfs(p))
RECORDINGS = sorted(p.name for p in REFERENCE.iterdir() if (p / "out_jobs.csv").exists())


# ============================================================================ the comparisons
def test_the_cases_are_there():
    assert len(GOLDEN_CASES) >= 25 and len(RECORDINGS) == 14
    assert {"esc/taurus16-demo", "upas/upas16-demo", "upas-shutdown/upas16-demo"} <= set(GOLDEN_CASES)


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_outputs(case, tmp_path, capsys):
    check_outputs(GOLDEN / case / "out", tmp_path, capsys)


@pytest.mark.parametrize("name", RECORDINGS)
def test_real_batsim_recordings(name, tmp_path, capsys):
    check_outputs(REFERENCE / name / "out", tmp_path, capsys)


@pytest.mark.parametrize("name", ["shutdown-boot", "esc-states", "dvfs-energy"])
def test_recordings_without_consumed_energy(name, tmp_path, capsys):
    """Without ``_consumed_energy.csv`` the pstate changes keep their ``%g`` times, exact for these three
    recordings (6.1, 301.52, 14516): the same timeline, no energy."""
    for kind in ("jobs", "schedule", "machine_states", "pstate_changes"):
        (tmp_path / f"out_{kind}.csv").write_bytes((REFERENCE / name / f"out_{kind}.csv").read_bytes())
    out = tmp_path / "trace"
    out.mkdir()
    tl = check_outputs(tmp_path / "out", out, capsys)
    assert tl.states == timeline(REFERENCE / name / "out").states
    assert json.loads(_cli(capsys, "node-stats", str(tmp_path / "out"), "--json"))["energy_j"] is None


@pytest.fixture(scope="module")
def fresh_runs(tmp_path_factory) -> Path:
    """Small runs made as a user would: ``wattsched platform``, ``synth``, ``beta`` and ``run``."""
    d = tmp_path_factory.mktemp("hunt46_runs")

    def cli(*argv: str) -> None:
        assert main(list(argv)) == 0

    with contextlib.redirect_stdout(io.StringIO()):
        cli("platform", "--node", "esc", "--hosts", "8", "--output", str(d / "esc.xml"))
        cli("synth", "--hosts", "8", "--seed", "3", "--days", "1", "--load", "0.5", "--speed", "1e9",
            "--max-runtime", "7200", "--output", str(d / "w_esc.json"))
        cli("run", str(d / "esc.xml"), str(d / "w_esc.json"), "-s", "esc", "-o", '{"idle_s": 600, "period_s": 60}',
            "-e", str(d / "esc" / "out"))
        cli("run", str(d / "esc.xml"), str(d / "w_esc.json"), "-s", "fcfs", "-e", str(d / "fcfs" / "out"))
        cli("platform", "--hosts", "8", "--output", str(d / "taurus.xml"))
        cli("synth", "--hosts", "8", "--seed", "4", "--days", "1", "--load", "0.5", "--max-runtime", "7200",
            "--output", str(d / "w_taurus.json"))
        cli("run", str(d / "taurus.xml"), str(d / "w_taurus.json"), "-s", "energy-bud", "-o", '{"shutdown": true}',
            "-e", str(d / "bud-shutdown" / "out"))
        cli("platform", "--node", "upas", "--hosts", "8", "--output", str(d / "upas.xml"))
        cli("synth", "--hosts", "8", "--seed", "5", "--days", "1", "--load", "0.6", "--speed", "2.3e9",
            "--max-runtime", "7200", "--output", str(d / "w_plain.json"))
        cli("beta", str(d / "w_plain.json"), "--seed", "1", "--output", str(d / "w_upas.json"))
        for name, options in (("upas", "{}"), ("upas-shutdown", '{"wq_threshold": 4, "shutdown": true}')):
            cli("run", str(d / "upas.xml"), str(d / "w_upas.json"), "-s", "upas", "-o", options, "-e",
                str(d / name / "out"), "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs")
    return d


@pytest.mark.parametrize("name", ["esc", "bud-shutdown", "upas", "upas-shutdown"])
def test_fresh_runs(name, fresh_runs, tmp_path, capsys):
    tl = check_outputs(fresh_runs / name / "out", tmp_path, capsys)
    assert sum(map(len, tl.shutdowns)) > 0 or name == "upas"
    if name.startswith("upas"):  # DVFS: pstates other than 0 reached
        assert any(e[1] == PSTATE_EVENT and e[2] not in (0,) for evs in tl.events for e in evs)


def test_fresh_esc_run_against_its_always_on_baseline(fresh_runs, tmp_path, capsys):
    check_outputs(fresh_runs / "esc" / "out", tmp_path, capsys, baseline=fresh_runs / "fcfs" / "out")


# ============================================================================ the reader rejects what Paraver would
GOOD_PRV = """#Paraver (01/01/24 at 00:00):100_ns:2(1,1):1:2(1:1,1:2)
1:1:1:1:1:0:40:0
1:2:1:2:1:0:100:2
2:1:1:1:1:0:1000:7:1001:0
1:1:1:1:1:40:100:1
"""
GOOD_PCF = """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
NUM_OF_STATE_COLORS 3

STATES
0    Off
1    Running
2    Idle

STATES_COLOR
0    {127,127,127}
1    {214,39,40}
2    {44,160,44}

EVENT_TYPE
0    1000    Job id
VALUES
0      none
7      job 7

EVENT_TYPE
0    1001    Pstate
VALUES
0      pstate 0
"""
GOOD_ROW = "LEVEL CPU SIZE 2\na\nb\n\nLEVEL NODE SIZE 2\na\nb\n\nLEVEL THREAD SIZE 2\na\nb\n"


def _write(tmp_path: Path, prv: str = GOOD_PRV, pcf: str = GOOD_PCF, row: str = GOOD_ROW) -> Path:
    for ext, text in ((".prv", prv), (".pcf", pcf), (".row", row)):
        (tmp_path / f"t{ext}").write_text(text)
    return tmp_path / "t"


def test_the_reader_takes_a_good_trace(tmp_path):
    trace = read_trace(_write(tmp_path))
    assert trace.unit_per_s == 10**9 and trace.end == 100 and trace.nb_cpus == 2
    assert trace.states[(1, 1, 1)] == [(0, 40, 0), (40, 100, 1)]
    assert trace.events[(1, 1, 1)] == [(0, 1000, 7), (0, 1001, 0)]


@pytest.mark.parametrize("what,old,new,file", [
    ("nodes and CPU counts differ", "2(1,1):1", "3(1,1):1", "prv"),
    ("tasks and their specs differ", ":1:2(1:1,1:2)", ":1:3(1:1,1:2)", "prv"),
    ("a task on node 0", "2(1:1,1:2)", "2(1:1,1:0)", "prv"),
    ("two applications announced, one given", "(1,1):1:2", "(1,1):2:2", "prv"),
    ("a 0-based application", "1:2:1:2:1:0:100:2", "1:2:0:2:1:0:100:2", "prv"),
    ("a CPU beyond the resources", "1:2:1:2:1:0:100:2", "1:3:1:2:1:0:100:2", "prv"),
    ("a CPU of another node than the thread's", "1:2:1:2:1:0:100:2", "1:1:1:2:1:0:100:2", "prv"),
    ("a thread beyond its task", "1:2:1:2:1:0:100:2", "1:2:1:2:2:0:100:2", "prv"),
    ("begin == end", "1:2:1:2:1:0:100:2", "1:2:1:2:1:0:0:2", "prv"),
    ("overlapping states on one thread", "1:1:1:1:1:40:100:1", "1:1:1:1:1:39:100:1", "prv"),
    ("records not sorted by time", "1:1:1:1:1:0:40:0\n1:2:1:2:1:0:100:2\n2:1:1:1:1:0:1000:7:1001:0\n1:1:1:1:1:40:100:1",
     "1:1:1:1:1:40:100:1\n1:1:1:1:1:0:40:0\n1:2:1:2:1:0:100:2\n2:1:1:1:1:0:1000:7:1001:0", "prv"),
    ("a time after the trace end", "1:1:1:1:1:40:100:1", "1:1:1:1:1:40:101:1", "prv"),
    ("a time that is not an integer", "1:1:1:1:1:40:100:1", "1:1:1:1:1:40.5:100:1", "prv"),
    ("an event without value", "2:1:1:1:1:0:1000:7:1001:0", "2:1:1:1:1:0:1000:7:1001", "prv"),
    ("a state the .pcf does not name", "1:2:1:2:1:0:100:2", "1:2:1:2:1:0:100:4", "prv"),
    ("an event value the .pcf does not name", "1000:7", "1000:8", "prv"),
    ("an event type the .pcf does not name", "1001:0", "1002:0", "prv"),
    ("a state without colour", "2    {44,160,44}\n", "", "pcf"),
    ("a value line without label", "7      job 7", "7", "pcf"),
    ("a line of blanks", "\nSTATES\n", "\n   \nSTATES\n", "pcf"),
    ("UNITS not the header's", "NANOSEC", "MICROSEC", "pcf"),
    ("a value beyond std::stoi", "0      none", "0      none\n4294967296      big", "pcf"),
    ("fewer names than CPUs", "LEVEL CPU SIZE 2\na\nb\n", "LEVEL CPU SIZE 1\na\n", "row"),
    ("more names than threads", "LEVEL THREAD SIZE 2\na\nb\n", "LEVEL THREAD SIZE 3\na\nb\nc\n", "row"),
])
def test_the_reader_rejects(what, old, new, file, tmp_path):
    texts = {"prv": GOOD_PRV, "pcf": GOOD_PCF, "row": GOOD_ROW}
    assert old in texts[file], what
    texts[file] = texts[file].replace(old, new, 1)
    with pytest.raises(TraceError):
        read_trace(_write(tmp_path, texts["prv"], texts["pcf"], texts["row"]))


def test_the_comparison_sees_a_wrong_state_or_event(tmp_path, capsys):
    """A trace of shutdown-boot with one state or one event changed no longer matches the oracle."""
    prefix = REFERENCE / "shutdown-boot" / "out"
    _cli(capsys, "paraver", str(prefix), "-d", str(tmp_path))
    tl = timeline(prefix)
    prv = (tmp_path / "out.prv").read_text()
    compare_trace(prefix, tl, read_trace(tmp_path / "out"))
    state_line = next(ln for ln in prv.splitlines() if ln.startswith("1:") and ln.endswith(":4"))
    event_line = next(ln for ln in prv.splitlines() if ":1000:" in ln and not ln.endswith(":0"))
    for old, new in ((state_line, state_line[:-1] + "3"), (event_line, event_line.rsplit(":", 1)[0] + ":0")):
        (tmp_path / "out.prv").write_text(prv.replace(old + "\n", new + "\n", 1))
        with pytest.raises(AssertionError):
            compare_trace(prefix, tl, read_trace(tmp_path / "out"))


# ============================================================================ regressions of hunt 46
def test_numeric_job_ids_are_named_in_the_pcf(tmp_path, capsys):
    """Every value of event 1000 in the .prv has a VALUES line (it had none when every job id is a number)."""
    _cli(capsys, "paraver", str(REFERENCE / "shutdown-boot" / "out"), "-d", str(tmp_path))
    trace = read_trace(tmp_path / "out")
    assert {v: trace.event_values[JOB_EVENT][v] for v in (1, 2, 3, 4, 5)} == {k: str(k) for k in range(1, 6)}


def test_the_end_is_the_last_exact_time_not_a_rounded_g_time(tmp_path, capsys):
    """composed-profiles-c ends at 155.744681 (its last job's kill); _machine_states.csv prints 155.745."""
    prefix = REFERENCE / "composed-profiles-c" / "out"
    _cli(capsys, "paraver", str(prefix), "-d", str(tmp_path))
    assert parse_prv((tmp_path / "out.prv").read_text()).end == 155744681
    assert json.loads(_cli(capsys, "node-stats", str(prefix), "--json"))["end_s"] == 155.744681


def test_the_end_past_a_million_seconds(tmp_path, capsys):
    """A run ending at 1235238 s (its job's end): %g prints 1.23524e+06, 2 s later."""
    platform, workload = tmp_path / "esc2.xml", tmp_path / "late.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 100e9,
                                                                    "com": 0}},
                                    "jobs": [{"id": 1, "subtime": 1234577, "res": 2, "profile": "c"}]}))
    _cli(capsys, "platform", "--node", "esc", "--hosts", "2", "--output", str(platform))
    _cli(capsys, "run", str(platform), str(workload), "-s", "esc", "-o", '{"period_s": 7, "idle_s": 100}',
         "-e", str(tmp_path / "late" / "out"))
    prefix = tmp_path / "late" / "out"
    assert (tmp_path / "late" / "out_machine_states.csv").read_text().splitlines()[-1].startswith("1.23524e+06,")
    assert json.loads(_cli(capsys, "node-stats", str(prefix), "--json"))["end_s"] == 1235238.0
    _cli(capsys, "paraver", str(prefix), "-d", str(tmp_path))
    assert parse_prv((tmp_path / "out.prv").read_text()).end == 1235238 * 10**6
    assert check_outputs(prefix, tmp_path, capsys).end_s == 1235238.0


def test_a_job_of_no_work_does_not_hide_the_next_job(tmp_path, capsys):
    """simultaneous-events: on host 2, job 10 (no work: 1e-5 s printed) and job 11 start at 100; job 11 runs
    until 200. The job event in force on host 2 over (100, 200) is job 11 (it was 0 from 100.00001)."""
    _cli(capsys, "paraver", str(REFERENCE / "simultaneous-events" / "out"), "-d", str(tmp_path))
    trace = parse_prv((tmp_path / "out.prv").read_text())
    jobs = [(t, v) for t, etype, v in trace.events[(1, 3, 1)] if etype == JOB_EVENT]
    # job 3 ends at 100, job 11 runs from 100 to 200, job 12 starts at 200
    assert [(t, v) for t, v in jobs if 100_000_000 <= t <= 200_000_000] == [
        (100_000_000, 0), (100_000_000, 11), (200_000_000, 0), (200_000_000, 12)]


def test_a_job_of_no_work_before_a_switch_off_shows_no_job(tmp_path, capsys):
    """A job of no work on host 0 at 161.52, switched off at once (energy-bud with shutdown): no job event
    while the host switches off (job 1 was shown from 161.52 to 161.52001)."""
    _cli(capsys, "platform", "--hosts", "2", "--output", str(tmp_path / "t2.xml"))
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 2, "profiles": {"z": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
                                  "c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
        "jobs": [{"id": 1, "subtime": 10, "res": 1, "profile": "z", "walltime": 100},
                 {"id": 2, "subtime": 1000, "res": 1, "profile": "c", "walltime": 100}]}))
    _cli(capsys, "run", str(tmp_path / "t2.xml"), str(tmp_path / "w.json"), "-s", "energy-bud", "-o",
         '{"shutdown": true}', "-e", str(tmp_path / "zw" / "out"))
    assert "161.52,0,-2" in (tmp_path / "zw" / "out_pstate_changes.csv").read_text()
    _cli(capsys, "paraver", str(tmp_path / "zw" / "out"), "-d", str(tmp_path))
    trace = parse_prv((tmp_path / "out.prv").read_text())
    assert [v for _, etype, v in trace.events[(1, 1, 1)] if etype == JOB_EVENT] == [2, 0]
    check_outputs(tmp_path / "zw" / "out", tmp_path, capsys)


def test_switch_offs_that_take_no_time_count_as_shutdowns(tmp_path, capsys):
    """ESC nodes whose switch-off pstate computes its flop at once: 5 host switch-offs, each 0 s long."""
    _cli(capsys, "platform", "--node", "esc", "--hosts", "2", "--output", str(tmp_path / "esc.xml"))
    xml = (tmp_path / "esc.xml").read_text()
    assert xml.count("0.0020833333333333333f") == 2
    (tmp_path / "fast.xml").write_text(xml.replace("0.0020833333333333333f", "1e20f"))
    (tmp_path / "w.json").write_text(json.dumps({
        "nb_res": 2, "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 100e9, "com": 0}},
        "jobs": [{"id": 1, "subtime": 1000, "res": 2, "profile": "c"}, {"id": 2, "subtime": 3000, "res": 1,
                                                                         "profile": "c"}]}))
    _cli(capsys, "run", str(tmp_path / "fast.xml"), str(tmp_path / "w.json"), "-s", "esc", "-o",
         '{"period_s": 60, "idle_s": 100}', "-e", str(tmp_path / "fast" / "out"))
    stats = json.loads(_cli(capsys, "node-stats", str(tmp_path / "fast" / "out"), "--json"))
    assert stats["nb_shutdowns"] == 5 and stats["time_switching_off_s"] == 0
    assert stats["mean_time_between_shutdowns_s"] == ((6660 - 120) / 2 + 1680) / 2
    tl = check_outputs(tmp_path / "fast" / "out", tmp_path, capsys)
    assert tl.shutdowns == [[120.0, 1800.0, 6660.0], [120.0, 1800.0]]
