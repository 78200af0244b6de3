"""Per-node state intervals of a run, from Batsim's output files (ours or real Batsim's), and the on/off
statistics of the ESC paper's table 2.

Batsim's ``_machine_states.csv`` only counts hosts per state; which host was in which state when is
rebuilt here from the other files (behaviours 28-33 of ``tests/fixtures/batsim-reference/README.md``):

- ``_pstate_changes.csv``: a request on a host set is a row with -2 (switch-off requested: the hosts
  *switch off*) or -1 (a boot when the hosts are asleep: they *switch on*; a DVFS change when they are on),
  then a row with the reached pstate when it completes (asleep after a switch-off, on after a boot). Its
  times are printed with ``%g`` (6 significant digits: 7.94902e+06 for a time of 92 days), so each row's
  exact time is taken from the ``p`` row of ``_consumed_energy.csv`` Batsim writes for the same request
  or completion, in the same order (printed with 6 decimals), when that file is there and its ``p`` rows
  match the requests one for one (they do for Batsim 4.2.1 with ``--energy``); otherwise the ``%g`` times
  are used and a warning says so;
- ``_jobs.csv``: a job *runs* on ``allocated_resources`` from ``starting_time`` to ``finish_time`` (6
  decimals);
- a host on and not running a job is *idle*.

:func:`node_states` returns the five states of the ESC paper's node model (§2.1) per host as intervals
covering ``[0, end]`` (the last time any file mentions, with 6 decimals: ``_machine_states.csv``'s ``%g`` may be
rounded up), with the job of each running interval and the pstate changes. :func:`onoff_statistics` computes
table 2's measures from them; ``wattsched node-stats`` prints them and :mod:`wattsched.analysis.paraver` writes
them as a Paraver trace.

*Active* means "not in standby": idle, running or switching (the paper's "time that the nodes are powered
on", table 2); *inactive* is standby (asleep).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Mapping

import numpy as np
import pandas as pd
from procset import ProcSet

from wattsched.analysis.metrics import energy_at_j, jobs_that_ran, makespan_s
from wattsched.analysis.outputs import (BatsimOutputs, check_energy_job_rows, load_outputs, nb_hosts_of_run,
                                       parse_host_set)
from wattsched.base.errors import InputError

__all__ = [
    "STATES", "OFF", "RUNNING", "IDLE", "SWITCHING_ON", "SWITCHING_OFF",
    "NodeStates", "OnOffStatistics", "node_states", "onoff_statistics", "format_statistics", "format_duration",
    "run_nb_hosts", "parse_host_set",
]

logger = logging.getLogger(__name__)

#: The five node states (ESC paper §2.1), numbered as in the Paraver trace (REFERENCE §4).
OFF, RUNNING, IDLE, SWITCHING_ON, SWITCHING_OFF = 0, 1, 2, 3, 4
STATES: Final[tuple[str, ...]] = ("off", "running", "idle", "switching on", "switching off")
#: ``_machine_states.csv`` column of each state.
STATE_COLUMNS: Final[dict[int, str]] = {OFF: "nb_sleeping", RUNNING: "nb_computing", IDLE: "nb_idle",
                                        SWITCHING_ON: "nb_switching_on", SWITCHING_OFF: "nb_switching_off"}
#: How far after its real end a job's printed ``finish_time`` may be: a job that ended at its start (no work) has
#: Batsim's 1e-5 s of ``execution_time`` (behaviour 17), plus half a unit of the 6th decimal it is printed with.
_FINISH_SLACK_S: Final[float] = 1e-5 + 5e-7


@dataclass
class NodeStates:
    """Every host's states over ``[0, end_s]``.

    Attributes:
        nb_hosts: compute hosts (ids 0 .. nb_hosts-1).
        end_s: end of the run as the files tell (the last time of a job, a ``_consumed_energy.csv`` row or a
            pstate change).
        intervals: per host, ``(begin_s, end_s, state)`` sorted and contiguous from 0 to ``end_s``
            (zero-length intervals left out).
        jobs: per host, ``(start_s, finish_s, job_id)`` of the jobs it ran.
        pstates: per host, ``(time_s, pstate)`` of its initial pstate and every pstate it reached.
        final: per host, its state after ``end_s`` (after every change at ``end_s``).
        switch_offs: per host, the time of every switch-off request (the ESC paper's "node turn-off starts",
            §2.6), also of one that took no time (no ``switching off`` interval then).
        exact_times: whether the pstate changes' times came from ``_consumed_energy.csv`` (6 decimals) rather
            than from ``_pstate_changes.csv``'s ``%g``.
    """

    nb_hosts: int
    end_s: float
    intervals: list[list[tuple[float, float, int]]]
    jobs: list[list[tuple[float, float, str]]]
    pstates: list[list[tuple[float, int]]]
    final: list[int]
    switch_offs: list[list[float]]
    exact_times: bool = True

    def state_at(self, host: int, time_s: float) -> int:
        """The state of ``host`` during ``[time_s, next change)``."""
        if time_s >= self.end_s:
            return self.final[host]
        for a, b, state in self.intervals[host]:
            if a <= time_s < b:
                return state
        return self.final[host]

    def counts_at(self, time_s: float) -> dict[int, int]:
        """How many hosts are in each state just after ``time_s``."""
        out = {s: 0 for s in range(len(STATES))}
        for h in range(self.nb_hosts):
            out[self.state_at(h, time_s)] += 1
        return out

    def time_in_state_s(self) -> np.ndarray:
        """``[host, state]``: seconds each host spent in each state."""
        out = np.zeros((self.nb_hosts, len(STATES)))
        for h, ivs in enumerate(self.intervals):
            for a, b, state in ivs:
                out[h, state] += b - a
        return out


def run_nb_hosts(outputs: BatsimOutputs) -> int:
    """The number of compute hosts of a run: the schedule's ``nb_computing_machines``, else the hosts counted in
    the first row of the machine states (the rule of ``wattsched metrics``: a whole number from 1 to the
    ``hosts`` bound).

    Raises:
        InputError: neither output, or a count that is not a number of hosts.
    """
    return nb_hosts_of_run(outputs)


def _exact_pstate_times(changes: pd.DataFrame, energy: pd.DataFrame | None, first: int) -> tuple[np.ndarray, bool]:
    """The time of every pstate change row from ``first`` on: the matching ``p`` rows of consumed_energy
    (one per request and one per completion, in order) when they match the ``%g`` times, else those."""
    printed = changes["time"].to_numpy(dtype=float)[first:]
    if energy is None or "event_type" not in energy:
        if len(printed) and printed.max() >= 1e5:
            logger.warning("no consumed_energy output: pstate change times are the 6-significant-digit ones of "
                           "pstate_changes.csv (rounded from 1e5 s on)")
        return printed, False
    exact = energy.loc[energy["event_type"] == "p", "time"].to_numpy(dtype=float)
    if len(exact) == len(printed) and all(float(f"{t:g}") == p for t, p in zip(exact, printed)):
        return exact, True
    logger.warning("%d pstate changes but %d 'p' rows in consumed_energy (or times differ): pstate change times "
                   "are the 6-significant-digit ones of pstate_changes.csv", len(printed), len(exact))
    return printed, False


def node_states(path: str | Path | BatsimOutputs, prefix: str | None = None) -> NodeStates:
    """Every host's state intervals of a run (module docstring).

    Raises:
        InputError: a missing file or column, a malformed host set, or files that contradict each other
            (a job on a host that is not on, a boot of a host that is not asleep).
    """
    outputs = load_outputs(path, prefix)
    n = run_nb_hosts(outputs)
    jobs = jobs_that_ran(outputs.jobs)
    src_jobs, src_changes = outputs.source("jobs"), outputs.source("pstate_changes")
    # the end from the 6-decimal times: machine_states' %g ones may be rounded up (155.745 for 155.744681), and
    # every row of it is at a job start or end or a pstate change, timed below
    end = float(jobs["finish_time"].max()) if len(jobs) else 0.0
    if outputs.consumed_energy is not None and len(outputs.consumed_energy):
        end = max(end, float(outputs.consumed_energy["time"].max()))

    # power states from the pstate changes: per host, (time, kind) with kind on/off/switching
    pstates: list[list[tuple[float, int]]] = [[(0.0, 0)] for _ in range(n)]
    power: list[list[tuple[float, int]]] = [[(0.0, IDLE)] for _ in range(n)]  # IDLE here means "on"
    switch_offs: list[list[float]] = [[] for _ in range(n)]
    exact = True
    changes = outputs.pstate_changes
    if changes is not None and len(changes):
        first = 0
        seen = ProcSet()
        while first < len(changes) and changes["time"].iat[first] == 0 and changes["new_pstate"].iat[first] >= 0:
            hosts = parse_host_set(changes["machine_id"].iat[first], src_changes, f"row {first + 1}.machine_id", n)
            if hosts & seen:
                break
            seen |= hosts
            for h in hosts:
                pstates[h] = [(0.0, int(changes["new_pstate"].iat[first]))]
            first += 1
        # every row's hosts checked before the times are matched (a bad row is the one line reported)
        host_sets = [parse_host_set(machines, src_changes, f"row {first + k + 1}.machine_id", n)
                     for k, machines in enumerate(changes["machine_id"].to_numpy()[first:])]
        times, exact = _exact_pstate_times(changes, outputs.consumed_energy, first)
        if len(times):
            end = max(end, float(times.max()))
        current = [IDLE] * n
        for k, (hosts, target) in enumerate(zip(host_sets, changes["new_pstate"].to_numpy()[first:])):
            t = float(times[k])
            target = int(target)
            for h in hosts:
                state = current[h]
                if target == -2:
                    switch_offs[h].append(t)
                    new = SWITCHING_OFF
                elif target == -1:
                    new = SWITCHING_ON if state == OFF else state  # on a host that is on: DVFS
                else:
                    new = OFF if state == SWITCHING_OFF else IDLE
                    pstates[h].append((t, target))
                if new != state:
                    current[h] = new
                    power[h].append((t, new))
    # jobs on hosts
    per_host_jobs: list[list[tuple[float, float, str]]] = [[] for _ in range(n)]
    for job_id, start, finish, alloc in zip(jobs["job_id"], jobs["starting_time"], jobs["finish_time"],
                                            jobs["allocated_resources"]):
        for h in parse_host_set(alloc, src_jobs, f"job {job_id}.allocated_resources"):
            if h >= n:
                raise InputError(src_jobs, f"job {job_id}.allocated_resources", f"host {h} beyond 0-{n - 1}")
            per_host_jobs[h].append((float(start), float(finish), str(job_id)))
    intervals = [_host_intervals(h, power[h], per_host_jobs[h], end, src_jobs, exact) for h in range(n)]
    for h in range(n):
        per_host_jobs[h].sort()
    final = [power[h][-1][1] for h in range(n)]  # no job runs after the last time the files mention
    check_energy_job_rows(outputs)  # (its 'p' rows timed the changes: of this run, once the jobs fit the hosts)
    return NodeStates(n, end, intervals, per_host_jobs, pstates, final, switch_offs, exact)


def _printed_error_s(time_s: float) -> float:
    """How far a time printed with ``%g`` (6 significant digits, ``_pstate_changes.csv``) may be from the exact
    one: half a unit of its sixth digit."""
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(time_s))) - 5) if time_s else 0.0


def _host_intervals(host: int, power: list[tuple[float, int]], jobs: list[tuple[float, float, str]], end: float,
                    source: str, exact: bool = True) -> list[tuple[float, float, int]]:
    """One host's intervals: its power states, with the time it runs a job cut out of its "on" time. With
    ``exact`` false, the power states' times are the ``%g`` ones of ``_pstate_changes.csv``: a job (its times
    printed with 6 decimals) overlapping a state by no more than their rounding does not contradict it."""
    out: list[tuple[float, float, int]] = []

    def add(a: float, b: float, state: int) -> None:
        if b > a:
            if out and out[-1][2] == state and out[-1][1] == a:
                out[-1] = (out[-1][0], b, state)
            else:
                out.append((a, b, state))

    runs = sorted(jobs)
    j = 0
    bounds = power + [(end, -1)]
    for (a, state), (b, _) in zip(bounds, bounds[1:]):
        if state != IDLE:
            slack_a, slack_b = (0.0, 0.0) if exact else (_printed_error_s(a), _printed_error_s(b))
            for start, finish, job_id in runs[j:]:
                # a job may end when the host starts switching off: a job of no work (its 1e-5 s) there too
                if start < b - slack_b and finish > a + slack_a + _FINISH_SLACK_S and finish > start:
                    raise InputError(source, f"job {job_id}", f"runs on host {host} during [{start:g}, {finish:g}] "
                                     f"while the host is {STATES[state]} from {a:g} to {b:g}")
                if start >= b:
                    break
            add(a, b, state)
            continue
        t = a
        while j < len(runs) and runs[j][0] < b:
            start, finish, _ = runs[j]
            if finish <= start:  # a zero-length job does not show
                j += 1
                continue
            add(t, max(t, start), IDLE)
            add(max(t, start), min(finish, b), RUNNING)
            t = max(t, min(finish, b))
            if finish > b:
                break
            j += 1
        add(t, b, IDLE)
    return out


# ------------------------------------------------------------------------------------ table 2
@dataclass(frozen=True)
class OnOffStatistics:
    """The measures of the ESC paper's table 2 for one run, plus time and energy against a baseline.

    Times are seconds; "total" sums over the nodes, "per node" is the total divided by the number of
    nodes, as in table 2 (its "active time with average of active intervals" total is the sum over the
    nodes of each node's mean active interval; a node without such an interval counts 0).
    """

    nb_hosts: int
    end_s: float
    makespan_s: float
    nb_shutdowns: int
    max_active_nodes: int
    active_s: float
    inactive_s: float
    mean_active_interval_total_s: float
    mean_inactive_interval_total_s: float
    mean_time_between_shutdowns_s: float
    time_in_state_s: Mapping[str, float]
    energy_j: float
    baseline_makespan_s: float | None = None
    baseline_energy_j: float | None = None

    @property
    def time_ratio(self) -> float:
        """Makespan over the baseline's (NaN without a baseline)."""
        return self.makespan_s / self.baseline_makespan_s if self.baseline_makespan_s else math.nan

    @property
    def energy_ratio(self) -> float:
        """Energy to the makespan over the baseline's (NaN without a baseline)."""
        return self.energy_j / self.baseline_energy_j if self.baseline_energy_j else math.nan

    def as_dict(self) -> dict[str, Any]:
        n = self.nb_hosts
        out: dict[str, Any] = {
            "nb_hosts": n, "end_s": self.end_s, "makespan_s": self.makespan_s,
            "nb_shutdowns": self.nb_shutdowns, "nb_shutdowns_per_node": self.nb_shutdowns / n,
            "max_active_nodes": self.max_active_nodes,
            "active_s": self.active_s, "active_per_node_s": self.active_s / n,
            "inactive_s": self.inactive_s, "inactive_per_node_s": self.inactive_s / n,
            "mean_active_interval_total_s": self.mean_active_interval_total_s,
            "mean_active_interval_per_node_s": self.mean_active_interval_total_s / n,
            "mean_inactive_interval_total_s": self.mean_inactive_interval_total_s,
            "mean_inactive_interval_per_node_s": self.mean_inactive_interval_total_s / n,
            "mean_time_between_shutdowns_s": self.mean_time_between_shutdowns_s,
            "energy_j": self.energy_j,
        }
        out.update({f"time_{k.replace(' ', '_')}_s": v for k, v in self.time_in_state_s.items()})
        if self.baseline_energy_j is not None:
            out.update({"baseline_makespan_s": self.baseline_makespan_s, "baseline_energy_j": self.baseline_energy_j,
                        "time_ratio": self.time_ratio, "energy_ratio": self.energy_ratio})
        return out


def _energy_to(outputs: BatsimOutputs, t: float) -> float:
    energy = outputs.consumed_energy
    if energy is None or energy.empty or math.isnan(t):
        return math.nan
    return energy_at_j(energy, t)


def _job_keys(jobs: pd.DataFrame) -> list[str]:
    """``workload!id`` of every job (``id`` alone when the file has no ``workload_name``)."""
    if "workload_name" not in jobs.columns:
        return jobs["job_id"].astype(str).tolist()
    return (jobs["workload_name"].astype(str) + "!" + jobs["job_id"].astype(str)).tolist()


def _check_same_jobs_and_hosts(outputs: BatsimOutputs, nb_hosts: int, base: BatsimOutputs) -> None:
    """The baseline ran the same jobs on as many hosts: the time and energy ratios compare two schedules of
    one workload on one platform (the energy to the makespan sums every host's; the makespan is the time to
    process those jobs). Same host count, same jobs (workload and id), each submitted at the same time for
    as many hosts.

    Raises:
        InputError: naming both runs and the first difference.
    """
    both = f"{outputs.prefix} and baseline {base.prefix}"
    base_hosts = run_nb_hosts(base)
    if base_hosts != nb_hosts:
        raise InputError(both, "nb_computing_machines", f"{nb_hosts} compute hosts against {base_hosts} in the "
                         "baseline: not the same platform, the time and energy ratios would compare nothing")
    ours = dict(zip(_job_keys(outputs.jobs), outputs.jobs[["submission_time", "requested_number_of_resources"]]
                    .itertuples(index=False, name=None)))
    theirs = dict(zip(_job_keys(base.jobs), base.jobs[["submission_time", "requested_number_of_resources"]]
                      .itertuples(index=False, name=None)))
    if ours.keys() != theirs.keys():
        only = sorted(ours.keys() - theirs.keys())
        other = sorted(theirs.keys() - ours.keys())
        where, key = ("the run", only[0]) if only else ("the baseline", other[0])
        raise InputError(both, "jobs", f"not the same jobs ({len(ours)} against {len(theirs)} in the baseline; "
                         f"job {key!r} only in {where}): not the same workload")
    for key, (subtime, hosts) in ours.items():
        base_subtime, base_hosts_asked = theirs[key]
        if subtime != base_subtime or hosts != base_hosts_asked:
            if subtime != base_subtime:
                field, mine, yours = "submission_time", f"{subtime:.6f}", f"{base_subtime:.6f}"
            else:
                field, mine, yours = "requested_number_of_resources", f"{hosts:g}", f"{base_hosts_asked:g}"
            raise InputError(both, f"job {key!r}.{field}", f"{mine} against {yours} in the baseline: not the same "
                                                           "workload")


def onoff_statistics(path: str | Path | BatsimOutputs, baseline: str | Path | BatsimOutputs | None = None,
                     states: NodeStates | None = None) -> OnOffStatistics:
    """Table 2 of the ESC paper for the run at ``path`` (module docstring), and its makespan and energy
    (to the makespan: the time to process all jobs, the paper's "Time") against ``baseline``'s (the
    always-on run) when given.

    Raises:
        InputError: see :func:`node_states`; a baseline of other jobs or another number of hosts.
    """
    outputs = load_outputs(path)
    st = states if states is not None else node_states(outputs)
    n = st.nb_hosts
    shutdowns = 0
    active_means: list[float] = []
    inactive_means: list[float] = []
    gaps: list[float] = []
    events: list[tuple[float, int]] = []  # (time, +1 / -1 active nodes)
    for ivs, starts in zip(st.intervals, st.switch_offs):
        shutdowns += len(starts)
        if len(starts) > 1:
            gaps.append(float(np.mean(np.diff(starts))))
        runs: dict[bool, list[float]] = {True: [], False: []}  # maximal active / inactive runs
        kind: bool | None = None
        length = 0.0
        for a, b, s in ivs:
            if (s != OFF) == kind:
                length += b - a
            else:
                if kind is not None:
                    runs[kind].append(length)
                kind, length = s != OFF, b - a
        if kind is not None:
            runs[kind].append(length)
        active_means.append(float(np.mean(runs[True])) if runs[True] else 0.0)
        inactive_means.append(float(np.mean(runs[False])) if runs[False] else 0.0)
        was_active = False
        for a, b, s in ivs:
            active = s != OFF
            if active != was_active:
                events.append((a, 1 if active else -1))
                was_active = active
    events.sort(key=lambda e: (e[0], e[1]))
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    by_state = st.time_in_state_s().sum(axis=0)
    active_s = float(by_state.sum() - by_state[OFF])
    span = makespan_s(outputs.jobs)
    base_span = base_energy = None
    if baseline is not None:
        base = load_outputs(baseline)
        _check_same_jobs_and_hosts(outputs, n, base)
        check_energy_job_rows(base)
        base_span = makespan_s(base.jobs)
        base_energy = _energy_to(base, base_span)
    return OnOffStatistics(
        nb_hosts=n, end_s=st.end_s, makespan_s=span, nb_shutdowns=shutdowns, max_active_nodes=peak,
        active_s=active_s, inactive_s=float(by_state[OFF]),
        mean_active_interval_total_s=float(sum(active_means)),
        mean_inactive_interval_total_s=float(sum(inactive_means)),
        mean_time_between_shutdowns_s=float(np.mean(gaps)) if gaps else math.nan,
        time_in_state_s={name: float(by_state[k]) for k, name in enumerate(STATES)},
        energy_j=_energy_to(outputs, span), baseline_makespan_s=base_span, baseline_energy_j=base_energy)


def format_duration(seconds: float) -> str:
    """``24010d 19h 27m 52s`` as in table 2 (``n/a`` for NaN)."""
    if math.isnan(seconds):
        return "n/a"
    total = int(round(seconds))
    d, rest = divmod(total, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return (f"{d}d " if d else "") + f"{h}h {m}m {s}s"


def format_statistics(stats: OnOffStatistics, title: str = "on/off statistics (ESC paper, table 2)") -> str:
    """Table 2's rows (total, per node), then the time and energy against the baseline, as text."""
    n = stats.nb_hosts
    rows = [
        ("Number of shutdowns", f"{stats.nb_shutdowns}", f"{stats.nb_shutdowns / n:.2f}"),
        ("Maximum active nodes", f"{stats.max_active_nodes} of {n}", ""),
        ("Active time", format_duration(stats.active_s), format_duration(stats.active_s / n)),
        ("Inactive time", format_duration(stats.inactive_s), format_duration(stats.inactive_s / n)),
        ("Active time with average of active intervals per node",
         format_duration(stats.mean_active_interval_total_s), format_duration(stats.mean_active_interval_total_s / n)),
        ("Inactive time with average of inactive intervals per node",
         format_duration(stats.mean_inactive_interval_total_s),
         format_duration(stats.mean_inactive_interval_total_s / n)),
        ("Mean time between shutdowns of a node", "", format_duration(stats.mean_time_between_shutdowns_s)),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [title, f"{'measure':<{width}}  {'total':>22}  {'per node':>18}"]
    lines += [f"{a:<{width}}  {b:>22}  {c:>18}" for a, b, c in rows]
    lines.append("time in each state (node-seconds): "
                 + ", ".join(f"{k} {v:.0f}" for k, v in stats.time_in_state_s.items()))
    lines.append(_makespan_and_energy(stats.makespan_s, stats.energy_j, "energy to the makespan"))
    if stats.baseline_energy_j is not None:
        base_span = math.nan if stats.baseline_makespan_s is None else stats.baseline_makespan_s
        ran = not (math.isnan(stats.makespan_s) or math.isnan(base_span))
        no_energy = "no energy recorded" if math.isnan(stats.energy_j + stats.baseline_energy_j) else "a baseline of 0"
        lines.append(f"against the baseline: {_makespan_and_energy(base_span, stats.baseline_energy_j, 'energy')}; "
                     f"time ratio {_number(stats.time_ratio, '.6f', '', 'a baseline of 0' if ran else 'no job ran')}, "
                     f"energy ratio {_number(stats.energy_ratio, '.4f', '', no_energy if ran else 'no job ran')}")
    return "\n".join(lines) + "\n"


def _number(value: float, spec: str, unit: str, why: str) -> str:
    """``value`` formatted with ``spec`` and ``unit``; ``n/a (why)`` for NaN, never ``nan``."""
    return f"n/a ({why})" if math.isnan(value) else f"{value:{spec}}{unit}"


def _makespan_and_energy(span_s: float, energy_j: float, energy_name: str) -> str:
    """``makespan 1h 0m 0s (3600 s), ENERGY_NAME 0.0012 MWh``; a run where no job ran has neither (``n/a``, as
    ``metrics`` prints its makespan), a run without energy file no energy."""
    if math.isnan(span_s):
        return f"makespan n/a (no job ran), {energy_name} n/a"
    return (f"makespan {format_duration(span_s)} ({span_s:.0f} s), "
            f"{energy_name} {_number(energy_j / 3.6e9, '.4f', ' MWh', 'no energy recorded')}")
