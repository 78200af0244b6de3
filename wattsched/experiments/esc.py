"""The ESC paper's experiment (§3): NASA and OSC workloads, always-on against EnergySaving Cluster.

ESC paper (Dolz et al., GCM'11), §3, tables 1 and 2: the NASA Ames iPSC/860 log (128 nodes, 42,264 jobs,
92 days) and the OSC Linux cluster log (57 nodes, 80,714 jobs, 677 days), each simulated without ESC (all
nodes always on) and with ESC, on the five-state node of §3 (:mod:`energy_models.esc`). The paper reports
the time to process all jobs and the energy (table 1: NASA ×0.73 energy at ×1.000069 time, OSC ×0.697 at
×1.47), and for OSC with ESC the on/off statistics of table 2.

**Inputs.**

- NASA: the real log when it is at hand (``NASA-iPSC-1993-3.1-cln.swf.gz`` of the Parallel Workloads
  Archive, looked for in ``--pwa``, then ``$WATTSCHED_PWA``, then ``../shared/data/pwa/`` next to
  the repository and the current folder); it is the *cleaned* log: 18,239 jobs (24,025 one-node system
  jobs of user 3 removed; the paper counts the 42,264 of the full log), 18,066 of them with a run time.
  Converted at 1 Gflop/s (the node's speed); the log has no requested time, so every job gets its run time
  as walltime (:data:`SWF_WALLTIME_RULE`; FCFS and ESC read no walltime). The report says what the cleaned
  file changes (:func:`nasa_file_note`). Otherwise, and also with
  ``--full``, a seeded synthetic *NASA-like* log: 128 nodes, 92 days, ≈ 42,264 jobs, sizes powers of two
  (hypercube partitions), 68 % of one node (the full log's share), offered load 0.466 (the utilization
  that the paper's 52.93 MWh always-on energy implies: 128 nodes × 92 days at 150 W idle + 80 W × U).
- OSC: not available (the archive's OSC log is not on our machines): a seeded synthetic *OSC-like* log,
  57 nodes, 677.12 days, ≈ 80,714 jobs, offered load 0.400 (what the paper's 168.60 MWh implies), with
  the Lublin-Feitelson shapes of :mod:`workloads.synthetic` (20 % serial jobs, daily and weekly cycles).
  The number of jobs is met by scaling the run-time distribution (:func:`synthetic_log`).

**Runs** (in parallel, :func:`wattsched.experiments.sweep.run_sweep`): per workload, always-on (preset
``fcfs`` on any free nodes: the paper's SGE-like queue without ESC) and ESC (preset ``esc``, its defaults:
pass every 60 s, idle 1800 s, upper wait threshold 3600 s, one user group), plus ESC over a grid of idle
times and upper thresholds (the paper gives no values: the grid shows how much its results depend on them).

**Outputs** under ``--out``: ``inputs/``, ``runs/`` (Batsim CSVs), ``results.csv`` (one row per run: metrics,
table-2 statistics, ratios against always-on), a Paraver trace of each default ESC run
(``paraver/<workload>.prv/.pcf/.row``) and, under ``--report-dir`` (default ``--out``), ``report.md`` with the
paper's numbers side by side and the figures (active nodes over time, a day of node states, the grid).

Command line: ``wattsched reproduce esc --out results/esc [--report-dir docs/results/esc] [--full]``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from wattsched.workloads.pwa import find_log
from wattsched.base.fileio import write_if_changed
from wattsched.energy_models.esc import ESC, WH_J
from wattsched.experiments.sweep import Run, failed_runs, read_timing, run_sweep, write_table

__all__ = ["WORKLOADS", "PAPER", "EscWorkload", "find_nasa_log", "prepare_inputs", "build_runs", "run_experiment",
           "synthetic_log", "write_report"]

logger = logging.getLogger(__name__)

#: Jobs of the archive's logs without a requested time (every job of the NASA log) get their run time as
#: walltime (``wattsched swf``'s documented default, :mod:`workloads.swf`). The ESC paper (§2.4, §3) has no
#: requested times (its SGE-like queue is FCFS and never kills a job); the preset ``esc`` reads no walltime,
#: so the rule changes no decision, only the walltime written in the workload.
SWF_WALLTIME_RULE = "runtime"

DAY_S = 86400.0
NASA_LOG = "NASA-iPSC-1993-3.1-cln.swf.gz"
MWH_J = 1e6 * WH_J


def dhms(days: int, hours: int, minutes: int, seconds: int) -> float:
    return days * DAY_S + hours * 3600.0 + minutes * 60.0 + seconds


@dataclass(frozen=True)
class PaperRun:
    """A row of the paper's table 1: time to process all jobs and energy."""

    time_s: float
    energy_mwh: float


