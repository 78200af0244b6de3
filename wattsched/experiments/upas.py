"""The UPAS paper's evaluation (§4): UPAS against EASY on five traces, at the original and at enlarged sizes.

Etinski, Corbalan, Labarta, Valero, "Utilization driven power-aware parallel job scheduling" (CSRD 2010), §3-4.

**Inputs** (table 1). The five machines: CTC (430 processors), SDSC (SDSC-SP2, 128), SDSC-Blue (1,152),
LLNL-Thunder (4,008) and LLNL-Atlas (9,216). The paper simulates 5,000 jobs of each log: job numbers 20K-25K
(SDSC 40K-45K, LLNL-Atlas 10K-15K). When the archive's cleaned logs are found (``--pwa DIR``, ``$WATTSCHED_PWA``
or ``../shared/data/pwa``, :mod:`wattsched.workloads.pwa`) the jobs numbered ``[first, first + 5000)`` are
converted (:func:`wattsched.workloads.swf.swf_to_batsim`: jobs that never ran are dropped, run times written at the
top gear's 2.3 Gflop/s), else a seeded synthetic trace shaped like the machine's row of table 1 (processors,
EASY's average utilization as offered load, users, 5,000 jobs; :mod:`wattsched.workloads.synthetic`) stands in.
Every job then gets its β (seed 1) and β profiles (:func:`wattsched.workloads.upas.beta_workload`; a job without a
requested time gets the next whole minute above its run time). The platforms are UPAS processors
(:func:`wattsched.platforms.generate.upas_platform_xml`, 100 W of running power at the top gear).

**Runs** (:func:`wattsched.experiments.sweep.run_sweep`, in parallel): per machine, EASY and UPAS (T = 600 s, U_upper
0.8, U_lower 0.5, f_upper 2.0 GHz, f_lower 1.4 GHz), both placing jobs on the first free processors (the paper's
"First-Fit", §2: placement ``non-contiguous``), with WQ_threshold 0, 4, 16 and no limit at the original size
(figures 1-4); EASY and UPAS with WQ_threshold 0 and no limit on the machine enlarged by 10, 20, 50 and 75 %
(figures 5-7, normalized to the original machine without UPAS); and, as checks of the paper's side remarks, UPAS
with T = 1 h (WQ 0 and no limit: "the difference in results is 1 % or less") and with the worst case β = 1 at start
(no limit). ``--full`` adds WQ_threshold 4 and 16 at the enlarged sizes, T = 1 h everywhere and two more β seeds
at the original size; ``--jobs N`` shortens every trace (a quick look; tests).

**Metrics** (:mod:`wattsched.analysis.dvfs`): the CPU energy of the paper's model in its two scenarios (idle
processors at 0 W; idle at the lowest gear's idle power), Batsim's energy beside them, the average BSLD of eq. 5-6
(threshold 10 min, a slowed job divided by its run time at the top gear), the jobs run at each gear, and the
utilization / average frequency of busy processors / waiting jobs over time (figure 4).

**Outputs**: ``--out`` holds ``inputs/``, ``runs/`` (Batsim CSVs) and ``results.csv`` (one row per run);
``--report-dir`` (default ``--out``) holds ``report.md`` (the paper's numbers side by side) and the figures.

Command line: ``wattsched reproduce upas --out results/upas --report-dir docs/results/upas [--full]``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from wattsched.base.fileio import write_if_changed
from wattsched.base.validate import check_count, option_error
from wattsched.energy_models.upas import UPAS_NODE, UPAS_POWER, enlarged_size
from wattsched.experiments.sweep import Run, failed_runs, read_timing, run_sweep, write_table
from wattsched.workloads.pwa import find_log

__all__ = ["MACHINES", "WQ_THRESHOLDS", "ENLARGEMENTS", "Machine", "prepare_inputs", "build_runs", "add_metrics",
           "run_experiment", "write_report", "synthetic_trace"]

logger = logging.getLogger(__name__)

DAY_S = 86400.0
#: The paper's resource selection, "First-Fit" (§2): the first free processors, not a contiguous block (with a
#: contiguous first fit EASY's LLNL-Atlas runs reach an average BSLD of 15.6, the paper's 1.08).
PLACEMENT: dict[str, Any] = {"placement": "non-contiguous"}
#: The paper's UPAS parameters (§4), the preset's defaults but WQ_threshold.
UPAS_DEFAULTS: dict[str, Any] = {**PLACEMENT, "interval_s": 600.0, "u_upper": 0.8, "u_lower": 0.5, "f_upper_ghz": 2.0,
                                 "f_lower_ghz": 1.4}
WQ_THRESHOLDS: tuple[int | None, ...] = (0, 4, 16, None)
ENLARGEMENTS: tuple[int, ...] = (10, 20, 50, 75)
GEARS_GHZ: tuple[float, ...] = UPAS_NODE.frequencies_ghz
TOP_SPEED = UPAS_NODE.max_speed_flops
REDUCED = tuple(f for f in GEARS_GHZ if f < max(GEARS_GHZ))


@dataclass(frozen=True)
class Machine:
    """A row of the paper's table 1 (statistics of EASY without UPAS) and where its log is.

    Attributes:
        key, name: short key and the paper's name.
        log: the archive's cleaned log.
        processors: the paper's machine size.
        first_job: the first job number of the 5,000 simulated ("Sim Jobs").
        avg_util, avg_lr, users, pct_medium, pct_low: table 1 (utilization and shares of time as fractions).
        paper_bsld: EASY's average BSLD when the paper gives it (§4.1).
    """

    key: str
    name: str
    log: str
    processors: int
    first_job: int
    avg_util: float
    avg_lr: float
    users: int
    pct_medium: float
    pct_low: float
    paper_bsld: float | None = None


MACHINES: dict[str, Machine] = {m.key: m for m in (
    Machine("ctc", "CTC", "CTC-SP2-1996-3.1-cln.swf.gz", 430, 20000, 0.7009, 1.61, 679, 0.4991, 0.2767),
    Machine("sdsc", "SDSC", "SDSC-SP2-1998-4.2-cln.swf.gz", 128, 40000, 0.8533, 8.17, 437, 0.2608, 0.0504, 24.91),
    Machine("sdsc-blue", "SDSC-Blue", "SDSC-BLUE-2000-4.2-cln.swf.gz", 1152, 20000, 0.6917, 2.31, 468, 0.5461,
            0.2572),
    Machine("llnl-thunder", "LLNL-Thunder", "LLNL-Thunder-2007-1.1-cln.swf.gz", 4008, 20000, 0.7959, 0.8, 283,
            0.2947, 0.1056, 1.0),
    Machine("llnl-atlas", "LLNL-Atlas", "LLNL-Atlas-2006-2.1-cln.swf.gz", 9216, 10000, 0.7525, 0.94, 131, 0.2597,
            0.1851, 1.08),
)}
NB_JOBS = 5000


def wq_label(wq: int | None) -> str:
    return "none" if wq is None else str(wq)


# ------------------------------------------------------------------------------------------ inputs
def synthetic_trace(machine: Machine, *, seed: int, nb_jobs: int = NB_JOBS) -> dict[str, Any]:
    """A seeded synthetic trace shaped like ``machine``'s row of table 1: its processors, ``nb_jobs`` jobs, its
    users, offered load = EASY's average utilization there (:func:`workloads.synthetic.synthetic_week` over a
    span chosen for about ``nb_jobs`` jobs, then cut to exactly that many). Run times at the top gear."""
    from wattsched.workloads.synthetic import synthetic_week

    def make(days: float) -> dict[str, Any]:
        return synthetic_week(machine.processors, seed=seed, duration_s=days * DAY_S, target_load=machine.avg_util,
                              speed_flops=TOP_SPEED, users=machine.users)

    days = 7.0
    work = make(days)
    for _ in range(3):
        n = len(work["jobs"])
        if n >= nb_jobs and n <= 1.1 * nb_jobs:
            break
        days *= 1.05 * nb_jobs / max(n, 1)
        work = make(days)
    jobs = work["jobs"][:nb_jobs]
    used = {j["profile"] for j in jobs}
    work["jobs"] = jobs
    work["profiles"] = {k: v for k, v in work["profiles"].items() if k in used}
    work["meta"]["nb_jobs_kept"] = len(jobs)
    return work


@dataclass(frozen=True)
class Inputs:
    """A machine as simulated: its workload (β) and its platforms by enlargement (0: the original)."""

    machine: Machine
    workload: str
    platforms: Mapping[int, str]
    sizes: Mapping[int, int]
    source: str
    nb_jobs: int
    span_s: float
    nb_estimated_walltimes: int
    synthetic: bool

    @property
    def label(self) -> str:
        return self.machine.key


def prepare_inputs(out: Path, machines: Sequence[Machine], *, pwa: str | None = None, seed: int = 1,
                   nb_jobs: int = NB_JOBS, synthetic: bool = False,
                   enlargements: Sequence[int] = ENLARGEMENTS) -> list[Inputs]:
    """The β workloads and the platforms of every machine and size, written once under ``out/inputs``.

    Raises:
        OptionError: ``pwa`` is given and does not hold a machine's log.
    """
    from wattsched.platforms.generate import upas_platform_xml
    from wattsched.workloads.swf import require_jobs, swf_to_batsim
    from wattsched.workloads.upas import beta_workload

    folder = out / "inputs"
    made = []
    for m in machines:
        log = None if synthetic else find_log(m.log, pwa)
        suffix = f"_{nb_jobs}" if nb_jobs != NB_JOBS else ""
        if log is not None:
            path = folder / f"{m.key}_jobs{m.first_job}{suffix}_beta{seed}.json"
            if not path.exists():
                # walltime_rule "none": jobs without a requested time get beta_workload's estimate (workloads/upas.py)
                base = swf_to_batsim(log, speed_flops=TOP_SPEED, nb_hosts=m.processors,
                                     job_numbers=(m.first_job, m.first_job + nb_jobs - 1), walltime_rule="none")
                require_jobs(base, log, f" among its jobs {m.first_job}-{m.first_job + nb_jobs - 1} (--jobs)")
                write_if_changed(path, json.dumps(beta_workload(base, seed=seed)))
        else:
            path = folder / f"{m.key}-like_seed{seed}{suffix}_beta{seed}.json"
            if not path.exists():
                write_if_changed(path, json.dumps(beta_workload(synthetic_trace(m, seed=seed, nb_jobs=nb_jobs),
                                                                seed=seed)))
        work = json.loads(path.read_text())
        meta = work.get("meta", {})
        jobs = work["jobs"]
        if log is not None:
            dropped = sum(meta.get("filtered", {}).get(k, 0) for k in ("cancelled", "no_runtime", "no_processors",
                                                                         "no_submit_time", "too_large"))
            source = (f"the real log {m.log}, jobs {m.first_job}-{m.first_job + nb_jobs - 1} ({len(jobs)} with a run "
                      f"time; {dropped} that never ran dropped)")
        else:
            source = (f"synthetic {m.name}-like trace (seed {seed}, {len(jobs)} jobs, offered load {m.avg_util}, "
                      f"{m.users} users)")
        platforms, sizes = {}, {}
        for pct in (0, *enlargements):
            n = enlarged_size(m.processors, pct)
            p = folder / f"upas_{n}.xml"
            write_if_changed(p, upas_platform_xml(n))
            platforms[pct], sizes[pct] = str(p), n
        made.append(Inputs(m, str(path), platforms, sizes, source, len(jobs),
                           float(max(j["subtime"] for j in jobs)) if jobs else 0.0,
                           int(meta.get("upas", {}).get("nb_estimated_walltimes", 0)), log is None))
    return made


# ------------------------------------------------------------------------------------------ runs
def _upas_options(wq: int | None, interval_s: float = 600.0, worst_case: bool = False) -> dict[str, Any]:
    options = {**UPAS_DEFAULTS, "interval_s": interval_s, "wq_threshold": wq}
    if worst_case:
        options["beta_at_start"] = "worst-case"
    return options


def build_runs(inputs: Sequence[Inputs], runs_dir: Path, *, full: bool = False) -> list[Run]:
    """Every run of the study (module docstring), tagged with machine, size, variant, WQ_threshold and interval."""
    runs: list[Run] = []
    for inp in inputs:
        key = inp.label

        def add(pct: int, variant: str, scheduler: str, options: Mapping[str, Any], wq: int | None = None,
                interval_s: float = 600.0, workload: str | None = None, seed: int = 1) -> None:
            name = f"{key}/{pct}/{variant}"
            runs.append(Run(name, inp.platforms[pct], workload or inp.workload, scheduler, dict(options),
                            prefix=str(runs_dir / key / f"size{pct}" / variant.replace("/", "_")), dynamic_jobs=True,
                            tags={"machine": key, "enlargement": pct, "nb_hosts": inp.sizes[pct], "variant": variant,
                                  "wq": wq_label(wq) if scheduler == "upas" else "", "interval_s": interval_s,
                                  "beta_seed": seed, "dvfs": scheduler == "upas"}))

        for pct in (0, *ENLARGEMENTS):
            add(pct, "easy", "easy-backfill", PLACEMENT)
            thresholds = WQ_THRESHOLDS if pct == 0 or full else (0, None)
            for wq in thresholds:
                add(pct, f"upas-wq{wq_label(wq)}", "upas", _upas_options(wq), wq)
            if pct == 0 or full:
                for wq in (thresholds if full else (0, None)):
                    add(pct, f"upas-wq{wq_label(wq)}-t3600", "upas", _upas_options(wq, 3600.0), wq, 3600.0)
        add(0, "upas-wqnone-worstcase", "upas", _upas_options(None, worst_case=True), None)
        if full:
            for seed in (2, 3):
                workload = _reseeded(inp, seed)
                add(0, f"easy-beta{seed}", "easy-backfill", PLACEMENT, workload=workload, seed=seed)
                for wq in (0, None):
                    add(0, f"upas-wq{wq_label(wq)}-beta{seed}", "upas", _upas_options(wq), wq, workload=workload,
                        seed=seed)
    return runs


def _reseeded(inp: Inputs, seed: int) -> str:
    """The machine's workload with the β of another seed (same jobs)."""
    from wattsched.workloads.upas import beta_workload

    path = Path(inp.workload).with_name(Path(inp.workload).stem + f"_reseed{seed}.json")
    if not path.exists():
        work = json.loads(Path(inp.workload).read_text())
        base = {**work, "jobs": [{k: v for k, v in j.items() if k != "beta"} for j in work["jobs"]]}
        write_if_changed(path, json.dumps(beta_workload(base, seed=seed)))
    return str(path)


