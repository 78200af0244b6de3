"""``wattsched synth``, ``swf``, ``lightesp``, ``beta``, ``eamc-workload`` and ``platform``: the workloads and
platforms a study runs on."""

from __future__ import annotations

import argparse
import dataclasses
import json

from wattsched.base.errors import InputError, OptionError, OutputError
from wattsched.base.fileio import emit_text
from wattsched.base.validate import check_count, number, option_error
from wattsched.cli.common import (add_output_argument, days, integer, named, non_negative_int, positive_float,
                                  positive_int, time_in, window)


def cmd_synth(args: argparse.Namespace) -> int:
    from wattsched.workloads.synthetic import DEFAULT_MODEL, synthetic_week, walltime_problem

    model = DEFAULT_MODEL
    if args.min_runtime is not None or args.max_runtime is not None:
        low_s, high_s = model.runtime_range_s
        low_s = low_s if args.min_runtime is None else args.min_runtime
        high_s = high_s if args.max_runtime is None else args.max_runtime
        if not 1 <= low_s <= high_s:
            raise OptionError(f"--min-runtime {low_s:g} --max-runtime {high_s:g}: the shortest run time must be at "
                              "least 1 s and at most the longest")
        model = dataclasses.replace(model, runtime_range_s=(
            low_s if args.min_runtime is None else args.min_runtime,
            high_s if args.max_runtime is None else args.max_runtime,
        ))
        problem = walltime_problem(model)
        if problem is not None:
            raise OptionError(f"--max-runtime {high_s:g}: {problem}")
    workload = synthetic_week(args.hosts, seed=args.seed, duration_s=args.days * 86400.0, target_load=args.load,
                              speed_flops=args.speed, users=args.users, model=model)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def cmd_swf(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from wattsched.workloads.swf import require_jobs, summary_line, swf_to_batsim
    from wattsched.workloads.traces import fetch_trace

    if args.hosts is not None:  # before --busiest reads the trace
        check_count(args.hosts, "hosts", "option --hosts", "", "hosts", option_error)
    source = Path(args.swf)
    if not source.exists() and "/" not in args.swf and _names_a_trace(args.swf):
        source = fetch_trace(args.swf, mirror=args.mirror, download=False)  # a name of 'wattsched traces'
    elif args.mirror is not None:  # it would be silently ignored (even a mirror that does not exist)
        raise OptionError(f"--mirror {args.mirror}: only with a trace name of 'wattsched traces' ({args.swf} is read "
                          "as a file)")
    _check_output_not_input(args.output, source, "SWF trace")
    start_s, duration_s = (None, None) if args.window is None else (args.window[0], args.window[1] - args.window[0])
    if args.busiest is not None:
        from wattsched.workloads.swf import busiest_window, header_hosts

        if args.window is not None:
            raise OptionError("--busiest and --window: give one of them")
        hosts = args.hosts or header_hosts(source, args.procs_per_host)
        if hosts is None:
            raise OptionError(f"--busiest: {source} has no MaxProcs header; give --hosts")
        duration_s = args.busiest * 86400.0
        start_s, load = busiest_window(source, nb_hosts=hosts, duration_s=duration_s, step_s=86400.0,
                                       procs_per_host=args.procs_per_host)
        print(f"busiest {args.busiest:g} days: from {start_s:.0f} s, offered load {load:.3g}", file=sys.stderr)
    workload = swf_to_batsim(source, speed_flops=args.speed, nb_hosts=args.hosts, max_jobs=args.max_jobs,
                             start_time_s=start_s, duration_s=duration_s, procs_per_host=args.procs_per_host,
                             job_numbers=args.job_numbers, walltime_rule=args.walltime,
                             too_large=args.too_large, no_runtime=args.no_runtime)
    require_jobs(workload, source)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    print(summary_line(workload), file=sys.stderr)
    return 0


def _names_a_trace(text: str) -> bool:
    """Whether ``swf TEXT`` (no such file here) is a trace of 'wattsched traces': a name without a trace file's
    suffix (an unknown one is refused with the catalogue's names), or a catalogue file's name, ``.swf.gz`` or
    ``.swf`` (``NASA-iPSC-1993-3.1-cln.swf.gz``, as 'wattsched traces' shows it; it was read as a missing file).
    Any other ``.swf`` or ``.gz`` name is a file, refused as missing."""
    from wattsched.workloads.traces import find_trace

    if not text.lower().endswith((".swf", ".gz")):
        return True
    try:
        find_trace(text)
    except OptionError:
        return False
    return True


def job_range(text: str) -> tuple[int, int]:
    """``--job-numbers FIRST,LAST``: two job numbers, LAST not before FIRST."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected FIRST,LAST job numbers, got {text[:40]!r}")
    first, last = (integer(part, "FIRST,LAST job numbers", text) for part in parts)
    if last < first:
        raise argparse.ArgumentTypeError(f"last job number {last} is before the first {first}")
    return first, last


def procs_per_host(text: str) -> int | str:
    """``--procs-per-host N|node``."""
    return "node" if text == "node" else positive_int(text)


def walltime_rule(text: str) -> str:
    from wattsched.workloads.swf import _walltime_rule

    try:
        _walltime_rule(text)
    except OptionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def cmd_traces(args: argparse.Namespace) -> int:
    import os
    import sys

    from wattsched.workloads.traces import ARCHIVE_URL, ENV_URL, TRACES, cache_folder, fetch_trace, find_trace

    if args.action == "list":
        if args.names:
            raise OptionError("'wattsched traces' lists every trace; 'wattsched traces fetch NAME' fetches one")
        if args.mirror is not None or args.quiet:  # they would be ignored: say so rather than list
            option = "--mirror" if args.mirror is not None else "--quiet"
            raise OptionError(f"{option} applies to 'wattsched traces fetch' only (the list reads no file)")
        from rich.console import Console
        from rich.table import Table

        table = Table(title="Parallel Workloads Archive logs (cleaned versions)")
        for column in ("name", "machine", "processors", "jobs", "period", "used by", "file"):
            table.add_column(column, justify="right" if column in ("processors", "jobs") else "left")
        for t in TRACES:
            table.add_row(t.name, t.machine, f"{t.processors:,}", f"{t.jobs:,}", t.period, t.papers, t.file)
        Console(width=max(160, Console().width)).print(table)
        base = args.url or os.environ.get(ENV_URL)
        where = f"{base.rstrip('/')}/<file>" if base else f"{ARCHIVE_URL}/<folder>/<file>"
        print(f"download: {where}; cache {cache_folder(args.cache)}; "
              "sha256 checked ('wattsched traces --sha256' shows them)")
        if args.sha256:
            for t in TRACES:
                print(f"{t.sha256}  {t.file}")
        return 0
    if not args.names:
        raise OptionError("'wattsched traces fetch' needs trace names ('wattsched traces' lists them)")
    if args.url is not None and not args.url.strip():  # not "no URL": the archive would be used instead
        raise OptionError("--url '': an empty URL; give the folder URL to download from, or leave --url out")
    traces = [find_trace(name) for name in args.names]  # every name checked before any download
    if args.sha256:  # it would be ignored, as --mirror and --quiet by the list: say so rather than fetch
        raise OptionError("--sha256 applies to the list only ('wattsched traces --sha256'); 'fetch' checks every "
                          "file's sha256 itself")
    for trace in traces:
        path = fetch_trace(trace, mirror=args.mirror, cache=args.cache, base_url=args.url,
                           progress=not args.quiet and sys.stderr.isatty())
        print(path)
    return 0


def efficiencies(text: str) -> tuple[float, float, float]:
    """``--efficiencies G,N,L``: three energy factors > 0, in ASCII (:func:`~wattsched.base.validate.number`)."""
    values = tuple(number(x, "three numbers like 0.7,1.0,1.3", text) for x in text.split(","))
    if len(values) != 3 or not all(0 < v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"expected three numbers > 0 like 0.7,1.0,1.3, got {text!r}")
    return values[0], values[1], values[2]


def walltime_factor(text: str) -> float:
    """``--walltime-factor F``: a finite number ≥ 1 (a walltime shorter than the run time would kill every job);
    refused as a usage error naming the option, which :func:`~wattsched.workloads.lightesp.light_esp`'s
    ``walltime_factor must be at least 1`` did not."""
    value = number(text, "a number ≥ 1")
    if not 1.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number ≥ 1 (walltime / run time), got {text[:40]!r}")
    return value


def cmd_lightesp(args: argparse.Namespace) -> int:
    from wattsched.workloads.lightesp import DEFAULT_EFFICIENCIES, light_esp

    if args.efficiencies is not None and args.users != "same-workload":  # it would be silently ignored
        raise OptionError("--efficiencies: only with --users same-workload (with different-workloads every user's "
                          "energy factor is 1)")
    efficiencies = DEFAULT_EFFICIENCIES if args.efficiencies is None else args.efficiencies
    workload = light_esp(copies=args.copies, users=args.users, efficiencies=efficiencies, seed=args.seed,
                         hosts_per_node=args.hosts_per_node, period_s=args.period,
                         walltime_factor=args.walltime_factor, speed_flops=args.speed)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def cmd_platform(args: argparse.Namespace) -> int:
    from wattsched.platforms.generate import (eamc_platform_xml, esc_platform_xml, host_name_part_problem,
                                              taurus_platform_xml, upas_platform_xml)

    if args.top_power is not None and args.node != "upas":
        raise OptionError("--top-power: only for --node upas")
    for option, text in (("prefix", args.prefix), ("suffix", args.suffix)):
        problem = None if text is None else host_name_part_problem(text)
        if problem is not None:  # said of the option (the generator names the host name prefix or suffix)
            raise OptionError(f"--{option}: host name {option} {text!r} {problem}")
    if args.node == "eamc":
        if args.flat or args.prefix is not None or args.suffix:
            raise OptionError("--node eamc writes one <cluster> per partition (hosts p1-0 ..., p2-0 ...): "
                              "--flat, --prefix and --suffix do not apply")
        text = eamc_platform_xml((args.hosts, args.hosts))
    elif args.node == "upas":
        prefix = "cpu" if args.prefix is None else args.prefix
        text = upas_platform_xml(args.hosts, top_power_w=args.top_power or 100.0, prefix=prefix, suffix=args.suffix,
                                 cluster=not args.flat)
    else:
        prefix = args.prefix if args.prefix is not None else {"esc": "node"}.get(args.node, "taurus-")
        generate = esc_platform_xml if args.node == "esc" else taurus_platform_xml
        text = generate(args.hosts, prefix=prefix, suffix=args.suffix, cluster=not args.flat)
    _check_generated_platform(text, args)
    emit_text(text, args.output)
    return 0


def _check_generated_platform(text: str, args: argparse.Namespace) -> None:
    """The platform ``wattsched platform`` is about to write is one ``wattsched run`` reads (the options can still
    ask for what the loader's limits refuse, e.g. ``--top-power 1e300``: an energy beyond a double).

    Raises:
        OptionError: the loader's error, said of the command's options.
    """
    from wattsched.simulator.platform import parse_platform

    try:
        parse_platform(text.encode("utf-8"), "the generated platform")
    except InputError as exc:
        options = f"--node {args.node} --hosts {args.hosts}" + (
            f" --top-power {args.top_power:g}" if args.top_power is not None else "")
        raise OptionError(f"{options}: {exc}") from None


def cmd_eamc_workload(args: argparse.Namespace) -> int:
    from wattsched.workloads.eamc import eamc_workload

    workload = eamc_workload(seed=args.seed, mix=args.mix, nb_jobs=args.jobs, max_res=args.max_res,
                             span_days=args.days, mean_res=args.mean_res, mean_runtime_s=args.mean_runtime_h * 3600.0)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def _check_output_not_input(output: str | None, source: object, what: str) -> None:
    """Refuse, before any work, an ``--output`` that is the input file (``swf t.swf --output t.swf`` replaced the
    trace by its workload, ``beta w.json --output w.json`` the workload by its betas), also through a link.

    Raises:
        OutputError: naming ``--output`` and the input.
    """
    from wattsched.experiments.runner import file_identity

    if output is not None and file_identity(output) == file_identity(str(source)):
        raise OutputError(f"--output {output}: {output} is the input {what} {source}: writing would replace it; "
                          "give another file")


def cmd_beta(args: argparse.Namespace) -> int:
    from wattsched.simulator.workload import load_workload_document
    from wattsched.workloads.upas import beta_workload

    _check_output_not_input(args.output, args.workload, "workload")
    # read once: the checks of `wattsched run` (what Batsim refuses) before any beta is drawn, then the document
    _, document = load_workload_document(args.workload)
    workload = beta_workload(document, seed=args.seed, speed_flops=args.speed, base_speed_flops=args.base_speed,
                             source=args.workload)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


#: The ``type`` of ``--mirror``: an empty one was read as none (the default mirror, or a download).
MIRROR = named("a folder of the archive's files, or leave --mirror out")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="generate a seeded synthetic HPC workload (Lublin-Feitelson style)",
                       description="Write a seeded synthetic HPC workload (Lublin & Feitelson 2003: job sizes, run "
                                   "times, walltimes, daily and weekly arrival cycles, users) as Batsim JSON, for a "
                                   "machine of --hosts hosts: jobs are drawn until their offered load reaches --load. "
                                   "The same options and seed give the same workload. Model: docstring of "
                                   "wattsched.workloads.synthetic.",
                       epilog="examples:\n"
                              "  wattsched synth --hosts 16 --seed 1 --days 1 --output w.json\n"
                              "  wattsched synth --hosts 1152 --seed 2 --load 0.9 --min-runtime 120 --max-runtime 1800 "
                              "> week.json")
    p.add_argument("--hosts", type=positive_int, required=True, metavar="N",
                   help="machine size in hosts (required); every job asks 1 to N hosts")
    p.add_argument("--seed", type=non_negative_int, required=True, metavar="S",
                   help="random seed, an integer ≥ 0 (required)")
    add_output_argument(p, "the workload (Batsim JSON)")
    p.add_argument("--days", type=days, default=7.0,
                   help="submission period in days, > 0, at most 3660 (WATTSCHED_LIMIT_DAYS); default 7")
    p.add_argument("--load", type=positive_float, default=0.85,
                   help="target offered load: the jobs' hosts × run time over the machine's hosts × period, > 0 "
                        "(default 0.85)")
    p.add_argument("--speed", type=positive_float, default=100e6, metavar="FLOPS",
                   help="host speed in flop/s: a job's work is its run time × FLOPS (default 100e6, the Taurus "
                        "platforms')")
    p.add_argument("--users", type=positive_int, default=50, metavar="N",
                   help="number of users, ids 1 to N (default 50)")
    p.add_argument("--min-runtime", type=positive_float, metavar="S",
                   help="shortest run time in seconds, at least 1 (default 1)")
    p.add_argument("--max-runtime", type=positive_float, metavar="S",
                   help="longest run time in seconds, at least --min-runtime (default 129600 = 36 h)")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("swf", help="convert an SWF trace (Parallel Workloads Archive) to a Batsim workload",
                       description="Convert an SWF trace (Standard Workload Format, Parallel Workloads Archive; "
                                   "plain or gzip-compressed) into a Batsim JSON workload: one job per trace line, "
                                   "run time as flops at --speed, user and group kept. The header's MaxProcs is the "
                                   "default machine size. Prints one line on standard error: jobs kept, dropped by "
                                   "reason, walltimes given by --walltime, run times cut to the walltime. Rules: "
                                   "docstring of wattsched.workloads.swf.",
                       epilog="examples:\n"
                              "  wattsched swf sdsc-blue --window 0,604800 --output blue-week1.json\n"
                              "  wattsched swf NASA-iPSC-1993-3.1-cln.swf.gz --busiest 7 --output nasa.json\n"
                              "  wattsched swf trace.swf --hosts 128 --too-large keep --walltime factor:2")
    p.add_argument("swf", type=named("an SWF trace file or a trace name ('wattsched traces' lists them)"),
                   help="input .swf or .swf.gz trace, or a name or file name of 'wattsched traces' (when no such "
                        "file is here: read from the mirror or the cache, never downloaded: 'wattsched traces fetch "
                        "NAME' downloads it)")
    add_output_argument(p, "the workload (Batsim JSON)")
    p.add_argument("--speed", type=positive_float, default=100e6, metavar="FLOPS",
                   help="host speed in flop/s: a job's work is its run time × FLOPS (default 100e6, the Taurus "
                        "platforms')")
    p.add_argument("--hosts", type=positive_int, metavar="N",
                   help="machine size in hosts (default: the header's MaxProcs / --procs-per-host, else the widest "
                        "job)")
    p.add_argument("--max-jobs", type=positive_int, metavar="N", help="keep at most N jobs (default: all)")
    p.add_argument("--window", type=window, metavar="START,END",
                   help="keep the jobs submitted from START to END, in seconds of trace time (shifted to start at "
                        "0); not with --busiest")
    p.add_argument("--busiest", type=time_in(86400.0, "days"), metavar="DAYS",
                   help="keep the DAYS-long extract (starting at a whole day) with the highest offered load; needs "
                        "the header's MaxProcs or --hosts; not with --window")
    p.add_argument("--job-numbers", type=job_range, metavar="FIRST,LAST",
                   help="keep the jobs whose SWF job number is in [FIRST, LAST]")
    p.add_argument("--procs-per-host", type=procs_per_host, default=1, metavar="N|node",
                   help="trace processors per host (default 1, the papers' count; 'node': MaxProcs/MaxNodes)")
    p.add_argument("--walltime", type=walltime_rule, default="runtime", metavar="RULE",
                   help="walltime of jobs without a requested time: runtime (default, a perfect estimate), none "
                        "(never killed, no estimate for EASY), factor:F (F x run time, F ≥ 1), limit:S (S seconds, "
                        "at least the run time)")
    p.add_argument("--too-large", choices=("drop", "keep", "error"), default="drop",
                   help="jobs wider than the machine: drop (default), keep (the scheduler rejects them) or error")
    p.add_argument("--no-runtime", choices=("drop", "keep", "error"), default="drop",
                   help="jobs with a run time <= 0 (cancelled or not): drop (default), keep (zero work) or error")
    p.add_argument("--mirror", metavar="DIR", type=MIRROR,
                   help="with a trace of 'wattsched traces' only: folder of the archive's logs, looked in before "
                        "the cache (default $WATTSCHED_PWA, else shared/data/pwa beside the repository)")
    p.set_defaults(func=cmd_swf)

    p = sub.add_parser("traces", help="the Parallel Workloads Archive logs the papers used: list, fetch (sha256 checked)",
                       description="List the archive's logs the project knows (the papers' traces), or fetch them: from "
                                   "a mirror folder (--mirror, $WATTSCHED_PWA, or shared/data/pwa beside the "
                                   "repository), else the cache (--cache, $WATTSCHED_TRACES, ~/.cache/wattsched/traces), "
                                   "else a download from the archive (or --url) with a progress bar. Every file is "
                                   "checked against its sha256; 'fetch' prints the path of each checked file. A "
                                   "download fails when slower than 1 KiB/s over a minute "
                                   "($WATTSCHED_LIMIT_DOWNLOAD_MIN_RATE, $WATTSCHED_LIMIT_DOWNLOAD_RATE_WINDOW_S) or "
                                   "longer than the catalogue's size of the file.",
                       epilog="examples:\n"
                              "  wattsched traces\n"
                              "  wattsched traces --sha256\n"
                              "  wattsched traces fetch sdsc-blue nasa-ipsc\n"
                              "  wattsched traces fetch CTC-SP2-1996-3.1-cln.swf.gz --cache data/pwa -q")
    p.add_argument("action", nargs="?", choices=("list", "fetch"), default="list",
                   help="list (default): the catalogue, where files are looked for, and with --sha256 their sha256; "
                        "fetch: find or download each NAME and print its path")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="with fetch: traces to fetch, by name (sdsc-blue) or file name, as the list shows them")
    p.add_argument("--mirror", metavar="DIR", type=MIRROR,
                   help="with fetch: folder of the archive's logs, looked in first (default $WATTSCHED_PWA, else "
                        "shared/data/pwa beside the repository)")
    p.add_argument("--cache", metavar="DIR", type=named("a folder, or leave --cache out for the default cache"),
                   help="the download cache (default $WATTSCHED_TRACES, else ~/.cache/wattsched/traces)")
    p.add_argument("--url", metavar="URL", help="download from this folder URL instead of the archive "
                                               "(default $WATTSCHED_PWA_URL, else the archive's own folders)")
    p.add_argument("--sha256", action="store_true", help="with list: print every file's sha256 too")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar while downloading (fetch only; shown on a terminal)")
    p.set_defaults(func=cmd_traces)

    p = sub.add_parser("lightesp", help="generate the Light-ESP workload of the EFS paper (table II), with users",
                       description="Write COPIES Light-ESP workloads one after the other (EFS paper table II: 230 "
                                   "jobs of 14 types on 15 nodes of 12 cores, node-exclusive; one host per node by "
                                   "default) as Batsim JSON, each job with a 'user' and an 'energy_factor'. "
                                   "Submission rules and user assignment: docstring of wattsched.workloads.lightesp.",
                       epilog="examples:\n"
                              "  wattsched lightesp --output esp.json && wattsched platform --hosts 15 --output esp.xml\n"
                              "  wattsched run esp.xml esp.json -s efs --per-user\n"
                              "  wattsched lightesp --users different-workloads --hosts-per-node 12 --output esp180.json"
                              "   (run on 180 hosts)")
    add_output_argument(p, "the workload (Batsim JSON)")
    p.add_argument("--copies", type=positive_int, default=4, metavar="N",
                   help="Light-ESPs one after the other, one every --period seconds (default 4)")
    p.add_argument("--users", choices=("same-workload", "different-workloads"), default="same-workload",
                   help="same-workload: 3 users with the same jobs and energy factors --efficiencies (paper "
                        "§IV-B.1); different-workloads: 3 users with 1/6, 2/6, 3/6 of the jobs, factor 1 "
                        "(§IV-B.2) (default same-workload)")
    p.add_argument("--efficiencies", type=efficiencies, metavar="G,N,L",
                   help="energy factors (> 0) of users 1, 2, 3, only with --users same-workload (default "
                        "0.7,1.0,1.3)")
    p.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="seed of the submission order, an integer ≥ 0 (default 1)")
    p.add_argument("--hosts-per-node", type=positive_int, default=1, metavar="N",
                   help="hosts per 12-core node, the machine having 15 × N hosts: 1, a host is a node (15 "
                        "hosts), or 12, a host is a core (180 hosts) (default 1)")
    p.add_argument("--period", type=positive_float, default=935.0, metavar="S",
                   help="seconds between the starts of two copies (default 935, table II's theoretical run time)")
    p.add_argument("--walltime-factor", type=walltime_factor, default=1.0, metavar="F",
                   help="walltime / run time of every job, at least 1 (default 1)")
    p.add_argument("--speed", type=positive_float, default=100e6, metavar="FLOPS",
                   help="host speed in flop/s: a job's work is its run time × FLOPS (default 100e6, the Taurus "
                        "platforms')")
    p.set_defaults(func=cmd_lightesp)

    p = sub.add_parser("eamc-workload", help="generate an EAMC-paper workload: jobs with applications and partitions",
                       description="Write a seeded workload like the EAMC paper's (§5): jobs of mean 18.29 nodes and "
                                   "3.65 h at the top frequency of p1, a daily arrival cycle over --days, each job "
                                   "with an EAR application id ('app', 1-8) and the partitions it may use "
                                   "('partitions': p1, p2), the share of STREAM (app 8, which favours p2) set by "
                                   "--mix. Run it on 'wattsched platform --node eamc --hosts N', N being --max-res.",
                       epilog="examples:\n"
                              "  wattsched eamc-workload --mix 33 --seed 1 --output w.json\n"
                              "  wattsched platform --node eamc --hosts 512 --output p.xml\n"
                              "  wattsched run p.xml w.json -s eamc-priority-inc\n"
                              "  wattsched eamc-workload --jobs 500 --max-res 64 --mean-res 4 --days 2 --output small.json")
    add_output_argument(p, "the workload (Batsim JSON)")
    p.add_argument("--mix", choices=("13", "33", "50"), default="13",
                   help="%% of jobs favouring p2: 13 (the 8 applications uniformly), 33 or 50 (that share of "
                        "STREAM); default 13")
    p.add_argument("--seed", type=non_negative_int, default=1, metavar="S",
                   help="random seed, an integer ≥ 0 (default 1)")
    p.add_argument("--jobs", type=positive_int, default=5000, metavar="N",
                   help="number of jobs (default 5000, the paper's)")
    p.add_argument("--max-res", type=positive_int, default=512, metavar="N",
                   help="largest job in nodes, the size of a partition (default 512, the paper's)")
    p.add_argument("--days", type=days, default=10.0,
                   help="submission span in days, > 0, at most 3660 (WATTSCHED_LIMIT_DAYS); default 10")
    p.add_argument("--mean-res", type=positive_float, default=18.29, metavar="NODES",
                   help="mean job size in nodes, at least 1 and reachable with jobs of at most --max-res nodes (default "
                        "18.29, the paper's)")
    p.add_argument("--mean-runtime-h", type=time_in(3600.0, "hours"), default=3.65, metavar="HOURS",
                   help="mean run time in hours at the top frequency of p1 (default 3.65, the paper's)")
    p.set_defaults(func=cmd_eamc_workload)

    p = sub.add_parser("platform", help="generate a Taurus-calibrated, ESC, UPAS or EAMC SimGrid platform of any size",
                       description="Write a SimGrid 4.1 platform of Taurus nodes (energy-budget paper, table I, with "
                                   "Batsim's 13 DVFS pstates, sleep and transition pstates), of the ESC paper's "
                                   "five-state nodes (--node esc: standby 2 W, powering off 480 s using 10.79 Wh, "
                                   "powering on 555 s using 13.71 Wh, idle 150 W, loaded 230 W), of the UPAS paper's "
                                   "processors (--node upas: table 2's six gears 2.3 ... 0.8 GHz as pstates 0-5 at "
                                   "2300 ... 800 Mflop/s, eq. 3's powers for --top-power W running at 2.3 GHz, a 0 W "
                                   "sleep pstate and 1 s transitions) or the EAMC paper's two partitions (--node eamc: "
                                   "p1 of Platinum 8168 nodes at 1.2-2.7 GHz and p2 of Gold 6254 nodes at 1.2-3.1 GHz, "
                                   "one pstate per 0.1 GHz, powers of the EAR model), and a master host. Compute hosts "
                                   "are named PREFIX0 ... PREFIX<N-1>, each followed by SUFFIX (eamc: p1-0 ..., "
                                   "p2-0 ...).",
                       epilog="examples:\n"
                              "  wattsched platform --hosts 16 --output taurus_16.xml\n"
                              "  wattsched platform --node esc --hosts 128 --output esc_128.xml\n"
                              "  wattsched platform --node upas --hosts 1152 --output upas_1152.xml\n"
                              "      (SDSC-Blue; the UPAS paper's machines have 430, 128, 1152, 4008 and 9216 "
                              "processors)\n"
                              "  wattsched platform --node eamc --hosts 256 --output eamc_256.xml     (p1-0 ... p1-255, "
                              "p2-0 ... p2-255)")
    p.add_argument("--hosts", type=positive_int, required=True, metavar="N",
                   help="number of compute hosts (required; --node eamc: hosts per partition, 512 in the paper)")
    add_output_argument(p, "the platform (SimGrid XML)")
    p.add_argument("--node", choices=("taurus", "esc", "upas", "eamc"), default="taurus",
                   help="node model: taurus (energy-budget paper), esc (ESC paper), upas (UPAS paper) or eamc (EAMC "
                        "paper's p1 and p2); default taurus")
    p.add_argument("--top-power", type=positive_float, metavar="W",
                   help="with --node upas only: running power of a processor at the top gear (2.3 GHz), in watts "
                        "(default 100)")
    p.add_argument("--flat", action="store_true",
                   help="one <host> element per host instead of a <cluster> (not with --node eamc)")
    p.add_argument("--prefix", default=None, metavar="TEXT",
                   help="host name prefix (default: taurus- for taurus, node for esc, cpu for upas; not with --node "
                        "eamc)")
    p.add_argument("--suffix", default="", metavar="TEXT",
                   help="host name suffix (default: none; not with --node eamc)")
    p.set_defaults(func=cmd_platform)

    p = sub.add_parser("beta", help="give every job a beta (UPAS paper) and profiles that run T(f) at any gear",
                       description="Write WORKLOAD with a seeded beta per job drawn by job size (UPAS paper §3.4: "
                                   "N(0.5, 0.01) up to 4 CPUs, N(0.4, 0.01) up to 32, N(0.3, 0.0064) above; variances, "
                                   "clipped to [0.01, 1]) and, for every job, a composed profile of beta*T*speed flops "
                                   "then a delay of (1-beta)*T, so that Batsim runs it T(f) = T*(beta*(f_top/f - 1) + 1) "
                                   "at a gear of frequency f (eq. 4). Jobs without walltime get the next whole minute "
                                   "above their run time. Rules: docstring of wattsched.workloads.upas.",
                       epilog="examples:\n"
                              "  wattsched swf trace.swf --speed 2.3e9 --hosts 128 --output w.json\n"
                              "  wattsched beta w.json --seed 1 --output w_beta.json\n"
                              "  wattsched platform --node upas --hosts 128 --output p.xml\n"
                              "  wattsched run p.xml w_beta.json -s upas\n"
                              "  wattsched beta workloads/demo_taurus16.json --seed 1 --base-speed 100e6 --output "
                              "w_beta16.json")
    p.add_argument("workload", type=named("a Batsim JSON workload file"),
                   help="Batsim JSON workload (parallel_homogeneous or delay profiles)")
    add_output_argument(p, "the workload (Batsim JSON)")
    p.add_argument("--seed", type=non_negative_int, required=True, metavar="S",
                   help="seed of the beta draws, an integer ≥ 0 (required)")
    p.add_argument("--speed", type=positive_float, default=2.3e9, metavar="FLOPS",
                   help="flop/s of the top gear the compute parts are written for (default 2.3e9, the UPAS platform's)")
    p.add_argument("--base-speed", type=positive_float, metavar="FLOPS",
                   help="flop/s the input's profiles were written for (default --speed; 100e6 for Taurus workloads)")
    p.set_defaults(func=cmd_beta)
