"""The experiments of the EnergyFairShare paper (§IV): Light-ESP with three users, and table I.

EFS paper (Georgiou, Glesser, Rzadca, Trystram, CCGrid 2015), with the queue orders of
``schedulers/fairshare.py`` behind EASY backfilling (presets ``fairshare``, ``efs``, ``fs-efs``; FIFO is
``compose`` with order ``fifo``):

1. **Light-ESP, same workload** (§IV-B.1, figure 2): Light-ESP ×4 on 15 nodes (one host per 12-core
   node, :mod:`workloads.lightesp`), three users with the same jobs and energy factors 0.7 (green), 1.0
   (normal), 1.3 (gluttonous); FIFO, FS, EFS, FS+EFS. The paper: under FIFO and FS the users' stretches
   are about equal; under EFS and FS+EFS green < normal < glutton, the green user's stretch "reduced by
   roughly 60 %" against the glutton's, FS+EFS with smaller differences than EFS; utilization ≈ 89 % for
   every policy. We run ``seeds`` submission orders (the paper: one) and report each and their mean.
2. **Light-ESP, different workloads** (§IV-B.2, figure 3): users with 1/6, 2/6 and 3/6 of the jobs, same
   factor. The paper: except FIFO every policy gives the same result, user 3 is penalized, utilization
   89 % for all.
3. **Table I** (§IV-A): traces SDSC-SP2 (128 processors), PIK-IPLEX (2,560) and Curie (80,640), one host
   per processor, energy proportional to CPU-seconds (Taurus platform, every job at the top pstate). The
   baseline is FairShare with every factor 1 (EFS and FS+EFS with equal factors order as FS does — a
   property test, and a check run here). Then, for each of the 20 users who submit the most jobs, in
   turn: her jobs at factor 0.7 (green) or 1.3 (gluttonous), under EFS and FS+EFS; for each of her jobs,
   stretch / stretch in the baseline, averaged over her jobs; min / mean / median / std (sample, ddof 1) /
   max over the 20 users. FS ignores energy, so its rows are 1 by construction (one check run shows the
   FS schedule unchanged). The real SDSC-SP2 and Curie logs are used when the Parallel Workloads
   Archive folder holds them (``--pwa``, ``$WATTSCHED_PWA``, or ``../shared/data/pwa`` beside the
   repository); PIK-IPLEX is not there and is always a synthetic trace of its size
   (:mod:`workloads.synthetic`), as is any missing log. By default (reduced size) each trace is cut to
   its busiest weeks (:func:`workloads.swf.busiest_window`: SDSC-SP2 8, Curie 1; PIK-IPLEX 4 synthetic
   weeks at offered load 0.9); ``--full`` replays the whole logs (hours for Curie).

Outputs under ``--out``: ``inputs/``, ``runs/`` (Batsim CSVs of every run, resumable), ``lightesp.csv``,
``table1.csv``, ``report.md`` (our numbers beside the paper's, each claim checked) and
``fig2_lightesp_same_workload.png``, ``fig3_lightesp_different_workloads.png``.

Command line: ``wattsched reproduce efs --out results/efs [--full] [--pwa DIR] [-j N] [--force]``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wattsched.workloads.pwa import find_pwa
from wattsched.base.errors import OptionError
from wattsched.base.fileio import emit_text
from wattsched.base.validate import check_count, option_error
from wattsched.energy_models.taurus import TAURUS
from wattsched.experiments.energy_budget import platform_file
from wattsched.experiments.sweep import Run, failed_runs, run_sweep, write_table

__all__ = ["POLICIES", "TRACES", "PAPER_TABLE1", "Policy", "Trace", "run_experiment"]

logger = logging.getLogger(__name__)

#: Jobs of the archive's logs without a requested time get their run time as walltime (``wattsched swf``'s
#: documented default, :mod:`workloads.swf`): EASY behind the orders needs an estimate, and the EFS paper
#: (§IV-A) says nothing else. The shared SDSC-SP2 and Curie logs lack a requested time for few jobs (the
#: report's summary lines count them).
SWF_WALLTIME_RULE = "runtime"

WEEK_S = 7 * 86400.0
GREEN, GLUTTON = 0.7, 1.3
EFFICIENCIES = {"green": GREEN, "gluttonous": GLUTTON}
LIGHTESP_MODES = ("same-workload", "different-workloads")
USER_NAMES = {"1": "user 1", "2": "user 2", "3": "user 3"}


@dataclass(frozen=True)
class Policy:
    """A prioritization policy of the paper and how we run it."""

    name: str
    scheduler: str
    options: Mapping[str, Any] = field(default_factory=dict)


POLICIES: tuple[Policy, ...] = (
    Policy("FIFO", "compose", {"order": "fifo"}),
    Policy("FS", "fairshare"),
    Policy("EFS", "efs"),
    Policy("FS+EFS", "fs-efs"),
)
_BY_NAME = {p.name: p for p in POLICIES}


@dataclass(frozen=True)
class Trace:
    """A trace of table I: key, the paper's name, processors (= hosts), its PWA file, reduced size."""

    key: str
    name: str
    hosts: int
    swf: str | None
    reduced_weeks: int
    full_weeks: int  # synthetic length at full size (a real log is replayed whole)
    users: int  # users of a synthetic trace


