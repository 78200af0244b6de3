"""Bit-exact shadow of SimGrid 3.32's clock, as driven by Batsim 4.2.1 (behaviours 38 and 43).

Real Batsim sometimes reports two events that happen "at the same time" in two messages with the
same ``now``: SimGrid ended them in two solver steps a few ulps apart (or even at the very same
double). Which executions end in a step is decided by floating-point arithmetic on the remaining
work of every running execution; this module reproduces that arithmetic operation by operation, so
that a caller knows, for each solver step, the exact double clock and the set of executions that
end then. It also shadows SimGrid's energy plugin, host by host, which gives Batsim's energy
values to the last printed digit. It is standalone (the embedded engine does not use it yet; see
"Integration" below and ``docs/simgrid-clock.md``).

Evidence (``tests/test_simgrid_clock.py``, driven by the scheduler side of the 14 recordings):
every Batsim message holding step events is one predicted step with the same events and printed
``now`` (1,266 messages); the splits predicted are exactly the recorded ones (``pybatsim-easy-c``
lines 213 and 605, and the zero-work job of ``simultaneous-events``, B8); every row of every
``_consumed_energy.csv`` (1,596 rows: time, energy, epower, including the 654 epower cells between
rows printed with the same time, 27 of them numeric such as 7168.000000), every ANSWER (121) and
every job's ``consumed_energy`` (553) come out character for character.

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
   difference rounded: SimGrid is built without ``-ffast-math`` and baseline x86-64 has no FMA; a
   fused variant gives the same results on the recordings, which cannot tell them apart), set
   to 0 when below ``sg_maxmin_precision * sg_surf_precision`` = 1e-5 * 1e-9 (the product as a
   double); then ``max_duration = max_duration - delta`` (if not -1), set to 0 when below
   ``sg_surf_precision`` = 1e-9. ``rate`` is the variable's value from the solve of step 1 (a new
   action has value 0 until then; a pstate change takes effect at that solve).
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

Energy (``src/plugins/host_energy.cpp``; Batsim's ``EnergyConsumptionTracer``): each host keeps a
double ``E`` and the clock ``last`` of its previous update; an update at ``now > last`` adds
``P * (now - last)``, with ``P`` the power of the pstate saved at the previous update and of the
CPU load *at this update* (``idle`` at load 0, else ``epsilon + min(1, load / speed) * (max -
epsilon)``, load = ``flops_h * value``), then saves the current pstate. Updates happen when an
action on the host changes state (an execution ends or is cancelled: its hosts; a walltime or
delay sleep ends: the job's first host, where its actor runs), when a one-host execution starts,
on every ``set_pstate``, and on every read: Batsim reads the job's hosts then all hosts at each job
start and end, all hosts at each ``p`` row, QUERY and at the first submission. A row's energy is
the ``long double`` sum of the hosts in id order; ``epower`` is the ``long double`` quotient of
the differences with the previous row (NA when the clock did not move), printed as a double.

Use
===

:class:`L07Clock` is SimGrid's part (actions in numpy arrays, one :meth:`L07Clock.solve_step` per
solver step); :class:`BatsimShadow` adds Batsim's actors (submitter, jobs with walltimes and
composed profiles, waiters, switches, DVFS, kills, reply sleeps) and reports, for each step that
Batsim would report, :class:`Step` (the exact clock, the delta, and the events).

Integration into ``engine.py`` (not done here; plan in ``docs/simgrid-clock.md``)
=================================================================================

The engine computes each job end in closed form (``t0 + remaining / rate``). To split exactly like
Batsim it would keep one :class:`L07Clock` as its source of time: an execution at each compute part
(flops per host), a sleep for each walltime timeout, delay part, submitter wait, CALL_ME_LATER and
reply timestamp above the clock; ``set_pstate`` on DVFS and switches; ``cancel`` on kills and on
ends that make a timeout moot. The next event is ``solve_step``: its clock is the message ``now``
and the time of the energy integration, its ended actions are the message's events. Cost: a few
numpy operations on the live actions per solver step (about 15 us, flat in the number of hosts;
0.6 s for the 35,000 steps of a 20,000-job week on 1,152 hosts), plus about 20 us of bookkeeping
per job. Bit-exact energies need every host updated at every CSV row (O(hosts) per row), so they
would be an option for small platforms only.
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
    "EnergyShadow",
    "EnergyRow",
    "RecordingCheck",
    "check_recording",
    "format_long_double",
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
class _Pool:
    """Compact numpy columns of one kind of action; slot i holds handle ``handles[i]``."""

    def __init__(self, columns: dict[str, float]) -> None:
        self.fill = columns
        self.cols = {name: np.full(16, value) for name, value in columns.items()}
        self.seq = np.zeros(16, dtype=np.int64)
        self.handles: list[int] = []
        self.slot: dict[int, int] = {}
        self.n = 0

    def add(self, handle: int, **values: float) -> int:
        if self.n == len(self.seq):
            cap = 2 * self.n
            for name, old in self.cols.items():
                new = np.full(cap, self.fill[name])
                new[: self.n] = old
                self.cols[name] = new
            seq = np.zeros(cap, dtype=np.int64)
            seq[: self.n] = self.seq
            self.seq = seq
        s = self.n
        self.n += 1
        for name, value in values.items():
            self.cols[name][s] = value
        self.seq[s] = handle
        self.handles.append(handle)
        self.slot[handle] = s
        return s

    def remove(self, handle: int) -> bool:
        s = self.slot.pop(handle, None)
        if s is None:
            return False
        last = self.n - 1
        if s != last:
            for col in self.cols.values():
                col[s] = col[last]
            self.seq[s] = self.seq[last]
            moved = self.handles[last]
            self.handles[s] = moved
            self.slot[moved] = s
        self.handles.pop()
        self.n -= 1
        return True


class L07Clock:
    """The actions of SimGrid's L07 host model and its solver steps, bit for bit.

    Live actions sit in compact numpy columns: executions (``remains``, ``rate``) and sleeps
    (``max_duration``); each action has a handle (an int, increasing with creation, which is
    SimGrid's order of its action list) and an ``owner`` given by the caller. Hosts are numbered
    0..n-1 and have one speed per pstate (flop/s, as SimGrid parsed them). A step costs a few numpy
    operations on the live actions, whatever the number of hosts.
    """

    def __init__(
        self,
        speeds: Sequence[Sequence[float]],
        pstates: Sequence[int],
        surf_precision: float = SURF_PRECISION,
        maxmin_precision: float = MAXMIN_PRECISION,
    ) -> None:
        self.speeds = [tuple(float(s) for s in sp) for sp in speeds]
        self.pstates = [int(p) for p in pstates]
        self.now = 0.0
        #: thresholds of ``double_update`` on max durations and on remains (``--cfg=surf/precision``
        #: and ``maxmin/precision`` change them in SimGrid)
        self.duration_precision = surf_precision
        self.remains_precision = maxmin_precision * surf_precision
        # "rate" is what the next solve gives (bound after the last pstate change); "value" what the
        # last solve gave (SimGrid's variable value: 0 for an action created since, the old rate
        # after a pstate change until the next solve); steps use the value after solving.
        self._execs = _Pool({"remains": 0.0, "rate": 0.0, "value": 0.0})
        self._sleeps = _Pool({"maxdur": 0.0})
        self._owner: dict[int, Any] = {}
        self._tasks: dict[int, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._by_host: dict[int, set[int]] = {}
        self._next_handle = 0
        self.steps = 0

    # ---- actions -----------------------------------------------------------------------------
    def task_rate(self, hosts: Sequence[int], flops: Sequence[float]) -> float:
        """The fair-bottleneck value of a lone task: ``min_h speed_h / flops_h`` (flops > 0)."""
        rate = None
        for h, f in zip(hosts, flops):
            if f > 0:
                v = self.speeds[h][self.pstates[h]] / f
                rate = v if rate is None or v < rate else rate
        return 1.0 if rate is None else rate  # no work: the variable gets value 1

    def _handle(self, owner: Any) -> int:
        h = self._next_handle
        self._next_handle += 1
        self._owner[h] = owner
        return h

    def execute(self, hosts: Sequence[int], flops: Sequence[float], owner: Any = None) -> int:
        """A (parallel) execution started now; returns its handle."""
        hosts = tuple(int(h) for h in hosts)
        flops = tuple(float(f) for f in flops)
        remains = 1.0 if any(f > 0 for f in flops) else 0.0
        h = self._handle(owner)
        self._execs.add(h, remains=remains, rate=self.task_rate(hosts, flops), value=0.0)
        self._tasks[h] = (hosts, flops)
        for host in hosts:
            self._by_host.setdefault(host, set()).add(h)
        return h

    def sleep(self, duration: float, owner: Any = None) -> int:
        """A sleep (``sleep_for`` or a ``wait_for`` timeout) of ``duration`` >= 0 seconds from now."""
        h = self._handle(owner)
        self._sleeps.add(h, maxdur=float(duration))
        return h

    def cancel(self, handle: int) -> None:
        """Remove an action (kill, cancelled execution, timeout of an execution that ended)."""
        self._owner.pop(handle, None)
        if self._sleeps.remove(handle):
            return
        if self._execs.remove(handle):
            for host in self._tasks.pop(handle)[0]:
                self._by_host[host].discard(handle)

    def alive(self, handle: int) -> bool:
        return handle in self._owner

    def remains(self, handle: int) -> float:
        return float(self._execs.cols["remains"][self._execs.slot[handle]])

    def rate(self, handle: int) -> float:
        return float(self._execs.cols["rate"][self._execs.slot[handle]])

    def hosts_of(self, handle: int) -> tuple[int, ...]:
        """The hosts of an execution (empty for a sleep)."""
        task = self._tasks.get(handle)
        return task[0] if task else ()

    def load(self, host: int) -> float:
        """``Constraint::get_usage`` of the host's CPU: sum of flops_h * value of its executions."""
        result = 0.0
        value = self._execs.cols["value"]
        for h in sorted(self._by_host.get(host, ())):
            hosts, flops = self._tasks[h]
            w = flops[hosts.index(host)]
            if w > 0:
                result += w * float(value[self._execs.slot[h]])
        return result

    def max_duration(self, handle: int) -> float:
        return float(self._sleeps.cols["maxdur"][self._sleeps.slot[handle]])

    def owner(self, handle: int) -> Any:
        return self._owner[handle]

    def __len__(self) -> int:
        return self._execs.n + self._sleeps.n

    def set_pstate(self, host: int, pstate: int) -> None:
        """``CpuImpl::set_pstate``: new speed, new bound (rate) for the executions on the host."""
        self.pstates[host] = int(pstate)
        rate = self._execs.cols["rate"]
        for h in self._by_host.get(host, ()):
            hosts, flops = self._tasks[h]
            rate[self._execs.slot[h]] = self.task_rate(hosts, flops)

    # ---- the solver step ---------------------------------------------------------------------
    def next_delta(self) -> float:
        """``EngineImpl::solve``'s ``time_delta`` (-1 when nothing can end); solves first."""
        best = np.inf
        n = self._execs.n
        if n:
            value = self._execs.cols["value"]
            value[:n] = self._execs.cols["rate"][:n]  # System::solve
            # value > 0 for every execution; remains == 0 gives 0 (SimGrid's "else value = 0")
            best = float(np.min(self._execs.cols["remains"][:n] / value[:n]))
        m = self._sleeps.n
        if m:
            best = min(best, float(np.min(self._sleeps.cols["maxdur"][:m])))
        return -1.0 if best == np.inf else best

    def solve_step(self) -> tuple[float, list[int]] | None:
        """One solver step: advance the clock, update every action; return (delta, ended handles).

        Ended handles come in SimGrid's order (creation order); the caller removes them (``cancel``
        or ``pop_owner``). None when no action can ever end.
        """
        delta = self.next_delta()
        if delta < 0:
            return None
        self.now = self.now + delta
        self.steps += 1
        ended: list[int] = []
        n = self._execs.n
        if n:
            rem = self._execs.cols["remains"][:n]
            rem -= self._execs.cols["value"][:n] * delta
            rem[rem < self.remains_precision] = 0.0
            done = rem <= 0.0
            if done.any():
                ended.extend(self._execs.seq[np.flatnonzero(done)].tolist())
        m = self._sleeps.n
        if m:
            md = self._sleeps.cols["maxdur"][:m]
            md -= delta
            md[md < self.duration_precision] = 0.0
            done = md <= 0.0
            if done.any():
                ended.extend(self._sleeps.seq[np.flatnonzero(done)].tolist())
        ended.sort()
        return delta, ended

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
    """The actor of one job (``execute_job_process``): where it is in its profile."""

    job_id: str
    hosts: tuple[int, ...]
    parts: list  # flattened list of _Part and ("ret", code) markers ending composed profiles
    remaining: float  # walltime left (-1: none), Batsim's ``remaining_time``
    index: int = 0  # next part
    exec_handle: int | None = None
    timeout_handle: int | None = None
    sleep_handle: int | None = None
    part_start: float = 0.0  # clock at the start of the running parallel part
    part_ret: int = 0  # ``ret`` of the running part
    delay: float = 0.0  # the running delay part's delay
    walltime_cut: bool = False  # the running delay sleeps until the walltime


def _flatten(profile, nb_hosts: int, profiles: dict | None) -> list:
    """Profile -> list of parts; composed profiles end with a ("ret", code) marker."""
    from wattsched.simulator.workload import ComposedProfile, DelayProfile, ParallelProfile

    if isinstance(profile, str):
        if profiles is None:
            raise ValueError(f"profile {profile!r} named without a table of profiles")
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


def _long_double(x: Fraction) -> Fraction:
    return _round_fraction(x, 64)


class EnergyShadow:
    """SimGrid 3.32's ``host_energy`` plugin, per compute host, on the exact clock of an L07Clock.

    ``power[h][p] = (idle, epsilon, max)`` from ``wattage_per_state`` (``"idle:max"`` gives
    epsilon = idle). ``HostEnergy::update`` at clock ``now``: if ``last < now``,
    ``E += P * (now - last)`` with ``P = idle`` when the CPU load is 0, else
    ``epsilon + min(1, load / speed(pstate_)) * (max - epsilon)``, where ``pstate_`` is the pstate
    saved at the previous update and ``load`` is the current ``flops_h * value`` of the host's
    executions; then ``last = now`` and ``pstate_ = current pstate``. Batsim sums the hosts in
    ``long double``; this class does the same (64-bit significand).
    """

    def __init__(self, clock: L07Clock, power: Sequence[Sequence[tuple[float, float, float]]]) -> None:
        self.clock = clock
        self.power = [[(float(i), float(e), float(m), float(m) - float(e)) for i, e, m in pw] for pw in power]
        n = len(self.power)
        self.energy = [0.0] * n
        self.last = [0.0] * n
        self.pstate = list(clock.pstates[:n])

    def update(self, host: int) -> None:
        now = self.clock.now
        if self.last[host] < now:
            p = self.pstate[host]
            speed = self.clock.speeds[host][p]
            if speed <= 0:
                cpu_load = 1.0
            else:
                cpu_load = self.clock.load(host) / speed
                if cpu_load > 1:
                    cpu_load = 1.0
            idle, eps, _, slope = self.power[host][p]
            watts = eps + cpu_load * slope if cpu_load > 0 else idle
            self.energy[host] = self.energy[host] + watts * (now - self.last[host])
            self.last[host] = now
        self.pstate[host] = self.clock.pstates[host]

    def read(self, hosts: Iterable[int]) -> Fraction:
        """``sum((long double) sg_host_get_consumed_energy(h))`` over ``hosts``, in that order."""
        total = Fraction(0)
        for h in hosts:
            self.update(h)
            total = _long_double(total + Fraction(self.energy[h]))
        return total

    def read_all(self) -> Fraction:
        return self.read(range(len(self.power)))


@dataclass
class EnergyRow:
    """One row of ``_consumed_energy.csv`` as Batsim computes it (``EnergyConsumptionTracer``)."""

    kind: str  # "s", "e" or "p"
    time: float
    energy: Fraction  # long double
    epower: float | None  # (double) of the long double quotient; None for NA

    def cells(self) -> tuple[str, str, str]:
        """``time``, ``energy`` and ``epower`` cells as printed (``%lf``, ``%Lf``, ``%lf``/NA)."""
        return f"{self.time:.6f}", format_long_double(self.energy), ("NA" if self.epower is None else f"{self.epower:.6f}")


def format_long_double(x: Fraction, decimals: int = 6) -> str:
    """An exact binary fraction printed like glibc's ``%.6Lf`` (round half to even)."""
    scaled = x * 10**decimals
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q % 2 == 1):
        q += 1
    sign = "-" if q < 0 else ""
    q = abs(q)
    return f"{sign}{q // 10**decimals}.{q % 10**decimals:0{decimals}d}"


