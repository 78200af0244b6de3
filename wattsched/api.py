"""wattsched from Python: what a notebook imports.

Simulate once::

    from wattsched import api

    result = api.simulate("platforms/taurus_16.xml", "workloads/demo_taurus16.json",
                          scheduler="energy-bud", options={"budget_fraction": 0.6, "window_end_s": 43200})
    result.metrics["total_energy_j"]        # every metric of docs/architecture.md §8
    result.jobs                             # the five Batsim outputs as pandas DataFrames:
    result.schedule, result.machine_states, result.consumed_energy, result.pstate_changes
    result.plot_power(budget_power_w=900)   # matplotlib figures: plot_gantt, plot_power, plot_machine_states

Inputs are paths or objects built in Python: SimGrid XML text (:func:`taurus_platform`, :func:`esc_platform`, or
your own), a Batsim workload as a dict (:func:`synthetic_workload`, or your own), or loaded
:class:`~wattsched.simulator.platform.Platform` / :class:`~wattsched.simulator.workload.Workload` objects.

Sweep (a grid as in ``wattsched sweep GRID.yaml``, on a local Dask cluster or an existing one)::

    table = api.sweep({"platforms": [...], "workloads": [...], "schedulers": [...], "seeds": [1, 2]},
                      out="results/study")

Errors are the CLI's: :class:`~wattsched.base.errors.WattschedError` (its subclasses ``InputError``,
``OptionError``, ``OutputError``, ``ProtocolError``) with a one-line message naming the file and field; a failed
simulation writes nothing.
"""

from __future__ import annotations

import math
import numbers
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from wattsched.analysis.metrics import DEFAULT_TAU_S, Metrics, compute_metrics, format_table
from wattsched.analysis.node_states import NodeStates, node_states
from wattsched.analysis.outputs import BatsimOutputs, load_outputs
from wattsched.analysis.paraver import write_paraver
from wattsched.base.batsim_files import output_paths
from wattsched.base.errors import InputError, OptionError, OutputError, ProtocolError, WattschedError
from wattsched.base.limits import check_limit_variables
from wattsched.base.signals import clean_up_on_terminate
from wattsched.base.validate import (check_python_nesting, control_character_problem, home_folder_problem,
                                     window_beyond_time)
from wattsched.experiments.runner import (
    PlatformInput,
    Scheduler,
    WorkloadInput,
    check_options,
    check_prefix,
    check_scheduler,
    kind_of,
    prefix_folder_problem,
    run_simulation,
    scheduler_name,
    shorten,
    shown_path,
)
from wattsched.schedulers.options import is_number
from wattsched.simulator.drivers import RunStats

__all__ = [
    "InputError", "OptionError", "OutputError", "ProtocolError", "Result", "WattschedError", "compare", "esc_platform", "simulate", "sweep",
    "synthetic_workload", "taurus_platform",
]

Window = tuple[float, float]


def _python_scalars(value: Any) -> Any:
    """``value`` with numpy's numbers and bools, at any depth of mappings, lists and tuples, as Python's equal
    ones: every function here takes ``np.int64(4)`` as it takes ``4`` (the platform generators, a grid's checks
    and JSON test Python's types; ``np.float64(4.0)`` is ``4.0``, refused where an integer is wanted)."""
    from wattsched.schedulers.options import is_numpy_bool

    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {key: _python_scalars(item) for key, item in value.items()}
    if kind in (list, tuple):
        return kind(_python_scalars(item) for item in value)
    if is_numpy_bool(value):
        return bool(value)
    if is_number(value):
        return int(value) if isinstance(value, numbers.Integral) else float(value)
    return value


def _name_argument(value: Any, name: str, what: str) -> None:
    """Refuse an empty (or blank) string given as argument ``name``: it names no file, scheduler or folder
    (``""`` would be read as the current folder, or be named nowhere in the error). ``what`` says what to give.

    Raises:
        OptionError: naming ``name``.
    """
    if isinstance(value, str) and not value.strip():
        raise OptionError(f"{name} is empty: give {what}")