TRACES: tuple[Trace, ...] = (
    Trace("sdsc", "SDSC-SP2", 128, "SDSC-SP2-1998-4.2-cln.swf.gz", 8, 104, 100),
    Trace("pik", "PIK-IPLEX", 2560, None, 4, 52, 100),
    Trace("curie", "Curie", 80640, "CEA-Curie-2011-2.1-cln.swf.gz", 1, 26, 200),
)

#: Table I of the paper: (trace, policy, efficiency) → (min, mean, median, std, max) of the users' mean
#: normalized stretch.
PAPER_TABLE1: Mapping[tuple[str, str, str], tuple[float, float, float, float, float]] = {
    ("sdsc", "FS", "both"): (1.00, 1.00, 1.00, 0.00, 1.00),
    ("sdsc", "EFS", "green"): (0.27, 0.91, 0.92, 0.33, 1.82),
    ("sdsc", "EFS", "gluttonous"): (0.27, 1.10, 1.02, 0.31, 1.66),
    ("sdsc", "FS+EFS", "green"): (0.27, 0.89, 0.95, 0.24, 1.17),
    ("sdsc", "FS+EFS", "gluttonous"): (0.27, 1.03, 1.01, 0.34, 1.92),
    ("pik", "FS", "both"): (1.00, 1.00, 1.00, 0.00, 1.00),
    ("pik", "EFS", "green"): (0.73, 0.97, 1.00, 0.07, 1.00),
    ("pik", "EFS", "gluttonous"): (0.97, 1.03, 1.00, 0.11, 1.47),
    ("pik", "FS+EFS", "green"): (0.89, 1.00, 1.00, 0.03, 1.00),
    ("pik", "FS+EFS", "gluttonous"): (1.00, 1.03, 1.00, 0.10, 1.45),
    ("curie", "FS", "both"): (1.00, 1.00, 1.00, 0.00, 1.00),
    ("curie", "EFS", "green"): (0.14, 1.08, 1.00, 0.64, 3.44),
    ("curie", "EFS", "gluttonous"): (0.33, 3.02, 1.02, 6.25, 25.7),
    ("curie", "FS+EFS", "green"): (0.14, 1.63, 1.00, 2.45, 13.5),
    ("curie", "FS+EFS", "gluttonous"): (0.17, 1.57, 1.00, 2.06, 11.2),
}
STATS = ("min", "mean", "median", "std", "max")


# ------------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class TraceInputs:
    """A trace as simulated: files, where it comes from, its jobs and its most active users."""

    trace: Trace
    platform: str
    workload: str
    source: str
    nb_jobs: int
    top_users: tuple[str, ...]

    @property
    def label(self) -> str:
        return Path(self.workload).stem


def _write_json(path: Path, content: Any) -> None:
    text = json.dumps(content)
    if not path.exists() or path.read_text() != text:
        emit_text(text, path)


def _gunzip(log: Path, target: Path) -> None:
    """``log`` (gzip) decompressed into ``target``, atomically: a full disk or a file size limit (``ulimit -f``) is
    one line naming ``target`` and leaves no part of it (a ``.tmp`` file beside it and a traceback, before), a log
    that cannot be read one naming ``log``."""
    import gzip

    from wattsched.base.errors import InputError
    from wattsched.base.fileio import write_files

    def decompress(tmp: Path) -> None:
        with open(tmp, "wb") as dst:
            try:
                src = gzip.open(log, "rb")
            except OSError as exc:
                raise InputError(log, "", f"cannot read: {exc.strerror or exc}") from None
            with src:
                while True:
                    try:
                        chunk = src.read(1 << 20)
                    except (OSError, EOFError, ValueError) as exc:  # not gzip, cut short, a bad CRC
                        raise InputError(log, "", f"cannot decompress: {exc}") from None
                    if not chunk:
                        return
                    dst.write(chunk)

    write_files({target: decompress})


def trace_inputs(trace: Trace, inputs_dir: Path, *, pwa: Path | None, full: bool, weeks: int | None,
                 nb_users: int, seed: int) -> TraceInputs:
    """The baseline workload of ``trace`` (every energy factor 1), written once, and its top users."""
    from wattsched.workloads.swf import busiest_window, require_jobs, swf_to_batsim
    from wattsched.workloads.synthetic import synthetic_week
    from wattsched.workloads.users import most_active_users

    length = weeks if weeks is not None else (trace.full_weeks if full else trace.reduced_weeks)
    log = pwa / trace.swf if pwa is not None and trace.swf is not None else None
    if log is not None and log.exists():
        swf = inputs_dir / log.name.removesuffix(".gz")
        if not swf.exists():
            _gunzip(log, swf)
        if full and weeks is None:
            workload = swf_to_batsim(swf, speed_flops=TAURUS.max_speed_flops, nb_hosts=trace.hosts,
                                     walltime_rule=SWF_WALLTIME_RULE)
            source, stem = f"PWA log {log.name}, whole", f"{trace.key}_swf_whole"
        else:
            start_s, load = busiest_window(swf, nb_hosts=trace.hosts, duration_s=length * WEEK_S)
            workload = swf_to_batsim(swf, speed_flops=TAURUS.max_speed_flops, nb_hosts=trace.hosts,
                                     start_time_s=start_s, duration_s=length * WEEK_S, walltime_rule=SWF_WALLTIME_RULE)
            source = (f"PWA log {log.name}: its busiest {length} week(s) (from trace week {start_s / WEEK_S:.0f}, "
                      f"offered load {load:.2f})")
            stem = f"{trace.key}_swf_w{start_s / WEEK_S:.0f}x{length}"
        require_jobs(workload, log, "" if full and weeks is None else f" in its busiest {length} week(s) (--weeks)")
    else:
        workload = synthetic_week(trace.hosts, seed=seed, duration_s=length * WEEK_S, target_load=0.9,
                                  speed_flops=TAURUS.max_speed_flops, users=trace.users)
        why = "" if trace.swf is None else f" ({trace.swf} not found)"
        source = (f"synthetic{why}: {length} week(s), {trace.users} Zipf users, offered load 0.90, seed {seed} "
                  "(workloads.synthetic)")
        stem = f"{trace.key}_synthetic_{length}w_s{seed}"
    path = inputs_dir / f"{stem}.json"
    _write_json(path, workload)
    top = tuple(most_active_users(workload, nb_users))
    return TraceInputs(trace, platform_file(inputs_dir, trace.hosts), str(path), source, len(workload["jobs"]), top)


