"""A sweep: many runs of the embedded simulator in parallel, resumable, one metrics row per run.

A :class:`Run` is everything one simulation needs (platform, workload, scheduler name and options, output
prefix) plus how to measure it (metrics window, all-computing power, extra named windows) and free
``tags`` copied into its row (machine, algorithm, budget...). :func:`run_sweep` executes a list of runs on
Dask distributed (:mod:`distributed`): a local cluster of ``workers`` processes by default, or an existing
Dask scheduler given by its address (``tcp://host:8786``) for many machines, whose workers must see the
same files; one simulation per task (:func:`wattsched.experiments.runner.run_simulation`), each writing
Batsim's five CSV files to its own prefix. It returns a :class:`pandas.DataFrame` with one row per run, in
the order of the list:

* **Resumable**: a run whose five output files exist is not simulated again (``status`` ``skipped``) unless
  ``force``, or unless the stamp ``<prefix>_run.json`` its simulation wrote names other inputs (another platform
  or workload file or contents, scheduler, options or dynamic jobs: a reproduction run again into its folder with
  another seed or size) or was written for other outputs (``run`` or ``api.simulate`` replaced them since); its
  metrics are read from the files. Outputs are written atomically
  (:func:`simulator.outputs.write_outputs`), so an interrupted sweep leaves no half-written run.
* **Robust**: a grid's schedulers and options are built before anything runs (:func:`grid.grid_runs`); a
  run that still fails (a runs file's unknown scheduler or bad option, bad input, a worker that died) gets
  ``status`` ``failed`` and a one-line ``error``; the others go on. :func:`failed_runs` lists them and
  the CLI exits with status 1 when there is any.
* **Progress**: a rich progress bar over runs and over simulated jobs (live, from the workers).

Metrics are :func:`wattsched.analysis.metrics.compute_metrics` (τ, window and ``max_power_w`` from the run) plus,
for each extra window ``name``: ``<name>_energy_j``, ``<name>_utilization`` and
``<name>_nb_jobs_started`` (jobs whose start time falls in ``[t0, t1)``).

Usage::

    runs = [Run("easy", "p.xml", "w.json", "easy-backfill", {}, "out/easy"),
            Run("fcfs", "p.xml", "w.json", "fcfs", {}, "out/fcfs")]
    frame = run_sweep(runs, workers=2, csv_path="out/metrics.csv")

Command line: ``wattsched sweep GRID.yaml`` (a grid of platforms × workloads × schedulers × options × seeds,
:mod:`wattsched.experiments.grid`) or ``wattsched sweep runs.json`` (a list of objects with the fields of
:class:`Run`).
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from wattsched.base.errors import OptionError, WattschedError, printable
from wattsched.base.fileio import emit_text, require_regular_file, system_reason, write_files
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import (check_number, check_output_files, decode_utf8, load_json, option_error,
                                     window_beyond_time)

__all__ = ["Run", "run_sweep", "execute_run", "outputs_exist", "failed_runs", "load_runs", "check_sweep_arguments",
           "check_run_folders", "write_table", "read_timing"]

logger = logging.getLogger(__name__)

Window = tuple[float, float]
#: (run name, jobs done) reported while a run simulates.
JobsCallback = Callable[[str, int], None]

STATUS_DONE = "done"
STATUS_SKIPPED = "skipped"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class Run:
    """One simulation of a sweep.

    Attributes:
        name: unique name of the run (row key, progress and error messages).
        platform: SimGrid platform XML path.
        workload: Batsim workload JSON path.
        scheduler: a name :func:`wattsched.schedulers.adapter.scheduler_handler` accepts (``easy-backfill``).
        options: the scheduler's JSON options.
        prefix: output prefix; the run writes ``<prefix>_jobs.csv`` etc.
        window: ``(t0_s, t1_s)`` of utilization and window energy (default: first submission → makespan).
        max_power_w: all-computing platform power, enables ``window_energy_relative``.
        tau_s: τ of the bounded slowdown, seconds.
        extra_windows: named windows measured too (``{"budget": (172800, 432000)}``).
        tags: free values copied into the run's row (machine, algorithm, budget...).
        dynamic_jobs: the simulator accepts (and acknowledges) dynamic job registration, as Batsim with
            ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``.
    """

    name: str
    platform: str
    workload: str
    scheduler: str
    options: Mapping[str, Any]
    prefix: str
    window: Window | None = None
    max_power_w: float | None = None
    tau_s: float = 10.0
    extra_windows: Mapping[str, Window] = field(default_factory=dict)
    tags: Mapping[str, Any] = field(default_factory=dict)
    dynamic_jobs: bool = False


# ------------------------------------------------------------------------------------------ one run
def outputs_exist(prefix: str | os.PathLike) -> bool:
    """True when the five Batsim output files of ``prefix`` exist."""
    from wattsched.base.batsim_files import output_paths

    return all(path.exists() for path in output_paths(prefix).values())


def run_stamp(run: Run) -> dict[str, Any]:
    """What the outputs of ``run`` depend on: its platform's and workload's paths and contents (sha256), scheduler,
    options and dynamic jobs (``<prefix>_run.json``, written beside the outputs once simulated)."""
    from wattsched.workloads.traces import sha256_of

    scheduler = run.scheduler if isinstance(run.scheduler, str) else (
        f"{getattr(run.scheduler, '__module__', '')}:{getattr(run.scheduler, '__qualname__', run.scheduler)}")
    return {"platform": str(run.platform), "platform_sha256": sha256_of(Path(run.platform)),
            "workload": str(run.workload), "workload_sha256": sha256_of(Path(run.workload)),
            "scheduler": scheduler, "options": json.loads(json.dumps(run.options, sort_keys=True, default=str)),
            "dynamic_jobs": bool(run.dynamic_jobs)}


def _stamp_path(run: Run) -> Path:
    return Path(f"{os.fspath(run.prefix)}_run.json")


def _written_paths(run: Run) -> list[Path]:
    """Every file a run writes: Batsim's outputs and its stamp."""
    from wattsched.base.batsim_files import output_paths

    return [*output_paths(run.prefix).values(), _stamp_path(run)]


