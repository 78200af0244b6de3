"""Fast operations on host sets (``procset.ProcSet``) for the hot paths of schedulers and simulator.

``ProcSet``'s own ``-`` and ``|`` sweep every interval of both operands in Python; on a fragmented
machine (hundreds of free intervals) that is what a scheduling pass spends its time on. Here the
small operand (a job's allocation: one or a few intervals) is located with ``bisect`` in the sorted
interval list of the large one, and the result is spliced with C-level list operations, so the cost
is O(log k) Python steps per interval of the small operand. The results are ordinary ``ProcSet``
objects, equal to ``a - b`` and ``a | b`` (checked by hypothesis in ``tests/test_hostsets.py``).

This relies on ``ProcSet`` keeping its disjoint sorted intervals in the ``_itvs`` list of
``ProcInt`` (procset 1.x, pinned in ``setup.cfg``).
"""

from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter, sub
from typing import Iterable, Sequence

import numpy as np
from procset import ProcInt, ProcSet

_TOP = (1 << 62,)


_new_tuple = tuple.__new__
_new_object = object.__new__


def _itv(inf: int, sup: int) -> ProcInt:
    """``ProcInt(inf, sup)`` for bounds already known valid (ints, ``0 <= inf <= sup``: they come from other
    intervals or from a job's width), without procset's checks of each (issue 15: millions per run)."""
    return _new_tuple(ProcInt, (inf, sup))


def _wrap(intervals: list) -> ProcSet:
    """A ``ProcSet`` holding ``intervals`` (sorted, disjoint, not adjacent) as they are, without running its
    constructor."""
    result = _new_object(ProcSet)
    result._itvs = intervals
    return result


def interval(inf: int, sup: int) -> ProcSet:
    """``ProcSet((inf, sup))`` (``0 <= inf <= sup``) without procset's general-purpose constructor."""
    return _wrap([_itv(inf, sup)])


def _first_reaching(itvs: Sequence, x: int) -> int:
    """Index of the first interval whose ``sup`` is >= ``x``."""
    i = bisect_right(itvs, (x,) + _TOP) - 1
    if i < 0 or itvs[i][1] < x:
        i += 1
    return i


def intervals(hosts: ProcSet) -> Sequence[tuple[int, int]]:
    """The sorted disjoint ``(inf, sup)`` intervals of ``hosts``, without a copy (read them, do not
    modify them)."""
    return hosts._itvs


def first_fit_within(free: Sequence[tuple[int, int]], lo: int, hi: int, n: int) -> ProcSet | None:
    """The first ``n`` ids of the lowest interval of ``free`` (sorted disjoint ``(inf, sup)`` intervals, e.g.
    :func:`intervals`) that holds ``n`` hosts inside ``[lo, hi]``, or ``None``: first-fit contiguous placement
    restricted to a range (a partition), located with one bisect."""
    k = _first_reaching(free, lo) if free else 0
    for index in range(k, len(free)):
        a, b = free[index]
        if a > hi:
            break
        if a < lo:
            a = lo
        if b > hi:
            b = hi
        if b - a >= n - 1:
            return interval(a, a + n - 1)
    return None


def longest_within(free: Sequence[tuple[int, int]], lo: int, hi: int) -> int:
    """The number of hosts of the longest interval of ``free`` (sorted disjoint ``(inf, sup)`` intervals) inside
    ``[lo, hi]``: :func:`first_fit_within` finds no wider range there."""
    best = 0
    for index in range(_first_reaching(free, lo) if free else 0, len(free)):
        a, b = free[index]
        if a > hi:
            break
        length = min(b, hi) - max(a, lo) + 1
        if length > best:
            best = length
    return best


def contains(hosts: ProcSet, host: int) -> bool:
    """``host in hosts`` with one bisect."""
    itvs = hosts._itvs
    i = bisect_right(itvs, (host,) + _TOP) - 1
    return i >= 0 and itvs[i][1] >= host


def ids_array(hosts: ProcSet) -> np.ndarray:
    """The ids of ``hosts``, increasing, as an int64 array (one ``arange`` per interval)."""
    parts = [np.arange(a, b + 1, dtype=np.int64) for a, b in hosts._itvs]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def contains_many(hosts: ProcSet, ids: np.ndarray) -> np.ndarray:
    """``[h in hosts for h in ids]`` as a boolean array: one ``searchsorted`` over the intervals."""
    itvs = hosts._itvs
    if not itvs:
        return np.zeros(len(ids), dtype=bool)
    los = np.fromiter(map(_INF, itvs), dtype=np.int64, count=len(itvs))
    his = np.fromiter(map(_SUP, itvs), dtype=np.int64, count=len(itvs))
    i = np.searchsorted(los, ids, "right") - 1
    return (i >= 0) & (ids <= his[np.maximum(i, 0)])


