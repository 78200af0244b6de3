"""Golden regression: compare a run's Batsim output files with stored golden ones, readably.

A golden folder holds the five output CSVs of a reference run (``<prefix>_jobs.csv``, ``_schedule.csv``,
``_machine_states.csv``, ``_consumed_energy.csv``, ``_pstate_changes.csv``). :func:`compare_outputs`
lists every :class:`Difference`, :func:`format_report` turns them into a short text a person can read,
and :func:`update_golden` regenerates the golden files from a run::

    diffs = compare_outputs("results/out", "tests/golden/easy")
    print(format_report(diffs))       # out_jobs.csv: job 7: starting_time 120.000000 (golden) → 130.000000 (run)
    update_golden("results/out", "tests/golden/easy")

or from a shell: ``wattsched regress RUN GOLDEN [--update]``.

Comparison rules (docs/architecture.md §9: times exact, energy to 1e-6 relative):

* ``jobs.csv``: rows keyed by ``job_id`` (``workload!job_id`` when several workloads); missing and
  extra jobs are reported, then every column of the common jobs; a different completion order is
  reported once.
* ``schedule.csv``: key by key, ignoring the wall-clock ``scheduling_time`` and ``simulation_time``.
* ``machine_states.csv``, ``pstate_changes.csv``, ``consumed_energy.csv``: row by row. Rows are aligned
  on their exact columns (a deleted or inserted row shows as one missing/extra row, not as a shift of
  every following row), then compared column by column.
* Values are compared as numbers when both parse (``0`` equals ``0.000000``), else as text. Energy and
  power columns (``consumed_energy``, ``consumed_joules``, ``energy``, ``epower``, ``wattmin``) match
  within ``rel_tol_energy`` (or ``abs_tol_energy``, the 1e-6 resolution of Batsim's ``%f``); every other
  value, times included, must be equal.
"""

from __future__ import annotations

import csv
import difflib
import functools
import logging
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from wattsched.base.errors import InputError, OutputError, counted, printable
from wattsched.base.fileio import require_regular_file, write_files
from wattsched.analysis.outputs import OUTPUT_KINDS, find_outputs, load_outputs

__all__ = [
    "ENERGY_COLUMNS",
    "IGNORED_SCHEDULE_KEYS",
    "Difference",
    "compare_outputs",
    "format_report",
    "update_golden",
]

logger = logging.getLogger(__name__)

#: Columns compared within the energy tolerance.
ENERGY_COLUMNS: Final[frozenset[str]] = frozenset(
    {"consumed_energy", "consumed_joules", "energy", "epower", "wattmin"}
)
#: Wall-clock keys of schedule.csv, never equal between two runs.
IGNORED_SCHEDULE_KEYS: Final[frozenset[str]] = frozenset({"scheduling_time", "simulation_time"})
#: Resolution of Batsim's ``%f`` numbers.
DEFAULT_ABS_TOL_ENERGY: Final[float] = 1e-6

_MISSING: Final[str] = "(missing)"

#: The columns Batsim fills in every row (True: with a number), by output kind: an empty cell there (a truncated
#: row ``37852,0,0,0,6,``) or text in a number column is a broken file, refused with its line and column rather
#: than compared (a golden row cut short showed as differences of the run). Other cells may be empty (the times
#: of a rejected job, its metadata) and are compared as text; hand-edited numbers are compared, not refused.
_FILLED: Final[dict[str, dict[str, bool]]] = {
    "jobs": {"job_id": False, "workload_name": False, "profile": False, "submission_time": True,
             "requested_number_of_resources": True, "requested_time": False, "success": True, "final_state": False},
    "machine_states": dict.fromkeys(("time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle",
                                     "nb_computing"), True),
    "consumed_energy": {"time": True, "energy": True, "event_type": False, "wattmin": False},
    "pstate_changes": {"time": True, "machine_id": False, "new_pstate": True},
}