def _outputs_sha256(run: Run) -> dict[str, str]:
    """The sha256 of the jobs and schedule files of ``run``, which its stamp names: outputs another simulation wrote
    over them since (``wattsched run -e`` or ``api.simulate(out=)`` into the sweep's folder) are not the stamp's."""
    from wattsched.base.batsim_files import output_paths
    from wattsched.workloads.traces import sha256_of

    paths = output_paths(run.prefix)
    return {kind: sha256_of(paths[kind]) for kind in ("jobs", "schedule")}


def _same_inputs(run: Run, stamp: Mapping[str, Any]) -> bool:
    """False when the stamp the outputs of ``run`` were written with names other inputs, or other outputs than those
    there now (no stamp: outputs of an older version, taken as they are)."""
    path = _stamp_path(run)
    try:
        written = json.loads(path.read_text())
        return isinstance(written, dict) and written.pop("outputs_sha256", None) == _outputs_sha256(run) \
            and written == stamp
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False


def one_line_error(error: BaseException) -> str:
    """``error`` on one line: its message for user errors, ``Type: message`` otherwise."""
    text = str(error) if isinstance(error, WattschedError) else f"{type(error).__name__}: {error}"
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _simulate(run: Run, on_jobs: JobsCallback | None) -> None:
    from wattsched.experiments.runner import run_simulation

    progress = None
    if on_jobs is not None:
        last = [-1, 0.0]

        def report_jobs(now_s: float, done: int, total: int) -> None:
            now = time.monotonic()
            if done != last[0] and (now - last[1] > 0.25 or done == total):
                last[0], last[1] = done, now
                on_jobs(run.name, done)

        progress = report_jobs
    run_simulation(run.platform, run.workload, run.prefix, scheduler=run.scheduler, options=run.options,
                   dynamic_jobs=run.dynamic_jobs, progress=progress)
    gc.collect()  # the simulation's objects (cycles among them) freed before the metrics read the outputs back


def run_metrics(run: Run) -> dict[str, float | int]:
    """Metrics of a finished run from its output files (module docstring)."""
    from wattsched.analysis.metrics import compute_metrics

    return dict(compute_metrics(run.prefix, tau_s=run.tau_s, window=run.window, max_power_w=run.max_power_w,
                                extra_windows=run.extra_windows))


def execute_run(run: Run, *, force: bool = False, on_jobs: JobsCallback | None = None) -> dict[str, Any]:
    """Simulate ``run`` (unless its outputs exist and not ``force``) and measure it; never raises.

    Returns:
        ``{"name", "status", "error", "wall_s", **metrics}`` with status ``done``, ``skipped`` or
        ``failed`` (then ``error`` is one line and there are no metrics).
    """
    t0 = time.perf_counter()
    row: dict[str, Any] = {"name": run.name, "status": STATUS_DONE, "error": ""}
    try:
        try:
            stamp: dict[str, Any] | None = run_stamp(run)
        except OSError:  # an input that cannot be read: the simulation says so, or the outputs are taken as they are
            stamp = None
        if not force and outputs_exist(run.prefix) and (stamp is None or _same_inputs(run, stamp)):
            row["status"] = STATUS_SKIPPED
        else:
            if stamp is not None:  # the stamp can be written (not a folder...): known before the simulation
                check_output_files([_stamp_path(run)], f"output prefix {run.prefix}")
            _simulate(run, on_jobs)
            if stamp is not None:
                stamp = {**stamp, "outputs_sha256": _outputs_sha256(run)}
                emit_text(json.dumps(stamp, indent=1) + "\n", _stamp_path(run))
        row.update(run_metrics(run))
    except Exception as error:  # noqa: BLE001 - a failing run must not stop the sweep
        logger.debug("run %s failed", run.name, exc_info=True)
        row["status"], row["error"] = STATUS_FAILED, one_line_error(error)
    row["wall_s"] = time.perf_counter() - t0
    return row


