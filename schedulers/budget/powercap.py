"""The powercap baseline (energy-budget paper §V-C): EASY under the power cap ``B / (te − ts)``.

Inside the budget window a job whose run meets it starts only if the estimated platform power
``P̃platform = n_idle·P̃idle + n_comp·P̃comp`` (every non-computing host counted idle, as the paper does)
stays ≤ ``B / (te − ts)``; the head's reservation is at the first time the cap lets it run (at ``te`` when
it never can inside the window), as in the authors' scheduler (``EasyEnergyBudget.findAllocFuture``).
"""

from __future__ import annotations

import heapq
from operator import itemgetter
from typing import Any, Iterator, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.hostsets import size
from wattsched.schedulers.budget.window import TIME_EPS_S, BudgetWindow
from wattsched.schedulers.pieces import register
from wattsched.schedulers.queue import WallGroups
from wattsched.schedulers.state import Assignment, ClusterView, QueuedJob

_END = itemgetter(0)


@register
class Powercap(BudgetWindow):
    """The powercap baseline (energy-budget paper §V-C): EASY where a job meeting the window starts only
    if the estimated platform power ``n_idle·P̃idle + n_comp·P̃comp`` stays ≤ ``B / (te − ts)`` (hosts off
    or switching count as idle, so shutdown does not help it, as in the paper).

    "Roughly the same as EASY Backfilling" (§V-C), with the cap in EASY's reservation too: the head's
    reservation is at the first time its hosts are free *and* the cap lets it run (as the running jobs
    end by their walltime), or at ``te`` when it never can inside the window
    (:meth:`earliest_start_s`); a backfilled job that would still run then must leave the head room
    under the cap. Without that, a head wider than the cap allows would hold its hosts from now to
    ``te`` and only the few hosts outside its reservation could work: the paper finds powercap at 90 %
    *above* EASY's utilization scaled by the budget (§V-G), not at half of it."""

    name = "powercap"
    description = "EASY under the powercap B / (te - ts) inside the window"
    reference = "energy-budget paper §V-C"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._comp = 0  # hosts computing, with the jobs started in the pass
        self._started: list[tuple[int, float]] = []  # jobs started in the pass: (hosts, expected end)
        self._prepared_hosts = 0  # hosts of the jobs the power manager prepared in the pass
        #: during backfilling: (shadow time, hosts computing then with the head) when the head meets the window
        self._at_shadow: tuple[float, int] | None = None

    def begin_pass(self, queue: Sequence[QueuedJob], view: ClusterView) -> None:
        self._comp = view.nb_running_hosts  # (the view keeps the count as jobs start and end)
        self._started = []
        self._prepared_hosts = 0
        self._at_shadow = None

    def end_pass(self, view: ClusterView) -> None:
        self.begin_pass((), view)

    def platform_power_w(self, comp_hosts: int) -> float:
        """``P̃platform`` with ``comp_hosts`` computing and every other host counted idle."""
        p = self.power
        return comp_hosts * p.est_comp_w + (self.nb_hosts - comp_hosts) * p.est_idle_w

    def _fits(self, comp_hosts: int) -> bool:
        return self.platform_power_w(comp_hosts) <= self.rate_w * (1 + 1e-12)

    def _ends_by_end(self, view: ClusterView) -> Iterator[tuple[float, int]]:
        """``(expected end, hosts)`` of the running jobs and of those started in the pass, by expected end, lazily:
        the running jobs read from ``view.running_by_end`` (kept sorted by the view) as far as the caller goes, not
        all of them sorted at every call (hunt 47: a pass over a platform of 73,728 one- or two-host jobs sorted
        every end twice, 14.7 ms a message). Jobs of one end come in any order."""
        started = sorted((end, n) for n, end in self._started)
        running = ((job.expected_end_s, job.nb_hosts) for job in view.running_by_end)
        return heapq.merge(running, started, key=_END) if started else running

    def earliest_start_s(self, job: QueuedJob, assignment: Assignment, start_s: float, view: ClusterView) -> float:
        """The first time from ``start_s`` at which the head fits under the cap as the running jobs end by
        their walltime, or ``te`` (its run then no longer meets the window)."""
        n = size(assignment.hosts)
        if self.exempt(start_s, assignment.end_s(start_s)) or self._fits(self._comp + n):
            return start_s  # (fits even if nothing ends by then)
        ends = self._ends_by_end(view)  # the jobs of one end are all taken together: their order does not matter
        nxt = next(ends, None)
        comp = self._comp
        t = start_s
        while True:
            while nxt is not None and nxt[0] <= t:
                comp -= nxt[1]
                nxt = next(ends, None)
            if not self.in_window(t, assignment.end_s(t)) or self._fits(comp + n):
                return t
            if nxt is None or nxt[0] >= self.te:
                return max(t, self.te)
            t = nxt[0]

    def can_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> bool:
        now = view.now_s
        end = assignment.end_s(now)
        if self.exempt(now, end):
            return True
        return self._admits(self._comp, size(assignment.hosts), end)

    def _admits(self, comp_hosts: int, n: int, end_s: float) -> bool:
        """``n`` more hosts computing until ``end_s`` fit under the cap with ``comp_hosts`` and, while the
        head's reservation is made (:meth:`reserve_head`), leave the head its room when they still compute at
        its reservation."""
        if not self._fits(comp_hosts + n):
            return False
        shadow = self._at_shadow
        return shadow is None or end_s <= shadow[0] or self._fits(shadow[1] + n)

    def _admits_many(self, comp_hosts: int, res: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """:meth:`_admits` for many jobs (the same arithmetic); a job that ends before the window is kept."""
        ok = self._fit_many(comp_hosts + res)
        shadow = self._at_shadow
        if shadow is not None:
            ok &= (ends <= shadow[0]) | self._fit_many(shadow[1] + res)
        return ok | (ends <= self.ts)

    def _count(self, n: int, end_s: float) -> None:
        """``n`` hosts start computing until ``end_s`` in this pass: in the head's room when they still
        compute at its reservation."""
        if self._at_shadow is not None and end_s > self._at_shadow[0]:
            self._at_shadow = (self._at_shadow[0], self._at_shadow[1] + n)

    def _fit_many(self, comp_hosts: np.ndarray) -> np.ndarray:
        """:meth:`_fits` for many host counts (the same arithmetic)."""
        p = self.power
        return comp_hosts * p.est_comp_w + (self.nb_hosts - comp_hosts) * p.est_idle_w <= self.rate_w * (1 + 1e-12)

    def may_start(self, res: np.ndarray, walltime_s: np.ndarray, view: ClusterView,
                  groups: WallGroups | None = None) -> np.ndarray | None:
        """:meth:`can_start` for many jobs before placement (False: refused now and for the rest of the
        backfilling phase, as the computing hosts only grow); a job whose end could miss the window is
        kept."""
        now = view.now_s
        if self.unlimited or now >= self.te - TIME_EPS_S:
            return None
        return self._admits_many(self._comp, res, now + walltime_s)

    def may_prepare(self, res: np.ndarray, walltime_s: np.ndarray, start_s: float, view: ClusterView,
                    groups: WallGroups | None = None, *, boots_all: bool = False) -> np.ndarray | None:
        """:meth:`can_prepare` for many jobs (False: refused for the rest of the pass)."""
        if self.unlimited or start_s >= self.te - TIME_EPS_S:
            return None
        return self._admits_many(self._comp + self._prepared_hosts, res, start_s + walltime_s)

    def on_start(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> None:
        n, end = size(assignment.hosts), assignment.end_s(view.now_s)
        self._comp += n
        self._started.append((n, end))
        self._count(n, end)

    def reserve_head(self, job: QueuedJob, start_s: float, assignment: Assignment, view: ClusterView) -> None:
        """The head's room under the cap at its reservation: a backfilled job still running then must fit
        with it (when the head's run meets the window)."""
        if self.exempt(start_s, assignment.end_s(start_s)):
            return
        ended = 0  # hosts of the jobs ended by start_s: the running ones read by end as far as start_s only
        for end, n in self._ends_by_end(view):
            if end > start_s:
                break
            ended += n
        still = view.nb_running_hosts + sum(n for n, _ in self._started) - ended  # computing then
        self._at_shadow = (start_s, still + size(assignment.hosts))

    def release_head(self) -> None:
        self._at_shadow = None

    def can_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                    view: ClusterView) -> bool:
        """Boot hosts for ``job`` only if the powercap will let it start then, counting the jobs already
        prepared in this pass (no boot/shutdown churn), and, while EASY's reservation of the head is made
        (:meth:`reserve_head`), only if it leaves the head its room under the cap when it still runs at the
        head's reservation: the rule :meth:`can_start` applies to a backfilled job. (Without that rule a job
        booted for could start past the head's reservation and push the head out of its room: on Curie's
        busiest week at 90 % this took powercap with shutdown from 0.707 of utilization in the window to
        0.540, against the paper's "PC SHUT also has the same performance as the PC mechanism", §V-D.)
        Transitions are not counted in ``P̃platform`` (hosts off count as idle, as in the paper), so with
        shutdown the powercap bounds the estimated power of idle and computing hosts only."""
        end = assignment.end_s(start_s)
        if self.exempt(start_s, end):
            return True
        return self._admits(self._comp + self._prepared_hosts, size(assignment.hosts), end)

    def on_prepare(self, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float, assignment: Assignment,
                   view: ClusterView) -> None:
        """The job's hosts count from now on in the pass, and in the head's room when it still runs at the
        head's reservation (as :meth:`on_start`)."""
        n = size(assignment.hosts)
        self._prepared_hosts += n
        self._count(n, assignment.end_s(start_s))
