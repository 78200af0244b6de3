"""Batsim output files: find them on disk and read them into DataFrames, columns by name.

A Batsim run with export prefix ``results/out`` writes five CSV files (behaviours 28-33 of
``tests/fixtures/batsim-reference/README.md``)::

    results/out_jobs.csv             one row per job, in completion order (required here)
    results/out_schedule.csv         one row of aggregated values, keys sorted
    results/out_machine_states.csv   host counts per state after each change
    results/out_consumed_energy.csv  cumulative platform energy at each job start/end and switch
    results/out_pstate_changes.csv   pstate requests and their completions

The embedded simulator writes the same files. Use :func:`find_outputs` to locate them from a folder or a
prefix, the ``read_*`` functions to load one file, or :func:`load_outputs` to load them all::

    outputs = load_outputs("results/out")
    outputs.jobs["waiting_time"].mean()

Every reader checks that the columns it needs are present and raises
:class:`~wattsched.base.errors.InputError` naming the file and the column otherwise.
"""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Final

import numpy as np
import pandas as pd
from procset import ProcSet

from wattsched.base import batsim_files
from wattsched.base.batsim_files import OUTPUT_KINDS, REPLACEMENT_WORKLOAD
from wattsched.base.errors import InputError, counted, printable, quoted_cut
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import format_count, limit, limit_hint
from wattsched.base.validate import CSV_UNSAFE, number_problem

__all__ = [
    "OUTPUT_KINDS",
    "BatsimOutputs",
    "check_energy_job_rows",
    "find_outputs",
    "load_outputs",
    "merge_replacements",
    "nb_hosts_of_run",
    "parse_host_set",
    "read_consumed_energy",
    "read_jobs",
    "read_machine_states",
    "read_pstate_changes",
    "read_schedule",
]

logger = logging.getLogger(__name__)


#: Columns each reader needs (files may hold more; extra columns are kept).
_NEEDED_JOBS: Final[tuple[str, ...]] = (
    "job_id",
    "submission_time",
    "requested_number_of_resources",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "allocated_resources",
)
_NEEDED_SCHEDULE: Final[tuple[str, ...]] = ()
_NEEDED_MACHINE_STATES: Final[tuple[str, ...]] = batsim_files.MACHINE_STATES_COLUMNS
_NEEDED_CONSUMED_ENERGY: Final[tuple[str, ...]] = ("time", "energy")
_NEEDED_PSTATE_CHANGES: Final[tuple[str, ...]] = batsim_files.PSTATE_CHANGES_COLUMNS

_JOBS_FLOAT_COLUMNS: Final[tuple[str, ...]] = (
    "submission_time",
    "requested_time",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "consumed_energy",
)
_JOBS_TEXT_COLUMNS: Final[tuple[str, ...]] = (
    "job_id",
    "workload_name",
    "profile",
    "final_state",
    "allocated_resources",
    "metadata",
)

#: The ``final_state`` of every job of a jobs file: Batsim 4.2.1 writes the jobs when the simulation ends, all finished
#: (``job_state_to_string``).
JOB_FINAL_STATES: Final[tuple[str, ...]] = ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                                            "COMPLETED_KILLED", "REJECTED")

#: The ``event_type`` of a ``_consumed_energy.csv`` row (behaviour 30): a job start, a job end, a pstate change.
ENERGY_EVENT_TYPES: Final[tuple[str, ...]] = ("s", "e", "p")

_SUFFIX: Final[str] = "_jobs.csv"
#: The largest pstate number: Batsim and SimGrid hold a pstate in a C ``int``.
MAX_PSTATE: Final[int] = 2**31 - 1


def find_outputs(path: str | Path, prefix: str | None = None) -> dict[str, Path]:
    """Locate the output files of one run.

    Args:
        path: a folder holding exactly one ``<prefix>_jobs.csv`` (or several, with ``prefix`` given),
            a prefix path such as ``results/out``, or the path of a ``<prefix>_jobs.csv`` file.
        prefix: the export prefix inside the folder ``path``, e.g. ``"out"``.

    Returns:
        ``{kind: path}`` for each kind of :data:`OUTPUT_KINDS` whose file exists; ``"jobs"`` is always
        present.

    Raises:
        InputError: the folder has no ``*_jobs.csv``, several of them and no ``prefix``, the prefix names no jobs
            file, or the system refuses the path (a name too long: an OSError traceback from ``is_dir``).
    """
    try:
        return _find_outputs(Path(path), prefix)
    except OSError as error:
        raise InputError(path, "", f"cannot be read ({error.strerror or error})") from None