def _dask_task(run: Run, force: bool, queue_name: str | None) -> dict[str, Any]:
    """Dask task: :func:`execute_run`, its progress sent through a :class:`distributed.Queue`."""
    if queue_name is None:
        return execute_run(run, force=force)
    from distributed import Queue

    queue = Queue(queue_name)
    return execute_run(run, force=force, on_jobs=lambda name, done: queue.put((name, done)))


# ------------------------------------------------------------------------------------------ a sweep
def _check_runs(runs: Sequence[Run], source: str | None = None) -> None:
    """No two runs of one name, nor of prefixes that write the same files (``out/x`` and ``./out/x``, or through a
    symbolic link: the later run replaced the earlier one's outputs and stamp, which a rerun simulated again); no
    run writing an input (:func:`_check_outputs_not_inputs`).

    Raises:
        OptionError: naming the later run and the earlier one (and ``source``, a runs file).
    """
    prefixes = _resolved_prefixes(runs)
    for attr, keys in (("name", [str(run.name) for run in runs]), ("prefix", prefixes)):
        seen: dict[str, int] = {}
        for index, (run, key) in enumerate(zip(runs, keys)):
            first = seen.setdefault(key, index)
            if first == index:
                continue
            value, earlier = str(getattr(run, attr)), str(getattr(runs[first], attr))
            if source is None:
                raise OptionError(f"two runs of the sweep have the same {attr} '{value}'" if value == earlier else
                                  f"two runs of the sweep write the same files: prefixes '{earlier}' and '{value}'")
            raise option_error(source, f"run {index} ({run.name!r}): {attr}",
                               f"the same as run {first}'s, '{value}'" if value == earlier else
                               f"'{value}' writes the same files as run {first}'s prefix '{earlier}'; give another "
                               "prefix")
    check_run_folders(runs, source=source, prefixes=prefixes)
    _check_outputs_not_inputs(runs, source)


def _resolved_prefixes(runs: Sequence[Run]) -> list[str]:
    """The prefix of each run with its folder resolved (``.``, ``..``, ``//`` and symbolic links: one path for one
    folder), then its name as given: a run's outputs are this and their suffixes."""
    folders: dict[str, str] = {}
    resolved = []
    for run in runs:
        folder, name = os.path.split(str(run.prefix))
        try:
            if folder not in folders:
                folders[folder] = os.path.realpath(folder or os.curdir)
            resolved.append(os.path.join(folders[folder], name))
        except (OSError, ValueError):  # a prefix the system refuses (a NUL): the run itself says so
            resolved.append(str(run.prefix))
    return resolved


def check_run_folders(runs: Sequence[Run], written: Sequence[str | os.PathLike] = (), source: str | None = None,
                      option: str = "", prefixes: Sequence[str] | None = None) -> None:
    """No run's outputs go under a file that another run writes (prefix ``a_jobs.csv/b``) or that the sweep writes
    once every run has ended (``written``: a runs file's prefix ``<out>/results.csv/x``): the run failed only when it
    started, or the table (the plots) was refused after every run, the table written without its plots.

    Args:
        prefixes: :func:`_resolved_prefixes` of ``runs``, when known.

    Raises:
        OptionError: naming the run (and ``source``, a runs file), its prefix and the file (and ``option``, which
            makes ``written``).
    """
    prefixes = _resolved_prefixes(runs) if prefixes is None else prefixes
    files: dict[str, tuple[str, str]] = {  # the resolved path: (the path as given, who writes it)
        os.path.realpath(path): (os.fspath(path), f"the sweep writes ({option})" if option else "the sweep writes")
        for path in written}
    for index, (run, prefix) in enumerate(zip(runs, prefixes)):
        resolved = os.path.dirname(prefix)  # (the files a run writes are there, named as _written_paths says)
        for path in _written_paths(run):
            files.setdefault(os.path.join(resolved, path.name), (os.fspath(path), f"run {index} ({run.name!r}) writes"))
    for index, (run, prefix) in enumerate(zip(runs, prefixes)):
        folder = Path(prefix + "_run.json").parent  # (a prefix "a/" writes a/_jobs.csv)
        for parent in (folder, *folder.parents):
            found = files.get(str(parent))
            if found is not None:
                where = f"run {index} ({run.name!r}): prefix"
                raise option_error(where if source is None else source, "" if source is None else where,
                                   f"{run.prefix} puts its outputs under {found[0]}, a file {found[1]}; give "
                                   "another prefix")


