"""``wattsched metrics``, ``plot``, ``paraver``, ``node-stats`` and ``regress``: any Batsim output folder, ours or
real Batsim's."""

from __future__ import annotations

import argparse
from pathlib import Path

from wattsched.base.errors import OptionError, printable
from wattsched.cli.common import (add_output_dir_argument, named, non_negative_float, non_negative_int, positive_float,
                                  window)

#: The ``type`` of the OUTPUTS argument: an empty one would read the current folder.
OUTPUTS = named("an output folder or prefix such as results/out")


def run_window(text: str) -> tuple[float, float]:
    """``--window START,END`` of a run's outputs: :func:`~wattsched.cli.common.window`, starting at 0 or later
    (simulated time starts at 0: a window before it holds nothing)."""
    start, end = window(text)
    if start < 0:
        raise argparse.ArgumentTypeError(f"window start {start:g} is before 0 (the start of the run)")
    return start, end


def _check_budget_power(power_w: float | None) -> None:
    """``--budget-power`` within :func:`wattsched.analysis.plots.check_budget_power`'s bound."""
    from wattsched.analysis.plots import check_budget_power

    check_budget_power(power_w, "--budget-power")


def cmd_metrics(args: argparse.Namespace) -> int:
    from wattsched.analysis.metrics import compute_metrics, format_table, metrics_to_json

    metrics = compute_metrics(args.outputs, tau_s=args.tau, window=args.window,
                              workload=args.workload, max_power_w=args.max_power)
    print(metrics_to_json(metrics) if args.json else format_table(metrics, title=Path(args.outputs).name))
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from wattsched.analysis.outputs import find_outputs
    from wattsched.analysis.plots import plot_all

    from wattsched.base.validate import check_output_files

    _check_budget_power(args.budget_power)
    out_dir = Path(args.output_dir) if args.output_dir else find_outputs(args.outputs)["jobs"].parent
    check_output_files([out_dir / name for name in ("gantt.png", "power.png", "machine_states.png")],
                       f"-d {out_dir}")
    paths = plot_all(args.outputs, out_dir, budget_window=args.window, budget_power_w=args.budget_power)
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


def _host_names(platform: str | None, nb_hosts: int) -> list[str] | None:
    if platform is None:
        return None
    from wattsched.simulator.platform import load_platform

    names = [h.name for h in load_platform(platform).hosts]
    if len(names) != nb_hosts:
        raise OptionError(f"--platform {platform}: {len(names)} compute hosts, the outputs have {nb_hosts}")
    return names


def cmd_paraver(args: argparse.Namespace) -> int:
    from wattsched.analysis.node_states import node_states
    from wattsched.analysis.outputs import find_outputs
    from wattsched.analysis.paraver import write_paraver

    jobs_path = find_outputs(args.outputs)["jobs"]
    stem = jobs_path.name[: -len("_jobs.csv")]
    out_dir = Path(args.output_dir) if args.output_dir else jobs_path.parent
    states = node_states(args.outputs)
    for path in write_paraver(states, out_dir / stem, _host_names(args.platform, states.nb_hosts)):
        print(path)
    return 0


