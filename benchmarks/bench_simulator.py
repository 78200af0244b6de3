"""Simulator benchmark: events per second and peak memory on synthetic weeks (issue 2).

Each configuration runs in a child process (clean peak memory): a seeded synthetic week of
``--jobs`` jobs (short jobs, see ``_common.BENCH_MODEL``) on a Taurus platform of 1,152, 10,000 and
80,640 hosts, scheduled by a trivial FCFS (our ``fcfs`` preset) in-process and over ZeroMQ (the
scheduler in another process: ours as ``wattsched serve`` runs it, pybatsim's through pybatsim's own
launcher), plus EASY (ours and pybatsim's shipped ``backfill-easy``, in-process and over ZeroMQ) at 1,152
hosts, the configuration real Batsim needs ~45 s for, and our EASY at the largest size. Over ZeroMQ,
"scheduler process CPU s" is the scheduler process's own CPU time (its share of "scheduler s", which also
counts the round trips).

Usage: ``python benchmarks/bench_simulator.py [--jobs 20000] [--sizes 1152,10000,80640] [--quick]``
Writes a markdown table to stdout and to ``benchmarks/results/simulator.md``.
"""

from __future__ import annotations

import argparse
import json
import platform as _platform
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def run_one(nb_hosts: int, jobs: int, scheduler: str, backend: str) -> dict:
    """One configuration, in this process; returns its figures."""
    from _common import bench_inputs
    from wattsched.simulator.drivers import run_inprocess, run_zmq
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    platform_path, workload_path = bench_inputs(nb_hosts, jobs)
    t0 = time.perf_counter()
    sim = Simulation(load_platform(platform_path), load_workload(workload_path))
    load_s = time.perf_counter() - t0
    child = None
    if backend == "inprocess":
        from wattsched.schedulers.protocol import scheduler_handler

        stats = run_inprocess(sim, scheduler_handler(scheduler, {}))
    else:
        from wattsched.schedulers.presets import PRESETS

        endpoint = _endpoint()
        bin_dir = Path(sys.executable).parent
        if scheduler in PRESETS:  # ours as a user runs it for real Batsim: `wattsched serve`
            cmd = [str(bin_dir / "wattsched"), "serve", "-s", scheduler, "--bind", endpoint]
        else:  # pybatsim's own schedulers through pybatsim's launcher
            cmd = [str(bin_dir / "pybatsim"), "-t", "-1", "-s", endpoint, scheduler]
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stats = run_zmq(sim, endpoint, timeout_s=600)
        child.wait(timeout=60)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_mib = children.ru_maxrss / 1024 if child else 0.0
    child_cpu_s = children.ru_utime + children.ru_stime if child else 0.0  # the scheduler process's own time
    wall = stats.simulation_time_s
    return {
        "hosts": nb_hosts, "jobs": len(sim.jobs_rows), "scheduler": scheduler, "backend": backend,
        "load_s": load_s, "run_s": wall, "scheduler_s": stats.scheduling_time_s,
        "simulator_s": wall - stats.scheduling_time_s, "events": stats.events, "messages": stats.messages,
        "events_per_s": stats.events / wall, "sim_events_per_s": stats.events / max(wall - stats.scheduling_time_s, 1e-9),
        "jobs_per_s": len(sim.jobs_rows) / wall, "peak_mib": peak_mib, "scheduler_peak_mib": child_mib,
        "scheduler_cpu_s": child_cpu_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--sizes", default="1152,10000,80640")
    parser.add_argument("--quick", action="store_true", help="2,000 jobs, in-process FCFS only (smoke test)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(*json.loads(args.one))))
        return 0
    jobs = 2000 if args.quick else args.jobs
    sizes = [int(s) for s in args.sizes.split(",")]
    configs = [(n, jobs, "fcfs", "inprocess") for n in sizes]
    if not args.quick:
        configs += [(n, jobs, "fcfs", "zmq") for n in sizes]
        configs += [(sizes[0], jobs, "easy-backfill", "inprocess"), (sizes[0], jobs, "backfill-easy", "inprocess"),
                    (sizes[0], jobs, "easy-backfill", "zmq"), (sizes[0], jobs, "backfill-easy", "zmq"),
                    (sizes[-1], jobs, "easy-backfill", "inprocess")]
    rows = []
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("benchmark", total=len(configs))
        for cfg in configs:
            bar.update(task, description=f"{cfg[2]} {cfg[3]} on {cfg[0]} hosts")
            out = subprocess.run([sys.executable, __file__, "--one", json.dumps(cfg)], capture_output=True,
                                 text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            bar.advance(task)
    lines = [
        f"Machine: {_platform.processor() or _platform.machine()}, Python {_platform.python_version()}; "
        f"{jobs} jobs per run (seeded synthetic week, `benchmarks/_common.py`).",
        "",
        "| hosts | scheduler | back end | jobs | events | wall s | simulator s | scheduler s | events/s (total) "
        "| events/s (simulator) | jobs/s | peak MiB (sim) | peak MiB (sched) | scheduler process CPU s |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['hosts']:,} | {r['scheduler']} | {r['backend']} | {r['jobs']:,} | {r['events']:,} | {r['run_s']:.2f} "
            f"| {r['simulator_s']:.2f} | {r['scheduler_s']:.2f} | {r['events_per_s']:,.0f} | {r['sim_events_per_s']:,.0f} "
            f"| {r['jobs_per_s']:,.0f} | {r['peak_mib']:.0f} | {r['scheduler_peak_mib']:.0f} "
            f"| {r['scheduler_cpu_s']:.2f} |"
        )
    table = "\n".join(lines)
    print(table)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / ("simulator-quick.md" if args.quick else "simulator.md")).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