def taurus_platform(hosts: int) -> str:
    """SimGrid XML text of ``hosts`` Taurus nodes (the energy-budget paper's calibration) and Batsim's master."""
    from wattsched.platforms.generate import taurus_platform_xml

    return taurus_platform_xml(_python_scalars(hosts))


def esc_platform(hosts: int) -> str:
    """SimGrid XML text of ``hosts`` five-state ESC nodes (standby, powering on/off, idle, loaded)."""
    from wattsched.platforms.generate import esc_platform_xml

    return esc_platform_xml(_python_scalars(hosts))


def synthetic_workload(hosts: int, *, seed: int, days: float = 7.0, load: float = 0.85, users: int = 50
                       ) -> dict[str, Any]:
    """A seeded synthetic Batsim workload (``wattsched synth``): ``days`` of submissions offering ``load`` of
    ``hosts`` Taurus hosts, from ``users`` users.

    Raises:
        OptionError: ``seed`` is not an integer ≥ 0 (a seed is required, as ``wattsched synth --seed``: the same
            arguments give the same workload), or another argument is out of its range.
    """
    from wattsched.workloads.synthetic import synthetic_week

    if not is_number(seed, integral=True) or seed < 0:
        raise OptionError(f"seed must be an integer ≥ 0 (as 'wattsched synth --seed'), got {kind_of(seed)}")
    for name, value in (("hosts", hosts), ("users", users)):  # (their bounds: the generator's, as synth's)
        if not is_number(value, integral=True) or not 0 < value:
            raise OptionError(f"{name} must be a positive integer, got {kind_of(value)}")
    return synthetic_week(int(hosts), seed=int(seed), duration_s=_positive(days, "days") * 86400.0,
                          target_load=_positive(load, "load"), users=int(users))


def _path_argument(value: Any, name: str, what: str, *, written: bool = False) -> Path:
    """``value`` as a Path, or :class:`OptionError` naming the argument ``name`` (``"out (--out)"``); ``written``:
    it names files we write, which must not hold a control character (:class:`OutputError`, as the CLI's
    ``--out``, ``-d`` and ``-e`` refuse it: ``sweep(out="r\\n")`` made a folder whose name ends in a line break)."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)) \
            or not isinstance(os.fspath(value), str):
        raise OptionError(f"{name} must be {what} (a str or os.PathLike), got {kind_of(value)}")
    problem = (control_character_problem(os.fspath(value)) or home_folder_problem(value)) if written else None
    if problem is not None:
        raise OutputError(f"{name} {shown_path(value)}: {problem}")
    return Path(value)


def _check_window(window: Any, name: str, from_zero: bool = True) -> tuple[float, float] | None:
    """``window`` as ``(start_s, end_s)``: two finite numbers, start < end, and 0 ≤ start when ``from_zero`` (as
    ``plot --window`` and ``run --window``: simulated time starts at 0)."""
    if window is None:
        return None
    if isinstance(window, (str, bytes)) or not isinstance(window, Sequence) or len(window) != 2 \
            or not all(is_number(x) for x in window):
        raise OptionError(f"{name} must be (start_s, end_s), two numbers of seconds, got {kind_of(window)}")
    start, end = _float(window[0]), _float(window[1])
    if not (math.isfinite(start) and math.isfinite(end)):
        raise OptionError(f"{name} bounds must be finite numbers of seconds, got {kind_of(window)}")
    if from_zero and start < 0:
        raise OptionError(f"{name} start {start:g} is before 0 (the start of the run)")
    if end <= start:
        raise OptionError(f"{name} end {end:g} is not after its start {start:g}")
    beyond = window_beyond_time(start, end)
    if beyond:
        raise OptionError(f"{name} {beyond}")
    return start, end


def _check_positive(value: Any, name: str) -> float | None:
    """``value`` as a positive finite float (as ``plot --budget-power``), or None."""
    return None if value is None else _positive(value, name)


def _flag(value: Any, name: str, *, or_none: bool = False) -> bool:
    """``value`` of a yes/no argument: ``True`` or ``False`` (a numpy bool too); anything else refused
    (``dynamic_jobs="false"`` is a non-empty string, which Python would take for true). ``or_none``: the
    argument may also be None (the caller keeps None apart), which the message then lists.

    Raises:
        OptionError: naming ``name``.
    """
    from wattsched.schedulers.options import is_numpy_bool

    if not (isinstance(value, bool) or is_numpy_bool(value)):
        also = " or None" if or_none else ""
        raise OptionError(f"{name} must be True or False{also}, got {kind_of(value)}")
    return bool(value)


def _positive(value: Any, name: str) -> float:
    """``value`` as a positive finite float.

    Raises:
        OptionError: naming ``name``: not a number (None included), not positive, not finite.
    """
    number = _float(value) if is_number(value) else math.nan
    if not 0.0 < number < math.inf:
        raise OptionError(f"{name} must be a positive finite number, got {kind_of(value)}")
    return number


def _float(number: Any) -> float:
    """``float(number)`` of a number, ±inf for an integer beyond a double (where ``float`` raises OverflowError)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


