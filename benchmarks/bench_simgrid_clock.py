"""Cost of shadowing SimGrid's clock (``wattsched.simulator.simgrid_clock``) on a synthetic week.

Runs the embedded engine with a scheduler in-process, keeps the conversation as a recording, then
drives a :class:`~wattsched.simulator.simgrid_clock.BatsimShadow` from it (what
``tests/test_simgrid_clock.py`` does with real Batsim's recordings) and times the shadow alone.
It also reports where the shadow's steps differ from the engine's messages: places where real
Batsim would split (or order) same-time events differently from the engine.

    .venv/bin/python benchmarks/bench_simgrid_clock.py [--hosts 1152] [--jobs 20000] [--scheduler easy-backfill]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1152)
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--scheduler", default="easy-backfill")
    args = ap.parse_args(argv)

    from _common import bench_inputs
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator import simgrid_clock
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.replay import record_messages
    from wattsched.simulator.workload import load_workload

    platform_path, workload_path = bench_inputs(args.hosts, args.jobs)
    sim = Simulation(load_platform(platform_path), load_workload(workload_path))
    lines = record_messages(sim)
    t0 = time.perf_counter()
    run_inprocess(sim, scheduler_handler(args.scheduler, {}))
    engine_s = time.perf_counter() - t0

    live: list[int] = []
    solve_s = [0.0]
    solve = simgrid_clock.L07Clock.solve_step

    def counting_solve(self):
        live.append(len(self))
        t = time.perf_counter()
        res = solve(self)
        solve_s[0] += time.perf_counter() - t
        return res

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "week"
        folder.mkdir()
        shutil.copy(platform_path, folder / "platform.xml")
        shutil.copy(workload_path, folder / "workload.json")
        (folder / "messages.jsonl").write_text("\n".join(lines) + "\n")
        t0 = time.perf_counter()
        check = simgrid_clock.check_recording(folder)
        shadow_s = time.perf_counter() - t0
        simgrid_clock.L07Clock.solve_step = counting_solve
        try:
            simgrid_clock.check_recording(folder)
        finally:
            simgrid_clock.L07Clock.solve_step = solve

    steps = len(live)
    print(f"{args.hosts} hosts, {len(sim.workload.jobs)} jobs, scheduler {args.scheduler}: "
          f"engine run {engine_s:.2f} s, {len(lines) // 2} Batsim messages")
    print(f"shadow: {shadow_s:.2f} s for {steps} solver steps ({1e6 * shadow_s / max(steps, 1):.1f} us/step, "
          f"including the recording's parsing); live actions per step: mean {sum(live) / max(steps, 1):.0f}, "
          f"max {max(live, default=0)}")
    print(f"of which solver steps proper (L07Clock.solve_step): {solve_s[0]:.2f} s, "
          f"{1e6 * solve_s[0] / max(steps, 1):.1f} us/step")
    print(f"step messages compared: {len(check.groups)}; differing from the engine: {len(check.mismatches)}; "
          f"same-time splits real Batsim would make: {len(check.predicted_splits)}")
    for m in check.mismatches[:5]:
        print("  ", m)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