def _find_outputs(path: Path, prefix: str | None) -> dict[str, Path]:
    """:func:`find_outputs`, an OSError of the system (a name too long) left to it."""
    if path.is_dir():
        folder = path
        if prefix is None:
            candidates = sorted(folder.glob(f"*{_SUFFIX}"))
            if not candidates:
                raise InputError(folder, "", "no Batsim output found (no '<prefix>_jobs.csv' file in this folder)")
            if len(candidates) > 1:
                names = ", ".join(c.name for c in candidates)
                raise InputError(
                    folder, "", f"several Batsim outputs ({names}): give the export prefix, e.g. 'folder/out'"
                )
            prefix = candidates[0].name[: -len(_SUFFIX)]
    elif path.name.endswith(_SUFFIX) and prefix is None:
        folder, prefix = path.parent, path.name[: -len(_SUFFIX)]
    else:
        if prefix is not None:
            raise InputError(path, "", "not a folder (a prefix was given, so a folder was expected)")
        folder, prefix = path.parent, path.name
    found: dict[str, Path] = {}
    for kind in OUTPUT_KINDS:
        file = folder / f"{prefix}_{kind}.csv"
        try:  # a folder or a FIFO was skipped as an absent file: the energy metrics went unsaid
            require_regular_file(file)
        except OSError as error:
            raise InputError(file, "", f"cannot be read ({error.strerror})") from None
        if file.exists():
            found[kind] = file
    if "jobs" not in found:
        raise InputError(folder, f"{prefix}{_SUFFIX}", "missing: no Batsim jobs output for this prefix")
    logger.debug("outputs of prefix %r in %s: %s", prefix, folder, sorted(found))
    return found


