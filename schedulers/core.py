"""The policy scheduler: one piece per slot composed over one :class:`~wattsched.schedulers.state.ClusterView`.

:class:`PolicyScheduler` is pure Python: it is told what happened (``on_*`` methods, in the order Batsim
reports it) and asked what to do (:meth:`PolicyScheduler.schedule`); it keeps the view up to date,
assuming that every decision it returns is applied (Batsim applies a reply's events at once), and passes
every event on to every piece (:class:`~wattsched.schedulers.pieces.Piece`'s hooks, in slot order). It
knows nothing of pybatsim or JSON: :mod:`wattsched.schedulers.protocol` drives it from Batsim messages,
:mod:`wattsched.schedulers.adapter` from pybatsim, and tests drive it directly.

**Placement.** :meth:`PolicyScheduler.place` is where a job would run: the placement piece chooses the
hosts, the frequency choice the pstate on them, and the job's runtime model gives its walltime at that
pstate (:class:`~wattsched.schedulers.state.Assignment`). Backfilling, the admission constraint and the
power manager all see that assignment, so EASY's reservation and an energy budget use the real expected
end of a job slowed by DVFS.

**Re-registration.** Batsim kills a job at the walltime of its workload entry. When a job starts with
another walltime (slowed by DVFS) or another profile (computed by the placement), and Batsim accepts
dynamic jobs (``--enable-dynamic-jobs``), the job is replaced (Batsim behaviour 44): REJECT_JOB of the
original, REGISTER_PROFILE of a copy of its profile (per job, as Batsim drops a profile once its job is
done), REGISTER_JOB of ``resized!<workload>.<name>`` with the original's submission time and the new
walltime, then EXECUTE_JOB of the replacement. A job of a composed profile (UPAS's β jobs) is replaced by
``<workload>!resized.<name>`` naming the original's own profile, while Batsim still has it: real Batsim
4.2.1 cannot run a composed profile registered by REGISTER_PROFILE (it links the parts of a composed profile
only at load). The replacement's completion is the original's for every
piece (``RunningJob.job`` is the original). Once no job waits, runs or will come, the core sends NOTIFY
``registration_finished`` (without it Batsim never ends a simulation with dynamic jobs). Without dynamic
jobs a slowed job keeps its walltime and a warning says so.

A pass (:meth:`PolicyScheduler.schedule`) returns, in this order: the rejections of jobs submitted since
the last pass (jobs asking for no host or for more hosts than the machine has, as pybatsim's
``easyBackfill`` does), then the starts of jobs whose hosts the power manager booted for them and which
are now on (``ready_jobs``), then the starts chosen by the backfilling rule (head first, then backfilled
jobs in queue order), each preceded by a :class:`~wattsched.schedulers.state.SetPState` when its pstate
differs from its hosts', then the power manager's decisions, then the admission constraint's own requests
(monitoring calls and energy queries of an energy budget).

Example::

    policy = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), placement=FirstFit())
    policy.start(nb_hosts=16)
    policy.on_submitted(QueuedJob("w0!1", res=4, walltime_s=100.0, subtime_s=0.0))
    policy.schedule()          # [StartJob("w0!1", ProcSet((0, 3)))]
"""

from __future__ import annotations

import logging
import math
from itertools import compress
from typing import Any, Iterable, Mapping, Sequence

from procset import ProcSet
from sortedcontainers import SortedList

from wattsched.base.batsim_files import REPLACEMENT_WORKLOAD
from wattsched.base.errors import OptionError, ProtocolError, counted
from wattsched.base.hostsets import disjoint, from_sorted_ids, inter, intervals, minus, plus
from wattsched.base.limits import limit
from wattsched.energy_models.power import PlatformPower
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint, NoConstraint
from wattsched.schedulers.backfill import Backfilling
from wattsched.schedulers.frequency import FrequencyChoice, TopFrequency
from wattsched.schedulers.order import QueueOrder
from wattsched.schedulers.pieces import Piece
from wattsched.schedulers.placement import FirstFit, FreeHosts, Placement
from wattsched.schedulers.power import NoPowerManager, PowerManager
from wattsched.schedulers.queue import SortedJobs, WaitingQueue
from wattsched.schedulers.state import (
    JOB_ID,
    Assignment,
    ClusterView,
    Decision,
    JobState,
    NotifyRegistrationFinished,
    QueuedJob,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    RunningJob,
    SetJobMetadata,
    SetPState,
    StartJob,
    end_key,
)

