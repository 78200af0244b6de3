"""The experiment of the energy-budget paper, §V: budgets, algorithms, machines, metrics, report.

Energy-budget paper, §V-C and §V-D (and the authors' ``energybudget-expe`` scripts):

* **Inputs**: one-week workloads on Taurus-calibrated platforms (one host per processor) of the three
  machines SDSC-Blue (1,152), MetaCentrum (3,356) and Curie (80,640). The paper replays "10 disjoint
  weeks" of each Parallel Workloads Archive log, "selected" for their high utilization (§V-C), and names
  none of them; we take **one week per machine, the log's busiest** (:func:`workloads.swf.busiest_window`:
  the 7 days, starting on a whole day of the trace, of highest offered load), converted by
  :func:`workloads.swf.swf_to_batsim`. The log is the one of the trace catalogue (``workloads/traces.py``:
  ``sdsc-blue``, ``curie``), read from the archive mirror (``--pwa DIR``, ``$WATTSCHED_PWA`` or
  ``shared/data/pwa`` beside the repository) or the download cache, checked against the catalogue's
  sha256; ``--swf NAME=path[:start_s]`` gives another file (and ``start_s`` a week of one's choice).
  A real week runs on the machine's full size, so in the reduced mode (the default) only machines of at most
  :data:`REDUCED_TRACE_MAX_HOSTS` hosts take their log (SDSC-Blue; Curie's 80,640 hosts take about two
  hours of runs on 2 cores: ``--full``). Otherwise, and for MetaCentrum (not in the archive copy), and
  when no log is at hand, a seeded synthetic week (:func:`workloads.synthetic.synthetic_week`) whose offered
  load is raised until EASY keeps the machine more than 70 % busy over the week, as the paper's busy weeks
  do. The report says per machine which source was used (file, catalogue name and sha256, week, jobs,
  the conversion's summary line).
* **Walltimes**: a job of a log without a requested time gets its run time (:data:`SWF_WALLTIME_RULE`,
  ``wattsched swf``'s documented default: a perfect estimate, so that EASY can plan around it). The paper
  says nothing about such jobs; SDSC-Blue's and Curie's logs give a requested time for all but a handful.
* **Budget window**: three days in the middle of the week, ``[2 d, 5 d)`` (``budget_start`` 2×24×3600,
  ``budget_end`` 5×24×3600 in the authors' scripts).
* **Budgets**: 100, 90, 80, 70, 60, 50, 49 and 30 % of the window's all-computing energy
  N × P̃comp × 3 days; "49 %" is exactly P̃idle / P̃comp = 100 / 203.12 (the platform held idle).
* **Algorithms**: energyBud, reducePC and powercap (presets ``energy-bud``, ``reduce-pc``,
  ``powercap``), each with opportunistic shutdown (``SHUT``) and without (``IDLE``), at every budget;
  EASY backfilling once, without budget (the paper's reference).
* **Metrics** (docs/architecture.md §8): utilization over the week ``[0, 7 d)``; AVEbsld with τ = 10 s over all jobs;
  energy over the week relative to the week's maximum (every host computing at Pcomp = 190.738 W);
  jobs started inside the budget window and during the week. Also the energy inside the window over B.
  The paper's only numbers, table II (mean change with shutdown, §V-F), are set beside ours
  (:func:`shutdown_changes`); its figures 2-5 give normalized means without values.

The algorithm list is data (:data:`ALGORITHMS`): a preset that is not registered in
:data:`schedulers.presets.PRESETS` is left out, and the report says so (no number is ever made up).

Outputs under ``--out``: ``inputs/`` (platforms, workloads), ``runs/`` (Batsim CSVs of every run),
``results.csv`` (one row per run), ``report.md`` (tables per machine and the paper's orderings checked)
and ``<machine>_fig{2,3,4,5}_<metric>.png`` (metric vs budget, one line per algorithm, like figures 2-5).

Command line: ``wattsched reproduce energy-budget --out results/energy-budget [--full] [--pwa DIR] [--synthetic]
[-j N] [--force]``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wattsched.base.fileio import write_if_changed
from wattsched.energy_models.taurus import TAURUS, budget_energy_j
from wattsched.experiments.sweep import Run, failed_runs, run_sweep, write_table
from wattsched.base.errors import InputError, OptionError

__all__ = [
    "ALGORITHMS", "BUDGETS", "EASY", "MACHINES", "METRICS", "Algorithm", "Budget", "Machine", "MachineInputs",
    "OrderingCheck", "PAPER_TABLE2", "available_algorithms", "build_runs", "check_shutdown_lowers_bsld",
    "check_utilization_order", "machine_inputs", "machine_log", "parse_swf_inputs", "plot_figures", "run_experiment",
    "shutdown_changes", "swf_inputs", "write_report",
]

logger = logging.getLogger(__name__)

#: Jobs of the archive's logs without a requested time get their run time as walltime (``wattsched swf``'s
#: documented default, :mod:`workloads.swf`); the paper does not say otherwise.
SWF_WALLTIME_RULE = "runtime"

DAY_S = 86400.0
WEEK_S = 7 * DAY_S
#: The budget window: three days in the middle of the week (paper §V-C).
WINDOW_S: tuple[float, float] = (2 * DAY_S, 5 * DAY_S)
MONITORING_PERIOD_S = TAURUS.monitoring_period_s
#: Utilization of EASY over the week the synthetic workloads must exceed (paper: busy weeks).
MIN_EASY_UTILIZATION = 0.70


@dataclass(frozen=True)
class Budget:
    """A budget level: its label in % and the fraction of N × P̃comp × window it stands for."""

    percent: int
    fraction: float


BUDGETS: tuple[Budget, ...] = tuple(Budget(p, p / 100) for p in (100, 90, 80, 70, 60, 50)) + (
    Budget(49, TAURUS.estimated_idle_w / TAURUS.estimated_comp_w),  # the platform idle: 100 / 203.12
    Budget(30, 0.30),
)


@dataclass(frozen=True)
class Algorithm:
    """An algorithm of the study: paper name, preset name, whether it takes a budget."""

    name: str
    preset: str
    budgeted: bool = True


ALGORITHMS: tuple[Algorithm, ...] = (
    Algorithm("energyBud", "energy-bud"),
    Algorithm("reducePC", "reduce-pc"),
    Algorithm("powercap", "powercap"),
)
EASY = Algorithm("EASY", "easy-backfill", budgeted=False)


@dataclass(frozen=True)
class Machine:
    """One of the paper's machines: name, key for files and CLI, processors (= hosts), and the name of its
    log in the trace catalogue (``workloads/traces.py``; None: not in the archive copy)."""

    name: str
    key: str
    nb_hosts: int
    trace: str | None = None


MACHINES: tuple[Machine, ...] = (
    Machine("SDSC-Blue", "sdsc-blue", 1152, "sdsc-blue"),
    Machine("MetaCentrum", "metacentrum", 3356),  # MetaCentrum's log is not in the archive copy
    Machine("Curie", "curie", 80640, "curie"),  # the log's MaxProcs is 93,312; the paper counts 80,640 (thin nodes)
)

#: In the reduced mode a machine takes its real log (simulated at its full size) only up to this many hosts.
REDUCED_TRACE_MAX_HOSTS = 4000

#: Reduced size (the default): hosts per machine, one full synthetic week each. SDSC-Blue and MetaCentrum
#: at 1/8 of their size, Curie at 1/64 (its week has ~4,500 jobs at 1/8, the two others together ~1,700);
#: see ``choose_machines`` and the measured wall time in report.md.
REDUCED_HOSTS: Mapping[str, int] = {"sdsc-blue": 144, "metacentrum": 420, "curie": 1260}


@dataclass(frozen=True)
class MachineInputs:
    """A machine as simulated: its platform and workload files and how the workload was made."""

    machine: Machine
    nb_hosts: int
    platform: str
    workload: str
    source: str  # "synthetic seed=1 load=0.95" or "swf path"
    nb_jobs: int
    load: float | None = None  # target offered load of a synthetic week
    details: tuple[str, ...] = ()  # a real week: its file, sha256, window and the conversion's summary line

    @property
    def label(self) -> str:
        """File-safe id of these inputs (size and workload)."""
        return Path(self.workload).stem


@dataclass(frozen=True)
class Metric:
    """A reported metric: column of results.csv, title, file stem, figure number, better direction."""

    column: str
    title: str
    stem: str
    figure: int | None
    higher_is_better: bool
    fmt: str = "{:.3f}"


METRICS: tuple[Metric, ...] = (
    Metric("utilization", "Utilization over the week", "utilization", 2, True),
    Metric("mean_bounded_slowdown", "AVEbsld (τ = 10 s), all jobs", "avebsld", 3, False, "{:.1f}"),
    Metric("window_energy_relative", "Energy over the week / maximum (all hosts at Pcomp)", "energy", 4, False),
    Metric("week_nb_jobs_started", "Jobs started during the week", "jobs_started", 5, True, "{:.0f}"),
    Metric("budget_nb_jobs_started", "Jobs started inside the budget window", "jobs_started_window", None, True,
           "{:.0f}"),
    Metric("budget_energy_over_b", "Energy inside the window / budget B", "window_energy_over_budget", None, False),
)


# ---------------------------------------------------------------------------------------- the runs
def available_algorithms(algorithms: Sequence[Algorithm] = ALGORITHMS,
                         presets: Mapping[str, Any] | None = None) -> tuple[list[Algorithm], list[Algorithm]]:
    """``(registered, missing)``: the algorithms whose preset is (not) in ``schedulers.presets.PRESETS``."""
    if presets is None:
        from wattsched.schedulers.presets import PRESETS

        presets = PRESETS  # read at call time
    have = [a for a in algorithms if a.preset in presets]
    return have, [a for a in algorithms if a.preset not in presets]


def variant(algorithm: str, shutdown: bool) -> str:
    """The paper's name of a configuration: ``energyBud SHUT`` / ``energyBud IDLE``."""
    return f"{algorithm} {'SHUT' if shutdown else 'IDLE'}"