@dataclass
class Result:
    """One simulation's outputs, read lazily from its files.

    Attributes:
        prefix: the output prefix: Batsim's five files are ``<prefix>_jobs.csv`` etc.
        stats: wall-clock figures of the run (simulation and scheduling time, messages, events).
        scheduler, options: what ran.
        tau_s, window, max_power_w, workload: how :attr:`metrics` are computed (window: utilization and window
            energy, default first submission to makespan; workload with users: per-user stretch).
    """

    prefix: Path
    stats: RunStats
    scheduler: str
    options: Mapping[str, Any]
    tau_s: float = DEFAULT_TAU_S
    window: Window | None = None
    max_power_w: float | None = None
    workload: Any = field(default=None, repr=False)

    @cached_property
    def outputs(self) -> BatsimOutputs:
        """The loaded output files (jobs replaced by the scheduler merged with their replacements)."""
        return load_outputs(self.prefix)

    @property
    def jobs(self) -> pd.DataFrame:
        """``_jobs.csv``: one row per job (waiting time, execution time, energy, allocated resources...)."""
        return self.outputs.jobs

    @cached_property
    def schedule(self) -> pd.DataFrame:
        """``_schedule.csv``: the run's one-row summary (makespan, energy, utilisation, counts)."""
        path = output_paths(self.prefix)["schedule"]
        try:
            return pd.read_csv(path)
        except OSError as error:  # the outputs were removed (or the temporary folder of an unreferenced result)
            raise InputError(path, "", f"cannot read the output file ({error.strerror or error})") from None
        except (ValueError, UnicodeDecodeError) as error:  # pandas' parser errors are ValueErrors
            raise InputError(path, "", f"not a Batsim schedule file ({shorten(str(error))})") from None

    @property
    def machine_states(self) -> pd.DataFrame:
        """``_machine_states.csv``: number of hosts per state (computing, idle, switching, sleeping) over time."""
        return self._required(self.outputs.machine_states, "machine_states")

    @property
    def consumed_energy(self) -> pd.DataFrame:
        """``_consumed_energy.csv``: cumulative energy (J) and power (W) at every event."""
        return self._required(self.outputs.consumed_energy, "consumed_energy")

    @property
    def pstate_changes(self) -> pd.DataFrame:
        """``_pstate_changes.csv``: every power state change (time, host set, new pstate)."""
        return self._required(self.outputs.pstate_changes, "pstate_changes")

    def _required(self, frame: pd.DataFrame | None, kind: str) -> pd.DataFrame:
        if frame is None:
            raise InputError(output_paths(self.prefix)[kind], "", "missing output file")
        return frame

    @cached_property
    def metrics(self) -> Metrics:
        """Every metric of docs/architecture.md §8 (``{name: number}``, units in the names)."""
        return compute_metrics(self.outputs, tau_s=self.tau_s, window=self.window, max_power_w=self.max_power_w,
                               workload=self.workload)

    def metrics_table(self) -> pd.Series:
        """:attr:`metrics` as a pandas Series (one run's column of a comparison table)."""
        return pd.Series(self.metrics, name=self.label)

    @property
    def label(self) -> str:
        """The scheduler and its options, e.g. ``energy-bud budget_fraction=0.6``."""
        return " ".join([self.scheduler, *(f"{k}={v}" for k, v in sorted(self.options.items()))])

    def node_states(self) -> NodeStates:
        """Every host's state intervals (off, booting, idle, running a job, shutting down)."""
        return node_states(self.outputs)

    def write_paraver(self, prefix: str | os.PathLike) -> list[Path]:
        """The run as a Paraver trace (``.prv``, ``.pcf``, ``.row`` at ``prefix``); returns the files.

        Raises:
            OutputError: ``prefix`` names a folder (``traces/``: give ``traces/run``) or cannot be written.
        """
        _name_argument(prefix, "prefix", "a Paraver file prefix such as 'traces/run'")
        path = _path_argument(prefix, "prefix", "a Paraver file prefix", written=True)
        problem = prefix_folder_problem(os.fspath(prefix))
        if problem is not None:
            raise OutputError(f"Paraver prefix {problem}")
        from wattsched.base.validate import check_output_files

        check_output_files([Path(f"{path}{ext}") for ext in (".prv", ".pcf", ".row")],
                           f"Paraver prefix {shown_path(prefix)}")
        return write_paraver(self.node_states(), path)

    def plot_gantt(self):  # -> matplotlib.figure.Figure
        """A Gantt chart of the jobs on the hosts."""
        from wattsched.analysis.plots import gantt_figure

        return gantt_figure(self.outputs)

    def plot_power(self, budget_window: Window | None = None, budget_power_w: float | None = None):
        """Platform power over time, with an optional budget window and budget power line.

        Raises:
            OptionError: ``budget_window`` is not ``(start_s, end_s)`` with 0 ≤ start < end, finite, or
                ``budget_power_w`` not a positive finite number (as ``wattsched plot --window --budget-power``).
        """
        from wattsched.analysis.plots import power_figure

        window = _check_window(budget_window, "budget_window")
        power = _check_positive(budget_power_w, "budget_power_w")
        return power_figure(self.outputs, window, power)

    def plot_machine_states(self):
        """Hosts computing, idle, switching and sleeping over time (stacked)."""
        from wattsched.analysis.plots import machine_states_figure

        return machine_states_figure(self.outputs)

    def __str__(self) -> str:
        return format_table(self.metrics, title=f"{self.label} → {self.prefix}")

    def _repr_html_(self) -> str:  # Jupyter shows the metrics table
        return self.metrics_table().to_frame().to_html()