def lightesp_inputs(inputs_dir: Path, mode: str, seed: int) -> tuple[str, str]:
    """(platform, workload) of Light-ESP ×4 with the users of ``mode``, written once."""
    from wattsched.workloads.lightesp import light_esp, nb_hosts

    path = inputs_dir / f"lightesp_x4_{mode}_s{seed}.json"
    _write_json(path, light_esp(copies=4, users=mode, seed=seed, speed_flops=TAURUS.max_speed_flops))
    return platform_file(inputs_dir, nb_hosts()), str(path)


# -------------------------------------------------------------------------------------------- runs
def policy_options(policy: Policy, charge: str) -> dict[str, Any]:
    """The scheduler options of ``policy`` with usage charged at ``charge`` (``end``, the default, or
    ``running``; FIFO has no usage)."""
    options = dict(policy.options)
    if policy.name != "FIFO" and charge != "end":
        options["charge"] = charge
    return options


def _suffix(charge: str) -> str:
    return "" if charge == "end" else f"_{charge}"


def lightesp_runs(inputs_dir: Path, runs_dir: Path, seeds: Sequence[int], charge: str = "end") -> list[Run]:
    runs = []
    for mode in LIGHTESP_MODES:
        for seed in seeds:
            platform, workload = lightesp_inputs(inputs_dir, mode, seed)
            for policy in POLICIES:
                key = policy.name.lower().replace("+", "-")
                runs.append(Run(name=f"lightesp/{mode}/s{seed}/{policy.name}", platform=platform, workload=workload,
                                scheduler=policy.scheduler, options=policy_options(policy, charge),
                                prefix=str(runs_dir / "lightesp" / f"{mode}_s{seed}{_suffix(charge)}" / key),
                                tags={"part": "lightesp", "mode": mode, "seed": seed, "policy": policy.name}))
    return runs


def table1_runs(inputs: Sequence[TraceInputs], inputs_dir: Path, runs_dir: Path, charge: str = "end") -> list[Run]:
    """Per trace: the FS baseline, two check runs (EFS with equal factors; FS with the top user green),
    then every top user × {green, gluttonous} × {EFS, FS+EFS}."""
    from wattsched.workloads.users import with_energy_factors

    runs = []
    for inp in inputs:
        base = json.loads(Path(inp.workload).read_text())
        folder = runs_dir / "table1" / f"{inp.label}{_suffix(charge)}"
        tags = {"part": "table1", "trace": inp.trace.key}

        def run(name: str, policy: str, workload: str, user: str, efficiency: str, prefix: str) -> Run:
            p = _BY_NAME[policy]
            return Run(name=f"table1/{inp.label}/{name}", platform=inp.platform, workload=workload,
                       scheduler=p.scheduler, options=policy_options(p, charge), prefix=str(folder / prefix),
                       tags={**tags, "policy": policy, "user": user, "efficiency": efficiency})

        runs.append(run("baseline", "FS", inp.workload, "", "baseline", "baseline_fs"))
        runs.append(run("check-efs-equal", "EFS", inp.workload, "", "check", "check_efs_equal"))
        for i, user in enumerate(inp.top_users):
            for efficiency, factor in EFFICIENCIES.items():
                variant = Path(inp.workload).with_name(f"{inp.label}_u{user}_{efficiency}.json")
                _write_json(variant, with_energy_factors(base, {user: factor}))
                if i == 0 and efficiency == "green":
                    runs.append(run("check-fs-green", "FS", str(variant), user, "check", "check_fs_green"))
                for policy in ("EFS", "FS+EFS"):
                    key = policy.lower().replace("+", "-")
                    runs.append(run(f"{policy}/{efficiency}/u{user}", policy, str(variant), user, efficiency,
                                    f"{key}_{efficiency}_u{user}"))
    return runs


# --------------------------------------------------------------------------------------- analysis
def _jobs(prefix: str) -> pd.DataFrame:
    from wattsched.analysis.outputs import load_outputs

    return load_outputs(prefix).jobs