def _check_outputs_not_inputs(runs: Sequence[Run], source: str | None = None) -> None:
    """No run writes an output file (its stamp ``<prefix>_run.json`` too) that is an input of a run (its own or
    another's), which it would overwrite: found before the first run starts.

    Raises:
        OptionError: naming the run (and ``source``, a runs file), its prefix and the input.
    """
    from wattsched.experiments.runner import file_identity

    inputs: dict[Any, tuple[str, str, str]] = {}
    for other in runs:
        for what in ("platform", "workload"):
            inputs.setdefault(file_identity(getattr(other, what)), (what, other.name, getattr(other, what)))
    for index, run in enumerate(runs):
        try:
            outputs = _written_paths(run)
        except (OSError, ValueError):  # a prefix the system refuses: the run itself says so
            continue
        for out in outputs:
            found = inputs.get(file_identity(out))
            if found is not None:
                what, name, path = found
                owner = "its" if name == run.name else f"run {name!r}'s"
                where = f"run {index} ({run.name!r}): prefix {run.prefix}"
                raise OptionError(f"{where if source is None else f'{source}: {where}'}: {out} is {owner} {what} "
                                  f"file {path}: the run would overwrite it; give another prefix")


def check_sweep_arguments(workers: Any, dask_scheduler: Any) -> None:
    """``workers`` and ``dask_scheduler`` of :func:`run_sweep`, before anything is made.

    Raises:
        OptionError: ``workers`` not an integer from 1 to the ``workers`` bound, ``dask_scheduler`` not an address
            string, or both given (as the CLI's ``-j`` with ``--dask-scheduler``).
    """
    import numbers

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral)
                                or workers < 1):
        raise OptionError(f"workers (-j) must be an integer ≥ 1, got {type(workers).__name__} {workers!r:.40}")
    if workers is not None and int(workers) > limit("workers"):
        raise OptionError(f"workers (-j) {workers}: {limit_hint('workers', 'processes at once')}")
    if dask_scheduler is not None and (not isinstance(dask_scheduler, str) or not dask_scheduler.strip()):
        raise OptionError("dask_scheduler (--dask-scheduler) must be a Dask scheduler's address such as "
                          f"'tcp://host:8786', got {type(dask_scheduler).__name__} {dask_scheduler!r:.40}")
    if workers is not None and dask_scheduler is not None:
        raise OptionError(f"workers (-j) {workers} sizes the local cluster; with dask_scheduler (--dask-scheduler) "
                          "the scheduler's own workers run the simulations (start more 'dask worker' processes "
                          "instead): give one of them")


def _check_main_guard() -> None:
    """Refuse to start a local cluster from a script that would start it again in every worker: Dask's worker
    processes start by importing the main script (``spawn``), and a :func:`run_sweep` at its top level, not
    under ``if __name__ == "__main__":``, ends in Dask's "Nanny failed to start" after a long wait.

    Raises:
        OptionError: called while a worker process imports the main script, or from the top level of a main
            script outside an ``if __name__ == "__main__":`` block.
    """
    import ast
    import inspect

    main = sys.modules.get("__main__")
    guard = 'put the sweep under \'if __name__ == "__main__":\' (its worker processes import the main script)'
    if getattr(main, "__name__", None) == "__mp_main__":
        raise OptionError(f"a sweep's worker process is starting a sweep: {guard}")
    spec = getattr(main, "__spec__", None)
    if spec is not None and (spec.name == "__main__" or spec.name.endswith(".__main__")):
        return  # python -m package: multiprocessing does not import a package's __main__ again
    path = getattr(main, "__file__", None)
    if not path:
        return  # an interpreter, a notebook, python -c: nothing imports them again
    frame = inspect.currentframe()
    try:
        while frame is not None and frame.f_globals is not getattr(main, "__dict__", None):
            frame = frame.f_back
        if frame is None or frame.f_code.co_name != "<module>":
            return  # called from a function of the script: fine when the call of that function is guarded
        line = frame.f_lineno
    finally:
        del frame
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return
    for node in tree.body:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
                return
            raise OptionError(f"{path}, line {line}: {guard}")


