"""The policy scheduler: five small pieces composed over one :class:`~schedulers.state.ClusterView`.

:class:`PolicyScheduler` is pure Python: it is told what happened (``on_*`` methods, in the order Batsim
reports it) and asked what to do (:meth:`PolicyScheduler.schedule`), and it keeps the view up to date,
assuming that every decision it returns is applied (Batsim applies a reply's events at once). It knows
nothing of pybatsim or JSON: :mod:`schedulers.adapter` drives it, and tests drive it directly.

A pass (:meth:`PolicyScheduler.schedule`) returns, in this order: the rejections of jobs submitted since
the last pass (jobs asking for no host or for more hosts than the machine has, as pybatsim's
``easyBackfill`` does), then the starts of jobs whose hosts the power manager booted for them and which
are now on (``ready_jobs``), then the starts chosen by the backfilling rule (head first, then backfilled
jobs in queue order), each preceded by a :class:`~schedulers.state.SetPState` when the frequency choice wants
another pstate than the hosts have, then the power manager's decisions, then the admission constraint's
own requests (monitoring calls and energy queries of an energy budget).

**Optional hooks** (looked up with ``getattr``, so that pieces without them keep working):

- admission constraint: ``on_platform(nb_hosts, properties)`` at SIMULATION_BEGINS (may raise
  :class:`~wattsched.base.errors.OptionError` when the platform lacks what the options name);
  ``advance(view, now_s)`` before the clock moves (the state still describes the elapsed interval);
  ``on_energy(energy_j, view)`` on ANSWER; ``on_call()`` on REQUESTED_CALL; ``begin_pass(queue, view)``
  before each pass; ``end_pass(view)`` once its starts are applied to the view (they are running jobs
  from then on); ``can_prepare(job, boot, keep, start_s, view)`` and ``on_prepare(...)``, asked by a power
  manager before / after booting hosts for a job; ``decisions(queue, view)`` after the pass (e.g.
  :class:`~schedulers.state.CallMeLater`, :class:`~schedulers.state.QueryEnergy`).
- power manager: ``bind(policy)`` at construction; ``on_platform(nb_hosts, properties)`` and
  ``sleep_pstate`` (which pstate means "asleep"); ``pending_hosts(view)``: hosts that are off or switching
  as pseudo running jobs ending when they can be on (EASY's reservation then accounts for boot time);
  ``ready_jobs(waiting, view)``: jobs to start first, on the hosts booted for them.

Example::

    policy = PolicyScheduler(order=fcfs, backfill=easy_backfill, allocator=FIRST_FIT)
    policy.start(nb_hosts=16)
    policy.on_submitted(QueuedJob("w0!1", res=4, walltime_s=100.0, subtime_s=0.0))
    policy.schedule()          # [StartJob("w0!1", ProcSet((0, 3)))]
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from procset import ProcSet
from sortedcontainers import SortedKeyList

from wattsched.schedulers.admission import AdmissionConstraint, NoConstraint
from wattsched.schedulers.allocation import FIRST_FIT, Allocator
from wattsched.schedulers.backfill import Backfill
from wattsched.schedulers.frequency import FrequencyChoice, TopFrequency
from wattsched.schedulers.order import QueueOrder
from wattsched.schedulers.power import NoPowerManager, PowerManager
from wattsched.schedulers.state import (
    ClusterView,
    Decision,
    JobState,
    QueuedJob,
    RejectJob,
    RunningJob,
    SetPState,
    StartJob,
)
from wattsched.base.hostsets import minus, plus

logger = logging.getLogger(__name__)


class PolicyScheduler:
    """A scheduler made of a queue order, a backfilling rule, an allocator, an admission constraint,
    a power manager and a frequency choice.

    Args:
        order: queue order (:mod:`schedulers.order`).
        backfill: backfilling rule (:mod:`schedulers.backfill`).
        allocator: placement (:mod:`schedulers.allocation`), first-fit contiguous by default.
        admission: admission constraint, none by default.
        power: power manager, none by default.
        frequency: frequency choice, top frequency by default.
        sleep_pstates: pstates in which a host is asleep (the power manager's business; empty when hosts
            are never switched off).
        name: name for logs, e.g. the preset name.
    """

    def __init__(
        self,
        *,
        order: QueueOrder,
        backfill: Backfill,
        allocator: Allocator = FIRST_FIT,
        admission: AdmissionConstraint | None = None,
        power: PowerManager | None = None,
        frequency: FrequencyChoice | None = None,
        sleep_pstates: Iterable[int] = (),
        name: str = "custom",
    ) -> None:
        self.name = name
        self.order = order
        self.backfill = backfill
        self.allocator = allocator
        self.admission = admission if admission is not None else NoConstraint()
        self.power = power if power is not None else NoPowerManager()
        self.frequency = frequency if frequency is not None else TopFrequency()
        self.sleep_pstates = frozenset(sleep_pstates)
        self._view: ClusterView | None = None
        self._queue: dict[str, QueuedJob] = {}  # arrival order
        # static orders (FCFS): the queue kept sorted by (key, arrival number), no sort per pass
        self._static = bool(getattr(order, "static", False))
        self._arrival: dict[str, int] = {}
        self._sorted: SortedKeyList = SortedKeyList(key=self._sorted_key)
        self._waiting_rejects: list[RejectJob] = []
        self._pstates_changed = False  # some host left pstate 0 (else TopFrequency needs no check)
        bind = getattr(self.power, "bind", None)
        if bind is not None:
            bind(self)

    def __repr__(self) -> str:
        return (
            f"PolicyScheduler({self.name}: order={self.order.name}, backfill={self.backfill.__name__}, "
            f"allocation={self.allocator.name}, admission={self.admission.name}, "
            f"power={self.power.name}, frequency={self.frequency.name})"
        )

    # ----------------------------------------------------------------- state
    @property
    def view(self) -> ClusterView:
        """The machine as the policy sees it (after :meth:`start`)."""
        if self._view is None:
            raise RuntimeError("PolicyScheduler.start() was not called (no SIMULATION_BEGINS yet)")
        return self._view

    @property
    def queue(self) -> list[QueuedJob]:
        """Waiting jobs in arrival order."""
        return list(self._queue.values())

    def start(self, nb_hosts: int, now_s: float = 0.0, properties: Sequence[Mapping[str, Any]] | None = None) -> None:
        """The simulation begins on ``nb_hosts`` idle computation hosts at pstate 0.

        Args:
            properties: the platform ``properties`` of each compute host (SIMULATION_BEGINS), when known;
                the admission constraint and the power manager check their options against them.
        """
        self._view = ClusterView.idle_machine(nb_hosts, now_s)
        self._view.host_properties = list(properties or [])
        for piece in (self.admission, self.power):
            hook = getattr(piece, "on_platform", None)
            if hook is not None:
                hook(nb_hosts, self._view.host_properties)
        sleep = getattr(self.power, "sleep_pstate", None)
        if sleep is not None:
            self.sleep_pstates = self.sleep_pstates | {sleep}
        self._queue.clear()
        self._arrival.clear()
        self._sorted.clear()
        self._waiting_rejects.clear()

    def set_time(self, now_s: float) -> None:
        """The clock of the message being handled (called before its events are applied)."""
        advance = getattr(self.admission, "advance", None)
        if advance is not None:
            advance(self.view, now_s)
        self.view.now_s = now_s

    # ----------------------------------------------------------------- events
    def on_submitted(self, job: QueuedJob) -> None:
        """A job arrives; it is rejected at the next pass if it asks for no host or more than exist."""
        view = self.view
        if job.res <= 0 or job.res > view.nb_hosts:
            logger.info("rejecting %s: asks for %d hosts, the machine has %d", job.id, job.res, view.nb_hosts)
            self._waiting_rejects.append(RejectJob(job.id))
            return
        if job.id in self._queue or job.id in view.running:
            raise ValueError(f"job {job.id!r} submitted twice")
        self._queue[job.id] = job
        if self._static:
            self._arrival[job.id] = len(self._arrival)
            self._sorted.add(job)

    def on_completed(self, job_id: str, state: JobState | str = JobState.COMPLETED_SUCCESSFULLY) -> None:
        """A job ended (any final state): its hosts become free."""
        view = self.view
        running = view.remove_running(job_id)
        if running is not None:
            view.free = plus(view.free, running.alloc)
        elif self._dequeue(job_id) is None:
            logger.warning("completion of unknown job %s (%s) ignored", job_id, state)

    def on_pstate_changed(self, hosts: ProcSet, pstate: int) -> None:
        """Batsim applied a pstate to ``hosts`` (RESOURCE_STATE_CHANGED): DVFS done, or a switch ended."""
        view = self.view
        self._pstates_changed = True
        for host in hosts:
            view.pstates[host] = pstate
        transitioning = hosts & (view.switching | view.off)
        view.switching = view.switching - hosts
        if pstate in self.sleep_pstates:
            view.off = view.off | hosts
            view.free = view.free - hosts
        else:
            view.off = view.off - hosts
            view.free = view.free | transitioning

    def on_energy(self, energy_j: float) -> None:
        """Batsim answered a QUERY: energy consumed since the start, in joules."""
        self.view.energy_j = energy_j
        hook = getattr(self.admission, "on_energy", None)
        if hook is not None:
            hook(energy_j, self.view)

    def on_call(self) -> None:
        """A REQUESTED_CALL arrived (the pass that follows is where policies act on it)."""
        hook = getattr(self.admission, "on_call", None)
        if hook is not None:
            hook()

    def on_no_more_jobs(self) -> None:
        """Batsim will submit no more static job (NOTIFY no_more_static_job_to_submit)."""
        self.view.no_more_jobs = True

    @property
    def work_done(self) -> bool:
        """No job will come, none waits, none runs: periodic wake-ups must stop (DESIGN §3)."""
        view = self.view
        return view.no_more_jobs and not self._queue and not view.running

    # ----------------------------------------------------------------- decisions
    def schedule(self) -> list[Decision]:
        """One scheduling pass; the returned decisions are taken as applied."""
        view = self.view
        decisions: list[Decision] = list(self._waiting_rejects)
        self._waiting_rejects.clear()
        begin = getattr(self.admission, "begin_pass", None)
        ready = getattr(self.power, "ready_jobs", None)
        if ready is not None and self._queue:
            for job, alloc in ready(self._queue, view):  # jobs whose hosts were booted for them
                if begin is not None:
                    begin((), view)
                if self.admission.can_start(job, alloc, view):
                    decisions.extend(self._start(StartJob(job.id, alloc)))
        if self._static:
            ordered = self._sorted
        else:
            ordered = self.order.sort(self._queue.values(), view) if self._queue else []
        if begin is not None:
            begin(ordered, view)
        if ordered:
            for start in self.backfill(ordered, self.backfill_view(view), self.allocator, self.admission):
                decisions.extend(self._start(start))
        end = getattr(self.admission, "end_pass", None)
        if end is not None:
            end(view)
        own = getattr(self.admission, "decisions", None)
        if isinstance(self.power, NoPowerManager) and own is None:
            return decisions
        waiting = list(self._sorted) if self._static else [job for job in ordered if job.id in self._queue]
        if not isinstance(self.power, NoPowerManager):
            for decision in self.power.decide(waiting, view):
                if isinstance(decision, SetPState):
                    self._switching(decision)
                decisions.append(decision)
        if own is not None:
            decisions.extend(own(waiting, view))
        return decisions

    def backfill_view(self, view: ClusterView) -> ClusterView:
        """The view the backfilling rule sees: with a power manager that switches hosts off, hosts off or
        switching appear as pseudo running jobs that end when they can be on (boot time included), so that
        EASY's reservation for the head job accounts for boot time. Only ``running_by_end`` differs."""
        pending = getattr(self.power, "pending_hosts", None)
        if pending is None or not (view.off or view.switching):
            return view
        pseudo = pending(view)
        if not pseudo:
            return view
        merged = SortedKeyList(view.running_by_end, key=view.running_by_end.key)
        merged.update(pseudo)
        return replace(view, running_by_end=merged)

    def _start(self, start: StartJob) -> list[Decision]:
        view = self.view
        job = self._dequeue(start.job_id)
        out: list[Decision] = []
        pstate = self.frequency.pstate_for(job, start.alloc, view)
        if pstate is not None and (pstate != 0 or self._pstates_changed):
            differ = ProcSet(*(h for h in start.alloc if view.pstates[h] != pstate))
            if differ:
                self._pstates_changed = True
                out.append(SetPState(differ, pstate))
                for host in differ:
                    view.pstates[host] = pstate
        out.append(start)
        view.free = minus(view.free, start.alloc)
        view.add_running(RunningJob(job.id, start.alloc, view.now_s, job.expected_end_s(view.now_s)))
        return out

    def _sorted_key(self, job: QueuedJob) -> tuple:
        return (self.order.static_key(job), self._arrival[job.id])

    def _dequeue(self, job_id: str) -> QueuedJob | None:
        job = self._queue.pop(job_id, None)
        if job is not None and self._static:
            self._sorted.remove(job)
            del self._arrival[job_id]
        return job

    def _switching(self, decision: SetPState) -> None:
        """Bookkeeping of a power manager's request: sleep or wake-up requests put hosts in transition."""
        view = self.view
        if decision.pstate in self.sleep_pstates or not decision.hosts.isdisjoint(view.off):
            view.switching = view.switching | decision.hosts
            view.free = view.free - decision.hosts
            view.off = view.off - decision.hosts