def lightesp_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per Light-ESP run: mode, seed, policy, utilization, each user's mean stretch."""
    from wattsched.analysis.metrics import load_workload_users, per_user_mean_stretch

    rows = []
    part = frame[(frame["part"] == "lightesp") & (frame["status"] != "failed")]
    for _, run in part.iterrows():
        stretch = per_user_mean_stretch(_jobs(run["prefix"]), load_workload_users(run["workload"]))
        rows.append({"mode": run["mode"], "seed": int(run["seed"]), "policy": run["policy"],
                     "utilization": float(run["utilization"]),
                     **{f"stretch_user{u}": stretch.get(u, math.nan) for u in ("1", "2", "3")}})
    return pd.DataFrame(rows)


def table1_table(frame: pd.DataFrame, inputs: Sequence[TraceInputs]) -> tuple[pd.DataFrame, dict[str, dict[str, bool]]]:
    """Per trace, policy and efficiency, each top user's mean normalized stretch (one row per user), and
    per trace whether the check runs reproduce the baseline schedule exactly."""
    from wattsched.analysis.metrics import load_workload_users, per_user_normalized_stretch

    rows, checks = [], {}
    part = frame[(frame["part"] == "table1") & (frame["status"] != "failed")]
    for inp in inputs:
        runs = part[part["trace"] == inp.trace.key]
        base_rows = runs[runs["efficiency"] == "baseline"]
        if base_rows.empty:
            continue
        baseline = _jobs(base_rows["prefix"].iloc[0])
        users = load_workload_users(inp.workload)
        same = {}
        for _, run in runs[runs["efficiency"] == "check"].iterrows():
            jobs = _jobs(run["prefix"])
            key = "EFS, equal factors" if run["policy"] == "EFS" else f"FS, user {run['user']} green"
            same[key] = _same_schedule(jobs, baseline)
        checks[inp.trace.key] = same
        for _, run in runs[runs["efficiency"].isin(list(EFFICIENCIES))].iterrows():
            jobs, user = _jobs(run["prefix"]), str(run["user"])
            row = {"trace": inp.trace.key, "policy": run["policy"], "efficiency": run["efficiency"], "user": user}
            for column, statistic in (("normalized_stretch", "mean"), ("geometric", "geometric"),
                                      ("ratio_of_means", "ratio-of-means")):
                row[column] = per_user_normalized_stretch(jobs, baseline, users, statistic=statistic).get(user, math.nan)
            row["jobs"] = sum(1 for owner in users.values() if owner == user)
            row["moved"] = _moved(jobs, baseline, [j for j, owner in users.items() if owner == user])
            rows.append(row)
    return pd.DataFrame(rows), checks


def _moved(jobs: pd.DataFrame, baseline: pd.DataFrame, ids: Sequence[str]) -> float:
    """Share of the jobs ``ids`` whose start time differs from the baseline's."""
    start = jobs.set_index(jobs["job_id"].astype(str))["starting_time"]
    base = baseline.set_index(baseline["job_id"].astype(str))["starting_time"]
    ids = [i for i in ids if i in start.index and i in base.index]
    return float((start[ids] != base[ids]).mean()) if ids else math.nan


def _same_schedule(jobs: pd.DataFrame, baseline: pd.DataFrame) -> bool:
    cols = ["job_id", "starting_time", "allocated_resources"]
    a = jobs[cols].sort_values("job_id").reset_index(drop=True)
    b = baseline[cols].sort_values("job_id").reset_index(drop=True)
    return a.equals(b)


def table1_stats(per_user: pd.DataFrame) -> pd.DataFrame:
    """min / mean / median / std (ddof 1) / max over the users of the paper's statistic (mean of the
    per-job ratios), per trace, policy and efficiency; then our robustness columns: the median over the
    users of the geometric mean of the ratios and of the ratio of mean stretches, the share of users whose
    geometric mean is below 1, and the mean share of a user's jobs that start at another time."""
    columns = ["trace", "policy", "efficiency", *STATS, "users", "geo_median", "geo_below_1", "rom_median", "moved"]
    if per_user.empty:
        return pd.DataFrame(columns=columns)
    grouped = per_user.groupby(["trace", "policy", "efficiency"], sort=False)
    out = grouped["normalized_stretch"].agg(["min", "mean", "median", "std", "max", "count"])
    out = out.rename(columns={"count": "users"})
    out["geo_median"] = grouped["geometric"].median()
    out["geo_below_1"] = grouped["geometric"].apply(lambda v: float((v < 1).mean()))
    out["rom_median"] = grouped["ratio_of_means"].median()
    out["moved"] = grouped["moved"].mean()
    return out.reset_index()[columns]


# ----------------------------------------------------------------------------------------- checks
@dataclass(frozen=True)
class Claim:
    """A claim of the paper checked on our numbers."""

    text: str
    status: str  # holds / fails
    numbers: str

    def markdown(self) -> str:
        return f"- **{self.text}**: **{self.status}**. {self.numbers}"


def _mean_by_policy(table: pd.DataFrame, mode: str) -> pd.DataFrame:
    part = table[table["mode"] == mode]
    return part.groupby("policy", sort=False)[["utilization", "stretch_user1", "stretch_user2",
                                               "stretch_user3"]].mean().reindex([p.name for p in POLICIES])