def budget_options(budget: Budget, shutdown: bool, declared: Sequence[str] | None = None) -> dict[str, Any]:
    """Options of a budgeted preset for one budget level (window of §V-C, budget as a fraction).

    ``monitoring_period_s`` (table I: 10 min) is passed only when the preset declares it (``declared``:
    its option names; None = pass it).
    """
    options: dict[str, Any] = {
        "budget_fraction": budget.fraction,
        "window_start_s": WINDOW_S[0],
        "window_end_s": WINDOW_S[1],
        "shutdown": shutdown,
    }
    if declared is None or "monitoring_period_s" in declared:
        options["monitoring_period_s"] = MONITORING_PERIOD_S
    return options


def _declared_options(preset: str) -> list[str] | None:
    from wattsched.schedulers.presets import PRESETS

    found = PRESETS.get(preset)
    return None if found is None else [o.name for o in found.options]


def build_runs(inputs: Sequence[MachineInputs], runs_dir: str | Path,
               algorithms: Sequence[Algorithm] = ALGORITHMS, budgets: Sequence[Budget] = BUDGETS,
               *, include_easy: bool = True) -> list[Run]:
    """The run matrix: per machine, EASY once plus every algorithm × {IDLE, SHUT} × budget.

    Every run is measured over the week (utilization, energy relative to N × Pcomp × week) with the
    budget window and the week as extra windows; its tags (machine, algorithm, variant, shutdown,
    budget_percent, budget_fraction, budget_j) become columns of results.csv.
    """
    runs: list[Run] = []
    window_s = WINDOW_S[1] - WINDOW_S[0]
    for inp in inputs:
        max_power_w = inp.nb_hosts * TAURUS.pstates[0].full_w
        common: dict[str, Any] = dict(platform=inp.platform, workload=inp.workload, window=(0.0, WEEK_S),
                                      max_power_w=max_power_w, tau_s=10.0,
                                      extra_windows={"budget": WINDOW_S, "week": (0.0, WEEK_S)})
        base_tags = {"machine": inp.machine.name, "nb_hosts": inp.nb_hosts, "inputs": inp.label}
        folder = Path(runs_dir) / inp.label
        if include_easy:
            runs.append(Run(name=f"{inp.label}/EASY", scheduler=EASY.preset, options={},
                            prefix=str(folder / "easy"), **common,
                            tags={**base_tags, "algorithm": EASY.name, "variant": EASY.name, "shutdown": False,
                                  "budget_percent": 100, "budget_fraction": math.inf, "budget_j": math.inf}))
        for algorithm in algorithms:
            declared = _declared_options(algorithm.preset)
            for shutdown in (False, True):
                for budget in budgets:
                    name = variant(algorithm.name, shutdown)
                    runs.append(Run(
                        name=f"{inp.label}/{name}/{budget.percent}",
                        scheduler=algorithm.preset,
                        options=budget_options(budget, shutdown, declared),
                        prefix=str(folder / f"{algorithm.preset}_{'shut' if shutdown else 'idle'}_b{budget.percent}"),
                        **common,
                        tags={**base_tags, "algorithm": algorithm.name, "variant": name, "shutdown": shutdown,
                              "budget_percent": budget.percent, "budget_fraction": budget.fraction,
                              "budget_j": budget_energy_j(inp.nb_hosts, budget.fraction * 100, window_s)},
                    ))
    return runs


