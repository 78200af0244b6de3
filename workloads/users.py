"""Users and energy factors of Batsim workloads: checking them, choosing users, making some greener.

A Batsim job may carry fields Batsim does not read; Batsim forwards them to the scheduler in
JOB_SUBMITTED. Two of them matter to the fair-share orders (``schedulers/fairshare.py``):

* ``user`` — the job's owner: a string, or a number (``7`` is the account ``"7"``); the SWF converter
  (:mod:`workloads.swf`) writes the trace's user id, the synthetic generator a Zipf-distributed user.
* ``beta`` — optional, the job's frequency-sensitive fraction of its run time, in [0, 1] (UPAS paper eq. 4,
  :mod:`wattsched.energy_models.dvfs`; ``wattsched beta`` writes it): every preset reads it from JOB_SUBMITTED.
* ``energy_factor`` — optional, a number > 0 multiplying the energy the scheduler accounts to the job
  (:mod:`wattsched.energy_models.accounting`): 0.7 for a user 30 % more energy-efficient than the rest,
  1.3 for one 30 % less (EFS paper §IV). It changes nothing in the simulation itself (Batsim does not read
  it): it is the paper's way of injecting energies.

:func:`check_job_fields` refuses anything else before a run, naming the file, the job and the field on
one line (``wattsched run`` calls it). :func:`most_active_users` and :func:`with_energy_factors` are the
two steps of the paper's table I (§IV-A): pick the 20 users who submit the most jobs, make one of them
greener or more gluttonous.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Iterable, Mapping

from wattsched.base.errors import InputError, quoted_cut
from wattsched.energy_models.accounting import ENERGY_FACTOR_FIELD, USER_FIELD, parse_energy_factor, parse_user

__all__ = ["BETA_FIELD", "check_job_fields", "most_active_users", "with_energy_factors", "job_user"]

#: The job field of its β (UPAS paper eq. 4), read by every preset (``schedulers/protocol.py``).
BETA_FIELD = "beta"


def check_job_fields(entries: Iterable[Mapping[str, Any]], source: object) -> None:
    """Check the ``user``, ``energy_factor`` and ``beta`` fields of every job entry of a workload.

    Args:
        entries: the workload's job objects (as in its ``jobs`` list).
        source: the workload file, for the message.

    Raises:
        InputError: ``job '<id>'.user`` is not a string or a number (``null`` included), or
            ``job '<id>'.energy_factor`` is not a number > 0, or ``job '<id>'.beta`` is not a number in [0, 1]
            (it was refused only when the scheduler read the job: "JOB_SUBMITTED w0!1: field 'job' is not a
            valid job object (could not convert string to float: 'x')", naming neither the file nor the field,
            and ``null`` was read as no beta).
    """
    for index, entry in enumerate(entries):
        where = f"job '{entry.get('id', index)}'"
        if USER_FIELD in entry:
            value = entry[USER_FIELD]
            if value is None:
                raise InputError(source, f"{where}.{USER_FIELD}", "must be a string or a number, got null")
            try:
                parse_user(value)
            except ValueError as exc:
                raise InputError(source, f"{where}.{USER_FIELD}", str(exc)) from None
        if ENERGY_FACTOR_FIELD in entry:
            if entry[ENERGY_FACTOR_FIELD] is None:
                raise InputError(source, f"{where}.{ENERGY_FACTOR_FIELD}", "must be a number > 0, got null")
            try:
                parse_energy_factor(entry[ENERGY_FACTOR_FIELD])
            except ValueError as exc:
                raise InputError(source, f"{where}.{ENERGY_FACTOR_FIELD}", str(exc)) from None
        if BETA_FIELD in entry:
            beta = entry[BETA_FIELD]
            if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta <= 1.0:
                shown = "null" if beta is None else quoted_cut(beta) if isinstance(beta, str) else repr(beta)[:60]
                raise InputError(source, f"{where}.{BETA_FIELD}", "must be a number in [0, 1] (the frequency-sensitive "
                                 f"fraction of the job's run time, UPAS paper eq. 4), got {shown}")


def job_user(entry: Mapping[str, Any]) -> str | None:
    """The account of a job entry, as the scheduler sees it (``7`` → ``"7"``; absent → None)."""
    return parse_user(entry.get(USER_FIELD))


def most_active_users(workload: Mapping[str, Any], n: int) -> list[str]:
    """The ``n`` users who submit the most jobs (EFS paper §IV-A: "the 20 users that submit the biggest
    number of jobs"), most active first; ties by first submission. Jobs without user are not a user."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for index, entry in enumerate(workload["jobs"]):
        user = job_user(entry)
        if user is None:
            continue
        counts[user] += 1
        first.setdefault(user, index)
    return sorted(counts, key=lambda u: (-counts[u], first[u]))[:n]


def with_energy_factors(workload: Mapping[str, Any], factors: Mapping[str, float]) -> dict[str, Any]:
    """A copy of ``workload`` whose jobs owned by a user of ``factors`` carry that ``energy_factor`` (the
    others are unchanged); ``meta.energy_factors`` records it."""
    out = dict(workload)
    jobs = []
    for entry in workload["jobs"]:
        user = job_user(entry)
        if user is not None and user in factors:
            entry = {**entry, ENERGY_FACTOR_FIELD: factors[user]}
        jobs.append(entry)
    out["jobs"] = jobs
    meta = copy.deepcopy(dict(workload.get("meta") or {}))
    meta["energy_factors"] = dict(factors)
    out["meta"] = meta
    return out