def lightesp_claims(table: pd.DataFrame) -> list[Claim]:
    """The paper's §IV-B findings checked on the mean over seeds (and counted seed by seed)."""
    claims: list[Claim] = []
    if table.empty:
        return claims
    same = _mean_by_policy(table, "same-workload")
    users = ["stretch_user1", "stretch_user2", "stretch_user3"]
    seeds = sorted(set(table["seed"]))
    per_seed = {s: _mean_by_policy(table[table["seed"] == s], "same-workload") for s in seeds}

    def spread(row: pd.Series) -> float:
        values = row[users].astype(float)
        return float(values.max() / values.min() - 1)

    for policy in ("FIFO", "FS"):
        s = spread(same.loc[policy])
        claims.append(Claim(f"{policy}: the three users' stretches are about equal (same workload; within 20 %)",
                            "holds" if s <= 0.20 else "fails",
                            f"largest / smallest user mean stretch − 1 = {100 * s:.0f} % "
                            f"({', '.join(f'{same.loc[policy, u]:.1f}' for u in users)})."))
    for policy in ("EFS", "FS+EFS"):
        row = same.loc[policy]
        ok = row["stretch_user1"] < row["stretch_user2"] < row["stretch_user3"]
        count = sum(1 for s in seeds if per_seed[s].loc[policy, "stretch_user1"] < per_seed[s].loc[policy, "stretch_user2"]
                    < per_seed[s].loc[policy, "stretch_user3"])
        claims.append(Claim(f"{policy}: green < normal < glutton", "holds" if ok else "fails",
                            f"mean stretch {row['stretch_user1']:.1f} < {row['stretch_user2']:.1f} < "
                            f"{row['stretch_user3']:.1f}; in {count} of {len(seeds)} submission orders."))
    efs = same.loc["EFS"]
    cut = 1 - efs["stretch_user1"] / efs["stretch_user3"]
    cuts = [1 - per_seed[s].loc["EFS", "stretch_user1"] / per_seed[s].loc["EFS", "stretch_user3"] for s in seeds]
    both = same.loc["FS+EFS"]
    claims.append(Claim("EFS: the green user's stretch about 60 % lower than the glutton's (50-70 %)",
                        "holds" if 0.5 <= cut <= 0.7 else "fails",
                        f"1 − green/glutton = {100 * cut:.0f} % (seeds: "
                        + ", ".join(f"{100 * c:.0f} %" for c in cuts) + "); under FS+EFS "
                        f"{100 * (1 - both['stretch_user1'] / both['stretch_user3']):.0f} %."))
    gap = {p: same.loc[p, "stretch_user3"] - same.loc[p, "stretch_user1"] for p in ("EFS", "FS+EFS")}
    claims.append(Claim("FS+EFS: smaller differences between users than EFS", "holds" if gap["FS+EFS"] < gap["EFS"] else "fails",
                        f"glutton − green mean stretch: EFS {gap['EFS']:.1f}, FS+EFS {gap['FS+EFS']:.1f}."))
    for mode, label in (("same-workload", "same workload"), ("different-workloads", "different workloads")):
        u = _mean_by_policy(table, mode)["utilization"]
        claims.append(Claim(f"utilization about equal across the four policies ({label}; within 0.02; paper ≈ 0.89)",
                            "holds" if u.max() - u.min() <= 0.02 else "fails",
                            ", ".join(f"{p} {u[p]:.3f}" for p in u.index) + "."))
    diff = _mean_by_policy(table, "different-workloads")
    fs_like = diff.loc[["FS", "EFS", "FS+EFS"], users]
    equal = bool((fs_like.max() - fs_like.min()).abs().max() < 1e-9)
    claims.append(Claim("different workloads: FS, EFS and FS+EFS give the same result", "holds" if equal else "fails",
                        "user mean stretches " + "; ".join(
                            f"{p}: {', '.join(f'{diff.loc[p, c]:.2f}' for c in users)}" for p in ("FS", "EFS", "FS+EFS"))
                        + "."))
    pen = all(diff.loc[p, "stretch_user3"] > max(diff.loc[p, "stretch_user1"], diff.loc[p, "stretch_user2"])
              for p in ("FS", "EFS", "FS+EFS"))
    fifo = ", ".join(f"{diff.loc['FIFO', c]:.1f}" for c in users)
    claims.append(Claim("different workloads: user 3 (the largest workload) is penalized under FS, EFS, FS+EFS",
                        "holds" if pen else "fails",
                        f"user 3's mean stretch {diff.loc['FS', 'stretch_user3']:.1f} against "
                        f"{diff.loc['FS', 'stretch_user1']:.1f} and {diff.loc['FS', 'stretch_user2']:.1f} (FS); "
                        f"FIFO: {fifo}."))
    return claims