def _check_row_lengths(path: Path) -> None:
    """Every row has as many fields as the header (pandas fills a short row with NaN silently), and no column
    name comes twice (pandas would rename the second ``job_id`` to ``job_id.1``)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = csv.reader(handle)
            header = next(rows, None)
            if header is None:
                return
            seen: set[str] = set()
            for name in header:
                if name in seen:
                    raise InputError(path, f"column '{name}'", "twice in the header")
                seen.add(name)
            for number, row in enumerate(rows, start=2):
                if len(row) != len(header) and row:
                    raise InputError(path, f"line {number}",
                                     f"{counted(len(row), 'field')}, the header has {len(header)}: "
                                     "a truncated or mangled row")
    except (OSError, UnicodeDecodeError, csv.Error):
        return  # pandas reports it below


def _read_csv(path: Path, required: tuple[str, ...], **kwargs: object) -> pd.DataFrame:
    """Read a CSV file and check that its header has the ``required`` columns and every row all fields."""
    _check_row_lengths(path)
    try:
        frame = pd.read_csv(path, **kwargs)
    except FileNotFoundError as error:
        raise InputError(path, "", "file not found") from error
    except pd.errors.EmptyDataError as error:
        raise InputError(path, "header", "empty file, a CSV header was expected") from error
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as error:
        raise InputError(path, "", f"not a readable CSV file ({error})") from error
    for column in required:
        if column not in frame.columns:
            raise InputError(path, f"column '{column}'", "missing from the header")
    return frame


def _require_values(frame: pd.DataFrame, path: Path, columns: tuple[str, ...], rows: pd.Series | None = None,
                    why: str = "") -> None:
    """The ``columns`` hold finite numbers in every row (or the ``rows`` selected): NaN or ±inf there is a
    mangled file, refused with the first such line."""
    for column in columns:
        bad = ~np.isfinite(frame[column].to_numpy(dtype=float))
        if rows is not None:
            bad &= rows.to_numpy()
        _first_bad(path, bad, column, f"empty or not a finite number{why}")


#: The time columns of the jobs file (seconds), each within the ``time_s`` bound.
_JOBS_TIME_COLUMNS: Final[tuple[str, ...]] = (
    "submission_time", "requested_time", "starting_time", "execution_time", "finish_time", "waiting_time",
    "turnaround_time")


def _require_times(frame: pd.DataFrame, path: Path, columns: tuple[str, ...]) -> None:
    """The ``columns`` present (seconds) are within the ``time_s`` bound, as every time a simulation reaches:
    a time of 1e308 s is finite, but the durations and energies computed from it are not (NaN is left to the
    other checks)."""
    bound = limit("time_s")
    for column in columns:
        if column not in frame.columns:
            continue
        values = frame[column].to_numpy(dtype=float)
        _first_bad(path, np.abs(values) > bound, column,
                   lambda row: f"{values[row]:g} s is beyond the times a simulation reaches; "
                               f"{limit_hint('time_s', 's')}")


def _to_float(frame: pd.DataFrame, path: Path, columns: tuple[str, ...]) -> None:
    """Convert the ``columns`` present in ``frame`` to floats in place (empty or ``NA`` → NaN)."""
    for column in columns:
        if column not in frame.columns:
            continue
        text = frame[column]
        try:
            values = pd.to_numeric(text, errors="coerce")
        except OverflowError:  # pandas keeps an integer beyond the range of a double as a Python int
            problems = [number_problem(value) if isinstance(value, int) else None for value in text]
            _first_bad(path, np.array([problem is not None for problem in problems]), column,
                       lambda row: str(problems[row]))
            raise
        _first_bad(path, (values.isna() & text.notna()).to_numpy(), column,
                   lambda row: f"{text.iloc[row]!r} is not a number")
        frame[column] = values.astype(float)


def _to_count(frame: pd.DataFrame, path: Path, columns: tuple[str, ...], low: int, high: float, what: str) -> None:
    """Convert the ``columns`` to integers in place, each a whole number from ``low`` to ``high`` (``what`` says
    what it is)."""
    _to_float(frame, path, columns)
    for column in columns:
        values = frame[column].to_numpy(dtype=float)
        _first_bad(path, ~np.isfinite(values) | (values != np.round(values)) | (values < low) | (values > high),
                   column, lambda row: f"{format_count(values[row])} is not {what}")
        frame[column] = values.astype(int)


def read_jobs(path: str | Path) -> pd.DataFrame:
    """Read ``<prefix>_jobs.csv``.

    Text columns (``job_id``, ``profile``, ``final_state``, ``allocated_resources``, ``metadata``...)
    stay strings, empty ones become ``""``; time and energy columns are floats, NaN for rejected jobs
    (their time/energy/allocation fields are empty, behaviour 18).

    Raises:
        InputError: naming the file and the column when a required column is missing or not numeric, or the line
            and the column of a value no Batsim run writes (a job starting before its submission, a
            ``waiting_time`` other than ``starting_time - submission_time``...).
    """
    path = Path(path)
    dtypes = {column: str for column in _JOBS_TEXT_COLUMNS}
    frame = _read_csv(path, _NEEDED_JOBS, dtype=dtypes, keep_default_na=False, na_values={})
    for column in _JOBS_TEXT_COLUMNS:
        if column in frame.columns:
            frame[column] = frame[column].fillna("").astype(str)
    numeric = tuple(c for c in (*_JOBS_FLOAT_COLUMNS, "requested_number_of_resources", "success") if c in frame.columns)
    for column in numeric:
        frame[column] = frame[column].replace({"": None, "NA": None})
    _to_float(frame, path, numeric)
    _require_values(frame, path, ("submission_time", "requested_number_of_resources"))
    hosts = frame["requested_number_of_resources"].to_numpy(dtype=float)
    # a count weighing utilization (float kept for pandas)
    _first_bad(path, (hosts != np.round(hosts)) | (hosts < 0), "requested_number_of_resources",
               lambda row: f"{hosts[row]:g} is not a count of hosts (a whole number >= 0)")
    _first_bad(path, hosts > limit("hosts"), "requested_number_of_resources",
               f"more hosts than a job may ask for; {limit_hint('hosts', 'hosts')}")
    _require_times(frame, path, _JOBS_TIME_COLUMNS)
    ran = frame["final_state"] != "REJECTED"
    _first_bad(path, (frame["final_state"] == "").to_numpy(), "final_state", "empty")
    ids = frame["job_id"].to_numpy()  # the key of every job (and of paraver's .pcf lines, one a job)
    _first_bad(path, np.array([not text or not CSV_UNSAFE.isdisjoint(text) for text in ids], dtype=bool), "job_id",
               lambda row: "empty" if not ids[row] else
               f"{printable(repr(ids[row]))}: Batsim writes job ids unquoted, without a comma, double quote, line "
               "break or NUL (a workload's job id cannot hold one)")
    states = frame["final_state"].to_numpy()
    _first_bad(path, ~frame["final_state"].isin(JOB_FINAL_STATES).to_numpy(), "final_state",
               lambda row: f"{quoted_cut(str(states[row]))} is not a state Batsim writes "
                           f"({', '.join(JOB_FINAL_STATES)}): the job would be counted as none of them")
    if "success" in frame.columns:  # Batsim writes 1 exactly for a job COMPLETED_SUCCESSFULLY, 0 for any other
        success = frame["success"].to_numpy(dtype=float)
        expected = (frame["final_state"] == "COMPLETED_SUCCESSFULLY").to_numpy(dtype=float)
        _first_bad(path, ~(success == expected), "success",
                   lambda row: f"{'empty' if np.isnan(success[row]) else format_count(success[row])}, while "
                               f"final_state is {states[row]} (Batsim writes 1 exactly for COMPLETED_SUCCESSFULLY, "
                               "0 otherwise)")
    _first_bad(path, ran.to_numpy() & (hosts < 1), "requested_number_of_resources",
               lambda row: f"{hosts[row]:g}, while job {frame['job_id'].iat[row]!r} ran "
                           f"({frame['final_state'].iat[row]}): Batsim rejects a job of no host, and utilization "
                           "weighs a job by its hosts")
    _require_values(frame, path, ("starting_time", "execution_time", "finish_time", "waiting_time"), ran,
                    " (the job was not rejected)")
    _first_bad(path, frame["submission_time"].to_numpy() < 0.0, "submission_time", "negative")
    _first_bad(path, ran.to_numpy() & (frame["starting_time"] < frame["submission_time"]).to_numpy(),
               "starting_time", "before the job's submission_time")
    _first_bad(path, ran.to_numpy() & (frame["finish_time"] < frame["starting_time"]).to_numpy(),
               "finish_time", "before the job's starting_time")
    for column in ("waiting_time", "execution_time"):  # read as they are by the metrics (means, stretches)
        _first_bad(path, ran.to_numpy() & (frame[column] < 0).to_numpy(), column, "negative")
    _check_waiting_times(frame, path, ran.to_numpy())
    _check_finish_times(frame, path, ran.to_numpy())
    started = frame["starting_time"].to_numpy(dtype=float)
    _first_bad(path, ran.to_numpy() & (frame["allocated_resources"].str.strip() == "").to_numpy(),
               "allocated_resources",  # Batsim writes the hosts of every job it started (a 0-host job is rejected)
               lambda row: f"empty, while job {frame['job_id'].iat[row]!r} ran from {started[row]:g} s "
                           f"({frame['final_state'].iat[row]}): a job runs on at least one host")
    keys = [c for c in ("workload_name", "job_id") if c in frame.columns]
    _first_bad(path, frame.duplicated(subset=keys).to_numpy(), "job_id", "the same job a second time")
    return frame


def _first_bad(path: Path, bad: np.ndarray, column: str | None, problem: str | Callable[[int], str]) -> None:
    """Refuse the first row where ``bad`` holds (a file no Batsim run writes: its metrics would be wrong).

    Args:
        column: the column at fault, or None when the row as a whole is.
        problem: what is wrong there, or a function of the row's position (0 for the first data row, line 2 of
            the file) giving it, to show the offending value.
    """
    if bad.any():
        row = int(np.argmax(bad))
        where = f"line {row + 2}" + ("" if column is None else f", column '{column}'")  # the header is line 1
        raise InputError(path, where, problem(row) if callable(problem) else problem)


#: How far a jobs file's ``waiting_time`` may be from ``starting_time - submission_time``: Batsim computes it as
#: that difference and prints the three times with ``%f`` (each rounded by up to 5e-7 s), and a time near the
#: ``time_s`` bound (1e10 s) holds only about 2e-6 s of precision as a double.
_WAITING_ABS_TOL_S: Final[float] = 1e-5
_WAITING_REL_TOL: Final[float] = 1e-12


def _check_waiting_times(frame: pd.DataFrame, path: Path, ran: np.ndarray) -> None:
    """Every job that ran waited ``starting_time - submission_time`` (Batsim writes that difference): a hand-edited
    start or waiting time that disagrees gave waiting-time metrics that no schedule had."""
    submitted = frame["submission_time"].to_numpy(dtype=float)
    started = frame["starting_time"].to_numpy(dtype=float)
    waited = frame["waiting_time"].to_numpy(dtype=float)
    difference = started - submitted
    tolerance = _WAITING_ABS_TOL_S + _WAITING_REL_TOL * np.maximum(np.abs(started), np.abs(submitted))
    _first_bad(path, ran & (np.abs(waited - difference) > tolerance), "waiting_time",
               lambda row: f"{waited[row]:f} s, while starting_time - submission_time is {difference[row]:f} s "
                           "(Batsim writes their difference)")


def _check_finish_times(frame: pd.DataFrame, path: Path, ran: np.ndarray) -> None:
    """Every job that ran finished at ``starting_time + execution_time`` (Batsim writes ``execution_time`` as
    their difference): the metrics read both (slowdowns the execution time, makespan and utilization the finish
    time), so a hand-edited one that disagrees gave metrics of two different schedules."""
    started = frame["starting_time"].to_numpy(dtype=float)
    executed = frame["execution_time"].to_numpy(dtype=float)
    finished = frame["finish_time"].to_numpy(dtype=float)
    total = started + executed
    tolerance = _WAITING_ABS_TOL_S + _WAITING_REL_TOL * np.maximum(np.abs(total), np.abs(finished))
    _first_bad(path, ran & (np.abs(finished - total) > tolerance), "finish_time",
               lambda row: f"{finished[row]:f} s, while starting_time + execution_time is {total[row]:f} s "
                           "(Batsim writes execution_time as their difference)")


def _not_before_start(frame: pd.DataFrame, path: Path) -> None:
    """No ``time`` is negative: a simulation starts at 0 s, and Batsim writes these files as its clock runs (their
    ``time`` never falls, so only the first row can be the one)."""
    times = frame["time"].to_numpy(dtype=float)
    _first_bad(path, times < 0, "time", lambda row: f"{times[row]:g} s, before the simulation's start at 0 s")


def _non_decreasing(frame: pd.DataFrame, path: Path, column: str, what: str) -> None:
    """``column`` never falls from one row to the next (Batsim writes these files in time order)."""
    values = frame[column].to_numpy(dtype=float)
    falls = np.zeros(len(values), dtype=bool)
    falls[1:] = values[1:] < values[:-1]
    _first_bad(path, falls, column, f"lower than the row before ({what} never falls)")


def merge_replacements(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per job when a scheduler replaced jobs (a walltime or profile changed at start, see
    :data:`~wattsched.base.batsim_files.REPLACEMENT_WORKLOAD`): the replacement's row, named as the original
    (``workload_name`` and ``job_id``), in place of the original's REJECTED row. Its submission time is
    already the original's (the replacement is registered with it, Batsim behaviour 44)."""
    if "workload_name" not in jobs.columns:
        return jobs
    elsewhere = jobs["workload_name"] == REPLACEMENT_WORKLOAD  # resized!<workload>.<name>
    ids = jobs["job_id"].astype(str)
    within = ids.str.startswith(f"{REPLACEMENT_WORKLOAD}.") & ~elsewhere  # <workload>!resized.<name> ...
    if within.any():  # ... of a rejected original (a job of the user's own named "resized.7" stays as it is)
        rejected = set(zip(jobs.loc[jobs["final_state"] == "REJECTED", "workload_name"],
                           ids[jobs["final_state"] == "REJECTED"]))
        bare = ids.str.slice(len(REPLACEMENT_WORKLOAD) + 1)
        within &= pd.Series([(w, b) in rejected for w, b in zip(jobs["workload_name"], bare)], index=jobs.index)
    resized = elsewhere | within
    if not resized.any():
        return jobs
    out = jobs.copy()
    names = out.loc[elsewhere, "job_id"].astype(str).str.split(".", n=1)
    out.loc[elsewhere, "workload_name"] = names.str[0]
    out.loc[elsewhere, "job_id"] = names.str[1]
    out.loc[within, "job_id"] = ids[within].str.slice(len(REPLACEMENT_WORKLOAD) + 1)
    replaced = set(zip(out.loc[resized, "workload_name"], out.loc[resized, "job_id"]))
    replaced_rows = pd.Series([(w, j) in replaced for w, j in zip(out["workload_name"], out["job_id"])],
                              index=out.index)
    original = (~resized) & (out["final_state"] == "REJECTED") & replaced_rows
    return out[~original].reset_index(drop=True)


