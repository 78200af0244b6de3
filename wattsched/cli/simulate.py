"""``wattsched run``, ``replay`` and ``serve``: simulations, conformance with real Batsim, and real Batsim."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wattsched.base.errors import OptionError, ProtocolError
from wattsched.cli.common import (
    add_options_argument,
    add_progress_arguments,
    format_sim_time,
    positive_float,
    progress_enabled,
    scheduler_options,
    simulation_progress,
)

EPILOG_RUN = """\
examples:
  wattsched run platforms/taurus_16.xml workloads/demo_taurus16.json -s easy-backfill -e results/easy
  wattsched run P.xml W.json -s energy-bud -o '{"budget_fraction": 0.5, "window_end_s": 86400, "shutdown": true}'
  wattsched run P.xml W.json -s compose -o '{"admission": "reduce-pc", "power": "shutdown", "window_end_s": 86400}'
  wattsched run P.xml W.json -s easy-backfill -o @options.json
  wattsched run P.xml W.json -s efs -o '{"half_life_s": 86400}' --per-user   (EnergyFairShare, per-user stretch)
  wattsched run P.xml W.json -s compose -o '{"order": "efs", "admission": "energy-bud", "power": "shutdown",
                                            "budget_fraction": 0.6, "window_end_s": 86400}'
  wattsched run P.xml W.json -s mypackage.mymodule:MyScheduler        (any pybatsim scheduler class)
  wattsched run P.xml W.json --connect tcp://127.0.0.1:28000          (Batsim stand-in: the scheduler
                                                                         runs in another process)