# -------------------------------------------------------------------------------------- the inputs
def platform_file(inputs_dir: Path, nb_hosts: int) -> str:
    """A Taurus platform of ``nb_hosts`` hosts (SimGrid cluster form), written once."""
    from wattsched.platforms.generate import taurus_platform_xml

    path = inputs_dir / f"taurus_{nb_hosts}.xml"
    write_if_changed(path, taurus_platform_xml(nb_hosts))
    return str(path)


def synthetic_inputs(machine: Machine, nb_hosts: int, inputs_dir: Path, *, seed: int, load: float) -> MachineInputs:
    """A seeded synthetic week for ``machine`` at ``nb_hosts`` hosts and offered ``load`` (written once)."""
    from wattsched.workloads.synthetic import synthetic_week

    # the load as written (shortest repr): with two decimals, --load 0.951 reused the week made for 0.954
    path = inputs_dir / f"{machine.key}_{nb_hosts}h_seed{seed}_load{load!r}.json"
    if path.exists():
        nb_jobs = len(json.loads(path.read_text())["jobs"])
    else:
        workload = synthetic_week(nb_hosts, seed=seed, target_load=load, speed_flops=TAURUS.max_speed_flops)
        nb_jobs = len(workload["jobs"])
        write_if_changed(path, json.dumps(workload))
    return MachineInputs(machine, nb_hosts, platform_file(inputs_dir, nb_hosts), str(path),
                         f"synthetic week (workloads.synthetic, seed {seed}, offered load {load:.2f})", nb_jobs, load)


def split_swf(spec: str) -> tuple[str, float | None]:
    """``"trace.swf:86400"`` → ``("trace.swf", 86400.0)``; ``"trace.swf"`` → ``("trace.swf", None)``."""
    head, sep, tail = spec.rpartition(":")
    try:
        return (head, float(tail)) if sep and head else (spec, None)
    except ValueError:
        return spec, None


def machine_log(machine: Machine, pwa: str | os.PathLike | None = None, *,
                catalogue: Mapping[str, Any] | None = None) -> Path | None:
    """The machine's log from the archive mirror or the download cache (never downloaded), or None.

    Args:
        machine: its ``trace`` names the catalogue entry (None: no log, None returned).
        pwa: the mirror folder (:func:`workloads.pwa.find_pwa`: default ``$WATTSCHED_PWA`` or
            ``shared/data/pwa`` beside the repository).
        catalogue: ``{catalogue name: workloads.traces.Trace}`` to look in (default: the catalogue).

    Raises:
        OptionError: ``pwa`` is given and is not a folder.
        InputError: the file found differs from the catalogue's (sha256): never replaced by a synthetic week.
    """
    from wattsched.workloads.pwa import find_pwa
    from wattsched.workloads.traces import fetch_trace, find_trace

    if machine.trace is None:
        return None
    trace = catalogue[machine.trace] if catalogue is not None else find_trace(machine.trace)
    folder = find_pwa(pwa)
    try:
        return fetch_trace(trace, mirror=folder, download=False)
    except OptionError:  # in no mirror or cache
        return None


