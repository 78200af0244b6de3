"""What UPAS costs over EASY: the 20,000-job week of 1,152 hosts (``_common.py``) with a β per job, on the UPAS
processors' platform, in-process.

    .venv/bin/python benchmarks/bench_upas.py [--repeat 3] [--output benchmarks/results/upas.md]

Every scheduler runs on the same inputs (β workload, ``wattsched beta``; platform ``wattsched platform --node
upas``), dynamic jobs on for all (UPAS re-registers slowed jobs). Reported: the run of least CPU time of ``--repeat``
(the machine is shared: CPU time varies less than wall time), its wall and CPU times of the whole simulation, the
time spent in the scheduler, and the number of Batsim messages and jobs re-registered.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CACHE, bench_inputs  # noqa: E402

from wattsched.base.batsim_files import original_job_id  # noqa: E402
from wattsched.platforms.generate import upas_platform_xml  # noqa: E402
from wattsched.schedulers.protocol import scheduler_handler  # noqa: E402
from wattsched.simulator.drivers import run_inprocess  # noqa: E402
from wattsched.simulator.engine import Simulation  # noqa: E402
from wattsched.simulator.platform import load_platform  # noqa: E402
from wattsched.simulator.workload import load_workload  # noqa: E402
from wattsched.workloads.upas import beta_workload  # noqa: E402

HOSTS, JOBS = 1152, 20000
CASES = [
    ("easy-backfill", {}),
    ("upas", {"u_upper": 0.0, "u_lower": 0.0}),  # never scales: EASY's schedule, the piece's own cost
    ("upas", {}),
    ("upas", {"wq_threshold": None}),
    ("upas", {"wq_threshold": None, "beta_at_start": "worst-case"}),
    ("compose", {"power": "shutdown"}),  # EASY with shutdown
    ("compose", {"frequency": "upas", "power": "shutdown", "wq_threshold": None}),
]


def inputs() -> tuple[Path, Path]:
    _, taurus_week = bench_inputs(HOSTS, JOBS)
    platform_path = CACHE / f"upas_{HOSTS}.xml"
    if not platform_path.exists():
        platform_path.write_text(upas_platform_xml(HOSTS))
    workload_path = CACHE / f"week_{HOSTS}_{JOBS}_s1_beta.json"
    if not workload_path.exists():
        week = json.loads(taurus_week.read_text())
        workload_path.write_text(json.dumps(beta_workload(week, seed=1, base_speed_flops=100e6)))
    return platform_path, workload_path


def measure(platform_path: Path, workload_path: Path, scheduler: str, options: dict) -> dict:
    handler = scheduler_handler(scheduler, options)
    sim = Simulation(load_platform(platform_path), load_workload(workload_path), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    t0, c0 = time.perf_counter(), time.process_time()
    stats = run_inprocess(sim, handler)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    resized = sum(1 for rj in sim.iter_jobs() if original_job_id(rj.job.id) != rj.job.id)
    return {"wall_s": wall, "cpu_s": cpu, "scheduler_s": stats.scheduling_time_s, "messages": stats.messages,
            "resized": resized, "jobs": len({rj.job.id for rj in sim.iter_jobs()}) - resized}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    platform_path, workload_path = inputs()
    lines = [f"Machine: {platform.machine()}, Python {platform.python_version()}; {JOBS} jobs, {HOSTS} hosts "
             f"(benchmarks/_common.py week with a β per job); run of least CPU time of {args.repeat}.", "",
             "| scheduler | options | wall s | CPU s | scheduler s | messages | jobs slowed (re-registered) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for scheduler, options in CASES:
        runs = [measure(platform_path, workload_path, scheduler, options) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["cpu_s"])
        line = (f"| {scheduler} | `{json.dumps(options)}` | {best['wall_s']:.2f} | {best['cpu_s']:.2f} | "
                f"{best['scheduler_s']:.2f} | "
                f"{best['messages']} | {best['resized']} |")
        print(line, flush=True)
        lines.append(line)
    if args.output:
        args.output.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