def read_schedule(path: str | Path) -> dict[str, str]:
    """Read ``<prefix>_schedule.csv`` (a header and one row) as ``{key: text value}``.

    Values stay text (``batsim_version`` is ``v4.2.1``); convert the keys you use with ``float``.

    Raises:
        InputError: the file has no data row.
    """
    path = Path(path)
    frame = _read_csv(path, _NEEDED_SCHEDULE, dtype=str, keep_default_na=False)
    if len(frame) < 1:
        raise InputError(path, "row 1", "missing: the schedule file has a header but no values")
    if len(frame) > 1:
        logger.warning("%s: %d data rows, only the first is used", path, len(frame))
    return {str(key): str(value) for key, value in frame.iloc[0].items()}


def read_machine_states(path: str | Path) -> pd.DataFrame:
    """Read ``<prefix>_machine_states.csv`` (time printed with ``%g``, counts as integers)."""
    path = Path(path)
    frame = _read_csv(path, _NEEDED_MACHINE_STATES)
    _to_float(frame, path, ("time",))
    _require_values(frame, path, ("time",))
    _require_times(frame, path, ("time",))
    _not_before_start(frame, path)
    _non_decreasing(frame, path, "time", "time")
    _to_count(frame, path, _NEEDED_MACHINE_STATES[1:], 0, limit("hosts"),
              f"a count of hosts (a whole number >= 0; {limit_hint('hosts', 'hosts')})")
    hosts = frame[list(_NEEDED_MACHINE_STATES[1:])].to_numpy().sum(axis=1)
    _first_bad(path, hosts != (hosts[0] if len(hosts) else 0), None,  # Batsim counts every compute host in every row
               lambda row: f"the counts add up to {counted(hosts[row], 'host')}, those of line 2 to {hosts[0]} "
                           "(every row counts every compute host once)")
    return frame