def minus(hosts: ProcSet, removed: ProcSet) -> ProcSet:
    """``hosts - removed``: each interval of ``removed`` cut out of a copy of ``hosts``, or, when ``removed``
    has many more intervals (e.g. the hosts already counted, growing, minus one small set), each interval of
    ``hosts`` walked through ``removed`` from one bisect (:func:`_minus_walking_hosts`)."""
    if len(removed._itvs) > 2 * len(hosts._itvs) + 8:
        return _minus_walking_hosts(hosts, removed)
    itvs = list(hosts._itvs)
    for a, b in removed._itvs:
        i = _first_reaching(itvs, a)
        j = i
        while j < len(itvs) and itvs[j][0] <= b:
            j += 1
        if i == j:
            continue
        pieces = []
        if itvs[i][0] < a:
            pieces.append(_itv(itvs[i][0], a - 1))
        if itvs[j - 1][1] > b:
            pieces.append(_itv(b + 1, itvs[j - 1][1]))
        itvs[i:j] = pieces
    return _wrap(itvs)


def _minus_walking_hosts(hosts: ProcSet, removed: ProcSet) -> ProcSet:
    """``hosts - removed`` in time proportional to the intervals of ``hosts`` and those of ``removed`` that
    overlap them (plus one bisect per interval of ``hosts``)."""
    cut = removed._itvs
    n = len(cut)
    out: list = []
    for itv in hosts._itvs:
        lo, hi = itv
        i = _first_reaching(cut, lo)
        if i == n or cut[i][0] > hi:  # untouched
            out.append(itv)
            continue
        while i < n:
            x, y = cut[i]
            if x > hi:
                break
            if x > lo:
                out.append(_itv(lo, x - 1))
            lo = y + 1
            if lo > hi:
                break
            i += 1
        if lo <= hi:
            out.append(_itv(lo, hi))
    return _wrap(out)


def plus(hosts: ProcSet, added: ProcSet) -> ProcSet:
    """``hosts | added``: the operand with fewer intervals added into a copy of the other's (issue 15: the few free
    hosts joined to the many intervals asleep at 80,640 hosts cost a Python step per interval asleep)."""
    if len(added._itvs) > len(hosts._itvs):
        hosts, added = added, hosts
    itvs = list(hosts._itvs)
    add_into(itvs, added)
    return _wrap(itvs)


class Accumulator:
    """A union of host sets grown in place (no copy of what it holds at each addition, as ``plus`` makes):
    :attr:`hosts` is a live ``ProcSet`` view of it (it changes with each :meth:`add`: copy it to keep one
    state)."""

    __slots__ = ("_itvs", "hosts")

    def __init__(self, start: ProcSet) -> None:
        self._itvs = list(start._itvs)
        self.hosts = _wrap(self._itvs)

    def add(self, added: ProcSet) -> None:
        add_into(self._itvs, added)


#: :func:`add_into` merges the two lists in one pass when both have more intervals than this (on fragmented
#: sets, e.g. the hosts free and those asleep at 80,640 hosts, an insertion per interval moves the whole list)
MERGE_MIN_INTERVALS = 8


def add_into(itvs: list, added: ProcSet) -> None:
    """``itvs`` (sorted disjoint intervals, a list) becomes ``itvs | added``, in place."""
    if len(added._itvs) > MERGE_MIN_INTERVALS and len(itvs) > MERGE_MIN_INTERVALS:
        itvs[:] = from_intervals(sorted(itvs + added._itvs))._itvs  # (sorted merges the two runs)
        return
    for a, b in added._itvs:
        i = _first_reaching(itvs, a - 1)  # an interval ending at a-1 merges with [a, b]
        j = i
        while j < len(itvs) and itvs[j][0] <= b + 1:
            j += 1
        if i < j:
            a = min(a, itvs[i][0])
            b = max(b, itvs[j - 1][1])
        itvs[i:j] = [_itv(a, b)]