@dataclass(frozen=True)
class Difference:
    """One difference between a run and its golden outputs.

    Attributes:
        file: the output file name, e.g. ``out_jobs.csv``.
        where: the row: ``"job 7"``, ``"row 12 (time 450.000000)"``, ``"header"``, ``""`` for schedule keys.
        golden: the golden value (or row, or ``"(missing)"``).
        actual: the run's value (or row, or ``"(missing)"``).
        column: the column or key, ``""`` when the whole row or file differs.
    """

    file: str
    where: str
    golden: str
    actual: str
    column: str = ""

    def __str__(self) -> str:
        parts = [self.file]
        if self.where:
            parts.append(self.where)
        location = ": ".join(parts)
        column = f"{self.column} " if self.column else ""
        # job ids and cells are a file's text: a control character in one (Batsim accepts ESC in a job id) is
        # escaped, not sent to the terminal
        return printable(f"{location}: {column}{_show(self.golden)} (golden) → {_show(self.actual)} (run)")


def _show(value: str) -> str:
    return value if value != "" else "(empty)"


# ------------------------------------------------------------------------------------------ reading
def _read_rows(path: Path, kind: str = "") -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows and the file's line number of each row (blank lines skipped, a quoted line break counted),
    as text; the cells of ``kind``'s :data:`_FILLED` columns checked.

    Raises:
        InputError: naming the file, and the line and column of a row that is not whole.
    """
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        require_regular_file(path)
        with path.open(newline="", encoding="utf-8-sig") as handle:  # a BOM (a spreadsheet's save), as pandas
            reader = csv.reader(handle)
            last = 0
            for row in reader:
                if row or not rows:  # a blank line is no row, but one before the header leaves no header
                    rows.append(row)
                    lines.append(last + 1)
                last = reader.line_num
    except OSError as error:
        raise InputError(path, "", f"cannot read ({error.strerror})") from error
    except (csv.Error, UnicodeDecodeError) as error:
        raise InputError(path, "", f"not a readable CSV file ({error})") from error
    if not rows:
        raise InputError(path, "header", "empty file, a CSV header was expected")
    if not rows[0]:
        raise InputError(path, "line 1", "blank, a CSV header was expected")
    header, body, lines = rows[0], rows[1:], lines[1:]
    twice = next((name for i, name in enumerate(header) if name in header[:i]), None)
    if twice is not None:  # the second column would hide the first in every row's dict
        raise InputError(path, f"column '{twice}'", "twice in the header")
    for number, row in zip(lines, body):
        if len(row) != len(header):
            raise InputError(path, f"line {number}", f"{counted(len(row), 'field')} for {counted(len(header), 'column')}")
    for column, numeric in _FILLED.get(kind, {}).items():
        if column not in header:  # a column missing is a difference of the headers
            continue
        index = header.index(column)
        for number, row in zip(lines, body):
            if not row[index]:
                raise InputError(path, f"line {number}, column '{column}'",
                                 "empty, where Batsim writes a value in every row (a truncated row?)")
            if numeric and not _is_number(row[index]):
                raise InputError(path, f"line {number}, column '{column}'",
                                 f"{printable(repr(row[index][:40]))} is not a number")
    return header, body, lines


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------- comparing
@dataclass(frozen=True)
class _Tolerance:
    rel_energy: float
    abs_energy: float

    def same(self, column: str, golden: str, actual: str) -> bool:
        """Whether two cell texts are equal under the rules of the module docstring."""
        if golden == actual:
            return True
        try:
            golden_value, actual_value = float(golden), float(actual)
        except ValueError:
            return False
        if math.isnan(golden_value) and math.isnan(actual_value):
            return True
        if column in ENERGY_COLUMNS:
            return math.isclose(golden_value, actual_value, rel_tol=self.rel_energy, abs_tol=self.abs_energy)
        return golden_value == actual_value


def _compare_header(name: str, golden: list[str], actual: list[str]) -> tuple[list[Difference], list[str]]:
    """Differences of column sets, and the columns both files have (in golden order)."""
    diffs = [Difference(name, "header", "present", _MISSING, column) for column in golden if column not in actual]
    diffs += [Difference(name, "header", _MISSING, "present", column) for column in actual if column not in golden]
    return diffs, [column for column in golden if column in actual]


def _compare_cells(
    name: str, where: str, columns: list[str], golden: dict[str, str], actual: dict[str, str], tol: _Tolerance
) -> list[Difference]:
    return [
        Difference(name, where, golden[column], actual[column], column)
        for column in columns
        if not tol.same(column, golden[column], actual[column])
    ]


def _job_keys(header: list[str], rows: list[list[str]], lines: list[int], path: Path) -> list[str]:
    if "job_id" not in header:
        raise InputError(path, "column 'job_id'", "missing from the header")
    job = header.index("job_id")
    keys = [row[job] for row in rows]
    if "workload_name" in header:
        workload = header.index("workload_name")
        if len({row[workload] for row in rows}) > 1:
            keys = [f"{row[workload]}!{row[job]}" for row in rows]
    first: dict[str, int] = {}
    for number, key in zip(lines, keys):  # a job twice: its rows would hide each other (metrics refuse it)
        if key in first:
            raise InputError(path, f"line {number}, column 'job_id'",
                             printable(f"job {key} a second time (first on line {first[key]})"))
        first[key] = number
    return keys


def _compare_jobs(name: str, golden_path: Path, run_path: Path, tol: _Tolerance) -> list[Difference]:
    golden_header, golden_rows, golden_lines = _read_rows(golden_path, "jobs")
    run_header, run_rows, run_lines = _read_rows(run_path, "jobs")
    diffs, columns = _compare_header(name, golden_header, run_header)
    golden_keys = _job_keys(golden_header, golden_rows, golden_lines, golden_path)
    run_keys = _job_keys(run_header, run_rows, run_lines, run_path)
    golden_jobs = {key: dict(zip(golden_header, row)) for key, row in zip(golden_keys, golden_rows)}
    run_jobs = {key: dict(zip(run_header, row)) for key, row in zip(run_keys, run_rows)}
    for key in golden_keys:
        if key not in run_jobs:
            diffs.append(Difference(name, f"job {key}", "present", _MISSING))
    for key in run_keys:
        if key not in golden_jobs:
            diffs.append(Difference(name, f"job {key}", _MISSING, "present"))
    columns = [column for column in columns if column != "job_id"]
    for key in golden_keys:
        if key in run_jobs:
            diffs += _compare_cells(name, f"job {key}", columns, golden_jobs[key], run_jobs[key], tol)
    common_golden = [key for key in golden_keys if key in run_jobs]
    common_run = [key for key in run_keys if key in golden_jobs]
    if common_golden != common_run:
        position = next(i for i, (g, r) in enumerate(zip(common_golden, common_run)) if g != r)
        diffs.append(
            Difference(name, f"completion order, position {position + 1}",
                       f"job {common_golden[position]}", f"job {common_run[position]}")
        )
    return diffs


def _schedule_row(path: Path) -> tuple[list[str], dict[str, str]]:
    """The header and the one row of a ``_schedule.csv`` (Batsim writes one row: a second was never compared).

    Raises:
        InputError: naming the file, and the line of a second row, or the header of a file without a row.
    """
    header, rows, lines = _read_rows(path)
    if len(rows) != 1:
        raise InputError(path, f"line {lines[1]}" if rows else "header",
                         f"{counted(len(rows), 'row')} after the header; Batsim writes one row in a _schedule.csv")
    return header, dict(zip(header, rows[0]))


def _compare_schedule(name: str, golden_path: Path, run_path: Path, tol: _Tolerance) -> list[Difference]:
    golden_header, golden = _schedule_row(golden_path)
    run_header, actual = _schedule_row(run_path)
    diffs: list[Difference] = []
    for key in golden_header:
        if key in IGNORED_SCHEDULE_KEYS:
            continue
        if key not in actual:
            diffs.append(Difference(name, "", golden.get(key, ""), _MISSING, key))
        elif key not in golden:
            diffs.append(Difference(name, "", _MISSING, actual[key], key))
        elif not tol.same(key, golden[key], actual[key]):
            diffs.append(Difference(name, "", golden[key], actual[key], key))
    for key in run_header:
        if key not in golden_header and key not in IGNORED_SCHEDULE_KEYS:
            diffs.append(Difference(name, "", _MISSING, actual.get(key, ""), key))
    return diffs


def _compare_rows(name: str, kind: str, golden_path: Path, run_path: Path, tol: _Tolerance) -> list[Difference]:
    golden_header, golden_rows, _ = _read_rows(golden_path, kind)
    run_header, run_rows, _ = _read_rows(run_path, kind)
    diffs, columns = _compare_header(name, golden_header, run_header)
    golden_dicts = [dict(zip(golden_header, row)) for row in golden_rows]
    run_dicts = [dict(zip(run_header, row)) for row in run_rows]
    exact = [column for column in columns if column not in ENERGY_COLUMNS]

    def align_key(row: dict[str, str]) -> tuple[str, ...]:
        return tuple(row[column] for column in exact)

    def where(number: int, row: dict[str, str]) -> str:
        return f"row {number + 1} (time {row['time']})" if "time" in row else f"row {number + 1}"

    matcher = difflib.SequenceMatcher(
        None, [align_key(r) for r in golden_dicts], [align_key(r) for r in run_dicts], autojunk=False
    )
    for tag, g0, g1, r0, r1 in matcher.get_opcodes():
        paired = min(g1 - g0, r1 - r0) if tag == "replace" else (g1 - g0 if tag == "equal" else 0)
        for offset in range(paired):
            golden_row, run_row = golden_dicts[g0 + offset], run_dicts[r0 + offset]
            diffs += _compare_cells(name, where(g0 + offset, golden_row), columns, golden_row, run_row, tol)
        for number in range(g0 + paired, g1):
            diffs.append(Difference(name, where(number, golden_dicts[number]), ",".join(golden_rows[number]), _MISSING))
        for number in range(r0 + paired, r1):
            diffs.append(Difference(name, f"row {number + 1} of run", _MISSING, ",".join(run_rows[number])))
    return diffs


def compare_outputs(
    run: str | Path,
    golden: str | Path,
    *,
    rel_tol_energy: float = 1e-6,
    abs_tol_energy: float = DEFAULT_ABS_TOL_ENERGY,
) -> list[Difference]:
    """Every difference between a run's output files and the golden ones.

    Args:
        run: the run's outputs: folder or prefix path (:func:`wattsched.analysis.outputs.find_outputs`).
        golden: the golden outputs, same forms.
        rel_tol_energy: relative tolerance on energy and power columns.
        abs_tol_energy: absolute tolerance on them, joules or watts (Batsim prints 6 decimals).

    Returns:
        The differences, file by file in the order jobs, schedule, machine_states, consumed_energy,
        pstate_changes; empty when the run matches.

    Raises:
        InputError: a folder without outputs, or an unreadable CSV file.
    """
    run_paths = find_outputs(run)
    golden_paths = find_outputs(golden)
    tol = _Tolerance(rel_tol_energy, abs_tol_energy)
    diffs: list[Difference] = []
    for kind in OUTPUT_KINDS:
        golden_path, run_path = golden_paths.get(kind), run_paths.get(kind)
        if golden_path is None and run_path is None:
            continue
        name = (golden_path or run_path).name  # type: ignore[union-attr]
        if run_path is None:
            diffs.append(Difference(name, "file", "present", _MISSING))
            continue
        if golden_path is None:
            diffs.append(Difference(name, "file", _MISSING, "present"))
            continue
        if kind == "jobs":
            diffs += _compare_jobs(name, golden_path, run_path, tol)
        elif kind == "schedule":
            diffs += _compare_schedule(name, golden_path, run_path, tol)
        else:
            diffs += _compare_rows(name, kind, golden_path, run_path, tol)
    logger.debug("%d differences between %s and golden %s", len(diffs), run, golden)
    return diffs


def format_report(diffs: Sequence[Difference], limit: int = 20) -> str:
    """The first ``limit`` differences, one a line, then ``... and N more``."""
    if not diffs:
        return "no differences"
    noun = "difference" if len(diffs) == 1 else "differences"
    lines = [f"{len(diffs)} {noun}:"]
    lines += [f"  {diff}" for diff in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"  ... and {len(diffs) - limit} more")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- updating
def _check_readable(run: str | Path, paths: dict[str, Path]) -> None:
    """Each output file reads as :func:`compare_outputs` reads it (a header, every row all its fields, a
    ``job_id`` column in the jobs file) and as ``metrics`` loads it (:func:`~wattsched.analysis.outputs.
    load_outputs`: finite numbers, no truncated file): a mangled run is not made golden."""
    for kind, path in paths.items():
        header, rows, lines = _read_rows(path)
        if kind == "jobs":
            _job_keys(header, rows, lines, path)
    load_outputs(run)


def update_golden(run: str | Path, golden: str | Path, *, prefix: str | None = None) -> list[Path]:
    """Copy a run's output files into the golden location, once all of them read as :func:`compare_outputs`
    and ``metrics`` read them. Every target is checked first and the files are staged (all written to temporary
    files beside their targets, then all renamed), so a failure leaves the golden folder as it was.

    Args:
        run: the run's outputs: folder or prefix path.
        golden: the golden folder (created when missing), or a prefix path in the form
            :func:`compare_outputs` takes (``tests/golden/easy/out`` for ``out_jobs.csv`` ...), used as one
            when it is not a folder and its ``<prefix>_jobs.csv`` exists, or when it names that file.
        prefix: the golden files' prefix; default the golden prefix path's, else the prefix of the golden
            files already in the folder, else the run's prefix.

    Returns:
        The golden files written. Golden files of kinds the run did not write are removed.

    Raises:
        InputError: the run has no outputs, or one of its files is malformed (nothing is copied then).
        OutputError: a golden target that cannot be written (a folder, a FIFO, a read-only place); nothing is
            changed then.
    """
    from wattsched.base.validate import check_output_files, file_name_problem

    run_paths = find_outputs(run)
    _check_readable(run, run_paths)
    problem = file_name_problem(golden)
    if problem is not None:  # is_dir() below would raise (a name too long)
        raise OutputError(f"golden {golden}: cannot write there: {problem}")
    folder = Path(golden)
    if not folder.is_dir() and (folder.name.endswith("_jobs.csv") or
                                folder.with_name(f"{folder.name}_jobs.csv").is_file()):
        folder, named = folder.parent, folder.name.removesuffix("_jobs.csv")
        prefix = named if prefix is None else prefix
    if folder.exists() and not folder.is_dir():
        raise InputError(folder, "", "the golden location must be a folder")
    check_output_files([folder / run_paths["jobs"].name], f"golden {folder}")  # a parent that is a file, read-only
    if prefix is None:
        try:
            prefix = find_outputs(folder)["jobs"].name[: -len("_jobs.csv")]
        except InputError:
            prefix = run_paths["jobs"].name[: -len("_jobs.csv")]
    written = [folder / f"{prefix}_{kind}.csv" for kind in OUTPUT_KINDS if kind in run_paths]
    stale = [folder / f"{prefix}_{kind}.csv" for kind in OUTPUT_KINDS if kind not in run_paths]
    stale = [target for target in stale if os.path.lexists(target)]
    for target in stale:  # removed below: only a regular file (or a link) is, checked before anything is written
        if target.is_dir() and not target.is_symlink():
            raise OutputError(f"cannot remove {target}: it is a folder")
    sources = [run_paths[kind] for kind in OUTPUT_KINDS if kind in run_paths]
    # every target checked first, all renamed only once all are written (a full disk: nothing changed, one named)
    write_files({target: functools.partial(shutil.copyfile, source) for source, target in zip(sources, written)})
    for target in stale:
        target.unlink()
        logger.info("removed %s: the run wrote no %s output", target, target.name)
    logger.info("golden %s updated from %s (%s)", folder, run, counted(len(written), "file"))
    return written