def table1_claims(stats: pd.DataFrame) -> list[Claim]:
    """Per trace: EFS lowers the green users' mean normalized stretch and raises the gluttons' (§IV-A)."""
    claims = []
    for trace in TRACES:
        part = stats[stats["trace"] == trace.key].set_index(["policy", "efficiency"])
        for policy in ("EFS", "FS+EFS"):
            if (policy, "green") not in part.index or (policy, "gluttonous") not in part.index:
                continue
            green, glutton = part.loc[(policy, "green"), "mean"], part.loc[(policy, "gluttonous"), "mean"]
            paper_g = PAPER_TABLE1[(trace.key, policy, "green")][1]
            paper_b = PAPER_TABLE1[(trace.key, policy, "gluttonous")][1]
            claims.append(Claim(f"{trace.name}, {policy}: green users' mean < 1 < gluttonous users' mean",
                                "holds" if green < 1 < glutton else "fails",
                                f"ours {green:.2f} / {glutton:.2f}; paper {paper_g:.2f} / {paper_b:.2f}."))
    return claims


# ----------------------------------------------------------------------------------------- report
def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    rule = "|" + "|".join(("---" if i < len(align) and align[i] == "l" else "---:") for i in range(len(head))) + "|"
    return ["| " + " | ".join(head) + " |", rule] + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def write_report(path: Path, *, lightesp: pd.DataFrame, per_user: pd.DataFrame, stats: pd.DataFrame,
                 checks: Mapping[str, Mapping[str, bool]], inputs: Sequence[TraceInputs], wall_s: float,
                 workers: int | None, failures: Sequence[tuple[str, str]], size_note: str, nb_runs: int,
                 simulated: int | None = None) -> Path:
    """``report.md``: setup, Light-ESP tables and claims, table I beside the paper's."""
    lines = ["# EnergyFairShare: the experiments of the EFS paper (§IV)", ""]
    simulated = nb_runs if simulated is None else simulated
    lines += [f"**Size**: {size_note}", "",
              f"**Wall time**: {wall_s:.0f} s ({wall_s / 60:.1f} min), {nb_runs} runs on "
              f"{workers or os.cpu_count()} worker processes"
              + (f" ({simulated} simulated, the others' outputs reused from an earlier call)."
                 if simulated < nb_runs else "."), ""]
    if failures:
        lines += [f"**Failed runs** ({len(failures)}), left out of every table:", ""]
        lines += [f"- `{n}`: {e}" for n, e in failures] + [""]
    if not lightesp.empty:
        seeds = sorted(set(lightesp["seed"]))
        lines += ["## Light-ESP ×4, three users (§IV-B, figures 2 and 3)", "",
                  "Light-ESP ×4 (`workloads/lightesp.py`: table II, 920 jobs) on 15 Taurus hosts, one per 12-core "
                  "node, EASY backfilling behind each order. Mean stretch (wait + run) / run of each user's jobs, "
                  f"mean over {len(seeds)} submission orders (seeds {', '.join(map(str, seeds))}); utilization over "
                  "[first submission, last end].", ""]
        for mode, title, fig in (("same-workload", "Same workload, energy factors 0.7 / 1.0 / 1.3 (figure 2)",
                                  "fig2_lightesp_same_workload.png"),
                                 ("different-workloads", "Different workloads (1/6, 2/6, 3/6 of the jobs), factor 1 "
                                  "(figure 3)", "fig3_lightesp_different_workloads.png")):
            table = _mean_by_policy(lightesp, mode)
            names = ("green (1)", "normal (2)", "glutton (3)") if mode == "same-workload" else ("user 1", "user 2", "user 3")
            lines += [f"### {title}", "", f"![{mode}]({fig})", ""]
            lines += _md_table(["policy", "utilization", *names],
                               [[p, f"{table.loc[p, 'utilization']:.3f}",
                                 *(f"{table.loc[p, c]:.2f}" for c in ("stretch_user1", "stretch_user2", "stretch_user3"))]
                                for p in table.index], "l")
            lines += ["Per submission order:", ""]
            part = lightesp[lightesp["mode"] == mode].sort_values(["seed", "policy"])
            lines += _md_table(["seed", "policy", "utilization", *names],
                               [[str(r.seed), r.policy, f"{r.utilization:.3f}", f"{r.stretch_user1:.2f}",
                                 f"{r.stretch_user2:.2f}", f"{r.stretch_user3:.2f}"] for r in part.itertuples()], "ll")
        lines += ["### The paper's findings on our runs", ""]
        lines += [c.markdown() for c in lightesp_claims(lightesp)] + [""]
    if inputs:
        lines += ["## Table I: one user greener or more gluttonous (§IV-A)", "",
                  "For each of the 20 users who submit the most jobs, in turn, her jobs' energy factor is 0.7 "
                  "(green) or 1.3 (gluttonous); each of her jobs' stretch is divided by its stretch in the "
                  "baseline (FairShare, every factor 1) and averaged over her jobs; statistics over the 20 "
                  "users (std: sample, ddof 1). Ours, then the paper's.", ""]
        lines += _md_table(["trace", "hosts", "workload", "jobs"],
                           [[i.trace.name, f"{i.trace.hosts:,}", i.source, f"{i.nb_jobs:,}"] for i in inputs], "l")
        for trace_key, same in checks.items():
            name = next(t.name for t in TRACES if t.key == trace_key)
            lines += [f"- {name}: " + "; ".join(f"{k}: schedule {'identical to' if v else 'DIFFERENT from'} the "
                                                 "baseline" for k, v in same.items()) + "."]
        lines += [""]
        rows = []
        for trace in TRACES:
            if trace.key not in set(stats.get("trace", [])):
                continue
            rows.append([trace.name, "FS", "both", *(["1.00"] * 3), "0.00", "1.00",
                         *(f"{v:.2f}" for v in PAPER_TABLE1[(trace.key, "FS", "both")])])
            for policy in ("EFS", "FS+EFS"):
                for eff in ("green", "gluttonous"):
                    sel = stats[(stats["trace"] == trace.key) & (stats["policy"] == policy) & (stats["efficiency"] == eff)]
                    ours = [f"{sel[s].iloc[0]:.2f}" if len(sel) else "" for s in STATS]
                    rows.append([trace.name, policy.lower(), eff, *ours,
                                 *(f"{v:.2f}" for v in PAPER_TABLE1[(trace.key, policy, eff)])])
        head = ["trace", "config", "efficiency", *("min", "mean", "med", "std", "max"),
                *(f"paper {s}" for s in ("min", "mean", "med", "std", "max"))]
        lines += _md_table(head, rows, "lll")
        lines += ["FS rows are 1 by construction: FS does not read energy factors (the check run above shows the "
                  "schedule unchanged).", "",
                  "### How robust is the mean of ratios (our addition)", "",
                  "The paper's statistic averages each job's stretch ratio: a job of stretch 1 that waits can only get "
                  "worse, and one short job delayed by hours weighs more than hundreds of unchanged ones. Over the "
                  "same users: the median of each user's geometric mean of the ratios, the share of users whose "
                  "geometric mean is below 1, the median of each user's mean stretch over her baseline mean "
                  "stretch, and the mean share of a user's jobs that start at another time than in the baseline.", ""]
        robust = []
        for trace in TRACES:
            for policy in ("EFS", "FS+EFS"):
                for eff in ("green", "gluttonous"):
                    sel = stats[(stats.get("trace") == trace.key) & (stats["policy"] == policy)
                                & (stats["efficiency"] == eff)] if not stats.empty else stats
                    if len(sel):
                        r = sel.iloc[0]
                        robust.append([trace.name, policy.lower(), eff, f"{r['mean']:.2f}", f"{r['geo_median']:.3f}",
                                       f"{100 * r['geo_below_1']:.0f} %", f"{r['rom_median']:.3f}",
                                       f"{100 * r['moved']:.0f} %"])
        lines += _md_table(["trace", "config", "efficiency", "mean of ratios (paper's)", "median geometric mean",
                            "users below 1", "median ratio of means", "jobs moved"], robust, "lll")
        lines += ["### The paper's findings on our runs", ""]
        lines += [c.markdown() for c in table1_claims(stats)] + [""]
        if not per_user.empty:
            lines += ["### Each user's mean normalized stretch", ""]
            pivot = per_user.pivot_table(index=["trace", "user"], columns=["policy", "efficiency"],
                                         values="normalized_stretch", sort=False)
            cols = [c for c in (("EFS", "green"), ("EFS", "gluttonous"), ("FS+EFS", "green"), ("FS+EFS", "gluttonous"))
                    if c in pivot.columns]
            lines += _md_table(["trace", "user", *(f"{p} {e}" for p, e in cols)],
                               [[str(t), str(u), *(f"{pivot.loc[(t, u), c]:.2f}" for c in cols)] for t, u in pivot.index],
                               "ll")
    path.parent.mkdir(parents=True, exist_ok=True)
    emit_text("\n".join(lines), path)
    return path