@dataclass(frozen=True)
class EscWorkload:
    """One of the paper's workloads: its machine, its log's length and size, the utilization its
    always-on energy implies, and the paper's table-1 rows."""

    key: str
    name: str
    nb_hosts: int
    days: float
    nb_jobs: int
    load: float
    without: PaperRun
    with_esc: PaperRun

    @property
    def paper_time_ratio(self) -> float:
        return self.with_esc.time_s / self.without.time_s

    @property
    def paper_energy_ratio(self) -> float:
        return self.with_esc.energy_mwh / self.without.energy_mwh


def implied_load(energy_mwh: float, nb_hosts: int, time_s: float) -> float:
    """U such that nb_hosts × time × (150 W + 80 W × U) is the always-on energy (idle 150 W, loaded 230 W)."""
    mean_w = energy_mwh * MWH_J / (nb_hosts * time_s)
    return (mean_w - ESC.idle_w) / (ESC.loaded_w - ESC.idle_w)


_NASA_OFF = PaperRun(dhms(92, 0, 3, 43), 52.93)
_OSC_OFF = PaperRun(dhms(677, 2, 55, 51), 168.60)
WORKLOADS: dict[str, EscWorkload] = {
    "nasa": EscWorkload("nasa", "NASA Ames iPSC/860", 128, 92.0, 42264,
                        round(implied_load(52.93, 128, _NASA_OFF.time_s), 3), _NASA_OFF,
                        PaperRun(dhms(92, 0, 12, 59), 38.73)),
    "osc": EscWorkload("osc", "OSC Linux cluster", 57, _OSC_OFF.time_s / DAY_S, 80714,
                       round(implied_load(168.60, 57, _OSC_OFF.time_s), 3), _OSC_OFF,
                       PaperRun(dhms(997, 9, 9, 56), 117.65)),
}

#: Table 2 of the paper (OSC with ESC): measure → (total, per node), seconds or counts.
PAPER_TABLE2: dict[str, tuple[float, float | None]] = {
    "nb_shutdowns": (750, 13.15),
    "max_active_nodes": (32, None),
    "active_s": (dhms(24010, 19, 27, 52), dhms(421, 5, 48, 54)),
    "inactive_s": (dhms(32782, 22, 58, 20), dhms(575, 3, 21, 1)),
    "mean_active_interval_total_s": (dhms(34, 14, 20, 42), dhms(0, 14, 34, 2)),
    "mean_inactive_interval_total_s": (dhms(47, 5, 42, 16), dhms(0, 19, 53, 22)),
}
PAPER = {"workloads": WORKLOADS, "table2": PAPER_TABLE2}

#: ESC defaults (the preset's) and the grid of idle times × upper wait thresholds (None: no threshold).
DEFAULT_OPTIONS: dict[str, Any] = {}
GRID_IDLE_S = (600.0, 1800.0, 7200.0)
GRID_UPPER_S: tuple[float | None, ...] = (600.0, 3600.0, None)

# NASA-like shapes: the iPSC/860 allocates hypercubes (powers of two); 68 % of the full log's jobs use one node
NASA_MODEL = {"serial_fraction": 0.68, "pow2_fraction": 1.0}
OSC_MODEL: dict[str, float] = {}


# ------------------------------------------------------------------------------------------ inputs
def find_nasa_log(pwa: str | os.PathLike | None = None) -> Path | None:
    """The NASA log in the archive's folder (:func:`wattsched.workloads.pwa.find_pwa`), or None.

    Raises:
        OptionError: ``pwa`` is given and does not hold the NASA log.
    """
    return find_log(NASA_LOG, pwa)


def synthetic_log(nb_hosts: int, days: float, load: float, nb_jobs: int, *, seed: int, users: int = 50,
                  model: Mapping[str, float] | None = None, tolerance: float = 0.01) -> dict[str, Any]:
    """A seeded synthetic log (:func:`workloads.synthetic.synthetic_week` over ``days``) of offered ``load``
    with about ``nb_jobs`` jobs: the run-time distribution is scaled (its longest run time, by bisection)
    until the count is within ``tolerance``, the closest one otherwise. Run times at 1 Gflop/s."""
    from wattsched.workloads.synthetic import DEFAULT_MODEL, synthetic_week

    base = dataclasses.replace(DEFAULT_MODEL, **dict(model or {}))  # type: ignore[arg-type]
    lo, hi = math.log(600.0), math.log(50 * 129600.0)
    best: tuple[float, dict[str, Any]] | None = None
    for _ in range(24):
        mid = (lo + hi) / 2
        work = synthetic_week(nb_hosts, seed=seed, duration_s=days * DAY_S, target_load=load,
                              speed_flops=ESC.max_speed_flops, users=users,
                              model=dataclasses.replace(base, runtime_range_s=(1.0, math.exp(mid))))
        error = abs(len(work["jobs"]) - nb_jobs) / nb_jobs
        if best is None or error < best[0]:
            best = (error, work)
        if error <= tolerance:
            break
        if len(work["jobs"]) > nb_jobs:
            lo = mid  # too many jobs: longer ones
        else:
            hi = mid
    assert best is not None
    return best[1]