def _utc_day(unix_s: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(unix_s, tz=dt.timezone.utc).strftime("%Y-%m-%d")


def swf_inputs(machine: Machine, swf: str | os.PathLike, inputs_dir: Path, *, catalogue_name: str | None = None) -> MachineInputs:
    """One week of an SWF log (``path`` or ``path:start_s``) on the machine's full size.

    Without ``start_s`` the week is the log's busiest (:func:`workloads.swf.busiest_window`, starting on a
    whole day of the trace); jobs without a requested time get :data:`SWF_WALLTIME_RULE`.

    Raises:
        InputError: malformed SWF, or no job submitted in the week.
    """
    from wattsched.workloads.swf import busiest_window, summary_line, swf_to_batsim
    from wattsched.workloads.traces import sha256_of

    path, start_s = split_swf(str(swf))
    if start_s is None:
        start_s, load = busiest_window(path, nb_hosts=machine.nb_hosts, duration_s=WEEK_S, step_s=DAY_S)
        how = f"its busiest week (offered load {load:.2f})"
    else:
        how = "the week given"
    workload = swf_to_batsim(path, speed_flops=TAURUS.max_speed_flops, nb_hosts=machine.nb_hosts,
                             start_time_s=start_s, duration_s=WEEK_S, walltime_rule=SWF_WALLTIME_RULE)
    if not workload["jobs"]:
        raise InputError(path, "start", f"no job is submitted in the week from {start_s:g} s")
    name = Path(path).name
    unix0 = workload["meta"]["header"].get("unix_start_time")
    dates = (f", {_utc_day(unix0 + start_s)} … {_utc_day(unix0 + start_s + WEEK_S - 1)} UTC"
             if unix0 is not None else "")
    window = f"trace days {start_s / DAY_S:g}-{(start_s + WEEK_S) / DAY_S:g}{dates}"
    stem = Path(path).name.removesuffix(".gz").removesuffix(".swf") + f"_from{int(start_s)}"
    out = inputs_dir / f"{machine.key}_{machine.nb_hosts}h_swf_{stem}.json"
    write_if_changed(out, json.dumps(workload))
    what = f"PWA log {name}" + (f" (catalogue `{catalogue_name}`)" if catalogue_name else "")
    details = (f"{machine.name}: {what}, sha256 {sha256_of(Path(path))}; {how}: {window}; walltime rule "
               f"'{SWF_WALLTIME_RULE}' for jobs without a requested time",
               f"{machine.name}: `{summary_line(workload)}`")
    return MachineInputs(machine, machine.nb_hosts, platform_file(inputs_dir, machine.nb_hosts), str(out),
                         f"{what}, {how}: {window}", len(workload["jobs"]), details=details)


def machine_inputs(machine: Machine, nb_hosts: int, inputs_dir: Path, *, full: bool, swf: str | None = None,
                   pwa: str | os.PathLike | None = None, synthetic: bool = False, seed: int = 1,
                   load: float = 0.95) -> MachineInputs:
    """The week of one machine: ``swf`` when given; else its log when at hand (and, in the reduced mode,
    the machine has at most :data:`REDUCED_TRACE_MAX_HOSTS` hosts) unless ``synthetic``; else a synthetic
    week at ``nb_hosts`` (the source says why)."""
    if swf is not None:
        return swf_inputs(machine, swf, inputs_dir)
    why = ""
    if not synthetic and machine.trace is not None:
        log = machine_log(machine, pwa)
        if log is None:
            why = f"no {machine.trace} log in the mirror or cache"
        elif not full and machine.nb_hosts > REDUCED_TRACE_MAX_HOSTS:
            why = (f"the {machine.trace} log is at hand, but a real week needs all {machine.nb_hosts} hosts: "
                   "`--full`")
        else:
            return swf_inputs(machine, log, inputs_dir, catalogue_name=machine.trace)
    elif machine.trace is None:
        why = "no log of this machine in the archive copy"
    inp = synthetic_inputs(machine, nb_hosts, inputs_dir, seed=seed, load=load)
    return dataclasses.replace(inp, details=(f"{machine.name}: synthetic week: {why}",)) if why else inp


# ---------------------------------------------------------------------------------- the experiment
@dataclass
class ExperimentResult:
    """What :func:`run_experiment` produced."""

    frame: pd.DataFrame
    inputs: list[MachineInputs]
    missing: list[Algorithm]
    wall_s: float
    notes: list[str] = field(default_factory=list)


def calibrate_inputs(inputs: list[MachineInputs], out: Path, *, seed: int, workers: int | None, force: bool,
                     max_load: float = 1.35, step: float = 0.1, simulated: set[str] | None = None,
                     show_progress: bool | None = None) -> tuple[list[MachineInputs], list[str]]:
    """Raise the offered load of synthetic weeks until EASY's week utilization exceeds 70 %.

    Returns the final inputs and one note per machine (EASY's utilization at each load tried); adds to
    ``simulated`` the names of the EASY runs it simulated (not found already made).
    """
    notes: dict[str, list[str]] = {i.machine.key: [] for i in inputs}
    current = list(inputs)
    todo = list(range(len(current)))
    while todo:
        runs = build_runs([current[i] for i in todo], out / "runs", algorithms=())
        frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
        if simulated is not None and "status" in frame:
            simulated.update(frame.loc[frame["status"] == "done", "name"])
        nxt = []
        for i, (_, row) in zip(todo, frame.iterrows()):
            inp = current[i]
            util = row.get("utilization", math.nan)
            notes[inp.machine.key].append(f"load {inp.load:.2f} → EASY utilization {util:.3f}"
                                          if inp.load is not None else f"EASY utilization {util:.3f}")
            logger.info("%s (%d hosts): %s", inp.machine.name, inp.nb_hosts, notes[inp.machine.key][-1])
            if not util > MIN_EASY_UTILIZATION and (inp.load is None or inp.load + step > max_load + 1e-9):
                notes[inp.machine.key][-1] += " (not above 70 %: less busy than the paper's weeks)"
            if inp.load is not None and not util > MIN_EASY_UTILIZATION and inp.load + step <= max_load + 1e-9:
                current[i] = dataclasses.replace(
                    synthetic_inputs(inp.machine, inp.nb_hosts, out / "inputs", seed=seed,
                                     load=round(inp.load + step, 2)), details=inp.details)
                nxt.append(i)
        todo = nxt
    return current, [f"{k}: " + "; ".join(v) for k, v in notes.items()]


def run_experiment(out: str | Path, machines: Sequence[tuple[Machine, int]], *, seed: int = 1, load: float = 0.95,
                   swf: Mapping[str, str] | None = None, workers: int | None = None, force: bool = False,
                   algorithms: Sequence[Algorithm] = ALGORITHMS, budgets: Sequence[Budget] = BUDGETS,
                   size_note: str = "", full: bool = False, pwa: str | os.PathLike | None = None,
                   synthetic: bool = False, show_progress: bool | None = None) -> ExperimentResult:
    """Prepare the inputs, run EASY (calibrating synthetic loads), run the matrix, write the report.

    Args:
        out: output folder.
        machines: ``(machine, nb_hosts)`` to simulate.
        seed, load: seed and initial offered load of the synthetic weeks.
        swf: ``{machine key: "path[:start_s]"}`` traces to use instead of the catalogue's logs or synthetic
            weeks (no ``start_s``: the busiest week).
        full: the paper's sizes (every machine with a log at hand takes it; :func:`machine_inputs`).
        pwa: the archive mirror folder (:func:`workloads.pwa.find_pwa`).
        synthetic: synthetic weeks even where a log is at hand.
        workers: processes of the sweep (default CPU count).
        force: simulate again runs whose outputs exist.
        size_note: how the size was chosen, for the report.
        show_progress: as :func:`run_sweep`'s (False: no progress bar nor progress lines, ``-q``).
    """
    t0 = time.perf_counter()
    out = Path(out)
    swf = dict(swf or {})
    inputs = [machine_inputs(m, n, out / "inputs", full=full, swf=swf.get(m.key), pwa=pwa, synthetic=synthetic,
                             seed=seed, load=load) for m, n in machines]
    resized = [f"{i.machine.name} {i.nb_hosts}" for i, (_, n) in zip(inputs, machines) if i.nb_hosts != n]
    if resized:
        size_note += (" A real week runs on the machine's full size: " + ", ".join(resized) + " hosts.")
    simulated: set[str] = set()
    inputs, notes = calibrate_inputs(inputs, out, seed=seed, workers=workers, force=force, simulated=simulated,
                                     show_progress=show_progress)
    have, missing = available_algorithms(algorithms)
    runs = build_runs(inputs, out / "runs", have, budgets)
    frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
    if "status" in frame:  # EASY's runs, made by the calibration above, were simulated by this invocation too
        frame.loc[frame["name"].isin(simulated) & (frame["status"] == "skipped"), "status"] = "done"
    frame = add_derived_columns(frame)
    write_table(frame, out / "results.csv")
    result = ExperimentResult(frame, inputs, missing, time.perf_counter() - t0, notes)
    plot_figures(frame, out)
    write_report(frame, out / "report.md", inputs=inputs, missing=missing, wall_s=result.wall_s,
                 notes=notes, size_note=size_note, workers=workers)
    return result


def add_derived_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``budget_energy_over_b`` = energy inside the window / B (NaN for EASY)."""
    frame = frame.copy()
    if "budget_energy_j" in frame and "budget_j" in frame:
        b = frame["budget_j"].astype(float).replace(math.inf, np.nan)
        frame["budget_energy_over_b"] = frame["budget_energy_j"].astype(float) / b
    return frame


# ------------------------------------------------------------------------------------- the report
def metric_table(frame: pd.DataFrame, metric: Metric) -> pd.DataFrame:
    """Rows = budget % (100 → 30), columns = variants (then EASY at 100 %), values = the metric."""
    ok = frame[frame["status"] != "failed"] if "status" in frame else frame
    if metric.column not in ok or ok.empty:
        return pd.DataFrame()
    budgeted = ok[ok["algorithm"] != EASY.name]
    if budgeted.empty:
        table = pd.DataFrame(index=pd.Index([], name="budget_percent"))
    else:
        table = budgeted.pivot_table(index="budget_percent", columns="variant", values=metric.column,
                                     aggfunc="mean")
    order = [variant(a.name, s) for a in ALGORITHMS for s in (False, True)]
    table = table.reindex(columns=[c for c in order if c in table.columns] +
                          sorted(c for c in table.columns if c not in order))
    easy = ok[ok["algorithm"] == EASY.name]
    if len(easy):
        table = table.reindex(index=sorted(set(table.index) | {100}, reverse=True))
        table[EASY.name] = np.nan
        table.loc[100, EASY.name] = float(easy[metric.column].mean())
    return table.sort_index(ascending=False)


def _markdown(table: pd.DataFrame, fmt: str) -> str:
    if table.empty:
        return "_no data_\n"
    head = "| budget | " + " | ".join(str(c) for c in table.columns) + " |"
    rule = "|---:|" + "---:|" * len(table.columns)
    lines = [head, rule]
    for budget, row in table.iterrows():
        cells = ["" if pd.isna(v) else fmt.format(v) for v in row]
        lines.append(f"| {budget} % | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class OrderingCheck:
    """One of the paper's claims checked on our numbers.

    Attributes:
        claim: the claim in words.
        status: ``holds``, ``fails`` or ``not checked``.
        summary: one sentence with the decisive numbers.
        violations: the cases where it fails, with their numbers (markdown table rows).
    """

    claim: str
    status: str
    summary: str
    violations: tuple[str, ...] = ()

    def markdown(self) -> str:
        text = f"- **{self.claim}**: **{self.status}**. {self.summary}\n"
        if self.violations:
            text += "\n" + "\n".join(f"  {v}" for v in self.violations) + "\n"
        return text


UTILIZATION_CLAIM = "energyBud ≥ reducePC ≥ powercap in utilization at budgets below 100 %"
SHUTDOWN_CLAIM = "opportunistic shutdown lowers energyBud's AVEbsld"


def check_utilization_order(frame: pd.DataFrame, tolerance: float = 1e-9) -> OrderingCheck:
    """Paper §V-E, figure 2: at every budget < 100 % and the same shutdown setting,
    util(energyBud) ≥ util(reducePC) ≥ util(powercap)."""
    names = ("energyBud", "reducePC", "powercap")
    present = set(frame.get("algorithm", pd.Series(dtype=str)))
    absent = [n for n in names if n not in present]
    if absent:
        return OrderingCheck(UTILIZATION_CLAIM, "not checked", f"no results for {', '.join(absent)}.")
    rows, failures, compared = [], 0, 0
    for shutdown in (False, True):
        for pct in sorted(set(frame["budget_percent"]), reverse=True):
            if pct >= 100:
                continue
            values = []
            for name in names:
                sel = frame[(frame["algorithm"] == name) & (frame["shutdown"] == shutdown) &
                            (frame["budget_percent"] == pct)]
                values.append(float(sel["utilization"].mean()) if len(sel) else math.nan)
            if any(math.isnan(v) for v in values):
                continue
            compared += 1
            ok = values[0] >= values[1] - tolerance and values[1] >= values[2] - tolerance
            if not ok:
                failures += 1
                rows.append(f"| {'SHUT' if shutdown else 'IDLE'} | {pct} % | {values[0]:.4f} | {values[1]:.4f} | "
                            f"{values[2]:.4f} |")
    if compared == 0:
        return OrderingCheck(UTILIZATION_CLAIM, "not checked", "no budget below 100 % with all three algorithms.")
    if failures == 0:
        return OrderingCheck(UTILIZATION_CLAIM, "holds", f"at all {compared} (budget, shutdown) cases below 100 %.")
    head = ("| shutdown | budget | energyBud | reducePC | powercap |", "|---|---:|---:|---:|---:|")
    return OrderingCheck(UTILIZATION_CLAIM, "fails",
                         f"in {failures} of {compared} (budget, shutdown) cases below 100 % (utilization):",
                         head + tuple(rows))


def check_shutdown_lowers_bsld(frame: pd.DataFrame) -> OrderingCheck:
    """Paper §V-F, table II (−8.61 % on average): energyBud SHUT has a lower AVEbsld than energyBud IDLE.

    Holds when the mean percent change (SHUT − IDLE) / IDLE over the budgets is negative; the budgets
    where SHUT is not lower are listed with their numbers either way.
    """
    eb = frame[frame["algorithm"] == "energyBud"] if "algorithm" in frame else frame.iloc[0:0]
    if eb.empty:
        return OrderingCheck(SHUTDOWN_CLAIM, "not checked", "no results for energyBud.")
    idle = eb[eb["shutdown"] == False].groupby("budget_percent")["mean_bounded_slowdown"].mean()  # noqa: E712
    shut = eb[eb["shutdown"] == True].groupby("budget_percent")["mean_bounded_slowdown"].mean()  # noqa: E712
    both = sorted(set(idle.dropna().index) & set(shut.dropna().index), reverse=True)
    if not both:
        return OrderingCheck(SHUTDOWN_CLAIM, "not checked", "energyBud lacks IDLE or SHUT results.")
    changes = {p: (shut[p] - idle[p]) / idle[p] for p in both}
    mean_change = float(np.mean(list(changes.values())))
    worse = [p for p in both if not shut[p] < idle[p]]
    rows = tuple(f"| {p} % | {idle[p]:.2f} | {shut[p]:.2f} | {100 * changes[p]:+.1f} % |" for p in worse)
    head = ("| budget | AVEbsld IDLE | AVEbsld SHUT | change |", "|---:|---:|---:|---:|")
    status = "holds" if mean_change < 0 else "fails"
    summary = (f"mean change of AVEbsld with shutdown {100 * mean_change:+.2f} % over {len(both)} budgets "
               f"(paper, table II: −8.61 %); lower at {len(both) - len(worse)} of {len(both)} budgets"
               + ("; not lower at:" if worse else "."))
    return OrderingCheck(SHUTDOWN_CLAIM, status, summary, head + rows if worse else ())


#: Table II of the paper (§V-F): mean percent change (SHUT − IDLE) / IDLE of each measure over its 30 weeks'
#: normalized measures and every budget; {measure column: {algorithm: percent}}.
PAPER_TABLE2: Mapping[str, Mapping[str, float]] = {
    "mean_bounded_slowdown": {"powercap": 0.16, "reducePC": 0.88, "energyBud": -8.61},
    "utilization": {"powercap": -0.05, "reducePC": 4.95, "energyBud": 5.74},
    "week_nb_jobs_started": {"powercap": -0.05, "reducePC": 1.4, "energyBud": 1.47},
    "window_energy_relative": {"powercap": -4.74, "reducePC": -1.78, "energyBud": -1.42},
}
_TABLE2_NAMES = {"mean_bounded_slowdown": "AVEbsld", "utilization": "Utilization",
                 "week_nb_jobs_started": "Number of jobs started", "window_energy_relative": "Energy consumed"}


def shutdown_changes(frame: pd.DataFrame) -> pd.DataFrame:
    """Our table II (paper §V-F): per measure (rows) and algorithm (columns), the mean over the budgets of
    the percent change 100 × (y_SHUT − y_IDLE) / y_IDLE, over the budgets where both runs exist (30 % has no
    IDLE run: its budget is below the platform held idle). One machine's raw measures (the paper's are
    normalized over 30 weeks)."""
    ok = frame[frame["status"] != "failed"] if "status" in frame else frame
    table = pd.DataFrame(index=list(PAPER_TABLE2), columns=[a.name for a in ALGORITHMS], dtype=float)
    for algorithm in table.columns:
        part = ok[ok["algorithm"] == algorithm] if "algorithm" in ok else ok.iloc[0:0]
        for measure in table.index:
            if part.empty or measure not in part:
                continue
            idle = part[part["shutdown"] == False].groupby("budget_percent")[measure].mean()  # noqa: E712
            shut = part[part["shutdown"] == True].groupby("budget_percent")[measure].mean()  # noqa: E712
            both = [b for b in idle.index if b in shut.index and idle[b] != 0
                    and not (pd.isna(idle[b]) or pd.isna(shut[b]))]
            if both:
                table.loc[measure, algorithm] = float(np.mean([100 * (shut[b] - idle[b]) / idle[b] for b in both]))
    return table


def table2_markdown(frame: pd.DataFrame) -> list[str]:
    """Report lines: our table II beside the paper's (ours / paper, in %)."""
    table = shutdown_changes(frame)
    if table.isna().all().all():
        return []
    lines = ["### Table II: mean change with shutdown, ours / the paper's", "",
             "Percent change (SHUT − IDLE) / IDLE at each budget where both ran, averaged over the budgets; the "
             "paper's are means over its 30 normalized weeks, ours one week's raw measures. Energy: over the "
             "week. Negative is better for AVEbsld and energy.", "",
             "| measure | " + " | ".join(table.columns) + " |", "|---|" + "---:|" * len(table.columns)]
    for measure, row in table.iterrows():
        cells = [("n/a" if pd.isna(v) else f"{v:+.2f} %") + f" / {PAPER_TABLE2[str(measure)][str(a)]:+.2f} %"
                 for a, v in row.items()]
        lines.append(f"| {_TABLE2_NAMES[str(measure)]} | " + " | ".join(cells) + " |")
    return lines + [""]


