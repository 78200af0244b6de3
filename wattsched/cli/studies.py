"""``wattsched sweep`` and ``wattsched reproduce``: many simulations at once, and the papers' studies."""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from pathlib import Path
from typing import Callable

from wattsched.base.errors import OptionError, counted
from wattsched.cli.common import days, named, non_negative_int, positive_float, positive_int, workers

#: The ``type`` of ``--out``: a folder, not an empty name (the current folder).
OUT_FOLDER = named("a folder (leave --out out for the default)", written=True)
#: ``--report-dir ''`` wrote the report into the current folder; ``--pwa ''`` read the current folder as the archive's.
REPORT_FOLDER = named("a folder (leave --report-dir out to write the report into --out)", written=True)
PWA_FOLDER = named("the folder of the archive's logs, or leave --pwa out")


def _one_study_per_folder(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` (a ``reproduce`` study) holding its ``--out`` while it runs (:class:`~wattsched.base.fileio.FolderLock`):
    a second study started in the same folder is refused at once."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from wattsched.base.fileio import FolderLock

        with FolderLock(args.out, f"--out {args.out}", "another study"):
            return command(args)
    return run


def cmd_sweep(args: argparse.Namespace) -> int:
    from wattsched.base.fileio import FolderLock
    from wattsched.base.validate import check_output_files
    from wattsched.experiments.grid import grid_runs, load_grid, results_paths, write_results
    from wattsched.experiments.sweep import check_run_folders, load_runs, report_failures, run_sweep

    if args.workers is not None and args.dask_scheduler is not None:  # -j would be ignored: say so
        raise OptionError(f"-j {args.workers} sizes the local cluster; with --dask-scheduler the scheduler's own "
                          "workers run the simulations (start more 'dask worker' processes instead)")
    check_output_files(results_paths(args.out), f"--out {args.out}")
    json_runs = str(args.runs).endswith(".json") and not _holds_a_json_object(args.runs)
    with FolderLock(args.out, f"--out {args.out}"):  # one sweep at a time in a folder
        runs = load_runs(args.runs) if json_runs else grid_runs(load_grid(args.runs), args.out)
        if json_runs:  # (a grid's runs go to <out>/runs)
            check_run_folders(runs, results_paths(args.out), str(args.runs), f"--out {args.out}")
        frame = run_sweep(runs, workers=args.workers, force=args.force, dask_scheduler=args.dask_scheduler,
                          show_progress=False if args.quiet else None)
        written = write_results(frame, args.out)
    counts = frame["status"].value_counts().to_dict()
    print(f"{counted(len(frame), 'run')} ({', '.join(f'{v} {k}' for k, v in counts.items())}); "
          f"table {written[0]} (and .parquet), {counted(len(written) - 2, 'comparison plot')} in "
          f"{Path(args.out) / 'plots'}")
    return 1 if report_failures(frame) else 0


def _holds_a_json_object(path: str) -> bool:
    """Whether the ``.json`` file ``path`` holds a JSON object (a grid: YAML reads JSON) rather than a list of runs;
    False when it cannot be read (:func:`~wattsched.experiments.sweep.load_runs` then says why)."""
    from wattsched.base.fileio import require_regular_file

    try:
        require_regular_file(path)
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def _name_list(text: str) -> list[str]:
    """``--machines A,B`` (and ``--traces``, ``--parts``): a non-empty comma-separated list of names; an
    empty value (an unset ``$MACHINES``) or an empty name must not silently mean "all of them", and a name given
    twice would make two runs of one name. The names themselves are checked against the study's own list before
    any work."""
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError("expected a comma-separated list of names, got an empty value "
                                         "(leave the option out for all of them)")
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of names, got an empty name in {text!r}")
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise argparse.ArgumentTypeError(f"{twice!r} is given twice in {text!r}")
    return names


def _check_output_folders(args: argparse.Namespace, tables: tuple[str, ...] = ("results.csv",)) -> None:
    """Refuse, before a reproduction's minutes of work, an ``--out`` or ``--report-dir`` that cannot be a
    folder written to (a file, under a file, read-only), or ``tables`` (the files of fixed names the paper writes
    in ``--out``) that cannot be written there (a folder of that name): one line, exit 2, nothing made."""
    from wattsched.base.validate import check_output_files

    for option in ("out", "report_dir"):
        folder = getattr(args, option, None)
        if folder is not None:
            names = ("report.md", *tables) if option == "out" else ("report.md",)
            check_output_files([Path(folder) / name for name in names], f"--{option.replace('_', '-')} {folder}")


@_one_study_per_folder
def cmd_reproduce_energy_budget(args: argparse.Namespace) -> int:
    from wattsched.experiments.energy_budget import (
        available_algorithms,
        choose_machines,
        parse_swf_inputs,
        refused_by_design,
        run_experiment,
    )
    from wattsched.experiments.sweep import report_failures

    _check_output_folders(args)
    logging.getLogger("wattsched").setLevel(logging.INFO if args.verbose else logging.WARNING)
    if args.pwa is not None and args.synthetic:  # a mistyped --pwa is refused with --synthetic too (no log read)
        from wattsched.workloads.pwa import find_pwa

        find_pwa(args.pwa)
    machines, size_note = choose_machines(args.full, args.machines, args.scale)
    _, missing = available_algorithms()
    if missing:
        print("presets not registered, left out: " + ", ".join(a.preset for a in missing), file=sys.stderr)
    swf = parse_swf_inputs(args.swf)
    unused = sorted(set(swf) - {machine.key for machine, _ in machines})
    if unused:  # a trace for a machine left out would be silently ignored
        raise OptionError(f"--swf {unused[0]}: that machine is not simulated (--machines "
                          f"{','.join(machine.key for machine, _ in machines)})")
    result = run_experiment(args.out, machines, seed=args.seed, load=args.load, swf=swf,
                            workers=args.workers, force=args.force, size_note=size_note, full=args.full,
                            pwa=args.pwa, synthetic=args.synthetic, show_progress=False if args.quiet else None)
    for inp in result.inputs:
        print(f"{inp.machine.name}: {inp.source}", file=sys.stderr)
    for note in result.notes:
        print(f"EASY utilization, {note}")
    print(f"{counted(len(result.frame), 'run')} in {result.wall_s:.0f} s; report: {Path(args.out) / 'report.md'}")
    expected = refused_by_design(result.frame)
    if expected.any():
        print(f"{counted(int(expected.sum()), 'run')} refused, as they should be: a budget below the platform held "
              "idle without shutdown (listed in the report)", file=sys.stderr)
    return 1 if report_failures(result.frame[~expected]) else 0


@_one_study_per_folder
def cmd_reproduce_efs(args: argparse.Namespace) -> int:
    from wattsched.experiments.efs import run_experiment
    from wattsched.workloads.pwa import find_pwa
    from wattsched.experiments.sweep import report_failures

    _check_efs_part_options(args)
    _check_output_folders(args, ("runs.csv", "lightesp.csv", "table1_users.csv", "table1.csv"))
    logging.getLogger("wattsched").setLevel(logging.INFO if args.verbose else logging.WARNING)
    pwa = find_pwa(args.pwa)
    if not args.quiet:  # a step note, as -q's help says
        print(f"Parallel Workloads Archive logs: {pwa if pwa is not None else 'not found, synthetic traces'}",
              file=sys.stderr)
    result = run_experiment(args.out, parts=args.parts,
                            traces=args.traces, full=args.full,
                            weeks=args.weeks, pwa=args.pwa, nb_users=args.users, seeds=args.seeds, seed=args.seed,
                            workers=args.workers, force=args.force,
                            show_progress=False if args.quiet else None, charge=args.charge,
                            note=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{counted(len(result.frame), 'run')} in {result.wall_s:.0f} s; report: {result.report}")
    return 1 if report_failures(result.frame) else 0


#: The options of ``reproduce efs`` that only one part reads, with their defaults: given to a run without that part,
#: they were ignored without a word (``--parts lightesp --users 5``).
#: (the defaults are those the parser declares: one given to a part left out is the same as none)
_EFS_USERS, _EFS_SEEDS, _EFS_SEED = 20, 5, 1
_EFS_PART_OPTIONS = {"table1": (("--traces", "traces", None), ("--full", "full", False), ("--weeks", "weeks", None),
                                ("--users", "users", _EFS_USERS), ("--seed", "seed", _EFS_SEED), ("--pwa", "pwa", None)),
                     "lightesp": (("--seeds", "seeds", _EFS_SEEDS),)}


def _check_efs_part_options(args: argparse.Namespace) -> None:
    """Refuse an option of ``reproduce efs`` (other than its default) that only a part left out of ``--parts`` reads.

    Raises:
        OptionError: naming the option and the part.
    """
    for part, options in _EFS_PART_OPTIONS.items():
        if part in args.parts:
            continue
        for flag, name, default in options:
            if getattr(args, name) != default:
                raise OptionError(f"{flag} applies to the {part} part only, which --parts {','.join(args.parts)} "
                                  "leaves out: add it to --parts, or leave the option out")


@_one_study_per_folder
def cmd_reproduce_esc(args: argparse.Namespace) -> int:
    from wattsched.experiments.esc import run_experiment
    from wattsched.experiments.sweep import report_failures

    _check_output_folders(args, ("results.csv", "timing.json"))
    if args.pwa is not None:
        from wattsched.workloads.pwa import find_pwa

        find_pwa(args.pwa)  # a mistyped --pwa is refused before any input is made
    logging.getLogger("wattsched").setLevel(logging.INFO if args.verbose else logging.WARNING)
    result = run_experiment(args.out, report_dir=args.report_dir, pwa=args.pwa, full=args.full,
                            grid=not args.no_grid, workers=args.workers, force=args.force, seed=args.seed,
                            days=args.days, show_progress=False if args.quiet else None)
    for inp in result.inputs:
        print(f"{inp.label}: {inp.source}")
    report = Path(args.report_dir or args.out) / "report.md"
    print(f"{counted(len(result.frame), 'run')} in {result.wall_s:.0f} s; report: {report}")
    return 1 if report_failures(result.frame) else 0


@_one_study_per_folder
def cmd_reproduce_upas(args: argparse.Namespace) -> int:
    from wattsched.experiments.sweep import report_failures
    from wattsched.experiments.upas import run_experiment
    from wattsched.workloads.pwa import find_pwa

    _check_output_folders(args, ("results.csv", "timing.json"))
    logging.getLogger("wattsched").setLevel(logging.INFO if args.verbose else logging.WARNING)
    # a mistyped --pwa is refused with --synthetic too (which reads no log)
    found = find_pwa(args.pwa) if args.pwa is not None or not args.synthetic else None
    pwa = None if args.synthetic else found
    if not args.quiet:
        print(f"Parallel Workloads Archive logs: {pwa if pwa is not None else 'not used, synthetic traces'}",
              file=sys.stderr)
    result = run_experiment(args.out, report_dir=args.report_dir,
                            machines=args.machines, pwa=args.pwa,
                            synthetic=args.synthetic or pwa is None, full=args.full, nb_jobs=args.jobs,
                            seed=args.seed, workers=args.workers, force=args.force,
                            show_progress=False if args.quiet else None,
                            note=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{counted(len(result.frame), 'run')} in {result.wall_s:.0f} s; report: {result.report}")
    return 1 if report_failures(result.frame) else 0


@_one_study_per_folder
def cmd_reproduce_eamc(args: argparse.Namespace) -> int:
    from wattsched.experiments.eamc import run_experiment
    from wattsched.experiments.sweep import report_failures

    _check_output_folders(args, ("results.csv", "summary.csv", "timing.json"))
    logging.getLogger("wattsched").setLevel(logging.INFO if args.verbose else logging.WARNING)
    result = run_experiment(args.out, report_dir=args.report_dir, full=args.full, scale=args.scale, seeds=args.seeds,
                            seed=args.seed, mixes=args.mixes.split(","), workers=args.workers, force=args.force,
                            show_progress=False if args.quiet else None)
    inputs = result.inputs
    print(f"{counted(len(result.frame), 'run')} ({inputs.hosts_per_partition} + {inputs.hosts_per_partition} nodes, "
          f"{counted(inputs.nb_jobs, 'job')} per workload) in {result.wall_s:.0f} s; report: {result.report}")
    return 1 if report_failures(result.frame) else 0


#: The help of the options every study shares, said the same way everywhere.
HELP_WORKERS = "simulations at once in local processes, 1 to 256 (default: the number of CPUs)"
HELP_FORCE = "simulate again runs whose outputs exist (by default they are reused)"
HELP_QUIET = "no progress (a bar on a terminal, else a line per finished run)"
HELP_QUIET_NOTES = "no progress (a bar on a terminal, else a line per finished run) nor step notes on standard error"
HELP_PWA = ("folder of Parallel Workloads Archive logs (default: $WATTSCHED_PWA, else shared/data/pwa beside the "
            "repository; synthetic traces when neither holds them)")
HELP_REPORT_DIR = "folder of report.md and the figures (default: --out)"


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run a grid of simulations on Dask, resumably, into one table and plots",
                       description="Run every simulation of GRID (a YAML grid of platforms x workloads x seeds x "
                                   "schedulers x options: see wattsched.experiments.grid and docs/study.yaml; or a "
                                   "JSON list of runs) on the embedded simulator, on a local Dask cluster (or the "
                                   "Dask scheduler of --dask-scheduler). A run whose outputs exist is not run again "
                                   "(runs are keyed by a hash of their inputs; --force runs them). Writes "
                                   "OUT/results.csv and OUT/results.parquet (metrics and options of every run) and "
                                   "comparison plots in OUT/plots; a failed run is reported and the others go on "
                                   "(exit 1). One sweep at a time in a folder: another started with the same --out "
                                   "while this one runs is refused.",
                       epilog="examples:\n"
                              "  wattsched sweep docs/study.yaml --out results/study -j 2\n"
                              "  wattsched sweep runs.json --out results/runs --dask-scheduler tcp://head:8786")
    p.add_argument("runs", metavar="GRID", type=named("a grid file (.yaml, .yml) or a JSON list of runs (.json)"),
                   help="a YAML grid (.yaml/.yml) or a JSON list of runs (.json)")
    p.add_argument("--out", type=OUT_FOLDER, default="results/sweep", metavar="DIR",
                   help="folder of the runs, the table and the plots (default results/sweep)")
    p.add_argument("-j", "--workers", type=workers, metavar="N",
                   help="simulations at once: processes of the local Dask cluster, 1 to 256 (default: the number "
                        "of CPUs); not with --dask-scheduler")
    p.add_argument("--dask-scheduler", metavar="ADDRESS",
                   type=named("a Dask scheduler's address such as tcp://host:8786"),
                   help="run on this Dask scheduler (tcp://host:8786) instead of a local cluster; its workers must "
                        "see the same files")
    p.add_argument("--force", action="store_true", help=HELP_FORCE)
    p.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("reproduce", help="reproduce a paper's experiment (report, tables and figures)",
                       description="Reproduce the evaluation of one of the papers the presets implement: inputs, "
                                   "runs (resumable: runs already done are reused), report.md with the paper's "
                                   "numbers beside ours, tables and figures. 'wattsched reproduce PAPER --help' "
                                   "documents each.",
                       epilog="examples:\n"
                              "  wattsched reproduce esc --out results/esc -j 2\n"
                              "  wattsched reproduce energy-budget --machines sdsc-blue --synthetic -q")
    papers = p.add_subparsers(dest="paper", metavar="PAPER", required=True)
    e = papers.add_parser("energy-budget", help="energy-budget paper §V: energyBud, reducePC, powercap, shutdown",
                          description="The energy-budget paper's §V: one-week workloads, a 3-day budget window, "
                                      "budgets 100 … 30 %, energyBud / reducePC / powercap with and without "
                                      "opportunistic shutdown, plus EASY, on SDSC-Blue, MetaCentrum and Curie "
                                      "(reduced sizes unless --full). The busiest week of the real SDSC-Blue log "
                                      "(and of Curie's with --full) when the archive's logs are found, synthetic "
                                      "weeks otherwise. Writes results.csv, report.md and figures 2-5.",
                          epilog="examples:\n"
                                 "  wattsched reproduce energy-budget --out results/energy-budget -j 2\n"
                                 "  wattsched reproduce energy-budget --machines sdsc-blue --scale 0.05 --synthetic\n"
                                 "  wattsched reproduce energy-budget --swf sdsc-blue=blue.swf.gz:0 --machines "
                                 "sdsc-blue")
    e.add_argument("--out", type=OUT_FOLDER, default="results/energy-budget", metavar="DIR",
                   help="output folder (default results/energy-budget)")
    e.add_argument("--full", action="store_true",
                   help="the paper's machine sizes (1,152, 3,356, 80,640 hosts); not with --scale")
    e.add_argument("--scale", type=positive_float, metavar="FRACTION",
                   help="fraction of each machine's hosts, in (0, 1], at least 16 hosts (default: SDSC-Blue 144, "
                        "MetaCentrum 420, Curie 1,260 hosts)")
    e.add_argument("--machines", type=_name_list, metavar="NAMES",
                   help="comma-separated subset of sdsc-blue,metacentrum,curie (default all)")
    e.add_argument("--swf", action="append", default=[], metavar="NAME=PATH[:START_S]",
                   help="use one week of this SWF trace for machine NAME (at its full size; its busiest week "
                        "unless START_S, in trace seconds, is given); once per machine")
    e.add_argument("--pwa", metavar="DIR", type=PWA_FOLDER,
                   help=HELP_PWA + "; SDSC-Blue and Curie take their busiest week when found")
    e.add_argument("--synthetic", action="store_true", help="synthetic weeks even when the logs are found")
    e.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="seed of the synthetic weeks, an integer ≥ 0 (default 1)")
    e.add_argument("--load", type=positive_float, default=0.95,
                   help="initial offered load of synthetic weeks, raised by 0.1 (up to 1.35) until EASY keeps the "
                        "machine more than 70 %% busy (default 0.95)")
    e.add_argument("-j", "--workers", type=workers, metavar="N", help=HELP_WORKERS)
    e.add_argument("--force", action="store_true", help=HELP_FORCE)
    e.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET)
    e.set_defaults(func=cmd_reproduce_energy_budget)

    e = papers.add_parser("efs", help="EFS paper §IV: FairShare, EnergyFairShare, FS+EFS (Light-ESP, table I)",
                          description="The EnergyFairShare paper's §IV: (1) Light-ESP x4 with three users of the same "
                                      "workload and energy factors 0.7/1.0/1.3 under FIFO, FS, EFS and FS+EFS (figure "
                                      "2); (2) three users with different workloads (figure 3); (3) table I: SDSC-SP2, "
                                      "PIK-IPLEX and Curie with each of their 20 most active users in turn 30 % greener "
                                      "or more gluttonous, stretch normalized by the FairShare baseline. Real SDSC-SP2 "
                                      "and Curie logs are used when found (--pwa), synthetic traces otherwise; reduced "
                                      "size (busiest weeks) unless --full. Writes report.md, tables and figures.",
                          epilog="examples:\n"
                                 "  wattsched reproduce efs --out results/efs -j 2\n"
                                 "  wattsched reproduce efs --parts table1 --traces sdsc --weeks 2 --users 5")
    e.add_argument("--out", type=OUT_FOLDER, default="results/efs", metavar="DIR",
                   help="output folder (default results/efs)")
    e.add_argument("--pwa", metavar="DIR", type=PWA_FOLDER, help=HELP_PWA)
    e.add_argument("--parts", type=_name_list, default="lightesp,table1", metavar="PARTS",
                   help="comma-separated lightesp and/or table1 (default both); an option of a part left out is "
                        "refused (--seeds is lightesp's; --traces, --full, --weeks, --users, --seed and --pwa "
                        "table1's)")
    e.add_argument("--traces", type=_name_list, metavar="NAMES",
                   help="comma-separated subset of sdsc,pik,curie for table I (default all)")
    e.add_argument("--full", action="store_true", help="whole logs (hours for Curie); synthetic PIK-IPLEX of 52 weeks")
    e.add_argument("--weeks", type=positive_int, metavar="N",
                   help="weeks of every trace, overriding --full (default: 8 SDSC-SP2, 4 PIK-IPLEX, 1 Curie)")
    e.add_argument("--users", type=positive_int, default=_EFS_USERS, metavar="N",
                   help="most active users of each trace made green, then gluttonous, in turn (default 20)")
    e.add_argument("--seeds", type=positive_int, default=_EFS_SEEDS, metavar="N",
                   help="Light-ESP submission orders, seeds 1 to N (default 5)")
    e.add_argument("--seed", type=non_negative_int, default=_EFS_SEED, metavar="S",
                   help="seed of the synthetic traces, an integer ≥ 0 (default 1)")
    e.add_argument("--charge", choices=("end", "running"), default="end",
                   help="when FS, EFS and FS+EFS charge usage: when a job ends (the paper's, default) or while it "
                        "runs (a sensitivity study)")
    e.add_argument("-j", "--workers", type=workers, metavar="N", help=HELP_WORKERS)
    e.add_argument("--force", action="store_true", help=HELP_FORCE)
    e.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET_NOTES)
    e.set_defaults(func=cmd_reproduce_efs)

    e = papers.add_parser("esc", help="ESC paper §3: NASA and OSC, always-on against EnergySaving Cluster",
                          description="The ESC paper's §3: the NASA iPSC/860 log (128 nodes, 92 days; the real log "
                                      "when --pwa, $WATTSCHED_PWA or shared/data/pwa beside the repository holds "
                                      "NASA-iPSC-1993-3.1-cln.swf.gz, else a synthetic NASA-like one) and a synthetic "
                                      "OSC-like log (57 nodes, 677 days), each always-on and with ESC (defaults, and a "
                                      "grid of idle times and upper wait thresholds), at the paper's full sizes. Writes "
                                      "results.csv, Paraver traces of the ESC runs, report.md with tables 1 and 2 beside "
                                      "the paper's, and figures (active nodes over time, a day of node states, the grid).",
                          epilog="examples:\n"
                                 "  wattsched reproduce esc --out results/esc -j 2\n"
                                 "  wattsched reproduce esc --days 7 --no-grid --out results/esc-week")
    e.add_argument("--out", type=OUT_FOLDER, default="results/esc", metavar="DIR",
                   help="output folder of the runs (default results/esc)")
    e.add_argument("--report-dir", type=REPORT_FOLDER, metavar="DIR", help=HELP_REPORT_DIR)
    e.add_argument("--pwa", metavar="DIR", type=PWA_FOLDER, help=HELP_PWA)
    e.add_argument("--full", action="store_true", help="also the synthetic NASA-like log when the real one is found")
    e.add_argument("--no-grid", action="store_true", help="only always-on and ESC with its defaults")
    e.add_argument("--days", type=days, metavar="DAYS",
                   help="shorten every log to this many days, a quick look (default: the whole logs, 92 and 677 "
                        "days)")
    e.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="seed of the synthetic logs, an integer ≥ 0 (default 1)")
    e.add_argument("-j", "--workers", type=workers, metavar="N", help=HELP_WORKERS)
    e.add_argument("--force", action="store_true", help=HELP_FORCE)
    e.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET)
    e.set_defaults(func=cmd_reproduce_esc)

    e = papers.add_parser("upas", help="UPAS paper §4: utilization-driven DVFS on EASY, original and enlarged machines",
                          description="The UPAS paper's §4: EASY and EASY + UPAS (WQ_threshold 0, 4, 16 and no limit; T "
                                      "= 10 min) on CTC (430 processors), SDSC (128), SDSC-Blue (1,152), LLNL-Thunder "
                                      "(4,008) and LLNL-Atlas (9,216), 5,000 jobs each (the real logs' jobs 20K-25K, SDSC's "
                                      "40K-45K, LLNL-Atlas's 10K-15K, when --pwa, $WATTSCHED_PWA or shared/data/pwa "
                                      "beside the repository holds them, else "
                                      "synthetic traces shaped like table 1), a beta per job; then the machines enlarged "
                                      "by 10, 20, 50 and 75 % (WQ 0 and no limit); checks of T = 1 h and of the worst "
                                      "case beta = 1. Writes results.csv, report.md with the paper's numbers beside ours "
                                      "and figures shaped like 1-7. The paper's own sizes take a few minutes: there is "
                                      "no reduced default (--jobs shortens the traces for a quick look).",
                          epilog="examples:\n"
                                 "  wattsched reproduce upas --out results/upas --report-dir docs/results/upas -j 2\n"
                                 "  wattsched reproduce upas --machines sdsc,ctc --jobs 500 --synthetic -q")
    e.add_argument("--out", type=OUT_FOLDER, default="results/upas", metavar="DIR",
                   help="output folder of the runs (default results/upas)")
    e.add_argument("--report-dir", type=REPORT_FOLDER, metavar="DIR", help=HELP_REPORT_DIR)
    e.add_argument("--pwa", metavar="DIR", type=PWA_FOLDER, help=HELP_PWA)
    e.add_argument("--synthetic", action="store_true", help="synthetic traces shaped like table 1 even when logs are found")
    e.add_argument("--machines", type=_name_list, metavar="NAMES",
                   help="comma-separated subset of ctc,sdsc,sdsc-blue,llnl-thunder,llnl-atlas (default all)")
    e.add_argument("--full", action="store_true",
                   help="also WQ 4 and 16 on the enlarged machines, T = 1 h everywhere, and two more beta seeds")
    e.add_argument("--jobs", type=positive_int, default=5000, metavar="N",
                   help="jobs per trace (default 5000, the paper's)")
    e.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="seed of the betas and of synthetic traces, an integer ≥ 0 (default 1)")
    e.add_argument("-j", "--workers", type=workers, metavar="N", help=HELP_WORKERS)
    e.add_argument("--force", action="store_true", help=HELP_FORCE)
    e.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET_NOTES)
    e.set_defaults(func=cmd_reproduce_upas)
    e = papers.add_parser("eamc", help="EAMC paper §5: EAMC's variants, Base, Min runtime and Min energy on p1/p2",
                          description="The EAMC paper's §5 on its p1/p2 system (p1: Platinum 8168 nodes at 1.2-2.7 "
                                      "GHz, p2: Gold 6254 nodes at 1.2-3.1 GHz, the EAR model of the authors' data): "
                                      "workloads of 13, 33 and 50 % jobs favouring p2, EAMC-Reorder, -PriorityInc and "
                                      "-PriorityInc-V at t_weight 1 and 1.5 (and PriorityInc-V with the published "
                                      "plugin's scores), Base Slurm, Min runtime and Min energy, each on several seeds. "
                                      "Reduced size unless --full (512 + 512 nodes, 5,000 jobs). Writes results.csv, "
                                      "summary.csv, report.md with the paper's statements beside ours, and figures "
                                      "shaped like figures 3-5.",
                          epilog="examples:\n"
                                 "  wattsched reproduce eamc --out results/eamc --report-dir docs/results/eamc -j 2\n"
                                 "  wattsched reproduce eamc --scale 0.2 --seeds 1 --mixes 13,50 -q")
    e.add_argument("--out", type=OUT_FOLDER, default="results/eamc", metavar="DIR",
                   help="output folder of the runs (default results/eamc)")
    e.add_argument("--report-dir", type=REPORT_FOLDER, metavar="DIR", help=HELP_REPORT_DIR)
    e.add_argument("--full", action="store_true",
                   help="the paper's size: 512 + 512 nodes, 5,000 jobs per workload; not with --scale")
    e.add_argument("--scale", type=positive_float, metavar="FRACTION",
                   help="fraction of the paper's nodes and jobs, in (0, 1]; not with --full (default 0.5: 256 + 256 "
                        "nodes, 2,500 jobs); one too small for the paper's mean job size on its nodes is refused, "
                        "naming the smallest that works")
    e.add_argument("--seeds", type=positive_int, default=3, metavar="N", help="workloads per mix (default 3)")
    e.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="first seed: the workloads use seeds S to S+N-1, N being --seeds (default 1)")
    e.add_argument("--mixes", default="13,33,50", metavar="MIXES",
                   help="comma-separated subset of 13,33,50, the share of jobs favouring p2 (default all)")
    e.add_argument("-j", "--workers", type=workers, metavar="N", help=HELP_WORKERS)
    e.add_argument("--force", action="store_true", help=HELP_FORCE)
    e.add_argument("-q", "--quiet", action="store_true", help=HELP_QUIET)
    e.set_defaults(func=cmd_reproduce_eamc)