@dataclass(frozen=True)
class Inputs:
    """A workload as simulated: which of the paper's, its files, and where it comes from."""

    workload: EscWorkload
    label: str
    platform: str
    path: str
    source: str
    nb_jobs: int
    span_s: float


def prepare_inputs(out: Path, *, pwa: str | None = None, full: bool = False, seed: int = 1,
                   days: float | None = None) -> list[Inputs]:
    """The platforms and workloads (written once under ``out/inputs``). ``days`` shortens every log (tests).

    Raises:
        OptionError: ``pwa`` holds no NASA log.
    """
    from wattsched.platforms.generate import esc_platform_xml
    from wattsched.workloads.swf import require_jobs, swf_to_batsim

    inputs_dir = out / "inputs"
    made: list[Inputs] = []
    platforms = {}
    for w in WORKLOADS.values():
        platforms[w.key] = inputs_dir / f"esc_{w.nb_hosts}.xml"
        write_if_changed(platforms[w.key], esc_platform_xml(w.nb_hosts))

    def synthetic(w: EscWorkload, model: Mapping[str, float], what: str) -> Inputs:
        span_days = w.days if days is None else days
        jobs = w.nb_jobs if days is None else max(20, round(w.nb_jobs * days / w.days))
        path = inputs_dir / f"{w.key}-like_seed{seed}_{span_days:g}d.json"
        if not path.exists():
            work = synthetic_log(w.nb_hosts, span_days, w.load, jobs, seed=seed, model=model)
            write_if_changed(path, json.dumps(work))
        n = len(json.loads(path.read_text())["jobs"])
        return Inputs(w, f"{w.key}-like", str(platforms[w.key]), str(path),
                      f"synthetic {what} (seed {seed}, {span_days:g} days, offered load {w.load}, "
                      f"{n} jobs)", n, span_days * DAY_S)

    nasa = WORKLOADS["nasa"]
    log = find_nasa_log(pwa)
    if log is not None:
        work = swf_to_batsim(log, speed_flops=ESC.max_speed_flops, nb_hosts=nasa.nb_hosts,
                             duration_s=None if days is None else days * DAY_S, walltime_rule=SWF_WALLTIME_RULE)
        require_jobs(work, log, "" if days is None else f" in its first {days:g} days (--days)")
        path = inputs_dir / f"nasa-trace{'' if days is None else f'_{days:g}d'}.json"
        write_if_changed(path, json.dumps(work))
        window = "" if days is None else f", submitted in its first {days:g} days"
        made.append(Inputs(nasa, "nasa", str(platforms["nasa"]), str(path),
                           f"the real log {log.name} (cleaned log of {work['meta']['nb_lines']} jobs; the "
                           f"{len(work['jobs'])} with a run time{window})", len(work["jobs"]),
                           float(max(j["subtime"] for j in work["jobs"]))))
    if log is None or full:
        made.append(synthetic(nasa, NASA_MODEL, "NASA-like log"))
    made.append(synthetic(WORKLOADS["osc"], OSC_MODEL, "OSC-like log"))
    return made


#: The jobs the archive's cleaned NASA log removed (its header: ``user=3 and proc=1 and app=1``).
NASA_REMOVED_JOBS = 42264 - 18239


def nasa_file_note(inputs: Sequence[Inputs], ok: pd.DataFrame) -> list[str]:
    """Report lines on the NASA file read (the cleaned log) and what it changes against the paper's full log:
    a bound on the removed jobs' computing time from the always-on energies (ours vs table 1's, loaded −
    idle = 80 W per node), and the cost of one node kept on for them."""
    real = [i for i in inputs if i.label == "nasa" and i.source.startswith("the real log")]
    base = ok[(ok["workload"] == "nasa") & (ok["variant"] == "always-on")] if real else ok.iloc[0:0]
    if base.empty:
        return []
    w = real[0].workload
    ours_mwh = float(base["energy_j"].iloc[0]) / MWH_J
    diff_mwh = abs(ours_mwh - w.without.energy_mwh) + 0.005  # the paper's 2 decimals
    extra_w = ESC.loaded_w - ESC.idle_w
    bound_s = diff_mwh * MWH_J / extra_w
    one_node_mwh = ESC.idle_w * w.days * DAY_S / MWH_J
    return ["", f"**The NASA file.** We read the archive's cleaned log ({NASA_LOG}: {real[0].nb_jobs:,} jobs with a run "
            f"time of its 18,239 user jobs), where the paper read the full log's 42,264 records. The {NASA_REMOVED_JOBS:,} "
            "removed are one-node jobs of user 3, system personnel (the archive's filter `user=3 and proc=1 and "
            f"app=1`), one every {w.days * DAY_S / NASA_REMOVED_JOBS / 60:.1f} min on average. Always on, they could "
            f"change only the energy, by their computing time × {extra_w:.0f} W (loaded − idle): our always-on energy "
            f"is {ours_mwh:.2f} MWh against the paper's {w.without.energy_mwh:.2f}, so they computed at most "
            f"{bound_s / 3600:,.0f} node-hours ({bound_s / NASA_REMOVED_JOBS:.1f} s per job) if the difference, "
            "rounding included, were all theirs. With ESC each needs one node on when it arrives: one node kept on "
            f"through the {w.days:g} days costs {one_node_mwh:.2f} MWh (idle), and where every node is asleep it "
            "waits for a boot (555 s). Not simulated: the full log is not in the archive copy we have."]


