"""Shared helpers of the benchmarks: seeded synthetic weeks written once to a cache folder."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from wattsched.platforms.generate import taurus_platform_xml
from wattsched.workloads.synthetic import DEFAULT_MODEL, synthetic_week

CACHE = Path(os.environ.get("WATTSCHED_BENCH_CACHE", Path(__file__).resolve().parent / ".cache"))
#: Short jobs (10 s .. 1 h) so that a week holds about 20,000 jobs at 1,152 hosts, like the
#: SDSC-Blue weeks the energy-budget paper replays.
BENCH_MODEL = dataclasses.replace(DEFAULT_MODEL, runtime_range_s=(10.0, 3600.0))


def bench_inputs(nb_hosts: int, max_jobs: int, seed: int = 1) -> tuple[Path, Path]:
    """(platform.xml, workload.json) for a synthetic week on ``nb_hosts`` Taurus hosts."""
    CACHE.mkdir(parents=True, exist_ok=True)
    platform = CACHE / f"taurus_{nb_hosts}.xml"
    if not platform.exists():
        platform.write_text(taurus_platform_xml(nb_hosts))
    workload = CACHE / f"week_{nb_hosts}_{max_jobs}_s{seed}.json"
    if not workload.exists():
        w = synthetic_week(nb_hosts, seed=seed, model=BENCH_MODEL)
        jobs = w["jobs"][:max_jobs]
        used = {j["profile"] for j in jobs}
        w["jobs"] = jobs
        w["profiles"] = {k: v for k, v in w["profiles"].items() if k in used}
        w.pop("meta", None)
        workload.write_text(json.dumps(w))
    return platform, workload
