"""Batsim's five output files, written from a finished :class:`~simulator.engine.Simulation`.

File names, headers, row order and number formats copy Batsim 4.2.1 (behaviours 28-33 of
``tests/fixtures/batsim-reference/README.md``), quirks included, so that tools written for Batsim
read ours unchanged: ``consumed_joules`` stops at the last job end, ``time_<state>`` misses each
host's open interval after its last change, ``mean_slowdown`` is unbounded and counts rejected jobs
as 0. Our own metrics (``wattsched.analysis.metrics``) are computed correctly from these files.

All five files are written to temporary names first and renamed at the end: a failed run leaves no
half-written output. Rows are formatted as they are written (the ``*_lines`` functions are generators): a whole
log's millions of rows never sit in memory as strings.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterable, Iterator

from wattsched.simulator.engine import BATSIM_VERSION, ZERO_JOB_EXECUTION_S, MachineState, Simulation
from wattsched.base.batsim_files import (
    CONSUMED_ENERGY_COLUMNS,
    JOBS_COLUMNS,
    MACHINE_STATES_COLUMNS,
    PSTATE_CHANGES_COLUMNS,
    output_paths,
)
from wattsched.base.fileio import write_files

#: Batsim's 1e-5l (long double), as an exact number
_EPSILON = Fraction(1, 100_000)


def _f(x: float) -> str:
    return f"{x:f}"


def _g(x: float) -> str:
    return f"{x:g}"


def _split_id(job_id: str) -> tuple[str, str]:
    """``"w0!12"`` -> ``("w0", "12")``: the workload (static or dynamic, B44) and the bare id."""
    workload, _, bare = job_id.partition("!")
    return workload, bare


def _times(rj) -> tuple[float, float, float, float, float]:
    """execution, finish, waiting, turnaround and stretch of a finished job as ``JobsTracer::write_job``
    computes them in long double: a job that ended at its start runs 1e-5 s (B17), and its stretch
    (start + 1e-5 - submission) / 1e-5 keeps the epsilon (in doubles, start + 1e-5 loses it: 0.999996 at
    t = 1e6), computed exactly here (rare)."""
    waiting = rj.start_s - rj.job.subtime_s
    if rj.zero_work:  # B17
        wait = Fraction(rj.start_s) - Fraction(rj.job.subtime_s)
        return (ZERO_JOB_EXECUTION_S, rj.start_s + ZERO_JOB_EXECUTION_S, waiting,
                float(wait + _EPSILON), float(wait / _EPSILON + 1))
    execution = rj.end_s - rj.start_s
    turnaround = rj.end_s - rj.job.subtime_s
    return execution, rj.end_s, waiting, turnaround, turnaround / execution


def jobs_lines(sim: Simulation) -> Iterator[str]:
    """``_jobs.csv``: one row per job in completion order, rejections at rejection time (B28);
    dynamically registered jobs like the others, under their own workload (B44)."""
    yield ",".join(JOBS_COLUMNS)
    for rj in sim.iter_jobs():
        job = rj.job
        req_time = _f(job.walltime_s) if job.walltime_s is not None else "-1.000000"
        meta = f'"{rj.metadata}"' if rj.metadata is not None else '""'
        wl, bare_id = _split_id(job.id)
        head = f"{bare_id},{wl},{job.profile},{_f(job.subtime_s)},{job.res},{req_time}"
        if rj.final_state == "REJECTED":
            yield f"{head},0,REJECTED,,,,,,,,,{meta}"
            continue
        execution, finish, waiting, turnaround, stretch = _times(rj)
        success = 1 if rj.final_state == "COMPLETED_SUCCESSFULLY" else 0
        yield (f"{head},{success},{rj.final_state},{_f(rj.start_s)},{_f(execution)},{_f(finish)},{_f(waiting)},"
               f"{_f(turnaround)},{_f(stretch)},{rj.alloc_str},{_f(rj.energy_j)},{meta}")


def schedule_values(sim: Simulation, *, scheduling_time_s: float = 0.0, simulation_time_s: float = 0.0) -> dict[str, str]:
    """``_schedule.csv`` values, keys sorted alphabetically (B29)."""
    rows = list(sim.iter_jobs())
    finished = [rj for rj in rows if rj.final_state != "REJECTED"]
    nb_jobs = len(rows)
    stretch, turnaround, waiting = [], [], []
    for rj in finished:
        _, _, w, ta, st = _times(rj)
        waiting.append(w)
        turnaround.append(ta)
        stretch.append(st)
    success = sum(1 for rj in finished if rj.final_state == "COMPLETED_SUCCESSFULLY")

    def mean(xs: list[float]) -> str:
        # Batsim sums in long double (fsum: as exact) and divides by nb_jobs, rejected jobs included;
        # with no job at all 0.0 / 0 is the x86-64 default NaN, which glibc prints "-nan"
        return _f(math.fsum(xs) / nb_jobs) if nb_jobs else "-nan"

    def largest(xs: list[float]) -> str:
        return _f(max([0.0, *xs]))  # Batsim's maxima start at 0: all-negative values give 0

    t = sim.state_time_s
    values = {
        "batsim_version": BATSIM_VERSION,
        "consumed_joules": _f(sim.consumed_joules),
        "makespan": _f(sim.makespan_s),
        "max_slowdown": largest(stretch),
        "max_turnaround_time": largest(turnaround),
        "max_waiting_time": largest(waiting),
        "mean_slowdown": mean(stretch),
        "mean_turnaround_time": mean(turnaround),
        "mean_waiting_time": mean(waiting),
        "nb_computing_machines": str(sim.nb_hosts),
        "nb_grouped_switches": str(sim.nb_grouped_switches),
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(len(finished)),
        "nb_jobs_killed": str(len(finished) - success),
        "nb_jobs_rejected": str(nb_jobs - len(finished)),
        "nb_jobs_success": str(success),
        "nb_machine_switches": str(sim.nb_machine_switches),
        "scheduling_time": _f(scheduling_time_s),
        "simulation_time": _f(simulation_time_s),
        "success_rate": _f(success / nb_jobs) if nb_jobs else "-nan",
        "time_computing": _f(t[MachineState.COMPUTING]),
        "time_idle": _f(t[MachineState.IDLE]),
        "time_sleeping": _f(t[MachineState.SLEEPING]),
        "time_switching_off": _f(t[MachineState.SWITCHING_OFF]),
        "time_switching_on": _f(t[MachineState.SWITCHING_ON]),
        "time_unavailable": _f(t[MachineState.UNAVAILABLE]),
    }
    return dict(sorted(values.items()))


def schedule_lines(sim: Simulation, **times: float) -> Iterator[str]:
    values = schedule_values(sim, **times)
    yield ",".join(values)
    yield ",".join(values.values())


def consumed_energy_lines(sim: Simulation) -> Iterator[str]:
    """``_consumed_energy.csv``: s/e/p rows, cumulative joules, ``epower`` from the previous row (B30)."""
    yield ",".join(CONSUMED_ENERGY_COLUMNS)
    prev = (0.0, 0.0)  # Batsim's first epower is measured from t=0, E=0
    for t, e, kind, wattmin in sim.energy_rows:
        if t == prev[0]:
            epower = "NA"
        else:
            epower = _f((e - prev[1]) / (t - prev[0]))
        yield f"{_f(t)},{_f(e)},{kind},{_f(wattmin)},{epower}"
        prev = (t, e)


def machine_states_lines(sim: Simulation) -> Iterator[str]:
    """``_machine_states.csv``, times printed with ``%g`` (B32, B33)."""
    yield ",".join(MACHINE_STATES_COLUMNS)
    yield from (f"{_g(t)},{a},{b},{c},{d},{e}" for t, a, b, c, d, e in sim.machine_rows)


def pstate_changes_lines(sim: Simulation) -> Iterator[str]:
    """``_pstate_changes.csv``: initial pstates, then -1/-2 at request and target at completion (B31)."""
    yield ",".join(PSTATE_CHANGES_COLUMNS)
    yield from (f"{_g(t)},{hosts},{p}" for t, hosts, p in sim.pstate_rows)


def write_outputs(sim: Simulation, prefix: str | os.PathLike, *, scheduling_time_s: float = 0.0,
                  simulation_time_s: float = 0.0) -> dict[str, Path]:
    """Write the five files for ``prefix`` atomically; returns their paths."""
    builders: dict[str, Callable[[], Iterator[str]]] = {
        "jobs": lambda: jobs_lines(sim),
        "schedule": lambda: schedule_lines(
            sim, scheduling_time_s=scheduling_time_s, simulation_time_s=simulation_time_s
        ),
        "machine_states": lambda: machine_states_lines(sim),
        "consumed_energy": lambda: consumed_energy_lines(sim),
        "pstate_changes": lambda: pstate_changes_lines(sim),
    }
    paths = output_paths(prefix)

    def writer(build: Callable[[], Iterable[str]]) -> Callable[[Path], None]:
        def write(tmp: Path) -> None:
            with open(tmp, "w", newline="") as fh:
                fh.writelines(f"{line}\n" for line in build())
        return write

    # a full disk, a file size limit (ulimit -f): the five files removed, the one that failed named
    write_files({paths[name]: writer(build) for name, build in builders.items()})
    return paths