# ------------------------------------------------------------------------------------------ runs
def variant_name(idle_s: float, upper_s: float | None) -> str:
    return f"esc-idle{idle_s:g}-upper{'none' if upper_s is None else f'{upper_s:g}'}"


def build_runs(inputs: Sequence[Inputs], runs_dir: Path, *, grid: bool = True) -> list[Run]:
    """Per workload: always-on, ESC with its defaults, and (``grid``) ESC over idle times × upper thresholds."""
    runs: list[Run] = []
    for inp in inputs:
        tags = {"workload": inp.label, "nb_hosts": inp.workload.nb_hosts}
        folder = runs_dir / inp.label
        runs.append(Run(f"{inp.label}/always-on", inp.platform, inp.path, scheduler="fcfs",
                        options={"placement": "non-contiguous"}, prefix=str(folder / "always-on"),
                        tags={**tags, "variant": "always-on"}))
        runs.append(Run(f"{inp.label}/esc", inp.platform, inp.path, scheduler="esc", options=dict(DEFAULT_OPTIONS),
                        prefix=str(folder / "esc"), tags={**tags, "variant": "esc", "idle_s": 1800.0,
                                                          "upper_wait_s": 3600.0}))
        if grid:
            for idle in GRID_IDLE_S:
                for upper in GRID_UPPER_S:
                    if (idle, upper) == (1800.0, 3600.0):
                        continue  # the defaults, run above
                    name = variant_name(idle, upper)
                    runs.append(Run(f"{inp.label}/{name}", inp.platform, inp.path, scheduler="esc",
                                    options={"idle_s": idle, "upper_wait_s": upper}, prefix=str(folder / name),
                                    tags={**tags, "variant": name, "idle_s": idle,
                                          "upper_wait_s": math.nan if upper is None else upper}))
    return runs


