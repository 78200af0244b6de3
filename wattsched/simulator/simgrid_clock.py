"""Bit-exact shadow of SimGrid 3.32's clock, as driven by Batsim 4.2.1 (behaviours 38 and 43).

Real Batsim sometimes reports two events that happen "at the same time" in two messages with the
same ``now``: SimGrid ended them in two solver steps a few ulps apart (or even at the very same
double). Which executions end in a step is decided by floating-point arithmetic on the remaining
work of every running execution; this module reproduces that arithmetic operation by operation, so
that a caller knows, for each solver step, the exact double clock and the set of executions that
end then. It is standalone (the embedded engine does not use it yet; see "Integration" below).

The model (read from SimGrid 3.32 and Batsim 4.2.1; no code copied)
=====================================================================

Models and actions. Batsim sets ``host/model:ptask_L07``. The L07 host model owns every action of
the simulation in one list (its "started action set", in creation order) and one max-min system
solved with the ``fairbottleneck`` solver. An *action* has ``remains`` (work left), a ``rate``
(the value of its max-min variable) and a ``max_duration`` (``-1`` = none):

* an execution (``exec_init(hosts, flops)`` of a job's parallel task, or the 1-flop
  ``execute(1)`` of a switch on/off) starts with ``remains = 1.0``: the L07 action's cost is 1, the
  *fraction* of the task left, whatever the flops. Its variable is expanded on the CPU constraint of
  every host with weight ``flops_h``; its bound is ``min_h(speed_h * 1.0 / flops_h)`` over hosts with
  ``flops_h > 0``. With no compute sharing (one execution per host, sleeps disabled) the fair
  bottleneck solver gives ``rate = min_h(speed_h / flops_h)``: one IEEE division per host and an
  exact min, recomputed when a host's pstate changes (``CpuL07::on_speed_change``). A task with
  no work at all has ``remains = 0`` and rate 1: it ends in the next step, with delta 0.
  ``speed_h`` is the current pstate's speed as SimGrid parses it: ``strtod(number) * 1e6`` for
  ``Mf`` (so 88.95899053627761Mf is 88.95899053627761 * 1e6 rounded once).
* a sleep (``sleep_for(d)``, the timeout of ``wait_for(d)``, which Batsim uses for walltimes) is
  a 1-flop action with sharing penalty 0 (rate 0, never finishes by work) and
  ``max_duration = d``.
* messages between Batsim's actors are L07 communications over an empty route (one flat Vivaldi
  zone, zero latency): ``remains = 0`` and rate 1, so each one costs a solver step with delta 0.
  Such steps change nothing below (``x - r * 0 == x``), so they are not modelled; what they do is
  let Batsim's server send its message to the scheduler, and apply the reply, *before* any step
  with a positive delta.

A solver step (``EngineImpl::solve`` with no timer set, then ``HostL07Model::update_actions_state``):

1. ``delta = min`` over the actions of ``remains / rate`` (actions with ``rate > 0``; 0 when
   ``remains`` is 0) and of ``max_duration`` (actions with ``max_duration >= 0``). One IEEE division
   per running execution; the min is exact.
2. ``now = now + delta`` (one IEEE addition: the clock is the running sum of the deltas).
3. for every action, in creation order: ``remains = remains - rate * delta`` (product rounded, then
   difference rounded: SimGrid is built without ``-ffast-math`` and x86-64 has no implicit FMA), set
   to 0 when below ``sg_maxmin_precision * sg_surf_precision`` = 1e-5 * 1e-9 (the product as a
   double); then ``max_duration = max_duration - delta`` (if not -1), set to 0 when below
   ``sg_surf_precision`` = 1e-9.
4. an action *finishes in this step* when (it is an execution and ``remains <= 0``) or
   (``max_duration != -1`` and ``max_duration <= 0``).

So an execution ends in the step of another action if its remaining work after that step is below
1e-14 (a few 1e-13 s at the rates of these workloads), and a sleep ends with the step when less
than 1e-9 s of it is left. Otherwise it ends in a later step, with a tiny delta: the clock moves by
a few ulps, or by nothing when ``now + delta == now`` (behaviour 43: 3940 s and 11300 s in
``pybatsim-easy-c``). Because the remains and max durations are reduced at every step by the
rounded deltas of all steps since the action began, the outcome depends on the whole sequence of
steps: every sleep of every Batsim actor must be shadowed, not only the executions.

Batsim's actors and the sleeps they create (all times are the double clock above):

* the job submitter (``static_job_submitter_process``): jobs sorted by (subtime, id string); it
  keeps ``current = clock`` as a ``long double`` and sleeps
  ``(double)((long double)subtime - current)`` before the first job of a later subtime, then
  ``current = clock`` again; a job is submitted with the group of the step it wakes at, and if the
  clock woke a hair *before* the next same-subtime job (``subtime > current``), that job needs
  another, tiny, sleep (this would split same-time submissions; not seen in the recordings).
* a job (``execute_job_process``): ``remaining = (double)walltime`` (-1: none); a parallel task is
  an execution plus, with a walltime, a timeout sleep of ``remaining`` created after it; on its end
  ``remaining -= (now - start)``, on the timeout the job ends ``COMPLETED_WALLTIME_REACHED`` and
  the execution is cancelled when the actor exits (same time); a delay part is
  ``sleep_for(delay)`` (then ``remaining -= delay``) or ``sleep_for(remaining)`` if
  ``delay >= remaining`` (walltime); composed parts follow at the same clock; a part with
  ``ret != 0`` ends the job. A kill removes the job's actions at once.
* a CALL_ME_LATER (``waiter_process``): ``sleep_for(max(target - now, 1e-5))`` if ``now < target``.
* a switch off/on (``switch_*_machine_process``): ``set_pstate(virtual)`` then ``execute(1)`` at
  the virtual pstate's speed (``remains 1``, ``rate = speed``), then the final pstate.
* a DVFS change: ``set_pstate`` at once: new rates for the executions on that host.
* the reply of the scheduler (``request_reply_scheduler_process`` then
  ``JsonProtocolReader::send_message_at_time``): each event, and the final SCHED_READY, is
  applied after ``sleep_for(ts - now)`` when its ``timestamp`` (or the reply's ``now``) is above
  the clock. Schedulers echo the ``now`` Batsim printed with ``%f``, so when the true clock is a
  few ulps below a printed value, the reply first sleeps those ulps: a step of its own, which
  may end other actions (their events go to the next message).

Batsim's server sends its message as soon as its mailbox is empty; the messages of one step all
arrive before that (zero-delta steps come first), so **one Batsim message holds the events of one
solver step**, and the events of a later step, even at the same clock, come in a later message,
after the reply to the first one (behaviour 43).

Use
===

:class:`L07Clock` is SimGrid's part (actions in numpy arrays, one :meth:`L07Clock.solve_step` per
solver step); :class:`BatsimShadow` adds Batsim's actors (submitter, jobs with walltimes and
composed profiles, waiters, switches, DVFS, kills, reply sleeps) and reports, for each step that
Batsim would report, :class:`Step` (the exact clock, the delta, and the events).

Integration into ``engine.py`` (not done here)
==============================================

The engine computes each job end in closed form (``t0 + remaining / rate``). To split exactly like
Batsim it would keep a :class:`L07Clock` next to its event queue: add an execution at each task
start (flops per host, host speeds), a sleep for each walltime timeout, delay part, submitter wait
and CALL_ME_LATER, ``set_pstate`` on DVFS and switches, ``cancel`` on kills; the next event time is
``solve_step``'s clock, the ended actions are that step's events, and message ``now`` / energy
integration use that clock. Cost: O(live actions) numpy work per solver step, independent of the
number of hosts (see ``tests/test_simgrid_clock.py`` and the report of this work for figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = [
    "NO_MAX_DURATION",
    "SURF_PRECISION",
    "MAXMIN_PRECISION",
    "REMAINS_PRECISION",
    "L07Clock",
    "Step",
    "BatsimShadow",
    "long_double_sleep",
]

#: ``Action::NO_MAX_DURATION``.
NO_MAX_DURATION = -1.0
#: ``sg_surf_precision`` (``surf/precision``), the threshold of max durations.
SURF_PRECISION = 1e-9
#: ``sg_maxmin_precision`` (``maxmin/precision``).
MAXMIN_PRECISION = 1e-5
#: Threshold of ``Action::update_remains``: the product, as SimGrid computes it.
REMAINS_PRECISION = MAXMIN_PRECISION * SURF_PRECISION
#: Batsim's minimum CALL_ME_LATER sleep (``waiter_process``).
WAITER_MIN_SLEEP = 1e-5


def _round_fraction(x: Fraction, bits: int) -> Fraction:
    """``x`` rounded to nearest-even with a ``bits``-bit significand (no exponent range limits)."""
    if x == 0:
        return Fraction(0)
    sign = -1 if x < 0 else 1
    x = abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    # scale so that 2**(bits-1) <= m < 2**bits
    shift = bits - 1 - e
    m = x * (Fraction(2) ** shift)
    while m >= 2**bits:
        m /= 2
        shift -= 1
    while m < 2 ** (bits - 1):
        m *= 2
        shift += 1
    q, r = divmod(m.numerator, m.denominator)
    twice = 2 * r
    if twice > m.denominator or (twice == m.denominator and q % 2 == 1):
        q += 1
    return sign * Fraction(q) / (Fraction(2) ** shift)


def long_double_sleep(target: float, current: float) -> float:
    """``(double)((long double)target - (long double)current)`` on x86-64 (64-bit significand)."""
    exact = Fraction(target) - Fraction(current)
    return float(_round_fraction(exact, 64))  # float() of a Fraction rounds correctly to 53 bits


# --------------------------------------------------------------------------------------------------
# SimGrid's part: the L07 model's actions and the solver step
# --------------------------------------------------------------------------------------------------
class L07Clock:
    """The actions of SimGrid's L07 host model and its solver steps, bit for bit.

    Live actions sit in compact numpy arrays (``remains``, ``rate``, ``max_duration``); each action
    has a handle (an int) and an ``owner`` given by the caller. Hosts are numbered 0..n-1 and have
    one speed per pstate (flop/s, as SimGrid parsed them).
    """

    def __init__(self, speeds: Sequence[Sequence[float]], pstates: Sequence[int]) -> None:
        self.speeds = [tuple(float(s) for s in sp) for sp in speeds]
        self.pstates = [int(p) for p in pstates]
        self.now = 0.0
        cap = 64
        self._remains = np.zeros(cap)
        self._rate = np.zeros(cap)
        self._maxdur = np.full(cap, NO_MAX_DURATION)
        self._is_exec = np.zeros(cap, dtype=bool)
        self._seq = np.zeros(cap, dtype=np.int64)
        self._n = 0
        self._handle_of_slot: list[int] = []
        self._slot_of: dict[int, int] = {}
        self._owner: dict[int, Any] = {}
        self._tasks: dict[int, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._by_host: dict[int, set[int]] = {}
        self._next_handle = 0
        self.steps = 0

    # ---- actions -----------------------------------------------------------------------------
    def _grow(self) -> None:
        cap = 2 * len(self._remains)
        for name, fill in (("_remains", 0.0), ("_rate", 0.0), ("_maxdur", NO_MAX_DURATION)):
            old = getattr(self, name)
            new = np.full(cap, fill)
            new[: len(old)] = old
            setattr(self, name, new)
        for name, dtype in (("_is_exec", bool), ("_seq", np.int64)):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _add(self, remains: float, rate: float, maxdur: float, is_exec: bool, owner: Any) -> int:
        if self._n == len(self._remains):
            self._grow()
        h = self._next_handle
        self._next_handle += 1
        s = self._n
        self._n += 1
        self._remains[s] = remains
        self._rate[s] = rate
        self._maxdur[s] = maxdur
        self._is_exec[s] = is_exec
        self._seq[s] = h
        self._handle_of_slot.append(h)
        self._slot_of[h] = s
        self._owner[h] = owner
        return h

    def task_rate(self, hosts: Sequence[int], flops: Sequence[float]) -> float:
        """The fair-bottleneck value of a lone task: ``min_h speed_h / flops_h`` (flops > 0)."""
        rate = None
        for h, f in zip(hosts, flops):
            if f > 0:
                v = self.speeds[h][self.pstates[h]] / f
                rate = v if rate is None else min(rate, v)
        return 1.0 if rate is None else rate  # no work: the variable gets value 1

    def execute(self, hosts: Sequence[int], flops: Sequence[float], owner: Any = None) -> int:
        """A (parallel) execution started now; returns its handle."""
        hosts = tuple(int(h) for h in hosts)
        flops = tuple(float(f) for f in flops)
        has_work = any(f > 0 for f in flops)
        h = self._add(1.0 if has_work else 0.0, self.task_rate(hosts, flops), NO_MAX_DURATION, True, owner)
        self._tasks[h] = (hosts, flops)
        for host in hosts:
            self._by_host.setdefault(host, set()).add(h)
        return h

    def sleep(self, duration: float, owner: Any = None) -> int:
        """A sleep (``sleep_for`` or a ``wait_for`` timeout) of ``duration`` seconds from now."""
        return self._add(1.0, 0.0, float(duration), False, owner)

    def cancel(self, handle: int) -> None:
        """Remove an action (kill, cancelled execution, timeout of an execution that ended)."""
        s = self._slot_of.pop(handle, None)
        if s is None:
            return
        last = self._n - 1
        if s != last:
            for arr in (self._remains, self._rate, self._maxdur, self._is_exec, self._seq):
                arr[s] = arr[last]
            moved = self._handle_of_slot[last]
            self._handle_of_slot[s] = moved
            self._slot_of[moved] = s
        self._handle_of_slot.pop()
        self._n -= 1
        self._owner.pop(handle, None)
        task = self._tasks.pop(handle, None)
        if task is not None:
            for host in task[0]:
                self._by_host[host].discard(handle)

    def alive(self, handle: int) -> bool:
        return handle in self._slot_of

    def remains(self, handle: int) -> float:
        return float(self._remains[self._slot_of[handle]])

    def rate(self, handle: int) -> float:
        return float(self._rate[self._slot_of[handle]])

    def max_duration(self, handle: int) -> float:
        return float(self._maxdur[self._slot_of[handle]])

    def owner(self, handle: int) -> Any:
        return self._owner[handle]

    def __len__(self) -> int:
        return self._n

    def set_pstate(self, host: int, pstate: int) -> None:
        """``CpuImpl::set_pstate``: new speed, new bound (rate) for the executions on the host."""
        self.pstates[host] = int(pstate)
        for h in self._by_host.get(host, ()):
            hosts, flops = self._tasks[h]
            self._rate[self._slot_of[h]] = self.task_rate(hosts, flops)

    # ---- the solver step ---------------------------------------------------------------------
    def next_delta(self) -> float:
        """``EngineImpl::solve``'s ``time_delta`` (-1 when nothing can end)."""
        n = self._n
        if n == 0:
            return -1.0
        rate = self._rate[:n]
        rem = self._remains[:n]
        md = self._maxdur[:n]
        best = np.inf
        running = rate > 0
        if running.any():
            r = rate[running]
            x = rem[running]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(x > 0, x / r, 0.0)
            best = float(t.min())
        timed = md >= 0
        if timed.any():
            best = min(best, float(md[timed].min()))
        return -1.0 if best == np.inf else best

    def solve_step(self) -> tuple[float, list[int]] | None:
        """One solver step: advance the clock, update every action; return (delta, ended handles).

        Ended handles come in SimGrid's order (creation order) and are removed from the model.
        None when no action can ever end.
        """
        delta = self.next_delta()
        if delta < 0:
            return None
        self.now = self.now + delta
        self.steps += 1
        n = self._n
        rem = self._remains[:n]
        md = self._maxdur[:n]
        rem -= self._rate[:n] * delta
        rem[rem < REMAINS_PRECISION] = 0.0
        timed = md != NO_MAX_DURATION
        md[timed] -= delta
        md[timed & (md < SURF_PRECISION)] = 0.0
        done = (self._is_exec[:n] & (rem <= 0)) | (timed & (md <= 0))
        slots = np.flatnonzero(done)
        if len(slots) == 0:
            return delta, []
        order = slots[np.argsort(self._seq[slots], kind="stable")]
        handles = [self._handle_of_slot[s] for s in order]
        return delta, handles

    def pop_owner(self, handle: int) -> Any:
        owner = self._owner.get(handle)
        self.cancel(handle)
        return owner