def write_report(frame: pd.DataFrame, path: str | Path, *, inputs: Sequence[MachineInputs] = (),
                 missing: Sequence[Algorithm] = (), wall_s: float | None = None, notes: Sequence[str] = (),
                 size_note: str = "", workers: int | None = None) -> Path:
    """``report.md``: setup, per machine one table per metric and the orderings checked."""
    path = Path(path)
    lines = ["# Energy-budget backfilling: the experiment of the paper's §V", ""]
    lines += [
        "Energy-budget paper §V: one week per machine, budget window days 2-5 "
        f"([{WINDOW_S[0]:.0f} s, {WINDOW_S[1]:.0f} s)), budgets "
        + ", ".join(f"{b.percent} %" for b in BUDGETS)
        + " of N × P̃comp × 3 days (49 % = P̃idle/P̃comp = 100/203.12), algorithms with (SHUT) and without "
        "(IDLE) opportunistic shutdown, EASY without budget as reference. Utilization and energy over the "
        "week; energy relative to N × Pcomp (190.738 W) × 7 days; AVEbsld (τ = 10 s) over all jobs; jobs "
        "started during the week and inside the window. Values come from one workload per machine (no "
        "normalization across traces, unlike the paper's figures).",
        "",
    ]
    if size_note:
        lines += [f"**Size**: {size_note}", ""]
    if wall_s is not None:
        reused = int((frame["status"] == "skipped").sum()) if "status" in frame else 0
        lines += [f"**Wall time**: {wall_s:.0f} s ({wall_s / 60:.1f} min) on {workers or os.cpu_count()} worker "
                  "processes" + (f", for the runs simulated in this invocation: {reused} of the {len(frame)} runs "
                                 "reused the outputs of an earlier one (`--force` simulates them again)."
                                 if reused else "."), ""]
    if missing:
        lines += ["**Missing algorithms**: the presets " + ", ".join(f"`{a.preset}` ({a.name})" for a in missing)
                  + " are not registered in `schedulers.presets.PRESETS`; they were not run and appear nowhere "
                  "below.", ""]
    if inputs:
        lines += ["## Inputs", "", "| machine | hosts | workload | jobs |", "|---|---:|---|---:|"]
        lines += [f"| {i.machine.name} | {i.nb_hosts} | {i.source} | {i.nb_jobs} |" for i in inputs]
        lines.append("")
        details = [d for i in inputs for d in i.details]
        if details:
            lines += [f"- {d}" for d in details] + [""]
    if notes:
        lines += ["EASY utilization over the week (a synthetic week's load is raised until it exceeds 70 %):", ""]
        lines += [f"- {n}" for n in notes] + [""]
    if "status" in frame:
        expected = refused_by_design(frame)
        refused, failures = failed_runs(frame[expected]), failed_runs(frame[~expected])
        if refused:
            lines += [f"**Refused runs** ({len(refused)}), as they should be: without shutdown a budget below the "
                      "platform held idle cannot be met, and the option check refuses it before simulating. They "
                      "are left out of every table.", ""]
            lines += [f"- `{n}`" for n, _ in refused] + [""]
        if failures:
            lines += [f"**Failed runs** ({len(failures)}): they are left out of every table.", ""]
            lines += [f"- `{n}`: {e}" for n, e in failures] + [""]
        frame = frame[frame["status"] != "failed"]
    for machine in sorted(set(frame["machine"]), key=lambda m: [x.name for x in MACHINES].index(m)
                          if m in [x.name for x in MACHINES] else 99):
        part = frame[frame["machine"] == machine]
        hosts = int(part["nb_hosts"].iloc[0]) if "nb_hosts" in part else 0
        lines += [f"## {machine}" + (f" ({hosts} hosts)" if hosts else ""), ""]
        lines += ["### Orderings of the paper", ""]
        lines += [check_utilization_order(part).markdown(), check_shutdown_lowers_bsld(part).markdown()]
        lines += table2_markdown(part)
        for metric in METRICS:
            table = metric_table(part, metric)
            if table.empty or table.isna().all().all():
                continue
            fig = f" (figure {metric.figure}: `{_figure_name(machine, metric)}`)" if metric.figure else ""
            lines += [f"### {metric.title}{fig}", "", _markdown(table, metric.fmt)]
    write_if_changed(path, "\n".join(lines))  # atomically: a full disk leaves no half report, and says so
    return path


