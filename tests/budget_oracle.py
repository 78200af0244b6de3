"""A slow, obviously-correct oracle for :class:`~wattsched.schedulers.budget.EnergyBudget`'s admission check.

This is the straightforward implementation the fast per-pass :class:`~wattsched.schedulers.budget.plan.Plan`
replaced (the code of ``EnergyBudget.plan`` / ``job_segments`` / ``can_start`` and of ``min_balance``,
``power_at``, ``max_power`` before that optimisation, moved here unchanged; the methods became functions
taking the budget as first argument). The plan is rebuilt as a list of segments at every call and the
balance is swept breakpoint by breakpoint: tests compare the fast path's verdicts with these.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from procset import ProcSet

from wattsched.schedulers.budget import EnergyBudget
from wattsched.schedulers.budget.estimates import Segment
from wattsched.schedulers.state import Assignment, ClusterView, QueuedJob

INF = math.inf


# --------------------------------------------------------------------------- balance arithmetic
def min_balance(cea_j: float, rate_w: float, t0: float, t1: float, segments: Sequence[Segment]) -> float:
    """Minimum over ``τ ∈ [t0, t1]`` of ``cea + ∫_{t0}^{τ} (rate − P(s)) ds`` with ``P`` the sum of
    ``segments`` (piecewise constant). The balance is piecewise linear: its minimum is at a breakpoint."""
    if t1 <= t0:
        return cea_j
    events: dict[float, float] = {}
    power = 0.0
    for a, b, w in segments:
        if w == 0.0:
            continue
        a = max(a, t0)
        b = min(b, t1)
        if b <= a:
            continue
        if a <= t0:
            power += w
        else:
            events[a] = events.get(a, 0.0) + w
        if b < t1:
            events[b] = events.get(b, 0.0) - w
    balance = lowest = cea_j
    t = t0
    for at in sorted(events):
        balance += (rate_w - power) * (at - t)
        lowest = min(lowest, balance)
        power += events[at]
        t = at
    balance += (rate_w - power) * (t1 - t)
    return min(lowest, balance)


def power_at(t: float, segments: Sequence[Segment]) -> float:
    """The sum of the segments covering ``t``."""
    return sum(w for a, b, w in segments if a <= t < b)


def max_power(t0: float, t1: float, segments: Sequence[Segment]) -> float:
    """The largest summed power over ``[t0, t1)`` (``-inf`` for an empty interval).

    Evaluated at ``t0`` and at the segments' starts: exact when the power only rises where a segment
    starts (true of the plan and of a job's segments, where a negative piece ends only where another
    begins)."""
    if t1 <= t0:
        return -INF
    times = sorted({t0} | {a for a, _, _ in segments if t0 < a < t1})
    return max(power_at(t, segments) for t in times)


# --------------------------------------------------------------------------- the plan, rebuilt every call
def plan(budget: EnergyBudget, view: ClusterView) -> list[Segment]:
    """Estimated power of the cluster from now on if nothing else starts (running jobs until their
    expected end, free / asleep / switching hosts), with the jobs started earlier in this pass."""
    now = view.now_s
    p = budget.power
    segs: list[Segment] = []
    for job in view.running.values():
        segs += budget._run(len(job.alloc), now, job.expected_end_s)
    used = 0
    for n, end in budget._started:
        segs += budget._run(n, now, end)
        used += n
    segs += budget._prepared
    kept: Mapping[int, float] = {}
    pm = budget.power_manager
    if pm is not None:
        kept = pm.kept_hosts(view)
    free_kept = [kept[h] for h in view.free if h in kept] if kept else []
    for until in free_kept:
        segs += [(now, until, p.est_idle_w)] + budget._tail(1, until)
    segs += budget._tail(len(view.free) - used - len(free_kept), now)
    if view.off:
        segs.append((now, INF, len(view.off) * p.sleep_w))
    if view.switching:
        segs += budget._switching_segments(view, kept)
    return segs


def job_segments(budget: EnergyBudget, assignment: Assignment, view: ClusterView) -> list[Segment]:
    """What starting a job now with ``assignment`` (free hosts) adds to the plan (may be negative)."""
    now = view.now_s
    end = assignment.end_s(now)
    alloc = assignment.hosts
    added = budget._run(len(alloc), now, end)
    return added + [(a, b, -w) for a, b, w in budget._free_baseline(alloc, view)]


def balance_ok(budget: EnergyBudget, extra: Sequence[Segment], view: ClusterView, *,
               reserved: Sequence[Segment] = (), cut: tuple[float, float] | None = None) -> bool:
    """Rule 2 on the whole plan: the balance with ``extra`` (and the head's reservation, or reducePC's
    lowered rate ``cut``) stays ≥ 0, within ``1e-9·max(1, B)`` J, from now (or ts) to te."""
    t0, cea = budget._t0(view.now_s)
    segs = plan(budget, view) + list(extra) + list(reserved)
    if cut is not None:
        segs.append((t0, cut[1], cut[0]))
    lowest = min_balance(cea, budget.rate_w, t0, budget.te, segs)
    return lowest >= -1e-9 * max(1.0, budget.B)


def can_start(budget: EnergyBudget, job: QueuedJob, assignment: Assignment, view: ClusterView) -> bool:
    """:meth:`EnergyBudget.can_start` the slow way (no cache, no remembered refusals): rule 2 on the
    whole plan plus the job's segments and, under reducePC's lowered rate, the power cap
    ``R − J / (q − now)`` (within 1e-9 W) until ``min(q, end, te)``."""
    if budget.unlimited:
        return True
    now = view.now_s
    end = assignment.end_s(now)
    if not budget.in_window(now, end):
        return True
    extra = job_segments(budget, assignment, view)
    if not balance_ok(budget, extra, view, reserved=budget._reserved, cut=budget._cut):
        return False
    if budget._cut is not None:  # reducePC: as under the lowered powercap until q
        t0, _ = budget._t0(now)
        cap = budget.rate_w - budget._cut[0]
        segs = plan(budget, view) + extra
        if max_power(t0, min(budget._cut[1], end, budget.te), segs) > cap + 1e-9:
            return False
    return True


def can_prepare(budget: EnergyBudget, job: QueuedJob, boot: ProcSet, keep: ProcSet, start_s: float,
                assignment: Assignment, view: ClusterView) -> bool:
    """:meth:`EnergyBudget.can_prepare` the slow way: rule 2 on the whole plan plus the boots, the kept
    hosts and the job's run from ``start_s`` (``EnergyBudget._prepare_segments``), and under reducePC's
    lowered rate the power cap until ``min(q, end, te)``."""
    if budget.unlimited:
        return True
    now = view.now_s
    end = assignment.end_s(start_s)
    if not budget.in_window(now, max(end, now + budget.power.switch_on_s)):
        return True
    extra = budget._prepare_segments(assignment, boot, keep, start_s, view)
    if not balance_ok(budget, extra, view, reserved=budget._reserved, cut=budget._cut):
        return False
    if budget._cut is not None:
        t0, _ = budget._t0(now)
        cap = budget.rate_w - budget._cut[0]
        if max_power(t0, min(budget._cut[1], end, budget.te), plan(budget, view) + extra) > cap + 1e-9:
            return False
    return True
