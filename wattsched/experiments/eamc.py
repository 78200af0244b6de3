"""The EAMC paper's evaluation (§5, figures 3-5) on the p1/p2 system: EAMC's variants against Base, Min runtime
and Min energy, for three application mixes and t_weight 1 and 1.5.

D'Amico & Corbalan, "Energy hardware and workload aware job scheduling towards interconnected HPC
environments", §5: p1 (512 nodes, 2x Platinum 8168, 1.2-2.7 GHz) and p2 (512 nodes, 2x Gold 6254, 1.2-3.1 GHz)
under one scheduler; 5,000 jobs over 10-15 days (mean 18.29 nodes, 3.65 h at the top frequency) of eight
applications whose time and energy at every frequency and partition come from the EAR model
(:mod:`wattsched.energy_models.ear`); mixes "13 %", "33 %" and "50 %" of jobs favouring p2 (STREAM).

**Inputs** (:func:`prepare_inputs`): the platform of :func:`wattsched.platforms.generate.eamc_platform_xml` and,
per mix and seed, a workload of :func:`wattsched.workloads.eamc.eamc_workload`. Full size (``--full``): 512 +
512 nodes and 5,000 jobs, as the paper; reduced (the default): both scaled by ``scale`` (0.5: 256 + 256
nodes, 2,500 jobs, the same job sizes and times, the same load per node). Seeds: 3 by default (the paper
runs one workload per mix; the spread over seeds shows what one workload can say).

**Runs** (in parallel, :func:`wattsched.experiments.sweep.run_sweep`, dynamic jobs on): per mix and seed,
Base Slurm (``eamc-base``), Min runtime, Min energy, and EAMC-Reorder, -PriorityInc and -PriorityInc-V at
t_weight 1 and 1.5 (the paper's reading of eq. 4-5), plus PriorityInc-V with the published plugin's scores
(``"epm": "plugin"``), under which the 35 % rule lowers some applications (it lowers none under the paper's
reading on this data).

**Outputs** under ``--out``: ``inputs/``, ``runs/`` (Batsim CSVs), ``results.csv`` (one row per run with the
paper's metrics, :mod:`wattsched.analysis.eamc`), ``summary.csv`` (means over seeds, improvements over Base and
over Min runtime); under ``--report-dir`` (default ``--out``): ``report.md`` with the EPM's choices, the
figures' numbers, the paper's statements side by side with ours, and figures shaped like figures 3-5
(figure 6 needs the paper's p3, whose data is not published).

Command line: ``wattsched reproduce eamc --out results/eamc [--report-dir docs/results/eamc] [--full]``.
"""

from __future__ import annotations

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

from wattsched.base.errors import OptionError, counted
from wattsched.base.fileio import write_if_changed
from wattsched.base.validate import check_count, option_error
from wattsched.experiments.sweep import Run, failed_runs, read_timing, run_sweep, write_table

__all__ = ["MIXES", "PAPER", "POLICIES", "Policy", "build_runs", "check_scale", "epm_table", "prepare_inputs",
           "run_experiment", "summarize", "write_report"]

logger = logging.getLogger(__name__)

MIXES = ("13", "33", "50")
FULL_HOSTS = 512
FULL_JOBS = 5000
DEFAULT_SCALE = 0.5


@dataclass(frozen=True)
class Policy:
    """One scheduler of the study: its label in the paper's figures, preset and options."""

    label: str
    preset: str
    options: Mapping[str, Any] = field(default_factory=dict)
    eamc: bool = True

    @property
    def t_weight(self) -> float | None:
        return self.options.get("t_weight", 1.0) if self.eamc else None


POLICIES: tuple[Policy, ...] = (
    Policy("Base", "eamc-base", eamc=False),
    Policy("Min runtime", "min-runtime", eamc=False),
    Policy("Min energy", "min-energy", eamc=False),
    *(Policy(f"{name}-{tw:g}", preset, {"t_weight": tw})
      for tw in (1.0, 1.5)
      for name, preset in (("Reorder", "eamc-reorder"), ("PriorityInc", "eamc-priority-inc"),
                           ("PriorityInc-V", "eamc-priority-inc-v"))),
    *(Policy(f"PriorityInc-V(plugin)-{tw:g}", "eamc-priority-inc-v", {"t_weight": tw, "epm": "plugin"})
      for tw in (1.0, 1.5)),
)
BASE, MIN_RUNTIME, MIN_ENERGY = "Base", "Min runtime", "Min energy"

#: Metrics (``compute_metrics`` columns) of the figures, their labels, and whether lower is better.
TIME_METRICS = (("makespan_since_first_submission_s", "makespan"), ("mean_response_time_s", "response time"),
                ("mean_response_time_s_p1", "response time p1"), ("mean_response_time_s_p2", "response time p2"),
                ("sum_runtimes_s", "sum of runtimes"))
ENERGY_METRICS = (("jobs_energy_j", "jobs' energy"), ("jobs_energy_j_p1", "energy p1"),
                  ("jobs_energy_j_p2", "energy p2"))
RELATIVE = tuple(m for m, _ in TIME_METRICS + ENERGY_METRICS)
FREQUENCY = ("mean_frequency_ghz", "mean_frequency_ghz_p1", "mean_frequency_ghz_p2")
SHARES = ("favoured_partition_share", "favoured_share_p1", "favoured_share_p2", "jobs_share_p2")


# ------------------------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class Inputs:
    """The platform and the workloads (one per mix and seed) of the study."""

    platform: Path
    hosts_per_partition: int
    nb_jobs: int
    workloads: Mapping[tuple[str, int], Path]
    meta: Mapping[tuple[str, int], Mapping[str, Any]]


