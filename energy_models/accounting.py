"""Per-job energy as a scheduler can know it, and per-user usage with exponential decay (EFS paper §III).

The EnergyFairShare paper (Georgiou, Glesser, Rzadca, Trystram, CCGrid 2015) charges each user the energy
her jobs consumed, as SLURM's energy accounting measures it, and decays past usage with a half-life.
A scheduler inside a simulation measures nothing; what it can know is this module:

**Per-job energy** (:func:`job_power_w`, :func:`job_energy_j`). A job on ``hosts`` at ``pstate`` draws
``Σ_h full_w[pstate of h]`` while it runs (the per-host model of :mod:`.power`, docs/architecture.md §4:
a ``parallel_homogeneous`` job computes at full load on every host, Batsim behaviours 20 and 25), so its
energy is that power times its run time, times the job's **energy factor** when the workload gives one
(field :data:`ENERGY_FACTOR_FIELD`, default 1). The factor is how the paper makes a user greener or more
gluttonous without changing the schedule: "we set the energy consumption to be proportional to the job's
CPU-seconds" (§IV-A) and "we inject it directly based on the trace" (§IV-B) — 0.7 is a user 30 % more
energy-efficient than the rest, 1.3 one 30 % less. With factor 1 the estimate equals Batsim's own
``consumed_energy`` of the job in ``_jobs.csv`` for computing jobs (checked by
``tests/test_accounting.py`` on whole simulations). It differs for jobs that do not compute on every host
for their whole run (``delay`` profiles, the delay part of a composed β profile: Batsim bills them idle
power) — the scheduler does not see profiles.

**Decayed usage** (:class:`DecayedUsage`). The paper's eq. 2, ``R_u = R_u(δ0) + D·R_u(δ1) + D²·R_u(δ2) + …``,
is SLURM's half-life decay. We use the exact continuous form: a charge of ``a`` at time ``t0`` counts
``a · 2^(−(t − t0)/hl)`` at time ``t`` (hl = half-life, SLURM's ``PriorityDecayHalfLife``, 7 days by
default). SLURM itself multiplies by ``decay_factor = 1 − 0.693/hl_s`` per second, a first-order
approximation of ``2^(−1/hl_s)`` (REFERENCE §2); we do not copy the approximation. Usage can be charged
at once (the whole job when it ends: the paper's "once every job completes, a RJMS stores in an
accounting database the job's runtime multiplied by the amount of CPUs") or continuously at a rate while
a job runs (what SLURM does every ``PriorityCalcPeriod``): a rate ``r`` from ``t0`` to ``t`` contributes
``∫ r·2^(−(t − τ)/hl) dτ = r · hl/ln 2 · (1 − 2^(−(t − t0)/hl))``. Both are closed forms, so the usage of
an account is exact at any time, whatever the times at which it is read.

The normalizing denominator of eq. 3 (available resources decayed the same way) is a
:class:`DecayedUsage` too: one account charged at the machine's capacity rate from the start.

Units are in the names: ``_w`` watts, ``_s`` seconds, ``_j`` joules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Sequence

from procset import ProcSet

from wattsched.energy_models.power import PlatformPower

__all__ = [
    "DEFAULT_HALF_LIFE_S",
    "ENERGY_FACTOR_FIELD",
    "USER_FIELD",
    "DecayedUsage",
    "job_energy_j",
    "job_power_w",
    "parse_energy_factor",
    "parse_user",
]

#: SLURM's default ``PriorityDecayHalfLife`` (7-0), which the paper keeps (§IV-A: "the decay factor D
#: to one week, as it is the default value for SLURM").
DEFAULT_HALF_LIFE_S: float = 7 * 86400.0
#: The workload field of a job's owner (Batsim keeps unknown job fields and sends them to the scheduler).
USER_FIELD = "user"
#: The optional workload field multiplying a job's accounted energy (0.7 = 30 % greener, 1.3 = 30 % more
#: gluttonous; absent = 1).
ENERGY_FACTOR_FIELD = "energy_factor"

_LN2 = math.log(2.0)


# ------------------------------------------------------------------------------------ job fields
def parse_user(value: Any) -> str | None:
    """The account of a job's ``user`` field: a string, or a number written as Batsim forwards it
    (``7`` → ``"7"``); ``None`` when the field is absent (every such job shares one account).

    Raises:
        ValueError: anything else (a boolean, a list, an object, a non-finite number, an empty or blank string:
            no fair-share ``shares`` nor ESC ``user_groups`` entry could name that account), with a sentence
            saying what was expected. (A workload that writes ``"user": null`` is refused by
            :func:`wattsched.workloads.users.check_job_fields`, which sees the key.)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"must be a string or a number, got {_json_kind(value)}")
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"must name an account, got {'an empty' if not value else 'a blank'} string")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a string or a finite number, got {value!r}")
    return str(value)


def parse_energy_factor(value: Any) -> float:
    """A job's ``energy_factor`` field: a finite number > 0 (absent, ``None``: 1).

    Raises:
        ValueError: not a number, or not > 0, with a sentence saying so.
    """
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be a number > 0, got {_json_kind(value)}")
    factor = float(value)
    if not (0.0 < factor < math.inf):
        raise ValueError(f"must be a finite number > 0, got {value!r}")
    return factor


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


