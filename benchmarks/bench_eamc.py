"""EAMC benchmark: the cost of the EAMC presets against EASY backfilling on the same workload (issue 13).

The workload is the EAMC reproduction's (``wattsched eamc-workload``: mix 33 %, seed 1) on the p1/p2 platform
(``wattsched platform --node eamc``), at the reproduction's reduced size (256 + 256 nodes, 2,500 jobs) and at
the paper's (512 + 512, 5,000). ``easy-backfill`` runs every job for its workload time on the first free
hosts (no partitions, no dynamic jobs); the EAMC presets place each job inside one partition, choose its
frequency and re-register it with the EAR model's time (dynamic jobs: one more REGISTER_PROFILE,
REGISTER_JOB, SET_JOB_METADATA and usually SET_RESOURCE_STATE per job). Each configuration runs in a child
process, in-process back end; "CPU s" is the child's process time (less sensitive than wall time to the other
work on a shared machine), "scheduler s" the wall time spent in the scheduler.

Usage: ``python benchmarks/bench_eamc.py [--sizes 256,512] [--presets easy-backfill,eamc-priority-inc,...]``
Writes a markdown table to stdout and to ``benchmarks/results/eamc.md``.
"""

from __future__ import annotations

import argparse
import json
import platform as _platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PRESETS = ("easy-backfill", "eamc-base", "min-runtime", "min-energy", "eamc-reorder", "eamc-priority-inc",
           "eamc-priority-inc-v")


def inputs(hosts: int, folder: Path) -> tuple[Path, Path]:
    """The p1/p2 platform of ``hosts`` nodes per partition and the W33 seed-1 workload scaled as the
    reproduction scales it (``hosts / 512`` of the paper's 5,000 jobs)."""
    from wattsched.platforms.generate import eamc_platform_xml
    from wattsched.workloads.eamc import eamc_workload

    platform = folder / f"eamc_{hosts}.xml"
    workload = folder / f"w33_{hosts}.json"
    if not platform.exists():
        platform.write_text(eamc_platform_xml((hosts, hosts)))
    if not workload.exists():
        jobs = round(5000 * hosts / 512)
        workload.write_text(json.dumps(eamc_workload(seed=1, mix="33", nb_jobs=jobs, max_res=hosts)))
    return platform, workload


def run_one(hosts: int, preset: str, folder: str) -> dict:
    """One configuration, in this process; returns its figures."""
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    platform, workload = inputs(hosts, Path(folder))
    handler = scheduler_handler(preset, {})
    dynamic = bool(getattr(getattr(handler, "policy", None), "needs_dynamic_jobs", False))
    sim = Simulation(load_platform(platform), load_workload(workload), dynamic_jobs=dynamic,
                     acknowledge_dynamic_jobs=dynamic)
    cpu0 = time.process_time()
    stats = run_inprocess(sim, handler)
    cpu_s = time.process_time() - cpu0
    jobs = len(json.loads(workload.read_text())["jobs"])
    return {"hosts": hosts, "preset": preset, "jobs": jobs, "dynamic": dynamic, "run_s": stats.simulation_time_s,
            "cpu_s": cpu_s, "scheduler_s": stats.scheduling_time_s,
            "simulator_s": stats.simulation_time_s - stats.scheduling_time_s, "messages": stats.messages,
            "events": stats.events}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="256,512", help="nodes per partition (default 256,512)")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: comma-separated integers, got '{args.sizes}'")
    if min(sizes) < 19:  # the paper's mean job size (18.29 nodes) must fit in a partition
        parser.error(f"--sizes: at least 19 nodes per partition (the EAMC workload's mean job is 18.29 nodes), got "
                     f"{min(sizes)}")
    if args.one:
        print(json.dumps(run_one(*json.loads(args.one))))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-eamc-") as folder:
        for hosts in sizes:
            inputs(hosts, Path(folder))
            for preset in args.presets.split(","):
                out = subprocess.run([sys.executable, __file__, "--one", json.dumps([hosts, preset, folder])],
                                     capture_output=True, text=True, check=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"{hosts} {preset}: {rows[-1]['cpu_s']:.2f} s CPU", file=sys.stderr)
    lines = [f"Machine: {_platform.processor() or _platform.machine()}, Python {_platform.python_version()}; "
             "EAMC workload W33 seed 1 (`benchmarks/bench_eamc.py`), in-process back end.", "",
             "| nodes | preset | jobs | dynamic jobs | messages | wall s | CPU s | scheduler s | simulator s "
             "| scheduler ms/message | CPU × easy-backfill |",
             "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    easy = {r["hosts"]: r["cpu_s"] for r in rows if r["preset"] == "easy-backfill"}
    for r in rows:
        ratio = r["cpu_s"] / easy[r["hosts"]] if r["hosts"] in easy else float("nan")
        lines.append(f"| {2 * r['hosts']:,} | {r['preset']} | {r['jobs']:,} | {'yes' if r['dynamic'] else 'no'} "
                     f"| {r['messages']:,} | {r['run_s']:.2f} | {r['cpu_s']:.2f} | {r['scheduler_s']:.2f} "
                     f"| {r['simulator_s']:.2f} | {1000 * r['scheduler_s'] / r['messages']:.3f} | {ratio:.1f}× |")
    table = "\n".join(lines)
    print(table)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "eamc.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
