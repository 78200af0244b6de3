"""The embedded Batsim 4 engine: a discrete-event simulation that speaks the Batsim protocol.

The engine is message-level: :meth:`Simulation.start` returns Batsim's first message
(``SIMULATION_BEGINS``) and :meth:`Simulation.step` takes the scheduler's reply and returns Batsim's
next message, until the reply to ``SIMULATION_ENDS``. Both back ends (in-process and ZeroMQ) drive
this one object. Every rule it follows is a numbered behaviour of
``tests/fixtures/batsim-reference/README.md`` (recordings of real Batsim 4.2.1); the comments cite
them as "(B12)".

Scale: host states live in numpy arrays touched only through the slices of the hosts an event
concerns; platform power is kept as a running sum (idle part + dynamic part of running tasks) and
energy is integrated once per state change, so the cost of an event does not grow with the number
of hosts it does not touch. SimGrid's lazy billing (B42) differs from that integral only for the
hosts whose power changes without being read; those are tracked per job (see ``_start_leaf``).

Time is SimGrid's clock (B38, B43): every execution (a job's compute part, a switch's one flop)
and every sleep (submitter, walltime, delay part, CALL_ME_LATER, a reply reaching its timestamp, B5)
is an action of :class:`~wattsched.simulator.clock.StepClock`, which computes SimGrid 3.32's solver
steps to the double, lazily. One message holds the events of one solver step; events of a later step
come in a later message even when its clock prints the same (or is the very same double), after the
scheduler's reply to the first (B43).

Event order inside one step (B7-B12, B37): *timers* (job submissions, requested calls) come first
in the order their wait began, then *completions* (job ends, walltime ends, switch ends) in the order
their executions started. Results of a reply (ANSWER, DVFS acknowledgements, kills) are sent in the
next message with the same ``now`` (B8).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import operator
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final, Iterable, Iterator

import numpy as np
from procset import ProcSet

from wattsched.simulator.clock import WAITER_MIN_SLEEP, Action, Entry, StepClock, submitter_sleep
from wattsched.simulator.platform import Platform
from wattsched.simulator.rows import Rows
from wattsched.simulator.workload import (
    ComposedProfile, DelayProfile, Job, ParallelProfile, Profile, Workload, is_json_int, is_json_number, parse_job,
    parse_profile,
)
from wattsched.base.errors import InputError, ProtocolError, counted
from wattsched.base.limits import limit, limit_hint
from wattsched.base.hostsets import from_sorted_ids, ids_array, intervals, parse_canonical as parse_hosts

#: Batsim 4.2.1 jobs.cpp Job::from_json: what it replaces by "id":"<full id>" in a job's serialised object
_ID_FIELD: Final = re.compile(r'"id"\s*:\s*(?:"*[^(,|})]*"*)\s*')

log = logging.getLogger(__name__)

BATSIM_VERSION = "v4.2.1"
#: Batsim's epsilon for the execution time of a zero-work job in ``_jobs.csv`` (B17).
ZERO_JOB_EXECUTION_S = 1e-5

_BATSIM_CONFIG = {
    "redis-enabled": False,
    "redis-hostname": "127.0.0.1",
    "redis-port": 6379,
    "redis-prefix": "default",
    "profiles-forwarded-on-submission": False,
    "dynamic-jobs-enabled": False,
    "dynamic-jobs-acknowledged": False,
    "profile-reuse-enabled": False,
    "sched-config": "",
    "forward-unknown-events": False,
}


def r6(value: float) -> float:
    """A double as Batsim prints it (``%f``, B4), parsed back."""
    return float(f"{value:.6f}")


class MachineState(IntEnum):
    """Host states of ``_machine_states.csv`` and of ``time_<state>`` in ``_schedule.csv``."""

    IDLE = 0
    COMPUTING = 1
    SLEEPING = 2
    SWITCHING_ON = 3
    SWITCHING_OFF = 4
    UNAVAILABLE = 5


# the states as plain ints of module names for the hot paths: an attribute of an Enum class is looked up through its
# metaclass, and numpy, given an enum member, probes its class for the array protocols through it too (issue 15:
# 3 % of the simulator's time with a shutdown, in the switches' bookkeeping)
_IDLE, _COMPUTING, _SLEEPING, _SWITCHING_ON, _SWITCHING_OFF = (
    int(MachineState.IDLE), int(MachineState.COMPUTING), int(MachineState.SLEEPING), int(MachineState.SWITCHING_ON),
    int(MachineState.SWITCHING_OFF))
#: the number of states (``len(MachineState)``, a metaclass call)
_NB_STATES = len(MachineState)
#: :meth:`Simulation._set_machine_state` sums the times of at most this many hosts of one state in Python, and
#: :meth:`Simulation._set_pstate` counts the old pstates of at most this many hosts in Python (numpy above)
UNIFORM_MAX_HOSTS = 256


_STOI = re.compile(r"\s*[+-]?\d+")


def _stoi(x: Any) -> int | None:
    """``std::stoi``: the leading integer of a string (``"1abc"`` is 1), None when there is none."""
    m = _STOI.match(x) if isinstance(x, str) else None
    return int(m.group()) if m else None


def _check_size(data: dict, etype: str, sizes: tuple[int, ...]) -> None:
    """Batsim's ``data_object.MemberCount()`` checks (``protocol.cpp`` handle_*): extra fields abort."""
    if len(data) not in sizes:
        raise ProtocolError(f"{etype}: field 'data' must have {' or '.join(map(str, sizes))} members, got "
                            f"{sorted(data)} (Batsim aborts)")


class JobStatus(IntEnum):
    PENDING = -1  # not submitted yet
    SUBMITTED = 0
    RUNNING = 1
    DONE = 2
    REJECTED = 3


#: Phases of the clock's entries: at one step, timers come before completions (B9, B37); inside a
#: phase, entries sort by ``order`` (when the wait began, when the job or switch request started),
#: then by version (a switch request's host groups, in creation order).
_TIMER, _COMPLETION = 0, 1
#: Kinds of the clock's actions (``Action.kind``).
_EXEC, _SLEEP, _SUBMIT, _CALL, _SWITCH, _REPLY = range(6)
_step_order = operator.itemgetter(1, 2, 3)


def _keyed_order(item: tuple[Entry, dict]) -> tuple[int, int, int]:
    """The order of an event inside one step: its action's phase, order, version (B9, B37)."""
    entry = item[0]
    return entry[1], entry[2], entry[3]


def _switch_job_order(unread: int) -> Any:
    """The order of a step's events when switches and jobs end together (see
    :meth:`Simulation._unread_hosts`): timers first (B37); a switch's message reaches Batsim's server
    in sub-round 2, a job's in sub-round 1 + the hosts it reads (0, 1, 2 or more); one sub-round
    keeps the start order."""
    job_round = 1 + min(unread, 2)

    def key(item: tuple[Entry, dict]) -> tuple[int, int, int, int]:
        entry = item[0]
        sub_round = 2 if entry[_ACTION].kind == _SWITCH else job_round
        return entry[1], sub_round, entry[2], entry[3]
    return key


#: What :meth:`Simulation._job_part_ended` says when the job's next part starts (compared by identity).
_GOES_ON: tuple[str, int] = ("", 0)
#: The smallest rate of a task (the smallest positive double): a task whose rate underflows to 0 (its time beyond a
#: double, e.g. 1e9 flops at 1e-320 flop/s) ends at +inf, unless its walltime or a DVFS change ends it earlier.
_MIN_RATE: Final = math.ulp(0.0)
#: Solver steps in a row that neither move the clock nor produce an event after which the engine
#: gives up (:class:`EngineStalled`): each such step ends an action, so a real run has a handful.
STALL_STEPS: Final = 10_000
_KIND_NAMES: Final = ("execution", "sleep", "submitter sleep", "CALL_ME_LATER sleep", "switch", "reply sleep")


class SimulatorFault(RuntimeError):
    """An internal error of the engine while it simulates up to its next message: a bug of the
    simulator, not of the inputs or of the scheduler's reply (drivers report a reply's faults as
    :class:`~wattsched.base.errors.ProtocolError`; this one keeps the traceback of its cause)."""


class EngineStalled(SimulatorFault):
    """The engine's internal error: its clock no longer moves (a bug of the simulator, not of the
    inputs or of the scheduler). The message gives the time, the solver step and the pending actions."""


#: The action's field of a clock entry (:data:`~wattsched.simulator.clock.Entry`).
_ACTION: Final = 4


def host_index(ps: ProcSet) -> slice | np.ndarray:
    """A numpy indexer of the hosts of ``ps``: a slice (a view, no copy) for one interval."""
    itvs = ps._itvs  # procset 1.x's sorted intervals (see wattsched.base.hostsets)
    if len(itvs) == 1:
        return slice(itvs[0][0], itvs[0][1] + 1)
    return ids_array(ps)


@dataclass
class _Leaf:
    """One executable part of a profile tree, with the composed ancestors that lead to it."""

    profile: DelayProfile | ParallelProfile
    path: tuple[tuple[str, int], ...]  # (composed profile name, current_task_index) from the root
    ret: int


def _flatten(profile: Any, path: tuple[tuple[str, int], ...] = ()) -> list[_Leaf]:
    """Composed profiles run ``seq`` ``repeat`` times, parts back to back (B22)."""
    if isinstance(profile, ComposedProfile):
        leaves: list[_Leaf] = []
        for it in range(profile.repeat):
            for pos, part in enumerate(profile.seq):
                leaves.extend(_flatten(part, path + ((profile.name, it * len(profile.seq) + pos),)))
        if profile.ret and leaves and leaves[-1].ret == 0:
            leaves[-1].ret = profile.ret
        return leaves
    return [_Leaf(profile, path, getattr(profile, "ret", 0))]


#: ``_RunJob.hosts`` before a job starts and after it ends (a finished job's index array, thousands of ids on a
#: wide non-contiguous allocation, would otherwise stay in memory for the rest of the run: 120 MiB for 8,000 jobs
#: of the Curie log under ESC)
_NO_HOSTS = slice(0, 0)


