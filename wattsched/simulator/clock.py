"""The engine's clock: SimGrid 3.32's solver steps, computed lazily (behaviours 38 and 43).

Real Batsim reports the events of one SimGrid solver step in one message; two events that happen
"at the same time" but in two steps (a few ulps apart, or at the very same double) come in two
messages, the scheduler answering the first before the second is sent (B43, refining B9, B37 and
B38). Which step an action ends in is decided by floating-point arithmetic on the remaining work of
every action; ``docs/simgrid-clock.md`` gives the model and its evidence, and
:mod:`wattsched.simulator.simgrid_clock` is its eager, independent reference (every action updated
at every step). This module computes the very same doubles lazily, so that a step costs about the
same as the closed-form heap it replaces, whatever the number of live actions.

The arithmetic (B43)
--------------------
An *action* has a value ``r`` and a rate: an execution's ``r`` is its remaining fraction (1.0 at
its start, 0.0 for no work at all) and its rate ``min_h speed_h / flops_h``; a sleep's ``r`` is its
remaining duration and its rate is 1 (``r - 1.0 * d`` is ``r - d`` exactly). A solver step takes
``delta = min(r / rate)`` over the live actions, moves the clock to ``now + delta`` and replaces every
``r`` by ``r - rate * delta`` (two roundings), zeroed below 1e-14 for executions and below 1e-9 for
sleeps; the actions at zero end in that step. A rate change (DVFS) applies from the next step.

Laziness
--------
The deltas of all steps are kept; an action remembers the step from which they are not applied to
its ``r`` yet, and applies them, one by one in order (so that every rounding is SimGrid's), only
when it must know its exact ``r``: when it may end in the next step, when its rate changes, or when
its progress is asked for (a kill). Actions sit in a heap keyed by a closed-form estimate of their
end minus their ending window (``1.1 x threshold / rate``): the true end differs from the estimate by
at most about ``3.4e-16 x n x t`` (n steps since the estimate, each rounding the clock and the
remains once or twice, t the time), so a step pops, in key order, every action whose key is below
``now + best + margin`` (``best`` the smallest exact ``r / rate`` found so far, ``margin`` =
``5e-16 x (steps + 16) x (now + best + 1)``), computes its exact ``r`` and stops at the first key
above. Every action that can be the minimum or end in the step is then exact; the others are not
touched. Usually one action is popped per step, and :meth:`StepClock.solve_step` has a fast path
for it. Catch-ups over 64 steps or more run in numpy (the same doubles: one product and one
difference per step, in order); the deltas no live action needs any more are dropped now and then.

A step of infinite delta (a sleep of +inf: an in-process scheduler's CALL_ME_LATER at +inf, which
JSON cannot carry to real Batsim) moves the clock to +inf and ends every action in it, whose
``r - rate * delta`` is ``inf - inf``, NaN: an action ends unless ``r >= threshold``, so NaN
ends it too. (With ``r < thr`` a NaN action never ended: it was put back on the heap
with a NaN key and the clock stepped on the spot forever.)

A job's walltime timeout (B14) usually never ends: its execution ends first and cancels it. While
the execution surely ends first (ends more than 1e-6 relative apart, far beyond any drift), the
timeout stays *dormant*, off the heap; a rate change of the execution (DVFS) checks it again and
puts it on the heap, exact, when it may now end first (:meth:`StepClock.check_timeout`).

``tests/test_clock.py`` checks all this against the eager reference
(:class:`~wattsched.simulator.simgrid_clock.L07Clock`), step by step and to the double.
"""

from __future__ import annotations

import heapq
import math
from heapq import heappop, heappush
from typing import Any

import numpy as np

from wattsched.simulator.simgrid_clock import MAXMIN_PRECISION, SURF_PRECISION, long_double_sleep

__all__ = ["EXEC_THRESHOLD", "SLEEP_THRESHOLD", "WAITER_MIN_SLEEP", "Action", "Entry", "StepClock",
           "submitter_sleep"]