# --------------------------------------------------------------------------------------------------
# Batsim's part: the actors that create actions
# --------------------------------------------------------------------------------------------------
@dataclass
class Step:
    """A solver step Batsim reports: its exact clock, delta, and events.

    ``events`` are tuples: ``("JOB_SUBMITTED", job_id)``, ``("JOB_COMPLETED", job_id, state)`` with
    state ``COMPLETED_SUCCESSFULLY`` / ``COMPLETED_FAILED`` / ``COMPLETED_WALLTIME_REACHED``,
    ``("REQUESTED_CALL", target)``, ``("SWITCHED", request_tag)``.
    """

    now: float
    delta: float
    events: list[tuple] = field(default_factory=list)
    index: int = 0  # solver steps done so far (all, reported or not)


@dataclass
class _Part:
    kind: str  # "parallel" | "delay"
    value: Any  # flops per host | delay (s)
    ret: int = 0


@dataclass
class _JobRun:
    job_id: str
    hosts: tuple[int, ...]
    parts: list  # flattened list of _Part / ("ret", code) markers ending composed profiles
    remaining: float  # walltime left (-1: none)
    index: int = 0
    exec_handle: int | None = None
    timeout_handle: int | None = None
    sleep_handle: int | None = None
    part_start: float = 0.0