class BatsimShadow:
    """Batsim 4.2.1's actors on top of :class:`L07Clock`: which sleeps and executions exist when.

    Feed it what the scheduler does (:meth:`start_job`, :meth:`kill_job`, :meth:`call_me_later`,
    :meth:`set_pstate`, :meth:`switch`, :meth:`reach` for the timestamps of a reply) and ask for the
    next reported step with :meth:`advance`. ``jobs`` are ``(job_id, subtime, walltime or None)``;
    ``clock_options`` go to :class:`L07Clock` (SimGrid's precisions). With ``power`` (see
    :class:`EnergyShadow`), the energy plugin is shadowed too and ``rows`` gets one
    :class:`EnergyRow` per ``_consumed_energy.csv`` row (job starts and ends; :meth:`pstate_row`
    for the rows of SET_RESOURCE_STATE; :meth:`read_energy` for QUERY).
    """

    def __init__(
        self,
        speeds: Sequence[Sequence[float]],
        pstates: Sequence[int],
        jobs: Iterable[tuple[str, float, float | None]] = (),
        power: Sequence[Sequence[tuple[float, float, float]]] | None = None,
        **clock_options: float,
    ) -> None:
        self.clock = L07Clock(speeds, pstates, **clock_options)
        self.energy = EnergyShadow(self.clock, power) if power is not None else None
        self.rows: list[EnergyRow] = []
        #: ``consumed_energy`` of each finished job (long double, as ``_jobs.csv`` prints it with %Lf)
        self.job_energy: dict[str, Fraction] = {}
        self._job_energy_start: dict[str, Fraction] = {}
        self._last_row: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0))  # (date, energy)
        self._first_read_done = False
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
            self._first_submission_read()
            self._sub_pos += 1
        while self._sub_pos < len(self._to_submit):
            job_id, subtime = self._to_submit[self._sub_pos]
            if subtime > self._current:
                events.extend(group)
                group = []
                self.clock.sleep(long_double_sleep(subtime, self._current), ("submitter",))
                return events
            group.append(("JOB_SUBMITTED", job_id))
            self._first_submission_read()
            self._sub_pos += 1
        events.extend(group)
        return events

    def _first_submission_read(self) -> None:
        """``energy_first_job_submission``: Batsim reads every host's energy at the first submission."""
        if not self._first_read_done:
            self._first_read_done = True
            if self.energy is not None:
                self.energy.read_all()

    # ---- energy readings ---------------------------------------------------------------------
    def _update(self, hosts: Iterable[int]) -> None:
        if self.energy is not None:
            for h in hosts:
                self.energy.update(h)

    def read_energy(self) -> Fraction | None:
        """A read of every host (QUERY; ``total_consumed_energy``)."""
        return self.energy.read_all() if self.energy is not None else None

    def _row(self, kind: str) -> None:
        if self.energy is None:
            return
        energy = self.energy.read_all()
        date = Fraction(self.clock.now)
        last_date, last_energy = self._last_row
        time_diff = _long_double(date - last_date)
        epower = None
        if time_diff > 0:
            epower = float(_long_double(_long_double(energy - last_energy) / time_diff))
        self.rows.append(EnergyRow(kind, self.clock.now, energy, epower))
        self._last_row = (date, energy)

    def pstate_row(self) -> None:
        """The ``p`` row of a SET_RESOURCE_STATE applied now (or of a pure DVFS request done now)."""
        self._row("p")

    # ---- jobs --------------------------------------------------------------------------------
    def start_job(self, job_id: str, hosts: Sequence[int], profile, profiles: dict | None = None) -> None:
        """EXECUTE_JOB applied now: ``profile`` is a workload profile object (or name + ``profiles``)."""
        hosts = tuple(hosts)
        wt = self.walltime.get(job_id)
        run = _JobRun(job_id, hosts, _flatten(profile, len(hosts), profiles), -1.0 if wt is None else float(wt))
        self._runs[job_id] = run
        if self.energy is not None:
            self._job_energy_start[job_id] = self.energy.read(hosts)  # consumed_energy_on_machines
            self._row("s")
        ev = self._job_continue(run)
        if ev is not None:
            self._pending.append(ev)

    def _job_continue(self, run: _JobRun) -> tuple | None:
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
                if len(run.hosts) == 1:
                    self._update(run.hosts)  # Exec::on_start of a one-host execution
                run.timeout_handle = None
                if run.remaining >= 0:
                    run.timeout_handle = self.clock.sleep(run.remaining, ("timeout", run.job_id))
                run.part_ret = part.ret
                return None
            # delay
            if run.remaining < 0 or part.value < run.remaining:
                run.sleep_handle = self.clock.sleep(part.value, ("delay", run.job_id))
                run.walltime_cut = False
            else:
                run.sleep_handle = self.clock.sleep(run.remaining, ("delay", run.job_id))
                run.walltime_cut = True
            run.part_ret = part.ret
            run.delay = part.value
            return None
        return self._job_end(run, "COMPLETED_SUCCESSFULLY")

    def _job_end(self, run: _JobRun, state: str) -> tuple:
        self._runs.pop(run.job_id, None)
        if self.energy is not None:
            after = self.energy.read(run.hosts)  # consumed_energy_on_machines
            self.job_energy[run.job_id] = _long_double(after - self._job_energy_start.pop(run.job_id))
            self._row("e")
        return ("JOB_COMPLETED", run.job_id, state)

    def _on_exec_end(self, run: _JobRun) -> tuple | None:
        run.exec_handle = None
        if run.timeout_handle is not None:
            self.clock.cancel(run.timeout_handle)
            run.timeout_handle = None
        if run.remaining >= 0:
            run.remaining = run.remaining - (self.clock.now - run.part_start)
        if run.part_ret != 0:
            return self._job_end(run, "COMPLETED_FAILED")
        return self._job_continue(run)

    def _on_timeout(self, run: _JobRun) -> tuple:
        run.timeout_handle = None
        ev = self._job_end(run, "COMPLETED_WALLTIME_REACHED")
        if run.exec_handle is not None:
            self._update(run.hosts)  # the execution is cancelled when the actor exits, same clock
            self.clock.cancel(run.exec_handle)
            run.exec_handle = None
        return ev

    def _on_delay_end(self, run: _JobRun) -> tuple | None:
        run.sleep_handle = None
        if run.walltime_cut:
            run.remaining = 0.0
            return self._job_end(run, "COMPLETED_WALLTIME_REACHED")
        if run.remaining > 0:
            run.remaining = run.remaining - run.delay
        if run.part_ret != 0:
            return self._job_end(run, "COMPLETED_FAILED")
        return self._job_continue(run)

    def kill_job(self, job_id: str) -> None:
        """KILL_JOB applied now: the job's actions disappear (no step)."""
        run = self._runs.get(job_id)
        if run is None:
            return
        if run.exec_handle is not None:
            self._update(run.hosts)  # the cancelled execution changes state
        elif run.sleep_handle is not None:
            self._update(run.hosts[:1])
        for h in (run.exec_handle, run.timeout_handle, run.sleep_handle):
            if h is not None:
                self.clock.cancel(h)
        self._job_end(run, "COMPLETED_KILLED")

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
        """``host->set_pstate``: a DVFS change, or a switch's virtual or final pstate."""
        self._update((host,))  # Host::on_speed_change, billed at the pstate saved before
        self.clock.set_pstate(host, pstate)
        if self.energy is not None:
            self.energy.pstate[host] = pstate

    def switch(self, hosts: Sequence[int], virtual_pstate: int, final_pstate: int, tag: Any) -> None:
        """A switch off or on of ``hosts`` (one request): 1 flop at ``virtual_pstate`` per host."""
        hosts = list(hosts)
        self._switch_left[tag] = self._switch_left.get(tag, 0) + len(hosts)
        for host in hosts:
            self.set_pstate(host, virtual_pstate)
            self.clock.execute((host,), (1.0,), ("switch", tag, host, final_pstate))
            self._update((host,))  # Exec::on_start

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
        if self.energy is not None:
            # CpuAction::on_state_change of each ended action, all actions still in the system
            for h in handles:
                hosts = self.clock.hosts_of(h)
                if not hosts:
                    owner = self.clock.owner(h)
                    if owner[0] in ("timeout", "delay") and owner[1] in self._runs:
                        hosts = self._runs[owner[1]].hosts[:1]  # the job's actor runs on its first host
                self._update(hosts)
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
            self.set_pstate(host, final)
            self._switch_left[tag] -= 1
            if self._switch_left[tag] == 0:
                del self._switch_left[tag]
                self._row("p")
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
            found = self._one_step(into_pending=False)
            if found is None:
                return None
            if found.events:
                self.all_steps.append(found)
                return found