def sizes(full: bool, scale: float | None) -> tuple[int, int]:
    """Hosts per partition and jobs: the paper's at full size, both × ``scale`` otherwise.

    Raises:
        OptionError: a scale outside (0, 1].
    """
    if full:
        return FULL_HOSTS, FULL_JOBS
    s = DEFAULT_SCALE if scale is None else scale
    if not 0 < s <= 1:
        raise OptionError(f"--scale must be in (0, 1], got {s}")
    return max(1, round(FULL_HOSTS * s)), max(1, round(FULL_JOBS * s))


def check_scale(scale: float | None, seeds: Sequence[int], workload_options: Mapping[str, Any] | None = None) -> None:
    """Refuse, before any workload is drawn, a ``--scale`` whose workload of one of ``seeds`` cannot have the mean
    job size (or run time) of the paper (or of ``workload_options``): jobs of at most its hosts per partition, as
    many as its jobs. The check is :func:`~wattsched.workloads.eamc.eamc_workload`'s own, on the same draws
    (:func:`~wattsched.workloads.eamc.unreached_mean`); the message names the smallest scale, to 0.001, that
    works with these seeds.

    Raises:
        OptionError: a scale outside (0, 1], or too small for the workloads.
    """
    from wattsched.workloads.eamc import MEAN_RES, MEAN_RUNTIME_S, unreached_mean

    if scale is None:  # the default size, or --full: the paper's sizes
        return
    hosts, jobs = sizes(False, scale)
    options = dict(workload_options or {})
    if "nb_jobs" in options or "max_res" in options:  # sizes not the scale's: the generator itself says what is wrong
        return
    mean_res = float(options.get("mean_res", MEAN_RES))
    mean_runtime_s = float(options.get("mean_runtime_s", MEAN_RUNTIME_S))
    order = list(seeds)

    def unreached(s: float) -> tuple[int, str, float] | None:
        """The first seed (the last one refused first: the worst seeds fail fast) whose workload at scale ``s``
        cannot reach a mean, the mean and the largest its draws can have."""
        hosts_s, jobs_s = sizes(False, s)
        for index, seed in enumerate(order):
            missed = unreached_mean(seed=seed, nb_jobs=jobs_s, max_res=hosts_s, mean_res=mean_res,
                                    mean_runtime_s=mean_runtime_s)
            if missed is not None:
                order.insert(0, order.pop(index))
                return seed, *missed
        return None

    missed = unreached(scale)
    if missed is None:
        return
    seed, mean, largest = missed
    if mean == "mean_res":
        why = (f"jobs of at most {counted(hosts, 'node')} cannot have the workloads' mean size of {mean_res:g} nodes "
               f"(those of seed {seed} average at most {largest:.2f})")
    else:
        why = (f"{counted(jobs, 'job')} cannot have the workloads' mean run time of {mean_runtime_s / 3600:g} h "
               f"(those of seed {seed} average at most {largest / 3600:.2f} h)")
    with_seeds = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]} to {seeds[-1]}"
    # scales of three decimals upwards (the worst seed first: a scale too small is refused by one draw)
    step = 1000
    smallest = next((k / step for k in range(math.floor(scale * step + 1e-9) + 1, step + 1)
                     if unreached(k / step) is None), None)
    works = (f"the smallest scale that works with {with_seeds} is {smallest:g} (to 0.001)" if smallest is not None
             else f"no scale up to 1 works with {with_seeds}")
    raise OptionError(f"--scale {scale:g} ({hosts} + {hosts} nodes, {counted(jobs, 'job')}): {why}; {works}")


def prepare_inputs(out: Path, *, full: bool = False, scale: float | None = None, seeds: Sequence[int] = (1, 2, 3),
                   mixes: Sequence[str] = MIXES, workload_options: Mapping[str, Any] | None = None) -> Inputs:
    """Write the platform and the workloads under ``out/inputs`` (unchanged files are not rewritten);
    ``workload_options`` overrides parameters of :func:`~wattsched.workloads.eamc.eamc_workload` (tests,
    sensitivity studies)."""
    from wattsched.platforms.generate import eamc_platform_xml
    from wattsched.workloads.eamc import eamc_workload

    hosts, jobs = sizes(full, scale)
    params: dict[str, Any] = {"nb_jobs": jobs, "max_res": hosts, **(workload_options or {})}
    jobs = int(params["nb_jobs"])
    folder = out / "inputs"
    try:  # every workload drawn before any file is written: a size they cannot have leaves nothing behind
        drawn = {(mix, seed): eamc_workload(seed=seed, mix=mix, **params) for mix in mixes for seed in seeds}
    except OptionError as exc:
        if full or scale is None:
            raise
        raise OptionError(f"--scale {scale:g} ({hosts} + {hosts} nodes, {counted(jobs, 'job')}): {exc}") from None
    platform = folder / f"eamc_p1p2_{hosts}.xml"
    write_if_changed(platform, eamc_platform_xml((hosts, hosts)))
    workloads: dict[tuple[str, int], Path] = {}
    metas: dict[tuple[str, int], Mapping[str, Any]] = {}
    for (mix, seed), workload in drawn.items():
        path = folder / f"w{mix}_seed{seed}_{jobs}.json"
        write_if_changed(path, json.dumps(workload) + "\n")
        workloads[mix, seed], metas[mix, seed] = path, workload["meta"]
    return Inputs(platform, hosts, jobs, workloads, metas)


