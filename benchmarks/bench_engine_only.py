"""The embedded engine's own CPU time, without the scheduler (issue 10: the cost of SimGrid's clock; issue 15:
the part of a preset's run no scheduler work can remove).

A scheduler (``--scheduler``, default ``easy-backfill``, with ``--options``; in-process) runs once on the seeded
synthetic week of ``bench_simulator.py`` (``--jobs`` jobs on ``--hosts`` Taurus hosts, ``_common.bench_inputs``)
and its replies are recorded, with the CPU time of that whole run (engine and scheduler); the replies are then
fed, ``--repeat`` times, to fresh :class:`Simulation` objects (``start`` then ``step`` per reply, the garbage
collector off), and the process's CPU time of each replay is measured. Every replay must end with the recorded
number of messages and energy. To compare two versions of the engine, run this file with ``PYTHONPATH`` set to
each checkout (at the same time on a loaded machine, so that both see the same load).

Usage: ``python benchmarks/bench_engine_only.py [--jobs 20000] [--hosts 1152] [--repeat 5]
[--scheduler reduce-pc --options '{"shutdown": true, ...}']``
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--hosts", type=int, default=1152)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scheduler", default="easy-backfill", help="preset whose replies are replayed")
    parser.add_argument("--options", default="{}", help="its options, a JSON object")
    args = parser.parse_args(argv)
    import json
    from _common import bench_inputs
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator import engine
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    platform_path, workload_path = bench_inputs(args.hosts, args.jobs)
    platform, workload = load_platform(platform_path), load_workload(workload_path)
    sim = engine.Simulation(platform, workload)
    handler = scheduler_handler(args.scheduler, json.loads(args.options))
    replies = []
    t0 = time.process_time()
    msg = sim.start()
    while msg is not None:
        reply = handler(msg)
        replies.append(reply)
        msg = sim.step(reply)
    whole_s = time.process_time() - t0
    expected = (sim.nb_messages, sim.energy_j)
    times = []
    for _ in range(args.repeat):
        sim = engine.Simulation(platform, workload)
        gc.collect()
        gc.disable()
        t0 = time.process_time()
        sim.start()
        for reply in replies:
            sim.step(reply)
        times.append(time.process_time() - t0)
        gc.enable()
        if (sim.nb_messages, sim.energy_j) != expected:
            raise SystemExit(f"replay {len(times)} differs from the recorded run: {(sim.nb_messages, sim.energy_j)} != {expected}")
    print(f"{engine.__file__}: {args.scheduler} {args.options}, {args.jobs} jobs, {args.hosts} hosts: "
          f"{expected[0]} messages; the whole run {whole_s:.3f} CPU s; engine CPU s, best of {args.repeat}: "
          f"{min(times):.3f} (all: {' '.join(f'{t:.3f}' for t in times)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