# ------------------------------------------------------------------------------------------ metrics
def run_upas_metrics(prefix: str, workload: Mapping[str, Any], nb_hosts: int) -> dict[str, float]:
    """The paper's metrics of one run (:mod:`wattsched.analysis.dvfs`)."""
    from wattsched.analysis.dvfs import job_gears, jobs_per_gear, model_cpu_energy, share_of_time_below, upas_bsld
    from wattsched.analysis.outputs import load_outputs

    outputs = load_outputs(prefix)
    gears = job_gears(outputs.jobs, workload, gears_ghz=GEARS_GHZ, top_speed_flops=TOP_SPEED)
    energy = model_cpu_energy(gears, nb_hosts, model=UPAS_POWER, top_power_w=UPAS_NODE.top_power_w)
    counts = jobs_per_gear(gears)
    row: dict[str, float] = {
        "cpu_energy_idle0_j": energy["busy_j"], "cpu_energy_idle_low_j": energy["with_idle_j"],
        "bsld600": upas_bsld(outputs.jobs, gears), "busy_area_s": energy["busy_area_s"],
        "nb_jobs_reduced": int(sum(n for f, n in counts.items() if not math.isnan(f) and f < max(GEARS_GHZ))),
        "nb_jobs_gear_unknown": int(sum(n for f, n in counts.items() if math.isnan(f))),
        "mean_busy_frequency_ghz": float((gears["gear_ghz"] * gears["res"] * gears["run_s"]).sum()
                                         / max((gears["res"] * gears["run_s"]).sum(), 1e-300)),
        "pct_time_util_below_80": share_of_time_below(gears, nb_hosts, 0.8),
        "pct_time_util_below_50": share_of_time_below(gears, nb_hosts, 0.5),
        "nb_killed": int((outputs.jobs["final_state"] == "COMPLETED_WALLTIME_REACHED").sum()),
    }
    for f in GEARS_GHZ:
        row[f"jobs_at_{f:g}ghz"] = counts.get(f, 0)
    return row