def _flatten(profile, nb_hosts: int, profiles: dict | None) -> list:
    """Profile -> list of parts; composed profiles end with a ("ret", code) marker."""
    from wattsched.simulator.workload import ComposedProfile, DelayProfile, ParallelProfile

    if isinstance(profile, str):
        profile = profiles[profile]
    if isinstance(profile, ParallelProfile):
        return [_Part("parallel", profile.flops_per_host(nb_hosts), profile.ret)]
    if isinstance(profile, DelayProfile):
        return [_Part("delay", float(profile.delay_s), profile.ret)]
    if isinstance(profile, ComposedProfile):
        out: list = []
        for _ in range(profile.repeat):
            for sub in profile.seq:
                out.extend(_flatten(sub, nb_hosts, profiles))
        out.append(("ret", profile.ret))
        return out
    raise TypeError(f"unknown profile {profile!r}")


class BatsimShadow:
    """Batsim 4.2.1's actors on top of :class:`L07Clock`: which sleeps and executions exist when.

    Feed it what the scheduler does (:meth:`start_job`, :meth:`kill_job`, :meth:`call_me_later`,
    :meth:`set_pstate`, :meth:`switch`, :meth:`reach` for the timestamps of a reply) and ask for the
    next reported step with :meth:`advance`. ``jobs`` are ``(job_id, subtime, walltime or None)``.
    """

    def __init__(
        self,
        speeds: Sequence[Sequence[float]],
        pstates: Sequence[int],
        jobs: Iterable[tuple[str, float, float | None]] = (),
    ) -> None:
        self.clock = L07Clock(speeds, pstates)
        jobs = sorted(jobs, key=lambda j: (j[1], j[0]))
        self.walltime = {j[0]: j[2] for j in jobs}
        self._to_submit = [(j[0], float(j[1])) for j in jobs]
        self._sub_pos = 0
        self._current = 0.0  # the submitter's current_submission_date
        self._runs: dict[str, _JobRun] = {}
        self._switch_left: dict[Any, int] = {}
        self._pending: list[tuple] = []  # events of steps not reported yet
        self.all_steps: list[Step] = []  # every reported step
        self.trace: list[tuple[float, float, list]] = []  # every solver step (now, delta, owners)
        self._initial = self._submitter_run(first=True)

    @property
    def now(self) -> float:
        return self.clock.now

    # ---- submitter ---------------------------------------------------------------------------
    def _submitter_run(self, first: bool = False) -> list[tuple]:
        """Run the submitter from where it stopped; return the submissions it sends now."""
        group: list[tuple] = []
        events: list[tuple] = []
        if not first:
            # it just woke up: the job it slept for is pushed whatever the clock
            self._current = self.clock.now
            job_id, _ = self._to_submit[self._sub_pos]
            group.append(("JOB_SUBMITTED", job_id))
            self._sub_pos += 1
        while self._sub_pos < len(self._to_submit):
            job_id, subtime = self._to_submit[self._sub_pos]
            if subtime > self._current:
                events.extend(group)
                group = []
                self.clock.sleep(long_double_sleep(subtime, self._current), ("submitter",))
                return events
            group.append(("JOB_SUBMITTED", job_id))
            self._sub_pos += 1
        events.extend(group)
        return events

    # ---- jobs --------------------------------------------------------------------------------
    def start_job(self, job_id: str, hosts: Sequence[int], profile, profiles: dict | None = None) -> None:
        """EXECUTE_JOB applied now: ``profile`` is a workload profile object (or name + ``profiles``)."""
        hosts = tuple(hosts)
        wt = self.walltime.get(job_id)
        run = _JobRun(job_id, hosts, _flatten(profile, len(hosts), profiles), -1.0 if wt is None else float(wt))
        self._runs[job_id] = run
        ev = self._job_continue(run, 0)
        if ev is not None:
            self._pending.append(ev)

    def _job_continue(self, run: _JobRun, ret: int) -> tuple | None:
        """Run the job's actor from part ``run.index`` until it waits or ends; the end event or None."""
        while run.index < len(run.parts):
            part = run.parts[run.index]
            run.index += 1
            if isinstance(part, tuple):  # end of a composed profile
                if part[1] != 0:
                    return self._job_end(run, "COMPLETED_FAILED")
                continue
            if part.kind == "parallel":
                run.part_start = self.clock.now
                run.exec_handle = self.clock.execute(run.hosts, part.value, ("exec", run.job_id))
                run.timeout_handle = None
                if run.remaining >= 0:
                    run.timeout_handle = self.clock.sleep(run.remaining, ("timeout", run.job_id))
                run._ret = part.ret
                return None
            # delay
            if run.remaining < 0 or part.value < run.remaining:
                run.sleep_handle = self.clock.sleep(part.value, ("delay", run.job_id))
                run._walltime_cut = False
            else:
                run.sleep_handle = self.clock.sleep(run.remaining, ("delay", run.job_id))
                run._walltime_cut = True
            run._ret = part.ret
            run._delay = part.value
            return None
        return self._job_end(run, "COMPLETED_SUCCESSFULLY")

    def _job_end(self, run: _JobRun, state: str) -> tuple:
        self._runs.pop(run.job_id, None)
        return ("JOB_COMPLETED", run.job_id, state)

    def _on_exec_end(self, run: _JobRun) -> tuple | None:
        run.exec_handle = None
        if run.timeout_handle is not None:
            self.clock.cancel(run.timeout_handle)
            run.timeout_handle = None
        if run.remaining >= 0:
            run.remaining = run.remaining - (self.clock.now - run.part_start)
        if run._ret != 0:
            return self._job_end(run, "COMPLETED_FAILED")
        return self._job_continue(run, 0)

    def _on_timeout(self, run: _JobRun) -> tuple:
        run.timeout_handle = None
        if run.exec_handle is not None:
            self.clock.cancel(run.exec_handle)  # cancelled when the actor exits, same clock
            run.exec_handle = None
        return self._job_end(run, "COMPLETED_WALLTIME_REACHED")

    def _on_delay_end(self, run: _JobRun) -> tuple | None:
        run.sleep_handle = None
        if run._walltime_cut:
            run.remaining = 0.0
            return self._job_end(run, "COMPLETED_WALLTIME_REACHED")
        if run.remaining > 0:
            run.remaining = run.remaining - run._delay
        if run._ret != 0:
            return self._job_end(run, "COMPLETED_FAILED")
        return self._job_continue(run, 0)

    def kill_job(self, job_id: str) -> None:
        """KILL_JOB applied now: the job's actions disappear (no step)."""
        run = self._runs.pop(job_id, None)
        if run is None:
            return
        for h in (run.exec_handle, run.timeout_handle, run.sleep_handle):
            if h is not None:
                self.clock.cancel(h)

    # ---- calls, pstates, switches, reply sleeps ----------------------------------------------
    def call_me_later(self, target: float) -> None:
        now = self.clock.now
        if now < target:
            wait = target - now
            if wait < WAITER_MIN_SLEEP:
                wait = WAITER_MIN_SLEEP
            self.clock.sleep(wait, ("call", target))
        else:
            self._pending.append(("REQUESTED_CALL", target))

    def set_pstate(self, host: int, pstate: int) -> None:
        """An instantaneous DVFS change."""
        self.clock.set_pstate(host, pstate)

    def switch(self, hosts: Sequence[int], virtual_pstate: int, final_pstate: int, tag: Any) -> None:
        """A switch off or on of ``hosts`` (one request): 1 flop at ``virtual_pstate`` per host."""
        hosts = list(hosts)
        self._switch_left[tag] = self._switch_left.get(tag, 0) + len(hosts)
        for host in hosts:
            self.clock.set_pstate(host, virtual_pstate)
            self.clock.execute((host,), (1.0,), ("switch", tag, host, final_pstate))

    def reach(self, timestamp: float) -> None:
        """``send_message_at_time``: sleep until ``timestamp`` if it is above the clock.

        Steps done meanwhile are reported with the next message (their events are kept pending).
        """
        if timestamp > self.clock.now:
            h = self.clock.sleep(timestamp - self.clock.now, ("reply",))
            while self.clock.alive(h):
                if not self._one_step(into_pending=True):
                    break

    # ---- steps -------------------------------------------------------------------------------
    def _one_step(self, into_pending: bool) -> Step | None:
        res = self.clock.solve_step()
        if res is None:
            return None
        delta, handles = res
        events: list[tuple] = []
        owners = []
        for h in handles:
            if not self.clock.alive(h):
                continue  # removed by an action that ended before it in this step
            owner = self.clock.pop_owner(h)
            owners.append(owner)
            ev = self._dispatch(owner)
            if ev:
                events.extend(ev)
        self.trace.append((self.clock.now, delta, owners))
        step = Step(self.clock.now, delta, events, self.clock.steps)
        if events and into_pending:
            self._pending.extend(events)
        return step

    def _dispatch(self, owner) -> list[tuple]:
        kind = owner[0]
        if kind == "submitter":
            return self._submitter_run()
        if kind == "call":
            return [("REQUESTED_CALL", owner[1])]
        if kind == "reply":
            return []
        if kind == "switch":
            _, tag, host, final = owner
            self.clock.set_pstate(host, final)
            self._switch_left[tag] -= 1
            if self._switch_left[tag] == 0:
                del self._switch_left[tag]
                return [("SWITCHED", tag)]
            return []
        run = self._runs.get(owner[1])
        if run is None:
            return []
        if kind == "exec":
            ev = self._on_exec_end(run)
        elif kind == "timeout":
            ev = self._on_timeout(run)
        elif kind == "delay":
            ev = self._on_delay_end(run)
        else:  # pragma: no cover
            raise AssertionError(owner)
        return [ev] if ev is not None else []

    def advance(self) -> Step | None:
        """The next step Batsim reports (one message's worth of step events), or None at the end.

        Events left pending (submissions at t=0, ends of zero-work jobs started by a reply, steps
        done while a reply slept) are reported first, as a step of their own at the current clock.
        """
        if self._initial:
            ev, self._initial = self._initial, []
            self._pending = ev + self._pending
        if self._pending:
            ev, self._pending = self._pending, []
            step = Step(self.clock.now, 0.0, ev, self.clock.steps)
            self.all_steps.append(step)
            return step
        while True:
            step = self._one_step(into_pending=False)
            if step is None:
                return None
            if step.events:
                self.all_steps.append(step)
                return step


