"""The energy budget's plan: the estimated power of the cluster from now to the end of the window.

The plan is a list of segments (:data:`~.estimates.Segment`: ``watts`` during ``[t0, t1)``): the running jobs at
P̃comp until their expected end, then their hosts idle or switching off and asleep, the hosts asleep or
switching, the free hosts and the head's reservation. The balance of rule 2 (energy made available at
``R`` J/s minus the plan's energy) is piecewise linear, so its minimum is checked at the breakpoints
(exact). :class:`Plan` holds one pass's plan as arrays so that a candidate job only adds its own few
segments; ``tests/budget_oracle.py`` is the straightforward version it is checked against.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Callable, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.hostsets import intervals
from wattsched.schedulers.budget.estimates import Segment
from wattsched.schedulers.queue import Staircase, WallGroups

__all__ = ["KeptIndex", "Plan", "PlanSegments", "Staircase", "extra_knots", "same_state", "unique_inverse"]

#: A plan's segments ``(a, b, w)``: three float arrays, or three lists (the same values) for a small plan.
PlanSegments = tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[list[float], list[float], list[float]]

#: :class:`Plan` is built in plain Python up to this many segments, with numpy above (the same values).
PY_MAX_SEGMENTS = 160
#: :meth:`Plan.may_admit` computes its bounds once per distinct end from this many candidates on.
UNIQUE_MIN_JOBS = 64
#: ... and takes the queue's walltime codes when the distinct walltimes ever queued are at most this many times
#: the candidates (else a sort of the candidates' ends is cheaper than a pass over every value).
GROUPS_MAX_RATIO = 8
#: :meth:`Plan._bounds` is computed in plain Python for at most this many ends on a plan of at most this many
#: breakpoints (numpy above: the same values).
PY_MAX_ENDS = 48
PY_MAX_BREAKPOINTS = 160

def extra_knots(segments: Sequence[Segment], t0: float, t1: float) -> tuple[float, dict[float, float]]:
    """``segments`` clipped to ``[t0, t1]`` as ``min_balance`` does (tests/budget_oracle.py): the summed
    power at ``t0`` and the power changes at the later breakpoints (``t0 < at < t1``)."""
    power = 0.0
    events: dict[float, float] = {}
    for a, b, w in segments:
        if w == 0.0:
            continue
        if a < t0:
            a = t0
        if b > t1:
            b = t1
        if b <= a:
            continue
        if a <= t0:
            power += w
        else:
            events[a] = events.get(a, 0.0) + w
        if b < t1:
            events[b] = events.get(b, 0.0) - w
    return power, events


def _clip_py(a: list[float], b: list[float], w: list[float], t0: float, t1: float
             ) -> tuple[float, list[float], list[float]]:
    """:meth:`Plan._clip` in plain Python (the same values and order)."""
    first: list[float] = []
    starts: list[float] = []
    start_w: list[float] = []
    ends: list[float] = []
    end_w: list[float] = []
    for x, y, v in zip(a, b, w):
        if x < t0:
            x = t0
        if y > t1:
            y = t1
        if not (y > x and v != 0.0):
            continue
        if x <= t0:
            first.append(v)
        else:
            starts.append(x)
            start_w.append(v)
        if y < t1:
            ends.append(y)
            end_w.append(-v)
    return _pairwise_sum(first), starts + ends, start_w + end_w


def _pairwise_sum(x: list[float]) -> float:
    """``float(np.array(x).sum())``: numpy's pairwise summation of a contiguous array, to the last bit (blocks
    of 128 summed with 8 accumulators, halves above that)."""
    n = len(x)
    if n < 8:
        res = 0.0
        for v in x:
            res += v
        return res
    if n <= 128:
        r = x[:8]
        i = 8
        stop = n - n % 8
        while i < stop:
            for j in range(8):
                r[j] += x[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in x[i:]:
            res += v
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(x[:half]) + _pairwise_sum(x[half:])


def same_state(a: tuple, b: tuple) -> bool:
    """Whether two :class:`Plan` keys are the same state: objects by identity, then values."""
    return all(map(operator.is_, a[0], b[0])) and a[1] == b[1]


def _min(a: float, b: float) -> float:
    """``np.minimum`` of two floats: NaN when either is."""
    return a if a < b or a != a else b


def _max(a: float, b: float) -> float:
    """``np.maximum`` of two floats: NaN when either is."""
    return a if a > b or a != a else b


def _accumulate(op: Callable[[float, float], float], xs: list[float]) -> list[float]:
    """``accumulate`` of numpy's ``minimum`` or ``maximum`` (``op``: :func:`_min` or :func:`_max`) on a list."""
    return list(accumulate(xs, op))