def read_consumed_energy(path: str | Path) -> pd.DataFrame:
    """Read ``<prefix>_consumed_energy.csv``: ``time`` (s), cumulative ``energy`` (J), ``event_type``,
    ``wattmin`` (W) and ``epower`` (W, NaN where Batsim printed ``NA``)."""
    path = Path(path)
    frame = _read_csv(path, _NEEDED_CONSUMED_ENERGY, dtype={"event_type": str})
    _to_float(frame, path, ("time", "energy", "wattmin", "epower"))
    _require_values(frame, path, ("time", "energy"))
    _require_times(frame, path, ("time",))
    _not_before_start(frame, path)
    _non_decreasing(frame, path, "time", "time")
    energy = frame["energy"].to_numpy(dtype=float)  # (never falls: only the first row can be the one)
    _first_bad(path, energy < 0, "energy", lambda row: f"{energy[row]:f} J: negative, while it is the energy "
                                                       "consumed since 0 s")
    _non_decreasing(frame, path, "energy", "the energy consumed so far")
    if "event_type" in frame.columns:  # 'p' rows time the pstate changes (node_states), 's' rows the job starts
        kinds = frame["event_type"].fillna("").to_numpy()
        _first_bad(path, ~np.isin(kinds, ENERGY_EVENT_TYPES), "event_type",
                   lambda row: f"{quoted_cut(str(kinds[row]))} is not an event Batsim writes "
                               "(s: a job start, e: a job end, p: a pstate change)")
    if "wattmin" in frame.columns:  # the last row's is the power after it (energy_at_j): a window past it
        _require_values(frame, path, ("wattmin",))
        wattmin = frame["wattmin"].to_numpy(dtype=float)
        _first_bad(path, wattmin < 0, "wattmin",
                   lambda row: f"{wattmin[row]:f} W: negative, while it is the hosts' idle (or sleep) power")
        bound = limit("time_s")
        _first_bad(path, wattmin > np.finfo(float).max / bound, "wattmin",
                   lambda row: f"{wattmin[row]:g} W: its energy over {bound:g} s of simulated time (the "
                               "WATTSCHED_LIMIT_TIME_S bound) is beyond the largest number a double holds")
    return frame