def inter(a: ProcSet, b: ProcSet) -> ProcSet:
    """``a & b``: each interval of the operand with fewer intervals is located with ``bisect`` in the other's."""
    small, large = (a._itvs, b._itvs) if len(a._itvs) <= len(b._itvs) else (b._itvs, a._itvs)
    out: list = []
    if not small or not large:
        return _wrap(out)
    n = len(large)
    for lo, hi in small:
        i = _first_reaching(large, lo)
        while i < n:
            x, y = large[i]
            if x > hi:
                break
            x = lo if x < lo else x
            y = hi if y > hi else y
            out.append(_itv(x, y))
            i += 1
    return _wrap(out)


def disjoint(a: ProcSet, b: ProcSet) -> bool:
    """``a.isdisjoint(b)`` with one bisect per interval of the operand with fewer intervals."""
    small, large = (a._itvs, b._itvs) if len(a._itvs) <= len(b._itvs) else (b._itvs, a._itvs)
    if not small or not large:
        return True
    n = len(large)
    for lo, hi in small:
        i = _first_reaching(large, lo)
        if i < n and large[i][0] <= hi:
            return False
    return True


def copy(hosts: ProcSet) -> ProcSet:
    """A copy of ``hosts`` (its intervals are immutable: one list copy)."""
    return _wrap(list(hosts._itvs))


def parse_canonical(text: str) -> tuple[ProcSet, str]:
    """``ProcSet.from_str(text)`` and the canonical string of the set (``text`` itself when it already
    is). Fast for the canonical form schedulers send (``"0-5 7 9-12"``: sorted, disjoint, not
    adjacent); any other form goes through procset's parser."""
    itvs = []
    last = -2
    canonical = True
    try:
        for token in text.split(" "):
            a, sep, b = token.partition("-")
            inf = int(a)
            sup = int(b) if sep else inf
            if inf <= last + 1 or sup < inf:
                break
            if (sep and sup == inf) or (len(a) > 1 and a[0] == "0") or (len(b) > 1 and b[0] == "0"):
                canonical = False
            itvs.append(ProcInt(inf, sup))
            last = sup
        else:
            hosts = _wrap(itvs)
            return hosts, text if canonical else str(hosts)
    except ValueError:
        pass
    hosts = ProcSet.from_str(text)  # raises procset's own error for a malformed string
    return hosts, str(hosts)


def from_sorted_ids(ids: Sequence[int]) -> ProcSet:
    """The ProcSet of sorted distinct host ids, in one pass (``ProcSet(*ids)`` merges id by id)."""
    itvs: list = []
    start = prev = None
    for h in ids:
        if prev is None or h != prev + 1:
            if prev is not None:
                itvs.append(ProcInt(start, prev))
            start = h
        prev = h
    if prev is not None:
        itvs.append(ProcInt(start, prev))
    return _wrap(itvs)


def from_intervals(itvs: Sequence[tuple[int, int]]) -> ProcSet:
    """The ProcSet of ``(inf, sup)`` intervals sorted by ``inf`` (adjacent or overlapping ones merged), in one
    pass (``ProcSet(*itvs)`` merges interval by interval, quadratic on a fragmented set)."""
    out: list = []
    lo, hi = 0, -2  # (no interval yet: ids are never negative)
    for a, b in itvs:
        if a <= hi + 1:
            if b > hi:
                hi = b
            continue
        if hi >= 0:
            out.append(_itv(lo, hi))
        lo, hi = a, b
    if hi >= 0:
        out.append(_itv(lo, hi))
    return _wrap(out)


def union_if_disjoint(sets: Iterable[ProcSet]) -> ProcSet | None:
    """The union of ``sets`` when no two of them share a host, else None: one sort of all their intervals (adding
    many small sets one by one to a growing union costs a search and an insertion each)."""
    itvs = sorted(itv for hosts in sets for itv in hosts._itvs)
    hi = -1
    for a, b in itvs:
        if a <= hi:
            return None
        hi = b
    return from_intervals(itvs)


_INF = itemgetter(0)
_SUP = itemgetter(1)


def longest(hosts: ProcSet) -> int:
    """The number of hosts of the longest interval of ``hosts`` (0 when empty): no contiguous allocation of more
    hosts fits in it."""
    itvs = hosts._itvs
    return max(map(sub, map(_SUP, itvs), map(_INF, itvs))) + 1 if itvs else 0


def size(hosts: ProcSet) -> int:
    """``len(hosts)`` without a Python call per interval."""
    itvs = hosts._itvs
    return sum(map(_SUP, itvs)) - sum(map(_INF, itvs)) + len(itvs)