"""


def cmd_run(args: argparse.Namespace) -> int:
    from wattsched.analysis.metrics import compute_metrics, format_table, metrics_to_json
    from wattsched.simulator.drivers import run_inprocess, run_zmq
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.outputs import write_outputs
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.workloads.users import check_job_fields

    options = scheduler_options(args.options) if args.options else {}
    platform = load_platform(args.platform)
    workload = load_workload(args.workload)
    check_job_fields((job.entry for job in workload.jobs), args.workload)
    handler = None
    if args.connect is None:
        from wattsched.schedulers.adapter import scheduler_handler

        handler = scheduler_handler(args.scheduler, options)
    sim = Simulation(platform, workload, dynamic_jobs=args.enable_dynamic_jobs,
                     acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs)
    with simulation_progress(progress_enabled(args)) as bar:
        callback = None
        if bar is not None:
            task = bar.add_task("sim", total=len(workload.jobs), sim_time="0")
            last = [-1]

            def show_progress(now_s: float, done: int, total: int) -> None:
                if done != last[0] or sim.nb_messages % 200 == 0:
                    last[0] = done
                    bar.update(task, completed=done, sim_time=format_sim_time(now_s))

            callback = show_progress
        if handler is not None:
            stats = run_inprocess(sim, handler, progress=callback)
        else:
            stats = run_zmq(sim, args.connect, progress=callback)
        if bar is not None:
            bar.update(task, completed=len(sim.jobs_rows), sim_time=format_sim_time(sim.now_s))
    paths = write_outputs(sim, args.export, scheduling_time_s=stats.scheduling_time_s,
                          simulation_time_s=stats.simulation_time_s)
    metrics = compute_metrics(str(args.export), tau_s=args.tau, workload=args.workload if args.per_user else None)
    if args.json:
        print(metrics_to_json(metrics))
    else:
        print(format_table(metrics, title=f"{args.scheduler if args.connect is None else args.connect} on "
                                          f"{Path(args.platform).name} / {Path(args.workload).name}"))
        print(f"outputs: {paths['jobs'].parent}/{Path(str(args.export)).name}_*.csv  "
              f"({stats.events} events in {stats.messages} messages, {stats.simulation_time_s:.2f} s wall-clock, "
              f"{stats.scheduling_time_s:.2f} s in the scheduler)")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from wattsched.simulator.replay import replay

    failed = 0
    for folder in args.folders:
        report = replay(folder, rel_tol=args.rel_tol, outputs_dir=args.keep_outputs)
        print(report.format(limit=args.limit))
        failed += not report.ok
    if len(args.folders) > 1:
        print(f"{len(args.folders)} scenarios: {len(args.folders) - failed} identical, {failed} with differences")
    return 1 if failed else 0


def cmd_serve(args: argparse.Namespace) -> int:
    import zmq

    from wattsched.schedulers.adapter import load_scheduler, scheduler_handler
    from wattsched.schedulers.presets import PRESETS

    options = scheduler_options(args.options) if args.options else {}
    preset = args.scheduler.strip() in PRESETS
    # our presets answer through the translator (a JSON string in, one out: no pybatsim objects per message,
    # issue 15); any other scheduler through pybatsim's Batsim class
    scheduler = scheduler_handler(args.scheduler, options) if preset else load_scheduler(args.scheduler, options)
    print(f"wattsched: {args.scheduler} waiting for Batsim on {args.bind} (Batsim connects with -s)", file=sys.stderr)
    try:
        if preset:
            _serve_translator(scheduler, args.bind)
        else:
            from pybatsim.batsim.batsim import Batsim

            Batsim(scheduler, args.bind, -1).start()
    except zmq.ZMQError as exc:
        raise OptionError(f"--bind {args.bind}: cannot bind this endpoint ({exc})") from None
    print("wattsched: simulation ended", file=sys.stderr)
    return 0


def _serve_translator(handler: Any, bind: str) -> None:
    """Answer Batsim's requests on a REP socket bound to ``bind`` with ``handler`` (a
    :class:`~wattsched.schedulers.protocol.BatsimTranslator`) until it answered SIMULATION_ENDS."""
    import json

    import zmq

    ctx: zmq.Context = zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.bind(bind)
        while not handler.ended:
            try:
                message = json.loads(sock.recv_string())
            except json.JSONDecodeError as exc:
                raise ProtocolError(f"Batsim sent invalid JSON: {exc}") from None
            sock.send_string(json.dumps(handler(message)))
    finally:
        sock.close()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a workload on a platform with a scheduler (embedded simulator)",
                       description="Simulate WORKLOAD on PLATFORM with the embedded Batsim 4.2.1-compatible "
                                   "simulator, write Batsim's five output CSVs under --export, and print the "
                                   "metrics (utilization, AVEbsld, energy, ...).",
                       epilog=EPILOG_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("platform", help="SimGrid platform XML (version 4.1) with node power states")
    p.add_argument("workload", help="Batsim JSON workload")
    p.add_argument("-s", "--scheduler", default="easy-backfill",
                   help="preset name (see 'wattsched schedulers'), pybatsim entry-point name, "
                        "'package.module:Class' or 'file.py[:Class]' (default: easy-backfill)")
    add_options_argument(p)
    p.add_argument("-e", "--export", default="out/out",
                   help="output prefix: writes PREFIX_jobs.csv, _schedule.csv, ... (default: out/out)")
    p.add_argument("--connect", metavar="ENDPOINT",
                   help="do not load a scheduler: act as Batsim and connect (REQ) to a scheduler already "
                        "listening on ENDPOINT, e.g. tcp://127.0.0.1:28000")
    p.add_argument("--enable-dynamic-jobs", action="store_true",
                   help="accept dynamic job registration from the scheduler (Batsim's flag of the same name); a "
                        "scheduler that slows a job down re-registers it with its longer walltime")
    p.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                   help="answer each registration with a JOB_SUBMITTED (Batsim's flag of the same name)")
    p.add_argument("--tau", type=positive_float, default=10.0,
                   help="bounded-slowdown threshold in seconds (default 10)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.add_argument("--per-user", action="store_true",
                   help="also print each user's mean stretch (from the workload's 'user' field)")
    add_progress_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="replay recordings of real Batsim and report differences",
                       description="Replay each FOLDER (platform.xml, workload.json, batsim-args.txt, messages.jsonl, "
                                   "out_*.csv recorded with real Batsim) against the embedded simulator: one summary "
                                   "line per scenario and a count. Exits 1 and prints the first differences when a "
                                   "Batsim message or a CSV differs.")
    p.add_argument("folders", nargs="+", metavar="FOLDER")
    p.add_argument("--rel-tol", type=positive_float, default=1e-6, help="relative tolerance on energies (default 1e-6)")
    p.add_argument("--limit", type=int, default=10, help="differences shown per folder (default 10)")
    p.add_argument("--keep-outputs", metavar="DIR", help="write our CSVs into DIR instead of a temporary folder")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("serve", help="run a scheduler that waits for real Batsim (binds the REP socket)",
                       description="Bind the Batsim REP socket and run the scheduler for one simulation (our presets "
                                   "directly, any other scheduler through pybatsim). Start Batsim with '-s ENDPOINT' (or run 'wattsched run P W --connect "
                                   "ENDPOINT').")
    p.add_argument("-s", "--scheduler", default="easy-backfill",
                   help="preset name, pybatsim entry-point name or module path (default: easy-backfill)")
    add_options_argument(p)
    p.add_argument("--bind", default="tcp://127.0.0.1:28000", metavar="ENDPOINT",
                   help="endpoint to bind (default tcp://127.0.0.1:28000; use tcp://*:28000 in a container)")
    p.set_defaults(func=cmd_serve)