# -------------------------------------------------------------------------------------- the plots
def refused_by_design(frame: pd.DataFrame) -> pd.Series:
    """Which runs failed because they had to: without shutdown, a budget below the platform held idle (under
    P̃idle / P̃comp of the all-computing energy: the 30 % level), which the budget's option check refuses
    before simulating (the paper's 30 % needs shutdown). Any other failure is a real one."""
    if "status" not in frame or "budget_fraction" not in frame:
        return pd.Series(False, index=frame.index)
    below_idle = frame["budget_fraction"] < TAURUS.estimated_idle_w / TAURUS.estimated_comp_w * (1 - 1e-9)
    said = frame["error"].astype(str).str.contains("below the policy's estimate of the platform held idle",
                                                   regex=False) if "error" in frame else False
    shutdown = frame["shutdown"].fillna(False).astype(bool) if "shutdown" in frame else False
    return (frame["status"] == "failed") & below_idle & ~shutdown & said


def _figure_name(machine: str, metric: Metric) -> str:
    key = next((m.key for m in MACHINES if m.name == machine), machine.lower().replace(" ", "-"))
    return f"{key}_fig{metric.figure}_{metric.stem}.png"


_COLOURS = {"energyBud": "tab:blue", "reducePC": "tab:orange", "powercap": "tab:green"}