def _workload_jobs(path: str, cache: dict[str, int]) -> int:
    """Number of jobs of a workload file (0 when unreadable: the run itself will report why)."""
    if path not in cache:
        try:
            with open(path, encoding="utf-8") as fh:
                cache[path] = len(json.load(fh).get("jobs", []))
        except (OSError, ValueError, AttributeError):
            cache[path] = 0
    return cache[path]


#: The columns of a run's row that the sweep fills itself (:func:`_base_row`, :func:`execute_run`): a runs file's tag
#: of one of these names would replace the run's own value in the table (``tags: {"prefix": ...}``) or vanish.
ROW_COLUMNS = frozenset({"name", "scheduler", "options", "platform", "workload", "prefix", "workload_nb_jobs",
                         "status", "error", "wall_s"})


def _base_row(run: Run, nb_jobs: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": run.name,
        "scheduler": run.scheduler,
        "options": json.dumps(dict(run.options), sort_keys=True),
        "platform": run.platform,
        "workload": run.workload,
        "prefix": run.prefix,
        "workload_nb_jobs": nb_jobs,
    }
    row.update(run.tags)
    return row


def progress_line(done: int, total: int, row: Mapping[str, Any], elapsed_s: float, failures: int) -> str:
    """The plain progress line of a finished run (:func:`run_sweep` off a terminal), e.g.
    ``runs 3/49 (1 failed), 12 min 5 s: curie/EASY done in 41 s``."""
    wall = row.get("wall_s", math.nan)
    took = f" in {wall:.0f} s" if isinstance(wall, (int, float)) and math.isfinite(wall) else ""
    failed = f" ({failures} failed)" if failures else ""
    minutes, seconds = divmod(int(elapsed_s), 60)
    return f"runs {done}/{total}{failed}, {minutes} min {seconds} s: {printable(str(row['name']))} {row['status']}{took}"


def _progress(show: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description:<14}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                    disable=not show, transient=False)


def run_sweep(
    runs: Sequence[Run],
    *,
    workers: int | None = None,
    force: bool = False,
    csv_path: str | os.PathLike | None = None,
    show_progress: bool | None = None,
    dask_scheduler: str | None = None,
) -> pd.DataFrame:
    """Execute ``runs`` and return one row per run (module docstring), saved to ``csv_path`` if given.

    Args:
        runs: the runs; names and prefixes must be unique.
        workers: processes of the local Dask cluster (default ``os.cpu_count()``); 1 (and no
            ``dask_scheduler``) runs everything in this process.
        force: simulate again runs whose outputs exist.
        csv_path: where to write the frame as CSV.
        show_progress: draw the progress bar (True), or nothing (False); by default the bar when stderr is a
            terminal, else one plain line per finished run on stderr (a long study run under ``nohup`` or in CI
            still says how far it is).
        dask_scheduler: the address of a running Dask scheduler (``tcp://host:8786``) to run on instead of a
            local cluster; its workers must see the runs' files at the same paths.

    Raises:
        OptionError: duplicate names or prefixes, ``workers`` < 1, or a Dask scheduler that cannot be
            reached. Failing runs do not raise.
    """
    check_sweep_arguments(workers, dask_scheduler)
    _check_runs(runs)
    workers = (os.cpu_count() or 1) if workers is None else int(workers)
    in_process = dask_scheduler is None and (workers == 1 or len(runs) <= 1)
    if not in_process and dask_scheduler is None:
        _check_main_guard()
    lines = show_progress is None and not sys.stderr.isatty()  # off a terminal: a line per run instead of a bar
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    started_s = time.perf_counter()
    cache: dict[str, int] = {}
    jobs_of = {run.name: _workload_jobs(run.workload, cache) for run in runs}
    results: dict[str, dict[str, Any]] = {}
    done_jobs: dict[str, int] = {run.name: 0 for run in runs}

    with _progress(show_progress) as bar:
        runs_task = bar.add_task("runs", total=len(runs), note="")
        jobs_task = bar.add_task("simulated jobs", total=sum(jobs_of.values()), note="")

        def on_jobs(name: str, done: int) -> None:
            done_jobs[name] = done
            bar.update(jobs_task, completed=sum(done_jobs.values()))

        def finish(row: dict[str, Any]) -> None:
            results[row["name"]] = row
            on_jobs(row["name"], jobs_of[row["name"]])
            failures = sum(r["status"] == STATUS_FAILED for r in results.values())
            bar.update(runs_task, advance=1, note=f"{failures} failed" if failures else "")
            if lines:
                print(progress_line(len(results), len(runs), row, time.perf_counter() - started_s, failures),
                      file=sys.stderr, flush=True)
            if row["status"] == STATUS_FAILED:
                logger.info("run %s failed: %s", printable(str(row["name"])), printable(str(row["error"])))

        if in_process:
            for run in runs:
                finish(execute_run(run, force=force, on_jobs=on_jobs))
        else:
            _run_dask(runs, workers, dask_scheduler, force, on_jobs, finish, show_progress)

    rows = [{**_base_row(run, jobs_of[run.name]), **results[run.name]} for run in runs]
    frame = _zero_state_counts(pd.DataFrame(rows))
    if csv_path is not None:
        write_table(frame, csv_path)
    return frame