# --------------------------------------------------------------------------------------------------
# Driving the shadow from a recording of real Batsim (evidence for behaviours 38 and 43)
# --------------------------------------------------------------------------------------------------
@dataclass
class RecordingCheck:
    """Steps predicted from a recording's scheduler side, against the recorded Batsim messages.

    ``groups`` pairs, for every recorded Batsim message holding events that a solver step causes
    (submissions, non-killed completions, requested calls, switch completions), the recorded
    events (line number, printed now, sorted events) with the predicted step. ``mismatches`` lists
    the pairs that differ; ``recorded_splits`` / ``predicted_splits`` are the line numbers of
    messages whose step events share the printed ``now`` of the previous step message.
    """

    scenario: str
    groups: list[tuple[int, float, list, Step | None]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    recorded_splits: list[int] = field(default_factory=list)
    predicted_splits: list[int] = field(default_factory=list)
    shadow: BatsimShadow | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _hosts_of(text: str) -> list[int]:
    out: list[int] = []
    for token in text.split():
        a, sep, b = token.partition("-")
        out.extend(range(int(a), int(b) + 1) if sep else [int(a)])
    return sorted(out)


def _event_key(ev: tuple) -> tuple:
    if ev[0] == "REQUESTED_CALL":
        return ("REQUESTED_CALL",)
    if ev[0] == "SWITCHED":
        return ("SWITCHED", ev[1][0], ev[1][1])
    return ev


def check_recording(folder) -> RecordingCheck:
    """Drive a :class:`BatsimShadow` with the scheduler side of a recording and compare the steps."""
    import json
    from pathlib import Path

    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import _ProfileReader, load_workload

    folder = Path(folder)
    platform = load_platform(folder / "platform.xml")
    workload = load_workload(folder / "workload.json")
    with open(folder / "messages.jsonl") as fh:
        lines = [json.loads(x) for x in fh if x.strip()]
    models = [h.model for h in platform.hosts]
    shadow = BatsimShadow(
        [m.speeds_flops for m in models],
        [h.initial_pstate for h in platform.hosts],
        [(j.id, j.subtime_s, j.walltime_s) for j in workload.jobs],
    )
    static_ids = {j.id for j in workload.jobs}
    job_profile = {j.id: j.profile for j in workload.jobs}
    profiles: dict[str, dict] = {workload.name: dict(workload.profiles)}
    pstate = [h.initial_pstate for h in platform.hosts]
    outstanding: list[tuple[str, str, int]] = []  # switch requests not reported yet
    serial = 0
    check = RecordingCheck(folder.name, shadow=shadow)
    last_step_now: float | None = None

    def recorded_step_events(msg: dict) -> list[tuple]:
        out = []
        for ev in msg["events"]:
            t, d = ev["type"], ev["data"]
            if t == "JOB_SUBMITTED" and d["job_id"] in static_ids:
                out.append(("JOB_SUBMITTED", d["job_id"]))
            elif t == "JOB_COMPLETED" and d["job_state"] != "COMPLETED_KILLED":
                out.append(("JOB_COMPLETED", d["job_id"], d["job_state"]))
            elif t == "REQUESTED_CALL":
                out.append(("REQUESTED_CALL",))
            elif t == "RESOURCE_STATE_CHANGED":
                for k, tag in enumerate(outstanding):
                    if tag[0] == d["resources"] and tag[1] == d["state"]:
                        outstanding.pop(k)
                        out.append(("SWITCHED", tag[0], tag[1]))
                        break
        return sorted(out)

    def apply_reply(reply: dict) -> None:
        nonlocal serial
        for ev in reply["events"]:
            shadow.reach(ev["timestamp"])
            t, d = ev["type"], ev["data"]
            if t == "EXECUTE_JOB":
                jid = d["job_id"]
                wl = jid.split("!")[0]
                shadow.start_job(jid, _hosts_of(d["alloc"]), profiles[wl][job_profile[jid]])
            elif t == "KILL_JOB":
                for jid in d["job_ids"]:
                    shadow.kill_job(jid)
            elif t == "CALL_ME_LATER":
                shadow.call_me_later(float(d["timestamp"]))
            elif t == "REGISTER_PROFILE":
                reader = _ProfileReader("dynamic", {d["profile_name"]: d["profile"]})
                profiles.setdefault(d["workload_name"], {})[d["profile_name"]] = reader.get(d["profile_name"])
            elif t == "REGISTER_JOB":
                jid = d["job_id"]
                job = d["job"]
                job_profile[jid] = job["profile"]
                wt = job.get("walltime")
                shadow.walltime[jid] = None if wt is None or wt == -1 else float(wt)
            elif t == "SET_RESOURCE_STATE":
                target = int(d["state"])
                hosts = _hosts_of(d["resources"])
                off, on = [], []
                for h in hosts:
                    m = models[h]
                    if target == m.sleep_pstate:
                        off.append(h)
                    elif pstate[h] == m.sleep_pstate:
                        on.append(h)
                    else:
                        shadow.set_pstate(h, target)
                        pstate[h] = target
                if off or on:
                    serial += 1
                    tag = (d["resources"], d["state"], serial)
                    outstanding.append(tag)
                    for group, attr in ((off, "switch_off_pstate"), (on, "switch_on_pstate")):
                        for h in group:
                            shadow.switch([h], getattr(models[h], attr), target, tag)
                            pstate[h] = target
        shadow.reach(reply["now"])

    i = 0
    while i < len(lines):
        side, msg = lines[i]["from"], lines[i]["message"]
        assert side == "batsim", (folder, i + 1)
        if any(ev["type"] == "SIMULATION_BEGINS" for ev in msg["events"]):
            apply_reply(lines[i + 1]["message"])
            i += 2
            continue
        rec = recorded_step_events(msg)
        if rec:
            step = shadow.advance()
            pred = sorted(_event_key(e) for e in step.events) if step is not None else None
            check.groups.append((i + 1, msg["now"], rec, step))
            if last_step_now is not None and msg["now"] == last_step_now:
                check.recorded_splits.append(i + 1)
            if step is not None and check.groups[:-1]:
                prev = check.groups[-2][3]
                if prev is not None and float(f"{prev.now:.6f}") == float(f"{step.now:.6f}"):
                    check.predicted_splits.append(i + 1)
            last_step_now = msg["now"]
            if step is None:
                check.mismatches.append(f"line {i + 1}: recorded {rec} at {msg['now']}, predicted nothing")
            elif pred != rec or float(f"{step.now:.6f}") != msg["now"]:
                check.mismatches.append(
                    f"line {i + 1}: recorded {rec} at {msg['now']}, predicted {pred} at {step.now!r}"
                )
        if i + 1 < len(lines):
            apply_reply(lines[i + 1]["message"])
        i += 2
    return check