logger = logging.getLogger(__name__)


class PolicyScheduler:
    """A scheduler made of a queue order, a backfilling rule, a placement, an admission constraint,
    a power manager and a frequency choice.

    Args:
        order: queue order (:mod:`~wattsched.schedulers.order`).
        backfill: backfilling rule (:mod:`~wattsched.schedulers.backfill`).
        placement: host choice (:mod:`~wattsched.schedulers.placement`), first-fit contiguous by default.
        admission: admission constraint, none by default.
        power: power manager, none by default.
        frequency: frequency choice, top frequency by default.
        name: name for logs, e.g. the preset name.
    """

    def __init__(
        self,
        *,
        order: QueueOrder,
        backfill: Backfilling,
        placement: Placement | None = None,
        admission: AdmissionConstraint | None = None,
        power: PowerManager | None = None,
        frequency: FrequencyChoice | None = None,
        name: str = "custom",
    ) -> None:
        self.name = name
        self.order = order
        self.backfill = backfill
        self.placement = placement if placement is not None else FirstFit()
        self.admission = admission if admission is not None else NoConstraint()
        self.power = power if power is not None else NoPowerManager()
        self.frequency = frequency if frequency is not None else TopFrequency()
        #: every piece, in slot order: each hears every event
        self.pieces: tuple[Piece, ...] = (self.order, self.backfill, self.placement, self.admission, self.power,
                                          self.frequency)
        self.admission.bind_power(self.power)
        if self.order.entries and not self.placement.partitioned:
            raise OptionError(f"order '{self.order.name}' hands out job-partition entries: it needs a placement that "
                              f"keeps a job inside one partition (e.g. 'partitions'), not '{self.placement.name}'")
        if self.placement.partitioned and not self.power.follows_placement:
            raise OptionError(f"power '{self.power.name}' boots nodes in hostname order, whatever partition a job "
                              f"needs: it cannot serve placement '{self.placement.name}' (a job would wait for ever "
                              "on a partition left asleep; use power 'shutdown', which boots the hosts the placement "
                              "chooses)")
        #: whether the power manager and the admission constraint decide anything after a pass (the bases' answer is no
        #: decision: then the queue still waiting is not made for them)
        self._decides = (type(self.power).decide is not PowerManager.decide,
                         type(self.admission).decisions is not AdmissionConstraint.decisions)
        #: the placement completes assignments (partition, its own time model: Placement.complete)
        self._completes = type(self.placement).complete is not Placement.complete
        self._view: ClusterView | None = None
        self._queue: dict[str, QueuedJob] = {}  # arrival order
        # the waiting jobs sorted by (static key, arrival number), with width / walltime arrays (EASY's index): the
        # queue of a static order (FCFS), no sort per pass; for a dynamic order, which sorts the jobs again at every
        # pass, the table its sorted queue reads these arrays from (queue.SortedJobs), kept only for an admission
        # constraint that filters the queue (without one, a dynamic order's plain list is scanned: its lookups in the
        # table would cost as much as the width checks of the scan)
        self._static = order.static
        filters = (type(self.admission).may_start is not AdmissionConstraint.may_start
                   or type(self.admission).may_prepare is not AdmissionConstraint.may_prepare)
        self._tabled = self._static or (order.same_jobs and filters)
        self._arrival: dict[str, int] = {}
        self._arrivals = 0  # arrival numbers handed out (never reused: dequeued jobs leave _arrival)
        self._sorted = WaitingQueue(key=self._sorted_key)
        self._walltimes: SortedList = SortedList()  # walltimes of the waiting jobs (inf: none)
        self._waiting_rejects: list[RejectJob] = []
        self._pstates_changed = False  # some host left pstate 0 (else a job at pstate 0 needs no check)
        self._top: int | None = 0  # the top pstate of every host (None: hosts differ)
        self._registered: set[str] = set()  # ids of the jobs registered to replace others (their JOB_SUBMITTED)
        #: (workload, profile) of the jobs gone (ended or rejected): Batsim drops a job's profile when it deletes
        #: the job (without --enable-profile-reuse), so a replacement can no longer name it
        self._dropped_profiles: set[tuple[str, str]] = set()
        self._registration_done = False
        self._warned_walltime = False

    def __repr__(self) -> str:
        names = ", ".join(f"{piece.slot}={piece.name}" for piece in self.pieces)
        return f"PolicyScheduler({self.name}: {names})"

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

    def start(self, nb_hosts: int, now_s: float = 0.0, properties: Sequence[Mapping[str, Any]] | None = None, *,
              dynamic_jobs: bool = False, profiles: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """The simulation begins on ``nb_hosts`` idle computation hosts at pstate 0.

        Args:
            properties: the platform ``properties`` of each compute host (SIMULATION_BEGINS); the power model
                of every host is read from them (without them, every host is a Taurus node of the
                energy-budget paper's table I). Pieces check their options against the platform.
            dynamic_jobs: Batsim accepts dynamic job registration (its config ``dynamic-jobs-enabled``).
            profiles: every workload's profiles (SIMULATION_BEGINS), to copy when a job is re-registered.

        Raises:
            OptionError: a piece's options do not fit the platform (or Batsim's configuration).
            InputError: a malformed power property.
        """
        view = ClusterView.idle_machine(nb_hosts, now_s)
        view.host_properties = list(properties or [])
        view.dynamic_jobs = dynamic_jobs
        view.profiles = dict(profiles or {})
        if properties:
            view.power = PlatformPower.from_properties(view.host_properties)
        else:
            view.power = PlatformPower.uniform(TAURUS.node_model, nb_hosts)
        tops = {model.top_pstate for model in view.power.models}
        self._top = tops.pop() if len(tops) == 1 else None
        self._view = view
        self._queue.clear()
        self._walltimes.clear()
        self._arrival.clear()
        self._arrivals = 0
        self._sorted.clear()
        self._waiting_rejects.clear()
        self._registered.clear()
        self._dropped_profiles.clear()
        self._registration_done = False
        for piece in self.pieces:
            piece.on_platform(view)
        self.admission.check_platform(view)

    def set_time(self, now_s: float) -> None:
        """The clock of the message being handled (called before its events are applied)."""
        view = self.view
        for piece in self.pieces:
            piece.on_clock(now_s, view)
        view.now_s = now_s

    # ----------------------------------------------------------------- events
    def on_submitted(self, job: QueuedJob) -> None:
        """A job arrives; it is rejected at the next pass if it asks for no host or more than exist."""
        view = self.view
        if job.id in self._registered:  # the acknowledgement of a replacement we registered (running already)
            return
        if job.res <= 0 or job.res > view.nb_hosts:
            logger.info("rejecting %s: asks for %s, the machine has %d", job.id, counted(job.res, "host"), view.nb_hosts)
            self._waiting_rejects.append(RejectJob(job.id))
            self._gone(job)
            return
        if job.id in self._queue or job.id in view.running:
            raise ValueError(f"job {job.id!r} submitted twice")
        self._queue[job.id] = job
        view.nb_waiting = len(self._queue)
        self._walltimes.add(math.inf if job.walltime_s is None else job.walltime_s)
        if self._tabled:
            self._arrival[job.id] = self._arrivals
            self._arrivals += 1
            self._sorted.add(job)
        for piece in self.pieces:
            piece.on_submitted(job, view)

    def on_completed(self, job_id: str, state: JobState | str = JobState.COMPLETED_SUCCESSFULLY) -> None:
        """A job ended (any final state): its hosts become free."""
        view = self.view
        running = view.remove_running(job_id)
        if running is not None:
            if running.job is not None:
                self._gone(running.job)
            view.free = plus(view.free, running.alloc)
            final = state if isinstance(state, JobState) else JobState.parse(state)
            for piece in self.pieces:
                piece.on_completed(running, final, view)
        else:
            waiting = self._dequeue(job_id)
            if waiting is None:
                logger.warning("completion of unknown job %s (%s) ignored", job_id, state)
            else:
                self._gone(waiting)

    def on_hosts_changed(self, hosts: ProcSet, pstate: int) -> None:
        """Batsim applied a pstate to ``hosts`` (RESOURCE_STATE_CHANGED): DVFS done, or a switch ended."""
        view = self.view
        self._pstates_changed = True
        pstates = view.pstates
        changed = False
        for a, b in intervals(hosts):
            if not changed and pstates[a:b + 1].count(pstate) != b - a + 1:
                changed = True
            pstates[a:b + 1] = [pstate] * (b - a + 1)
        transitioning = plus(inter(hosts, view.switching), inter(hosts, view.off))  # (no union of the two large sets)
        if changed or transitioning or pstate == self.power.sleep_pstate:
            view.hosts_version += 1
        view.switching = minus(view.switching, hosts)
        if pstate == self.power.sleep_pstate:
            view.off = plus(view.off, hosts)
            view.free = minus(view.free, hosts)
        else:
            view.off = minus(view.off, hosts)
            view.free = plus(view.free, transitioning)
        for piece in self.pieces:
            piece.on_hosts_changed(hosts, pstate, view)

    def on_energy(self, energy_j: float) -> None:
        """Batsim answered a QUERY: energy consumed since the start, in joules."""
        view = self.view
        view.energy_j = energy_j
        for piece in self.pieces:
            piece.on_energy(energy_j, view)

    def on_call(self) -> None:
        """A REQUESTED_CALL arrived (the pass that follows is where policies act on it)."""
        for piece in self.pieces:
            piece.on_call(self.view)

    def on_no_more_jobs(self) -> None:
        """Batsim will submit no more static job (NOTIFY no_more_static_job_to_submit)."""
        view = self.view
        view.no_more_jobs = True
        for piece in self.pieces:
            piece.on_no_more_jobs(view)

    @property
    def needs_dynamic_jobs(self) -> bool:
        """Some piece changes jobs' walltimes (DVFS) or profiles: Batsim must accept dynamic jobs, or a slowed job
        is killed at the walltime of its workload entry (:meth:`Piece.needs_dynamic_jobs`)."""
        return any(piece.needs_dynamic_jobs() for piece in self.pieces)

    @property
    def work_done(self) -> bool:
        """No job will come, none waits, none runs: periodic wake-ups must stop."""
        view = self.view
        return view.no_more_jobs and not self._queue and not view.running

    # ----------------------------------------------------------------- placement (Placer, PassContext)
    @property
    def contiguous(self) -> bool:
        return self.placement.contiguous

    @property
    def partitioned(self) -> bool:
        return self.placement.partitioned

    def fit_key(self, job: QueuedJob) -> object:
        return self.placement.fit_key(job)

    def widest_fit(self, key: object, free: ProcSet) -> int:
        return self.placement.widest_fit(key, free)

    def place(self, job: QueuedJob, free: FreeHosts) -> Assignment | None:
        """Where and how ``job`` would run among ``free``: the placement's hosts (None: it does not fit),
        the frequency choice's pstate, and the job's walltime there."""
        hosts = self.placement.allocate(job, free, self.view)
        return None if hosts is None else self.assign(job, hosts)

    def reserve(self, job: QueuedJob, free_now: ProcSet, free_then: FreeHosts) -> Assignment | None:
        """The assignment EASY reserves for ``job``, which will start when ``free_then`` is free."""
        hosts = self.placement.reserve(job, free_now, free_then, self.view)
        return None if hosts is None else self.assign(job, hosts)

    @property
    def shortest_walltime_s(self) -> float:
        """The shortest walltime (at the top frequency) among the waiting jobs (``inf`` when none has one)."""
        return self._walltimes[0] if self._walltimes else math.inf

    @property
    def keeps_reservation(self) -> bool:
        """Whether an EASY pass that follows only submissions (or, over job-partition entries, nothing but the
        acknowledgements of the core's own requests) may start from what the previous pass concluded
        (:meth:`~wattsched.schedulers.backfill.EasyBackfilling._select`): an order that depends on which jobs wait
        alone (:attr:`QueueOrder.keys_fixed`), no power manager, a first-fit placement (the reservation's hosts
        are then those a recomputation would choose: best-fit could pick another interval once hosts outside the
        reservation are taken, and the non-contiguous reservation depends on which hosts are free now), and every
        job at a pstate of its own: the top frequency of a platform with one top pstate, or, with a partitioned
        placement, a frequency choice that depends on the job and its partition alone
        (:attr:`FrequencyChoice.per_partition`). The admission constraint is asked at each such pass whether its
        refusals still hold (:meth:`~wattsched.schedulers.admission.AdmissionConstraint.keeps_refusals`: always
        without one, before and after an energy budget's window)."""
        placement = self.placement
        if not ((self._static or self.order.keys_fixed) and type(self.power) is NoPowerManager
                and placement.keeps_reservation):
            return False
        if placement.partitioned:
            return self.frequency.per_partition
        return type(self.frequency) is TopFrequency and self._top is not None and not self._completes

    def starting(self, job: QueuedJob) -> None:
        """A job the backfilling rule starts in this pass (:meth:`~.backfill.Placer.starting`): no longer waiting for
        the jobs placed after it (UPAS's WQ_size, its paper's "current number of jobs in the wait queue"); the
        count is made again from the queue when the pass's starts are applied (:meth:`_dequeue`)."""
        self.view.nb_waiting -= 1

    def assign(self, job: QueuedJob, hosts: ProcSet) -> Assignment:
        """``job`` on ``hosts``: the frequency choice's pstate and the walltime at it (runtime model), completed
        by the placement when it has a time model of its own (:meth:`Placement.complete`).

        Raises:
            OptionError: the pstate's speed is unknown (a platform without ``speed_per_state``).
        """
        view = self.view
        pstate = self.frequency.pstate_for(job, hosts, view)
        walltime = job.walltime_s
        if walltime is not None:
            if pstate is not None:
                if pstate != self._top:
                    walltime = self._stretch(job, walltime, view.power.slowdown(hosts, pstate), pstate)  # type: ignore[union-attr]
            elif self._pstates_changed:  # the hosts keep their pstates: the slowest one sets the pace
                power = view.power
                assert power is not None
                slowdown = max(power.host(h).slowdown(view.pstates[h]) for h in hosts)
                walltime = self._stretch(job, walltime, slowdown, None)
        assignment = Assignment(hosts, pstate, walltime)
        return self.placement.complete(job, assignment, view) if self._completes else assignment

    def _stretch(self, job: QueuedJob, walltime_s: float, slowdown: float, pstate: int | None) -> float:
        if math.isnan(slowdown):
            raise OptionError(
                f"frequency choice '{self.frequency.name}': job {job.id} at pstate {pstate}: the platform gives "
                "no pstate speeds (add a 'speed_per_state' property to its hosts, as 'wattsched platform' does)")
        return self.frequency.runtime_model(job).duration_s(walltime_s, slowdown)

    def backfill_view(self, view: ClusterView) -> ClusterView:
        """The view the backfilling rule sees: with a power manager that switches hosts off, hosts off or
        switching appear as pseudo running jobs that end when they can be on (boot time included), so that
        EASY's reservation for the head job accounts for boot time. A job booked on booting hosts is
        committed to all its hosts: those it keeps free are not free in this view (else a later head's
        reservation would count on hosts the booked job takes when its boot ends). Only ``running_by_end``
        and ``free`` differ.

        Asked twice per pass (EASY's pass, then the power manager's :meth:`~.power.PowerManager.decide`): the
        second time, when the pass started nothing (the same pseudo jobs, which the power manager caches, the
        same view: its sets and running jobs are replaced, never changed in place, and counted by
        ``running_version``), the first view is returned (callers only read it)."""
        if not (view.off or view.switching):
            return view
        pseudo = self.power.pending_hosts(view)
        if not pseudo:
            return view
        key = (pseudo, view.free, view.running_by_end, view.off, view.switching)  # compared by identity
        values = (view.now_s, view.running_version)
        cached = self._seen_cache
        if cached is not None and cached[1] == values and all(a is b for a, b in zip(cached[0], key)):
            return cached[2]
        free = view.free
        for job in pseudo:
            if not disjoint(job.alloc, free):
                free = minus(free, job.alloc)
        seen = object.__new__(ClusterView)  # a shallow copy (no __init__, no copy of the running jobs)
        seen.__dict__.update(view.__dict__)
        seen.pending_by_end = tuple(sorted(pseudo, key=end_key))
        seen.free = free
        self._seen_cache = (key, values, seen)
        return seen

    _seen_cache: tuple[tuple, tuple, ClusterView] | None = None

    # ----------------------------------------------------------------- decisions
    def schedule(self) -> list[Decision]:
        """One scheduling pass; the returned decisions are taken as applied."""
        view = self.view
        admission = self.admission
        decisions: list[Decision] = list(self._waiting_rejects)
        self._waiting_rejects.clear()
        started: list[RunningJob] = []
        if self._queue:
            for job, assignment in self.power.ready_jobs(self._queue, view, self):  # hosts booted for them
                admission.begin_pass((), view)
                if started:  # the jobs started before it no longer wait: its pstate asked again (UPAS's WQ_size)
                    assignment = self.assign(job, assignment.hosts)
                if admission.can_start(job, assignment, view):
                    decisions.extend(self._start(job, assignment, started))
        ordered: Sequence[QueuedJob]
        if self._static:
            ordered = self._sorted
        else:
            ordered = self.order.sort(self._queue.values(), view) if self._queue else []
            if self._tabled and type(ordered) is list:  # (not job-partition entries: an EntryQueue)
                ordered = SortedJobs(ordered, self._sorted)
        admission.begin_pass(ordered, view)
        if ordered:
            seen = self.backfill_view(view) if self.backfill.reads_running else view
            for job, assignment in self.backfill.select(ordered, seen, self, admission):
                decisions.extend(self._start(job, assignment, started))
        for running in started:
            for piece in self.pieces:
                piece.on_started(running, view)
        admission.end_pass(view)
        power_decides, admission_decides = self._decides
        if power_decides or admission_decides:
            waiting: Sequence[QueuedJob]  # without starts, the queue sorted at the start of the pass
            if self._static:
                waiting = self._sorted
            elif started:  # a dynamic order's whole queue, filtered with built-in callables (no Python call a job)
                waiting = list(compress(ordered, map(self._queue.__contains__, map(JOB_ID, ordered))))
                if isinstance(ordered, SortedJobs):
                    waiting = SortedJobs(waiting, self._sorted)
            else:
                waiting = ordered
            if power_decides:
                for decision in self.power.decide(waiting, view, self):
                    if isinstance(decision, SetPState):
                        self._switching(decision)
                    decisions.append(decision)
            if admission_decides:
                decisions.extend(admission.decisions(waiting, view))
        if view.dynamic_jobs and not self._registration_done and self.work_done:
            self._registration_done = True
            decisions.append(NotifyRegistrationFinished())
        return decisions

    def _start(self, job: QueuedJob, assignment: Assignment, started: list[RunningJob]) -> Iterable[Decision]:
        view = self.view
        self._dequeue(job.id)
        hosts = assignment.hosts
        pstate = assignment.pstate
        out: list[Decision] = []
        job_id = job.id
        if assignment.walltime_s != job.walltime_s or assignment.profile is not None:
            if view.dynamic_jobs:
                job_id = self._replace(job, assignment, out)
            elif not self._warned_walltime:
                self._warned_walltime = True
                logger.warning("%s starts with walltime %s instead of %s (or another profile), but Batsim does not "
                               "accept dynamic jobs: it keeps the workload's (run it with dynamic jobs enabled)",
                               job.id, assignment.walltime_s, job.walltime_s)
        if pstate is not None and (pstate != 0 or self._pstates_changed):
            pstates = view.pstates
            differ = from_sorted_ids([h for a, b in intervals(hosts) for h in range(a, b + 1) if pstates[h] != pstate])
            if differ:
                self._pstates_changed = True
                out.append(SetPState(differ, pstate))
                for a, b in intervals(differ):
                    pstates[a:b + 1] = [pstate] * (b - a + 1)
        out.append(StartJob(job_id, hosts))
        if assignment.metadata is not None:
            out.append(SetJobMetadata(job_id, assignment.metadata))
        view.free = minus(view.free, hosts)
        running = RunningJob(job_id, hosts, view.now_s, assignment.end_s(view.now_s), pstate, job)
        view.add_running(running)
        started.append(running)
        return out

    def _gone(self, job: QueuedJob) -> None:
        """``job`` ended or was rejected: Batsim drops its profile with it (:attr:`_dropped_profiles`)."""
        self._dropped_profiles.add((job.id.partition("!")[0], job.profile))

    def _replace(self, job: QueuedJob, assignment: Assignment, out: list[Decision]) -> str:
        """Reject ``job`` and register its replacement with the assignment's walltime and profile (see the
        module docstring); returns the replacement's id.

        A job of a composed profile (UPAS's β jobs) is replaced by ``<workload>!resized.<name>`` naming the
        original's own profile while Batsim still has it: real Batsim 4.2.1 cannot run a composed profile
        registered by REGISTER_PROFILE (it never links the parts of one; ``Workload::check_validity`` runs only at
        load). Once another job of that profile is gone (Batsim dropped the profile) the copy is registered as for
        other profiles, which the embedded simulator runs with a warning and real Batsim cannot."""
        workload, _, name = job.id.partition("!")
        new_name = f"{workload}.{name}" if name else workload
        new_id = f"{REPLACEMENT_WORKLOAD}!{new_name}"
        out.append(RejectJob(job.id))
        original = self.view.profiles.get(workload, {}).get(job.profile)
        if assignment.profile is not None:
            profile_name = f"{job.profile}@{new_name}"
            out.append(RegisterProfile(REPLACEMENT_WORKLOAD, profile_name, assignment.profile))
        elif (original is not None and original.get("type") == "composed"
              and (workload, job.profile) not in self._dropped_profiles):
            new_id, profile_name = f"{workload}!{REPLACEMENT_WORKLOAD}.{name}", job.profile
        else:
            profile_name = self._copy_profile(workload, job.profile, new_name, out, {})
        self._gone(job)
        # -1: none, as pybatsim writes; a walltime stretched beyond the bound of any time (a workload walltime near
        # it, at a lower gear) is registered at the bound, which the simulator accepts: no run reaches it
        walltime = -1.0 if assignment.walltime_s is None else min(assignment.walltime_s, limit("time_s"))
        entry = {"profile": profile_name, "id": new_id, "res": job.res, "walltime": walltime, "subtime": job.subtime_s}
        out.append(RegisterJob(new_id, entry))
        self._registered.add(new_id)
        return new_id

    def _copy_profile(self, workload: str, name: str, suffix: str, out: list[Decision], done: dict[str, str]) -> str:
        """Register ``workload``'s profile ``name`` (and the parts of a composed one, once each: ``done``) as
        ``name@suffix`` in the replacement workload; returns the new name.

        Raises:
            ProtocolError: SIMULATION_BEGINS did not list the profile.
        """
        if name in done:
            return done[name]
        profile = self.view.profiles.get(workload, {}).get(name)
        if profile is None:
            raise ProtocolError(f"cannot re-register a job of profile '{name}': SIMULATION_BEGINS lists no such "
                                f"profile in workload '{workload}'")
        copy = dict(profile)
        if copy.get("type") == "composed":
            copy["seq"] = [self._copy_profile(workload, part, suffix, out, done) for part in copy.get("seq", [])]
        new_name = done[name] = f"{name}@{suffix}"
        out.append(RegisterProfile(REPLACEMENT_WORKLOAD, new_name, copy))
        return new_name

    def _sorted_key(self, job: QueuedJob) -> tuple:
        # (a dynamic order's static_key is not asked: it may change while the job waits, which a sorted list forbids)
        return (self.order.static_key(job) if self._static else 0, self._arrival[job.id])

    def _dequeue(self, job_id: str) -> QueuedJob | None:
        job = self._queue.pop(job_id, None)
        if job is not None:
            self.view.nb_waiting = len(self._queue)
            self._walltimes.remove(math.inf if job.walltime_s is None else job.walltime_s)
            if self._tabled:
                self._sorted.remove(job)
                del self._arrival[job_id]
        return job

    def _switching(self, decision: SetPState) -> None:
        """Bookkeeping of a power manager's request: sleep or wake-up requests put hosts in transition."""
        view = self.view
        if decision.pstate == self.power.sleep_pstate or not disjoint(decision.hosts, view.off):
            view.switching = plus(view.switching, decision.hosts)
            view.free = minus(view.free, decision.hosts)
            view.off = minus(view.off, decision.hosts)