def plot_figures(frame: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Figures 2-5 per machine: metric vs budget %, one line per variant (dashed = SHUT), EASY dotted.

    Figure 2 also draws the paper's baseline u_EASY × (3/7 × budget + 4/7) (§V-G) in black.
    """
    from matplotlib.figure import Figure

    from wattsched.analysis.plots import save_figure

    if "status" in frame:
        frame = frame[frame["status"] != "failed"]
    paths = []
    for machine in sorted(set(frame["machine"])):
        part = frame[frame["machine"] == machine]
        for metric in METRICS:
            if metric.figure is None or metric.column not in part:
                continue
            table = metric_table(part, metric)
            if table.empty:
                continue
            fig = Figure(figsize=(7, 4.5))
            ax = fig.add_subplot()
            budgets = np.array(table.index, dtype=float)
            for column in table.columns:
                if column == EASY.name:
                    continue
                algo, _, mode = str(column).partition(" ")
                ax.plot(budgets, table[column].to_numpy(dtype=float), marker="o" if mode == "IDLE" else "s",
                        linestyle="-" if mode == "IDLE" else "--", color=_COLOURS.get(algo), label=column)
            if EASY.name in table.columns and not pd.isna(table.loc[100, EASY.name]):
                easy = float(table.loc[100, EASY.name])
                ax.axhline(easy, color="grey", linestyle=":", label="EASY (no budget)")
                if metric.column == "utilization":
                    xs = np.linspace(budgets.min(), 100, 50)
                    ax.plot(xs, easy * (3 / 7 * xs / 100 + 4 / 7), color="black", linewidth=1,
                            label="u_EASY·(3/7·budget + 4/7)")
            ax.set_xlabel("energy budget (% of N × P̃comp × 3 days)")
            ax.set_ylabel(metric.title)
            ax.set_title(f"{machine}: {metric.title}")
            ax.invert_xaxis()
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
            fig.tight_layout()
            paths.append(save_figure(fig, Path(out_dir) / _figure_name(machine, metric)))
    return paths


# --------------------------------------------------------------------------------------------- CLI
def parse_swf_inputs(values: Sequence[str]) -> dict[str, str]:
    """``NAME=PATH[:START_S]`` values of ``--swf`` → ``{machine key: path[:start]}``."""
    keys = {m.key for m in MACHINES}
    found: dict[str, str] = {}
    for value in values:
        key, sep, path = value.partition("=")
        if not sep or key not in keys or not path:
            raise OptionError(f"--swf expects NAME=path[:start_s] with NAME in {', '.join(sorted(keys))}, got '{value}'")
        if key in found:
            raise OptionError(f"--swf {key}: given twice ({found[key]} and {path})")
        file, start_s = split_swf(path)
        if start_s is not None and not (math.isfinite(start_s) and start_s >= 0):
            raise OptionError(f"--swf {value}: START_S must be a number of seconds ≥ 0, got {start_s:g}")
        if not Path(file).exists():
            raise OptionError(f"--swf {key}: no file {path}")
        found[key] = path
    return found


def choose_machines(full: bool, names: Sequence[str] | None, scale: float | None) -> tuple[list[tuple[Machine, int]], str]:
    """``(machine, hosts)`` to simulate and a sentence on the size for the report."""
    chosen = [m for m in MACHINES if not names or m.key in names]
    unknown = set(names or ()) - {m.key for m in MACHINES}
    if unknown:
        raise OptionError(f"--machines: unknown machine(s) {', '.join(sorted(unknown))}; machines: "
                          + ", ".join(m.key for m in MACHINES))
    if scale is not None and not 0 < scale <= 1:
        raise OptionError(f"--scale must be in (0, 1], got {scale}")
    if full and scale is not None and scale != 1:
        raise OptionError(f"--full and --scale {scale:g}: give one of them (--full is the paper's sizes)")
    if scale is None and not full:
        sizes = [(m, REDUCED_HOSTS[m.key]) for m in chosen]
        how = "reduced: " + ", ".join(f"{m.name} {n} of {m.nb_hosts} hosts (1/{m.nb_hosts / n:.0f})"
                                      for m, n in sizes)
    else:
        scale = 1.0 if scale is None else scale
        sizes = [(m, max(16, round(m.nb_hosts * scale))) for m in chosen]
        desc = ", ".join(f"{m.name} {n} hosts" for m, n in sizes)
        if scale == 1.0:
            return sizes, f"full size ({desc}), one week each."
        how = f"reduced: every machine at {scale:g} of its hosts ({desc})"
    return sizes, (how + "; one full week each, window and budgets as in the paper; `--full` (make FULL=1) "
                   "runs the paper's sizes.")
