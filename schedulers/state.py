"""The small state every policy piece reads, and the decisions a policy returns.

Policy code (the six slots of :mod:`wattsched.schedulers.pieces`) is plain Python over these types and
knows nothing of pybatsim or of the Batsim JSON protocol; :mod:`wattsched.schedulers.protocol` and
:mod:`wattsched.schedulers.adapter` translate between the two (docs/architecture.md).

- :class:`QueuedJob` is a waiting job as the scheduler knows it at submission, with its runtime model.
- :class:`Assignment` is where and how a job would run: hosts, pstate, walltime at that pstate.
- :class:`RunningJob` is a started job with its hosts, pstate and expected end.
- :class:`ClusterView` is the mutable picture the core (:class:`~wattsched.schedulers.core.PolicyScheduler`)
  keeps up to date: clock, idle hosts, running jobs, hosts off or switching, pstates, power model, energy.
- :data:`Decision` is one of :class:`StartJob`, :class:`RejectJob`, :class:`SetPState`,
  :class:`CallMeLater`, :class:`QueryEnergy`, :class:`SetJobMetadata`, and for dynamic jobs
  :class:`RegisterProfile`, :class:`RegisterJob`, :class:`NotifyRegistrationFinished`; the translators turn
  each into one Batsim event.

Host sets are :class:`procset.ProcSet` (string form ``"0-3 7 9-10"``, as in the protocol). A ProcSet
is mutable: policy code never mutates a set it did not create (it uses ``|`` and ``-``, which copy).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

from procset import ProcSet
from sortedcontainers import SortedKeyList

from wattsched.base.hostsets import size
from wattsched.energy_models.dvfs import CPU_BOUND, BetaModel
from wattsched.energy_models.power import PlatformPower

INF = math.inf

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class JobState(enum.Enum):
    """Final state of a job, as Batsim reports it in JOB_COMPLETED (Batsim behaviours 13-18)."""

    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_FAILED = "COMPLETED_FAILED"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def parse(cls, name: str) -> "JobState":
        """The state named ``name``, or :attr:`UNKNOWN` for a name Batsim 4 does not define."""
        try:
            return cls(name)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True)
class QueuedJob:
    """A submitted job waiting to start.

    Attributes:
        id: Batsim job id, ``"w0!12"``.
        res: number of hosts requested.
        walltime_s: requested time in seconds at the top frequency; ``None`` when the workload gives none
            (never killed, and treated as infinitely long by backfilling).
        subtime_s: submission time in seconds.
        profile: profile name.
        user: submitting user when the workload says (``"user"`` field), else ``None``.
        runtime: how the job's run time grows at lower frequencies (β model; β = 1 unless the workload
            gives a ``"beta"`` field).
        extra: every other field of the workload entry (read-only), for policies that need more.
        partition: set on a **job-partition entry** (EAMC paper §4.2): a copy of the job that a queue order
            with ``entries`` hands to backfilling, restricted to this partition (same ``id``; a job may have
            several entries, :mod:`wattsched.schedulers.backfill`). ``None`` for the job itself.
    """

    id: str
    res: int
    walltime_s: float | None
    subtime_s: float
    profile: str = ""
    user: str | None = None
    runtime: BetaModel = CPU_BOUND
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)
    partition: str | None = None


@dataclass(frozen=True)
class Assignment:
    """Where and how a job would run: chosen by the placement and the frequency choice together
    (:meth:`~wattsched.schedulers.core.PolicyScheduler.place`), before backfilling and admission decide.

    Attributes:
        hosts: the hosts.
        pstate: the computation pstate of every host, or ``None`` to leave the hosts at theirs.
        walltime_s: the job's walltime at that pstate (its runtime model applied to the workload's
            walltime), ``None`` without walltime: an upper bound of its run time.
        partition: the partition of the hosts when the platform has several, else ``None``.
        profile: the profile the job runs with on these hosts when the placement computes one (e.g. from a
            time model of the partition), else ``None``: the workload's. Not composed.
        metadata: a text the core attaches to the job when it starts (SET_JOB_METADATA: the ``metadata``
            column of ``_jobs.csv``), e.g. the model's application, frequency and power; ``None``: none.

    When the walltime or the profile differ from the job's, the core re-registers the job (dynamic jobs,
    :meth:`~wattsched.schedulers.core.PolicyScheduler.place`): Batsim kills a job at its own walltime.
    """

    hosts: ProcSet
    pstate: int | None = None
    walltime_s: float | None = None
    partition: str | None = None
    profile: Mapping[str, Any] | None = field(default=None, compare=False)
    metadata: str | None = field(default=None, compare=False)

    def end_s(self, start_s: float) -> float:
        """When the job ends at the latest if started at ``start_s``: start + walltime, or ``inf``."""
        return INF if self.walltime_s is None else start_s + self.walltime_s


@dataclass(frozen=True)
class RunningJob:
    """A started job: its hosts, its expected end (start + walltime at its pstate, ``inf`` without
    walltime), its pstate and the job itself (``None`` for the pseudo jobs a power manager shows to
    backfilling: hosts off or booting)."""

    id: str
    alloc: ProcSet
    start_s: float
    expected_end_s: float
    pstate: int | None = None
    job: QueuedJob | None = field(default=None, compare=False, repr=False)

    @property
    def user(self) -> str | None:
        return self.job.user if self.job is not None else None

    @cached_property
    def nb_hosts(self) -> int:
        """The number of hosts of ``alloc``, counted once (a budget reads it at every pass that changed the running
        jobs: hunt 47 found that recount at the top of powercap's profile with many small jobs)."""
        return size(self.alloc)


#: a job's id (a queued or running job): ``map(JOB_ID, jobs)`` makes no Python call a job
JOB_ID = attrgetter("id")


def end_key(job: RunningJob) -> tuple[float, float, str]:
    return (job.expected_end_s, job.start_s, job.id)


def merged_by_end(running: Iterable[RunningJob], pending: Sequence[RunningJob]) -> Iterator[RunningJob]:
    """``heapq.merge(running, pending, key=end_key)`` (both sorted by :func:`end_key`; on equal keys the running job
    first), lazily, for a short non-empty ``pending``: one comparison of expected ends per running job, the whole key
    on a tie only (issue 15: ``heapq.merge``'s heap of keys was a fifth of EASY's reservation with a shutdown)."""
    it = iter(running)
    k, n = 0, len(pending)
    p = pending[0]
    p_end = p.expected_end_s
    for job in it:
        end = job.expected_end_s
        while end > p_end or (end == p_end and end_key(p) < end_key(job)):
            yield p
            k += 1
            if k == n:
                yield job
                yield from it
                return
            p = pending[k]
            p_end = p.expected_end_s
        yield job
    yield from pending[k:]


@dataclass
class ClusterView:
    """What the policy pieces see of the machine; kept up to date by the core.

    Attributes:
        now_s: current simulated time.
        nb_hosts: number of computation hosts; their ids are ``0 .. nb_hosts-1``.
        free: idle computation hosts that can run a job now (not running one, not off, not switching).
        running: started jobs by id.
        off: hosts asleep (switched off by a power manager).
        switching: hosts in a switch-off/switch-on transition.
        pstates: current pstate of every host, by host id (0 at start).
        power: the power model of every host, read from SIMULATION_BEGINS' resource properties.
        energy_j: last consumed energy reported by Batsim (ANSWER), ``None`` before the first one.
        no_more_jobs: Batsim said no more static job will be submitted (NOTIFY
            ``no_more_static_job_to_submit``); with an empty queue and nothing running, the work is done
            and periodic wake-ups must stop.
        host_properties: the platform ``properties`` of every compute host (SIMULATION_BEGINS), by host id;
            empty when Batsim sent none.
        dynamic_jobs: Batsim accepts dynamic job registration (``--enable-dynamic-jobs``).
        profiles: the profiles of every workload, by workload and name (SIMULATION_BEGINS).
        running_by_end: ``running`` sorted by expected end (then start order), kept up to date by
            :meth:`add_running` / :meth:`remove_running` so that EASY never re-sorts it.
        running_version: bumped by :meth:`add_running` / :meth:`remove_running`: lets pieces cache what
            they derive from ``running`` between passes.
        nb_running_hosts: how many hosts the running jobs hold (:attr:`RunningJob.nb_hosts` summed), counted at
            the first read and kept up to date by :meth:`add_running` / :meth:`remove_running`.
        hosts_version: bumped by the core when Batsim changes a host's state as the view did not have it (a
            switch ended, a pstate other than the one the core set when it started a job there): lets pieces
            keep what they derived from the hosts across the acknowledgements of the core's own DVFS requests.
        pending_by_end: only in the view backfilling sees (``PolicyScheduler.backfill_view``): hosts off,
            switching or booked for a job as pseudo running jobs, sorted by :func:`end_key`;
            :meth:`by_end` merges them with ``running_by_end``.
        nb_waiting: jobs in the core's wait queue, kept up to date by the core as jobs arrive and as a pass
            starts them, from the moment the backfilling rule chooses them (``PolicyScheduler.starting``), so that
            the jobs placed after them in the pass do not count them; a job being placed is still counted (UPAS's
            WQ_size is this minus one).
    """

    now_s: float
    nb_hosts: int
    free: ProcSet
    running: dict[str, RunningJob] = field(default_factory=dict)
    off: ProcSet = field(default_factory=ProcSet)
    switching: ProcSet = field(default_factory=ProcSet)
    pstates: list[int] = field(default_factory=list)
    power: PlatformPower | None = None
    energy_j: float | None = None
    no_more_jobs: bool = False
    host_properties: list[Mapping[str, Any]] = field(default_factory=list)
    dynamic_jobs: bool = False
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    running_by_end: SortedKeyList = field(default_factory=lambda: SortedKeyList(key=end_key))
    running_version: int = field(default=0, compare=False, repr=False)
    hosts_version: int = field(default=0, compare=False, repr=False)
    nb_waiting: int = 0
    pending_by_end: tuple[RunningJob, ...] = ()
    #: :attr:`nb_running_hosts` (None: not counted yet)
    _nb_running_hosts: int | None = field(default=None, init=False, compare=False, repr=False)

    def by_end(self) -> Iterable[RunningJob]:
        """The running jobs, and the pseudo running jobs of a backfill view, by expected end
        (:func:`end_key`, a total order): what EASY's reservation walks. Merged lazily, as the
        reservation usually reads only the first few."""
        if self.pending_by_end:
            return merged_by_end(self.running_by_end, self.pending_by_end)
        return self.running_by_end

    @property
    def nb_running_hosts(self) -> int:
        if self._nb_running_hosts is None:
            self._nb_running_hosts = sum(job.nb_hosts for job in self.running.values())
        return self._nb_running_hosts

    def add_running(self, job: RunningJob) -> None:
        self.running[job.id] = job
        self.running_by_end.add(job)
        self.running_version += 1
        if self._nb_running_hosts is not None:
            self._nb_running_hosts += job.nb_hosts

    def remove_running(self, job_id: str) -> RunningJob | None:
        job = self.running.pop(job_id, None)
        if job is not None:
            self.running_by_end.remove(job)
            self.running_version += 1
            if self._nb_running_hosts is not None:
                self._nb_running_hosts -= job.nb_hosts
        return job

    @classmethod
    def idle_machine(cls, nb_hosts: int, now_s: float = 0.0) -> "ClusterView":
        """A machine of ``nb_hosts`` idle hosts at pstate 0, nothing running."""
        free = ProcSet((0, nb_hosts - 1)) if nb_hosts > 0 else ProcSet()
        return cls(now_s=now_s, nb_hosts=nb_hosts, free=free, pstates=[0] * nb_hosts)

    @property
    def all_hosts(self) -> ProcSet:
        """Every computation host."""
        return ProcSet((0, self.nb_hosts - 1)) if self.nb_hosts > 0 else ProcSet()


@dataclass(frozen=True)
class StartJob:
    """Run job ``job_id`` on hosts ``alloc`` now (EXECUTE_JOB)."""

    job_id: str
    alloc: ProcSet


@dataclass(frozen=True)
class RejectJob:
    """Reject job ``job_id`` (REJECT_JOB)."""

    job_id: str


@dataclass(frozen=True)
class SetPState:
    """Put ``hosts`` into ``pstate`` (SET_RESOURCE_STATE): DVFS, switch off or switch on."""

    hosts: ProcSet
    pstate: int


@dataclass(frozen=True)
class CallMeLater:
    """Ask Batsim for a REQUESTED_CALL at ``at_s`` (CALL_ME_LATER)."""

    at_s: float


@dataclass(frozen=True)
class QueryEnergy:
    """Ask Batsim for the energy consumed so far (QUERY consumed_energy); the answer comes as ANSWER."""


@dataclass(frozen=True)
class RegisterProfile:
    """Add profile ``name`` to workload ``workload`` (REGISTER_PROFILE; dynamic jobs, Batsim behaviour 44)."""

    workload: str
    name: str
    profile: Mapping[str, Any]


@dataclass(frozen=True)
class RegisterJob:
    """Submit job ``job_id`` (``"workload!name"``) described by ``job`` (REGISTER_JOB, behaviour 44)."""

    job_id: str
    job: Mapping[str, Any]


@dataclass(frozen=True)
class NotifyRegistrationFinished:
    """No more dynamic job will be registered (NOTIFY registration_finished, behaviour 44)."""


@dataclass(frozen=True)
class SetJobMetadata:
    """Attach ``metadata`` to job ``job_id`` (SET_JOB_METADATA: the ``metadata`` column of ``_jobs.csv``)."""

    job_id: str
    metadata: str


Decision = Union[StartJob, RejectJob, SetPState, CallMeLater, QueryEnergy, RegisterProfile, RegisterJob,
                 NotifyRegistrationFinished, SetJobMetadata]