def _zero_state_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with 0 jobs, not NaN, in the final-state counts (``nb_jobs_completed_walltime_reached``) of the runs
    measured (not failed) whose jobs ended in no such state: a run's metrics count only the states its jobs ended
    in, and a column another run's jobs made was empty in the others' rows."""
    from wattsched.analysis.metrics import _state_key
    from wattsched.analysis.outputs import JOB_FINAL_STATES

    measured = frame["status"] != STATUS_FAILED
    for column in (_state_key(state) for state in JOB_FINAL_STATES):
        if column in frame:
            frame.loc[measured, column] = frame.loc[measured, column].fillna(0)
            if not frame[column].isna().any():
                frame[column] = frame[column].astype("int64")
    return frame


def _run_dask(runs: Sequence[Run], workers: int, address: str | None, force: bool, on_jobs: JobsCallback,
              finish: Callable[[dict[str, Any]], None], show_progress: bool) -> None:
    """The runs as tasks of a Dask cluster: a local one of ``workers`` processes, or the one at ``address``.

    Interrupted, it closes the local cluster, whose worker processes still simulating are killed after a few seconds,
    then removes the temporary outputs they were writing (:func:`~wattsched.base.fileio.remove_temporaries`) in the
    runs that had not finished.
    """
    from contextlib import ExitStack

    from distributed import Client, Queue, wait

    from wattsched.experiments.cluster import local_cluster

    unfinished = {run.name: run for run in runs}
    with ExitStack() as stack:
        # Dask's own INFO lines (workers starting, comms closing) are noise in a sweep's output; -vv shows them.
        dask_logger = logging.getLogger("distributed")
        stack.callback(dask_logger.setLevel, dask_logger.level)
        if not logger.isEnabledFor(logging.DEBUG):
            dask_logger.setLevel(logging.ERROR)
        if address is not None:
            try:
                client = stack.enter_context(Client(address, timeout="10s"))
            except (OSError, TimeoutError, ValueError) as error:
                raise OptionError(f"dask_scheduler (--dask-scheduler) {address}: cannot reach a Dask scheduler there ({error})") from None
        else:
            stack.callback(_remove_temporaries, unfinished)  # last, once the cluster is closed (its workers gone)
            # workers' logs silenced: errors come back through the futures (as in wattsched.web.runs)
            try:
                cluster = stack.enter_context(local_cluster(min(workers, len(runs))))
            except (OSError, RuntimeError) as error:  # Dask's "Nanny failed to start." and a traceback, before
                raise OptionError(f"workers (-j) {workers}: cannot start the local Dask cluster's worker processes "
                                  f"({_system_cause(error)}); give -j 1 to run in this process, or free or raise "
                                  "what is short (open files: ulimit -n)") from None
            client = stack.enter_context(Client(cluster))
        queue_name = f"wattsched-progress-{uuid.uuid4().hex}" if show_progress else None
        queue = Queue(queue_name, client=client) if queue_name is not None else None
        pending = {client.submit(_dask_task, run, force, queue_name, pure=False, key=f"run-{uuid.uuid4().hex}"): run
                   for run in runs}

        def drain() -> None:
            if queue is None:
                return
            for name, done in queue.get(batch=True):
                on_jobs(name, done)

        while pending:
            try:
                finished, _ = wait(list(pending), timeout=0.3, return_when="FIRST_COMPLETED")
            except TimeoutError:  # nothing finished within the timeout
                finished = set()
            drain()
            for future in finished:
                run = pending.pop(future)
                del unfinished[run.name]
                try:
                    row = future.result()
                except Exception as error:  # noqa: BLE001 - e.g. a worker that died under the run
                    row = {"name": run.name, "status": STATUS_FAILED, "error": one_line_error(error),
                           "wall_s": math.nan}
                finish(row)
        drain()


def _remove_temporaries(runs: Mapping[str, Run]) -> None:
    """The temporary outputs (and stamps) that a killed worker process left in ``runs`` (by name)."""
    from wattsched.base.fileio import remove_temporaries

    for run in runs.values():
        try:
            removed = remove_temporaries(_written_paths(run))
        except (OSError, ValueError) as error:  # (a cleanup must not hide why the sweep stopped)
            logger.warning("run %s: cannot remove its temporary outputs (%s)", run.name, error)
        else:
            if removed:
                logger.info("run %s: removed %d temporary files its worker left", run.name, len(removed))


def failed_runs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """``(name, error)`` of every failed run of a sweep's frame."""
    if "status" not in frame:
        return []
    failed = frame[frame["status"] == STATUS_FAILED]
    names = failed["name"] if "name" in failed else failed.index.to_series()
    errors = failed["error"] if "error" in failed else pd.Series([""] * len(failed))
    return [(str(n), str(e)) for n, e in zip(names, errors)]


