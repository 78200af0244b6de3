"""Preset benchmark: every preset's wall time on the same week, and its ratio to EASY's (issue 15).

Each run is a child process (clean peak memory): the seeded synthetic week of ``bench_simulator.py``
(``--jobs`` jobs, ``_common.bench_inputs``) on Taurus platforms of 1,152 and 80,640 hosts, in-process on
the embedded simulator, scheduled by EASY, by the fair-share orders (fairshare, efs, fs-efs), by ESC (FCFS with
its node on/off rules; UPAS and EAMC need their own nodes: ``bench_upas.py``, ``bench_eamc.py``) and by every
energy preset with and without shutdown, under the energy budget of the issue: the window 259,200-604,800 s (days 3-7 of the week), budget 60 %
(``budget_fraction``; powercap: the cap ``B / (te − ts)``). "CPU s" is the process's CPU time during the run
(simulator and scheduler; on a shared machine it varies far less than the wall time), "ratio" the run's CPU
time over EASY's on the same platform in the same invocation. ``easy-backfill+shutdown`` is EASY with the opportunistic
shutdown and no budget (``compose`` with ``power: shutdown``): the presets with shutdown are also given as a ratio
to it (same power manager, so the same kind of simulated events: hosts switched at almost every pass), which
separates what the budget costs from what the shutdown costs. ``energy-bud+esc`` is a composition: EASY under the
energy budget with ESC's node on/off rules as power manager (``compose`` with ``admission: energy-bud, power: esc``),
and ``efs+energy-bud+esc`` the same in EnergyFairShare's order (``order: efs``).

Usage: ``python benchmarks/bench_presets.py [--jobs 20000] [--sizes 1152,80640] [--repeat 1]``
Writes a markdown table to stdout and, as a new dated section at the top, to ``benchmarks/results/presets.md``
(``--out``; the sections of earlier invocations, with their notes, are kept below it).
"""

from __future__ import annotations

import argparse
import json
import platform as _platform
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

WINDOW = {"window_start_s": 259_200.0, "window_end_s": 604_800.0, "budget_fraction": 0.6}
#: (label, preset, options): EASY first (the reference of the ratios)
RUNS: list[tuple[str, str, dict]] = [("easy-backfill", "easy-backfill", {}),
                                     ("easy-backfill+shutdown", "compose", {"power": "shutdown"})] + [
    (f"{preset}{'+shutdown' if shutdown else ''}", preset, {**WINDOW, "shutdown": shutdown})
    for preset in ("energy-bud", "reduce-pc", "powercap") for shutdown in (False, True)
] + [(preset, preset, {}) for preset in ("fairshare", "efs", "fs-efs")] + [  # queue orders (the week's jobs have users)
    ("esc", "esc", {}),  # FCFS with ESC's node on/off rules (its paper's defaults), on the same Taurus hosts
    # a composition: EASY under the energy budget, ESC switching the nodes (every idle node kept for its idle time)
    ("energy-bud+esc", "compose", {"admission": "energy-bud", "power": "esc", **WINDOW}),
    # the same in the energy-fair order (the combination the project's guide names: energyBud + EFS + ESC)
    ("efs+energy-bud+esc", "compose", {"order": "efs", "admission": "energy-bud", "power": "esc", **WINDOW})]


def run_one(nb_hosts: int, jobs: int, preset: str, options: dict) -> dict:
    """One run, in this process; returns its figures."""
    from _common import bench_inputs
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    platform_path, workload_path = bench_inputs(nb_hosts, jobs)
    sim = Simulation(load_platform(platform_path), load_workload(workload_path))
    t0, cpu0 = time.perf_counter(), time.process_time()
    stats = run_inprocess(sim, scheduler_handler(preset, options))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"hosts": nb_hosts, "jobs": len(sim.jobs_rows), "wall_s": wall, "cpu_s": cpu, "scheduler_s": stats.scheduling_time_s,
            "simulator_s": stats.simulation_time_s - stats.scheduling_time_s, "peak_mib": peak_mib}


def _commit() -> str:
    """The checkout's commit (short), or "unknown" outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000, help="jobs of the week (default 20000)")
    parser.add_argument("--sizes", default="1152,80640", help="comma-separated host counts (default 1152,80640)")
    parser.add_argument("--only", help="comma-separated labels to run (default: all; EASY always runs)")
    parser.add_argument("--skip", default="", help="comma-separated labels not to run")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration (the best is kept)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "presets.md",
                        help="markdown file the table goes to the top of (default benchmarks/results/presets.md)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(*json.loads(args.one))))
        return 0
    only = None if args.only is None else set(args.only.split(",")) | {"easy-backfill"}
    if only is not None and any(label.endswith("+shutdown") for label in only):
        only.add("easy-backfill+shutdown")  # the reference of the shutdown ratios
    skip = set(args.skip.split(",")) - {"easy-backfill"}
    runs = [r for r in RUNS if (only is None or r[0] in only) and r[0] not in skip]
    lines = [
        f"Machine: {_platform.processor() or _platform.machine()}, Python {_platform.python_version()}; "
        f"{args.jobs} jobs per run (seeded synthetic week, `benchmarks/_common.py`); budget window "
        f"{WINDOW['window_start_s']:,.0f}-{WINDOW['window_end_s']:,.0f} s, budget {WINDOW['budget_fraction']:.0%}; "
        f"best of {args.repeat}.",
        "",
        "| hosts | run | jobs | wall s | CPU s | scheduler s | simulator s | ratio to EASY (CPU) "
        "| ratio to EASY+shutdown (CPU) | peak MiB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for nb_hosts in (int(s) for s in args.sizes.split(",")):
        easy_s = None
        easy_shutdown_s = None
        for label, preset, options in runs:
            best = None
            for _ in range(args.repeat):
                cfg = json.dumps([nb_hosts, args.jobs, preset, options])
                out = subprocess.run([sys.executable, __file__, "--one", cfg], capture_output=True, text=True,
                                     check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                best = r if best is None or r["cpu_s"] < best["cpu_s"] else best
            assert best is not None
            easy_s = best["cpu_s"] if easy_s is None else easy_s
            if label == "easy-backfill+shutdown":
                easy_shutdown_s = best["cpu_s"]
            to_shutdown = (f"{best['cpu_s'] / easy_shutdown_s:.2f}"
                           if easy_shutdown_s is not None and label.endswith("+shutdown") else "–")
            line = (f"| {nb_hosts:,} | {label} | {best['jobs']:,} | {best['wall_s']:.2f} | {best['cpu_s']:.2f} "
                    f"| {best['scheduler_s']:.2f} | {best['simulator_s']:.2f} | {best['cpu_s'] / easy_s:.2f} "
                    f"| {to_shutdown} | {best['peak_mib']:.0f} |")
            print(line, flush=True)
            lines.append(line)
    table = "\n".join(lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    earlier = args.out.read_text() if args.out.exists() else ""
    invocation = " ".join(sys.argv[1:] if argv is None else argv)
    head = f"## {time.strftime('%Y-%m-%d %H:%M')}, commit {_commit()}: `bench_presets.py {invocation}`"
    args.out.write_text(f"{head}\n\n{table}\n" + (f"\n{earlier}" if earlier else ""))
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