def simulate(
    platform: PlatformInput,
    workload: WorkloadInput,
    scheduler: Scheduler = "easy-backfill",
    options: Mapping[str, Any] | None = None,
    *,
    out: str | os.PathLike | None = None,
    dynamic_jobs: bool = False,
    tau_s: float = DEFAULT_TAU_S,
    window: Window | None = None,
    max_power_w: float | None = None,
    progress: bool = False,
) -> Result:
    """Simulate ``workload`` on ``platform`` with the embedded Batsim 4.2.1 and a scheduler.

    Args:
        platform: a SimGrid XML path, XML text, or a loaded platform.
        workload: a Batsim JSON path, a workload dict, or a loaded workload.
        scheduler: a preset (``wattsched schedulers`` lists them), a pybatsim entry point, ``module:Class``,
            ``file.py[:Class]``, or a subclass of pybatsim's ``BatsimScheduler`` (built with ``cls(options)``, as
            pybatsim does; :attr:`Result.scheduler` names it ``module:Class``).
        options: the scheduler's options, checked before the simulation starts.
        out: output prefix (``results/run1/out`` writes ``results/run1/out_jobs.csv``...); default a temporary
            folder removed when the result is garbage-collected.
        dynamic_jobs: the simulator accepts dynamic job registration (as Batsim's ``--enable-dynamic-jobs``).
        tau_s, window, max_power_w: how :attr:`Result.metrics` are computed (bounded-slowdown τ; utilization and
            window-energy window; all-computing power for the relative window energy).
        progress: draw a progress bar on stderr.

    Numbers may be numpy's (``np.int64``, ``np.float64``), in the options and a workload dict too.

    Raises:
        WattschedError: bad input or option, one line naming the file and field (nothing is written); an empty
            ``platform``, ``workload``, ``scheduler`` or ``out`` string is an :class:`OptionError` naming it.
    """
    check_limit_variables()  # a misspelt WATTSCHED_LIMIT_* bounds nothing
    _name_argument(platform, "platform", "a SimGrid XML path, XML text or a loaded Platform")
    _name_argument(workload, "workload", "a Batsim JSON path, JSON text, a workload dict or a loaded Workload")
    _name_argument(scheduler, "scheduler", "a preset name ('wattsched schedulers' lists them), 'module:Class' or "
                                           "'file.py[:Class]'")
    _name_argument(out, "out", "an output prefix such as 'results/run1/out', or None for a temporary folder")
    if isinstance(workload, Mapping):  # JSON holds no numpy number: the simulator reads the dict as JSON
        check_python_nesting(workload, "<workload object>")  # (before the recursive walk)
        workload = _python_scalars(workload)
    scheduler = check_scheduler(scheduler, classes=True)
    options = check_options(options)
    dynamic_jobs, progress = _flag(dynamic_jobs, "dynamic_jobs"), _flag(progress, "progress")
    window = _check_window(window, "window")
    tau_s = _positive(tau_s, "tau_s")
    max_power_w = _check_positive(max_power_w, "max_power_w")
    if out is None:
        folder = tempfile.mkdtemp(prefix="wattsched-")
        prefix = Path(folder) / "out"
    else:
        folder = None
        prefix = _path_argument(out, "out", "an output prefix path")
        check_prefix(out)  # before Path() drops a trailing slash (a folder); inputs checked by run_simulation
    with clean_up_on_terminate():  # SIGTERM: the temporary outputs (and folder) removed, then the process ends
        try:
            stats = run_simulation(platform, workload, prefix, scheduler=scheduler, options=options,
                                   dynamic_jobs=dynamic_jobs, show_progress=progress)
        except BaseException:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            raise
    users = _users_source(workload)
    # absolute: the files are read lazily, maybe after a notebook's os.chdir (another run's outputs there)
    result = Result(prefix.absolute(), stats, scheduler_name(scheduler), options, tau_s, window, max_power_w, users)
    if folder is not None:
        weakref.finalize(result, shutil.rmtree, folder, True)
    return result