# ---------------------------------------------------------------------------------------------- CLI
def load_runs(path: str | os.PathLike) -> list[Run]:
    """Runs from a JSON list of objects with :class:`Run`'s fields.

    Raises:
        OptionError: unreadable file, not a list, an empty list, a duplicate key, or an entry that is not an
            object, with a missing or unknown field or a field of the wrong type or value, whose ``prefix``
            is a folder, or whose name or outputs are another run's (naming the run's index and the field): found
            before the first run starts.
    """
    try:
        require_regular_file(path)
        data = Path(path).read_bytes()
    except (OSError, ValueError) as error:
        raise OptionError(f"{path}: cannot read the runs ({error})") from None
    # UTF-8, as the workload; a BOM read as the grid's is
    text = decode_utf8(data, str(path), lambda source, _field, problem: OptionError(
        f"{source}: cannot read the runs: {problem}"))
    content = load_json(text, str(path), option_error, unique_keys=True)
    if not isinstance(content, list):
        raise OptionError(f"{path}: expected a JSON list of runs")
    if not content:  # a sweep of nothing has no table to write
        raise OptionError(f"{path}: the list of runs is empty")
    runs = [_run_from_entry(entry, str(path), i) for i, entry in enumerate(content)]
    _check_prefixes(runs, str(path))
    _check_runs(runs, str(path))
    return runs


def _check_prefixes(runs: Sequence[Run], source: str) -> None:
    """No run's output prefix is a folder or holds a control character (its run would fail only when it starts,
    after others ran).

    Raises:
        OptionError: naming ``source``, the run's index and name, and the field.
    """
    from wattsched.base.validate import control_character_problem, home_folder_problem
    from wattsched.experiments.runner import prefix_folder_problem, shown_path

    for index, run in enumerate(runs):
        problem = control_character_problem(run.prefix) or home_folder_problem(run.prefix)
        problem = prefix_folder_problem(run.prefix) if problem is None else f"{shown_path(run.prefix)} {problem}"
        if problem is not None:
            raise option_error(source, f"run {index} ({run.name!r}): prefix", problem)


#: The fields of a run entry (:class:`Run`'s), and those without a default.
_RUN_FIELDS = tuple(f.name for f in fields(Run))
_RUN_REQUIRED = tuple(f.name for f in fields(Run) if f.default is MISSING and f.default_factory is MISSING)