#: An execution whose remains fall below this ends in the step (``sg_maxmin_precision *
#: sg_surf_precision``, the product as SimGrid computes it).
EXEC_THRESHOLD = MAXMIN_PRECISION * SURF_PRECISION
#: A sleep whose remaining duration falls below this ends in the step (``sg_surf_precision``).
SLEEP_THRESHOLD = SURF_PRECISION
#: Batsim's shortest CALL_ME_LATER sleep (``waiter_process``).
WAITER_MIN_SLEEP = 1e-5
#: The ending windows of a new action's heap key (see the module docstring): ``1.1 x threshold``.
_EXEC_WINDOW = 1.1 * EXEC_THRESHOLD
_SLEEP_WINDOW = 1.1 * SLEEP_THRESHOLD
#: Catch-ups over more steps than this use numpy (same doubles: one product and one difference per
#: step, in order).
_NUMPY_FROM = 64
#: The list of deltas is trimmed of the steps no live action needs once it is this long.
_COMPACT_FROM = 1 << 16


class Action:
    """One SimGrid action: an execution (``thr`` = :data:`EXEC_THRESHOLD`) or a sleep (rate 1,
    ``thr`` = :data:`SLEEP_THRESHOLD`). ``r`` is exact as of step ``base``; ``version`` is the
    version of its live heap entry (-1 once ended or cancelled); ``kind`` and ``owner`` are the
    caller's."""

    __slots__ = ("base", "r", "rate", "thr", "version", "ended", "kind", "owner")

    def __init__(self, base: int, r: float, rate: float, thr: float, kind: int, owner: Any) -> None:
        self.base = base
        self.r = r
        self.rate = rate
        self.thr = thr
        self.version = -1
        self.ended = False
        self.kind = kind
        self.owner = owner


#: A heap entry: (key, phase, order, version, action). The first four are unique (versions are),
#: so that actions are never compared; phase and order are the caller's tie-breaking of events.
Entry = tuple[float, int, int, int, Action]


def submitter_sleep(subtime: float, current: float) -> float:
    """``(double)((long double)subtime - current)``: the job submitter's sleep (B43's arithmetic,
    ``job_submitter.cpp``). The double difference when it is exact (checked with Fast2Sum, valid
    for ``subtime >= current >= 0``), else the long double one."""
    s = subtime - current
    if (subtime - s) - current == 0.0:
        return s
    return long_double_sleep(subtime, current)