def _users_source(workload: WorkloadInput) -> Any:
    """What :attr:`Result.metrics` reads the jobs' users from (per-user stretch): the workload's path or dict,
    JSON text parsed, a loaded workload's job entries."""
    from wattsched.simulator.workload import Workload

    if isinstance(workload, Workload):
        return {"jobs": [job.entry for job in workload.jobs]}
    if isinstance(workload, str) and workload.lstrip().startswith("{"):
        import json

        return json.loads(workload)  # already loaded once by the run: valid
    if isinstance(workload, Mapping) and isinstance(workload.get("jobs"), tuple):
        return {"jobs": list(workload["jobs"])}  # the run read it as JSON, a list (metrics wants one)
    if isinstance(workload, (str, os.PathLike)):
        return Path(workload).absolute()  # read lazily, maybe after an os.chdir (as Result.prefix)
    return workload if isinstance(workload, Mapping) else None


def sweep(
    grid: str | os.PathLike | Mapping[str, Any],
    out: str | os.PathLike,
    *,
    workers: int | None = None,
    dask_scheduler: str | None = None,
    force: bool = False,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run a grid of simulations on Dask (``wattsched sweep``) and return one row per run.

    Args:
        grid: a grid file (YAML or JSON) or the same as a dict (:mod:`wattsched.experiments.grid`).
        out: the sweep's folder: runs under ``out/runs/<key>/``, ``results.csv``, ``results.parquet`` and
            comparison plots under ``out/plots/``. Runs already done there are not run again.
        workers: processes of the local Dask cluster (default: every core).
        dask_scheduler: the address of a running Dask scheduler to use instead (``tcp://host:8786``).
        force: run again runs whose outputs exist.
        progress: draw a progress bar (default: when stderr is a terminal).

    Returns:
        The results table: inputs, scheduler, options, status (done, skipped, failed), error, metrics.

    Raises:
        WattschedError: a bad grid (:class:`InputError` naming the field), a bad argument (:class:`OptionError`),
            an ``out`` that cannot be written or where another sweep is running (:class:`OutputError`), before any run
            starts. Failing runs do not raise: their rows say ``failed``.

    With ``workers`` > 1, the local cluster's processes start by importing your main script (Python's
    ``spawn``): in a script, call :func:`sweep` under ``if __name__ == "__main__":`` (a notebook needs nothing).
    """
    from wattsched.base.fileio import FolderLock
    from wattsched.experiments.grid import grid_runs, load_grid, parse_grid, write_results
    from wattsched.experiments.sweep import check_sweep_arguments, run_sweep

    check_limit_variables()  # a misspelt WATTSCHED_LIMIT_* bounds nothing
    if isinstance(grid, bytes) or not isinstance(grid, (str, os.PathLike, Mapping)):
        raise OptionError(f"grid must be a grid file's path (YAML or JSON) or a mapping, got {kind_of(grid)}")
    _name_argument(grid, "grid", "a grid file's path (YAML or JSON) or a mapping")
    _name_argument(out, "out (--out)", "the sweep's folder, such as 'results/study'")  # "" is the current folder
    _path_argument(out, "out (--out)", "the sweep's folder", written=True)
    if isinstance(grid, Mapping):
        check_python_nesting(grid, "<grid>")  # (before the recursive walk)
    grid, workers = _python_scalars(grid), _python_scalars(workers)  # a grid's checks test Python's types
    check_sweep_arguments(workers, dask_scheduler)
    force = _flag(force, "force")
    progress = None if progress is None else _flag(progress, "progress", or_none=True)
    parsed = parse_grid(grid) if isinstance(grid, Mapping) else load_grid(grid)
    with FolderLock(out, f"out (--out) {out}"):  # one sweep at a time in a folder
        runs = grid_runs(parsed, out)
        frame = run_sweep(runs, workers=workers, force=force, dask_scheduler=dask_scheduler, show_progress=progress)
        write_results(frame, out)
    return frame


def compare(results: Sequence[Result]) -> pd.DataFrame:
    """The metrics of several results side by side, one column per result.

    Raises:
        OptionError: ``results`` is not a non-empty sequence of :class:`Result` (of :func:`simulate`).
    """
    if isinstance(results, (str, bytes, Mapping)) or not isinstance(results, Iterable):
        raise OptionError(f"results must be a list of results of simulate(), got {kind_of(results)}")
    results = list(results)
    if not results:
        raise OptionError("results is empty: give a list of results of simulate() to compare")
    for i, result in enumerate(results):
        if not isinstance(result, Result):
            raise OptionError(f"results[{i}] must be a result of simulate(), got {kind_of(result)}")
    columns = [r.metrics_table() for r in results]
    names: set[str] = set()
    for column in columns:  # one label twice (a scheduler on two platforms): 'fcfs', 'fcfs #2', not two 'fcfs'
        label = name = str(column.name)
        n = 1
        while name in names:
            n += 1
            name = f"{label} #{n}"
        names.add(name)
        column.name = name
    return pd.concat(columns, axis=1)