def read_pstate_changes(path: str | Path) -> pd.DataFrame:
    """Read ``<prefix>_pstate_changes.csv``: ``time`` (s), ``machine_id`` (interval string such as
    ``"0-1"``) and ``new_pstate`` (-1/-2 mark a pending switch, behaviour 31: Batsim writes no other negative
    value, so one is refused)."""
    path = Path(path)
    frame = _read_csv(path, _NEEDED_PSTATE_CHANGES, dtype={"machine_id": str})
    _to_float(frame, path, ("time",))
    _require_values(frame, path, ("time",))
    _require_times(frame, path, ("time",))
    _not_before_start(frame, path)
    _non_decreasing(frame, path, "time", "time")
    _to_count(frame, path, ("new_pstate",), -2, MAX_PSTATE,
              f"a pstate (a whole number from 0 to {MAX_PSTATE}, or -1/-2 for a pending switch)")
    return frame


def parse_host_set(text: str, source: str, where: str, nb_hosts: int | None = None) -> ProcSet:
    """The host set ``text`` of field ``where``; with ``nb_hosts``, every id must be a host of the platform.

    Raises:
        InputError: not a host set, or (with ``nb_hosts``) a host id beyond ``nb_hosts - 1``.
    """
    try:
        hosts = ProcSet.from_str(str(text))
    except ValueError:
        raise InputError(source, where, f"{text!r} is not a host set such as '0-3 7'") from None
    if nb_hosts is not None and hosts and hosts.max >= nb_hosts:
        raise InputError(source, where, f"host {hosts.max} beyond 0-{nb_hosts - 1} (the run's "
                                        f"{nb_hosts} compute hosts)")
    return hosts


def nb_hosts_of_run(outputs: "BatsimOutputs") -> int:
    """The run's compute hosts: ``nb_computing_machines`` of the schedule output, else the hosts counted in the
    first row of the machine states; a whole number from 1 to the ``hosts`` bound (``metrics``, ``node-stats``,
    ``paraver`` and ``plot`` count them so).

    Raises:
        InputError: neither output gives it, or what they give is not such a number.
    """
    if outputs.schedule is None or "nb_computing_machines" not in outputs.schedule:
        states = outputs.machine_states
        if states is not None and len(states):
            count = int(states.iloc[0, 1:].sum())
            if 1 <= count <= limit("hosts"):
                return count
            raise InputError(outputs.source("machine_states"), "line 2",
                             f"{count} hosts counted: not a number of hosts (no schedule output gives it)")
        missing = ("no _schedule.csv (nb_computing_machines)" if outputs.schedule is None
                   else "no nb_computing_machines in _schedule.csv")
        raise InputError(outputs.prefix, "", f"unknown number of hosts: {missing} and no _machine_states.csv rows")
    text = outputs.schedule["nb_computing_machines"]
    try:
        value = float(text)
    except ValueError as error:
        raise InputError(outputs.source("schedule"), "nb_computing_machines", f"{text!r} is not a number") from error
    if not (value >= 1 and value.is_integer() and value <= limit("hosts")):
        raise InputError(outputs.source("schedule"), "nb_computing_machines",
                         f"{text!r} is not a number of hosts (a whole number >= 1, a platform has at least one "
                         f"compute host; {limit_hint('hosts', 'hosts')})")
    return int(value)


#: A host set as Batsim writes one (``0-3 7``): ASCII ids and intervals separated by one space.
_BATSIM_HOST_SET = re.compile(r"[0-9]+(?:-[0-9]+)?(?: [0-9]+(?:-[0-9]+)?)*")
_HOST_INTERVAL = re.compile(r"([0-9]+)(?:-([0-9]+))?")


def _host_set_within(text: str, nb_hosts: int | None) -> bool:
    """Whether ``text`` is a host set as Batsim writes one, of ids below ``nb_hosts`` (any id when None): the
    common case told without building a :class:`ProcSet` (a shutdown run has hundreds of thousands of rows);
    :func:`parse_host_set` says what is wrong otherwise."""
    if not _BATSIM_HOST_SET.fullmatch(text):
        return False
    for first, last in _HOST_INTERVAL.findall(text):
        high = int(last) if last else int(first)
        if high < int(first) or (nb_hosts is not None and high >= nb_hosts):
            return False
    return True


def _check_pstate_hosts(outputs: "BatsimOutputs") -> None:
    """Every row of the pstate changes names a host set, of the run's compute hosts when the schedule or the
    machine states count them (:func:`nb_hosts_of_run`): a host beyond them is from another platform or a
    hand edit, which every command refuses (``node-stats`` and ``paraver`` read the hosts; ``metrics`` and
    ``plot`` read the file without a word). Fields as :func:`~wattsched.analysis.node_states.node_states` names
    them: ``row N.machine_id``, N counting the data rows from 1."""
    changes = outputs.pstate_changes
    if changes is None or changes.empty:
        return
    try:
        nb_hosts: int | None = nb_hosts_of_run(outputs)
    except InputError:  # no count, or a malformed one: the commands that need it name it
        nb_hosts = None
    source = outputs.source("pstate_changes")
    seen: set[str] = set()
    for row, text in enumerate(changes["machine_id"].to_numpy()):
        if text in seen:
            continue
        where = f"row {row + 1}.machine_id"
        if not isinstance(text, str) or not text.strip():  # pandas reads an empty cell as NaN
            raise InputError(source, where, "empty: a pstate change names the hosts it switches")
        if not _host_set_within(text, nb_hosts):
            parse_host_set(text, source, where, nb_hosts)  # raises but for a set Batsim would write otherwise
        seen.add(text)