def add_metrics(frame: pd.DataFrame, inputs: Sequence[Inputs]) -> pd.DataFrame:
    """The paper's metrics of every run, and each normalized to EASY on the original machine (same β seed)."""
    workloads: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for _, r in frame.iterrows():
        if r.get("status") == "failed":
            rows.append({})
            continue
        if r["workload"] not in workloads:
            workloads[r["workload"]] = json.loads(Path(r["workload"]).read_text())
        rows.append(run_upas_metrics(r["prefix"], workloads[r["workload"]], int(r["nb_hosts"])))
    extra = pd.DataFrame(rows, index=frame.index)
    out = pd.concat([frame, extra[[c for c in extra.columns if c not in frame.columns]]], axis=1)
    ok = out[out["status"] != "failed"] if "status" in out else out
    base = ok[(ok["variant"].str.startswith("easy")) & (ok["enlargement"] == 0)]
    base = base.set_index(["machine", "beta_seed"])
    for column, ratio in (("cpu_energy_idle0_j", "energy_idle0_ratio"), ("cpu_energy_idle_low_j", "energy_idle_low_ratio"),
                          ("window_energy_j", "batsim_energy_ratio"), ("bsld600", "bsld_ratio")):
        if column not in out:
            continue
        reference = [base[column].get((m, s), math.nan) if (m, s) in base.index else math.nan
                     for m, s in zip(out["machine"], out["beta_seed"])]
        out[ratio] = out[column] / np.array(reference, dtype=float)
    return out


# ------------------------------------------------------------------------------------------ driver
@dataclass
class UpasResult:
    frame: pd.DataFrame
    inputs: list[Inputs]
    wall_s: float
    report: Path
    notes: list[str] = field(default_factory=list)


def run_experiment(out: str | Path, *, report_dir: str | Path | None = None, machines: Sequence[str] | None = None,
                   pwa: str | None = None, synthetic: bool = False, full: bool = False, nb_jobs: int = NB_JOBS,
                   seed: int = 1, workers: int | None = None, force: bool = False,
                   show_progress: bool | None = None, note: Callable[[str], None] | None = None) -> UpasResult:
    """Inputs, runs, metrics, figures and report (module docstring).

    Raises:
        OptionError: an unknown machine, or ``pwa`` without a machine's log.
    """
    from wattsched.base.errors import OptionError

    t0 = time.perf_counter()
    out = Path(out)
    report = Path(report_dir) if report_dir is not None else out
    keys = list(machines) if machines else list(MACHINES)
    unknown = [k for k in keys if k not in MACHINES]
    if unknown:
        raise OptionError(f"--machines: unknown machine {', '.join(unknown)}; machines: {', '.join(MACHINES)}")
    # before any input is written (--jobs 1e9 read whole logs, or drew ever longer synthetic traces)
    check_count(nb_jobs, "jobs", "--jobs", "", "jobs per trace", option_error)
    timing = out / "timing.json"  # the wall time of the run that simulated everything, kept for re-renderings
    read_timing(timing)  # one edited by hand is refused before the runs, not read after them
    say = note or (lambda line: None)
    inputs = prepare_inputs(out, [MACHINES[k] for k in keys], pwa=pwa, seed=seed, nb_jobs=nb_jobs,
                            synthetic=synthetic)
    for inp in inputs:
        say(f"{inp.machine.name}: {inp.source}")
    runs = build_runs(inputs, out / "runs", full=full)
    say(f"{len(runs)} runs on {workers or os.cpu_count()} worker processes")
    frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
    say("metrics of every run")
    frame = add_metrics(frame, inputs)
    write_table(frame, out / "results.csv")
    say("figures and report")
    figures = plot_figures(frame, inputs, report)
    wall = time.perf_counter() - t0
    simulated = bool((frame["status"] == "done").all())
    if simulated:
        write_if_changed(timing, json.dumps({"wall_s": wall, "runs": len(frame), "workers": workers or os.cpu_count()}))
    measured = None if simulated else read_timing(timing)
    path = write_report(frame, report / "report.md", inputs=inputs, wall_s=wall, workers=workers, figures=figures,
                        full=full, nb_jobs=nb_jobs, measured=measured)
    return UpasResult(frame, inputs, wall, path)


# ------------------------------------------------------------------------------------------ figures
def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] != "failed"] if "status" in frame else frame


def _original(frame: pd.DataFrame) -> pd.DataFrame:
    ok = _ok(frame)
    return ok[(ok["enlargement"] == 0) & (ok["interval_s"] == 600.0) & (ok["beta_seed"] == 1)
              & ~ok["variant"].str.contains("worstcase")]


def _bars(ax: Any, table: pd.DataFrame, machines: Sequence[str], series: Sequence[str], labels: Sequence[str],
          ylabel: str, title: str, baseline: float | None = 1.0) -> None:
    width = 0.8 / len(series)
    x = np.arange(len(machines))
    for i, (s, label) in enumerate(zip(series, labels)):
        values = [table.loc[m, s] if m in table.index and s in table.columns else np.nan for m in machines]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label)
    ax.set_xticks(x, [MACHINES[m].name for m in machines], fontsize=8)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linewidth=0.8, linestyle=":")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=len(series))


