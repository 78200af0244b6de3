"""FairShare, EnergyFairShare and FS+EFS: queue orders by the users' decayed past usage (slot ``order``).

EnergyFairShare paper (Georgiou, Glesser, Rzadca, Trystram, "A Scheduler-Level Incentive Mechanism for
Energy Efficiency in HPC", CCGrid 2015), §III-B to §III-D and §IV-A; SLURM's classic fair share
(REFERENCE §2). For a user ``u``:

* eq. 1, normalized share: ``S_u = s_u / Σ_v s_v`` over the target shares ``s`` (option ``shares``,
  ``default_share`` for users it does not name: equal shares by default, as the paper's simulations).
  The sum runs over the users named in ``shares`` and every user who has submitted a job so far (a
  simulation learns its users as they submit; SLURM knows its associations beforehand — the same as long
  as every user appears early, and FS and EFS order the same either way since a common factor of all
  ``S_u`` changes no comparison).
* eq. 2, raw usage ``R_u``: the CPU-seconds (FS: hosts × run time, our hosts being single processors) or
  the joules (EFS: :func:`~wattsched.energy_models.accounting.job_energy_j`, the power of the job's
  pstate on its hosts times its run time times its energy factor) of her jobs, with exact half-life decay
  ``2^(−Δt/hl)`` (:class:`~wattsched.energy_models.accounting.DecayedUsage`; SLURM's first-order
  ``1 − 0.693/hl`` is not copied), half-life ``half_life_s`` = 7 days (SLURM's default, the paper's D).
* eq. 3, normalized usage: ``U_u = R_u / (capacity decayed the same way)``, capacity = the machine's
  hosts per second (FS) or its all-computing power in watts (EFS: every host at its top pstate),
  from the start of the simulation. The worked example of §III-B (50 CPUs, 100 h, five 30-hour 10-CPU
  jobs, no decay → U = 0.3) is a unit test. ``normalization: "total"`` divides by the sum of every user's
  decayed usage instead, which is what SLURM's ``U = U_user / U_root`` does.
* eq. 4, fair-share factor: ``F_u = 2^(−U_u/S_u/d)``, ``d`` = ``damping`` (SLURM's
  FairShareDampeningFactor, default 1): F = 1 without usage, 0.5 when the usage equals the share.

**Orders.** ``fairshare`` and ``efs`` sort waiting jobs by decreasing ``F_u`` of their owner, computed as
increasing decayed usage per target share ``R_u / s_u``: F is decreasing in ``U_u/S_u/d``, and eq. 3's
denominator, the sum of the shares and ``d`` are the same for every user, so the order is eq. 4's without
reading the capacity each pass and without F's underflow to 0 beyond U/S/d ≈ 1074 (where F would tie);
``fs-efs`` by decreasing ``F^FS_u / max F^FS + F^EFS_u / max F^EFS``, each factor "normalized to [its]
maximum current value" (§IV-A): the maximum over the users who have jobs waiting, the users being
prioritized. Ties keep arrival order ("all algorithms use job's arrival order to break ties"), so with a
single user every order is FIFO. A job without ``user`` field belongs to one anonymous account.

**When usage is charged** (option ``charge``). ``"end"`` (default): a job's whole usage is charged when it
ends, as the paper describes SLURM's accounting ("once every job completes, a RJMS stores in an
accounting database the job's runtime multiplied by the amount of CPUs", §III-B) — a running job costs its
owner nothing until it ends. ``"running"``: usage accrues continuously while the job runs (what SLURM's
priority plugin does every ``PriorityCalcPeriod``); at the job's end both give the same undecayed total.
Either way the charge uses the job's real run time, known at its end, never its walltime.

Where we read the paper differently: the paper's simulator (Pyss) and its SLURM plugin add the factors to
other priority factors (age, size); here the fair-share factor alone orders the queue by default, as in the
paper's simulations, with EASY backfilling behind it.

**Age factor** (option ``age_weight``, 0 by default: off). A priority on usage alone can starve a heavy user's
jobs for as long as the others keep submitting (on SDSC-Blue's whole log the longest fair-share wait is 187
days). SLURM's multifactor plugin adds an age factor for that (REFERENCE §2: ``W_age·age + W_fs·fairshare``,
``age = min(1, (now − eligible time)/PriorityMaxAge)``, PriorityMaxAge 7 days). With ``age_weight = w > 0`` a
job's priority is ``F + w · min(1, (now − submission)/max_age_s)``, larger first, where ``F`` is the order's
fair-share factor: eq. 4's ``F_u`` for ``fairshare`` and ``efs``, the sum of the two normalized factors for
``fs-efs`` (up to 2). ``w`` is SLURM's ``PriorityWeightAge / PriorityWeightFairshare``. Differences from SLURM:
the age counts from the submission (SLURM's ``ACCRUE_ALWAYS``; a simulated job has no other eligibility time),
and the priority stays a real number (SLURM truncates the weighted sum to an integer, so ties differ).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from operator import attrgetter, is_
from typing import Any, ClassVar, Iterable, Mapping

from wattsched.base.errors import OptionError, ProtocolError
from wattsched.energy_models.accounting import (
    DEFAULT_HALF_LIFE_S,
    ENERGY_FACTOR_FIELD,
    DecayedUsage,
    job_power_w,
    parse_energy_factor,
)
from wattsched.schedulers.options import Option, _got, is_number
from wattsched.schedulers.order import QueueOrder
from wattsched.schedulers.pieces import register
from wattsched.schedulers.state import ClusterView, JobState, QueuedJob, RunningJob

__all__ = ["FairShareOrder", "FairShare", "EnergyFairShare", "FairSharePlusEnergy", "CPU", "ENERGY"]

#: A user's account: the job's ``user`` field (None: jobs without one share an account).
User = str | None

#: The two usage measures: CPU-seconds (FairShare) and joules (EnergyFairShare).
CPU = "cpu"
ENERGY = "energy"

SHARES = Option("shares", dict, None,
                help='target share s_u of each user, a JSON object {"user": share > 0} (eq. 1, at most 1e100); users '
                     "it does not name get default_share")
#: the largest share (``shares``' values and ``default_share``): the shares of every user are summed (eq. 1), and
#: a sum beyond a double made every factor 0 or NaN (a silently wrong order)
MAX_SHARE = 1e100
DEFAULT_SHARE = Option("default_share", float, 1.0, help="share of every user not named in shares (> 0, at most "
                                                         "1e100; equal shares by default)")
HALF_LIFE = Option("half_life_s", float, DEFAULT_HALF_LIFE_S,
                   help="half-life of past usage in seconds (> 0; SLURM's PriorityDecayHalfLife, 7 days)")
DAMPING = Option("damping", float, 1.0, help="d in F = 2^(-U/S/d) (> 0; SLURM's FairShareDampeningFactor)")
CHARGE = Option("charge", str, "end", choices=("end", "running"),
                help="charge a job's usage when it ends (the paper's SLURM accounting) or while it runs")
NORMALIZATION = Option("normalization", str, "capacity", choices=("capacity", "total"),
                       help="divide usage by the machine's decayed capacity (eq. 3) or by every user's "
                            "decayed usage (SLURM's U_user/U_root)")
AGE_WEIGHT = Option("age_weight", float, 0.0,
                    help="weight of SLURM's age factor beside the fair-share factor's 1 (PriorityWeightAge / "
                         "PriorityWeightFairshare, >= 0; 0: usage alone, as the paper)")
MAX_AGE = Option("max_age_s", float, 7 * 86400.0,
                 help="wait in seconds at which the age factor reaches 1 (SLURM's PriorityMaxAge, 7 days; > 0)")
#: the largest ``age_weight`` (beyond it the fair-share factor, at most 2, would not count)
MAX_AGE_WEIGHT = 1e6


_OWNER = attrgetter("user")


def _ranks(keys: Mapping[User, float]) -> dict[User, int] | None:
    """Each user's rank among the keys (the number of keys below its own: equal keys share a rank), so that two
    mappings of equal ranks order every pair of users alike; None when a key is NaN (no such order)."""
    values = sorted(keys.values())
    if any(v != v for v in values):
        return None
    return {user: bisect_left(values, key) for user, key in keys.items()}


def _positive(owner: str, name: str, value: float) -> float:
    if not value > 0:
        raise OptionError(f"option '{name}' of {owner} must be > 0, got {_got(value)}")
    return float(value)


class FairShareOrder(QueueOrder):
    """Common base of the fair-share orders: per-user decayed usage of :attr:`measures`, shares, factors.

    Args: the options of the module docstring (validated: shares, half-life and damping must be > 0).

    Raises:
        OptionError: a share, the default share, the half-life or the damping is not > 0, or ``shares``
            is not an object of numbers keyed by user names (an empty or blank key names no user).
    """

    #: usage measures this order charges (``cpu``, ``energy``)
    measures: ClassVar[tuple[str, ...]] = (CPU,)
    options = (SHARES, DEFAULT_SHARE, HALF_LIFE, DAMPING, CHARGE, NORMALIZATION, AGE_WEIGHT, MAX_AGE)

    def __init__(self, shares: Mapping[str, Any] | None = None, default_share: float = 1.0,
                 half_life_s: float = DEFAULT_HALF_LIFE_S, damping: float = 1.0, charge: str = "end",
                 normalization: str = "capacity", age_weight: float = 0.0, max_age_s: float = 7 * 86400.0) -> None:
        owner = f"order '{self.name}'"
        self.default_share = _positive(owner, "default_share", default_share)
        if self.default_share > MAX_SHARE:
            raise OptionError(f"option 'default_share' of {owner} must be at most {MAX_SHARE:g} (the shares are "
                              f"summed), got {_got(default_share)}")
        self.half_life_s = _positive(owner, "half_life_s", half_life_s)
        self.damping = _positive(owner, "damping", damping)
        if not 0 <= age_weight <= MAX_AGE_WEIGHT:
            raise OptionError(f"option 'age_weight' of {owner} must be between 0 and {MAX_AGE_WEIGHT:g}, "
                              f"got {_got(age_weight)}")
        self.age_weight = float(age_weight)
        self.max_age_s = _positive(owner, "max_age_s", max_age_s)
        if self.max_age_s == math.inf:
            raise OptionError(f"option 'max_age_s' of {owner} must be finite, got {_got(max_age_s)}")
        if charge not in ("end", "running"):
            raise OptionError(f"option 'charge' of {owner} must be one of end|running, got {_got(charge)}")
        if normalization not in ("capacity", "total"):
            raise OptionError(f"option 'normalization' of {owner} must be one of capacity|total, "
                              f"got {_got(normalization)}")
        self.charge_mode = charge
        self.normalization = normalization
        self.shares: dict[str, float] = {}
        for user, share in (shares or {}).items():
            if not str(user).strip():  # names no user: a job without a 'user' field gets default_share
                empty = "a blank" if user else "an empty"
                raise OptionError(f"option 'shares' of {owner}: the key {_got(user)} is {empty} user name; name a "
                                  "user (jobs without a 'user' field get default_share)")
            if not is_number(share) or not 0 < share < math.inf:
                raise OptionError(f"option 'shares' of {owner}: the share of user '{user}' must be a number "
                                  f"> 0, got {_got(share)}")
            if share > MAX_SHARE:
                raise OptionError(f"option 'shares' of {owner}: the share of user '{user}' must be at most "
                                  f"{MAX_SHARE:g} (the shares are summed), got {_got(share)}")
            self.shares[str(user)] = float(share)
        self._reset(0.0)

    def _reset(self, start_s: float) -> None:
        self.usage: dict[str, DecayedUsage] = {m: DecayedUsage(self.half_life_s, start_s) for m in self.measures}
        self.capacity: dict[str, DecayedUsage] = {m: DecayedUsage(self.half_life_s, start_s) for m in self.measures}
        self._share_total = sum(self.shares.values())
        self._users: set[User] = set(self.shares)
        # job id -> (user, rate of each measure) for running jobs
        self._running: dict[str, tuple[User, tuple[float, ...]]] = {}
        #: the waiting jobs a pass sorted (arrival order), their users' ranks, and the order given (:meth:`sort`)
        self._last_sort: tuple[list[QueuedJob], dict[User, int], list[QueuedJob]] | None = None

    # ------------------------------------------------------------------------ events
    def on_platform(self, view: ClusterView) -> None:
        self._reset(view.now_s)
        for m in self.measures:
            self.capacity[m].start_rate("machine", self._capacity_rate(m, view), view.now_s)

    def on_submitted(self, job: QueuedJob, view: ClusterView) -> None:
        if ENERGY in self.measures:
            self._energy_factor(job)  # a bad factor is refused at submission
        if job.user not in self._users:
            self._users.add(job.user)
            self._share_total += self.default_share

    def on_started(self, job: RunningJob, view: ClusterView) -> None:
        rates = tuple(self._rate(m, job, view) for m in self.measures)
        self._running[job.id] = (job.user, rates)
        if self.charge_mode == "running":
            for m, rate in zip(self.measures, rates):
                self.usage[m].start_rate(job.user, rate, view.now_s)

    def on_completed(self, job: RunningJob, state: JobState, view: ClusterView) -> None:
        entry = self._running.pop(job.id, None)
        if entry is None:
            return
        user, rates = entry
        now = view.now_s
        for m, rate in zip(self.measures, rates):
            if self.charge_mode == "running":
                self.usage[m].stop_rate(user, rate, now)
            else:
                self.usage[m].charge(user, rate * (now - job.start_s), now)

    # ------------------------------------------------------------------------ measures
    def _capacity_rate(self, measure: str, view: ClusterView) -> float:
        """Eq. 3's available resources per second: hosts (CPU-seconds) or all-computing watts (joules)."""
        if measure == CPU:
            return float(view.nb_hosts)
        power = view.power
        assert power is not None
        return sum(model.full_w[model.top_pstate] * n for model, n in power.model_counts(view.all_hosts))

    def _rate(self, measure: str, job: RunningJob, view: ClusterView) -> float:
        """What ``job`` costs its owner per second of run: hosts, or watts × its energy factor."""
        if measure == CPU:
            return float(len(job.alloc))
        assert view.power is not None and job.job is not None
        pstate = job.pstate if job.pstate is not None else view.pstates
        return job_power_w(view.power, job.alloc, pstate) * self._energy_factor(job.job)

    @staticmethod
    def _energy_factor(job: QueuedJob) -> float:
        try:
            return parse_energy_factor(job.extra.get(ENERGY_FACTOR_FIELD))
        except ValueError as exc:
            raise ProtocolError(f"job {job.id}: field '{ENERGY_FACTOR_FIELD}' {exc}") from None

    # ------------------------------------------------------------------------ eq. 1-4
    def normalized_share(self, user: User) -> float:
        """Eq. 1: ``S_u = s_u / Σ_v s_v`` (named and seen users)."""
        share = self.shares.get(user, self.default_share) if user is not None else self.default_share
        total = self._share_total if user in self._users else self._share_total + self.default_share
        return share / total

    def normalized_usage(self, user: User, measure: str, now_s: float) -> float:
        """Eq. 3: the user's decayed usage over the decayed capacity (or every user's usage)."""
        raw = self.usage[measure].usage(user, now_s)
        norm = self._norm(measure, now_s)
        return raw / norm if norm > 0 else 0.0

    def _norm(self, measure: str, now_s: float) -> float:
        if self.normalization == "total":
            return self.usage[measure].total(now_s)
        return self.capacity[measure].usage("machine", now_s)

    def exponent(self, user: User, measure: str, now_s: float) -> float:
        """``U_u / S_u / d``: eq. 4's exponent (F = 2^(−exponent))."""
        return self.normalized_usage(user, measure, now_s) / self.normalized_share(user) / self.damping

    def factor(self, user: User, measure: str, now_s: float) -> float:
        """Eq. 4: ``F_u = 2^(−U_u/S_u/d)``."""
        return 2.0 ** -self.exponent(user, measure, now_s)

    # ------------------------------------------------------------------------ the order
    def exponents(self, users: list[User], measure: str, now_s: float) -> list[float]:
        """:meth:`exponent` of each of ``users`` (the normalization computed once)."""
        norm = self._norm(measure, now_s)
        if not norm > 0:
            return [0.0] * len(users)
        total = self._share_total + sum(self.default_share for u in set(users) if u not in self._users)
        scale = total / (norm * self.damping)
        shares, default = self.shares, self.default_share
        raw = self.usage[measure].usages(users, now_s)
        # r == 0: no usage, exponent 0 (0 × an infinite scale, a tiny damping's, would be NaN)
        return [r * scale / (shares.get(u, default) if u is not None else default) if r else 0.0
                for u, r in zip(users, raw)]

    def user_keys(self, users: Iterable[User], now_s: float) -> dict[User, float]:
        """Sort key of each user's jobs (smaller first): the decayed usage per share of the order's single
        measure, which orders as ``U/S/d`` does (eq. 3's normalization, the sum of the shares and d are
        common to every user: dropped, so that a pass reads each user's usage once)."""
        users = list(users)
        shares, default = self.shares, self.default_share
        raw = self.usage[self.measures[0]].usages(users, now_s)
        return {u: r / (shares.get(u, default) if u is not None else default) for u, r in zip(users, raw)}

    def user_factors(self, users: Iterable[User], now_s: float) -> dict[User, float]:
        """The fair-share factor of each user that the age factor is added to: eq. 4's ``F_u``."""
        users = list(users)
        return {u: 2.0 ** -x for u, x in zip(users, self.exponents(users, self.measures[0], now_s))}

    same_jobs = True  # (its sort reorders the jobs it is given)

    def sort(self, jobs: Iterable[QueuedJob], view: ClusterView) -> list[QueuedJob]:
        queue = list(jobs)
        owners = list(map(_OWNER, queue))  # map/sorted with built-in callables: no Python call per job
        users = set(owners)
        if len(users) <= 1:
            return queue  # one owner: arrival order (the age factor never decreases with it)
        now = view.now_s
        ranks = None
        if self.age_weight > 0:  # SLURM's F + w·age, larger first
            factors = self.user_factors(users, now)
            w, max_age = self.age_weight, self.max_age_s
            job_keys = [-(factors[u] + w * min(1.0, (now - job.subtime_s) / max_age)) for u, job in zip(owners, queue)]
        else:
            keys = self.user_keys(users, now)
            # the order of a pass is that of the previous one when the same jobs wait (the same objects, in arrival
            # order) and every two users compare as they did (their keys' ranks, ties included): the usages decay by
            # one factor and change only as jobs are charged, and under an energy budget most passes start nothing
            ranks = _ranks(keys)
            last = self._last_sort
            if (ranks is not None and last is not None and last[1] == ranks and len(last[0]) == len(queue)
                    and all(map(is_, last[0], queue))):
                return list(last[2])
            job_keys = list(map(keys.__getitem__, owners))
        order = sorted(range(len(queue)), key=job_keys.__getitem__)  # stable: ties keep arrival order
        result = list(map(queue.__getitem__, order))
        self._last_sort = None if ranks is None else (queue, ranks, result)
        return result