def _check_job_hosts(outputs: "BatsimOutputs") -> None:
    """Every job that ran names a host set of the run's compute hosts (when the schedule or the machine states count
    them), as :func:`_check_pstate_hosts` checks the pstate changes: ``node-stats``, ``paraver`` and ``plot`` refused
    an allocation such as ``abc`` or ``20-23`` on 16 hosts, ``metrics`` took it without a word. Fields as
    :func:`~wattsched.analysis.node_states.node_states` names them: ``job ID.allocated_resources``."""
    jobs = outputs.jobs
    try:
        nb_hosts: int | None = nb_hosts_of_run(outputs)
    except InputError:  # no count, or a malformed one: the commands that need it name it
        nb_hosts = None
    source = outputs.source("jobs")
    ran = (jobs["final_state"] != "REJECTED").to_numpy()
    for job_id, text in zip(jobs["job_id"].to_numpy()[ran], jobs["allocated_resources"].to_numpy()[ran]):
        if not _host_set_within(text, nb_hosts):
            parse_host_set(text, source, f"job {job_id}.allocated_resources", nb_hosts)


def check_energy_job_rows(outputs: "BatsimOutputs") -> None:
    """The ``s`` and ``e`` rows of the consumed energy are the starts and ends of the jobs that ran: Batsim writes one
    at each job start, at its ``starting_time``, and one at each job end, at its ``finish_time`` (behaviour 30, all
    printed with 6 decimals; every recording). The energy file of another run beside these jobs gave its energy
    metrics without a word, and so did a file cut before its last job ends (``total_energy_j`` 0 below the window's).
    Checked by the readers of the energy (``metrics``, ``node-stats`` and ``paraver`` once the hosts' states are
    rebuilt, ``plot``'s power), after what they find wrong in the jobs themselves.

    Raises:
        InputError: naming the energy file, the first time whose rows and job starts (or ends) differ in number, and
            a job starting (ending) then.
    """
    energy = outputs.consumed_energy
    if energy is None or "event_type" not in energy.columns:
        return
    kinds = energy["event_type"].to_numpy()
    times = energy["time"].to_numpy(dtype=float)
    jobs = outputs.jobs[(outputs.jobs["final_state"] != "REJECTED").to_numpy()]
    # a job of no work ends 1e-5 s after its start in _jobs.csv, and its 'e' row is written at its start (recording
    # simultaneous-events): the ends are compared with twice the tolerance of the printed times
    for kind, column, event, tolerance_s in (("s", "starting_time", "start", _WAITING_ABS_TOL_S),
                                             ("e", "finish_time", "end", 2 * _WAITING_ABS_TOL_S)):
        _check_energy_rows(outputs, np.sort(times[kinds == kind]), jobs, kind, column, event, tolerance_s)


def _check_energy_rows(outputs: "BatsimOutputs", rows: np.ndarray, jobs: pd.DataFrame, kind: str, column: str,
                       event: str, tolerance_s: float) -> None:
    """The sorted times of the energy file's ``kind`` rows against the jobs' ``column`` (:func:`check_energy_job_rows`)."""
    times = jobs[column].to_numpy(dtype=float)
    expected = np.sort(times)
    count = min(len(rows), len(expected))
    differ = np.flatnonzero(np.abs(rows[:count] - expected[:count]) > tolerance_s)
    if len(rows) == len(expected) and not len(differ):
        return
    first = int(differ[0]) if len(differ) else count  # the first time whose rows and jobs differ in number
    time = min(rows[first] if first < len(rows) else np.inf, expected[first] if first < len(expected) else np.inf)
    near = np.abs(times - time) <= tolerance_s
    rows_then = counted(int((np.abs(rows - time) <= tolerance_s).sum()), f"'{kind}' row")
    ids = jobs["job_id"].to_numpy()[near]
    jobs_then = counted(len(ids), "job") + (f" ({'first: ' if len(ids) > 1 else ''}job {ids[0]!r})" if len(ids) else "")
    ending, cause = ("starting", "the files of two runs?") if event == "start" else (
        "ending", "a truncated file, or the files of two runs?")
    raise InputError(outputs.paths["consumed_energy"], "event_type",
                     f"{rows_then} at {time:f} s, for {jobs_then} of {outputs.paths['jobs'].name} {ending} then; "
                     f"Batsim writes one at each job {event}: {cause}")


def _refuse_empty_jobs(outputs: "BatsimOutputs") -> None:
    """A ``_jobs.csv`` with a header and no rows, while the schedule counts jobs or hosts computed: a truncated
    file, refused like the other outputs' (a run of no job writes no row anywhere)."""
    where = outputs.paths["jobs"]
    schedule = outputs.schedule or {}
    try:
        nb_jobs = float(schedule.get("nb_jobs", "0"))
    except ValueError:
        nb_jobs = 0.0
    if nb_jobs > 0:
        raise InputError(where, "row 2", f"missing: a header but no rows, while {counted(nb_jobs, 'job', 'g')} ran "
                         f"({outputs.paths['schedule'].name}: nb_jobs); a truncated file?")
    states = outputs.machine_states
    if states is not None and "nb_computing" in states.columns and (states["nb_computing"] > 0).any():
        raise InputError(where, "row 2", "missing: a header but no rows, while hosts computed "
                         f"({outputs.paths['machine_states'].name}: nb_computing); a truncated file?")