class StepClock:
    """SimGrid's clock and solver steps over lazily updated actions (see the module docstring)."""

    def __init__(self) -> None:
        self.now = 0.0
        #: solver steps with a positive delta so far (zero-delta steps change no value)
        self.steps = 0
        self.heap: list[Entry] = []
        self._deltas: list[float] = []  # delta of step k + 1 at index k - self._first
        self._first = 0
        self._array = np.empty(1024)  # numpy copy of self._deltas[: self._array_len]
        self._array_len = 0
        self._version = 0
        self._margin = 5e-16 * 16
        self._compact_at = _COMPACT_FROM
        #: While the caller processes a step: the entries of the actions started then with nothing
        #: to do (no work, no duration), which end in that very step, one round of actors later
        #: (the caller empties it); None otherwise (they then end in the next step, delta 0).
        self.zero_round: list[Entry] | None = None
        self._dormant: set[Action] = set()  # walltime timeouts off the heap (start_timeout)

    # ---- actions ---------------------------------------------------------------------------------
    def start_execution(self, rate: float, work: bool, kind: int, owner: Any, phase: int, order: int) -> Action:
        """An execution starting now: remains 1.0 at ``rate`` (fraction per second), or 0.0 when it
        has no work at all (then it ends at once: see :attr:`zero_round`)."""
        act = Action(self.steps, 1.0 if work else 0.0, rate, EXEC_THRESHOLD, kind, owner)
        self._version += 1
        act.version = version = self._version
        if not work and self.zero_round is not None:
            self.zero_round.append((self.now, phase, order, version, act))
        else:
            heappush(self.heap, (self.now + ((1.0 if work else 0.0) - _EXEC_WINDOW) / rate, phase, order, version, act))
        return act

    def start_sleep(self, duration: float, kind: int, owner: Any, phase: int, order: int) -> Action:
        """A sleep of ``duration`` >= 0 seconds starting now."""
        act = Action(self.steps, duration, 1.0, SLEEP_THRESHOLD, kind, owner)
        self._version += 1
        act.version = version = self._version
        if duration == 0.0 and self.zero_round is not None:
            self.zero_round.append((self.now, phase, order, version, act))
        else:
            heappush(self.heap, (self.now + (duration - _SLEEP_WINDOW), phase, order, version, act))
        return act

    def schedule(self, act: Action, phase: int, order: int) -> None:
        """A fresh entry for ``act`` (exact: :meth:`exact`), pushed on the heap (an older entry of it
        becomes stale), or put in :attr:`zero_round` when it has nothing left to do."""
        self._version += 1
        act.version = version = self._version
        r = act.r
        if r == 0.0 and self.zero_round is not None:
            self.zero_round.append((self.now, phase, order, version, act))
        else:
            heappush(self.heap, (self.now + (r - 1.1 * act.thr) / act.rate, phase, order, version, act))

    def cancel(self, act: Action) -> None:
        """The action disappears (kill, an execution cut by its walltime, a timeout made moot)."""
        act.version = -1
        if self._dormant:
            self._dormant.discard(act)

    # ---- walltime timeouts -----------------------------------------------------------------------
    def start_timeout(self, duration: float, kind: int, owner: Any, phase: int, order: int,
                      execution: Action) -> Action:
        """The walltime timeout of ``execution`` (exact, started now): a sleep of ``duration``.

        While the execution surely ends first (the usual case: the timeout is then cancelled), the
        sleep stays *dormant*, off the heap: it costs no heap operation, and its value is brought up
        to date (:meth:`exact`) only if a rate change makes it a contender (:meth:`check_timeout`).
        """
        act = Action(self.steps, duration, 1.0, SLEEP_THRESHOLD, kind, owner)
        if self._ends_first(execution, duration):
            self._dormant.add(act)
        else:
            self.schedule(act, phase, order)
        return act

    def check_timeout(self, act: Action, execution: Action, phase: int, order: int) -> None:
        """After a rate change of ``execution`` (exact): its dormant timeout ``act`` goes on the heap
        unless the execution still surely ends first."""
        if act in self._dormant and not self._ends_first(execution, self.exact(act)):
            self._dormant.discard(act)
            self.schedule(act, phase, order)

    def _ends_first(self, execution: Action, timeout_s: float) -> bool:
        """``execution`` ends in an earlier step than a sleep of ``timeout_s`` from now, whatever
        the rounding: the two ends are more than 1e-6 relative apart, far beyond the heap's
        margins."""
        return timeout_s - execution.r / execution.rate > 1e-6 * (self.now + timeout_s + 1.0)

    def exact(self, act: Action) -> float:
        """Apply to ``act`` the steps it has not seen yet; its exact ``r`` now."""
        base = act.base
        steps = self.steps
        if base == steps:
            return act.r
        r = act.r
        rate = act.rate
        i = base - self._first
        n = steps - base
        if n < _NUMPY_FROM:
            if rate == 1.0:
                for d in self._deltas[i:i + n]:
                    r = r - d
            else:
                for d in self._deltas[i:i + n]:
                    r = r - rate * d
        else:
            deltas = self._deltas
            have = self._array_len
            if have < len(deltas):
                if len(self._array) < len(deltas):
                    grown = np.empty(2 * len(deltas))
                    grown[:have] = self._array[:have]
                    self._array = grown
                self._array[have:len(deltas)] = deltas[have:]
                self._array_len = len(deltas)
            buf = np.empty(n + 1)
            buf[0] = r
            np.multiply(self._array[i:i + n], rate, out=buf[1:])
            np.subtract.accumulate(buf, out=buf)
            r = float(buf[n])
        act.r = r
        act.base = steps
        return r

    def set_rate(self, act: Action, rate: float, phase: int, order: int) -> None:
        """A new rate from the next step on (DVFS): the steps so far are applied at the old one."""
        self.exact(act)
        act.rate = rate
        self.schedule(act, phase, order)

    # ---- steps -----------------------------------------------------------------------------------
    def solve_step(self) -> list[Entry] | None:
        """One solver step: the clock moves to its end; returns the entries of the actions that end
        in it (in no particular order), or None when no live action is left."""
        heap = self.heap
        steps = self.steps
        if steps >= self._compact_at:
            self._compact()
        while heap:  # the first live entry: the action with the smallest key
            entry = heappop(heap)
            act = entry[4]
            if entry[3] == act.version:
                break
        else:
            return None  # B41: stale entries (cancelled actions) do not move the clock
        now = self.now
        r = act.r if act.base == steps else self.exact(act)
        best = r / act.rate
        end = now + best
        limit = end + self._margin * (end + 1.0)
        if heap and heap[0][0] <= limit:
            return self._solve_many(entry, best, limit)
        # usually nothing else can end in the step: it ends this action, at its exact end
        if best > 0.0:
            self._deltas.append(best)
            steps += 1
            self.steps = steps
            self.now = end
            self._margin = 5e-16 * (steps + 16)
        act.base = steps
        r = r - act.rate * best
        if not r >= act.thr:  # NaN too (a step of +inf: module docstring)
            act.r = 0.0
            act.version = -1
            act.ended = True
            return [entry]
        act.r = r  # pragma: no cover - r / rate * rate is within an ulp of r, below the threshold
        self.schedule(act, entry[1], entry[2])
        return []

    def _solve_many(self, first: Entry, best: float, limit: float) -> list[Entry]:
        """:meth:`solve_step` when other actions may end in the step: every entry whose key is
        below ``limit`` (lowered as smaller ends are found) is made exact; ``first`` is."""
        heap = self.heap
        steps = self.steps
        now = self.now
        cands = [first]
        while heap:
            entry = heap[0]
            if entry[0] > limit:
                break
            heappop(heap)
            act = entry[4]
            if entry[3] != act.version:
                continue  # stale: cancelled, ended, or pushed again since
            r = act.r if act.base == steps else self.exact(act)
            d = r / act.rate
            cands.append(entry)
            if d < best:
                best = d
                end = now + d
                limit = end + self._margin * (end + 1.0)
        delta = best
        if delta > 0.0:
            self._deltas.append(delta)
            steps += 1
            self.steps = steps
            self.now = now + delta
            self._margin = 5e-16 * (steps + 16)
        ended: list[Entry] = []
        for entry in cands:
            act = entry[4]
            r = act.r - act.rate * delta
            act.base = steps
            if not r >= act.thr:  # NaN too (a step of +inf: module docstring)
                act.r = 0.0
                act.version = -1
                act.ended = True
                ended.append(entry)
            else:
                act.r = r
                self.schedule(act, entry[1], entry[2])
        return ended

    def pending(self, limit: int = 5) -> list[Action]:
        """The first ``limit`` live actions on the heap, by key (for an error message)."""
        live = sorted((e for e in self.heap if e[3] == e[4].version), key=lambda e: e[:4])
        return [e[4] for e in live[:limit]]

    def sleep_alone(self, duration: float) -> bool:
        """A sleep of ``duration`` > 0 (the reply actor reaching a timestamp, B5) done at once when
        no other action can end in its step: True if done (the clock moved), False otherwise (the
        caller schedules a sleep and solves steps until it ends)."""
        heap = self.heap
        end = self.now + duration
        if heap and heap[0][0] <= end + self._margin * (end + 1.0):
            return False
        self._deltas.append(duration)
        self.steps += 1
        self.now = self.now + duration
        self._margin = 5e-16 * (self.steps + 16)
        return True

    def _compact(self) -> None:
        """Forget the deltas older than every live action's ``base``."""
        low = min((e[4].base for e in self.heap if e[3] == e[4].version), default=self.steps)
        low = min(low, min((act.base for act in self._dormant), default=low))  # both: live and dormant
        drop = low - self._first
        if drop > 0:
            del self._deltas[:drop]
            self._first = low
            self._array_len = 0
        self._compact_at = self.steps + max(_COMPACT_FROM, len(self._deltas))
