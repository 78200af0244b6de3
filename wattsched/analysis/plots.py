"""Plots of a finished run from Batsim's output files: Gantt chart, platform power, machine states.

Each ``*_figure`` function builds a :class:`matplotlib.figure.Figure` from the outputs (on the Agg
canvas, without touching pyplot's global state) and each ``plot_*`` function writes it as a PNG file,
atomically (temporary file in the same folder, then rename)::

    plot_all("results/out", "results/plots")          # gantt.png, power.png, machine_states.png
    plot_power("results/out", "power.png", budget_window=(3600, 7200), budget_power_w=2000)

``outputs`` is anything :func:`wattsched.analysis.outputs.load_outputs` accepts: a folder, a prefix path
(``results/out``) or a loaded :class:`~wattsched.analysis.outputs.BatsimOutputs`.
"""

from __future__ import annotations

import functools
import logging
import math
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from wattsched.base.errors import InputError, OptionError, counted
from wattsched.base.fileio import write_files
from wattsched.base.limits import limit
from wattsched.analysis.node_states import parse_host_set, run_nb_hosts
from wattsched.analysis.outputs import BatsimOutputs, check_energy_job_rows, load_outputs

__all__ = [
    "gantt_figure",
    "machine_states_figure",
    "plot_all",
    "plot_gantt",
    "plot_machine_states",
    "plot_power",
    "power_figure",
    "save_figure",
]

logger = logging.getLogger(__name__)

#: Machine-state columns, bottom to top of the stacked areas, and their colours.
MACHINE_STATES: Final[tuple[tuple[str, str], ...]] = (
    ("nb_computing", "tab:red"),
    ("nb_idle", "tab:green"),
    ("nb_switching_on", "tab:orange"),
    ("nb_switching_off", "tab:purple"),
    ("nb_sleeping", "tab:gray"),
)
_MAX_LABELLED_JOBS: Final[int] = 40


def save_figure(figure: Figure, path_png: str | Path, dpi: int = 120) -> Path:
    """Write ``figure`` to ``path_png`` atomically (temporary file in the same folder, then rename)."""
    path = Path(path_png)
    FigureCanvasAgg(figure)
    write_files({path: lambda tmp: figure.savefig(tmp, format="png", dpi=dpi)})
    logger.info("wrote %s", path)
    return path


def _new_figure(width_in: float = 10.0, height_in: float = 5.0) -> Figure:
    figure = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


# ------------------------------------------------------------------------------------------- gantt
def gantt_figure(outputs: str | Path | BatsimOutputs) -> Figure:
    """Jobs as rectangles: x from start to finish, y over their host ids.

    A job on a non-contiguous allocation (``"0-5 7-15"``) gets one rectangle per interval; every
    rectangle of a job carries ``gid = "job <job_id>"``. Rejected jobs are not drawn.
    """
    loaded = load_outputs(outputs)
    jobs = loaded.jobs
    ran = jobs[(jobs["final_state"] != "REJECTED") & jobs["starting_time"].notna()]
    figure = _new_figure()
    axes = figure.add_subplot()
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
               "tab:olive", "tab:cyan")
    run_hosts = _run_nb_hosts(loaded)
    max_host = 0
    for number, job in enumerate(ran.itertuples(index=False)):
        procs = parse_host_set(job.allocated_resources, loaded.source("jobs"),
                               f"job {job.job_id}.allocated_resources", run_hosts)
        start, end = float(job.starting_time), float(job.finish_time)
        killed = job.final_state != "COMPLETED_SUCCESSFULLY"
        for interval in procs.intervals():
            rectangle = Rectangle(
                (start, interval.inf - 0.5), end - start, interval.sup - interval.inf + 1,
                facecolor=colours[number % len(colours)], edgecolor="black", linewidth=0.5,
                alpha=0.8, hatch="//" if killed else None,
            )
            rectangle.set_gid(f"job {job.job_id}")
            axes.add_patch(rectangle)
            max_host = max(max_host, interval.sup)
            if len(ran) <= _MAX_LABELLED_JOBS:
                # an id as it is: one holding two '$' is no mathtext (a backslash there raised a ValueError)
                axes.text(start + (end - start) / 2, (interval.inf + interval.sup) / 2, str(job.job_id),
                          ha="center", va="center", fontsize=7, clip_on=True, parse_math=False)
    nb_hosts = max(max_host + 1, run_hosts or 0)
    end_s = float(ran["finish_time"].max()) if len(ran) else 1.0
    start_s = min(0.0, float(jobs["submission_time"].min())) if len(jobs) else 0.0
    axes.set_xlim(start_s, end_s * 1.02 if end_s > 0 else 1.0)
    axes.set_ylim(-0.5, nb_hosts - 0.5)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("host id")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title(f"Gantt chart: {counted(len(ran), 'job')} ran, hatched = not successful")
    return figure