def plot_lightesp(table: pd.DataFrame, out: Path) -> list[Path]:
    """Figures 2 and 3 shaped: per policy, each user's mean stretch normalized by the largest bar."""
    from matplotlib.figure import Figure

    from wattsched.analysis.plots import save_figure

    paths = []
    for mode, stem, labels in (("same-workload", "fig2_lightesp_same_workload", ("green (0.7)", "normal (1.0)", "glutton (1.3)")),
                               ("different-workloads", "fig3_lightesp_different_workloads", ("user 1 (1/6)", "user 2 (2/6)", "user 3 (3/6)"))):
        if mode not in set(table.get("mode", [])):
            continue
        means = _mean_by_policy(table, mode)
        values = means[["stretch_user1", "stretch_user2", "stretch_user3"]].to_numpy(dtype=float)
        top = np.nanmax(values)
        fig = Figure(figsize=(6.5, 3.6))
        ax = fig.add_subplot()
        x = np.arange(len(means.index))
        for i, (label, colour) in enumerate(zip(labels, ("tab:green", "tab:blue", "tab:red"))):
            ax.bar(x + (i - 1) * 0.27, values[:, i] / top, 0.27, label=label, color=colour)
        ax.set_xticks(x, [f"{p}\nutil. {means.loc[p, 'utilization']:.2f}" for p in means.index])
        ax.set_ylabel("mean stretch / largest")
        ax.set_title(f"Light-ESP ×4, {mode.replace('-', ' ')}")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        paths.append(save_figure(fig, out / f"{stem}.png", dpi=90))
    return paths


# ------------------------------------------------------------------------------------ experiment
@dataclass
class ExperimentResult:
    """What :func:`run_experiment` produced."""

    frame: pd.DataFrame
    lightesp: pd.DataFrame
    stats: pd.DataFrame
    inputs: list[TraceInputs]
    wall_s: float
    report: Path