# --------------------------------------------------------------------------------------------------
# Driving the shadow from a recording of real Batsim (evidence for behaviours 38 and 43)
# --------------------------------------------------------------------------------------------------
@dataclass
class RecordingCheck:
    """Steps predicted from a recording's scheduler side, against the recorded Batsim messages.

    ``groups`` pairs, for every recorded Batsim message holding events that a solver step causes
    (submissions, non-killed completions, requested calls, switch completions), the recorded
    events with the predicted ones: (line number, printed now, recorded events, predicted events,
    exact predicted clock). ``mismatches`` lists the pairs that differ. ``recorded_splits`` are the
    lines of messages whose step events share the printed ``now`` of the previous such message;
    ``predicted_splits`` the lines where the shadow's step shares the printed clock of its previous
    step. When the shadow splits a message of the recording, or merges two, the comparison resyncs
    (and reports a mismatch), so that one difference does not shift all later pairs.
    """

    scenario: str
    groups: list[tuple[int, float, list, list | None, float | None]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    recorded_splits: list[int] = field(default_factory=list)
    predicted_splits: list[int] = field(default_factory=list)
    shadow: BatsimShadow | None = None
    #: (predicted, recorded) ``consumed_energy`` of every ANSWER, as printed (``%f`` of a double)
    answers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _hosts_of(text: str) -> list[int]:
    out: list[int] = []
    for token in text.split():
        a, sep, b = token.partition("-")
        out.extend(range(int(a), int(b) + 1) if sep else [int(a)])
    return sorted(out)


def _power_table(host) -> list[tuple[float, float, float]]:
    """(idle, epsilon, max) per pstate from the host's ``wattage_per_state`` property."""
    out = []
    for item in host.properties["wattage_per_state"].split(","):
        values = [float(v) for v in item.split(":")]
        out.append((values[0], values[0], values[1]) if len(values) == 2 else (values[0], values[1], values[2]))
    return out


def _event_key(ev: tuple) -> tuple:
    if ev[0] == "REQUESTED_CALL":
        return ("REQUESTED_CALL",)
    if ev[0] == "SWITCHED":
        return ("SWITCHED", ev[1][0], ev[1][1])
    return ev


def _submultiset(a: list, b: list) -> bool:
    from collections import Counter

    return not (Counter(a) - Counter(b))


def _strict_submultiset(a: list, b: list) -> bool:
    return len(a) < len(b) and _submultiset(a, b)


def check_recording(folder, **clock_options: float) -> RecordingCheck:
    """Drive a :class:`BatsimShadow` with the scheduler side of a recording and compare the steps.

    ``clock_options`` (SimGrid's precisions) go to :class:`L07Clock`, to see what they change.
    """
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
        power=[_power_table(h) for h in platform.hosts],
        **clock_options,
    )
    static_ids = {j.id for j in workload.jobs}
    job_profile = {j.id: j.profile for j in workload.jobs}
    profiles: dict[str, dict] = {workload.name: dict(workload.profiles)}
    pstate = [h.initial_pstate for h in platform.hosts]
    outstanding: list[tuple[str, str, int]] = []  # switch requests not reported yet
    serial = 0
    check = RecordingCheck(folder.name, shadow=shadow)
    last_step_now: float | None = None

    predicted_answers: list[str] = []
    recorded_answers: list[str] = []

    def recorded_step_events(msg: dict) -> list[tuple]:
        recorded_answers.extend(
            f"{ev['data']['consumed_energy']:.6f}" for ev in msg["events"] if ev["type"] == "ANSWER"
        )
        out: list[tuple[str, ...]] = []
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
            elif t == "QUERY":
                energy = shadow.read_energy()
                assert energy is not None  # check_recording gives the shadow its power tables
                predicted_answers.append(f"{float(energy):.6f}")
            elif t == "SET_RESOURCE_STATE":
                target = int(d["state"])
                hosts = _hosts_of(d["resources"])
                shadow.pstate_row()
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
                if not (off or on):
                    shadow.pstate_row()  # every host done at once: the request's second row
                else:
                    serial += 1
                    tag = (d["resources"], d["state"], serial)
                    outstanding.append(tag)
                    for group, attr in ((off, "switch_off_pstate"), (on, "switch_on_pstate")):
                        for h in group:
                            shadow.switch([h], getattr(models[h], attr), target, tag)
                            pstate[h] = target
        shadow.reach(reply["now"])

    def printed(t: float) -> float:
        return float(f"{t:.6f}")

    leftover: list[tuple] = []  # predicted events not matched yet (the shadow merged a recorded split)
    leftover_now = 0.0
    last_recorded_now: float | None = None
    last_predicted_now: float | None = None

    def next_prediction() -> tuple[list[tuple], float, bool] | None:
        nonlocal last_predicted_now
        step = shadow.advance()
        if step is None:
            return None
        split = last_predicted_now is not None and printed(step.now) == last_predicted_now
        last_predicted_now = printed(step.now)
        return sorted(_event_key(e) for e in step.events), step.now, split

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
            line, now = i + 1, msg["now"]
            if last_recorded_now is not None and now == last_recorded_now:
                check.recorded_splits.append(line)
            last_recorded_now = now
            if leftover:
                pred, pnow, leftover = leftover, leftover_now, []
            else:
                got = next_prediction()
                if got is None:
                    check.groups.append((line, now, rec, None, None))
                    check.mismatches.append(f"line {line}: recorded {rec} at {now}, predicted nothing")
                    i += 2
                    continue
                pred, pnow, split = got
                if split:
                    check.predicted_splits.append(line)
            notes = []
            # the shadow ends in several steps what the recording reports in one message
            while printed(pnow) == now and _strict_submultiset(pred, rec):
                got = next_prediction()
                if got is None:
                    break
                if printed(got[1]) != now or not _submultiset(pred + got[0], rec):
                    leftover, leftover_now = got[0], got[1]
                    if got[2]:
                        check.predicted_splits.append(line)
                    break
                pred = sorted(pred + got[0])
                check.predicted_splits.append(line)
                notes.append(f"the shadow splits it (last part at {got[1]!r})")
            # the shadow ends in one step what the recording reports in several messages
            if printed(pnow) == now and _strict_submultiset(rec, pred):
                rest = list(pred)
                for e in rec:
                    rest.remove(e)
                leftover, leftover_now = rest, pnow
                notes.append(f"the shadow also ends {rest} in that step")
                pred = rec
            check.groups.append((line, now, rec, pred, pnow))
            if notes or pred != rec or printed(pnow) != now:
                check.mismatches.append(
                    f"line {line}: recorded {rec} at {now}, predicted {pred} at {pnow!r}" +
                    ("; " + "; ".join(notes) if notes else "")
                )
        if i + 1 < len(lines):
            apply_reply(lines[i + 1]["message"])
        i += 2
    check.answers = list(zip(predicted_answers, recorded_answers))
    if len(predicted_answers) != len(recorded_answers):
        check.mismatches.append(f"{len(predicted_answers)} QUERY answers predicted, {len(recorded_answers)} recorded")
    return check