def _check_schedule_hosts(outputs: "BatsimOutputs") -> None:
    """The schedule's ``nb_computing_machines`` is the number of hosts every row of the machine states counts
    (Batsim writes both from its compute hosts): a hand-edited one gave a utilization of another machine. A value
    that is not a number of hosts is left to :func:`nb_hosts_of_run`, which names it."""
    states, schedule = outputs.machine_states, outputs.schedule or {}
    if states is None or not len(states) or "nb_computing_machines" not in schedule:
        return
    try:
        value = float(schedule["nb_computing_machines"])
    except ValueError:
        return
    if not (np.isfinite(value) and value.is_integer() and 1 <= value <= limit("hosts")):
        return
    counted_hosts = int(states[list(_NEEDED_MACHINE_STATES[1:])].to_numpy()[0].sum())
    if value != counted_hosts:
        raise InputError(outputs.paths["schedule"], "nb_computing_machines",
                         f"{schedule['nb_computing_machines']!r} hosts, while every row of "
                         f"{outputs.paths['machine_states'].name} counts {counted_hosts}")


@dataclass(frozen=True)
class BatsimOutputs:
    """The files of one run, loaded. Missing optional files are ``None``.

    Attributes:
        paths: ``{kind: path}`` as returned by :func:`find_outputs`.
        jobs: ``<prefix>_jobs.csv`` (:func:`read_jobs`).
        schedule: ``<prefix>_schedule.csv`` as ``{key: text}`` (:func:`read_schedule`).
        machine_states: ``<prefix>_machine_states.csv``.
        consumed_energy: ``<prefix>_consumed_energy.csv``.
        pstate_changes: ``<prefix>_pstate_changes.csv``.
    """

    paths: dict[str, Path]
    jobs: pd.DataFrame
    schedule: dict[str, str] | None = None
    machine_states: pd.DataFrame | None = None
    consumed_energy: pd.DataFrame | None = None
    pstate_changes: pd.DataFrame | None = None

    @property
    def prefix(self) -> str:
        """The run's export prefix path, ``results/out``: names the run in messages."""
        jobs = self.paths["jobs"]
        return str(jobs.with_name(jobs.name[: -len(_SUFFIX)]))

    def source(self, kind: str) -> str:
        """The path of the file of ``kind`` as text, for error messages (``"<kind> output"`` if absent)."""
        return str(self.paths.get(kind, f"<{kind} output>"))


def load_outputs(path: str | Path | BatsimOutputs, prefix: str | None = None) -> BatsimOutputs:
    """Find (:func:`find_outputs`) and read every output file of a run (jobs replaced by a scheduler merged
    with their replacements: :func:`merge_replacements`).

    Args:
        path: folder, prefix path or jobs file; an already loaded :class:`BatsimOutputs` is returned as is.
        prefix: export prefix when ``path`` is a folder holding several runs.
    """
    if isinstance(path, BatsimOutputs):
        return path
    paths = find_outputs(path, prefix)
    outputs = BatsimOutputs(
        paths=paths,
        jobs=merge_replacements(read_jobs(paths["jobs"])),
        schedule=read_schedule(paths["schedule"]) if "schedule" in paths else None,
        machine_states=read_machine_states(paths["machine_states"]) if "machine_states" in paths else None,
        consumed_energy=read_consumed_energy(paths["consumed_energy"]) if "consumed_energy" in paths else None,
        pstate_changes=read_pstate_changes(paths["pstate_changes"]) if "pstate_changes" in paths else None,
    )
    started = int((outputs.jobs["final_state"] != "REJECTED").sum())
    if outputs.jobs.empty:
        _refuse_empty_jobs(outputs)
    for kind, frame in (("consumed_energy", outputs.consumed_energy), ("machine_states", outputs.machine_states)):
        if frame is not None and frame.empty and started:
            raise InputError(paths[kind], "row 2", f"missing: a header but no rows, while "
                             f"{counted(started, 'job')} ran ({paths['jobs'].name}); a truncated file?")
    states, changes = outputs.machine_states, outputs.pstate_changes
    _check_schedule_hosts(outputs)
    _check_pstate_hosts(outputs)
    _check_job_hosts(outputs)
    if changes is not None and states is not None and len(states):
        off = (states[list(_NEEDED_MACHINE_STATES[1:4])].to_numpy() > 0).any(axis=1)
        if changes.empty and off.any():
            raise InputError(paths["pstate_changes"], "row 2", "missing: a header but no rows, while hosts were "
                             f"switched off or on ({paths['machine_states'].name}); a truncated file?")
        if off.any() and not (changes["new_pstate"] == -2).any():  # a host starts in a computation pstate
            raise InputError(paths["pstate_changes"], "new_pstate",
                             f"no switch-off request (-2), while {paths['machine_states'].name} has hosts asleep or "
                             f"switching (line {int(np.argmax(off)) + 2}): the files of two runs?")
    return outputs