def plot_figures(frame: pd.DataFrame, inputs: Sequence[Inputs], folder: Path) -> list[Path]:
    """Figures shaped like the paper's 1-7 (PNG files in ``folder``)."""
    from matplotlib.figure import Figure

    from wattsched.analysis.plots import save_figure

    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    orig = _original(frame)
    machines = [i.label for i in inputs]
    if orig.empty:
        return paths
    upas = orig[orig["dvfs"].astype(bool)]
    wq_series = [f"upas-wq{wq_label(w)}" for w in WQ_THRESHOLDS]
    wq_labels = [f"WQ {wq_label(w)}" for w in WQ_THRESHOLDS]

    def pivot(column: str) -> pd.DataFrame:
        return upas.pivot_table(index="machine", columns="variant", values=column, aggfunc="first")

    fig = Figure(figsize=(9, 6.5))
    axes = fig.subplots(2, 1)
    _bars(axes[0], pivot("energy_idle0_ratio"), machines, wq_series, wq_labels, "energy / EASY's",
          "Figure 1 (top): CPU energy, idle processors at 0 W")
    _bars(axes[1], pivot("energy_idle_low_ratio"), machines, wq_series, wq_labels, "energy / EASY's",
          "Figure 1 (bottom): CPU energy, idle processors at the lowest gear's idle power")
    for ax in axes:
        ax.set_ylim(0.75, 1.05)
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig1_energy.png", dpi=90))

    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot()
    _bars(ax, pivot("bsld_ratio"), machines, wq_series, wq_labels, "avg BSLD / EASY's",
          "Figure 2: average BSLD (eq. 5-6, threshold 10 min), normalized to EASY")
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig2_bsld.png", dpi=90))

    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot()
    _bars(ax, pivot("nb_jobs_reduced"), machines, wq_series, wq_labels, "jobs", 
          "Figure 3: jobs run at a reduced frequency", baseline=None)
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig3_reduced_jobs.png", dpi=90))

    paths += _figure4(frame, inputs, folder)

    ok = _ok(frame)
    grown = ok[(ok["interval_s"] == 600.0) & (ok["beta_seed"] == 1) & ~ok["variant"].str.contains("worstcase")]
    for number, wq in ((5, 0), (6, None)):
        fig = Figure(figsize=(10, 3.8))
        axes = fig.subplots(1, 2)
        for ax, column, scenario in ((axes[0], "energy_idle0_ratio", "idle at 0 W"),
                                     (axes[1], "energy_idle_low_ratio", "idle at the lowest gear")):
            for m in machines:
                part = grown[(grown["machine"] == m) & (grown["variant"] == f"upas-wq{wq_label(wq)}")]
                part = part.sort_values("enlargement")
                ax.plot(part["enlargement"], part[column], marker="o", label=MACHINES[m].name)
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
            ax.set_xlabel("system size increase (%)")
            ax.set_ylabel("energy / original EASY")
            ax.set_title(f"Figure {number}: WQ {wq_label(wq)}, {scenario}", fontsize=10)
            ax.legend(fontsize=7)
        fig.tight_layout()
        paths.append(save_figure(fig, folder / f"fig{number}_enlarged_energy_wq{wq_label(wq)}.png", dpi=90))

    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2)
    for ax, wq in zip(axes, (0, None)):
        for m in machines:
            part = grown[(grown["machine"] == m) & (grown["variant"] == f"upas-wq{wq_label(wq)}")]
            part = part.sort_values("enlargement")
            ax.plot(part["enlargement"], part["bsld_ratio"], marker="o", label=MACHINES[m].name)
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel("system size increase (%)")
        ax.set_ylabel("avg BSLD / original EASY")
        ax.set_title(f"Figure 7: BSLD, WQ {wq_label(wq)}", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig7_enlarged_bsld.png", dpi=90))
    return paths


def _figure4(frame: pd.DataFrame, inputs: Sequence[Inputs], folder: Path) -> list[Path]:
    """SDSC-Blue (or the first machine): utilization, average frequency of busy processors and waiting jobs."""
    from matplotlib.figure import Figure

    from wattsched.analysis.dvfs import job_gears, time_series
    from wattsched.analysis.outputs import load_outputs
    from wattsched.analysis.plots import save_figure

    orig = _original(frame)
    chosen = next((i for i in inputs if i.label == "sdsc-blue"), inputs[0] if inputs else None)
    if chosen is None:
        return []
    work = json.loads(Path(chosen.workload).read_text())
    fig = Figure(figsize=(10, 7))
    axes = fig.subplots(3, 1, sharex=True)
    for variant, colour, label in (("easy", "grey", "EASY"), ("upas-wqnone", "tab:blue", "UPAS, WQ no limit")):
        sel = orig[(orig["machine"] == chosen.label) & (orig["variant"] == variant)]
        if sel.empty:
            continue
        jobs = load_outputs(sel["prefix"].iloc[0]).jobs
        gears = job_gears(jobs, work, gears_ghz=GEARS_GHZ, top_speed_flops=TOP_SPEED)
        series = time_series(gears, chosen.sizes[0], bin_s=3600.0)
        days = series["t_s"] / DAY_S
        axes[0].step(days, series["utilization"], where="post", color=colour, linewidth=0.8, label=label)
        axes[1].step(days, series["busy_frequency_ghz"], where="post", color=colour, linewidth=0.8, label=label)
        axes[2].step(days, series["waiting_jobs"], where="post", color=colour, linewidth=0.8, label=label)
    axes[0].axhline(0.8, color="red", linewidth=0.6, linestyle=":")
    axes[0].axhline(0.5, color="green", linewidth=0.6, linestyle=":")
    axes[0].set_ylabel("utilization")
    axes[1].set_ylabel("avg GHz of\nbusy processors")
    axes[2].set_ylabel("waiting jobs")
    axes[2].set_xlabel("day (hourly means)")
    axes[0].set_title(f"Figure 4: {chosen.machine.name}, utilization, average frequency and wait queue", fontsize=10)
    axes[0].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    return [save_figure(fig, folder / f"fig4_{chosen.label}_over_time.png", dpi=90)]


# ------------------------------------------------------------------------------------------ report
def _pct(ratio: float) -> str:
    return "n/a" if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)) else f"{(ratio - 1) * 100:+.1f} %"