def _json_text(value: Any) -> str:
    """``value`` as it reads in the JSON file, cut at 40 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _window_of(value: Any, source: str, field: str) -> Window:
    """``[start_s, end_s]`` of a run entry: two finite numbers, 0 ≤ start < end (as the metrics take them)."""
    if not isinstance(value, list) or len(value) != 2:
        raise option_error(source, field, f"must be [start_s, end_s], got {_json_text(value)}")
    start = check_number(value[0], source, f"{field} start", min=0.0, error=option_error)
    end = check_number(value[1], source, f"{field} end", error=option_error)
    if not end > start:
        raise option_error(source, field, f"end {end:g} is not after start {start:g}")
    beyond = window_beyond_time(start, end)
    if beyond:
        raise option_error(source, field, beyond)
    return start, end


def _run_from_entry(entry: Any, source: str, index: int) -> Run:
    """A :class:`Run` from entry ``index`` of a runs file, every field's type and value checked before any run
    starts (a bad τ, window or power must not be found only after the simulation, its outputs written).

    Raises:
        OptionError: naming ``source``, the run's index and the field.
    """
    where = f"run {index}"
    if not isinstance(entry, dict):
        raise option_error(source, where, f"must be a JSON object with the fields {', '.join(_RUN_REQUIRED)}, "
                                          f"got {_json_text(entry)}")
    unknown = sorted(set(entry) - set(_RUN_FIELDS))
    if unknown:
        raise option_error(source, f"{where}: {unknown[0]}", f"unknown field (fields: {', '.join(_RUN_FIELDS)})")
    missing = [key for key in _RUN_REQUIRED if key not in entry]
    if missing:
        raise option_error(source, f"{where}: {missing[0]}", "missing")
    for key in ("name", "platform", "workload", "scheduler", "prefix"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise option_error(source, f"{where}: {key}",
                               f"must be a non-empty string, got {_json_text(entry[key])}")
    values: dict[str, Any] = dict(entry)
    for key, what in (("options", "scheduler options"), ("tags", "free values"),
                      ("extra_windows", "named windows")):
        if key in entry and not isinstance(entry[key], dict):
            raise option_error(source, f"{where}: {key}",
                               f"must be a JSON object of {what}, got {_json_text(entry[key])}")
    from wattsched.analysis.metrics import FIXED_METRICS, extra_window_columns, extra_window_problem

    for name in entry.get("extra_windows", {}):
        problem = extra_window_problem(name)
        if problem is not None:
            raise option_error(source, f"{where}: extra_windows.{name}", problem)
    # a tag of a metric's name vanished from the table under the metric (tags: {"utilization": ...})
    metrics = FIXED_METRICS.union(*(extra_window_columns(name) for name in entry.get("extra_windows", {})))
    clash = sorted((ROW_COLUMNS | metrics).intersection(entry.get("tags", {})))
    if clash:
        raise option_error(source, f"{where}: tags.{clash[0]}", "a column the sweep fills itself (the run's own "
                                                                "field, its status or a metric): give the tag "
                                                                "another name")
    if entry.get("window") is not None:
        values["window"] = _window_of(entry["window"], source, f"{where}: window")
    values["extra_windows"] = {name: _window_of(window, source, f"{where}: extra_windows.{name}")
                               for name, window in entry.get("extra_windows", {}).items()}
    if "tau_s" in entry:
        values["tau_s"] = check_number(entry["tau_s"], source, f"{where}: tau_s", min=0.0, min_open=True,
                                       error=option_error)
    if entry.get("max_power_w") is not None:
        values["max_power_w"] = check_number(entry["max_power_w"], source, f"{where}: max_power_w", min=0.0,
                                             min_open=True, error=option_error)
    if not isinstance(entry.get("dynamic_jobs", False), bool):
        raise option_error(source, f"{where}: dynamic_jobs",
                           f"must be true or false, got {_json_text(entry['dynamic_jobs'])}")
    return Run(**values)


def runs_to_json(runs: Sequence[Run]) -> str:
    """The inverse of :func:`load_runs`."""
    return json.dumps([{**asdict(r), "options": dict(r.options)} for r in runs], indent=2)


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """``frame`` as CSV at ``path``, written atomically (a reproduction's tables: a folder there, or a place that
    cannot be written, is one line, and an interruption leaves no half-written table)."""
    write_files({Path(path): lambda tmp: frame.to_csv(tmp, index=False)})


def _system_cause(error: BaseException) -> str:
    """The system's words for why ``error`` happened: the first :class:`OSError` of its chain of causes (Dask wraps
    "Too many open files" in "Nanny failed to start."), else ``error`` itself."""
    seen: BaseException | None = error
    for _ in range(16):
        if seen is None:
            break
        if isinstance(seen, OSError):
            return system_reason(seen)
        seen = seen.__cause__ or seen.__context__
    return str(error) or type(error).__name__


def read_timing(path: str | os.PathLike) -> dict[str, Any] | None:
    """The ``timing.json`` a reproduction keeps in its output folder (``wall_s``, ``runs`` and ``workers`` of the
    invocation that simulated every run, shown by a later one that only re-renders the report); None when absent.

    Raises:
        InputError: naming the file and the field: no regular file, not UTF-8 JSON, not an object, or a field
            missing or of the wrong type or value (a file edited by hand or left by another program).
    """
    from wattsched.base.errors import InputError

    source = str(path)
    hint = "delete it: it is written again once every run is simulated (--force)"
    try:
        require_regular_file(path)
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(source, "", f"cannot read the timing of the runs ({error.strerror or error}); {hint}"
                         ) from None
    content = load_json(decode_utf8(data, source), source)
    if not isinstance(content, dict):
        raise InputError(source, "", f"expected a JSON object of wall_s, runs and workers; {hint}")
    for key, integer, minimum in (("wall_s", False, 0.0), ("runs", True, 1), ("workers", True, 1)):
        if key not in content:
            raise InputError(source, key, f"missing; {hint}")
        check_number(content[key], source, key, min=minimum, integer=integer)
    return content


def report_failures(frame: pd.DataFrame, stream: Any = None) -> int:
    """Print one line per failed run on ``stream`` (stderr); returns the number of failures."""
    stream = stream or sys.stderr
    failures = failed_runs(frame)
    for name, error in failures:
        stream.write(printable(f"run {name} failed: {error}") + "\n")  # (a name from a runs file: no ESC raw)
    return len(failures)
