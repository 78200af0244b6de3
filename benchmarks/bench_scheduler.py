"""Scheduler benchmark: cost per decision as the queue grows, ours vs pybatsim's shipped EASY (issue 3).

Same inputs for both, one run: a 1,152-host Taurus machine filled at t=0 by 1,152 one-host jobs whose
ends are one second apart (from t=100), and ``N`` waiting jobs taken from the seeded synthetic week of
``bench_simulator.py`` (their sizes and walltimes), all submitted at t=1. From t=100 on, every Batsim
message is one job completion, and each scheduler takes one decision with about ``N`` waiting jobs;
the benchmark times ``K`` such decisions (the whole handling of the message, in-process, on the embedded
simulator: ours through its Batsim-protocol translator, pybatsim's through pybatsim's own ``Batsim`` class
fed in memory, ``wattsched.schedulers.adapter.pybatsim_handler``).

pybatsim's ``backfill-easy`` schedules on every event, so its handling of the ``N`` submissions costs
O(N²) and is not what is measured: its ``_schedule_jobs`` is switched off while the t=1 message is
handled (the jobs are queued, nothing could start anyway), and on again for the measured decisions.

Usage: ``python benchmarks/bench_scheduler.py [--sizes 100,1000,10000] [--decisions 50]``
"""

from __future__ import annotations

import argparse
import json
import platform as _platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

NB_HOSTS = 1152


def bench_workload(n_waiting: int) -> Path:
    from _common import CACHE, bench_inputs

    path = CACHE / f"queue_{n_waiting}.json"
    if path.exists():
        return path
    _, week_path = bench_inputs(NB_HOSTS, 20000)
    week = json.loads(week_path.read_text())
    profiles = dict(week["profiles"])
    jobs = []
    for i in range(NB_HOSTS):
        name = f"fill{i}"
        profiles[name] = {"type": "delay", "delay": 100 + i}
        jobs.append({"id": f"fill{i}", "subtime": 0, "res": 1, "profile": name, "walltime": 100 + i})
    for k, j in enumerate(week["jobs"][:n_waiting]):
        jobs.append({"id": f"q{k}", "subtime": 1, "res": j["res"], "profile": j["profile"], "walltime": j["walltime"]})
    path.write_text(json.dumps({"nb_res": NB_HOSTS, "jobs": jobs, "profiles": profiles}))
    return path


def time_decisions(scheduler_name: str, n_waiting: int, decisions: int) -> list[float]:
    """Seconds of each of ``decisions`` measured decisions."""
    from _common import bench_inputs

    from wattsched.schedulers.adapter import (
        PRESET_CLASSES,
        load_scheduler,
        pybatsim_handler,
    )
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    platform_path, _ = bench_inputs(NB_HOSTS, 20000)
    sim = Simulation(load_platform(platform_path), load_workload(bench_workload(n_waiting)))
    scheduler = None
    if scheduler_name in PRESET_CLASSES:
        handler = scheduler_handler(scheduler_name, {})
    else:
        scheduler = load_scheduler(scheduler_name, {})
        handler = pybatsim_handler(scheduler)
    pybatsim_easy = hasattr(scheduler, "_schedule_jobs")
    times: list[float] = []
    msg = sim.start()
    while msg is not None and len(times) < decisions:
        submitting = any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"].startswith("w0!q") for e in msg["events"])
        if pybatsim_easy and submitting:
            scheduler._schedule_jobs = lambda current_time: None  # type: ignore[union-attr]
        t0 = time.perf_counter()
        reply = handler(msg)
        dt = time.perf_counter() - t0
        if pybatsim_easy and submitting:
            del scheduler._schedule_jobs  # type: ignore[union-attr]
        if msg["now"] >= 100 and [e["type"] for e in msg["events"]] == ["JOB_COMPLETED"]:
            times.append(dt)
        msg = sim.step(reply)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--decisions", type=int, default=50)
    args = parser.parse_args(argv)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        ours = time_decisions("easy-backfill", n, args.decisions)
        theirs = time_decisions("backfill-easy", n, args.decisions)
        m_ours, m_theirs = statistics.median(ours), statistics.median(theirs)
        rows.append((n, len(ours), m_ours, statistics.mean(ours), m_theirs, statistics.mean(theirs), m_theirs / m_ours))
        print(f"{n} waiting jobs: ours {m_ours * 1e3:.3f} ms, pybatsim {m_theirs * 1e3:.3f} ms", file=sys.stderr)
    lines = [
        f"Machine: {_platform.machine()}, Python {_platform.python_version()}; {NB_HOSTS} hosts; "
        "median and mean over the measured decisions (one job completion each).",
        "",
        "| waiting jobs | decisions | wattsched easy-backfill median ms | mean ms | pybatsim backfill-easy median ms "
        "| mean ms | pybatsim / wattsched |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, k, mo, ao, mt, at, ratio in rows:
        lines.append(f"| {n:,} | {k} | {mo * 1e3:.3f} | {ao * 1e3:.3f} | {mt * 1e3:.3f} | {at * 1e3:.3f} | {ratio:.1f}× |")
    table = "\n".join(lines)
    print(table)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "scheduler.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
