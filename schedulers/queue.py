"""The waiting queue of a static order, with its jobs' widths and walltimes as arrays (issue 15).

EASY scans every waiting job behind the head at every pass; with an admission constraint that refuses most
of them (an energy budget in its window, a powercap) that scan is most of a run's time. A
:class:`WaitingQueue` is the queue the core keeps sorted for a static order (the jobs in scheduling order,
a ``Sequence`` like any other queue) that also holds each job's width and walltime in numpy arrays in the
same order, so that a backfilling rule or a power manager can filter the jobs behind the head in one
vectorized expression (:meth:`WaitingQueue.after`: the widths that fit, the admission constraint's
:meth:`~wattsched.schedulers.admission.AdmissionConstraint.may_start`) and visit only those, in queue order.

The arrays are indexed by *slot*: a job gets the next slot when it arrives behind every waiting job (what a
static order does with Batsim's submissions, sorted by time), a job that leaves leaves a hole. A job that
arrives anywhere else, or holes outnumbering the jobs, make the slots be renumbered from the sorted list
(once, at the next :meth:`WaitingQueue.after`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, Sized, overload

import numpy as np
from sortedcontainers import SortedKeyList, SortedList

from wattsched.schedulers.state import JOB_ID, QueuedJob

#: :class:`JobsBehind` uses the index only when at least this many jobs follow (a shorter queue is scanned:
#: the arrays cost more than they save). Tests set it to 0 (always indexed) or to a huge value (never).
INDEX_MIN_JOBS = 32
#: :meth:`JobsBehind.narrow` filters again only when at least this many jobs are left to visit.
NARROW_MIN_JOBS = 16


class WaitingQueue(Sequence[QueuedJob]):
    """Waiting jobs sorted by ``key`` (a :class:`~sortedcontainers.SortedKeyList`), with slot arrays.

    Args:
        key: the sort key of a job (unique per job: the core's ``(static key, arrival)``).
    """

    def __init__(self, key: Callable[[QueuedJob], Any]) -> None:
        self._list = SortedKeyList(key=key)
        self._slot: dict[str, int] = {}
        self._jobs: list[QueuedJob | None] = []
        self._res = np.zeros(64, dtype=np.int64)
        self._wall = np.zeros(64)
        self._alive = np.zeros(64, dtype=bool)
        #: each slot's walltime as an index into the distinct walltimes seen (:meth:`walltimes`)
        self._wcode = np.zeros(64, dtype=np.intp)
        self._wcode_of: dict[float, int] = {}
        self._wvalues: list[float] = []
        self._wvalues_np = np.zeros(0)
        self._holes = 0
        self._in_order = True  # slot order is the queue's order
        self._widths = SortedList()  # each job's number of hosts
        self._walltimes = SortedList()  # each job's walltime (inf: none)

    # ------------------------------------------------------------------ Sequence
    def __len__(self) -> int:
        return len(self._list)

    @overload
    def __getitem__(self, index: int) -> QueuedJob: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[QueuedJob]: ...

    def __getitem__(self, index: int | slice) -> QueuedJob | Sequence[QueuedJob]:
        return self._list[index]

    def __iter__(self) -> Iterator[QueuedJob]:
        return iter(self._list)

    def __contains__(self, job: object) -> bool:
        return job in self._list

    # ------------------------------------------------------------------ changes
    def add(self, job: QueuedJob) -> None:
        self._list.add(job)
        self._widths.add(job.res)
        self._walltimes.add(math.inf if job.walltime_s is None else job.walltime_s)
        if not self._in_order:
            return
        if self._list[-1] is not job:  # not behind every waiting job: renumber at the next use
            self._in_order = False
            return
        self._append(job)

    def remove(self, job: QueuedJob) -> None:
        self._list.remove(job)
        self._widths.remove(job.res)
        self._walltimes.remove(math.inf if job.walltime_s is None else job.walltime_s)
        slot = self._slot.pop(job.id, None)
        if slot is not None:
            self._jobs[slot] = None
            self._alive[slot] = False
            self._holes += 1

    def clear(self) -> None:
        self._list.clear()
        self._widths.clear()
        self._walltimes.clear()
        self._renumber()

    def _append(self, job: QueuedJob) -> None:
        slot = len(self._jobs)
        if slot == len(self._alive):  # grow the arrays (doubling)
            self._res = np.concatenate((self._res, np.zeros(slot, dtype=np.int64)))
            self._wall = np.concatenate((self._wall, np.zeros(slot)))
            self._alive = np.concatenate((self._alive, np.zeros(slot, dtype=bool)))
            self._wcode = np.concatenate((self._wcode, np.zeros(slot, dtype=np.intp)))
        self._jobs.append(job)
        self._slot[job.id] = slot
        self._res[slot] = job.res
        wall = math.inf if job.walltime_s is None else job.walltime_s
        self._wall[slot] = wall
        code = self._wcode_of.get(wall)
        if code is None:
            code = self._wcode_of[wall] = len(self._wvalues)
            self._wvalues.append(wall)
        self._wcode[slot] = code
        self._alive[slot] = True

    def _renumber(self) -> None:
        self._slot.clear()
        self._jobs = []
        self._alive[:] = False
        self._holes = 0
        self._in_order = True
        for job in self._list:
            self._append(job)

    # ------------------------------------------------------------------ the index
    def after(self, job: QueuedJob) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The jobs behind ``job`` (a waiting job) as arrays: ``(first slot, alive, widths, walltimes, walltime
        codes)``, the arrays read-only views from that slot on (holes have ``alive`` False; no walltime is
        ``inf``; a code indexes :meth:`walltimes`). :meth:`job` gives the job of a slot."""
        if not self._in_order or self._holes > max(64, len(self._list)):
            self._renumber()
        first = self._slot[job.id] + 1
        end = len(self._jobs)
        return first, self._alive[first:end], self._res[first:end], self._wall[first:end], self._wcode[first:end]

    def walltimes(self) -> np.ndarray:
        """The distinct walltimes of the jobs ever queued (``inf``: none), indexed by the codes of
        :meth:`after` (only grows, so that codes stay valid)."""
        if len(self._wvalues_np) != len(self._wvalues):
            self._wvalues_np = np.array(self._wvalues, dtype=float)
        return self._wvalues_np

    def job(self, slot: int) -> QueuedJob:
        """The job in ``slot`` (a slot :meth:`after` reported alive)."""
        job = self._jobs[slot]
        assert job is not None
        return job

    def slots_of(self, jobs: Sequence[QueuedJob]) -> np.ndarray:
        """The slots of ``jobs`` (waiting jobs of this queue, in any order), valid until the next :meth:`after` or
        :meth:`slots_of` (either may renumber the slots)."""
        if not self._in_order or self._holes > max(64, len(self._list)):
            self._renumber()
        return np.fromiter(map(self._slot.__getitem__, map(JOB_ID, jobs)), dtype=np.intp, count=len(jobs))


class SortedJobs(list):
    """A dynamic order's queue of one pass (a list of the waiting jobs in scheduling order, e.g. a fair share's,
    sorted again at every pass) with ``table``, the core's :class:`WaitingQueue` of the same jobs in arrival order:
    :class:`JobsBehind` reads their widths and walltimes from its arrays (by id) instead of visiting every job. Only
    for an order whose ``sort`` returns the jobs it is given (``QueueOrder.same_jobs``)."""

    def __init__(self, jobs: Iterable[QueuedJob], table: WaitingQueue) -> None:
        super().__init__(jobs)
        self.table = table


class EntryQueue(list):
    """Job-partition entries in scheduling order (a queue order with ``entries = True``, EAMC), a list that also
    answers which entries behind one of them fit by their width: :meth:`fitting`, from an index by width that the
    order keeps per fit key (a partition) as jobs come and go. Most entries of a long queue are wider than what
    their partition has free, and EASY then visits the few others only (issue 15). :meth:`fitting` and
    :meth:`nb_entries` read the order's index as it stands: valid during the pass that sorted the queue, before the
    pieces are told of the pass's starts."""

    def __init__(self, entries: Iterable[QueuedJob],
                 fitting: Callable[[Callable[[object], int], QueuedJob], list[QueuedJob]],
                 of_job: Mapping[str, Sized]) -> None:
        super().__init__(entries)
        self._fitting = fitting
        self._of_job = of_job

    def nb_entries(self, job_id: str) -> int:
        """How many entries job ``job_id`` has in this queue."""
        return len(self._of_job[job_id])

    def fitting(self, widest: Callable[[object], int], head: QueuedJob) -> list[QueuedJob]:
        """The entries after ``head`` (one of this queue's), in queue order, that ask for at most ``widest(key)``
        hosts, ``key`` their partition."""
        return self._fitting(widest, head)


def narrowest_and_shortest(queue: Sequence[QueuedJob]) -> tuple[float, float]:
    """The fewest hosts and the shortest walltime (``inf``: none) of the jobs of ``queue``, when it is a
    :class:`WaitingQueue` (which keeps both as jobs come and go); ``(0, 0.0)`` otherwise (unknown: every width and
    walltime may be there). Lower bounds for the jobs behind any of them: a backfilling rule or a power manager
    then knows at once that none of them fits (issue 15)."""
    if not isinstance(queue, WaitingQueue) or not queue:
        return 0, 0.0
    return queue._widths[0], queue._walltimes[0]


#: what :class:`JobsBehind` gives a filter beside the widths and walltimes: ``(distinct walltimes, each job's
#: index among them)``, so that a bound that depends on the walltime only is computed once per distinct value
#: without sorting the jobs
WallGroups = tuple[np.ndarray, np.ndarray]
Keep = Callable[[np.ndarray, np.ndarray, "WallGroups | None"], "np.ndarray | None"]


class _Behind:
    """The arrays :class:`JobsBehind` reads of a :class:`WaitingQueue`, for the jobs of a :class:`SortedJobs` behind
    its head (slot ``k`` the ``k``-th of ``jobs``), taken from its table (one lookup a job): each job's width and
    walltime (``inf``: none), and its walltime's index among the distinct ones. Under an energy budget a fair share's
    queue grows long, and visiting every job of it behind the head at every pass, each placed and asked of the budget,
    cost 28× EASY beside ESC (issue 15)."""

    __slots__ = ("_jobs", "_res", "_wall", "_wcode", "_wvalues")

    def __init__(self, jobs: Sequence[QueuedJob], table: WaitingQueue) -> None:
        self._jobs = jobs
        slots = table.slots_of(jobs)
        self._res, self._wall, self._wcode = table._res[slots], table._wall[slots], table._wcode[slots]
        self._wvalues = table.walltimes()

    def walltimes(self) -> np.ndarray:
        return self._wvalues

    def job(self, slot: int) -> QueuedJob:
        return self._jobs[slot]


class JobsBehind:
    """The jobs of ``queue`` after position ``i``, in queue order, an iterator. With an index (at least
    ``min_length`` jobs follow: the arrays of a :class:`WaitingQueue`, or, with a ``keep`` filter, those of the jobs
    of a :class:`SortedJobs` behind ``i``, read from its table), only those the index does not rule out:
    wider than ``max_res``, or refused by ``keep(widths, walltimes, groups)`` (a boolean mask, False: certainly
    not; None: no filter; ``groups``: :data:`WallGroups`); :meth:`narrow` applies both again to the jobs not
    visited yet, after a start. ``rule(widths, walltimes)`` (False: pass over), when given, rules jobs out before
    ``keep`` is asked, which is then asked of the others only (an admission constraint's bound costs per job, and
    nothing when none is left). Without an index, every job after ``i``."""

    def __init__(self, queue: Sequence[QueuedJob], i: int, max_res: int, keep: Keep | None = None,
                 min_length: int | None = None, rule: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                 ) -> None:
        if min_length is None:
            min_length = INDEX_MIN_JOBS
        self._plain: Iterator[QueuedJob] | None = None
        self._keep = keep
        self._filtered = False  # whether `keep` gave a mask (then narrow() asks it again)
        # (a dynamic order's queue without a filter is scanned: the lookups of its arrays cost as much as the width
        # checks of the caller's scan; another sequence, e.g. job-partition entries, has no table)
        if len(queue) - i - 1 < min_length or not (isinstance(queue, WaitingQueue)
                                                   or (keep is not None and isinstance(queue, SortedJobs))):
            self._plain = islice(queue, i + 1, None)
            return
        index: WaitingQueue | _Behind
        if isinstance(queue, WaitingQueue):
            index = queue
            first, alive, res, wall, codes = queue.after(queue[i])
            mask = alive & (res <= max_res)
        else:  # a dynamic order's queue, sorted again at every pass: the arrays of the jobs behind, from its table
            index = _Behind(queue[i + 1:], queue.table)
            first, res, wall, codes = 0, index._res, index._wall, index._wcode
            mask = res <= max_res
        self._queue = index
        # one mask over the queue's arrays, then one selection (issue 15: selecting the arrays again at each step
        # cost more than the steps; `rule` is elementwise, so it may read the holes' and the wide jobs' values)
        if rule is not None:
            mask &= rule(res, wall)
        idx = np.flatnonzero(mask)
        self._pos = 0
        #: (widths, walltimes, codes) of the jobs of _slots, when the filter needed them (else read in narrow())
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if keep is not None and len(idx):  # (asked of the jobs left only: it may cost per job)
            arrays = (res[idx], wall[idx], codes[idx])
            more = keep(arrays[0], arrays[1], (index.walltimes(), arrays[2]))
            if more is not None:
                self._filtered = True
                idx = idx[more]
                arrays = (arrays[0][more], arrays[1][more], arrays[2][more])
            self._arrays = arrays
        self._slots = idx + first
        self._list: list[int] = self._slots.tolist()

    def __iter__(self) -> Iterator[QueuedJob]:
        if self._plain is not None:
            return self._plain
        return self._visit()

    def __next__(self) -> QueuedJob:
        if self._plain is not None:
            return next(self._plain)
        pos = self._pos
        if pos >= len(self._list):
            raise StopIteration
        self._pos = pos + 1
        return self._queue.job(self._list[pos])

    def _visit(self) -> Iterator[QueuedJob]:
        """What ``for job in jobs_behind`` runs: :meth:`__next__` as a generator (cheaper per job); it reads the
        list again at every step, so :meth:`narrow` between two steps takes effect."""
        queue = self._queue
        while True:
            pos = self._pos
            slots = self._list
            if pos >= len(slots):
                return
            self._pos = pos + 1
            yield queue._jobs[slots[pos]]  # type: ignore[misc]  # a slot the index reported alive

    def left(self) -> int:
        """How many jobs are still to visit (0 without an index: :meth:`narrow` does nothing there)."""
        return 0 if self._plain is not None else len(self._list) - self._pos

    def narrow(self, max_res: int, rule: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
               refilter: bool = True) -> None:
        """Forget the jobs not visited yet that the caller would pass over anyway: wider than ``max_res``,
        ruled out by ``keep`` again (when it filters and ``refilter``: a start only tightens an admission
        constraint; the caller passes False when nothing started since ``keep`` was last asked, whose answer
        would be the same), or by ``rule(widths, walltimes)`` (False: pass over). Without an index, or with few
        jobs left, nothing (the caller's own checks are as cheap)."""
        if self._plain is not None:
            return
        pos = self._pos
        if len(self._list) - pos < NARROW_MIN_JOBS or not ((self._filtered and refilter) or rule):
            return
        slots = self._slots[pos:]
        if self._arrays is None:  # (a slot keeps its job during a pass: the queue is renumbered between passes only)
            queue = self._queue
            res, wall, codes = queue._res[slots], queue._wall[slots], queue._wcode[slots]
        else:
            res, wall, codes = (a[pos:] for a in self._arrays)
        mask = res <= max_res
        if rule is not None:
            mask &= rule(res, wall)
        if self._filtered and refilter and mask.any():  # (the filter asked of the jobs left only)
            assert self._keep is not None
            more = self._keep(res[mask], wall[mask], (self._queue.walltimes(), codes[mask]))
            if more is not None:
                mask[mask] = more
        self._slots = slots[mask]
        self._arrays = (res[mask], wall[mask], codes[mask])
        self._list = self._slots.tolist()
        self._pos = 0


class Staircase:
    """Refusals of a pass as their Pareto front (an energy budget's, a power manager's boots): a job with at
    least ``n`` hosts and an end no sooner than ``end`` is refused when some refused ``(n2, end2)`` has
    ``n2 ≤ n`` and ``end2 ≤ end``. Kept as hosts increasing, ends strictly decreasing, so a query is one
    bisect."""

    __slots__ = ("ns", "ends")

    def __init__(self) -> None:
        self.ns: list[int] = []
        self.ends: list[float] = []

    def __bool__(self) -> bool:
        return bool(self.ns)

    def dominates(self, n: int, end: float) -> bool:
        """Whether ``(n, end)`` is refused by a refusal already recorded."""
        i = bisect_right(self.ns, n) - 1
        return i >= 0 and self.ends[i] <= end

    def dominates_many(self, ns: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """:meth:`dominates` of each ``(ns[k], ends[k])``, as a boolean array (one ``searchsorted``)."""
        if not self.ns:
            return np.zeros(len(ns), dtype=bool)
        i = np.searchsorted(np.array(self.ns), ns, "right") - 1
        return (i >= 0) & (np.array(self.ends)[np.maximum(i, 0)] <= ends)

    def add(self, n: int, end: float) -> None:
        """Record the refusal of ``(n, end)`` (refusals it dominates are dropped)."""
        if self.dominates(n, end):
            return
        i = bisect_left(self.ns, n)
        j = i
        while j < len(self.ns) and self.ends[j] >= end:
            j += 1
        self.ns[i:j] = [n]
        self.ends[i:j] = [end]