@dataclass(eq=False, slots=True)
class _RunJob:
    """Run-time state of one job."""

    job: Job
    workload: str  # its name: the part of the job id before '!' (B6, B44)
    status: JobStatus = JobStatus.PENDING
    alloc: ProcSet = field(default_factory=ProcSet)  # empty until the job starts
    alloc_str: str = ""
    # the hosts of ``alloc`` as an index of the host arrays (none before the job starts or after it ends)
    hosts: slice | np.ndarray = field(default_factory=lambda: _NO_HOSTS)
    nb_hosts: int = 0
    start_s: float = 0.0
    end_s: float = 0.0
    start_seq: int = 0
    leaves: list[_Leaf] = field(default_factory=list)
    leaf_idx: int = 0
    # Batsim's walltime budget left (-1: none), spent by each part (B14, B22): the timeout of a
    # compute part and the longest sleep of a delay part
    remaining_s: float = -1.0
    # current task: its execution (compute part) and its sleep (the walltime timeout of a compute
    # part, or the delay), actions of the clock; None when absent or over
    is_parallel: bool = False
    part_start_s: float = 0.0
    execution: Action | None = None
    sleep: Action | None = None
    cut: bool = False  # the delay part's sleep ends at the walltime (B14)
    rate: float = 0.0  # fraction per second of the parallel task
    work: bool = False  # the parallel task has work (else it ends at its start, B17)
    flops: float | np.ndarray = 0.0  # per host: one value (homogeneous) or one per host
    delay_s: float = 0.0
    dyn_w: float = 0.0  # power above idle summed over the job's hosts: (full - idle) x load (with an epsilon: see _eps)
    first_dyn_w: float = 0.0  # the part of dyn_w of the job's first host
    idle_w: float = 0.0  # idle power of the job's hosts at their pstates
    energy_j: float = 0.0
    energy_t_s: float = 0.0
    # lazy billing of the hosts but the first (B42): last time the job read them itself (its start,
    # the end of a parallel task); while their power has changed unread, the time of their last
    # reading, the energy billed to them eagerly since then up to their last change, and that change
    read_s: float = 0.0
    lag_read_s: float = math.nan
    lag_eager_j: float = 0.0
    lag_change_s: float = 0.0
    final_state: str = ""
    return_code: int = 0
    metadata: str | None = None
    zero_work: bool = False
    kill_requested: bool = False  # Batsim's Job::kill_requested: a later KILL_JOB of it is discarded (C)
    # its end was sent (its JOB_COMPLETED, or the message after its REJECT_JOB): Batsim has deleted the job
    # (jobs.cpp Jobs::delete_job), and aborts on any later event naming it
    reported: bool = False


@dataclass(eq=False)
class _Switch:
    """A SET_RESOURCE_STATE request with hosts still in transition (B23)."""

    resources: str
    target: int
    pending: int  # number of host groups not finished yet
    reported: bool = False