# ------------------------------------------------------------------------------------ job energy
def job_power_w(power: PlatformPower, hosts: ProcSet, pstate: int | Sequence[int]) -> float:
    """Power of a job computing on ``hosts``: ``Σ_h full_w[pstate of h]``.

    Args:
        power: the platform's per-host model.
        hosts: the job's hosts.
        pstate: the pstate of every host, or a sequence giving the pstate of each host id (the hosts'
            own pstates when the job was started without a pstate of its own).
    """
    if isinstance(pstate, int):
        return sum(n * model.full_w[pstate] for model, n in power.model_counts(hosts))
    return sum(power.host(h).full_w[pstate[h]] for h in hosts)


def job_energy_j(power: PlatformPower, hosts: ProcSet, pstate: int | Sequence[int], run_s: float,
                 factor: float = 1.0) -> float:
    """Energy the scheduler accounts to a job that computed ``run_s`` seconds on ``hosts`` at ``pstate``:
    :func:`job_power_w` × ``run_s`` × the job's energy ``factor`` (module docstring)."""
    return job_power_w(power, hosts, pstate) * run_s * factor


# -------------------------------------------------------------------------------- decayed usage
@dataclass
class _Account:
    value: float = 0.0  # decayed usage at `at_s`
    rate: float = 0.0  # charged per second from `at_s` on (running jobs)
    running: int = 0  # number of open rates (to reset `rate` exactly to 0)
    at_s: float = 0.0


class DecayedUsage:
    """Usage per account with exact exponential decay (module docstring).

    Args:
        half_life_s: the half-life, > 0; ``math.inf`` for no decay (usage is then a plain sum).
        start_s: the time accounts start at.

    Example (a charge halves after one half-life)::

        usage = DecayedUsage(half_life_s=3600.0)
        usage.charge("alice", 100.0, at_s=0.0)
        usage.usage("alice", 3600.0)      # 50.0
    """

    def __init__(self, half_life_s: float = DEFAULT_HALF_LIFE_S, start_s: float = 0.0) -> None:
        if not half_life_s > 0:
            raise ValueError(f"half_life_s must be > 0, got {half_life_s!r}")
        self.half_life_s = float(half_life_s)
        self.start_s = float(start_s)
        self._accounts: dict[Hashable, _Account] = {}

    def decay(self, elapsed_s: float) -> float:
        """``2^(−elapsed/hl)``: what a unit charged ``elapsed_s`` ago counts now."""
        if math.isinf(self.half_life_s):
            return 1.0
        return 2.0 ** (-elapsed_s / self.half_life_s)

    def accrued(self, rate: float, elapsed_s: float) -> float:
        """``rate · hl/ln 2 · (1 − 2^(−elapsed/hl))``: a rate charged for ``elapsed_s``, decayed, now."""
        if math.isinf(self.half_life_s):
            return rate * elapsed_s
        scale = self.half_life_s / _LN2
        return rate * scale * -math.expm1(-elapsed_s / scale)

    def _advance(self, account: Hashable, at_s: float) -> _Account:
        acc = self._accounts.get(account)
        if acc is None:
            acc = self._accounts[account] = _Account(at_s=max(at_s, self.start_s))
            return acc
        elapsed = at_s - acc.at_s
        if elapsed > 0:
            acc.value = acc.value * self.decay(elapsed) + (self.accrued(acc.rate, elapsed) if acc.rate else 0.0)
            acc.at_s = at_s
        return acc

    def charge(self, account: Hashable, amount: float, at_s: float) -> None:
        """Add ``amount`` to ``account`` at ``at_s`` (times never go back)."""
        self._advance(account, at_s).value += amount

    def start_rate(self, account: Hashable, rate: float, at_s: float) -> None:
        """Charge ``account`` ``rate`` per second from ``at_s`` on, until :meth:`stop_rate`."""
        acc = self._advance(account, at_s)
        acc.rate += rate
        acc.running += 1

    def stop_rate(self, account: Hashable, rate: float, at_s: float) -> None:
        """Stop a rate opened by :meth:`start_rate` (the usage it accrued stays and decays)."""
        acc = self._advance(account, at_s)
        acc.running -= 1
        acc.rate = acc.rate - rate if acc.running > 0 else 0.0

    def usage(self, account: Hashable, at_s: float) -> float:
        """The decayed usage of ``account`` at ``at_s`` (0 for an account never charged)."""
        acc = self._accounts.get(account)
        if acc is None:
            return 0.0
        elapsed = at_s - acc.at_s
        if elapsed <= 0:
            return acc.value
        return acc.value * self.decay(elapsed) + (self.accrued(acc.rate, elapsed) if acc.rate else 0.0)

    def usages(self, accounts: Iterable[Hashable], at_s: float) -> list[float]:
        """:meth:`usage` of each of ``accounts`` at ``at_s`` (one call for a whole queue's users)."""
        found = self._accounts.get
        hl = self.half_life_s
        out = []
        for account in accounts:
            acc = found(account)
            if acc is None:
                out.append(0.0)
                continue
            elapsed = at_s - acc.at_s
            if elapsed <= 0 or math.isinf(hl):
                out.append(acc.value + (acc.rate * elapsed if acc.rate and elapsed > 0 else 0.0))
                continue
            value = acc.value * 2.0 ** (-elapsed / hl)
            out.append(value + self.accrued(acc.rate, elapsed) if acc.rate else value)
        return out

    def total(self, at_s: float) -> float:
        """Σ of every account's usage at ``at_s``."""
        return sum(self.usage(account, at_s) for account in self._accounts)

    def accounts(self) -> list[Hashable]:
        """Every account charged so far."""
        return list(self._accounts)