def _run_nb_hosts(loaded: BatsimOutputs) -> int | None:
    """The run's number of compute hosts as paraver and node-stats read it (schedule.csv, else
    machine_states.csv); None when neither output tells (the chart then spans the hosts the jobs use).

    Raises:
        InputError: an ``nb_computing_machines`` that is not a number.
    """
    known = ((loaded.schedule is not None and "nb_computing_machines" in loaded.schedule)
             or (loaded.machine_states is not None and len(loaded.machine_states) > 0))
    return run_nb_hosts(loaded) if known else None


def plot_gantt(outputs: str | Path | BatsimOutputs, path_png: str | Path) -> Path:
    """Write the Gantt chart of a run (:func:`gantt_figure`) to ``path_png``."""
    return save_figure(gantt_figure(outputs), path_png)


# ------------------------------------------------------------------------------------------- power
def power_steps(energy: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Platform power as steps: ``(times_s, power_w)`` where ``power_w[i]`` holds from ``times_s[i]``
    to ``times_s[i + 1]``; the last value repeats the previous one so that a step plot ends at the last
    row. Power = Δenergy / Δtime between rows with distinct times (Batsim's ``epower``, defined also
    where Batsim printed ``NA``), from t = 0: the energy is counted from there, and Batsim writes no row at 0
    before the first job starts (its first row's energy was drawn since 0, as :func:`~wattsched.analysis.metrics.
    energy_at_j` reads it)."""
    curve = energy.groupby("time", sort=True)["energy"].last()
    times = curve.index.to_numpy(dtype=float)
    energies = curve.to_numpy(dtype=float)
    if len(times) and times[0] > 0.0:  # the power plot started at the first job, [0, first start] left out
        times, energies = np.concatenate(([0.0], times)), np.concatenate(([0.0], energies))
    if len(times) < 2:
        return times, np.zeros_like(times)
    power = np.diff(energies) / np.diff(times)
    return times, np.append(power, power[-1])


def check_budget_power(power_w: float | None, name: str = "budget_power_w") -> None:
    """A budget power (``name``: ``--budget-power`` or the argument) whose energy over the longest simulated time
    (the ``time_s`` bound) is a finite double, the bound a platform's highest powers are held to
    (:func:`wattsched.simulator.platform.load_platform`): a budget beyond it is no budget any run could have, and
    an axis up to 1e308 W overflows matplotlib's ticks.

    Raises:
        OptionError: naming ``name`` and the bound.
    """
    if power_w is not None and not math.isfinite(power_w * max(limit("time_s"), 1.0)):
        raise OptionError(f"{name} {power_w:g}: its energy over {limit('time_s'):g} s of simulated time (the "
                          "WATTSCHED_LIMIT_TIME_S bound) is beyond the largest number a double holds; no platform "
                          "draws that much")


def power_figure(
    outputs: str | Path | BatsimOutputs,
    budget_window: tuple[float, float] | None = None,
    budget_power_w: float | None = None,
) -> Figure:
    """Platform power over time (step plot), with an optional shaded budget window and a horizontal
    line at the budget power (e.g. B / (te − ts) of the energy-budget paper).

    Raises:
        OptionError: a ``budget_power_w`` beyond :func:`check_budget_power`'s bound (``Result.plot_power`` drew
            it with a numpy overflow warning).
    """
    check_budget_power(budget_power_w)
    loaded = load_outputs(outputs)
    if loaded.consumed_energy is None:
        raise InputError(loaded.paths["jobs"].parent, "consumed_energy.csv", "missing: needed for the power plot")
    check_energy_job_rows(loaded)
    times, power = power_steps(loaded.consumed_energy)
    figure = _new_figure()
    axes = figure.add_subplot()
    axes.step(times, power, where="post", color="tab:blue", linewidth=1.0, label="platform power")
    if budget_window is not None:
        axes.axvspan(budget_window[0], budget_window[1], color="tab:orange", alpha=0.15, label="budget window")
    if budget_power_w is not None:
        axes.axhline(budget_power_w, color="tab:red", linestyle="--", linewidth=1.0,
                     label=f"budget power {budget_power_w:g} W")
    axes.set_xlabel("time (s)")
    axes.set_ylabel("power (W)")
    axes.set_ylim(bottom=0.0)
    axes.set_title("Platform power (compute hosts)")
    axes.legend(loc="upper right")
    return figure


def plot_power(
    outputs: str | Path | BatsimOutputs,
    path_png: str | Path,
    budget_window: tuple[float, float] | None = None,
    budget_power_w: float | None = None,
) -> Path:
    """Write the power plot of a run (:func:`power_figure`) to ``path_png``."""
    return save_figure(power_figure(outputs, budget_window, budget_power_w), path_png)


# ---------------------------------------------------------------------------------- machine states
def machine_states_figure(outputs: str | Path | BatsimOutputs) -> Figure:
    """Stacked areas of the number of hosts computing, idle, switching on/off and sleeping over time.

    Batsim writes no initial row (behaviour 32): before the first row every host is idle, and after the header
    alone (no host changed state: no job ran) every host is idle throughout, the hosts counted by the schedule.
    """
    loaded = load_outputs(outputs)
    states = loaded.machine_states
    if states is None:
        raise InputError(loaded.paths["jobs"].parent, "machine_states.csv", "missing: needed for this plot")
    columns = [name for name, _ in MACHINE_STATES]
    steps = states.groupby("time", sort=True)[columns].last()
    # no row: no host changed state (no job ran: none, or all rejected), every host idle (the run was refused)
    nb_hosts = int(steps.iloc[0].sum()) if not steps.empty else _run_nb_hosts(loaded)
    if nb_hosts is None:
        raise InputError(loaded.source("machine_states"), "", "no rows to plot, and no schedule to count hosts")
    if steps.empty or steps.index[0] > 0:
        initial = pd.DataFrame([{c: (nb_hosts if c == "nb_idle" else 0) for c in columns}], index=[0.0])
        steps = pd.concat([initial, steps]) if not steps.empty else initial
    if len(steps) == 1:  # one moment (a stack of zero width): drawn over the one second the axis spans
        steps = pd.concat([steps, steps.set_axis([steps.index[0] + 1.0])])
    times = steps.index.to_numpy(dtype=float)
    figure = _new_figure()
    axes = figure.add_subplot()
    axes.stackplot(
        times,
        *(steps[name].to_numpy() for name in columns),
        labels=[name.removeprefix("nb_").replace("_", " ") for name in columns],
        colors=[colour for _, colour in MACHINE_STATES],
        step="post",
        alpha=0.85,
    )
    axes.set_xlim(times[0], times[-1] if times[-1] > times[0] else times[0] + 1.0)
    axes.set_ylim(0, nb_hosts)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("hosts")
    axes.set_title("Machine states")
    axes.legend(loc="upper right", fontsize=8)
    return figure


def plot_machine_states(outputs: str | Path | BatsimOutputs, path_png: str | Path) -> Path:
    """Write the machine-state plot of a run (:func:`machine_states_figure`) to ``path_png``."""
    return save_figure(machine_states_figure(outputs), path_png)


def plot_all(outputs: str | Path | BatsimOutputs, out_dir: str | Path,
             budget_window: tuple[float, float] | None = None, budget_power_w: float | None = None) -> list[Path]:
    """Write ``gantt.png``, and ``power.png`` / ``machine_states.png`` when their CSV exists (``power.png`` also
    when a ``budget_window`` or ``budget_power_w`` is drawn on it, :func:`power_figure`), into ``out_dir``; return
    the paths written. Every figure is built before any file is written, and all are written or none: a figure
    that cannot be drawn (the power against a budget without ``_consumed_energy.csv``, machine states without
    rows nor schedule to count the hosts) leaves no PNG of the others beside the error."""
    loaded = load_outputs(outputs)
    folder = Path(out_dir)
    figures = {"gantt.png": gantt_figure(loaded)}
    if loaded.consumed_energy is not None or budget_window is not None or budget_power_w is not None:
        figures["power.png"] = power_figure(loaded, budget_window, budget_power_w)
    if loaded.machine_states is not None:
        figures["machine_states.png"] = machine_states_figure(loaded)
    paths = [folder / name for name in figures]
    write_files({path: functools.partial(figure.savefig, format="png", dpi=120)
                 for path, figure in zip(paths, figures.values())})
    for path in paths:
        logger.info("wrote %s", path)
    return paths