def add_statistics(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2's statistics of every ESC run, with time and energy ratios against its always-on run."""
    from wattsched.analysis.node_states import onoff_statistics

    rows: list[dict[str, Any]] = []
    ok = frame[frame["status"] != "failed"] if "status" in frame else frame
    base = {r["workload"]: r["prefix"] for _, r in ok.iterrows() if r["variant"] == "always-on"}
    for _, r in frame.iterrows():
        if r.get("status") == "failed":
            rows.append({})
            continue
        stats = onoff_statistics(r["prefix"], baseline=base.get(r["workload"]))
        rows.append(stats.as_dict())
    extra = pd.DataFrame(rows, index=frame.index)
    return pd.concat([frame, extra[[c for c in extra.columns if c not in frame.columns]]], axis=1)


@dataclass
class EscResult:
    frame: pd.DataFrame
    inputs: list[Inputs]
    wall_s: float
    notes: list[str] = field(default_factory=list)


def run_experiment(out: str | Path, *, report_dir: str | Path | None = None, pwa: str | None = None,
                   full: bool = False, grid: bool = True, workers: int | None = None, force: bool = False,
                   seed: int = 1, days: float | None = None, show_progress: bool | None = None) -> EscResult:
    """Inputs, runs, statistics, Paraver traces, figures and report (module docstring)."""
    t0 = time.perf_counter()
    out = Path(out)
    report = Path(report_dir) if report_dir is not None else out
    timing = out / "timing.json"  # the wall time of the run that simulated everything, kept for re-renderings
    read_timing(timing)  # one edited by hand is refused before the runs, not read after them
    inputs = prepare_inputs(out, pwa=pwa, full=full, seed=seed, days=days)
    runs = build_runs(inputs, out / "runs", grid=grid)
    frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
    frame = add_statistics(frame)
    write_table(frame, out / "results.csv")
    traces = write_traces(frame, inputs, out / "paraver")
    figures = plot_figures(frame, inputs, report)
    result = EscResult(frame, inputs, time.perf_counter() - t0)
    simulated = bool((frame["status"] == "done").all())
    if simulated:
        write_if_changed(timing, json.dumps({"wall_s": result.wall_s, "runs": len(frame),
                                             "workers": workers or os.cpu_count()}))
    write_report(frame, report / "report.md", inputs=inputs, wall_s=result.wall_s, workers=workers,
                 traces=traces, figures=figures, full=full, measured=None if simulated else read_timing(timing))
    return result


def write_traces(frame: pd.DataFrame, inputs: Sequence[Inputs], folder: Path) -> list[Path]:
    """A Paraver trace of each workload's default ESC run."""
    from wattsched.analysis.node_states import node_states
    from wattsched.analysis.paraver import write_paraver
    from wattsched.simulator.platform import load_platform

    paths = []
    for inp in inputs:
        sel = frame[(frame["workload"] == inp.label) & (frame["variant"] == "esc") & (frame["status"] != "failed")]
        if sel.empty:
            continue
        names = [h.name for h in load_platform(inp.platform).hosts]
        paths += write_paraver(node_states(sel["prefix"].iloc[0]), folder / inp.label, names)
    return paths


# ------------------------------------------------------------------------------------------ figures
def _active_curve(prefix: str, nb_hosts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times and the numbers of nodes active (not in standby) and computing after each change."""
    from wattsched.analysis.outputs import load_outputs

    ms = load_outputs(prefix).machine_states
    if ms is None or ms.empty:
        return np.array([0.0]), np.array([nb_hosts]), np.array([0])
    last = ms.groupby("time", sort=True).last()
    return (last.index.to_numpy(dtype=float), (nb_hosts - last["nb_sleeping"]).to_numpy(dtype=float),
            last["nb_computing"].to_numpy(dtype=float))


def _daily_mean(times: np.ndarray, values: np.ndarray, end_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The time-weighted daily mean of a step function (value ``values[i]`` from ``times[i]``)."""
    days = max(1, int(math.ceil(end_s / DAY_S)))
    edges = np.arange(days + 1) * DAY_S
    t = np.concatenate(([0.0], times, [edges[-1]]))
    v = np.concatenate(([values[0] if len(values) else 0.0], values))
    cum = np.concatenate(([0.0], np.cumsum(v * np.diff(t))))
    integral = np.interp(edges, t, cum)
    return edges[:-1] / DAY_S, np.diff(integral) / DAY_S


def _rgb(colour: tuple[int, int, int]) -> tuple[float, float, float]:
    return (colour[0] / 255, colour[1] / 255, colour[2] / 255)


def plot_figures(frame: pd.DataFrame, inputs: Sequence[Inputs], folder: Path) -> list[Path]:
    """``<workload>_active_nodes.png`` (daily mean of active and computing nodes, always-on and ESC),
    ``<workload>_node_states_day.png`` (the busiest day's node states, Paraver-like) and ``grid.png``."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from wattsched.analysis.node_states import STATES, node_states
    from wattsched.analysis.paraver import STATE_COLOURS
    from wattsched.analysis.plots import save_figure

    ok = frame[frame["status"] != "failed"]
    paths: list[Path] = []
    for inp in inputs:
        part = ok[ok["workload"] == inp.label]
        esc = part[part["variant"] == "esc"]
        if esc.empty:
            continue
        n = inp.workload.nb_hosts
        fig = Figure(figsize=(9, 3.6))
        ax = fig.add_subplot()
        t, active, computing = _active_curve(esc["prefix"].iloc[0], n)
        end = float(esc["end_s"].iloc[0])
        d, a = _daily_mean(t, active, end)
        _, c = _daily_mean(t, computing, end)
        ax.plot(d, np.full_like(d, n), color="grey", linestyle=":", label=f"always on ({n})")
        ax.step(d, a, where="post", color="tab:blue", label="ESC: active nodes (daily mean)")
        ax.step(d, c, where="post", color="tab:red", linewidth=0.8, label="computing nodes (daily mean)")
        ax.set_xlabel("day")
        ax.set_ylabel("nodes")
        ax.set_ylim(0, n * 1.08)
        ax.set_title(f"{inp.label}: nodes on with ESC (defaults)")
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        paths.append(save_figure(fig, folder / f"{inp.label}_active_nodes.png", dpi=100))

        # the busiest day (most switches) as a Paraver-like picture
        st = node_states(esc["prefix"].iloc[0])
        starts = [a0 for ivs in st.intervals for a0, _, s in ivs if s in (3, 4)]
        day = int(np.bincount((np.array(starts) // DAY_S).astype(int)).argmax()) if starts else 0
        lo, hi = day * DAY_S, (day + 1) * DAY_S
        fig = Figure(figsize=(9, 0.5 + 0.06 * n))
        ax = fig.add_subplot()
        for h, ivs in enumerate(st.intervals):
            for a0, b0, s in ivs:
                if b0 > lo and a0 < hi:
                    x0, x1 = max(a0, lo), min(b0, hi)
                    ax.barh(h, (x1 - x0) / 3600.0, left=(x0 - lo) / 3600.0, height=1.0,
                            color=_rgb(STATE_COLOURS[s]), linewidth=0)
        ax.set_xlim(0, 24)
        ax.set_ylim(-0.5, n - 0.5)
        ax.invert_yaxis()
        ax.set_xlabel(f"hour of day {day}")
        ax.set_ylabel("node (host id)")
        ax.set_title(f"{inp.label}: node states on day {day} with ESC (colours of the Paraver trace)")
        handles = [Patch(color=_rgb(STATE_COLOURS[k]), label=STATES[k]) for k in range(len(STATES))]
        ax.legend(handles=handles, fontsize=7, ncol=5, loc="upper center",
                  bbox_to_anchor=(0.5, -0.25 if n < 80 else -0.1))
        fig.tight_layout()
        paths.append(save_figure(fig, folder / f"{inp.label}_node_states_day.png", dpi=90))

    esc_runs = ok[ok["variant"] != "always-on"]
    if len(esc_runs) > len(inputs):
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        markers = {"nasa": "o", "nasa-like": "s", "osc-like": "^"}
        for label, part in esc_runs.groupby("workload"):
            ax.scatter(part["time_ratio"], part["energy_ratio"], marker=markers.get(str(label), "x"),
                       label=f"{label} (ours)")
            for _, r in part.iterrows():
                up = "none" if pd.isna(r["upper_wait_s"]) else f"{r['upper_wait_s']:g}"
                ax.annotate(f"{r['idle_s']:g}/{up}", (r["time_ratio"], r["energy_ratio"]), fontsize=6)
        for w in WORKLOADS.values():
            ax.scatter([w.paper_time_ratio], [w.paper_energy_ratio], marker="*", s=120, color="black")
            ax.annotate(f"paper {w.key.upper()}", (w.paper_time_ratio, w.paper_energy_ratio), fontsize=8)
        ax.set_xlabel("time ratio (makespan with ESC / always on)")
        ax.set_ylabel("energy ratio (ESC / always on)")
        ax.set_title("ESC's idle time / upper wait threshold (s): energy against time")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        paths.append(save_figure(fig, folder / "grid.png", dpi=100))
    return paths


# ------------------------------------------------------------------------------------------ report
def _d(seconds: float) -> str:
    from wattsched.analysis.node_states import format_duration

    return format_duration(seconds)


def write_report(frame: pd.DataFrame, path: Path, *, inputs: Sequence[Inputs], wall_s: float, workers: int | None,
                 traces: Sequence[Path] = (), figures: Sequence[Path] = (), full: bool = False,
                 measured: Mapping[str, Any] | None = None) -> Path:
    """``report.md``: inputs, table 1 and table 2 beside the paper's, what they show, the grid, the figures.
    ``measured``: the timing of the run that simulated everything, when this one only re-rendered."""
    from wattsched.analysis.node_states import format_duration

    lines = ["# EnergySaving Cluster: the experiment of the ESC paper's §3", "",
             "ESC paper (Dolz et al., GCM'11), §3, tables 1-2: each workload simulated with all nodes always on "
             "(FCFS on any free nodes, the paper's SGE-like queue) and with ESC (preset `esc`, its defaults: a "
             "pass every 60 s, a node idle longer than 1800 s switched off, nodes booted when a job needs nodes "
             "that are off or when the queued jobs' mean wait exceeds 3600 s, one user group), on the paper's "
             "five-state node (standby 2 W; powering off 480 s, 10.79 Wh; powering on 555 s, 13.71 Wh; idle "
             "150 W; loaded 230 W). *Time* is the makespan (the time to process all jobs), *energy* the "
             "platform's energy up to it.", ""]
    cores = workers or os.cpu_count()
    if measured is None:
        lines += [f"**Wall time**: {wall_s:.0f} s ({wall_s / 60:.1f} min) for {len(frame)} runs on {cores} worker "
                  f"processes (`make reproduce-esc`{', FULL=1' if full else ''}).", ""]
    else:
        lines += [f"**Wall time**: {measured['wall_s']:.0f} s ({measured['wall_s'] / 60:.1f} min) for "
                  f"{measured['runs']} runs on {measured['workers']} worker processes (the run that simulated them; "
                  f"this report was re-rendered from their outputs in {wall_s:.0f} s).", ""]
    lines += ["## Inputs", "", "| workload | nodes | source | jobs | span |", "|---|---:|---|---:|---:|"]
    lines += [f"| {i.label} | {i.workload.nb_hosts} | {i.source} | {i.nb_jobs} | {_d(i.span_s)} |" for i in inputs]
    lines += ["", "The paper's logs: NASA 42,264 jobs over 92 days on 128 nodes, OSC 80,714 jobs over 677 days on 57 "
              "nodes. Offered loads of the synthetic logs: the utilization each always-on energy of table 1 implies "
              f"(NASA {WORKLOADS['nasa'].load}, OSC {WORKLOADS['osc'].load}).", ""]
    failures = failed_runs(frame)
    if failures:
        lines += [f"**Failed runs** ({len(failures)}), left out below:", ""] + [f"- `{n}`: {e}" for n, e in failures] + [""]
    ok = frame[frame["status"] != "failed"]

    lines += ["## Table 1: time and energy, ours beside the paper's", "",
              "| workload | run | time (ours) | MWh (ours) | time (paper) | MWh (paper) |", "|---|---|---:|---:|---:|---:|"]
    for inp in inputs:
        w = inp.workload
        part = ok[ok["workload"] == inp.label]
        for variant, paper in (("always-on", w.without), ("esc", w.with_esc)):
            sel = part[part["variant"] == variant]
            if sel.empty:
                continue
            r = sel.iloc[0]
            lines.append(f"| {inp.label} | {'without ESC' if variant == 'always-on' else 'with ESC'} | "
                         f"{format_duration(r['makespan_s'])} | {r['energy_j'] / MWH_J:.2f} | "
                         f"{format_duration(paper.time_s)} | {paper.energy_mwh:.2f} |")
    lines += ["", "| workload | energy ratio (ours) | energy ratio (paper) | time ratio (ours) | time ratio (paper) | "
              "mean wait always-on → ESC |", "|---|---:|---:|---:|---:|---:|"]
    for inp in inputs:
        part = ok[(ok["workload"] == inp.label)]
        esc = part[part["variant"] == "esc"]
        base = part[part["variant"] == "always-on"]
        if esc.empty or base.empty:
            continue
        r = esc.iloc[0]
        w = inp.workload
        lines.append(f"| {inp.label} | {r['energy_ratio']:.3f} | {w.paper_energy_ratio:.3f} | {r['time_ratio']:.6f} | "
                     f"{w.paper_time_ratio:.6f} | {base['mean_waiting_time_s'].iloc[0]:.0f} s → "
                     f"{r['mean_waiting_time_s']:.0f} s |")

    lines += nasa_file_note(inputs, ok)
    lines += ["", "## Table 2: on/off statistics with ESC (the paper gives them for OSC)", "",
              "| measure | " + " | ".join(f"{i.label} total | per node" for i in inputs) + " | paper OSC total | per node |",
              "|---|" + "---:|---:|" * (len(inputs) + 1)]
    measures = [("Number of shutdowns", "nb_shutdowns", False), ("Maximum active nodes", "max_active_nodes", False),
                ("Active time", "active_s", True), ("Inactive time", "inactive_s", True),
                ("Active time with average of active intervals per node", "mean_active_interval_total_s", True),
                ("Inactive time with average of inactive intervals per node", "mean_inactive_interval_total_s", True)]
    for title, key, is_time in measures:
        cells = []
        for inp in inputs:
            sel = ok[(ok["workload"] == inp.label) & (ok["variant"] == "esc")]
            if sel.empty:
                cells += ["", ""]
                continue
            v = float(sel[key].iloc[0])
            n = inp.workload.nb_hosts
            if key == "max_active_nodes":
                cells += [f"{v:.0f} of {n}", ""]
            elif is_time:
                cells += [format_duration(v), format_duration(v / n)]
            else:
                cells += [f"{v:.0f}", f"{v / n:.2f}"]
        total, per = PAPER_TABLE2[key]
        if key == "max_active_nodes":
            paper_cells = [f"{total:.0f} of 57", ""]
        elif is_time:
            paper_cells = [format_duration(total), format_duration(per or math.nan)]
        else:
            paper_cells = [f"{total:.0f}", f"{per:.2f}" if per is not None else ""]
        lines.append(f"| {title} | " + " | ".join(cells + paper_cells) + " |")
    gaps = []
    for inp in inputs:
        sel = ok[(ok["workload"] == inp.label) & (ok["variant"] == "esc")]
        if not sel.empty:
            gaps.append(f"{inp.label} {format_duration(float(sel['mean_time_between_shutdowns_s'].iloc[0]))}")
    lines += ["", "Mean time between two shutdowns of a node: " + ", ".join(gaps) + ".", ""]

    lines += findings(ok, inputs)
    grid = ok[~ok["variant"].isin(["always-on"])]
    if len(grid) > len(inputs):
        lines += ["## ESC's parameters: idle time × upper wait threshold", "",
                  "The paper gives no value for them; every other option at its default.", "",
                  "| workload | idle_s | upper_wait_s | energy ratio | time ratio | mean wait (s) | shutdowns | "
                  "max active |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for _, r in grid.sort_values(["workload", "idle_s", "upper_wait_s"]).iterrows():
            up = "none" if pd.isna(r["upper_wait_s"]) else f"{r['upper_wait_s']:g}"
            lines.append(f"| {r['workload']} | {r['idle_s']:g} | {up} | {r['energy_ratio']:.3f} | "
                         f"{r['time_ratio']:.4f} | {r['mean_waiting_time_s']:.0f} | {r['nb_shutdowns']:.0f} | "
                         f"{r['max_active_nodes']:.0f} |")
        lines.append("")
    if figures:
        lines += ["## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures] + [""]
    if traces:
        lines += ["## Paraver traces", "", "Written next to the runs (not in this folder): "
                  + ", ".join(f"`{p}`" for p in traces) + " (states 0 off, 1 running, 2 idle, 3 switching on, "
                  "4 switching off; events 1000 job id, 1001 pstate; `wattsched paraver RUN` writes one for any run).", ""]
    write_if_changed(path, "\n".join(lines))  # atomically: a full disk leaves no half report, and says so
    return path


def findings(ok: pd.DataFrame, inputs: Sequence[Inputs]) -> list[str]:
    """What the tables show against the paper's claims, with the numbers (a section of the report)."""
    from wattsched.analysis.node_states import format_duration

    out = ["## What it shows", ""]
    for inp in inputs:
        w = inp.workload
        part = ok[ok["workload"] == inp.label]
        base, esc = part[part["variant"] == "always-on"], part[part["variant"] == "esc"]
        if base.empty or esc.empty:
            continue
        b, e = base.iloc[0], esc.iloc[0]
        grid = part[part["variant"] != "always-on"]
        de = e["energy_ratio"] - w.paper_energy_ratio
        by_idle = grid.groupby("idle_s")["energy_ratio"].mean()
        idle_text = ", ".join(f"{idle:g} s ×{ratio:.3f}" for idle, ratio in by_idle.items())
        out.append(
            f"- **{inp.label}**: always on, {format_duration(b['makespan_s'])} and {b['energy_j'] / MWH_J:.2f} MWh "
            f"(paper: {format_duration(w.without.time_s)}, {w.without.energy_mwh:.2f} MWh). ESC saves energy as the "
            f"paper says: ×{e['energy_ratio']:.3f} (paper ×{w.paper_energy_ratio:.3f}, {de:+.3f}); over the grid "
            f"×{grid['energy_ratio'].min():.3f}-×{grid['energy_ratio'].max():.3f} (mean by idle time: {idle_text}). "
            f"Time ×{e['time_ratio']:.6f} (paper ×{w.paper_time_ratio:.6f}; grid up to "
            f"×{grid['time_ratio'].max():.6f}); the mean wait grows from {b['mean_waiting_time_s']:.0f} s to "
            f"{e['mean_waiting_time_s']:.0f} s.")
        if w.paper_time_ratio > 1.1 and grid["time_ratio"].max() < 1.1:
            t2 = PAPER_TABLE2
            out.append(
                f"  The paper's ×{w.paper_time_ratio:.2f} time is **not reproduced**, with any of the grid's "
                f"parameters. In the paper's run at most {t2['max_active_nodes'][0]:.0f} of {w.nb_hosts} nodes were "
                f"ever on (table 2), {t2['nb_shutdowns'][0]:.0f} shutdowns in {format_duration(w.with_esc.time_s)}, "
                f"a node on for {format_duration(t2['mean_active_interval_total_s'][1] or 0)} and off for "
                f"{format_duration(t2['mean_inactive_interval_total_s'][1] or 0)} at a stretch on average: the "
                f"queue ran on fewer nodes than its demand for months. Here ESC switches on what the queue needs "
                f"(rule 1 for the widest job, the wait threshold for the queue's head) and {e['max_active_nodes']:.0f} "
                f"of {w.nb_hosts} nodes are on at the peak, with {e['nb_shutdowns']:.0f} shutdowns, on for "
                f"{format_duration(e['mean_active_interval_total_s'] / w.nb_hosts)} and off for "
                f"{format_duration(e['mean_inactive_interval_total_s'] / w.nb_hosts)} at a stretch: nothing in §2.5's "
                f"rules, as we read them, caps the nodes on. What limited the paper's run (a cap on the nodes "
                f"switched on per pass? OSC's multi-core nodes shared by jobs, which our one-job-per-node model does "
                f"not have?) is not in its text, and we do not guess it.")
    out.append("")
    return out