def cmd_node_stats(args: argparse.Namespace) -> int:
    import json

    from wattsched.analysis.node_states import format_statistics, onoff_statistics

    stats = onoff_statistics(args.outputs, baseline=args.baseline)
    if args.json:
        print(json.dumps({k: (None if isinstance(v, float) and v != v else v) for k, v in stats.as_dict().items()},
                         indent=2))
    else:
        print(format_statistics(stats, title=f"{printable(Path(args.outputs).name)}: on/off statistics (ESC paper, "
                                             "table 2)"),
              end="")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="metrics of any Batsim output folder (ours or real Batsim's)",
                       description="Compute utilization, AVEbsld (bounded slowdown), waiting time, makespan, energy, "
                                   "energy inside a window and per-user stretch from Batsim output files.",
                       epilog="examples:\n"
                              "  wattsched metrics results/easy\n"
                              "  wattsched metrics results/easy --window 0,86400 --max-power 3051.8 --json\n"
                              "  wattsched metrics out/out --workload workloads/demo_taurus16.json")
    p.add_argument("outputs", type=OUTPUTS, help="output folder (holding one run), or prefix such as results/out")
    p.add_argument("--tau", type=positive_float, default=10.0, metavar="S",
                   help="bounded-slowdown threshold in seconds, > 0 (default 10)")
    p.add_argument("--window", type=run_window, metavar="START,END",
                   help="utilization and window energy from START to END, in seconds of simulated time "
                        "(0 ≤ START < END; default: first submission to makespan)")
    p.add_argument("--workload", type=named("a workload JSON file, or leave --workload out"), metavar="FILE",
                   help="the run's Batsim JSON workload, to join the jobs' 'user' field for per-user stretch")
    p.add_argument("--max-power", type=positive_float, metavar="W",
                   help="the platform's all-computing power in watts (every compute host at its top pstate), to "
                        "give the window energy relative to the window's maximum")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON instead of a table")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("plot", help="Gantt chart, power over time and host states as PNG",
                       description="Write gantt.png, power.png (when the outputs have _consumed_energy.csv, or a "
                                   "budget is drawn) and machine_states.png (when they have _machine_states.csv) "
                                   "for a run, and print their paths.",
                       epilog="examples:\n"
                              "  wattsched plot results/easy\n"
                              "  wattsched plot results/bud -d figures --window 0,86400 --budget-power 1500")
    p.add_argument("outputs", type=OUTPUTS, help="output folder (holding one run), or prefix such as results/out")
    add_output_dir_argument(p, "the PNGs")
    p.add_argument("--window", type=run_window, metavar="START,END",
                   help="an energy-budget window to shade on power.png, in seconds of simulated time "
                        "(0 ≤ START < END)")
    p.add_argument("--budget-power", type=positive_float, metavar="W",
                   help="budget power in watts, drawn as a line on power.png")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("paraver", help="node states of a run as a Paraver trace (.prv, .pcf, .row)",
                       description="Write a Paraver trace of any Batsim output folder (ours or real Batsim's): one row "
                                   "per host, its states (0 off, 1 running, 2 idle, 3 switching on, 4 switching off) "
                                   "as state records, the job id (event 1000) and the pstate (event 1001) as events; "
                                   "<prefix>.prv, <prefix>.pcf (state names and colours, event names) and "
                                   "<prefix>.row (host names). Times in microseconds from the start.",
                       epilog="examples:\n"
                              "  wattsched paraver tests/fixtures/batsim-reference/esc-states -d traces\n"
                              "  wattsched paraver results/easy --platform platforms/taurus_16.xml")
    p.add_argument("outputs", type=OUTPUTS, help="output folder (holding one run), or prefix such as results/out")
    add_output_dir_argument(p, "the three files")
    p.add_argument("--platform", type=named("the run's platform XML file, or leave --platform out"), metavar="FILE",
                   help="the run's platform XML, to name the rows after its hosts (default: 'host <id>')")
    p.set_defaults(func=cmd_paraver)

    p = sub.add_parser("node-stats", help="on/off statistics of a run (ESC paper, table 2)",
                       description="Shutdowns, maximum active nodes, active and inactive time in total and per node, "
                                   "mean active and inactive intervals, mean time between shutdowns, time in each "
                                   "state, makespan and energy, of any Batsim output folder (ours or real Batsim's); "
                                   "with --baseline (the always-on run), the time and energy ratios.",
                       epilog="examples:\n"
                              "  wattsched node-stats tests/fixtures/batsim-reference/esc-states\n"
                              "  wattsched node-stats results/esc --baseline results/always-on --json")
    p.add_argument("outputs", type=OUTPUTS, help="output folder (holding one run), or prefix such as results/out")
    p.add_argument("--baseline", type=named("the always-on run's output folder or prefix, or leave --baseline out"),
                   metavar="OUTPUTS",
                   help="output folder or prefix of the always-on run of the same jobs and hosts, to compare "
                        "makespan and energy with")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON instead of a table")
    p.set_defaults(func=cmd_node_stats)

    p = sub.add_parser("regress", help="compare a run with golden outputs (or --update them)",
                       description="Compare the five CSVs of RUN with GOLDEN (times exact, energies within "
                                   "--rel-tol); prints a readable diff and exits 1 when they differ.",
                       epilog="examples:\n"
                              "  wattsched regress results/easy tests/golden/easy-backfill\n"
                              "  wattsched regress results/easy tests/golden/easy-backfill --update")
    p.add_argument("run", type=OUTPUTS, help="output folder or prefix of the run")
    p.add_argument("golden", type=named("the golden outputs' folder or prefix", written=True),
                   help="folder or prefix of the golden outputs")
    p.add_argument("--update", action="store_true",
                   help="instead of comparing, replace the golden outputs with the run's (GOLDEN created when "
                        "missing); all or none: nothing changes unless every run file reads as 'metrics' reads it "
                        "and every target can be written; a golden file of a kind the run did not write (e.g. "
                        "_consumed_energy.csv) is deleted")
    p.add_argument("--rel-tol", type=non_negative_float, default=1e-6, metavar="R",
                   help="relative tolerance on energies, ≥ 0 (default 1e-6; 0: equal to the 1e-6 J of the "
                        "decimals Batsim prints)")
    p.add_argument("--limit", type=non_negative_int, default=20, metavar="N",
                   help="differences printed, at most (default 20; 0: only their count)")
    p.set_defaults(func=cmd_regress)