def write_report(frame: pd.DataFrame, path: Path, *, inputs: Sequence[Inputs], wall_s: float, workers: int | None,
                 figures: Sequence[Path] = (), full: bool = False, nb_jobs: int = NB_JOBS,
                 measured: Mapping[str, Any] | None = None) -> Path:
    """``report.md``: inputs and table 1, the original size (figures 1-3), the enlarged sizes (figures 5-7), the
    paper's claims checked on our numbers, the side checks (T = 1 h, worst-case β), Batsim's energy, figures."""
    lines = ["# UPAS: the evaluation of the UPAS paper's §4", "",
             "Etinski et al., *Utilization driven power-aware parallel job scheduling* (CSRD 2010). EASY backfilling "
             "against EASY + UPAS (preset `upas`: T = 600 s, U_upper 0.8, U_lower 0.5, f_upper 2.0 GHz, f_lower 1.4 "
             "GHz, WQ_threshold 0 / 4 / 16 / no limit, β known at start) on the paper's five machines, one host per "
             "processor of table 2's gears (`wattsched platform --node upas`), each job with a β drawn by its size "
             "(§3.4) and a profile that runs T(f) = T·(β·(f_top/f − 1) + 1) at any gear (eq. 4). Energies are the "
             "CPU energy of the paper's model (eq. 3) in its two scenarios, normalized to EASY on the original "
             "machine; BSLD is eq. 5-6 with its 10-minute threshold.", ""]
    cores = workers or os.cpu_count()
    if measured is None:
        lines.append(f"**Wall time**: {wall_s:.0f} s ({wall_s / 60:.1f} min) for {len(frame)} runs on {cores} worker "
                     f"processes (`make reproduce-upas`{', --full' if full else ''}).")
    else:
        lines.append(f"**Wall time**: {measured['wall_s']:.0f} s ({measured['wall_s'] / 60:.1f} min) for "
                     f"{measured['runs']} runs on {measured['workers']} worker processes (the run that simulated them; "
                     f"this report was re-rendered from their outputs in {wall_s:.0f} s).")
    lines += ["", "## Inputs and table 1", "",
              "| machine | processors | source | jobs | span (days) | requested time estimated | EASY util (ours / paper) "
              "| %T util < 80 % (ours / paper) | %T util < 50 % (ours / paper) | EASY avg BSLD (ours / paper) |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    ok = _ok(frame)
    orig = _original(frame)
    for inp in inputs:
        m = inp.machine
        easy = orig[(orig["machine"] == m.key) & (orig["variant"] == "easy")]
        if easy.empty:
            continue
        e = easy.iloc[0]
        paper_bsld = f"{m.paper_bsld:g}" if m.paper_bsld is not None else "–"
        lines.append(f"| {m.name} | {m.processors} | {inp.source} | {inp.nb_jobs} | {inp.span_s / DAY_S:.1f} | "
                     f"{inp.nb_estimated_walltimes} | {e['utilization']:.3f} / {m.avg_util:.3f} | "
                     f"{e['pct_time_util_below_80'] * 100:.1f} / {m.pct_medium * 100:.1f} | "
                     f"{e['pct_time_util_below_50'] * 100:.1f} / {m.pct_low * 100:.1f} | "
                     f"{e['bsld600']:.2f} / {paper_bsld} |")
    lines += ["", "Our utilization is over [first submission, last end] of the extract and the shares of time are over "
              "its 10-minute intervals (eq. 1). The paper's Avg LR (\"average load requested\") is not defined in its "
              "text and is not computed. Jobs without a requested time (SWF field 9 = −1) get the next whole minute "
              "above their run time (`wattsched/workloads/upas.py`); jobs that ran as long as their request or longer "
              "are killed at their walltime, as the paper's simulator does.", ""]
    failures = failed_runs(frame)
    if failures:
        lines += [f"**Failed runs** ({len(failures)}), left out below:", ""] + [f"- `{n}`: {e}" for n, e in failures] + [""]
    lines += READING + [""]

    lines += ["## Original size (figures 1-3)", "",
              "Energy and BSLD relative to EASY (negative: lower). *idle 0 W*: computational energy; *idle low*: idle "
              "processors at the lowest gear's idle power (21.3 % of the top running power); *Batsim*: the platform "
              "energy Batsim reports for the same run (a job's `1 − β` delay part billed at its gear's idle power, "
              "idle hosts at the idle power of the gear they last ran at).", "",
              "| machine | WQ | energy idle 0 W | energy idle low | energy Batsim | avg BSLD | BSLD / EASY | jobs at 2.0 / "
              "1.4 GHz | jobs reduced (of all) | killed |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for inp in inputs:
        part = orig[orig["machine"] == inp.label]
        for variant in ["easy", *(f"upas-wq{wq_label(w)}" for w in WQ_THRESHOLDS)]:
            sel = part[part["variant"] == variant]
            if sel.empty:
                continue
            r = sel.iloc[0]
            wq = "EASY" if variant == "easy" else variant.removeprefix("upas-wq")
            lines.append(f"| {inp.machine.name} | {wq} | {_pct(r['energy_idle0_ratio'])} | "
                         f"{_pct(r['energy_idle_low_ratio'])} | {_pct(r['batsim_energy_ratio'])} | {r['bsld600']:.2f} | "
                         f"{r['bsld_ratio']:.3f} | {r['jobs_at_2ghz']:.0f} / {r['jobs_at_1.4ghz']:.0f} | "
                         f"{r['nb_jobs_reduced']:.0f} of {r['nb_jobs_started']:.0f} | {r['nb_killed']:.0f} |")
    lines.append("")
    lines += findings(frame, inputs)

    lines += ["## Enlarged machines (figures 5-7)", "",
              "Relative to EASY on the original machine. EASY on the enlarged machine is shown for reference.", "",
              "| machine | size | processors | EASY: energy idle 0 / idle low / BSLD | WQ 0: energy idle 0 / idle low / "
              "BSLD | WQ no limit: energy idle 0 / idle low / BSLD |", "|---|---:|---:|---|---|---|"]
    grown = ok[(ok["interval_s"] == 600.0) & (ok["beta_seed"] == 1) & ~ok["variant"].str.contains("worstcase")]
    for inp in inputs:
        for pct in (0, *ENLARGEMENTS):
            cells = []
            for variant in ("easy", "upas-wq0", "upas-wqnone"):
                sel = grown[(grown["machine"] == inp.label) & (grown["enlargement"] == pct) & (grown["variant"] == variant)]
                if sel.empty:
                    cells.append("")
                    continue
                r = sel.iloc[0]
                cells.append(f"{_pct(r['energy_idle0_ratio'])} / {_pct(r['energy_idle_low_ratio'])} / "
                             f"{_pct(r['bsld_ratio'])}")
            lines.append(f"| {inp.machine.name} | +{pct} % | {inp.sizes[pct]} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += side_checks(frame, inputs)
    if figures:
        lines += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures] + [""]
    write_if_changed(path, "\n".join(lines))  # atomically: a full disk leaves no half report, and says so
    return path


#: How we read the paper where it leaves a choice, and what we do differently (a section of the report).
READING: list[str] = [
    "## How we read the paper", "",
    "- **EASY** is FCFS with one reservation; jobs go to the first free processors (the paper's \"First-Fit\", §2; "
    "placement `non-contiguous`). With contiguous blocks instead, EASY's LLNL-Atlas (70 % of its work in jobs of "
    "8,192 of 9,216 processors) reached an average BSLD of 15.6 and a utilization of 0.710 in our first full run, "
    "against the paper's 1.08 and 0.7525; with the first free processors they come close to table 1's on every "
    "machine (above).",
    "- **Eq. 1-2.** The utilization of the previous 10-minute interval is integrated from job start and end events; "
    "before the first interval ends it is 0 (the empty machine). WQ_size counts the jobs waiting when the job "
    "starts, itself excluded (otherwise WQ_threshold = 0 would never allow DVFS). A waiting job's gear for EASY's "
    "reservation is eq. 2 evaluated at each pass, not at its submission as in the paper (it does not move the "
    "reservation, which depends on the running jobs' ends).",
    "- **β** (§3.4): N(0.5, 0.01) is read as mean and *variance* (σ = 0.1; 0.0064 = 0.08²), draws clipped to [0.01, "
    "1], one per job (seed 1).",
    "- **Requested time and Batsim's walltime.** A workload's walltime is the user's requested time at the top gear. "
    "A job started at a lower gear is re-registered (Batsim's dynamic jobs) with its requested time rescaled by eq. 4 "
    "(with its β, or β = 1 in the worst-case variant), so no job is killed because of DVFS; a job that ran as long "
    "as its request or longer in the trace is killed at its (rescaled) walltime, as the paper's simulator kills it "
    "(the *killed* column).",
    "- **Jobs.** The jobs numbered 20K-25K (SDSC 40K-45K, LLNL-Atlas 10K-15K) of the archive's cleaned logs; jobs "
    "that never ran (run time ≤ 0, mostly cancelled) are left out, so SDSC has 4,311 jobs and LLNL-Atlas 3,480, not "
    "5,000. A job without a requested time (SWF field 9 = −1) gets the next whole minute above its run time: 3,719 "
    "of LLNL-Thunder's jobs and 1,461 of LLNL-Atlas's; the paper does not say what it did (EASY needs an estimate). "
    "CTC has the paper's 430 processors (the archive's header says its batch partition had 338).",
    "- **Energies.** The model's CPU energy is computed from each job's processors, run time and gear (read back from "
    "its run time, `wattsched/analysis/dvfs.py`) over [first submission, last end] of the run; the idle scenario "
    "bills every other processor-second at the lowest gear's idle power. Batsim's energy (its own power model on the "
    "same platform, 100 W running at 2.3 GHz) bills a job's delay part, the (1 − β) of its time that does not scale "
    "with the frequency, at its gear's idle power, and idle processors at the idle power of the gear they last ran "
    "at: it is shown beside the model's, not used for the figures.",
]


def _value(frame: pd.DataFrame, machine: str, variant: str, column: str, pct: int = 0) -> float:
    sel = frame[(frame["machine"] == machine) & (frame["variant"] == variant) & (frame["enlargement"] == pct)]
    return float(sel[column].iloc[0]) if not sel.empty and column in sel else math.nan


#: The one rule that decides "holds" (stated in the report above the claims).
TOLERANCE_POINTS = 1.0  # an energy number or range of the paper, widened by this many percentage points
BSLD_TOLERANCE_POINTS = 10.0  # a BSLD change the paper gives as approximate ("≈ 50 %")
SLACK_ENERGY_POINTS = 0.3  # noise allowed in a direction ("grows", "decreases") of savings
SLACK_BSLD_RATIO = 0.02  # the same for a BSLD ratio


def findings(frame: pd.DataFrame, inputs: Sequence[Inputs]) -> list[str]:
    """The paper's claims (§4, abstract, conclusions) beside our numbers, each decided by one explicit test.

    The tests follow one rule (:data:`TOLERANCE_POINTS` and the slacks above): a number or range the paper gives
    for an energy saving holds when ours is within 1 percentage point of it (on every machine the claim names, or
    on the mean over machines when the paper gives one figure for all); a BSLD change the paper gives as
    approximate, within 10 points; a direction ("grows", "decreases", "the most with no limit") on every machine,
    with 0.3 points (energy) or 0.02 (BSLD ratio) of slack; "–" where the paper gives no number to test.
    """
    ok = _ok(frame)
    keys = [i.label for i in inputs]
    name = {k: MACHINES[k].name for k in keys}
    tol, slack = TOLERANCE_POINTS, SLACK_ENERGY_POINTS
    out = ["## The paper's claims on our numbers", "",
           "Savings are of the computational energy (idle processors at 0 W) unless said otherwise; *best WQ* is the "
           "WQ_threshold that saves most on a machine. **One rule decides every row**: an energy number or range of "
           f"the paper holds when ours is within {tol:g} percentage point of it (on every machine the claim names, or "
           "on the mean over machines when the paper gives one figure for all); a BSLD change the paper gives as "
           f"approximate, within {BSLD_TOLERANCE_POINTS:g} points; a direction (\"grows\", \"decreases\") must show "
           f"on every machine, with {slack:g} point (energy) or {SLACK_BSLD_RATIO:g} (BSLD ratio) of slack; \"–\" "
           "where the paper gives no number. *n of m* counts the machines that pass.", "",
           "| claim (paper) and the test | paper | ours | holds? |", "|---|---|---|---|"]

    def row(claim: str, paper: str, ours: str, holds: bool | None) -> None:
        out.append(f"| {claim} | {paper} | {ours} | {'yes' if holds else 'no' if holds is not None else '–'} |")

    def saving(k: str, variant: str, column: str = "energy_idle0_ratio", pct: int = 0) -> float:
        return (1.0 - _value(ok, k, variant, column, pct)) * 100.0

    def by_wq(k: str, column: str = "energy_idle0_ratio") -> list[float]:
        return [saving(k, f"upas-wq{wq_label(w)}", column) for w in WQ_THRESHOLDS]

    def listed(values: Mapping[str, float], fmt: str = "{:.1f} %") -> str:
        return ", ".join(f"{name[k]} {fmt.format(v)}" for k, v in values.items())

    def near(value: float, low: float, high: float | None = None, within: float = tol) -> bool:
        return low - within <= value <= (low if high is None else high) + within

    def count(passed: Mapping[str, bool]) -> str:
        return f" ({sum(passed.values())} of {len(passed)})"

    def mean(values: Mapping[str, float]) -> float:
        return float(np.mean(list(values.values()))) if values else math.nan

    def non_decreasing(values: Sequence[float], eps: float) -> bool:
        return all(b >= a - eps for a, b in zip(values, values[1:]))

    grows = {k: by_wq(k) for k in keys}
    nolimit = {k: grows[k][-1] for k in keys}
    best = {k: max(grows[k]) for k in keys}

    # §4.1 and the conclusions: the original size
    ok_range = {k: near(best[k], 4.0, 12.0) for k in keys}
    row(f"savings at the original size range from 4 % (very loaded) to 12 % (less loaded) — test: every machine's "
        f"best WQ in 4-12 % ± {tol:g}", "4-12 %", listed(best) + count(ok_range), all(ok_range.values()))
    paper_best = {"ctc": 12.0, "sdsc": 4.0, "sdsc-blue": 12.0, "llnl-thunder": 8.0, "llnl-atlas": 12.0}
    ours_best = {k: nolimit[k] if paper_best[k] == 12.0 else best[k] for k in keys}
    per = {k: near(ours_best[k], paper_best[k]) for k in keys}
    row(f"per machine: LLNL-Atlas, CTC, SDSC-Blue 12 % with no limit; SDSC 4 % and LLNL-Thunder 8 % in the best case "
        f"— test: each ± {tol:g}", "CTC / SDSC-Blue / LLNL-Atlas 12 %, SDSC 4 %, LLNL-Thunder 8 %",
        listed(ours_best) + count(per), all(per.values()))
    util = {k: _value(ok, k, "easy", "utilization") for k in keys}
    rank = float(pd.Series(best).rank().corr(pd.Series(util).rank())) if len(keys) > 2 else math.nan  # Spearman
    order = sorted(keys, key=lambda k: best[k])
    row("savings are larger where utilization is lower (\"directly proportional\" in the conclusions, read as: "
        "the less utilized, the more saved) — test: Spearman correlation of best saving and EASY utilization < 0",
        "SDSC and LLNL-Thunder, the most utilized, save least",
        f"least savings: {', '.join(name[k] for k in order[:2])}; Spearman = {rank:.2f}",
        None if math.isnan(rank) else rank < 0)
    per_wq = [float(np.mean([grows[k][i] for k in keys])) for i in range(len(WQ_THRESHOLDS))] if keys else []
    row(f"\"UPAS decreases CPU energy by 8 % on average depending on allowed job performance penalty\" (abstract) — "
        f"test: 8 % ± {tol:g} within the range of the mean saving over machines at WQ 0 … no limit", "8 %",
        "mean over machines at WQ " + ", ".join(f"{wq_label(w)}: {v:.1f} %" for w, v in zip(WQ_THRESHOLDS, per_wq)),
        near(8.0, min(per_wq), max(per_wq)) if per_wq else None)
    top = {k: nolimit[k] >= max(grows[k]) - slack for k in keys}
    mono = {k: non_decreasing(grows[k], slack) for k in keys}
    row("the highest savings are achieved with no limit — test: no limit saves the most on every machine",
        "highest with no limit", "WQ 0 / 4 / 16 / none: " + "; ".join(
            f"{name[k]} " + " / ".join(f"{v:.1f}" for v in grows[k]) + " %" for k in keys) + count(top)
        + f"; non-decreasing in WQ on {sum(mono.values())} of {len(mono)}", all(top.values()))
    gap = {k: nolimit[k] - grows[k][0] for k in keys}
    gap_ok = {k: near(v, 4.0, 8.0) for k, v in gap.items()}
    row(f"savings differ by 4-8 % between WQ 0 and no limit — test: 4-8 points ± {tol:g} on every machine",
        "4-8 %", listed(gap, "{:.1f} points") + count(gap_ok), all(gap_ok.values()))
    llnl = [k for k in keys if k.startswith("llnl")]
    if llnl:
        spread = {k: max(grows[k][1:]) - min(grows[k][1:]) for k in llnl}
        row(f"LLNL-Thunder and LLNL-Atlas: almost no difference between WQ 4, 16 and no limit — test: within {tol:g} "
            "point", "almost no difference", listed(spread, "{:.1f} points apart"), all(v <= tol for v in spread.values()))
    scen = {k: (nolimit[k], saving(k, "upas-wqnone", "energy_idle_low_ratio")) for k in keys}
    row(f"relative savings of the two energy scenarios are almost equal — test: within {tol:g} point (no limit)",
        "almost equal", ", ".join(f"{name[k]} {a:.1f} / {b:.1f} %" for k, (a, b) in scen.items()),
        all(abs(a - b) <= tol for a, b in scen.values()))
    bsld = {k: [_value(ok, k, f"upas-wq{wq_label(w)}", "bsld_ratio") for w in WQ_THRESHOLDS] for k in keys}
    b_mono = {k: non_decreasing(v, SLACK_BSLD_RATIO) for k, v in bsld.items()}
    b_ends = sum(v[-1] > v[0] for v in bsld.values())
    row("a less restrictive WQ_threshold increases the average BSLD — test: non-decreasing over 0, 4, 16, none on "
        "every machine", "BSLD increases with the threshold (figure 2)",
        "; ".join(f"{name[k]} " + " / ".join(f"{v:.2f}" for v in bsld[k]) for k in keys) + " (× EASY)" + count(b_mono)
        + f"; no limit above WQ 0 on {b_ends} of {len(bsld)}", all(b_mono.values()))
    worst = max(((k, w, v) for k in keys for w, v in zip(WQ_THRESHOLDS, bsld[k])), key=lambda t: t[2])
    better = sum(v < 1.0 for k in keys for v in bsld[k])
    row("the BSLD penalty is \"not very high\"", "no number (figure 2)",
        f"at most ×{worst[2]:.2f} ({name[worst[0]]}, WQ {wq_label(worst[1])}); {better} of "
        f"{len(keys) * len(WQ_THRESHOLDS)} runs improve on EASY", None)
    if "ctc" in keys and "llnl-atlas" in keys:
        pen = [(a, c) for a, c in zip(bsld["llnl-atlas"], bsld["ctc"])]
        row("LLNL-Atlas and CTC save alike, LLNL-Atlas with the higher relative BSLD penalty — test: its BSLD ratio "
            "above CTC's at every WQ", "Atlas's penalty higher",
            f"saving (no limit) {nolimit['llnl-atlas']:.1f} / {nolimit['ctc']:.1f} %; BSLD × " + ", ".join(
                f"{a:.2f} / {c:.2f}" for a, c in pen) + " (LLNL-Atlas / CTC at WQ 0, 4, 16, none)",
            all(a > c for a, c in pen))
    if "sdsc-blue" in keys:
        blue = [(saving("sdsc-blue", f"upas-wq{wq_label(w)}"), _value(ok, "sdsc-blue", f"upas-wq{wq_label(w)}",
                                                                         "bsld_ratio")) for w in WQ_THRESHOLDS]
        row("SDSC-Blue improves in both energy and BSLD — test: some WQ with both", "both improve",
            ", ".join(f"WQ {wq_label(w)}: −{e:.1f} % energy, BSLD ×{b:.2f}" for w, (e, b) in zip(WQ_THRESHOLDS, blue)),
            any(e > 0 and b < 1.0 for e, b in blue))
    t1h = {k: max(abs(_value(ok, k, f"upas-wq{wq_label(w)}-t3600", "energy_idle0_ratio")
                      - _value(ok, k, f"upas-wq{wq_label(w)}", "energy_idle0_ratio")) * 100.0 for w in (0, None))
           for k in keys}
    if not all(math.isnan(v) for v in t1h.values()):
        t_ok = {k: v <= 1.0 for k, v in t1h.items()}
        pairs = [(k, w) for k in keys for w in (0, None)]
        both = sum(_value(ok, k, f"upas-wq{wq_label(w)}", "energy_idle0_ratio")
                   < _value(ok, k, f"upas-wq{wq_label(w)}-t3600", "energy_idle0_ratio")
                   and _value(ok, k, f"upas-wq{wq_label(w)}", "bsld_ratio")
                   < _value(ok, k, f"upas-wq{wq_label(w)}-t3600", "bsld_ratio") for k, w in pairs)
        row("T = 1 h instead of 10 min changes the results by 1 % or less; 10 min slightly better in both energy and "
            "BSLD — test: energy within 1 point (WQ 0 and no limit; BSLD in the side checks below)",
            "≤ 1 %; 10 min better", listed(t1h, "{:.1f} points") + count(t_ok)
            + f"; 10 min better in both on {both} of {len(pairs)} (machine, WQ)", all(t_ok.values()))

    # §4.2: enlarged machines
    sizes = (0, *ENLARGEMENTS)
    curves = {(k, w): [saving(k, f"upas-wq{wq_label(w)}", pct=p) for p in sizes] for k in keys for w in (0, None)}
    dec = {f"{name[k]} WQ {wq_label(w)}": non_decreasing(c, slack) for (k, w), c in curves.items()}
    row("computational energy decreases as the machine grows — test: saving non-decreasing over +0 … +75 % on "
        "every machine, WQ 0 and no limit", "decreases (figures 5a, 6a)",
        f"{sum(dec.values())} of {len(dec)} curves" + ("" if all(dec.values()) else
                                                        "; not: " + ", ".join(k for k, v in dec.items() if not v)),
        all(dec.values()))
    first = {k: float(np.mean([c[1] - c[0] for (kk, _), c in curves.items() if kk == k])) for k in keys}
    last = {k: float(np.mean([c[4] - c[3] for (kk, _), c in curves.items() if kk == k])) for k in keys}
    row(f"the first 10 % of size save as much as the 25 % from +50 % to +75 % — test: mean over machines (WQ 0 and "
        f"no limit) within {tol:g} point", "about equal",
        f"+0 → +10 %: {mean(first):.1f} points, +50 → +75 %: {mean(last):.1f} points",
        abs(mean(first) - mean(last)) <= tol if keys else None)
    e20 = {k: saving(k, "upas-wqnone", pct=20) for k in keys}
    e20_ok = {k: near(v, 17.0, 20.0) for k, v in e20.items()}
    row(f"+20 % processors with UPAS save 17-20 % of computational energy — test: the mean over machines (no limit) "
        f"in 17-20 % ± {tol:g}", "17 % (intro), 20 % (abstract)",
        listed(e20) + f"; mean {mean(e20):.1f} %" + count(e20_ok), near(mean(e20), 17.0, 20.0))
    b20 = {k: (_value(ok, k, "upas-wqnone", "bsld_ratio", 20) - 1.0) * 100.0 for k in keys}
    further = {k: e20[k] > nolimit[k] and b20[k] <= SLACK_BSLD_RATIO * 100.0 for k in keys}
    row("abstract: with UPAS on a 20 % larger machine, less energy \"while having same or better job performance\" "
        "— test: on every machine (no limit) energy below UPAS on the original machine and average BSLD at most "
        f"EASY's on the original (+{SLACK_BSLD_RATIO * 100:g} % slack)", "same or better BSLD",
        "saving original → +20 %: " + ", ".join(f"{name[k]} {nolimit[k]:.1f} → {e20[k]:.1f} %" for k in keys)
        + "; BSLD " + listed(b20, "{:+.0f} %") + count(further), all(further.values()))
    first3: list[str] = [k for k in ("ctc", "sdsc", "sdsc-blue") if k in keys]
    b20_ok = {k: near(b20[k], -50.0, within=BSLD_TOLERANCE_POINTS) for k in first3}
    row(f"+20 % processors: average BSLD about 50 % better (lower) for CTC, SDSC and SDSC-Blue, despite DVFS — test: "
        f"each −50 % ± {BSLD_TOLERANCE_POINTS:g} points (no limit, relative to EASY on the original machine)",
        "≈ −50 % (−46 % in the intro)", listed({k: b20[k] for k in keys}, "{:+.0f} %") + count(b20_ok),
        all(b20_ok.values()) if first3 else None)
    if "llnl-thunder" in keys and "llnl-atlas" in keys:
        th = [_value(ok, "llnl-thunder", "upas-wqnone", "bsld_ratio", p) for p in ENLARGEMENTS]
        at = [_value(ok, "llnl-atlas", "upas-wqnone", "bsld_ratio", p) for p in ENLARGEMENTS]
        row("enlarged: LLNL-Thunder's BSLD stays stable, LLNL-Atlas keeps some penalty — test: Thunder within ±5 % "
            "of EASY and Atlas above EASY at +10 … +75 % (no limit)", "stable; some penalty",
            "LLNL-Thunder " + " / ".join(f"{(v - 1) * 100:+.0f} %" for v in th) + "; LLNL-Atlas "
            + " / ".join(f"{(v - 1) * 100:+.0f} %" for v in at),
            all(abs(v - 1.0) <= 0.05 for v in th) and all(v > 1.0 for v in at))
    e50 = {k: saving(k, "upas-wqnone", pct=50) for k in keys}
    rest = {k: v for k, v in e50.items() if k not in ("sdsc", "llnl-thunder")}
    loaded = {k: v for k, v in e50.items() if k in ("sdsc", "llnl-thunder")}
    row(f"+50 % processors with UPAS save 23.5 % — test: the mean over CTC, SDSC-Blue and LLNL-Atlas (no limit) "
        f"within {tol:g} point", "23.5 %", listed(rest) + f"; mean {mean(rest):.1f} %",
        near(mean(rest), 23.5) if rest else None)
    loaded_ok = {k: near(v, 20.0) for k, v in loaded.items()}
    if loaded:
        row(f"+50 %: even the more loaded SDSC and LLNL-Thunder save 20 % — test: each within {tol:g} point",
            "20 %", listed(loaded) + count(loaded_ok), all(loaded_ok.values()))
    ratio = {p: mean({k: saving(k, "upas-wqnone", pct=p) for k in keys}) / p for p in ENLARGEMENTS}
    row("20 % more processors give a better ratio of energy saved to size added than 50 % — test: mean saving per "
        "added percent at +20 % above those at +50 % and +75 % (no limit)", "+20 % better than +50 %",
        ", ".join(f"+{p} %: {v:.2f}" for p, v in ratio.items()) + " points per %",
        ratio[20] > ratio[50] and ratio[20] > ratio[75])
    gap_at = {k: [saving(k, "upas-wqnone", pct=p) - saving(k, "upas-wq0", pct=p) for p in sizes] for k in keys}
    less = {k: all(g <= v[0] + slack for g in v[1:]) for k, v in gap_at.items()}
    row("WQ 0 and no limit differ less on enlarged machines than on the original — test: the gap at every "
        "enlargement at most the original's on every machine", "less",
        "gap at +0 / 10 / 20 / 50 / 75 %: " + "; ".join(f"{name[k]} " + " / ".join(f"{g:.1f}" for g in v)
                                                        for k, v in gap_at.items()) + count(less), all(less.values()))
    low75 = {k: {w: _value(ok, k, f"upas-wq{wq_label(w)}", "energy_idle_low_ratio", 75) for w in (0, None)} for k in keys}
    above = [f"{name[k]} WQ {wq_label(w)}" for k in keys for w in (0, None) if low75[k][w] >= 1.0]
    row("idle processors at the lowest gear: even at +75 % the energy with UPAS is below the original's in all "
        "cases but LLNL-Atlas with WQ 0 — test: every other case below", "all but LLNL-Atlas WQ 0",
        ("at or above the original: " + ", ".join(above)) if above
        else "all below the original (the paper's exception too)", set(above) <= {"LLNL-Atlas WQ 0"})
    minimum = {}
    for k in keys:
        curve = [(pct, _value(ok, k, "upas-wqnone", "energy_idle_low_ratio", pct)) for pct in sizes]
        minimum[k] = min(curve, key=lambda c: c[1])[0]
    inside = {k: 0 < v < 75 for k, v in minimum.items()}
    row("idle processors at the lowest gear: there is a size of minimal energy, beyond which more processors cost "
        "energy — test: the minimum (no limit) strictly between +0 and +75 % on every machine",
        "a minimum, then energy grows", "minimum at " + listed({k: float(v) for k, v in minimum.items()}, "+{:.0f} %")
        + count(inside), all(inside.values()))
    out.append("")
    return out


def side_checks(frame: pd.DataFrame, inputs: Sequence[Inputs]) -> list[str]:
    """The paper's side remarks: T = 1 h against 10 min, the worst case β = 1 at start, other β seeds."""
    ok = _ok(frame)
    lines = ["## Side checks", "",
             "The paper: \"Two values for the parameter T, 10 minutes and 1 hour, are used in the simulations. As the "
             "difference in results is 1 % or less, the algorithm is not very interval duration sensitive\" (§4); "
             "\"if the β value is not a priori known, the worst case (β = 1) can be assumed when modeling new "
             "requested time at the start time\" (§3.4).", "",
             "| machine | variant | energy idle 0 W | energy idle low | avg BSLD / EASY | jobs reduced |",
             "|---|---|---:|---:|---:|---:|"]
    for inp in inputs:
        part = ok[(ok["machine"] == inp.label) & (ok["enlargement"] == 0) & ok["dvfs"].astype(bool)]
        part = part[part["wq"].isin(["0", "none"])]
        for _, r in part.sort_values(["beta_seed", "wq", "interval_s", "variant"]).iterrows():
            what = (f"WQ {r['wq']}, T = {r['interval_s']:g} s" + (", worst-case β" if "worstcase" in r["variant"] else "")
                    + (f", β seed {r['beta_seed']}" if r["beta_seed"] != 1 else ""))
            lines.append(f"| {inp.machine.name} | {what} | {_pct(r['energy_idle0_ratio'])} | "
                         f"{_pct(r['energy_idle_low_ratio'])} | {r['bsld_ratio']:.3f} | {r['nb_jobs_reduced']:.0f} |")
    lines.append("")
    return lines

