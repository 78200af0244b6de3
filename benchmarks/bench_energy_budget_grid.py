"""Estimate of the energy-budget reproduction's grid at the paper's size from a sample of its runs (issue 15).

``make reproduce-energy-budget FULL=1`` runs, per machine, EASY plus 3 algorithms × {IDLE, SHUT} × 8 budgets
(49 runs). This script builds the same inputs (the seeded synthetic week at offered load 0.95, the load the
reproduction starts its calibration from) for one machine, runs EASY and the six variants at one budget
(``--budget``, default 60 %), one at a time, and estimates the grid as EASY + 8 × the six variants' sum
(every budget of a variant assumed to cost what the sampled one does), for 1 and 2 workers (the grid's
runs are independent: half the sum on 2 cores, at best).

Usage: ``python benchmarks/bench_energy_budget_grid.py [--machine curie] [--budget 60] [--out DIR]``
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    from wattsched.experiments.energy_budget import BUDGETS, MACHINES, build_runs, synthetic_inputs
    from wattsched.experiments.sweep import execute_run

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machine", default="curie", choices=[m.key for m in MACHINES])
    parser.add_argument("--budget", type=int, default=60, choices=[b.percent for b in BUDGETS])
    parser.add_argument("--out", type=Path, default=HERE / ".cache" / "energy-budget-grid")
    args = parser.parse_args(argv)
    machine = next(m for m in MACHINES if m.key == args.machine)
    inputs = synthetic_inputs(machine, machine.nb_hosts, args.out / "inputs", seed=1, load=0.95)
    budget = next(b for b in BUDGETS if b.percent == args.budget)
    runs = build_runs([inputs], args.out / "runs", budgets=[budget])
    rows = []
    print(f"{machine.name}: {inputs.nb_hosts:,} hosts, {inputs.nb_jobs:,} jobs; budget {budget.percent} %", flush=True)
    for run in runs:
        t0, cpu0 = time.perf_counter(), time.process_time()
        row = execute_run(run, force=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        rows.append({"run": run.name, "status": row["status"], "wall_s": wall, "cpu_s": cpu,
                     "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
        print(json.dumps(rows[-1]), flush=True)
    easy, variants = rows[0], rows[1:]
    for key in ("wall_s", "cpu_s"):
        grid = easy[key] + (len(BUDGETS)) * sum(r[key] for r in variants)
        print(f"grid estimate ({key}): {grid:.0f} s = {grid / 60:.1f} min on 1 worker, "
              f"≥ {grid / 120:.1f} min on 2", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