def run_experiment(out: str | Path, *, parts: Sequence[str] = ("lightesp", "table1"), traces: Sequence[str] | None = None,
                   full: bool = False, weeks: int | None = None, pwa: str | os.PathLike | None = None,
                   nb_users: int = 20, seeds: int = 5, seed: int = 1, workers: int | None = None,
                   force: bool = False, show_progress: bool | None = None, charge: str = "end",
                   note: Callable[[str], None] | None = None) -> ExperimentResult:
    """Prepare the inputs, run every simulation (a resumable sweep), write the tables, figures and report.

    Args:
        out: output folder.
        parts: ``lightesp`` (experiments 1 and 2) and/or ``table1``.
        traces: subset of ``sdsc``, ``pik``, ``curie`` (default all).
        full: replay whole logs (synthetic traces: ``Trace.full_weeks``).
        weeks: weeks of every trace, overriding the reduced/full lengths.
        pwa: the Parallel Workloads Archive folder (:func:`find_pwa`).
        nb_users: users made green / gluttonous in turn (the paper: 20).
        seeds: Light-ESP submission orders (seeds 1..seeds).
        seed: seed of the synthetic traces.
        charge: when FS, EFS and FS+EFS charge usage: ``end`` (the paper's) or ``running`` (a sensitivity
            study; its runs go to folders suffixed ``_running``).
        note: called with one line per step (inputs ready, runs starting) for long runs.

    Raises:
        OptionError: an unknown part or trace, or a missing ``pwa`` folder.
    """
    t0 = time.perf_counter()
    unknown = set(parts) - {"lightesp", "table1"}
    if unknown:
        raise OptionError(f"--parts: unknown part(s) {', '.join(sorted(unknown))}; parts: lightesp, table1")
    keys = {t.key for t in TRACES}
    chosen = [t for t in TRACES if traces is None or t.key in traces]
    if traces is not None and set(traces) - keys:
        raise OptionError(f"--traces: unknown trace(s) {', '.join(sorted(set(traces) - keys))}; traces: "
                          f"{', '.join(sorted(keys))}")
    if weeks is not None and weeks < 1:
        raise OptionError(f"--weeks must be at least 1, got {weeks}")
    # before any input is written: --weeks 1e9 wrote the Light-ESP and SWF inputs, then stopped on the synthetic
    # trace's "duration_s"; --seeds 1e9 wrote Light-ESP workloads without end
    if weeks is not None:
        check_count(weeks * 7, "days", "--weeks", "", f"days ({weeks} weeks)", option_error)
    if "lightesp" in parts:
        check_count(seeds, "runs", "--seeds", "", "submission orders (each its runs)", option_error)
    if charge not in ("end", "running"):
        raise OptionError(f"--charge must be end or running, got {charge!r}")
    out = Path(out)
    inputs_dir, runs_dir = out / "inputs", out / "runs"
    pwa_dir = find_pwa(pwa)
    runs: list[Run] = []
    if "lightesp" in parts:
        runs += lightesp_runs(inputs_dir, runs_dir, range(1, seeds + 1), charge)
    inputs: list[TraceInputs] = []
    say = note or (lambda line: None)
    if "table1" in parts:
        for t in chosen:
            inputs.append(trace_inputs(t, inputs_dir, pwa=pwa_dir, full=full, weeks=weeks, nb_users=nb_users,
                                       seed=seed))
            say(f"table I inputs: {t.name}, {inputs[-1].nb_jobs:,} jobs ({inputs[-1].source})")
        runs += table1_runs(inputs, inputs_dir, runs_dir, charge)
    say(f"{len(runs)} runs on {workers or os.cpu_count()} processes (done runs are skipped)")
    frame = run_sweep(runs, workers=workers, force=force, show_progress=show_progress)
    write_table(frame, out / "runs.csv")
    lightesp = lightesp_table(frame) if "lightesp" in parts else pd.DataFrame()
    per_user, checks = table1_table(frame, inputs) if inputs else (pd.DataFrame(), {})
    stats = table1_stats(per_user)
    if not lightesp.empty:
        write_table(lightesp, out / "lightesp.csv")
        plot_lightesp(lightesp, out)
    if not per_user.empty:
        write_table(per_user, out / "table1_users.csv")
        write_table(stats, out / "table1.csv")
    wall = time.perf_counter() - t0
    how = ("full: whole logs" if full else "reduced: each trace cut to its busiest weeks") if weeks is None else \
        f"{weeks} week(s) per trace"
    notes = [f"{how} ({', '.join(f'{i.trace.name} {i.nb_jobs:,} jobs' for i in inputs)})." if inputs else "",
             f"Light-ESP ×4 with {seeds} submission orders." if "lightesp" in parts else "",
             "Usage charged when a job ends (the paper's accounting)." if charge == "end" else
             "Usage charged while jobs run (option charge: running), not at their end as in the paper."]
    size_note = " ".join(n for n in notes if n)
    report = write_report(out / "report.md", lightesp=lightesp, per_user=per_user, stats=stats, checks=checks,
                          inputs=inputs, wall_s=wall, workers=workers, failures=failed_runs(frame),
                          size_note=size_note, nb_runs=len(runs),
                          simulated=int((frame["status"] == "done").sum()) if "status" in frame else len(runs))
    return ExperimentResult(frame, lightesp, stats, inputs, wall, report)