@register
class FairShare(FairShareOrder):
    """FairShare on CPU-seconds (EFS paper §III-B, eq. 1-4; SLURM's classic fair share, REFERENCE §2)."""

    name = "fairshare"
    description = "FairShare: jobs of the users with the least decayed CPU-seconds per share first"
    reference = "EFS paper §III-B, eq. 1-4 (SLURM classic fair share)"
    measures = (CPU,)


@register
class EnergyFairShare(FairShareOrder):
    """EnergyFairShare: FairShare on joules (EFS paper §III-C): each job's energy as the scheduler knows it
    (power of its pstate on its hosts × run time × its ``energy_factor``)."""

    name = "efs"
    description = "EnergyFairShare: jobs of the users with the least decayed joules per share first"
    reference = "EFS paper §III-C, eq. 1-4 on joules"
    measures = (ENERGY,)


@register
class FairSharePlusEnergy(FairShareOrder):
    """FS+EFS (EFS paper §IV-A): ``F^FS / max F^FS + F^EFS / max F^EFS``, maxima over the users with waiting
    jobs, larger first."""

    name = "fs-efs"
    description = "FS+EFS: FairShare and EnergyFairShare factors, each divided by its current maximum, summed"
    reference = "EFS paper §IV-A (FS+EFS)"
    measures = (CPU, ENERGY)

    def user_keys(self, users: Iterable[User], now_s: float) -> dict[User, float]:
        return {u: -value for u, value in self.user_factors(users, now_s).items()}

    def user_factors(self, users: Iterable[User], now_s: float) -> dict[User, float]:
        """``F^FS / max F^FS + F^EFS / max F^EFS`` of each user (up to 2)."""
        users = list(users)
        total = [0.0] * len(users)
        for m in self.measures:
            x = self.exponents(users, m, now_s)
            lowest = min(x)  # the user of the largest factor: F / max F = 2^-(x - min x)
            total = [t + (1.0 if e == lowest else 2.0 ** (lowest - e)) for t, e in zip(total, x)]  # inf - inf
        return dict(zip(users, total))