def build_runs(inputs: Inputs, runs_dir: Path, policies: Sequence[Policy] = POLICIES) -> list[Run]:
    """One run per mix, seed and policy, with dynamic jobs."""
    runs = []
    for (mix, seed), workload in inputs.workloads.items():
        for policy in policies:
            slug = policy.label.replace(" ", "-").replace("(", "").replace(")", "").lower()
            name = f"w{mix}-s{seed}-{slug}"
            runs.append(Run(name, str(inputs.platform), str(workload), policy.preset, dict(policy.options),
                            str(runs_dir / f"w{mix}" / f"seed{seed}" / slug), dynamic_jobs=True,
                            tags={"mix": mix, "seed": seed, "policy": policy.label}))
    return runs


# ------------------------------------------------------------------------------------------ results
def improvement(value: pd.Series, baseline: pd.Series) -> pd.Series:
    """The paper's improvement in %: (baseline − value) / baseline × 100 (lower is better)."""
    return (baseline - value) / baseline * 100.0


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per run: improvements over Base (``vs_base_<metric>``) and over Min runtime (``vs_minrt_<metric>``) of the
    same mix and seed, and the favoured shares' mean over partitions; then the mean over seeds per (mix, policy),
    with ``<column>_min`` / ``_max`` over seeds."""
    ok = frame[frame["status"] != "failed"].copy()
    ok["mix"] = ok["mix"].astype(str)
    shares = [c for c in ("favoured_share_p1", "favoured_share_p2") if c in ok]
    ok["favoured_share_mean"] = ok[shares].mean(axis=1) if shares else math.nan
    for reference, prefix in ((BASE, "vs_base_"), (MIN_RUNTIME, "vs_minrt_")):
        ref = ok[ok["policy"] == reference].set_index(["mix", "seed"])
        for metric in RELATIVE + FREQUENCY:
            if metric not in ok:
                continue
            base = ok.set_index(["mix", "seed"]).index.map(lambda k, m=metric: ref[m].get(k, math.nan))
            ok[prefix + metric] = improvement(ok[metric], pd.Series(base, index=ok.index, dtype=float))
    numeric = [c for c in ok.columns if c not in ("mix", "policy", "seed") and pd.api.types.is_numeric_dtype(ok[c])]
    grouped = ok.groupby(["mix", "policy"], sort=False)[numeric]
    summary = grouped.mean()
    spread = grouped.agg(["min", "max"])
    spread.columns = [f"{c}_{s}" for c, s in spread.columns]
    summary = summary.join(spread).reset_index()
    order = {p.label: k for k, p in enumerate(POLICIES)}
    summary["_order"] = summary["policy"].map(lambda p: order.get(p, len(order)))
    return summary.sort_values(["mix", "_order"]).drop(columns="_order").reset_index(drop=True)


def epm_table(t_weights: Sequence[float] = (1.0, 1.5), threshold: float = 0.35) -> pd.DataFrame:
    """The EPM's choices per application (the paper's statement of §5: STREAM favours p2, the seven others p1):
    f_opt per partition (eq. 4), part_eff (eq. 5), the favoured partition and whether the other one is beyond
    PriorityInc-V's threshold, for each t_weight, in the paper's reading and the plugin's."""
    from wattsched.energy_models.ear import load_ear_model
    from wattsched.platforms.generate import EAMC_PARTITIONS
    from wattsched.schedulers.eamc import EnergyPrediction

    model = load_ear_model()
    names = ("lu.C", "ep.D", "bt-mz.C", "sp-mz.C", "lu-mz.C", "ua.C", "DGEMM", "STREAM")
    rows = []
    for form in ("paper", "plugin"):
        for tw in t_weights:
            epm = EnergyPrediction(tw, form)
            for app in model.apps:
                choices, freqs = [], {}
                for part, (module, _) in EAMC_PARTITIONS.items():
                    projection = model.projection(app, module)
                    k = epm.index(projection, projection.available, "eamc")
                    freqs[part] = float(projection.frequencies_ghz[k])
                    choices.append((part, float(projection.energy_j[k]), float(projection.time_s[k])))
                ranked = epm.rank(choices)
                best, worst = ranked[0], ranked[-1]
                rows.append({"form": form, "t_weight": tw, "app": app, "name": names[app - 1] if app <= 8 else "",
                             "f_opt_p1": freqs["p1"], "f_opt_p2": freqs["p2"],
                             "part_eff_p1": dict(ranked)["p1"], "part_eff_p2": dict(ranked)["p2"],
                             "favoured": best[0], "other_beyond_threshold": epm.beyond(worst[1], best[1], threshold)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------- paper
@dataclass(frozen=True)
class Claim:
    """A number the paper states (its figures' bars are not in the text), and how ours is computed."""

    key: str
    text: str
    paper: str


PAPER: tuple[Claim, ...] = (
    Claim("minrt_vs_base_makespan", "Min runtime's makespan vs Base, W13 (fig. 3)", "−39 % (\"up to 39 %\")"),
    Claim("minrt_vs_base_response", "Min runtime's response time vs Base, W13 (fig. 3)", "−64 %"),
    Claim("minrt_vs_minen_energy", "Min runtime's jobs' energy vs Min energy, W13 (fig. 3)", "+12 % (\"up 12 %\")"),
    Claim("minen_vs_base_energy", "Min energy's jobs' energy vs Base, W13 (fig. 3)", "−5 %"),
    Claim("pi_vs_minrt_energy_w13", "PriorityInc(-V)'s jobs' energy vs Min runtime, W13, t_weight 1 (fig. 3)",
          "−9 %, response time \"similar\""),
    Claim("pi_vs_minrt_response", "PriorityInc's response time vs Min runtime, W13 / W33 / W50, best t_weight (fig. 4)",
          "−2 / −10 / −25 % (\"up to\")"),
    Claim("pi_vs_minrt_response_p2", "response time in p2 vs Min runtime, best EAMC variant (fig. 4)",
          "−53 % (PriorityInc-V-1.5)"),
    Claim("pi_vs_minrt_response_p1", "response time in p1 vs Min runtime, worst EAMC variant (fig. 4)", "+34 % (\"up to\")"),
    Claim("eamc_vs_minrt_makespan", "EAMC's makespan vs Min runtime (fig. 4)", "−5 … −6 %"),
    Claim("minen_vs_minrt_response", "Min energy's response time vs Min runtime, W13 / W33 / W50 (fig. 4)",
          "+93 % (W13); up to +51 % (W33, W50)"),
    Claim("minen_vs_minrt_makespan", "Min energy's makespan vs Min runtime, W33 / W50 (fig. 4)", "up to +23 %"),
    Claim("minen_vs_pi_response", "Min energy's response time and makespan vs PriorityInc, W33 / W50 (fig. 4)",
          "up to +65 % / +25 %"),
    Claim("minrt_vs_minen_energy_w33_50", "Min runtime's jobs' energy vs Min energy, W33 / W50 (fig. 4)", "+17 / +21 %"),
    Claim("eamc_vs_minen_energy", "EAMC's jobs' energy vs Min energy, best (fig. 4)", "up to −4 %"),
    Claim("eamc_vs_minrt_energy", "EAMC's jobs' energy vs Min runtime, best (fig. 4)", "up to −20 %"),
    Claim("favoured_share", "jobs in their favoured partition: EAMC best vs Min runtime / Min energy (fig. 5)",
          "up to 82 % vs 55 %"),
    Claim("base_vs_minrt_w50", "Base vs Min runtime in W50: response time, energy, makespan (§5.2)",
          "−19 %, −10 %, +7 %"),
)

EAMC_LABELS = tuple(p.label for p in POLICIES if p.eamc and "plugin" not in p.label)


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:+.1f} %"


def our_claims(summary: pd.DataFrame) -> dict[str, str]:
    """Our value of each :data:`PAPER` claim (signed % change: negative is better, as the paper says "reduces")."""
    s = summary.set_index(["mix", "policy"])

    def get(mix: str, policy: str, column: str) -> float:
        try:
            return float(s.loc[(mix, policy), column])
        except KeyError:
            return math.nan

    def change(mix: str, policy: str, column: str, ref: str) -> float:
        value, base = get(mix, policy, column), get(mix, ref, column)
        return (value - base) / base * 100.0 if base else math.nan

    def best(mix: str, column: str, ref: str, labels: Sequence[str] = EAMC_LABELS, worst: bool = False) -> tuple[float, str]:
        values = [(change(mix, label, column, ref), label) for label in labels]
        values = [v for v in values if math.isfinite(v[0])]
        if not values:
            return math.nan, ""
        return max(values) if worst else min(values)

    def best_per_mix(column: str, ref: str, worst: bool = False) -> str:
        """``W13 -7.9 % (PriorityInc-1.5); W33 ...``: the best (or worst) EAMC variant's change per mix."""
        found = (best(mix, column, ref, worst=worst) for mix in MIXES)
        return "; ".join(f"W{mix} {_pct(v)} ({label})" for mix, (v, label) in zip(MIXES, found))

    out: dict[str, str] = {}
    out["minrt_vs_base_makespan"] = _pct(change("13", MIN_RUNTIME, "makespan_since_first_submission_s", BASE))
    out["minrt_vs_base_response"] = _pct(change("13", MIN_RUNTIME, "mean_response_time_s", BASE))
    out["minrt_vs_minen_energy"] = _pct(change("13", MIN_RUNTIME, "jobs_energy_j", MIN_ENERGY))
    out["minen_vs_base_energy"] = _pct(change("13", MIN_ENERGY, "jobs_energy_j", BASE))
    out["pi_vs_minrt_energy_w13"] = (
        f"PriorityInc-1 {_pct(change('13', 'PriorityInc-1', 'jobs_energy_j', MIN_RUNTIME))}, PriorityInc-V-1 "
        f"{_pct(change('13', 'PriorityInc-V-1', 'jobs_energy_j', MIN_RUNTIME))}; response time "
        f"{_pct(change('13', 'PriorityInc-1', 'mean_response_time_s', MIN_RUNTIME))}")
    parts = []
    for mix in MIXES:
        v, label = best(mix, "mean_response_time_s", MIN_RUNTIME, ("PriorityInc-1", "PriorityInc-1.5"))
        parts.append(f"{_pct(v)} ({label})")
    out["pi_vs_minrt_response"] = " / ".join(parts)
    out["pi_vs_minrt_response_p2"] = best_per_mix("mean_response_time_s_p2", MIN_RUNTIME)
    out["pi_vs_minrt_response_p1"] = best_per_mix("mean_response_time_s_p1", MIN_RUNTIME, worst=True)
    parts = []
    for mix in MIXES:
        values = [change(mix, label, "makespan_since_first_submission_s", MIN_RUNTIME) for label in EAMC_LABELS]
        values = [v for v in values if math.isfinite(v)]
        parts.append(f"W{mix} {_pct(min(values)) if values else 'n/a'} … {_pct(max(values)) if values else 'n/a'}")
    out["eamc_vs_minrt_makespan"] = "; ".join(parts)
    out["minen_vs_minrt_response"] = " / ".join(_pct(change(m, MIN_ENERGY, "mean_response_time_s", MIN_RUNTIME))
                                                for m in MIXES)
    out["minen_vs_minrt_makespan"] = " / ".join(
        _pct(change(m, MIN_ENERGY, "makespan_since_first_submission_s", MIN_RUNTIME)) for m in ("33", "50"))
    out["minen_vs_pi_response"] = "; ".join(
        f"W{m} {_pct(max(change(m, MIN_ENERGY, 'mean_response_time_s', p) for p in ('PriorityInc-1', 'PriorityInc-1.5')))}"
        f" / {_pct(max(change(m, MIN_ENERGY, 'makespan_since_first_submission_s', p) for p in ('PriorityInc-1', 'PriorityInc-1.5')))}"
        for m in ("33", "50"))
    out["minrt_vs_minen_energy_w33_50"] = " / ".join(_pct(change(m, MIN_RUNTIME, "jobs_energy_j", MIN_ENERGY))
                                                     for m in ("33", "50"))
    out["eamc_vs_minen_energy"] = best_per_mix("jobs_energy_j", MIN_ENERGY)
    out["eamc_vs_minrt_energy"] = best_per_mix("jobs_energy_j", MIN_RUNTIME)
    parts = []
    for mix in MIXES:
        eamc = max((get(mix, label, "favoured_partition_share") for label in EAMC_LABELS), default=math.nan)
        others = [get(mix, p, "favoured_partition_share") for p in (MIN_RUNTIME, MIN_ENERGY)]
        parts.append(f"W{mix} {eamc * 100:.0f} % vs {others[0] * 100:.0f} / {others[1] * 100:.0f} %")
    out["favoured_share"] = "; ".join(parts)
    out["base_vs_minrt_w50"] = ", ".join(_pct(change("50", BASE, c, MIN_RUNTIME)) for c in (
        "mean_response_time_s", "jobs_energy_j", "makespan_since_first_submission_s"))
    return out


def orderings(summary: pd.DataFrame) -> list[tuple[str, bool, str]]:
    """The issue's headline orderings, checked per mix on the means over seeds: (statement, holds, detail)."""
    s = summary.set_index(["mix", "policy"])
    out = []
    for mix in MIXES:
        if (mix, MIN_RUNTIME) not in s.index:
            continue
        minrt = s.loc[(mix, MIN_RUNTIME)]
        rows = [(label, s.loc[(mix, label)]) for label in EAMC_LABELS if (mix, label) in s.index]
        close = [(label, (r["mean_response_time_s"] / minrt["mean_response_time_s"] - 1) * 100,
                  (r["jobs_energy_j"] / minrt["jobs_energy_j"] - 1) * 100) for label, r in rows]
        holds = all(dr <= 10.0 and de < 0 for _, dr, de in close)
        detail = ", ".join(f"{label} {dr:+.1f} % time / {de:+.1f} % energy" for label, dr, de in close)
        out.append((f"W{mix}: every EAMC variant within +10 % of Min runtime's response time, with less energy",
                    holds, detail))
        minen = s.loc[(mix, MIN_ENERGY)]
        dr = (minen["mean_response_time_s"] / minrt["mean_response_time_s"] - 1) * 100
        out.append((f"W{mix}: Min energy much slower than Min runtime (paper +51 … +93 % response time)",
                    dr >= 25.0, f"{dr:+.1f} %"))
        shares = {label: float(s.loc[(mix, label), "favoured_partition_share"]) for label, _ in rows}
        for tw in ("1", "1.5"):
            reorder = shares.get(f"Reorder-{tw}", math.nan)
            pis = [shares.get(f"PriorityInc-{tw}", math.nan), shares.get(f"PriorityInc-V-{tw}", math.nan)]
            out.append((f"W{mix}, t_weight {tw}: PriorityInc and PriorityInc-V place more jobs in their favoured "
                        "partition than Reorder", all(v > reorder for v in pis),
                        f"Reorder {reorder * 100:.1f} %, PriorityInc {pis[0] * 100:.1f} %, PriorityInc-V "
                        f"{pis[1] * 100:.1f} %"))
    return out


# -------------------------------------------------------------------------------------------- figures
def _bars(ax: Any, table: pd.DataFrame, metrics: Sequence[tuple[str, str]], labels: Sequence[str], prefix: str,
          title: str) -> None:
    width = 0.8 / max(1, len(labels))
    x = np.arange(len(metrics))
    cmap = __import__("matplotlib").colormaps["tab20"]
    for k, label in enumerate(labels):
        row = table[table["policy"] == label]
        values = [float(row[prefix + m].iloc[0]) if not row.empty and prefix + m in row else math.nan for m, _ in metrics]
        lows = [float(row[prefix + m + "_min"].iloc[0]) if not row.empty and prefix + m + "_min" in row else math.nan
                for m, _ in metrics]
        highs = [float(row[prefix + m + "_max"].iloc[0]) if not row.empty and prefix + m + "_max" in row else math.nan
                 for m, _ in metrics]
        err = np.array([[v - lo for v, lo in zip(values, lows)], [hi - v for v, hi in zip(values, highs)]])
        ax.bar(x + (k - (len(labels) - 1) / 2) * width, values, width, label=label, color=cmap(k % 20),
               yerr=np.nan_to_num(err), error_kw={"elinewidth": 0.6, "capsize": 1.5})
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(x, [name for _, name in metrics], fontsize=8)
    ax.set_ylabel("improvement (%)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", linewidth=0.3)


def plot_figures(summary: pd.DataFrame, folder: Path) -> list[Path]:
    """``fig3_vs_base.png``, ``fig4_vs_min_runtime.png``, ``fig5_favoured_partition.png``."""
    from matplotlib.figure import Figure

    from wattsched.analysis.plots import save_figure

    paths = []
    w13 = summary[summary["mix"] == "13"]
    if not w13.empty:
        fig = Figure(figsize=(9, 4))
        ax = fig.add_subplot()
        labels = ["Reorder-1", "PriorityInc-1", "PriorityInc-V-1", MIN_RUNTIME, MIN_ENERGY]
        _bars(ax, w13, (("makespan_since_first_submission_s", "makespan"), ("mean_response_time_s", "avg response"),
                        ("sum_runtimes_s", "sum of runtimes"), ("jobs_energy_j", "jobs' energy")),
              labels, "vs_base_", "Figure 3 shaped: improvement over Base Slurm, workload 13 %, t_weight 1 "
                                   "(mean over seeds, bars: min-max)")
        ax.legend(fontsize=7, ncol=5, loc="lower left")
        fig.tight_layout()
        paths.append(save_figure(fig, folder / "fig3_vs_base.png", dpi=100))
    fig = Figure(figsize=(12, 10))
    labels = ["Reorder-1", "Reorder-1.5", "PriorityInc-1", "PriorityInc-1.5", "PriorityInc-V-1", "PriorityInc-V-1.5",
              MIN_ENERGY, BASE]
    for row, mix in enumerate(MIXES):
        table = summary[summary["mix"] == mix]
        if table.empty:
            continue
        ax = fig.add_subplot(len(MIXES), 2, 2 * row + 1)
        _bars(ax, table, TIME_METRICS[:4], labels, "vs_minrt_", f"({'ace'[row]}) time metrics, workload {mix} %")
        ax.set_ylim(bottom=max(ax.get_ylim()[0], -150))
        ax = fig.add_subplot(len(MIXES), 2, 2 * row + 2)
        _bars(ax, table, ENERGY_METRICS, labels, "vs_minrt_", f"({'bdf'[row]}) energy metrics, workload {mix} %")
        if row == 0:
            ax.legend(fontsize=7, ncol=2)
    fig.suptitle("Figure 4 shaped: improvement over Min runtime (mean over seeds, bars: min-max; Base's response "
                  "times may fall below the axis)", fontsize=10)
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig4_vs_min_runtime.png", dpi=90))
    fig = Figure(figsize=(10, 3.8))
    labels = [MIN_RUNTIME, MIN_ENERGY, "Reorder-1", "Reorder-1.5", "PriorityInc-1", "PriorityInc-1.5",
              "PriorityInc-V-1", "PriorityInc-V-1.5"]
    for k, (column, title) in enumerate((("favoured_share_mean", "mean of p1 and p2"),
                                         ("favoured_share_p2", "partition p2 (STREAM)"))):
        ax = fig.add_subplot(1, 2, k + 1)
        width = 0.8 / len(labels)
        cmap = __import__("matplotlib").colormaps["tab20"]
        for j, label in enumerate(labels):
            values = [float(summary[(summary["mix"] == m) & (summary["policy"] == label)][column].iloc[0]) * 100
                      if not summary[(summary["mix"] == m) & (summary["policy"] == label)].empty else math.nan
                      for m in MIXES]
            ax.bar(np.arange(len(MIXES)) + (j - (len(labels) - 1) / 2) * width, values, width, label=label,
                   color=cmap(j % 20))
        ax.set_xticks(np.arange(len(MIXES)), [f"W{m}" for m in MIXES])
        ax.set_ylabel("jobs in the favoured partition (%)")
        ax.set_ylim(0, 105)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", linewidth=0.3)
        if k == 0:
            ax.legend(fontsize=6, ncol=2, loc="lower left")
    fig.suptitle("Figure 5 shaped: jobs run in their favoured partition", fontsize=10)
    fig.tight_layout()
    paths.append(save_figure(fig, folder / "fig5_favoured_partition.png", dpi=100))
    return paths


# --------------------------------------------------------------------------------------------- report
def _table(frame: pd.DataFrame, columns: Sequence[tuple[str, str, str]]) -> list[str]:
    """A markdown table of ``frame`` with ``(column, header, format)``."""
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |",
             "|" + "|".join("---" if f == "" else "---:" for _, _, f in columns) + "|"]
    for _, row in frame.iterrows():
        cells = []
        for column, _, fmt in columns:
            value = row.get(column, "")
            if fmt and isinstance(value, (int, float, np.floating)):
                cells.append("n/a" if not math.isfinite(float(value)) else format(float(value), fmt))
            else:
                cells.append(str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


@dataclass
class EamcResult:
    frame: pd.DataFrame
    summary: pd.DataFrame
    inputs: Inputs
    wall_s: float
    report: Path


def write_report(frame: pd.DataFrame, summary: pd.DataFrame, path: Path, *, inputs: Inputs, wall_s: float,
                 workers: int | None, figures: Sequence[Path], full: bool, seeds: Sequence[int],
                 measured: Mapping[str, Any] | None = None) -> Path:
    """``report.md`` (module docstring)."""
    cores = workers or os.cpu_count()
    size = "full size (the paper's)" if full else "reduced size"
    lines = ["# EAMC: the evaluation of the EAMC paper's §5 (system p1/p2)", "",
             "D'Amico & Corbalan, \"Energy hardware and workload aware job scheduling towards interconnected HPC "
             "environments\", §5.1-5.2, figures 3-5. EASY backfilling across two partitions (p1: Platinum 8168, "
             "1.2-2.7 GHz; p2: Gold 6254, 1.2-3.1 GHz), every job run for exactly the EAR model's time at the "
             "partition and frequency chosen (dynamic jobs), its energy the model's power × nodes × time (idle "
             "nodes excluded). Improvements are the paper's: (reference − policy) / reference, positive = better.",
             ""]
    if measured is None:
        lines += [f"**Command**: `make reproduce-eamc{' FULL=1' if full else ''}` (= `wattsched reproduce eamc"
                  f"{' --full' if full else ''}`). **Wall time**: {wall_s:.0f} s ({wall_s / 60:.1f} min) for "
                  f"{len(frame)} runs on {cores} worker processes.", ""]
    else:
        lines += [f"**Wall time**: {measured['wall_s']:.0f} s ({measured['wall_s'] / 60:.1f} min) for {measured['runs']} "
                  f"runs on {measured['workers']} workers (the run that simulated them; re-rendered in {wall_s:.0f} s).",
                  ""]
    failures = failed_runs(frame)
    if failures:
        lines += [f"**{len(failures)} runs failed**: " + "; ".join(f"{n}: {e}" for n, e in failures[:5]), ""]
    metas = list(inputs.meta.values())
    lines += ["## Inputs", "",
              f"{size.capitalize()}: {inputs.hosts_per_partition} + {inputs.hosts_per_partition} nodes, "
              f"{counted(inputs.nb_jobs, 'job')} per workload (the paper: 512 + 512 nodes, 5,000 jobs), seeds "
              f"{', '.join(map(str, seeds))}, arrivals over 10 days (`wattsched eamc-workload`, "
              "`workloads/eamc.py`: the paper's stated means; its Cirne model with the ANL arrival pattern is not "
              "at hand).", "",
              "| workload | seed | jobs | mean nodes | mean run time at top freq. (h) | STREAM share | node-hours at top freq. |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for (mix, seed), meta in inputs.meta.items():
        lines.append(f"| W{mix} | {seed} | {meta['nb_jobs']} | {meta['mean_res']:.2f} | {meta['mean_runtime_s'] / 3600:.2f}"
                     f" | {meta['stream_share'] * 100:.1f} % | {meta['node_hours_at_top']:,.0f} |")
    if metas:
        lines += ["", f"The work alone fills the {2 * inputs.hosts_per_partition} nodes for "
                  f"{metas[0]['node_hours_at_top'] / (2 * inputs.hosts_per_partition) / 24:.1f} days at the top "
                  "frequency (p1's run times): the machine is saturated, as the paper's makespans of 10-15 days "
                  "for 5,000 jobs imply.", ""]
    epm = epm_table()
    lines += ["## The EPM's choices (eq. 4-5)", "",
              "f_opt per partition (GHz), part_eff, the favoured partition, and whether the other partition is "
              "beyond PriorityInc-V's 35 % threshold. The paper (§5): \"for the tested t_weight values, the first "
              "seven apps favour the first partition, while app 8 favours the second\"; it says ep.D was the "
              "application PriorityInc-V's threshold affected.", ""]
    lines += _table(epm, (("form", "form", ""), ("t_weight", "t_weight", "g"), ("app", "app", ""),
                          ("name", "name", ""), ("f_opt_p1", "f_opt p1", ".1f"), ("f_opt_p2", "f_opt p2", ".1f"),
                          ("part_eff_p1", "part_eff p1", ".3f"), ("part_eff_p2", "part_eff p2", ".3f"),
                          ("favoured", "favoured", ""), ("other_beyond_threshold", "other beyond 35 %", "")))
    paper_ok = epm[epm["form"] == "paper"]
    stream_p2 = bool(((paper_ok["app"] == 8) == (paper_ok["favoured"] == "p2")).all())
    beyond = sorted(set(epm[(epm["form"] == "plugin") & epm["other_beyond_threshold"]]["name"]))
    lines += ["", f"- STREAM favours p2 and the seven others p1 at t_weight 1 and 1.5: **{'yes' if stream_p2 else 'no'}** "
              "(in the plugin's reading too)." if stream_p2 else "- The paper's statement does not hold.",
              f"- Beyond the threshold in the paper's reading: "
              f"{', '.join(sorted(set(paper_ok[paper_ok['other_beyond_threshold']]['name']))) or 'none'} "
              f"(PriorityInc-V then behaves as PriorityInc); in the plugin's (absolute 0.35 on its summed score): "
              f"{', '.join(beyond) or 'none'}. Neither reading singles out ep.D as the paper reports.", ""]
    lines += ["## Figure 3: improvement over Base Slurm (W13, t_weight 1)", "", "![figure 3](fig3_vs_base.png)", ""]
    w13 = summary[summary["mix"] == "13"]
    cols = [("policy", "policy", "")] + [(f"vs_base_{m}", n, "+.1f") for m, n in
                                         (("makespan_since_first_submission_s", "makespan %"),
                                          ("mean_response_time_s", "response %"), ("sum_runtimes_s", "sum runtimes %"),
                                          ("jobs_energy_j", "jobs' energy %"))]
    lines += _table(w13, cols) + [""]
    lines += ["## Figure 4: improvement over Min runtime, per workload", "", "![figure 4](fig4_vs_min_runtime.png)", ""]
    cols = [("policy", "policy", "")] + [(f"vs_minrt_{m}", n + " %", "+.1f") for m, n in TIME_METRICS[:4] + ENERGY_METRICS]
    for mix in MIXES:
        table = summary[summary["mix"] == mix]
        if not table.empty:
            lines += [f"**Workload {mix} %**", ""] + _table(table, cols) + [""]
    lines += ["## Figure 5 and frequencies", "", "![figure 5](fig5_favoured_partition.png)", "",
              "Jobs in their favoured partition (overall, among p1-favouring and among p2-favouring jobs), jobs run "
              "on p2, and the mean frequency of the jobs (GHz) overall and per partition.", ""]
    cols = [("mix", "W", ""), ("policy", "policy", ""), ("favoured_partition_share", "favoured", ".1%"),
            ("favoured_share_p1", "favoured p1", ".1%"), ("favoured_share_p2", "favoured p2", ".1%"),
            ("jobs_share_p2", "on p2", ".1%"), ("mean_frequency_ghz", "GHz", ".2f"),
            ("mean_frequency_ghz_p1", "GHz p1", ".2f"), ("mean_frequency_ghz_p2", "GHz p2", ".2f")]
    lines += _table(summary, cols) + [""]
    lines += ["## Absolute values (mean over seeds)", ""]
    cols = [("mix", "W", ""), ("policy", "policy", ""),
            ("makespan_since_first_submission_s", "makespan (d)", ".2f"), ("mean_response_time_s", "response (h)", ".1f"),
            ("sum_runtimes_s", "Σ runtimes (kh)", ".1f"), ("jobs_energy_j", "jobs' energy (GJ)", ".1f"),
            ("utilization", "utilization", ".3f"), ("wall_s", "run wall s", ".1f")]
    absolute = summary.copy()
    absolute["makespan_since_first_submission_s"] = absolute["makespan_since_first_submission_s"] / 86400
    absolute["mean_response_time_s"] = absolute["mean_response_time_s"] / 3600
    absolute["sum_runtimes_s"] = absolute["sum_runtimes_s"] / 3.6e6
    absolute["jobs_energy_j"] = absolute["jobs_energy_j"] / 1e9
    lines += _table(absolute, cols) + [""]
    lines += ["## The paper's statements beside ours", "",
              "The paper gives its figures as bars without values; these are the numbers its text states. Ours: "
              "signed change of the policy against the reference, mean over seeds (negative = less time or energy).",
              "", "| statement | paper | ours |", "|---|---|---|"]
    ours = our_claims(summary)
    lines += [f"| {c.text} | {c.paper} | {ours.get(c.key, 'n/a')} |" for c in PAPER]
    lines += ["", "## Headline orderings", ""]
    lines += [f"- {'✔' if ok else '✘'} {text}: {detail}" for text, ok, detail in orderings(summary)]
    lines += ["", "Figure 6 (system p1/p3) is not reproduced: the paper's third partition (Gold 6148) has no "
              "published EAR data.", ""]
    write_if_changed(path, "\n".join(lines) + "\n")
    return path


def run_experiment(out: str | Path, *, report_dir: str | Path | None = None, full: bool = False,
                   scale: float | None = None, seeds: int = 3, seed: int = 1, mixes: Sequence[str] = MIXES,
                   workers: int | None = None, force: bool = False, show_progress: bool | None = None,
                   workload_options: Mapping[str, Any] | None = None) -> EamcResult:
    """Inputs, runs, summary, figures and report (module docstring; ``workload_options``: see
    :func:`prepare_inputs`).

    Raises:
        OptionError: a bad scale, seed count or mix.
    """
    t0 = time.perf_counter()
    if seeds < 1:
        raise OptionError(f"--seeds must be at least 1, got {seeds}")
    # --seeds 1e9 built a list of a billion seeds (gigabytes) before drawing the first workload
    check_count(seeds, "runs", "--seeds", "", "workloads per mix (each its runs)", option_error)
    for mix in mixes:
        if mix not in MIXES:
            raise OptionError(f"--mixes: unknown mix '{mix}'; mixes: {', '.join(MIXES)}")
    if full and scale is not None:
        raise OptionError(f"--full and --scale {scale:g}: give one of them (--full is the paper's size)")
    if len(set(mixes)) < len(mixes):
        raise OptionError(f"--mixes {','.join(mixes)}: a mix is given twice")
    out = Path(out)
    report = Path(report_dir) if report_dir is not None else out
    seed_list = list(range(seed, seed + seeds))
    timing = out / "timing.json"
    read_timing(timing)  # one edited by hand is refused before the runs, not read after them
    check_scale(None if full else scale, seed_list, workload_options)  # before any workload is drawn or written
    inputs = prepare_inputs(out, full=full, scale=scale, seeds=seed_list, mixes=mixes, workload_options=workload_options)
    runs = build_runs(inputs, out / "runs")
    frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
    write_table(frame, out / "results.csv")
    summary = summarize(frame)
    write_table(summary, out / "summary.csv")
    report.mkdir(parents=True, exist_ok=True)
    figures = plot_figures(summary, report)
    wall_s = time.perf_counter() - t0
    simulated = bool((frame["status"] == "done").all())
    if simulated:
        write_if_changed(timing, json.dumps({"wall_s": wall_s, "runs": len(frame), "workers": workers or os.cpu_count()}))
    measured = None if simulated else read_timing(timing)
    path = write_report(frame, summary, report / "report.md", inputs=inputs, wall_s=wall_s, workers=workers,
                        figures=figures, full=full, seeds=seed_list, measured=measured)
    return EamcResult(frame, summary, inputs, time.perf_counter() - t0, path)
