"""``wattsched``: run energy-aware schedulers on the embedded Batsim simulator or against real Batsim.

Every subcommand's ``--help`` is its documentation. Errors a user can cause are printed as one
line (``wattsched: error: <file>: <field>: <problem>``) with exit status 2; nothing is written
when a run fails.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from wattsched.base.errors import OptionError, WattschedError

log = logging.getLogger("wattsched")

EPILOG_RUN = """\
examples:
  wattsched run platforms/taurus_16.xml workloads/demo_taurus16.json -s easy-backfill -e results/easy
  wattsched run P.xml W.json -s fcfs -o '{}' -e out/fcfs
  wattsched run P.xml W.json -s easy-backfill -o @options.json
  wattsched run P.xml W.json -s mypackage.mymodule:MyScheduler        (any pybatsim scheduler class)
  wattsched run P.xml W.json --connect tcp://127.0.0.1:28000          (Batsim stand-in: the scheduler
                                                                         runs in another process)
"""


def _options(text: str) -> dict[str, Any]:
    """``-o`` value: a JSON object, or ``@file`` holding one."""
    source = "option -o"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text()
        except OSError as exc:
            raise OptionError(f"-o {text}: cannot read {source}: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"{source}: scheduler options are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, dict):
        raise OptionError(f"{source}: scheduler options must be a JSON object like '{{\"allocation\": \"best-fit\"}}'")
    return value


def _window(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START,END in seconds, got {text!r}") from None
    if b <= a:
        raise argparse.ArgumentTypeError(f"window end {b} is not after its start {a}")
    return a, b


def _progress_bar(total_jobs: int, enabled: bool):
    """A rich progress bar on jobs done and simulated time; a no-op context when disabled."""
    from contextlib import nullcontext

    if not enabled:
        return nullcontext(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("jobs  t={task.fields[sim_time]}"),
        TimeElapsedColumn(),
        transient=False,
        console=None,
    )


def _format_sim_time(t_s: float) -> str:
    days, rest = divmod(t_s, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{int(days)}d{int(h):02d}:{int(m):02d}:{s:04.1f}" if days else f"{int(h):02d}:{int(m):02d}:{s:04.1f}"


# ---------------------------------------------------------------------------------------------- run

def cmd_run(args: argparse.Namespace) -> int:
    from wattsched.simulator.drivers import run_inprocess, run_zmq
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.outputs import write_outputs
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.analysis.metrics import compute_metrics, format_table, metrics_to_json

    options = _options(args.options) if args.options else {}
    platform = load_platform(args.platform)
    workload = load_workload(args.workload)
    handler = None
    if args.connect is None:
        from wattsched.schedulers.adapter import scheduler_handler

        handler = scheduler_handler(args.scheduler, options)
    sim = Simulation(platform, workload)
    show = not args.quiet and sys.stderr.isatty() or args.progress
    with _progress_bar(len(workload.jobs), show) as bar:
        callback = None
        if bar is not None:
            task = bar.add_task("sim", total=len(workload.jobs), sim_time="0")
            last = [-1]

            def show_progress(now_s: float, done: int, total: int) -> None:
                if done != last[0] or sim.nb_messages % 200 == 0:
                    last[0] = done
                    bar.update(task, completed=done, sim_time=_format_sim_time(now_s))

            callback = show_progress

        if handler is not None:
            stats = run_inprocess(sim, handler, progress=callback)
        else:
            stats = run_zmq(sim, args.connect, progress=callback)
        if bar is not None:
            bar.update(task, completed=len(sim.jobs_rows), sim_time=_format_sim_time(sim.now_s))
    paths = write_outputs(sim, args.export, scheduling_time_s=stats.scheduling_time_s,
                          simulation_time_s=stats.simulation_time_s)
    metrics = compute_metrics(str(args.export), tau_s=args.tau)
    if args.json:
        print(metrics_to_json(metrics))
    else:
        print(format_table(metrics, title=f"{args.scheduler if args.connect is None else args.connect} on "
                                          f"{Path(args.platform).name} / {Path(args.workload).name}"))
        print(f"outputs: {paths['jobs'].parent}/{Path(str(args.export)).name}_*.csv  "
              f"({stats.events} events in {stats.messages} messages, {stats.simulation_time_s:.2f} s wall-clock, "
              f"{stats.scheduling_time_s:.2f} s in the scheduler)")
    return 0


# ------------------------------------------------------------------------------------------- replay

def cmd_replay(args: argparse.Namespace) -> int:
    from wattsched.simulator.replay import replay

    failed = 0
    for folder in args.folders:
        report = replay(folder, rel_tol=args.rel_tol, outputs_dir=args.keep_outputs)
        print(report.format(limit=args.limit))
        failed += not report.ok
    return 1 if failed else 0


# -------------------------------------------------------------------------------------------- serve

def cmd_serve(args: argparse.Namespace) -> int:
    from pybatsim.batsim.batsim import Batsim

    from wattsched.schedulers.adapter import load_scheduler

    options = _options(args.options) if args.options else {}
    scheduler = load_scheduler(args.scheduler, options)
    print(f"wattsched: {args.scheduler} waiting for Batsim on {args.socket} (Batsim connects with -s)", file=sys.stderr)
    bs = Batsim(scheduler, args.socket, -1)
    bs.start()
    print("wattsched: simulation ended", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------- schedulers

def cmd_schedulers(args: argparse.Namespace) -> int:
    from wattsched.schedulers.presets import PRESETS

    if args.json:
        out = {}
        for name, preset in PRESETS.items():
            out[name] = {
                "description": preset.description,
                "reference": preset.reference,
                "options": {o.name: {"default": o.default, "help": o.help, "valid": o.describe()} for o in preset.options},
            }
        print(json.dumps(out, indent=2, default=str))
        return 0
    for name, preset in PRESETS.items():
        print(f"{name}\n    {preset.description}\n    from: {preset.reference}")
        for o in preset.options:
            print(f"    {o.describe()}\n        {o.help}")
        print()
    print("Any pybatsim scheduler also works: a name registered under the 'pybatsim.schedulers' entry point\n"
          "(e.g. backfill-easy), 'package.module:Class', or 'path/to/file.py[:Class]'.")
    return 0


# ----------------------------------------------------------------------------------- metrics / plot

def cmd_metrics(args: argparse.Namespace) -> int:
    from wattsched.analysis.metrics import compute_metrics, format_table, metrics_to_json

    metrics = compute_metrics(args.outputs, tau_s=args.tau, window=args.window,
                              workload=args.workload, max_power_w=args.max_power)
    print(metrics_to_json(metrics) if args.json else format_table(metrics, title=Path(args.outputs).name))
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from wattsched.analysis.outputs import find_outputs
    from wattsched.analysis.plots import plot_all, plot_power

    out_dir = Path(args.out_dir) if args.out_dir else find_outputs(args.outputs)["jobs"].parent
    paths = plot_all(args.outputs, out_dir)
    if args.budget_window or args.budget_power:
        plot_power(args.outputs, out_dir / "power.png", budget_window=args.budget_window,
                   budget_power_w=args.budget_power)
    for p in paths:
        print(p)
    return 0


def cmd_regress(args: argparse.Namespace) -> int:
    from wattsched.analysis.regress import compare_outputs, format_report, update_golden

    if args.update:
        update_golden(args.run, args.golden)
        print(f"golden outputs in {args.golden} updated from {args.run}")
        return 0
    diffs = compare_outputs(args.run, args.golden, rel_tol_energy=args.rel_tol)
    print(format_report(diffs, limit=args.limit))
    return 1 if diffs else 0


def run_tool(name: str, argv: Sequence[str]) -> int:
    import importlib

    module = importlib.import_module(TOOLS[name][0])
    return int(module.main(list(argv), prog=f"wattsched {name}") or 0)


# ------------------------------------------------------------------------------------------- parser

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wattsched",
        description="Energy-aware HPC job schedulers for Batsim 4, with an embedded Batsim-compatible simulator.",
        epilog="Run 'wattsched COMMAND --help' for the documentation of a command.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    p.add_argument("-o", "--options", help="scheduler options: a JSON object or @file.json")
    p.add_argument("-e", "--export", default="out/out",
                   help="output prefix: writes PREFIX_jobs.csv, _schedule.csv, ... (default: out/out)")
    p.add_argument("--connect", metavar="ENDPOINT",
                   help="do not load a scheduler: act as Batsim and connect (REQ) to a scheduler already "
                        "listening on ENDPOINT, e.g. tcp://127.0.0.1:28000")
    p.add_argument("--tau", type=float, default=10.0, help="bounded-slowdown threshold in seconds (default 10)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when not on a terminal")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="replay recordings of real Batsim and report differences",
                       description="Replay each FOLDER (platform.xml, workload.json, batsim-args.txt, messages.jsonl, "
                                   "out_*.csv recorded with real Batsim) against the embedded simulator. Exits 1 and "
                                   "prints the first differences when a Batsim message or a CSV differs.")
    p.add_argument("folders", nargs="+", metavar="FOLDER")
    p.add_argument("--rel-tol", type=float, default=1e-6, help="relative tolerance on energies (default 1e-6)")
    p.add_argument("--limit", type=int, default=10, help="differences shown per folder (default 10)")
    p.add_argument("--keep-outputs", metavar="DIR", help="write our CSVs into DIR instead of a temporary folder")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("serve", help="run a scheduler that waits for real Batsim (binds the REP socket)",
                       description="Bind the Batsim REP socket and run SCHEDULER for one simulation. Start Batsim "
                                   "with '-s ENDPOINT' (or run 'wattsched run P W --connect ENDPOINT').")
    p.add_argument("scheduler", help="preset name, pybatsim entry-point name or module path")
    p.add_argument("-o", "--options", help="scheduler options: a JSON object or @file.json")
    p.add_argument("-s", "--socket", default="tcp://127.0.0.1:28000",
                   help="endpoint to bind (default tcp://127.0.0.1:28000; use tcp://*:28000 in a container)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("schedulers", help="list the scheduler presets, their options and papers",
                       description="List every preset with its options (type, default, valid values) and the paper "
                                   "it comes from.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_schedulers)

    p = sub.add_parser("metrics", help="metrics of any Batsim output folder (ours or real Batsim's)",
                       description="Compute utilization, AVEbsld (bounded slowdown), waiting time, makespan, energy, "
                                   "energy inside a window and per-user stretch from Batsim output files.")
    p.add_argument("outputs", help="output folder (holding one run), or prefix such as results/out")
    p.add_argument("--tau", type=float, default=10.0, help="bounded-slowdown threshold in seconds (default 10)")
    p.add_argument("--window", type=_window, help="START,END in seconds for utilization and window energy")
    p.add_argument("--workload", help="workload JSON, to join the jobs' 'user' field for per-user stretch")
    p.add_argument("--max-power", type=float, help="platform's all-computing power in W (energy relative to it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("plot", help="Gantt chart, power over time and host states as PNG",
                       description="Write gantt.png, power.png and machine_states.png for a run.")
    p.add_argument("outputs", help="output folder (holding one run), or prefix such as results/out")
    p.add_argument("-d", "--out-dir", default=None, help="where to write the PNGs (default: next to the outputs)")
    p.add_argument("--budget-window", type=_window, help="START,END of an energy-budget window to shade")
    p.add_argument("--budget-power", type=float, help="budget power in W, drawn as a line")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("regress", help="compare a run with golden outputs (or --update them)",
                       description="Compare the five CSVs of RUN with GOLDEN (times exact, energies within "
                                   "--rel-tol); prints a readable diff and exits 1 when they differ.")
    p.add_argument("run", help="output folder or prefix of the run")
    p.add_argument("golden", help="folder or prefix of the golden outputs")
    p.add_argument("--update", action="store_true", help="replace the golden outputs with the run's")
    p.add_argument("--rel-tol", type=float, default=1e-6)
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(func=cmd_regress)

    for name, (module, text) in TOOLS.items():
        # listed for --help; main() hands their arguments to the tool's own parser
        sub.add_parser(name, help=text + f" (see 'wattsched {name} --help')", add_help=False)
    return parser


#: Subcommands that are the command lines of the workload and platform tools.
TOOLS = {
    "synth": ("wattsched.workloads.synthetic", "generate a seeded synthetic HPC week (Lublin-Feitelson style)"),
    "swf": ("wattsched.workloads.swf", "convert an SWF trace (Parallel Workloads Archive) to a Batsim workload"),
    "platform": ("wattsched.platforms.generate", "generate a Taurus-calibrated SimGrid platform of any size"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in TOOLS:
        try:
            return run_tool(argv[0], argv[1:])
        except WattschedError as exc:
            print(f"wattsched {argv[0]}: error: {exc}", file=sys.stderr)
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except WattschedError as exc:
        print(f"wattsched: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wattsched: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