class Simulation:
    """Batsim 4.2.1 as a message-level state machine (see module docstring).

    Args:
        platform: compute hosts and their power states.
        workload: jobs and profiles (one static workload, named as in ``workload.name``).
        workload_label: what ``SIMULATION_BEGINS.workloads`` shows for the workload (Batsim sends
            the absolute path of the file).
        dynamic_jobs: accept REGISTER_PROFILE / REGISTER_JOB from the scheduler (Batsim's
            ``--enable-dynamic-jobs``, B44); the simulation then ends only after the scheduler's
            NOTIFY ``registration_finished``.
        acknowledge_dynamic_jobs: answer each REGISTER_JOB with a JOB_SUBMITTED (Batsim's
            ``--acknowledge-dynamic-jobs``, B44).
    """

    def __init__(self, platform: Platform, workload: Workload, *, workload_label: str | None = None,
                 dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False) -> None:
        self.platform = platform
        self.workload = workload
        self.workload_label = workload_label or os.path.abspath(workload.path)
        self.dynamic_jobs = dynamic_jobs
        self.acknowledge_dynamic_jobs = acknowledge_dynamic_jobs
        self._registration_open = dynamic_jobs  # until NOTIFY registration_finished (B44)
        # profiles of every workload, parsed and as received (B44: REGISTER_PROFILE adds to them)
        self._profiles: dict[str, dict[str, Profile]] = {workload.name: dict(workload.profiles)}
        self._raw_profiles: dict[str, dict[str, Any]] = {workload.name: dict(workload.profiles_json)}
        # Batsim drops a profile from its workload once a job using it is deleted, and at load every static
        # profile no static job uses (profiles.cpp remove_profile / remove_unreferenced_profiles, B44):
        # a later REGISTER_JOB naming it aborts
        used: set[str] = set()
        stack = [workload.profiles[j.profile] for j in workload.jobs]
        while stack:
            prof = stack.pop()
            if prof.name not in used:
                used.add(prof.name)
                if isinstance(prof, ComposedProfile):
                    stack.extend(prof.seq)
        self._gone_profiles: dict[str, set[str]] = {workload.name: set(workload.profiles) - used}
        self._dyn_composed: set[tuple[str, str]] = set()  # registered composed profiles (Batsim cannot run them)
        self._warned_dyn_composed = False
        n = len(platform.hosts)
        self.nb_hosts = n
        models = list(platform.models)
        model_pos = {id(m): i for i, m in enumerate(models)}
        nps = max(m.nb_pstates for m in models)
        self._speed = np.full((len(models), nps), np.nan)
        self._idle = np.zeros((len(models), nps))
        self._full = np.zeros((len(models), nps))
        # SimGrid's epsilon of a three-value wattage_per_state ('idle:epsilon:full', NodeModel.epsilon_w): a busy
        # host draws epsilon + load x (full - epsilon), and Batsim's wattmin is the sum of the epsilons; None
        # when every host's epsilon is its idle value (then wattmin_w is both the idle power and the wattmin)
        eps = np.zeros((len(models), nps))
        for i, m in enumerate(models):
            k = m.nb_pstates
            self._speed[i, :k] = m.speeds_flops
            self._idle[i, :k] = m.idle_w
            self._full[i, :k] = m.full_w
            eps[i, :k] = m.idle_w if m.epsilon_w is None else m.epsilon_w
        self._eps: np.ndarray | None = eps if any(m.epsilon_w is not None for m in models) else None
        # a single model's rows as Python floats (the sums of _set_pstate, per pstate)
        self._idle_row: list[float] = self._idle[0].tolist()
        self._eps_row: list[float] | None = None if self._eps is None else self._eps[0].tolist()
        self._models = models
        self.model_of = np.array([model_pos[id(h.model)] for h in platform.hosts], dtype=np.int32)
        self._single_model = len(models) == 1
        self.pstate = np.array([h.initial_pstate for h in platform.hosts], dtype=np.int32)
        # hosts per pstate on a single-model platform (hosts per model and pstate on others, below): when its idle and
        # computing hosts share one pstate (the usual case, with or without shutdown), a job's speed and power need
        # no per-host lookup, and the platform's idle power is a few products
        self._pstate_hosts: dict[int, int] = {
            int(p): int(c) for p, c in zip(*np.unique(self.pstate, return_counts=True))
        } if self._single_model else {}
        #: the computation pstates of a single-model platform: only hosts asleep or switching are at the others
        self._computing: frozenset[int] = frozenset(models[0].computation_pstates if self._single_model else ())
        self.mstate = np.zeros(n, dtype=np.int8)
        self.last_change_s = np.zeros(n)
        self.job_of_host = np.full(n, -1, dtype=np.int64)
        self.state_counts = np.zeros(len(MachineState), dtype=np.int64)
        self.state_counts[_IDLE] = n
        self.state_time_s = np.zeros(len(MachineState))

        self.now_s = 0.0
        self.energy_j = 0.0
        #: hosts per (model, pstate) on a platform of several models (None: one model, _pstate_hosts tells)
        self._model_pstate_hosts: np.ndarray | None = None
        if not self._single_model:
            self._model_pstate_hosts = np.zeros((len(models), nps), dtype=np.int64)
            np.add.at(self._model_pstate_hosts, (self.model_of, self.pstate), 1)
        self.wattmin_w = 0.0  # the hosts' idle power (_sum_powers)
        self._epsilon_sum_w: float | None = None if self._eps is None else 0.0
        self._sum_powers()
        self.dyn_w = 0.0
        # time of the last energy reading of every host (a CSV row or a QUERY), and the running jobs
        # whose hosts but the first have changed power unread since then (B42, see _start_leaf)
        self._last_reading_s = 0.0
        self._lagging: dict[int, _RunJob] = {}

        self.jobs: dict[str, _RunJob] = {j.id: _RunJob(j, workload.name) for j in workload.jobs}
        self._job_index: dict[str, int] = {}
        self._job_list: list[_RunJob] = []
        for j in workload.jobs:
            self._job_index[j.id] = len(self._job_list)
            self._job_list.append(self.jobs[j.id])
        self._sub_groups = [
            (t, list(group)) for t, group in itertools.groupby(workload.jobs, key=lambda j: j.subtime_s)
        ]
        self._sub_next = 0  # the group the submitter waits for, and the first job of it not submitted
        self._sub_pos = 0
        self._sub_current = 0.0  # the submitter's clock when it last woke up (B43)
        self._clock = StepClock()
        self._seq = itertools.count()
        self._order = itertools.count()
        self._out: list[dict] = []
        self._rejected_in_reply: set[str] = set()  # REJECT_JOB of the reply being applied (still not deleted)
        self._notify_deferred = False  # NOTIFY opens the next message (B11)
        self._notify_initial: int | None = None  # t=0: NOTIFY follows the reply's results, see B7/B11
        self._submitter_done = not self._sub_groups
        self._phase = "init"  # init -> first-reply -> running -> ending -> ended
        self._first_submission_energy_j: float | None = None
        self._last_completion: tuple[float, float] | None = None
        self._unreported: list[_RunJob] = []  # ended jobs whose JOB_COMPLETED is not in a message yet (no row yet)
        # Batsim's makespan: the latest start + execution time of a finished job, the 1e-5 s of a
        # job that ended at its start included (B17, B29; export.cpp JobsTracer::write_job)
        self._makespan_s = 0.0
        self.nb_grouped_switches = 0
        self.nb_machine_switches = 0
        # output rows
        self.jobs_rows: list[_RunJob] = []
        # (time, joules, kind, wattmin) and (time, sleeping, switching on, switching off, idle, computing)
        self.energy_rows = Rows("ddOd")
        self.machine_rows = Rows("dqqqqq")
        self.pstate_rows: list[tuple[float, str, int]] = []
        for p in sorted(set(self.pstate.tolist())):
            self.pstate_rows.append((0.0, str(from_sorted_ids(np.flatnonzero(self.pstate == p).tolist())), p))
        self.nb_messages = 0
        self.nb_events = 0
        # messages in a row at one simulated time, and the bound (a scheduler answering every ANSWER with
        # another QUERY keeps Batsim at one time for ever)
        self._at_once = (-1.0, 0)
        self._max_at_once = limit("messages_at_one_time")

    # ------------------------------------------------------------------ public protocol

    def start(self) -> dict:
        """Batsim's first message: ``SIMULATION_BEGINS`` alone (B2, B7)."""
        if self._phase != "init":
            raise ProtocolError("start() called twice")
        resources = [
            {
                "id": h.id,
                "name": h.name,
                "state": "idle",
                "properties": h.properties,
                "zone_properties": h.zone_properties,
            }
            for h in self.platform.hosts
        ]
        data = {
            "nb_resources": self.nb_hosts,
            "nb_compute_resources": self.nb_hosts,
            "nb_storage_resources": 0,
            "allow_compute_sharing": False,
            "allow_storage_sharing": True,
            "config": {
                **_BATSIM_CONFIG,
                "dynamic-jobs-enabled": self.dynamic_jobs,
                "dynamic-jobs-acknowledged": self.acknowledge_dynamic_jobs,
            },
            "compute_resources": resources,
            "storage_resources": [],
            "workloads": {self.workload.name: self.workload_label},
            "profiles": {self.workload.name: self.workload.profiles_json},
        }
        self._phase = "first-reply"
        return self._message([self._event("SIMULATION_BEGINS", data)])

    def step(self, reply: dict) -> dict | None:
        """Apply the scheduler's reply and return Batsim's next message (None once ended)."""
        if self._phase == "ending":
            self._phase = "ended"
            return None
        if self._phase in ("init", "ended"):
            raise ProtocolError("no Batsim message is waiting for a reply")
        self._apply_reply(reply)
        try:
            return self._next_message()
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # not the reply's fault (it was applied): the drivers must not report it as a malformed reply
            raise SimulatorFault(f"internal error of the simulator at t={self.now_s!r} after Batsim message "
                                 f"{self.nb_messages}: {type(exc).__name__}: {exc}") from exc

    @property
    def ended(self) -> bool:
        return self._phase in ("ending", "ended")

    # ------------------------------------------------------------------ messages

    def _event(self, type_: str, data: dict) -> dict:
        return {"timestamp": r6(self.now_s), "type": type_, "data": data}

    def _report_ends(self, events: list[dict]) -> None:
        """The jobs whose JOB_COMPLETED is in ``events`` are reported: their ``_jobs.csv`` rows are added in the
        order of these events (Batsim's server writes a job's row as it appends its JOB_COMPLETED,
        ``server.cpp`` ``server_on_job_completed``; the order of the actors that ended jobs in one step may differ),
        and Batsim deletes them once the message is sent (a later KILL_JOB of one makes it abort)."""
        ended = {rj.job.id: rj for rj in self._unreported}
        for e in events:
            if e["type"] == "JOB_COMPLETED":
                rj = ended.pop(e["data"]["job_id"], None)
                if rj is not None:
                    rj.reported = True
                    self._drop_profile(rj.workload, rj.job.profile)
                    self.jobs_rows.append(rj)
        self._unreported = list(ended.values())  # (none: every end is in the next message)

    def _message(self, events: list[dict]) -> dict:
        now = r6(self.now_s)  # (each event keeps the time it happened: Batsim stamps it with its clock then)
        if self._unreported:
            self._report_ends(events)
        at, count = self._at_once
        count = count + 1 if now == at else 1
        self._at_once = (now, count)
        if count > self._max_at_once:
            raise ProtocolError(
                f"the scheduler has kept the simulation at t={now!r} for {count - 1:,} messages in a row (for "
                "instance by answering each ANSWER with another QUERY; real "
                f"Batsim would never end); {limit_hint('messages_at_one_time', 'messages')}")
        self.nb_messages += 1
        self.nb_events += len(events)
        return {"now": now, "events": events}

    def _next_message(self) -> dict:
        events: list[dict] = []
        if self._notify_deferred:
            self._notify_deferred = False
            events.append(self._event("NOTIFY", {"type": "no_more_static_job_to_submit"}))
        if self._out:
            events.extend(self._out)
            self._out = []
        if self._notify_initial is not None:
            self._notify_initial = None
            self._notify_deferred = True
        if events:
            return self._message(events)
        clock = self._clock
        stalled = 0
        while True:
            before = clock.now
            ended = clock.solve_step()
            if ended is None:  # B41: cancelled actions neither keep the simulation alive nor move the clock
                break
            self._advance(clock.now)
            batch = self._process_step(ended)
            if batch:
                return self._message(batch)
            if clock.now > before:
                stalled = 0
            else:
                stalled += 1
                if stalled >= STALL_STEPS:
                    raise self._stalled(stalled)
        self._check_nothing_left()
        self._phase = "ending"
        return self._message([self._event("SIMULATION_ENDS", {})])

    def _stalled(self, steps: int) -> EngineStalled:
        """The error of a clock that no longer moves: time, solver steps, pending actions."""
        clock = self._clock
        pending = []
        for act in clock.pending():
            owner = act.owner
            what = _KIND_NAMES[act.kind]
            if isinstance(owner, _RunJob):
                what += f" of job {owner.job.id}"
            pending.append(f"{what} (remains {act.r!r} at rate {act.rate!r}, as of step {act.base})")
        return EngineStalled(
            f"internal error: the simulator's clock is stuck at t={clock.now!r} (solver step {clock.steps}): "
            f"{steps} solver steps in a row neither moved it nor produced an event; pending: "
            f"{'; '.join(pending) or 'nothing'}"
        )

    def _check_nothing_left(self) -> None:
        waiting = [rj.job.id for rj in self._job_list if rj.status <= JobStatus.SUBMITTED]
        if waiting:
            shown = ", ".join(waiting[:5]) + (f" and {len(waiting) - 5} more" if len(waiting) > 5 else "")
            raise ProtocolError(
                f"deadlock at t={self.now_s:.6f}: nothing is left to happen but {counted(len(waiting), 'job')} "
                f"{'was' if len(waiting) == 1 else 'were'} never started nor rejected by the scheduler ({shown})"
            )
        if self._registration_open:  # B44: Batsim's is_simulation_finished waits for it forever
            raise ProtocolError(
                f"deadlock at t={self.now_s:.6f}: nothing is left to happen but dynamic job registration is "
                "still open (the scheduler must send NOTIFY {'type': 'registration_finished'})"
            )

    def _process_step(self, ended: list[Entry]) -> list[dict]:
        """The events of one solver step whose ``ended`` actions end now: timers then completions
        (B9, B37); a later step is a later message, even at the same printed time (B43).

        The work is done in the order of SimGrid and Batsim in one step (B40, B42): first what the
        actors woken now do, in rounds, the energy loads of the tasks they start being known only
        to later readings (SimGrid solves the loads after the round): jobs that end write their
        rows, the submitter submits, and jobs whose part ends start the next part (a part with no
        work or no duration ends in the next round); then Batsim's server writes the rows of the
        switch requests completing now, after every switch ending now was applied. Events keep the
        order of rule 9/37 whatever the work order.
        """
        if self._clock.now == math.inf:
            self._check_ends_at_infinity(ended)
        # (entry, event): sorted by the entry's phase, order, version (stable: a submission's events)
        keyed: list[tuple[Entry, dict]] = []
        switches: list[Entry] = []
        continuing: list[_RunJob] = []
        last_submission: Entry | None = None
        round_ = ended
        clock = self._clock
        # (a) a switch ending with a job: how many hosts the job's actor must read first
        unread = self._unread_hosts(ended) if len(ended) > 1 else None
        clock.zero_round = []  # parts started now with nothing to do end in this step (B17, B22)
        while round_:  # one round of actors per pass
            if len(round_) > 1:
                round_.sort(key=_step_order)
            for entry in round_:
                act = entry[_ACTION]
                kind = act.kind
                if kind == _EXEC or kind == _SLEEP:
                    rj: _RunJob = act.owner
                    outcome = self._job_part_ended(rj, act)
                    if outcome is None:
                        continue
                    if outcome is _GOES_ON:
                        continuing.append(rj)
                    else:
                        keyed.append((entry, self._end_job(rj, *outcome)))
                elif kind == _SUBMIT:
                    for ev in self._submit_due(woken=True):
                        keyed.append((entry, ev))
                    if self._submitter_done:
                        last_submission = entry
                elif kind == _CALL:
                    keyed.append((entry, self._event("REQUESTED_CALL", {})))
                elif kind == _SWITCH:
                    switches.append(entry)
                # _REPLY: the reply's sleep to a timestamp (B5) ends: nothing to report
            if continuing:
                for rj in continuing:
                    self._next_part(rj)
                continuing.clear()
            round_ = clock.zero_round
            if round_:
                clock.zero_round = []
                for entry in round_:
                    act = entry[_ACTION]
                    act.version = -1
                    act.ended = True
        clock.zero_round = None
        for entry in switches:
            self._switch_hosts_done(*entry[_ACTION].owner)
        for entry in switches:
            done = self._switch_request_done(entry[_ACTION].owner[0])
            if done is not None:
                keyed.append((entry, done))
        if len(keyed) == 1:
            events = [keyed[0][1]]
        else:
            keyed.sort(key=_keyed_order if unread is None else _switch_job_order(unread))
            events = [ev for _, ev in keyed]
        if last_submission is not None:  # B11
            if keyed[-1][0] is not last_submission:
                events.append(self._event("NOTIFY", {"type": "no_more_static_job_to_submit"}))
            else:
                self._notify_deferred = True
        return events

    def _check_ends_at_infinity(self, ended: list[Entry]) -> None:
        """The clock reached +inf, where only a CALL_ME_LATER at +inf ("never") may end: a job's task or a switch
        ending there takes longer than a double holds (flops over a tiny speed, a transition pstate's one flop at a
        subnormal speed), a run real Batsim would never end. Raises :class:`InputError` naming the host's speed."""
        for entry in ended:
            act = entry[_ACTION]
            if act.kind == _EXEC:
                rj: _RunJob = act.owner
                hosts = ids_array(rj.alloc)
                speeds = self._speed[self.model_of[hosts], self.pstate[hosts]]
                flops = np.broadcast_to(rj.flops, speeds.shape)
                h = int(np.argmin(speeds / np.where(flops > 0.0, flops, math.nan)))
                leaf = rj.leaves[rj.leaf_idx].profile
                source = f" of {self.workload.path}" if rj.workload == self.workload.name else ""
                what = (f"job {rj.job.id}'s task (profile '{leaf.name}'{source}, {float(flops[h]):g} flops on this "
                        "host)")
            elif act.kind == _SWITCH:
                hosts = act.owner[1]
                h = 0
                what = "a switch through it (one flop)"
            else:
                continue
            host = self.platform.hosts[int(hosts[h])]
            p = int(self.pstate[host.id])
            raise InputError(self.platform.path, f"host '{host.name}'.speed",
                             f"pstate {p} at {float(host.model.speeds_flops[p]):g} flop/s: {what} would end at "
                             "t=+inf, its time beyond the largest double (real Batsim would never end)")

    def _unread_hosts(self, ended: list[Entry]) -> int | None:
        """The number of compute hosts not read yet at this clock when the actors woken by
        ``ended`` run, or None when no switch and no job part end together (nothing to order).

        Batsim 4.2.1 and SimGrid 3.32: each actor woken now sends its message to the server after
        its simcalls, one per scheduling sub-round: a switch actor after one (``set_pstate``, then
        SWITCHED_ON/OFF), a job's actor after one per host it reads that was not updated at this
        clock (``consumed_energy_on_machines`` on its allocation, then every host for the 'e' row),
        then JOB_COMPLETED. Updated now: the hosts of an execution that ends, the host of an actor
        whose sleep ends (a job's first host), every host when a row or QUERY read them at this clock.
        """
        kinds = {entry[_ACTION].kind for entry in ended}
        if _SWITCH not in kinds or not kinds & {_EXEC, _SLEEP}:
            return None
        if self._last_reading_s == self.now_s:
            return 0
        fresh = np.zeros(self.nb_hosts, dtype=bool)
        for entry in ended:
            act = entry[_ACTION]
            if act.kind == _EXEC:
                fresh[act.owner.hosts] = True
            elif act.kind == _SLEEP:
                fresh[act.owner.alloc.min] = True
            elif act.kind == _SWITCH:
                fresh[act.owner[1]] = True
        return self.nb_hosts - int(np.count_nonzero(fresh))

    # ------------------------------------------------------------------ submissions

    def _submit_due(self, woken: bool) -> list[dict]:
        """Submit the jobs due now (B6, B10) and wait for the next one.

        Batsim's submitter (B43) notes the clock when it wakes up, submits the job it slept for
        (``woken``) whatever the clock, then every following job whose subtime is not above the
        clock; it sleeps ``subtime - clock`` (computed in long double) for the next one. A clock
        woken a hair before a subtime thus submits the other jobs of that subtime one step later.
        """
        current = self.now_s
        self._sub_current = current
        groups = self._sub_groups
        jobs: list[Job] = []
        while self._sub_next < len(groups):
            t, group = groups[self._sub_next]
            if t <= current:
                jobs.extend(group[self._sub_pos:] if self._sub_pos else group)
            elif woken:
                jobs.append(group[self._sub_pos])
                self._sub_pos += 1
                woken = False
                if self._sub_pos < len(group):
                    continue
            else:
                break
            woken = False
            self._sub_next += 1
            self._sub_pos = 0
        if self._first_submission_energy_j is None:  # B29; Batsim reads every host for it (B42)
            self._read_all()
            self._first_submission_energy_j = self.energy_j
        for j in jobs:
            self.jobs[j.id].status = JobStatus.SUBMITTED
        events = [self._event("JOB_SUBMITTED", {"job_id": j.id, "job": j.entry}) for j in jobs]
        self._wait_next_submission()
        return events

    def _wait_next_submission(self) -> None:
        if self._sub_next < len(self._sub_groups):
            wait = submitter_sleep(self._sub_groups[self._sub_next][0], self._sub_current)
            self._clock.start_sleep(wait, _SUBMIT, None, _TIMER, next(self._seq))
        else:
            self._submitter_done = True

    # ------------------------------------------------------------------ time and energy

    def _advance(self, t: float) -> None:
        """The clock has moved to ``t``: platform energy integrated since the previous time."""
        if t > self.now_s:
            power_w = self.wattmin_w + self.dyn_w
            if power_w < 0.0:
                # the jobs' and switches' powers, added to dyn_w and taken away again, leave a rounding error
                # (-1e-14 W) that a long time with every host asleep at 0 W (UPAS's sleep pstate) turned into
                # a falling energy; a power is never below 0
                power_w = 0.0
            self.energy_j += power_w * (t - self.now_s)
            self.now_s = t

    def _reach(self, t: float) -> None:
        """Batsim's reply actor sleeps until ``t`` when it is above the clock (B5): a sleep of the
        clock, whose step may end other actions (their events go with the reply's results)."""
        now = self.now_s
        if t <= now:
            return
        clock = self._clock
        if clock.sleep_alone(t - now):
            self._advance(clock.now)
            return
        act = clock.start_sleep(t - now, _REPLY, None, _TIMER, next(self._seq))
        stalled = 0
        while not act.ended:
            before = clock.now
            ended = clock.solve_step()
            if ended is None:  # pragma: no cover - the reply's sleep is live
                break
            self._advance(clock.now)
            batch = self._process_step(ended)
            if batch or clock.now > before:
                stalled = 0
                self._out.extend(batch)
            else:
                stalled += 1
                if stalled >= STALL_STEPS:
                    raise self._stalled(stalled)
            if self._notify_deferred:  # B11: the last submission came in this message
                self._notify_deferred = False
                self._out.append(self._event("NOTIFY", {"type": "no_more_static_job_to_submit"}))

    def _uniform_pstate(self) -> int | None:
        """The pstate of every idle or computing host when they all share it on a single-model platform (hosts
        asleep or switching, at the sleep and transition pstates, aside: with a shutdown, the usual case)."""
        if not self._single_model:
            return None
        found = None
        for p in self._pstate_hosts:
            if p in self._computing:
                if found is not None:
                    return None
                found = p
        return found

    def _host_sum(self, table: np.ndarray, hosts: slice | np.ndarray, n: int | None = None) -> float:
        """Σ over ``hosts`` of ``table[model, pstate]`` (``n``: number of hosts, all idle or computing, for the
        fast path)."""
        if n is not None:
            p = self._uniform_pstate()
            if p is not None:
                return n * float(table[0, p])
        if self._single_model:
            return float(table[0, self.pstate[hosts]].sum())
        return float(table[self.model_of[hosts], self.pstate[hosts]].sum())

    def _set_machine_state(self, hosts: slice | np.ndarray, n: int, new: int, old: int | None = None,
                           uniform: int | None = None) -> None:
        """Hosts change state; ``time_<state>`` accumulates only then (B29). ``old``: the state all
        of them are known to be in (skips a per-state count). ``uniform``: the same for a switch's few hosts,
        whose times are summed as the per-state count sums them (``bincount``: one after the other, from the
        first host; the same floats), without numpy's cost per call (issue 15)."""
        now = self.now_s
        if old is not None:
            self.state_time_s[old] += n * now - float(self.last_change_s[hosts].sum())
            self.state_counts[old] -= n
        elif uniform is not None and n <= UNIFORM_MAX_HOSTS:
            total = 0.0
            for spent in (now - self.last_change_s[hosts]).tolist():  # (not sum(): compensated from Python 3.12 on)
                total += spent
            self.state_time_s[uniform] += total
            self.state_counts[uniform] -= n
        else:
            olds = self.mstate[hosts]
            k = _NB_STATES
            self.state_time_s += np.bincount(olds, weights=now - self.last_change_s[hosts], minlength=k)
            self.state_counts -= np.bincount(olds, minlength=k)
        self.state_counts[new] += n
        self.mstate[hosts] = new
        self.last_change_s[hosts] = now

    def _set_pstate(self, hosts: slice | np.ndarray, pstate: int) -> None:
        olds = self.pstate[hosts]
        if self._model_pstate_hosts is None:
            if len(olds) <= UNIFORM_MAX_HOSTS:  # a switch's few hosts, usually all at one pstate
                values = olds.tolist()  # (numpy's bincount and flatnonzero cost 5 µs a call: issue 15)
                first = values[0]
                pairs: Iterable[tuple[int, int]] = (
                    ((first, len(values)),) if values.count(first) == len(values) else Counter(values).items())
            else:
                counts = np.bincount(olds)  # (pstates are small non-negative ints: no sort, unlike unique)
                nonzero = np.flatnonzero(counts).tolist()
                pairs = zip(nonzero, counts[nonzero].tolist())
            n = 0
            for p, c in pairs:
                n += c
                left = self._pstate_hosts[p] - c
                if left:
                    self._pstate_hosts[p] = left
                else:
                    del self._pstate_hosts[p]
            self._pstate_hosts[pstate] = self._pstate_hosts.get(pstate, 0) + n
        else:
            models = self.model_of[hosts]
            self._model_pstate_hosts -= np.bincount(models * self._idle.shape[1] + olds,
                                                    minlength=self._model_pstate_hosts.size
                                                    ).reshape(self._model_pstate_hosts.shape)
            self._model_pstate_hosts[:, pstate] += np.bincount(models, minlength=len(self._models))
        self.pstate[hosts] = pstate
        self._sum_powers()

    def _sum_powers(self) -> None:
        """The platform's idle power (:attr:`wattmin_w`) and its sum of epsilons from the hosts per pstate (and
        model): recomputed, not updated by differences, so that no rounding error builds up over a run (a platform
        all asleep at 0 W has a wattmin of 0, as Batsim's, which sums every host at each row:
        ``Machines::total_wattmin``)."""
        if self._model_pstate_hosts is None:
            idle = self._idle_row
            self.wattmin_w = math.fsum(c * idle[p] for p, c in self._pstate_hosts.items())
            if self._eps_row is not None:
                eps = self._eps_row
                self._epsilon_sum_w = math.fsum(c * eps[p] for p, c in self._pstate_hosts.items())
            return
        counts = self._model_pstate_hosts
        self.wattmin_w = math.fsum((counts * self._idle).ravel().tolist())
        if self._eps is not None:
            self._epsilon_sum_w = math.fsum((counts * self._eps).ravel().tolist())

    def _switching_dyn_w(self, hosts: np.ndarray) -> float:
        """Σ over ``hosts``, all at the same transition pstate (one model's part of a request), of ``full - idle``
        there: the dynamic power of their switch (one flop at the virtual pstate)."""
        if self._single_model:
            p = int(self.pstate[hosts[0]])
            return len(hosts) * float(self._full[0, p]) - len(hosts) * self._idle_row[p]
        return self._host_sum(self._full, hosts) - self._host_sum(self._idle, hosts)

    def _energy_row(self, kind: str) -> None:
        if self._lagging:  # B42: the row reads every host
            self._read_all()
        self._last_reading_s = self.now_s
        wattmin = self.wattmin_w if self._epsilon_sum_w is None else self._epsilon_sum_w
        self.energy_rows.append((self.now_s, self.energy_j, kind, wattmin))

    def _machine_row(self) -> None:
        c = self.state_counts.tolist()  # (one conversion, not five numpy scalars)
        self.machine_rows.append((self.now_s, c[_SLEEPING], c[_SWITCHING_ON], c[_SWITCHING_OFF], c[_IDLE], c[_COMPUTING]))

    # ------------------------------------------------------------------ the scheduler's reply

    def _apply_reply(self, reply: dict) -> None:
        if not isinstance(reply, dict) or "now" not in reply or "events" not in reply:
            raise ProtocolError("the scheduler's reply must be an object with 'now' and 'events'")
        if not is_json_number(reply["now"]):
            raise ProtocolError(f"reply field 'now' is not a number: {reply['now']!r}")
        reply_now = float(reply["now"])
        events = reply["events"]
        if not isinstance(events, list):
            raise ProtocolError("reply field 'events' must be a list")
        first = self._phase == "first-reply"
        for jid in self._rejected_in_reply:  # deleted once the message after the rejection was sent
            rejected = self.jobs[jid]
            rejected.reported = True
            self._drop_profile(rejected.workload, rejected.job.profile)
        self._rejected_in_reply = set()
        for i, ev in enumerate(events):
            if first and i == 1:
                self._initial_submissions()
            self._apply_event(ev, reply_now)
        if first:
            if len(events) <= 1:
                self._initial_submissions()
            self._phase = "running"
            if self._notify_initial is not None:
                # B11: NOTIFY shares the message only when something followed the last submission
                if len(self._out) > self._notify_initial:
                    self._out.append(self._event("NOTIFY", {"type": "no_more_static_job_to_submit"}))
                    self._notify_initial = None
        if reply_now > self.now_s:
            self._reach(reply_now)

    def _initial_submissions(self) -> None:
        """t=0 submissions ride after the results of the first reply event (B7)."""
        if self._sub_groups and self._sub_groups[0][0] <= self.now_s:
            subs = self._submit_due(woken=False)
            self._out.extend(subs)
            if self._submitter_done:
                self._notify_initial = len(self._out)
        elif not self._sub_groups:  # B11: the submitter of an empty workload says goodbye at once
            self._out.append(self._event("NOTIFY", {"type": "no_more_static_job_to_submit"}))
        else:
            self._wait_next_submission()
        self._phase = "running"

    def _apply_event(self, ev: Any, reply_now: float = math.inf) -> None:
        if not isinstance(ev, dict) or "type" not in ev:
            raise ProtocolError(f"malformed event in the scheduler's reply: {ev!r}")
        if "timestamp" not in ev:
            raise ProtocolError(f"{ev['type']}: the event has no field 'timestamp' (Batsim aborts)")
        ts = ev["timestamp"]
        if not is_json_number(ts):
            raise ProtocolError(f"{ev['type']}: field 'timestamp' is not a number: {ts!r}")
        ts = float(ts)
        if ts > reply_now:  # protocol.cpp parse_and_apply_event
            raise ProtocolError(f"{ev['type']}: field 'timestamp' {ts!r} is after the reply's now {reply_now!r} "
                                "(Batsim aborts)")
        if ts > self.now_s:  # B5: applied at its timestamp, never in the past
            self._reach(ts)
        if "data" not in ev:
            raise ProtocolError(f"{ev['type']}: the event has no field 'data' (Batsim aborts)")
        data = ev["data"]
        if not isinstance(data, dict):
            raise ProtocolError(f"{ev['type']}: field 'data' must be an object, got {data!r}")
        handler = self._HANDLERS.get(ev["type"])
        if handler is None:
            raise ProtocolError(
                f"unknown or unsupported event type {ev['type']!r} from the scheduler "
                f"(supported: {', '.join(sorted(self._HANDLERS))})"
            )
        handler(self, data)

    def _get_job(self, data: dict, etype: str) -> _RunJob:
        jid = data.get("job_id")
        rj = self.jobs.get(jid) if isinstance(jid, str) else None
        if rj is None:
            raise ProtocolError(f"{etype}: field 'job_id': unknown job {jid!r}")
        return rj

    def _on_execute(self, data: dict) -> None:
        _check_size(data, "EXECUTE_JOB", (2, 3))
        rj = self._get_job(data, "EXECUTE_JOB")
        if rj.status != JobStatus.SUBMITTED:
            raise ProtocolError(f"EXECUTE_JOB: job {rj.job.id} cannot start: it is {rj.status.name.lower()}")
        if not isinstance(data.get("alloc"), str):
            raise ProtocolError(f"EXECUTE_JOB {rj.job.id}: field 'alloc' must be a string, got {data.get('alloc')!r}")
        try:
            alloc, alloc_str = parse_hosts(data["alloc"])
        except ValueError as exc:
            raise ProtocolError(f"EXECUTE_JOB {rj.job.id}: field 'alloc' is not an interval set: {exc}") from None
        self._check_execute_options(rj, data, len(alloc))
        # Batsim's server_on_execute_job: only a parallel_homogeneous_total profile, or a sequence of them,
        # may run on another number of hosts than the job's res
        if len(alloc) != rj.job.res and not self._any_size(self._profiles[rj.workload][rj.job.profile]):
            raise ProtocolError(
                f"EXECUTE_JOB {rj.job.id}: field 'alloc' has {counted(len(alloc), 'host')} but the job requests "
                f"{rj.job.res}"
            )
        if alloc.max >= self.nb_hosts or alloc.min < 0:
            raise ProtocolError(f"EXECUTE_JOB {rj.job.id}: field 'alloc' names hosts beyond 0-{self.nb_hosts - 1}")
        hosts = host_index(alloc)
        n = len(alloc)
        states = self.mstate[hosts]
        if states.any():  # MachineState.IDLE == 0
            h = int(ids_array(alloc)[np.flatnonzero(states)[0]])
            raise ProtocolError(
                f"EXECUTE_JOB {rj.job.id}: host {h} ({self.platform.hosts[h].name}) is "
                f"{MachineState(int(self.mstate[h])).name.lower()}, not idle"
            )
        if (rj.workload, rj.job.profile) in self._dyn_composed and not self._warned_dyn_composed:
            # Batsim 4.2.1 never links the sub-profiles of a registered composed profile (Workload::check_validity
            # is not run for it: profile_sequence stays empty) and reads past that empty vector when it builds
            # the job's task tree (jobs_execution.cpp): undefined behaviour, a crash. Run here, with a warning.
            self._warned_dyn_composed = True
            log.warning("EXECUTE_JOB %s: profile '%s' is a composed profile registered by REGISTER_PROFILE; real "
                        "Batsim 4.2.1 never links the parts of such a profile and would crash running it (the "
                        "embedded simulator runs it; this warning is given once per run)", rj.job.id, rj.job.profile)
        rj.status = JobStatus.RUNNING
        rj.alloc = alloc
        rj.alloc_str = alloc_str
        rj.hosts = hosts
        rj.nb_hosts = n
        rj.start_s = self.now_s
        rj.start_seq = next(self._order)
        rj.energy_t_s = self.now_s
        rj.read_s = self.now_s
        rj.idle_w = self._host_sum(self._idle, hosts, n)
        wall = rj.job.walltime_s
        rj.remaining_s = float(wall) if wall is not None else -1.0
        rj.leaves = _flatten(self._profiles[rj.workload][rj.job.profile])
        rj.leaf_idx = 0
        self.job_of_host[hosts] = self._job_index[rj.job.id]
        self._set_machine_state(hosts, n, _COMPUTING, _IDLE)
        self._energy_row("s")
        self._machine_row()
        self._start_leaf(rj)

    @staticmethod
    def _any_size(profile: Any) -> bool:
        def pht(p: Any) -> bool:
            return isinstance(p, ParallelProfile) and p.kind == "parallel_homogeneous_total"
        return pht(profile) or (isinstance(profile, ComposedProfile) and all(pht(p) for p in profile.seq))

    def _check_execute_options(self, rj: _RunJob, data: dict, nb_alloc: int) -> None:
        """EXECUTE_JOB's optional fields (``protocol.cpp`` handle_execute_job): ``mapping`` and
        ``storage_mapping`` are checked as Batsim does; a mapping other than the default one (executor i on
        the i-th allocated host) and ``additional_io_job`` change the execution and are not simulated here."""
        jid = rj.job.id
        if "mapping" in data:
            m = data["mapping"]
            if not isinstance(m, dict) or not m:
                raise ProtocolError(f"EXECUTE_JOB {jid}: field 'mapping' must be a non-empty object, got {m!r}")
            pairs = {}
            for k, v in m.items():
                ek = _stoi(k)
                ev = v if is_json_int(v) else _stoi(v)
                if ek is None or ev is None:
                    raise ProtocolError(f"EXECUTE_JOB {jid}: field 'mapping': {k!r}: {v!r} is not executor: host "
                                        "index (integers)")
                pairs[ek] = ev
            for i, (ek, ev) in enumerate(sorted(pairs.items())):
                if ek != i:
                    raise ProtocolError(f"EXECUTE_JOB {jid}: field 'mapping' has no host for executor {i}")
                if not 0 <= ev < nb_alloc:
                    raise ProtocolError(f"EXECUTE_JOB {jid}: field 'mapping' puts executor {ek} on host index {ev} "
                                        f"of an allocation of {nb_alloc}")
            if pairs != {i: i for i in range(nb_alloc)}:
                raise ProtocolError(f"EXECUTE_JOB {jid}: field 'mapping' {m!r} is not supported by the embedded "
                                    "simulator (only the default mapping, executor i on the i-th allocated host)")
        if "storage_mapping" in data:
            sm = data["storage_mapping"]
            if (not isinstance(sm, dict) or not sm
                    or not all(is_json_int(v) for v in sm.values())):
                raise ProtocolError(f"EXECUTE_JOB {jid}: field 'storage_mapping' must be a non-empty object of "
                                    f"integers, got {sm!r}")
            # (read by storage profiles only, which the embedded simulator does not run)
        if "additional_io_job" in data:
            raise ProtocolError(f"EXECUTE_JOB {jid}: field 'additional_io_job' is not supported by the embedded "
                                "simulator (Batsim would run an extra IO profile with the job)")

    def _on_reject(self, data: dict) -> None:
        _check_size(data, "REJECT_JOB", (1,))
        rj = self._get_job(data, "REJECT_JOB")
        if rj.status != JobStatus.SUBMITTED:
            raise ProtocolError(f"REJECT_JOB: job {rj.job.id} cannot be rejected: it is {rj.status.name.lower()}")
        rj.status = JobStatus.REJECTED
        self._rejected_in_reply.add(rj.job.id)
        rj.final_state = "REJECTED"
        rj.end_s = self.now_s
        self.jobs_rows.append(rj)

    def _on_kill(self, data: dict) -> None:
        """KILL_JOB (B15; Batsim 4.2.1 ``protocol.cpp`` handle_kill_job, ``server.cpp`` server_on_kill_jobs,
        ``jobs_execution.cpp`` killer_process): a job whose kill was already requested is discarded (one
        JOB_KILLED per new kill, none when nothing is left); a job that has ended but whose JOB_COMPLETED
        is not sent yet is listed in JOB_KILLED without progress; Batsim aborts on an empty list, on a
        job not started or rejected, and on a job whose JOB_COMPLETED was already sent (deleted)."""
        _check_size(data, "KILL_JOB", (1,))
        ids = data.get("job_ids")
        if not isinstance(ids, list):
            raise ProtocolError("KILL_JOB: field 'job_ids' must be a list of job ids")
        if not ids:
            raise ProtocolError("KILL_JOB: field 'job_ids' is empty (Batsim aborts: it must be non-empty)")
        progress: dict[str, Any] = {}
        killed: list[str] = []
        for jid in ids:
            rj = self._get_job({"job_id": jid}, "KILL_JOB")
            if rj.status in (JobStatus.PENDING, JobStatus.SUBMITTED, JobStatus.REJECTED):
                raise ProtocolError(f"KILL_JOB: job {jid} cannot be killed: it has not started")
            if rj.reported:
                raise ProtocolError(f"KILL_JOB: job {jid} has already completed (its JOB_COMPLETED was sent; "
                                    "Batsim aborts: the job no longer exists)")
            if rj.kill_requested:
                continue
            rj.kill_requested = True
            killed.append(jid)
            if rj.status != JobStatus.RUNNING:
                continue  # ended, not reported yet: nothing to kill, no progress
            progress[jid] = self._progress_tree(rj)
            rc = -2 if rj.is_parallel else -1  # B15
            self._out.append(self._end_job(rj, "COMPLETED_KILLED", rc))
        if killed:
            self._out.append(self._event("JOB_KILLED", {"job_ids": killed, "job_progress": progress}))

    def _on_call_me_later(self, data: dict) -> None:
        _check_size(data, "CALL_ME_LATER", (1,))
        if not is_json_number(data.get("timestamp")):
            raise ProtocolError("CALL_ME_LATER: field 'timestamp' must be a number")
        t = float(data["timestamp"])
        if not t > self.now_s:  # server.cpp server_on_call_me_later
            raise ProtocolError(f"CALL_ME_LATER: field 'timestamp' {t!r} is not after the current time "
                                f"{self.now_s!r} (Batsim aborts: 'You asked to be awaken in the past!')")
        # B12: one REQUESTED_CALL per call, at its timestamp; Batsim's waiter sleeps at least 1e-5 s
        wait = max(t - self.now_s, WAITER_MIN_SLEEP)
        self._clock.start_sleep(wait, _CALL, None, _TIMER, next(self._seq))

    def _on_query(self, data: dict) -> None:
        _check_size(data, "QUERY", (1,))
        requests = data.get("requests")
        if (not isinstance(requests, dict) or set(requests) - {"consumed_energy"} or not requests
                or requests["consumed_energy"] != {}):
            raise ProtocolError(f"QUERY: field 'requests' must be {{'consumed_energy': {{}}}}, got {requests!r}")
        self._read_all()  # B42
        self._out.append(self._event("ANSWER", {"consumed_energy": r6(self.energy_j)}))  # B26

    def _on_metadata(self, data: dict) -> None:
        _check_size(data, "SET_JOB_METADATA", (2,))
        rj = self._get_job(data, "SET_JOB_METADATA")
        meta = data.get("metadata")
        if not isinstance(meta, str):
            raise ProtocolError(f"SET_JOB_METADATA {rj.job.id}: field 'metadata' must be a string, got {meta!r}")
        if rj.reported:
            raise ProtocolError(f"SET_JOB_METADATA: job {rj.job.id} no longer exists (its end was sent; Batsim "
                                "aborts)")
        if rj.status >= JobStatus.DONE and not rj.kill_requested:
            return  # Batsim wrote the job's _jobs.csv row when it ended (JobsTracer::write_job): too late
        rj.metadata = meta

    def _on_notify(self, data: dict) -> None:
        kind = data.get("type")
        if kind == "registration_finished":  # B44 (accepted, and meaningless, without dynamic jobs)
            self._registration_open = False
        elif kind == "continue_registration":
            self._registration_open = self.dynamic_jobs
        else:
            raise ProtocolError(f"NOTIFY: field 'type': unsupported value {kind!r}")

    def _on_answer(self, data: dict) -> None:
        """ANSWER ``estimate_waiting_time``: checked, then ignored (Batsim logs a warning)."""
        if not data:
            raise ProtocolError("ANSWER: field 'data' must be a non-empty object")
        for key, value in data.items():
            if key != "estimate_waiting_time":
                raise ProtocolError(f"ANSWER: unknown answer type {key!r} (Batsim aborts)")
            if (not isinstance(value, dict) or not isinstance(value.get("job_id"), str)
                    or not is_json_number(value.get("estimated_waiting_time"))):
                raise ProtocolError(f"ANSWER: field 'estimate_waiting_time' must be {{'job_id': str, "
                                    f"'estimated_waiting_time': number}}, got {value!r}")

    def _on_to_job_msg(self, data: dict) -> None:
        """TO_JOB_MSG: queued for the job in Batsim, read only by profiles that receive messages (not run
        here): checked, then without effect."""
        rj = self._get_job(data, "TO_JOB_MSG")
        if not isinstance(data.get("msg"), str):
            raise ProtocolError(f"TO_JOB_MSG {rj.job.id}: field 'msg' must be a string, got {data.get('msg')!r}")
        if rj.reported:
            raise ProtocolError(f"TO_JOB_MSG: job {rj.job.id} no longer exists (its end was sent; Batsim aborts)")

    # ------------------------------------------------------------------ dynamic registration (B44)

    def _drop_profile(self, wl: str, name: str) -> None:
        """Batsim's Profiles::remove_profile when a job of ``wl`` using ``name`` is deleted (no
        --enable-profile-reuse): the name stays taken, the profile is gone, with the sub-profiles of a
        static composed one."""
        gone = self._gone_profiles.setdefault(wl, set())
        if name in gone:
            return
        gone.add(name)
        prof = self._profiles[wl].get(name)
        if isinstance(prof, ComposedProfile) and (wl, name) not in self._dyn_composed:
            for sub in prof.seq:
                self._drop_profile(wl, sub.name)

    def _registration_field(self, data: dict, etype: str, key: str, empty: bool = False) -> str:
        """A string field of a registration, once checked that registrations are accepted now."""
        if not self.dynamic_jobs:
            raise ProtocolError(
                f"{etype}: dynamic job registration is disabled (Batsim's --enable-dynamic-jobs, "
                "Simulation(dynamic_jobs=True))"
            )
        if not self._registration_open:
            raise ProtocolError(f"{etype}: registration after the scheduler's NOTIFY registration_finished")
        value = data.get(key)
        if not isinstance(value, str) or not (value or empty):
            raise ProtocolError(f"{etype}: field '{key}' must be a {'' if empty else 'non-empty '}string, got {value!r}")
        return value

    @staticmethod
    def _job_description(etype: str, jid: str, entry: dict) -> dict:
        """The job object as Batsim keeps it (Job::from_json): serialised, then every ``"id": value`` in it
        (nested ones too) replaced by the full id with its regular expression; Batsim aborts when the
        result is not a job object."""
        text = _ID_FIELD.sub(lambda _m: f'"id":"{jid}"', json.dumps(entry, separators=(",", ":"),
                                                                    ensure_ascii=False))
        try:
            desc = json.loads(text)
        except ValueError:
            desc = None
        if not (isinstance(desc, dict) and isinstance(desc.get("id"), str)):
            raise ProtocolError(f"{etype} {jid}: Batsim's rewriting of the job's 'id' gives no valid job object: "
                                f"{text[:200]}")
        return desc

    def _on_register_profile(self, data: dict) -> None:
        """REGISTER_PROFILE: a new profile, in a new workload if needed; nothing is sent back."""
        etype = "REGISTER_PROFILE"
        wl = self._registration_field(data, etype, "workload_name", empty=True)  # Batsim: any string
        name = self._registration_field(data, etype, "profile_name", empty=True)
        desc = data.get("profile")
        if not isinstance(desc, dict):
            raise ProtocolError(f"{etype} {name}: field 'profile' must be an object, got {desc!r}")
        profiles = self._profiles.get(wl, {})
        raw = self._raw_profiles.get(wl, {})
        if name in profiles:
            raise ProtocolError(
                f"{etype}: field 'profile_name': profile '{name}' already exists in workload '{wl}'"
            )
        try:
            profile = parse_profile(f"{etype} (workload '{wl}')", name, desc, profiles, raw)
        except InputError as exc:
            raise ProtocolError(str(exc)) from None
        self._profiles.setdefault(wl, profiles)[name] = profile
        self._raw_profiles.setdefault(wl, raw)[name] = desc
        if isinstance(profile, ComposedProfile):
            self._dyn_composed.add((wl, name))

    def _on_register_job(self, data: dict) -> None:
        """REGISTER_JOB: the job is submitted at once (its ``subtime`` is kept for the outputs) and,
        when acknowledged, announced by a JOB_SUBMITTED among the results of the reply."""
        etype = "REGISTER_JOB"
        jid = self._registration_field(data, etype, "job_id")
        parts = re.split("!+", jid)  # Batsim's JobIdentifier: split at runs of '!', two parts
        if len(parts) != 2:
            raise ProtocolError(f"{etype}: field 'job_id' {jid!r} must be '<workload>!<job name>'")
        wl, name = parts
        jid = f"{wl}!{name}"
        if wl not in self._profiles:
            raise ProtocolError(
                f"{etype}: field 'job_id' {jid!r}: workload '{wl}' does not exist (REGISTER_PROFILE creates it)"
            )
        if jid in self.jobs:
            raise ProtocolError(f"{etype}: field 'job_id': job {jid} already exists")
        if "job" not in data:
            raise ProtocolError(f"{etype} {jid}: field 'job' is missing (descriptions from Redis are not supported)")
        try:
            job = parse_job(f"{etype} {jid}", "job", data["job"], wl, self._profiles[wl], registered=True)
        except InputError as exc:
            raise ProtocolError(str(exc)) from None
        if job.id != jid:
            raise ProtocolError(f"{etype} {jid}: field 'job.id' {data['job']['id']!r} names another job")
        if job.profile in self._gone_profiles.get(wl, ()):
            raise ProtocolError(
                f"{etype} {jid}: profile '{job.profile}' of workload '{wl}' is no longer accessible (Batsim dropped "
                "it when a job using it was deleted, or at load when no static job used it; profiles.cpp, no "
                "--enable-profile-reuse)"
            )
        job.entry = self._job_description(etype, jid, data["job"])
        rj = _RunJob(job, wl, status=JobStatus.SUBMITTED)
        self.jobs[jid] = rj
        self._job_index[jid] = len(self._job_list)
        self._job_list.append(rj)
        if self.acknowledge_dynamic_jobs:
            self._out.append(self._event("JOB_SUBMITTED", {"job_id": jid, "job": job.entry}))

    def _on_set_state(self, data: dict) -> None:
        _check_size(data, "SET_RESOURCE_STATE", (2,))
        try:
            if not isinstance(data["resources"], str):
                raise TypeError
            res, resources = parse_hosts(data["resources"])
            target = _stoi(data["state"])  # Batsim: std::stoi of a string
            if target is None:
                raise ValueError
        except (KeyError, ValueError, TypeError):
            raise ProtocolError(
                f"SET_RESOURCE_STATE: fields 'resources' (interval set) and 'state' (pstate) are required, got {data!r}"
            ) from None
        itvs = intervals(res)  # (ProcSet's len, min and max walk it in Python)
        if not itvs or itvs[-1][1] >= self.nb_hosts or itvs[0][0] < 0:
            raise ProtocolError(f"SET_RESOURCE_STATE: field 'resources' {data['resources']!r} is outside 0-{self.nb_hosts - 1}")
        hosts = ids_array(res)
        models = {0} if self._single_model else {int(m) for m in np.unique(self.model_of[hosts])}
        to_sleep = [self._models[m].sleep_pstate == target for m in models]
        if any(to_sleep) and not all(to_sleep):
            raise ProtocolError(f"SET_RESOURCE_STATE {resources}: state {target} is a sleep pstate for some hosts only")
        for m in models:
            model = self._models[m]
            if not (model.is_computation(target) or model.sleep_pstate == target):
                raise ProtocolError(
                    f"SET_RESOURCE_STATE {resources}: field 'state' {target} is not a computation or sleep pstate "
                    f"of host model with {model.nb_pstates} pstates"
                )
        states = self.mstate[hosts]
        sleeping = target == self._models[next(iter(models))].sleep_pstate
        # only idle hosts are switched off; hosts in transition (or unavailable) never change
        bad = hosts[states != _IDLE] if sleeping else hosts[states >= _SWITCHING_ON]
        if len(bad):
            h = int(bad[0])
            raise ProtocolError(
                f"SET_RESOURCE_STATE {resources} -> {target}: host {h} ({self.platform.hosts[h].name}) is "
                f"{MachineState(int(self.mstate[h])).name.lower()}"
                + (" (only idle hosts can be switched off)" if sleeping else " (wait for its RESOURCE_STATE_CHANGED)")
            )
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(hosts)
        self._energy_row("p")  # B30: before the change
        self.pstate_rows.append((self.now_s, resources, -2 if sleeping else -1))  # B31
        groups: list[tuple[np.ndarray, int | None]]
        if sleeping:
            groups = [(hosts, _SWITCHING_OFF)]
        else:
            asleep = states == _SLEEPING
            groups = [(hosts[asleep], _SWITCHING_ON), (hosts[~asleep], None)]
        timed: list[tuple[np.ndarray, float]] = []  # (hosts of one model, speed of the virtual pstate)
        dvfs_hosts = np.empty(0, dtype=np.int64)
        for hs, new_state in groups:
            if len(hs) == 0:
                continue
            if new_state is None:
                dvfs_hosts = hs
                continue
            for m in (0,) if self._single_model else np.unique(self.model_of[hs]).tolist():
                model = self._models[m]
                hm = hs[self.model_of[hs] == m] if not self._single_model else hs
                virtual = model.switch_off_pstate if sleeping else model.switch_on_pstate
                if virtual is None:
                    raise ProtocolError(f"SET_RESOURCE_STATE {resources}: hosts have no sleep_pstates to switch through")
                self._set_pstate(hm, virtual)
                self._set_machine_state(hm, len(hm), new_state, uniform=_IDLE if sleeping else _SLEEPING)
                self.dyn_w += self._switching_dyn_w(hm)
                timed.append((hm, float(model.speeds_flops[virtual])))
        if len(dvfs_hosts):
            self._dvfs(dvfs_hosts, target)
        self._machine_row()  # B32: one row per request applied
        if timed:
            sw = _Switch(resources, target, len(timed))
            order = next(self._order)
            clock = self._clock
            for hm, speed in timed:  # B23: one flop at the virtual pstate's speed, per host
                clock.start_execution(speed, True, _SWITCH, (sw, hm), _COMPLETION, order)
        else:  # pure DVFS: acknowledged in the next message (B8, B23)
            self._energy_row("p")
            self.pstate_rows.append((self.now_s, resources, target))
            self._out.append(self._event("RESOURCE_STATE_CHANGED", {"resources": resources, "state": str(target)}))

    def _switch_hosts_done(self, sw: _Switch, hosts: np.ndarray) -> None:
        """Hosts end their transition: the actor switching them sets their pstate and state (B40)."""
        self.dyn_w -= self._switching_dyn_w(hosts)
        off = self.mstate[hosts[0]] == _SWITCHING_OFF
        target_state = _SLEEPING if off else _IDLE
        self._set_pstate(hosts, sw.target)
        self._set_machine_state(hosts, len(hosts), target_state, uniform=_SWITCHING_OFF if off else _SWITCHING_ON)
        sw.pending -= 1

    def _switch_request_done(self, sw: _Switch) -> dict | None:
        """A request whose hosts have all ended their transition: its rows, written from the state
        of every host (B40: all the switches ending at this time are already applied), and its
        RESOURCE_STATE_CHANGED (B23)."""
        if sw.pending or sw.reported:
            return None
        sw.reported = True
        self._energy_row("p")  # B30: after the change
        self._machine_row()
        self.pstate_rows.append((self.now_s, sw.resources, sw.target))
        return self._event("RESOURCE_STATE_CHANGED", {"resources": sw.resources, "state": str(sw.target)})

    def _dvfs(self, hosts: np.ndarray, target: int) -> None:
        """Instantaneous pstate change, also under running jobs (B24)."""
        jobs = np.unique(self.job_of_host[hosts])
        running = [self._job_list[int(j)] for j in jobs if j >= 0]
        for rj in running:
            self._account_job_energy(rj)
        self._set_pstate(hosts, target)
        for rj in running:
            assert rj.hosts is not None  # a running job's
            rj.idle_w = self._host_sum(self._idle, rj.hosts, rj.nb_hosts)
            if rj.is_parallel:  # a delay takes its time whatever the speed (B22): its end stays put
                self._set_task_rate(rj)
                if rj.execution is not None:  # the work done is kept, the rest at the new rate (B24)
                    self._clock.set_rate(rj.execution, rj.rate, _COMPLETION, rj.start_seq)
                    if rj.sleep is not None:  # slowed down, it may now reach its walltime
                        self._clock.check_timeout(rj.sleep, rj.execution, _COMPLETION, rj.start_seq)

    # ------------------------------------------------------------------ job execution

    def _account_job_energy(self, rj: _RunJob) -> None:
        rj.energy_j += (rj.idle_w + rj.dyn_w) * (self.now_s - rj.energy_t_s)
        rj.energy_t_s = self.now_s

    def _set_task_rate(self, rj: _RunJob) -> None:
        """A multi-host task advances at the pace of its slowest host (B20): rate = min speed/flops
        over the hosts with work (SimGrid's bound of the task, one IEEE division per host, B43), and
        a host computing ``f`` of the slowest host's ``T`` is loaded ``f / (T x speed)``. A task with
        no work at all has rate 1 and ends at once (B17)."""
        self.dyn_w -= rj.dyn_w
        flops = rj.flops
        p = self._uniform_pstate()
        if p is not None and not isinstance(flops, np.ndarray):
            span = float(self._full[0, p] - self._idle[0, p])
            if flops <= 0.0:
                rj.rate, rj.work, rj.dyn_w, rj.first_dyn_w = 1.0, False, 0.0, 0.0
            else:
                rj.rate, rj.work = max(float(self._speed[0, p]) / flops, _MIN_RATE), True
                rj.dyn_w, rj.first_dyn_w = rj.nb_hosts * span, span
            self.dyn_w += rj.dyn_w
            return
        hosts = rj.hosts
        ps = self.pstate[hosts]
        models = 0 if self._single_model else self.model_of[hosts]
        speeds = self._speed[models, ps]
        with np.errstate(divide="ignore", over="ignore"):
            times = flops / speeds
            rates = speeds / flops
        t_max = float(np.max(times))
        if t_max <= 0.0:
            rj.rate, rj.work, rj.dyn_w, rj.first_dyn_w = 1.0, False, 0.0, 0.0
        else:
            rate = float(np.min(rates))
            rj.rate, rj.work = max(rate, _MIN_RATE), True
            if t_max < math.inf:
                load = times / t_max
            else:  # a time beyond a double: the loads from the rates (a host whose rate underflowed is the slowest)
                with np.errstate(divide="ignore", invalid="ignore"):
                    load = np.where(rates > 0.0, np.minimum(rate / rates, 1.0), 1.0)
            if self._eps is None:
                per_host = (self._full[models, ps] - self._idle[models, ps]) * load
            else:  # a loaded host draws epsilon + load x (full - epsilon) (SimGrid's get_current_watts_value)
                eps = self._eps[models, ps]
                per_host = np.where(load > 0.0, (eps - self._idle[models, ps]) + (self._full[models, ps] - eps) * load,
                                    0.0)
            per_host = np.broadcast_to(per_host, (rj.nb_hosts,))
            rj.dyn_w = float(per_host.sum())
            rj.first_dyn_w = float(per_host[0])
        self.dyn_w += rj.dyn_w

    # Lazy billing (B42). SimGrid's energy plugin bills a host only when it reads it: the time since
    # its previous reading at the power the host has at the moment of the new reading. Batsim reads
    # every host at each CSV row and QUERY, the hosts of a parallel task when it ends (also when
    # killed or cut by the walltime), a host whose pstate changes (always right after a 'p' row), a
    # switching host at each step of its switch, and the host of a job's actor (the first of the
    # allocation) when a delay ends or a compute part starts. So the only hosts whose power changes
    # unread are the other hosts of a job whose compute part starts after a delay: they are tracked
    # per job, as one group, until their next reading; every other host is billed eagerly.

    def _rest_power_w(self, rj: _RunJob) -> float:
        """Power drawn now by the hosts of ``rj`` but the first (Batsim runs the job's actor on
        the lowest id of the allocation)."""
        assert rj.alloc is not None  # a running job's
        h = rj.alloc.min
        return rj.idle_w - float(self._idle[self.model_of[h], self.pstate[h]]) + rj.dyn_w - rj.first_dyn_w

    def _unread_change(self, rj: _RunJob, before_w: float) -> None:
        """The hosts of ``rj`` but the first change power without being read; they drew ``before_w``."""
        now = self.now_s
        if rj.lag_read_s != rj.lag_read_s:  # NaN: nothing pending yet
            last = max(rj.read_s, self._last_reading_s)
            if last == now:
                return  # read at this very time: nothing to bill lazily
            rj.lag_read_s = rj.lag_change_s = last
            rj.lag_eager_j = 0.0
            self._lagging[id(rj)] = rj
        rj.lag_eager_j += before_w * (now - rj.lag_change_s)
        rj.lag_change_s = now

    def _bill_lag(self, rj: _RunJob) -> None:
        """Read the lagging hosts of ``rj``: their time since their last reading is billed at the
        power they draw now instead of what was billed eagerly."""
        extra_j = self._rest_power_w(rj) * (rj.lag_change_s - rj.lag_read_s) - rj.lag_eager_j
        self.energy_j += extra_j
        rj.energy_j += extra_j
        rj.lag_read_s = math.nan

    def _read_job_hosts(self, rj: _RunJob) -> None:
        """A parallel task of ``rj`` ends (or the job): all its hosts are read."""
        if rj.lag_read_s == rj.lag_read_s:
            self._bill_lag(rj)
            del self._lagging[id(rj)]
        rj.read_s = self.now_s

    def _read_all(self) -> None:
        """A CSV row or a QUERY reads every host."""
        if self._lagging:
            for rj in self._lagging.values():
                self._bill_lag(rj)
            self._lagging.clear()
        self._last_reading_s = self.now_s

    def _start_leaf(self, rj: _RunJob) -> None:
        """Start the current part of a job (B19-B22). Only the host of the job's actor is read
        then: on the other hosts, a compute part that follows a delay changes their power unread,
        billed at the compute power back to their last reading (B42, recorded by real Batsim:
        ``composed-profiles`` job 6, ``composed-profiles-c`` job 8)."""
        leaf = rj.leaves[rj.leaf_idx].profile
        rj.part_start_s = self.now_s
        self._account_job_energy(rj)
        clock = self._clock
        if isinstance(leaf, ParallelProfile):
            # the other hosts were read at the job's start and at the end of a parallel task: only
            # after a delay can their power change unread
            after_delay = rj.nb_hosts > 1 and rj.leaf_idx > 0 and not rj.is_parallel
            before_w = self._rest_power_w(rj) if after_delay else 0.0
            rj.is_parallel = True
            cpu = leaf.cpu
            if not isinstance(cpu, tuple):  # the two homogeneous kinds
                rj.flops = float(cpu) / rj.nb_hosts if leaf.kind == "parallel_homogeneous_total" else float(cpu)
            else:
                try:
                    rj.flops = np.asarray(leaf.flops_per_host(rj.nb_hosts), dtype=float)
                except ValueError as exc:
                    raise ProtocolError(f"EXECUTE_JOB {rj.job.id}: {exc}") from None
            self._set_task_rate(rj)
            if after_delay and rj.dyn_w != rj.first_dyn_w:
                self._unread_change(rj, before_w)
            # the execution, then (created after it: it loses a tie, B14) the walltime's timeout
            rj.execution = clock.start_execution(rj.rate, rj.work, _EXEC, rj, _COMPLETION, rj.start_seq)
            if rj.remaining_s >= 0.0:
                rj.sleep = clock.start_timeout(rj.remaining_s, _SLEEP, rj, _COMPLETION, rj.start_seq, rj.execution)
        else:
            rj.is_parallel = False
            self.dyn_w -= rj.dyn_w
            rj.dyn_w = rj.first_dyn_w = 0.0  # B21: a delay does not load the CPU
            delay = rj.delay_s = leaf.delay_s
            # B14: a delay reaching the walltime is cut by it
            rj.cut = 0.0 <= rj.remaining_s <= delay
            rj.sleep = clock.start_sleep(rj.remaining_s if rj.cut else delay, _SLEEP, rj, _COMPLETION, rj.start_seq)

    def _job_part_ended(self, rj: _RunJob, act: Action) -> tuple[str, int] | None:
        """An action of ``rj`` ended in this step: how the job ends (final state, return code),
        :data:`_GOES_ON` when its next part starts, or None when there is nothing to do (the action
        was made moot by another one of the same step).

        Batsim's job actor (B14, B16, B22): a compute part ends with its execution or, first, with
        its walltime timeout (the execution, created first, wins a tie in one step: a task ending
        exactly at the walltime succeeds); it then spends ``now - part start`` of the walltime
        budget. A delay part sleeps its delay, or the budget left when the delay reaches it (then
        the walltime is reached), and spends its delay. A part with a non-zero ``ret`` fails the
        job; the last part completes it.
        """
        if act is rj.execution:
            rj.execution = None
            if rj.sleep is not None:
                self._clock.cancel(rj.sleep)
                rj.sleep = None
            if rj.remaining_s >= 0.0:
                rj.remaining_s = rj.remaining_s - (self.now_s - rj.part_start_s)
        elif act is rj.sleep:
            rj.sleep = None
            execution = rj.execution
            if execution is not None:  # the walltime's timeout of a compute part
                if execution.ended:
                    rj.sleep = act  # the execution ends in this step too and wins
                    return None
                return "COMPLETED_WALLTIME_REACHED", -1
            if rj.cut:
                return "COMPLETED_WALLTIME_REACHED", -1
            if rj.remaining_s > 0.0:
                rj.remaining_s = rj.remaining_s - rj.delay_s
        else:
            return None
        ret = rj.leaves[rj.leaf_idx].ret
        if ret:  # Batsim's execute_job_process: > 0 failed, -1 walltime reached (B16; -2 and below refused)
            return ("COMPLETED_WALLTIME_REACHED", -1) if ret == -1 else ("COMPLETED_FAILED", ret)
        if rj.leaf_idx + 1 == len(rj.leaves):
            return "COMPLETED_SUCCESSFULLY", 0
        return _GOES_ON

    def _next_part(self, rj: _RunJob) -> None:
        """The current part of ``rj`` ends now and the next one starts (B22)."""
        if rj.is_parallel:
            self._read_job_hosts(rj)
        rj.leaf_idx += 1
        self._start_leaf(rj)

    def _end_job(self, rj: _RunJob, state: str, rc: int) -> dict:
        """The job ends (also killed, B15): its hosts are read (B42) and freed; its rows."""
        self._account_job_energy(rj)
        self._read_job_hosts(rj)
        self.dyn_w -= rj.dyn_w
        rj.dyn_w = rj.first_dyn_w = 0.0
        rj.status = JobStatus.DONE
        rj.final_state = state
        rj.return_code = rc
        rj.end_s = self.now_s
        rj.zero_work = rj.end_s == rj.start_s
        self._unreported.append(rj)
        finish = rj.start_s + ZERO_JOB_EXECUTION_S if rj.zero_work else rj.end_s
        if finish > self._makespan_s:
            self._makespan_s = finish
        for act in (rj.execution, rj.sleep):  # B41: a killed or cut task leaves nothing behind
            if act is not None:
                self._clock.cancel(act)
        rj.execution = rj.sleep = None
        hosts = rj.hosts
        assert hosts is not None  # a running job's
        self.job_of_host[hosts] = -1
        self._set_machine_state(hosts, rj.nb_hosts, _IDLE, _COMPUTING)
        rj.hosts = _NO_HOSTS  # (rj.alloc and rj.alloc_str keep them)
        self._energy_row("e")
        self._machine_row()
        self._last_completion = (self.now_s, self.energy_j)
        ev = self._event(
            "JOB_COMPLETED",
            {"job_id": rj.job.id, "job_state": state, "return_code": rc, "alloc": rj.alloc_str},
        )
        rj.flops = 0.0
        return ev

    def _progress_tree(self, rj: _RunJob) -> dict:
        """JOB_KILLED progress: leaf ``{profile_name, progress}`` under composed nodes (B15)."""
        leaf = rj.leaves[rj.leaf_idx]
        if rj.is_parallel:  # the fraction of the task done, from SimGrid's remains (B43)
            done = 1.0 - (self._clock.exact(rj.execution) if rj.execution is not None else 0.0)
        elif rj.delay_s > 0:
            left = max(0.0, rj.delay_s - (self.now_s - rj.part_start_s))
            done = (rj.delay_s - left) / rj.delay_s
        else:
            done = 1.0
        node: dict = {"profile_name": leaf.profile.name, "progress": r6(done)}
        for name, index in reversed(leaf.path):
            node = {"profile_name": name, "current_task_index": index, "current_task": node}
        return node

    _HANDLERS = {
        "EXECUTE_JOB": _on_execute,
        "REJECT_JOB": _on_reject,
        "KILL_JOB": _on_kill,
        "CALL_ME_LATER": _on_call_me_later,
        "QUERY": _on_query,
        "SET_RESOURCE_STATE": _on_set_state,
        "SET_JOB_METADATA": _on_metadata,
        "NOTIFY": _on_notify,
        "REGISTER_PROFILE": _on_register_profile,
        "REGISTER_JOB": _on_register_job,
        "ANSWER": _on_answer,
        "TO_JOB_MSG": _on_to_job_msg,
    }

    # ------------------------------------------------------------------ summaries for outputs

    @property
    def consumed_joules(self) -> float:
        """Batsim's ``consumed_joules``: from the first submission of a static job to the last job
        end (B29); each energy is -1 when there was none (Batsim's defaults, ``context.hpp``)."""
        last_j = self._last_completion[1] if self._last_completion is not None else -1.0
        first_j = self._first_submission_energy_j if self._first_submission_energy_j is not None else -1.0
        return last_j - first_j

    @property
    def makespan_s(self) -> float:
        return self._makespan_s

    def iter_jobs(self) -> Iterator[_RunJob]:
        return iter(self.jobs_rows)