def _within(res: np.ndarray, up: np.ndarray, low: np.ndarray | None, index: np.ndarray | None) -> np.ndarray:
    """``low ≤ res ≤ up``, the bounds of each candidate at ``index`` (None: in order)."""
    if index is not None:
        up = up[index]
        low = low[index] if low is not None else None
    return res <= up if low is None else (res <= up) & (res >= low)


def unique_inverse(values: np.ndarray, repeats: bool) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of finite floats (the same two arrays, the inverse flat); with
    ``repeats`` (few distinct values, in runs) by a stable sort, several times faster there and about twice as slow
    on values in random order, where numpy's own is used."""
    if not repeats:
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.reshape(-1)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.empty(len(ordered), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(len(ordered), dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def _fewest(g: np.ndarray, x: np.ndarray, shrink: float) -> np.ndarray:
    """The fewest hosts ``n`` with ``n · x ≤ g`` (``x``: a lower bound of a candidate's energy per host,
    ``g``: the balance allowed): 0 where ``g ≥ 0`` or ``x > 0`` (no lower bound), ``g / x`` (loosened)
    where both are negative, inf where ``g < 0`` and ``x = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((g >= 0.0) | (x > 0.0), 0.0, np.where(x < 0.0, g / x * shrink, np.inf))


def _fewest_py(g: float, x: float, shrink: float) -> float:
    """:func:`_fewest` of one candidate, in plain Python (the same float)."""
    if g >= 0.0 or x > 0.0:
        return 0.0
    return g / x * shrink if x < 0.0 else math.inf


class KeptIndex:
    """The hosts a power manager keeps on for a job (:meth:`~wattsched.schedulers.power.PowerManager.kept_hosts`),
    indexed to count those of an allocation by the time until which they are kept (:meth:`within`).

    ``untils``: the distinct times, increasing; ``ids``: the kept hosts, increasing, and ``codes`` the index
    in ``untils`` of each one's time. Built once per state of the kept hosts: every plan of a pass shares it
    (ESC keeps every idle node, so that an allocation's count once cost a bisection per distinct time and
    per interval)."""

    __slots__ = ("untils", "ids", "codes", "_codes_np")

    #: at most this many kept hosts in an interval are counted in Python (numpy's bincount above)
    PY_MAX_HOSTS = 64

    def __init__(self, kept: Mapping[int, float]) -> None:
        times, codes = unique_inverse(np.fromiter(kept.values(), dtype=float, count=len(kept)), True)
        self._fill(np.fromiter(kept.keys(), dtype=np.int64, count=len(kept)), times, codes)

    @classmethod
    def from_codes(cls, ids: np.ndarray, times: np.ndarray, codes: np.ndarray) -> KeptIndex:
        """The index of the kept hosts ``ids`` (distinct, in any order) kept until ``times[codes]``
        (:func:`unique_inverse` of their times), without a Python loop over the hosts: ESC keeps every idle node,
        and a new mapping comes with most passes (the energy budget keeps the codes to count its free kept hosts
        per time)."""
        index = cls.__new__(cls)
        index._fill(ids, times, codes)
        return index

    def _fill(self, ids: np.ndarray, times: np.ndarray, codes: np.ndarray) -> None:
        order = np.argsort(ids, kind="stable")
        codes_np = codes[order]
        self.untils, self.ids = times.tolist(), ids[order].tolist()
        self.codes, self._codes_np = codes_np.tolist(), codes_np

    def __bool__(self) -> bool:
        return bool(self.ids)

    def within(self, alloc: ProcSet) -> tuple[tuple[float, int], ...]:
        """``((until, how many of alloc's hosts are kept until then), …)`` by increasing ``until``, the times
        with none left out."""
        ids = self.ids
        if not ids:
            return ()
        counts: list[int] | None = None
        for lo, hi in intervals(alloc):
            i, j = bisect_left(ids, lo), bisect_right(ids, hi)
            if i == j:
                continue
            if counts is None:
                counts = [0] * len(self.untils)
            if j - i <= self.PY_MAX_HOSTS:
                for k in self.codes[i:j]:
                    counts[k] += 1
            else:
                if self._codes_np is None:
                    self._codes_np = np.array(self.codes, dtype=np.intp)
                for k, c in enumerate(np.bincount(self._codes_np[i:j], minlength=len(counts)).tolist()):
                    counts[k] += c
        if counts is None:
            return ()
        return tuple((until, c) for until, c in zip(self.untils, counts) if c)


class Plan:
    """The estimated future of the cluster during one scheduling pass, as arrays.

    Breakpoints ``T[0] = t0 < T[1] < … < T[-1] = te``; on ``[T[k], T[k+1])`` the plan's power is ``plan[k]``
    and the power counted by the balance (plan + the head's reservation or reducePC's lowered rate) is
    ``bal[k]``; ``G[k]`` is the balance at ``T[k]`` (piecewise linear in between). A candidate job then only
    adds its own few pieces (:meth:`~wattsched.schedulers.budget.energy_bud.EnergyBudget.can_start`): its minimum balance is checked at its own
    breakpoints (bisect) and at the plan's (one vectorized expression), its peak power with one ``max``
    per piece: the same quantities as ``min_balance`` and ``max_power`` of tests/budget_oracle.py over the
    whole plan.
    """

    __slots__ = ("key", "started", "t0", "te", "rate", "tol", "T", "G", "bal", "plan", "_arrays", "_inner_min_g", "kept")

    started: tuple[int, int]  # (jobs started, jobs prepared) in the pass when the plan was built
    _arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None  # (T, G, plan, bal) as arrays
    _inner_min_g: float | None  # the lowest of G[1:-1] (None: not computed yet)

    def __init__(self, key: tuple, t0: float, te: float, rate: float, tol: float, cea: float,
                 plan: PlanSegments, other: Sequence[Segment], kept: Mapping[int, float] | KeptIndex) -> None:
        self.key = key
        self.t0, self.te, self.rate, self.tol = t0, te, rate, tol
        self.kept = kept if isinstance(kept, KeptIndex) else KeptIndex(kept)
        if len(plan[0]) + len(other) <= PY_MAX_SEGMENTS:
            la, lb, lw = (x.tolist() if isinstance(x, np.ndarray) else x for x in plan)
            self._build_py(la, lb, lw, other, cea)
            return
        a, b, w = (np.asarray(x, dtype=float) for x in plan)
        p0, times, deltas = self._clip(a, b, w, t0, te)
        if len(other) == 1:  # the head's reservation or reducePC's cut
            q0, otimes, odeltas = self._clip_one(*other[0], t0, te)
        elif other:
            oa, ob, ow = (np.array(x, dtype=float) for x in zip(*other))
            q0, otimes, odeltas = self._clip(oa, ob, ow, t0, te)
        else:
            q0, otimes, odeltas = 0.0, times[:0], deltas[:0]
        # (the kept hosts' segments come summed per time: their breakpoints no longer repeat host after host)
        uniq, inverse = unique_inverse(np.concatenate((times, otimes)), False)
        k = len(uniq)
        d_plan = np.bincount(inverse[:len(times)], weights=deltas, minlength=k)
        d_other = np.bincount(inverse[len(times):], weights=odeltas, minlength=k)
        T = np.empty(k + 2)
        T[0], T[1:-1], T[-1] = t0, uniq, te
        plan_w = np.empty(k + 1)
        plan_w[0] = p0
        np.cumsum(d_plan, out=plan_w[1:])
        plan_w[1:] += p0
        bal_w = plan_w.copy()
        if other:
            extra_w = np.empty(k + 1)
            extra_w[0] = q0
            np.cumsum(d_other, out=extra_w[1:])
            extra_w[1:] += q0
            bal_w += extra_w
        G = np.empty(k + 2)
        G[0] = cea
        np.cumsum((rate - bal_w) * np.diff(T), out=G[1:])
        G[1:] += cea
        self._arrays = (T, G, plan_w, bal_w)
        self._inner_min_g = None
        self.T, self.G = T.tolist(), G.tolist()
        self.bal, self.plan = bal_w.tolist(), plan_w.tolist()

    def _build_py(self, a: list[float], b: list[float], w: list[float], other: Sequence[Segment], cea: float) -> None:
        """:meth:`__init__`'s arrays computed in plain Python, for a plan of few segments (most passes on a
        cluster of 1,152 hosts: numpy's cost per call is then most of the build). Every sum is made in the
        same order as numpy's (``sum``'s pairwise summation, ``bincount``, ``cumsum``), so the values are
        the same to the last bit (tests/test_budget_fast_path.py compares both builds)."""
        t0, te, rate = self.t0, self.te, self.rate
        p0, times, deltas = _clip_py(a, b, w, t0, te)
        if other:
            oa, ob, ow = (list(x) for x in zip(*other))
            q0, otimes, odeltas = _clip_py(oa, ob, ow, t0, te)
        else:
            q0, otimes, odeltas = 0.0, [], []
        d_plan: dict[float, float] = dict.fromkeys(sorted(set(times).union(otimes)), 0.0)
        for t, d in zip(times, deltas):
            d_plan[t] += d
        T = [t0, *d_plan, te]
        run = 0.0
        plan_w = [p0]
        for d in d_plan.values():
            run += d
            plan_w.append(run + p0)
        if other:
            d_other = dict.fromkeys(d_plan, 0.0)
            for t, d in zip(otimes, odeltas):
                d_other[t] += d
            run = 0.0
            bal_w = [p0 + q0]
            for i, d in enumerate(d_other.values(), 1):
                run += d
                bal_w.append(plan_w[i] + (run + q0))
        else:
            bal_w = plan_w
        G = [cea]
        run = 0.0
        for k, bw in enumerate(bal_w):
            x = (rate - bw) * (T[k + 1] - T[k])
            run = x if k == 0 else run + x
            G.append(run + cea)
        self.T, self.G, self.bal, self.plan = T, G, list(bal_w), plan_w
        self._arrays = None  # (made when first read: most plans of this size are never read as arrays)
        self._inner_min_g = None

    def _np(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(T, G, plan, bal)`` as arrays (built from the lists on first use by :meth:`_build_py`'s plans)."""
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = (np.array(self.T), np.array(self.G), np.array(self.plan), np.array(self.bal))
        return arrays

    T_np = property(lambda self: self._np()[0], doc="``T`` as an array.")
    G_np = property(lambda self: self._np()[1], doc="``G`` as an array.")
    plan_np = property(lambda self: self._np()[2], doc="``plan`` as an array.")
    bal_np = property(lambda self: self._np()[3], doc="``bal`` as an array.")

    def _inner_min(self) -> float:
        """The lowest balance at the breakpoints strictly inside ``(t0, te)`` (``len(T) > 2``)."""
        low = self._inner_min_g
        if low is None:
            low = self._inner_min_g = min(self.G[1:-1])
        return low

    @staticmethod
    def _clip(a: np.ndarray, b: np.ndarray, w: np.ndarray, t0: float, t1: float
              ) -> tuple[float, np.ndarray, np.ndarray]:
        a = np.maximum(a, t0)
        b = np.minimum(b, t1)
        ok = (b > a) & (w != 0.0)
        a, b, w = a[ok], b[ok], w[ok]
        first = a <= t0
        later = ~first
        ends = b < t1
        return (float(w[first].sum()), np.concatenate((a[later], b[ends])),
                np.concatenate((w[later], -w[ends])))

    @staticmethod
    def _clip_one(a: float, b: float, w: float, t0: float, t1: float) -> tuple[float, np.ndarray, np.ndarray]:
        """:meth:`_clip` of one segment, without numpy's cost per call on arrays of one element (the plan of
        every pass has one such segment): :func:`_clip_py`'s values."""
        p0, times, deltas = _clip_py([a], [b], [w], t0, t1)
        return float(p0), np.array(times, dtype=float), np.array(deltas, dtype=float)

    def admits(self, segments: Sequence[Segment], cap: float | None, cap_until: float, slack: float = 0.0) -> bool:
        """Whether the balance with ``segments`` added stays ≥ −tol on ``[t0, te]`` and, when ``cap`` is
        given, the plan's power with ``segments`` stays ≤ ``cap + 1e-9`` on ``[t0, cap_until)``. ``slack``: more
        tolerance on the balance (False then: short by more than ``tol + slack``)."""
        t0, te, rate, tol = self.t0, self.te, self.rate, self.tol + slack
        T, G, bal = self.T, self.G, self.bal
        if G[0] < -tol:
            return False
        power, events = extra_knots(segments, t0, te)
        if cap is not None and cap_until > t0:
            plan = self.plan
            if plan[0] + power > cap + 1e-9:
                return False
        # the balance at the candidate's own breakpoints (where it is most often lowest)
        xs = [t0]
        energy = [0.0]
        levels = [power]
        x = 0.0
        prev = t0
        for at in sorted(events):
            x += power * (at - prev)
            k = bisect_right(T, at) - 1
            if G[k] + (rate - bal[k]) * (at - T[k]) - x < -tol:
                return False
            xs.append(at)
            energy.append(x)
            power += events[at]
            levels.append(power)
            prev = at
        x += power * (te - prev)
        if G[-1] - x < -tol:
            return False
        xs.append(te)
        energy.append(x)
        if len(T) > 2:
            # at the plan's breakpoints: the candidate's energy there lies between its lowest and highest at its own
            # breakpoints (interpolated), so a balance that stays above the highest, with a margin far above the
            # rounding of the interpolation, needs no interpolation (issue 15: 18,000 of the 33,000 such checks of
            # energyBud on the week of 1,152 hosts, each a few numpy calls); else the interpolation tells, exactly
            low_g, high_x = self._inner_min(), max(energy)
            if not low_g - high_x - 1e-9 * (abs(low_g) + abs(high_x)) >= -tol:
                inner = slice(1, -1)
                if float((self.G_np[inner] - np.interp(self.T_np[inner], xs, energy)).min()) < -tol:
                    return False
        if cap is not None and cap_until > t0:
            limit = cap + 1e-9
            plan = self.plan
            for i in range(len(levels)):
                lo_t = xs[i]
                if lo_t >= cap_until:
                    break
                hi_t = xs[i + 1] if xs[i + 1] < cap_until else cap_until
                if hi_t <= lo_t:
                    continue
                lo = bisect_right(T, lo_t) - 1
                hi = bisect_left(T, hi_t)
                if max(plan[lo:hi]) + levels[i] > limit:
                    return False
        return True

    def rounding_margin_j(self, extra_w: float) -> float:
        """A bound, thousands of times over, on the rounding of this plan's balance and of another plan's built from
        the same segments and ``extra_w`` watts more over the window (each a cumulative sum over the breakpoints),
        as :meth:`_bounds` loosens its own."""
        scale = abs(self.G[0]) + (abs(self.rate) + max(0.0, *map(abs, self.bal)) + abs(extra_w)) * (self.te - self.t0)
        return 1e-12 * (len(self.T) + 18) * scale

    def peak_power_w(self, until_s: float, from_s: float | None = None) -> float:
        """The plan's highest power on ``[t0, until_s)``, or on ``[from_s, until_s)`` (``t0 ≤ from_s < until_s``), read
        as :meth:`admits` reads it for a candidate's power on a span that holds this one."""
        first = 0 if from_s is None else bisect_right(self.T, from_s) - 1
        return max(self.plan[first:max(first + 1, bisect_left(self.T, until_s))])

    def may_admit(self, res: np.ndarray, ends: np.ndarray, *, a: float, origin: float, slope: float,
                  offset: float, tail_s: float, total_offset: float, saving: tuple[float, float, float] | None = None,
                  cap: tuple[float, float] | None = None, groups: WallGroups | None = None) -> np.ndarray:
        """Necessary conditions of :meth:`admits` for many candidates at once (issue 15): False only where
        a candidate of ``res`` hosts ending at ``ends`` (or later) is certainly refused.

        The candidate's extra energy from ``t0`` to ``t``, ``X(t)``, must be a multiple of its hosts bounded
        below by ``n · (slope · (t − origin) + offset)`` at the plan's breakpoints ``a ≤ T[k] < end`` and by
        ``n · (slope · (end − origin) + total_offset)`` at those from ``end + tail_s`` (and ``a``) on, and
        likewise at its own breakpoints ``end`` and ``end + tail_s``. With ``saving = (w, horizon, drop)``
        (hosts kept idle until ``horizon`` at the latest, where the candidate's hosts may sleep after its end)
        the whole energy is lowered by ``w · max(0, horizon − end)`` and holds from ``max(end + tail_s,
        horizon + tail_s)`` on; in between, the energy at its end less ``drop`` watts per host. The balance
        there then bounds ``n`` (prefix minima of ``G / (slope · (T − origin) + offset)``, suffix minima of ``G``, the balance
        interpolated at the candidate's breakpoints: a few ``searchsorted`` for all candidates). With ``cap = (cap, until)``
        (reducePC) the power ``n · slope`` from ``a`` to ``min(end, until, te)`` must stay under it (prefix
        maxima of the plan). Each bound is loosened by a margin thousands of times the rounding of the sums
        involved, so that a candidate :meth:`admits` would accept, now or after later starts of the pass
        (which only lower the balance), is never marked False.

        ``groups``: ``ends`` as ``(distinct values, each candidate's index among them)`` (from an indexed
        queue's walltime codes, :data:`~wattsched.schedulers.queue.WallGroups`): the bounds are computed once
        for each value some candidate has, with no sort.
        """
        if groups is not None and len(groups[0]) <= GROUPS_MAX_RATIO * len(ends):
            values, codes = groups
            present = np.zeros(len(values), dtype=bool)
            present[codes] = True
            used = np.flatnonzero(present)
            if len(used) == len(values):
                up, low = self._bounds(values, a, origin, slope, offset, tail_s, total_offset, saving, cap)
                return _within(res, up, low, codes)
            index = np.zeros(len(values), dtype=np.intp)
            index[used] = np.arange(len(used))
            up, low = self._bounds(values[used], a, origin, slope, offset, tail_s, total_offset, saving, cap)
            return _within(res, up, low, index[codes])
        if len(ends) > UNIQUE_MIN_JOBS:
            # the bound of a candidate depends on its end only: computed once per distinct end (a long queue
            # holds few distinct walltimes: about 220 in 3,000 waiting jobs of SDSC-Blue)
            uniq, inverse = np.unique(ends, return_inverse=True)
            up, low = self._bounds(uniq, a, origin, slope, offset, tail_s, total_offset, saving, cap)
            return _within(res, up, low, inverse.reshape(-1))
        up, low = self._bounds(ends, a, origin, slope, offset, tail_s, total_offset, saving, cap)
        return _within(res, up, low, None)

    def _bounds(self, ends: np.ndarray, a: float, origin: float, slope: float, offset: float, tail_s: float,
                total_offset: float, saving: tuple[float, float, float] | None,
                cap: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`may_admit`'s largest number of hosts a candidate ending at each of ``ends`` may have
        (-inf: none), and the smallest (None: no such bound). A smallest number comes only from a candidate
        whose whole energy may be negative (``saving``): where the balance is below zero from its tail on,
        only a job saving at least as much can be admitted.

        For a few ends on a plan of few breakpoints (most passes of an energy budget at 1,152 hosts, and of one
        beside ESC, which keeps hosts: numpy's cost per call was then most of the bounds), in plain Python
        (:meth:`_bounds_py`, the same values)."""
        if len(ends) <= PY_MAX_ENDS and len(self.T) <= PY_MAX_BREAKPOINTS:
            up_py, low_py = self._bounds_py(ends.tolist(), a, origin, slope, offset, tail_s, total_offset, saving, cap)
            return np.array(up_py), (np.array(low_py) if low_py is not None else None)
        T, G = self.T_np, self.G_np
        m = len(T)
        k_a = bisect_left(self.T, a)
        # rounding: G is a cumulative sum of m terms bounded by `scale` in all (each bound below and
        # :meth:`admits` read the same G, and a plan rebuilt later in the pass sums other terms)
        scale = abs(G[0]) + (abs(self.rate) + float(np.abs(self.bal_np).max(initial=0.0))) * (self.te - self.t0)
        eps = self.tol + 1e-12 * (m + 16) * scale
        shrink = 1.0 - 1e-12
        g = G + eps  # the balance allowed at each breakpoint, loosened by the margin
        if g[0] < 0.0:
            return np.full(len(ends), -np.inf), None
        bound = np.full(len(ends), np.inf)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # breakpoints where the candidate still computes: T[k] in [a, end)
            if k_a < m:
                den = slope * (T[k_a:] - origin) + offset
                ratio = np.where(den > 0.0, g[k_a:] / (den * shrink), np.inf)
                prefix = np.minimum.accumulate(ratio)
                j = np.searchsorted(T, ends, "left") - 1 - k_a  # the last k with T[k] < end
                has = j >= 0
                bound[has] = prefix[j[has]]
            # breakpoints from the end of the candidate's tail on: its whole energy
            suffix = np.empty(m + 1)
            suffix[m] = np.inf
            suffix[:m] = np.minimum.accumulate(g[::-1])[::-1]
            settled = ends + tail_s
            total = slope * (ends - origin) + total_offset
            if saving is not None:
                saving_w, horizon_s, drop_w = saving
                settled = np.maximum(settled, horizon_s + tail_s)
                if saving_w:  # (0 × inf when kept for ever)
                    total = total - saving_w * np.maximum(0.0, horizon_s - ends)
            ks = np.searchsorted(T, np.maximum(settled, a), "left")
            has = (ks < m) & (total > 0.0)
            bound[has] = np.minimum(bound[has], suffix[ks[has]] / (total[has] * shrink))
            low = None
            if saving is not None:  # n · total ≤ g also bounds n below where both are negative
                low = np.zeros(len(ends))
                short = (ks < m) & (total <= 0.0)
                g_min = suffix[ks[short]]
                low[short] = _fewest(g_min, total[short], shrink)
                # between its end and the kept hosts' last tail: at least its energy at its end minus drop_w per
                # second since (candidates ending before the horizon, whose range ends at the same breakpoint)
                j0 = int(np.searchsorted(T, horizon_s + tail_s, "left")) if math.isfinite(horizon_s) else m
                i = np.searchsorted(T, ends, "left")
                inner = (ends < horizon_s) & (i < j0)
                if j0 > 0 and inner.any():
                    range_min = np.minimum.accumulate(g[:j0][::-1])[::-1]  # range_min[k] = min(g[k:j0])
                    g_in = range_min[i[inner]]
                    x_in = slope * (ends[inner] - origin) + offset - drop_w * (horizon_s + tail_s - ends[inner])
                    bound[inner] = np.minimum(bound[inner], np.where(x_in > 0.0, g_in / (x_in * shrink), np.inf))
                    low[inner] = np.maximum(low[inner], _fewest(g_in, x_in, shrink))
            # the candidate's own breakpoints: its end (still computing) and the end of its tail (all of it)
            own = [(ends, slope * (ends - origin) + offset)]
            if tail_s or total_offset != offset or saving is not None:
                own.append((settled, total))
            for at, x in own:
                inside = (at >= a) & (at < self.te)
                k = np.searchsorted(T, at[inside], "right") - 1
                g_at = G[k] + (self.rate - self.bal_np[k]) * (at[inside] - T[k]) + eps
                x_at = x[inside]
                bound[inside] = np.minimum(bound[inside], np.where(x_at > 0.0, g_at / (x_at * shrink), np.inf))
                if low is not None:
                    low[inside] = np.maximum(low[inside], _fewest(g_at, x_at, shrink))
            if cap is not None and slope > 0.0:
                limit, until = cap
                lo = bisect_right(self.T, a) - 1
                if lo < m - 1:
                    peak = np.maximum.accumulate(self.plan_np[lo:])
                    j = np.searchsorted(T, np.minimum(np.minimum(ends, until), self.te), "left") - 1 - lo
                    has = j >= 0
                    top = peak[j[has]]
                    room = (limit + 1e-9 - top + 1e-12 * (abs(limit) + np.abs(top))) / (slope * shrink)
                    bound[has] = np.minimum(bound[has], room)
        return bound, low

    def _bounds_py(self, ends: list[float], a: float, origin: float, slope: float, offset: float, tail_s: float,
                   total_offset: float, saving: tuple[float, float, float] | None,
                   cap: tuple[float, float] | None) -> tuple[list[float], list[float] | None]:
        """:meth:`_bounds` in plain Python: the same operations on each value, in the same order, so the same floats
        (minima and maxima propagate NaN as ``np.minimum`` and ``np.maximum`` do; tests/test_budget_fast_path.py
        compares both)."""
        T, G, bal = self.T, self.G, self.bal
        m = len(T)
        inf = math.inf
        k_a = bisect_left(T, a)
        scale = abs(G[0]) + (abs(self.rate) + max(0.0, *map(abs, bal))) * (self.te - self.t0)
        eps = self.tol + 1e-12 * (m + 16) * scale
        shrink = 1.0 - 1e-12
        g = [x + eps for x in G]
        if g[0] < 0.0:
            return [-inf] * len(ends), None
        bound = [inf] * len(ends)
        low: list[float] | None = None
        prefix = _accumulate(_min, [g[k] / (den * shrink) if den > 0.0 else inf
                                    for k, den in ((k, slope * (T[k] - origin) + offset) for k in range(k_a, m))])
        suffix = _accumulate(_min, g[::-1])[::-1] + [inf]  # suffix[k]: min of g[k:]
        own_total = bool(tail_s or total_offset != offset or saving is not None)
        te, rate = self.te, self.rate
        if saving is not None:
            saving_w, horizon_s, drop_w = saving
            low = [0.0] * len(ends)
            j0 = bisect_left(T, horizon_s + tail_s) if math.isfinite(horizon_s) else m
            range_min = _accumulate(_min, g[:j0][::-1])[::-1]  # range_min[k] = min(g[k:j0])
        for i, end in enumerate(ends):
            b = bound[i]
            j = bisect_left(T, end) - 1 - k_a
            if j >= 0:
                b = prefix[j]
            settled = end + tail_s
            total = slope * (end - origin) + total_offset
            lo = 0.0
            if saving is not None:
                settled = _max(settled, horizon_s + tail_s)
                if saving_w:
                    total = total - saving_w * _max(0.0, horizon_s - end)
            ks = bisect_left(T, _max(settled, a))
            if ks < m and total > 0.0:
                b = _min(b, suffix[ks] / (total * shrink))
            if saving is not None:
                if ks < m and total <= 0.0:
                    lo = _fewest_py(suffix[ks], total, shrink)
                k_in = bisect_left(T, end)
                if end < horizon_s and k_in < j0:
                    g_in = range_min[k_in]
                    x_in = slope * (end - origin) + offset - drop_w * (horizon_s + tail_s - end)
                    b = _min(b, g_in / (x_in * shrink) if x_in > 0.0 else inf)
                    lo = _max(lo, _fewest_py(g_in, x_in, shrink))
            own = ((end, slope * (end - origin) + offset), (settled, total))
            for at, x in own if own_total else own[:1]:
                if at >= a and at < te:
                    k = bisect_right(T, at) - 1
                    g_at = G[k] + (rate - bal[k]) * (at - T[k]) + eps
                    b = _min(b, g_at / (x * shrink) if x > 0.0 else inf)
                    if saving is not None:
                        lo = _max(lo, _fewest_py(g_at, x, shrink))
            bound[i] = b
            if low is not None:
                low[i] = lo
        if cap is not None and slope > 0.0:
            limit, until = cap
            lo_k = bisect_right(T, a) - 1
            if lo_k < m - 1:
                peak = _accumulate(_max, self.plan[lo_k:])
                for i, end in enumerate(ends):
                    j = bisect_left(T, min(min(end, until), te)) - 1 - lo_k
                    if j >= 0:
                        top = peak[j]
                        room = (limit + 1e-9 - top + 1e-12 * (abs(limit) + abs(top))) / (slope * shrink)
                        bound[i] = _min(bound[i], room)
        return bound, low
