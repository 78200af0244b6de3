"""The EAMC paper's metrics (§5) of a run whose jobs carry EAR metadata.

The EAMC placement (:mod:`wattsched.schedulers.eamc`) attaches to every job it starts the metadata
``app=8 partition=p2 ghz=1.2 node_w=258.45… favoured=p2`` (SET_JOB_METADATA, the ``metadata`` column of
``_jobs.csv``, real Batsim's as ours): the application, the partition and frequency it runs at, the EAR
model's power per node there (eq. 1) and the partition the EPM favours for it (eq. 5). From ``_jobs.csv``
alone (replacements merged, :func:`~wattsched.analysis.outputs.merge_replacements`), over the jobs that ran:

* ``makespan_since_first_submission_s``: last end − first submission (the paper's makespan);
* ``mean_response_time_s``: mean of end − submission ("response time"); per partition too;
* ``sum_runtimes_s``: Σ run times ("sum of apps runtime");
* ``jobs_energy_j``: Σ node_w × nodes × run time, the model's energy E(app, p, f) × nodes of each job (its
  run time is the model's T), idle nodes excluded ("sum of the jobs' consumed energy"); per partition too;
* ``mean_frequency_ghz``: mean of the jobs' frequencies ("avg frequency"), overall and per partition;
* ``favoured_partition_share``: share of the jobs run in their favoured partition ("percentage of apps in the
  optimal partition"); ``favoured_share_<p>``: the same among the jobs that favour partition p (figure 5
  shows p2's and the mean of both); ``jobs_share_<p>``: share of the jobs run in each partition.

Jobs without EAR metadata count in the time metrics only. Batsim's own ``consumed_energy`` column (the
platform's per-pstate wattage, idle or full, not the application's power) is not used.
"""

from __future__ import annotations

import math
import pandas as pd

from wattsched.analysis.metrics import jobs_that_ran

__all__ = ["METADATA_KEYS", "ear_metrics", "has_ear_metadata", "improvement_percent", "parse_metadata"]

#: The keys of an EAMC job's metadata.
METADATA_KEYS = ("app", "partition", "ghz", "node_w", "favoured")


def parse_metadata(text: str) -> dict[str, str]:
    """``"app=8 partition=p2 …"`` → ``{"app": "8", "partition": "p2", …}`` (empty for other metadata)."""
    out: dict[str, str] = {}
    for item in str(text).split():
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out if all(k in out for k in METADATA_KEYS) else {}


def has_ear_metadata(jobs: pd.DataFrame) -> bool:
    """Whether some job of ``jobs`` carries EAMC metadata."""
    return "metadata" in jobs.columns and bool(jobs["metadata"].astype(str).str.contains("node_w=").any())


def ear_metrics(jobs: pd.DataFrame) -> dict[str, float]:
    """The metrics of the module docstring (NaN where undefined), from a merged ``_jobs.csv`` frame."""
    ran = jobs_that_ran(jobs)
    out: dict[str, float] = {}
    if ran.empty:
        return {"makespan_since_first_submission_s": math.nan, "mean_response_time_s": math.nan,
                "sum_runtimes_s": math.nan, "jobs_energy_j": math.nan, "mean_frequency_ghz": math.nan,
                "favoured_partition_share": math.nan}
    end = ran["starting_time"] + ran["execution_time"]
    response = end - ran["submission_time"]
    out["makespan_since_first_submission_s"] = float(end.max() - jobs["submission_time"].min())
    out["mean_response_time_s"] = float(response.mean())
    out["sum_runtimes_s"] = float(ran["execution_time"].sum())
    meta = [parse_metadata(t) for t in ran.get("metadata", pd.Series([""] * len(ran), index=ran.index))]
    known = pd.Series([bool(m) for m in meta], index=ran.index)
    if not known.any():
        return out
    rows = ran[known]
    table = pd.DataFrame([m for m in meta if m], index=rows.index)
    node_w = table["node_w"].astype(float)
    ghz = table["ghz"].astype(float)
    energy = node_w * rows["requested_number_of_resources"] * rows["execution_time"]
    out["jobs_energy_j"] = float(energy.sum())
    out["mean_frequency_ghz"] = float(ghz.mean())
    out["favoured_partition_share"] = float((table["partition"] == table["favoured"]).mean())
    for partition in sorted(table["favoured"].unique()):
        mask = table["favoured"] == partition
        out[f"favoured_share_{partition}"] = float((table["partition"][mask] == partition).mean())
    for partition in sorted(table["partition"].unique()):
        mask = table["partition"] == partition
        out[f"jobs_share_{partition}"] = float(mask.mean())
        out[f"mean_frequency_ghz_{partition}"] = float(ghz[mask].mean())
        out[f"mean_response_time_s_{partition}"] = float(response[known][mask].mean())
        out[f"jobs_energy_j_{partition}"] = float(energy[mask].sum())
    return out


def improvement_percent(value: float, baseline: float, lower_is_better: bool = True) -> float:
    """The paper's "improvement in percentage" of ``value`` over ``baseline``: (baseline − value) / baseline
    × 100 for metrics where lower is better (time, energy), the opposite otherwise."""
    if not (math.isfinite(value) and math.isfinite(baseline)) or baseline == 0:
        return math.nan
    sign = 1.0 if lower_is_better else -1.0
    return sign * (baseline - value) / abs(baseline) * 100.0

