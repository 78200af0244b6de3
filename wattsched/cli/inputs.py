"""``wattsched synth``, ``swf``, ``lightesp``, ``eamc-workload`` and ``platform``: the workloads and platforms a study
runs on."""

from __future__ import annotations

import argparse
import dataclasses
import json

from wattsched.base.fileio import emit_text
from wattsched.cli.common import add_output_argument, positive_float, positive_int, window


def cmd_synth(args: argparse.Namespace) -> int:
    from wattsched.workloads.synthetic import DEFAULT_MODEL, synthetic_week

    model = DEFAULT_MODEL
    if args.min_runtime is not None or args.max_runtime is not None:
        low_s, high_s = model.runtime_range_s
        model = dataclasses.replace(model, runtime_range_s=(
            low_s if args.min_runtime is None else args.min_runtime,
            high_s if args.max_runtime is None else args.max_runtime,
        ))
    workload = synthetic_week(args.hosts, seed=args.seed, duration_s=args.days * 86400.0, target_load=args.load,
                              speed_flops=args.speed, users=args.users, model=model)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def cmd_swf(args: argparse.Namespace) -> int:
    from wattsched.workloads.swf import swf_to_batsim

    start_s, duration_s = (None, None) if args.window is None else (args.window[0], args.window[1] - args.window[0])
    workload = swf_to_batsim(args.swf, speed_flops=args.speed, nb_hosts=args.hosts, max_jobs=args.max_jobs,
                             start_time_s=start_s, duration_s=duration_s, procs_per_host=args.procs_per_host)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def efficiencies(text: str) -> tuple[float, float, float]:
    """``--efficiencies G,N,L``: three energy factors > 0."""
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected three numbers like 0.7,1.0,1.3, got {text!r}") from None
    if len(values) != 3 or not all(0 < v < float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"expected three numbers > 0 like 0.7,1.0,1.3, got {text!r}")
    return values[0], values[1], values[2]


def cmd_lightesp(args: argparse.Namespace) -> int:
    from wattsched.workloads.lightesp import light_esp

    workload = light_esp(copies=args.copies, users=args.users, efficiencies=args.efficiencies, seed=args.seed,
                         hosts_per_node=args.hosts_per_node, period_s=args.period,
                         walltime_factor=args.walltime_factor, speed_flops=args.speed)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def cmd_eamc_workload(args: argparse.Namespace) -> int:
    from wattsched.workloads.eamc import eamc_workload

    workload = eamc_workload(seed=args.seed, mix=args.mix, nb_jobs=args.jobs, max_res=args.max_res,
                             span_days=args.days, mean_res=args.mean_res, mean_runtime_s=args.mean_runtime_h * 3600.0)
    emit_text(json.dumps(workload, indent=1) + "\n", args.output)
    return 0


def cmd_platform(args: argparse.Namespace) -> int:
    from wattsched.base.errors import OptionError
    from wattsched.platforms.generate import eamc_platform_xml, esc_platform_xml, taurus_platform_xml

    if args.node == "eamc":
        if args.flat or args.prefix is not None or args.suffix:
            raise OptionError("--node eamc writes one <cluster> per partition (hosts p1-0 ..., p2-0 ...): "
                              "--flat, --prefix and --suffix do not apply")
        emit_text(eamc_platform_xml((args.hosts, args.hosts)), args.output)
        return 0
    generate = esc_platform_xml if args.node == "esc" else taurus_platform_xml
    prefix = args.prefix if args.prefix is not None else ("node" if args.node == "esc" else "taurus-")
    emit_text(generate(args.hosts, prefix=prefix, suffix=args.suffix, cluster=not args.flat), args.output)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="generate a seeded synthetic HPC workload (Lublin-Feitelson style)",
                       description="Write a seeded synthetic HPC workload (Lublin & Feitelson 2003: job sizes, run "
                                   "times, daily arrival cycle) as Batsim JSON, for a machine of --hosts hosts.")
    p.add_argument("--hosts", type=positive_int, required=True, help="machine size")
    p.add_argument("--seed", type=int, required=True, help="random seed")
    add_output_argument(p, "output .json")
    p.add_argument("--days", type=positive_float, default=7.0, help="submission period in days (default 7)")
    p.add_argument("--load", type=positive_float, default=0.85, help="target offered load (default 0.85)")
    p.add_argument("--speed", type=positive_float, default=100e6, help="host speed in flop/s (default 100e6)")
    p.add_argument("--users", type=positive_int, default=50, help="number of users (default 50)")
    p.add_argument("--min-runtime", type=positive_float, metavar="S", help="shortest run time in s (default 1)")
    p.add_argument("--max-runtime", type=positive_float, metavar="S",
                   help="longest run time in s (default 129600 = 36 h)")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("swf", help="convert an SWF trace (Parallel Workloads Archive) to a Batsim workload",
                       description="Convert an SWF trace (Standard Workload Format, Parallel Workloads Archive) into "
                                   "a Batsim JSON workload: one job per trace line, run time as flops at --speed.")
    p.add_argument("swf", help="input .swf trace")
    add_output_argument(p, "output .json")
    p.add_argument("--speed", type=positive_float, default=100e6, help="host speed in flop/s (default 100e6)")
    p.add_argument("--hosts", type=positive_int, help="platform size (drops larger jobs)")
    p.add_argument("--max-jobs", type=positive_int, help="keep at most this many jobs")
    p.add_argument("--window", type=window, metavar="START,END",
                   help="keep the jobs submitted in this window of trace seconds (shifted to start at 0)")
    p.add_argument("--procs-per-host", type=positive_int, default=1, help="trace processors per host (default 1)")
    p.set_defaults(func=cmd_swf)

    p = sub.add_parser("lightesp", help="generate the Light-ESP workload of the EFS paper (table II), with users",
                       description="Write COPIES Light-ESP workloads one after the other (EFS paper table II: 230 "
                                   "jobs of 14 types on 15 nodes of 12 cores, node-exclusive; one host per node by "
                                   "default) as Batsim JSON, each job with a 'user' and an 'energy_factor'. "
                                   "Submission rules and user assignment: docstring of wattsched.workloads.lightesp.",
                       epilog="example: wattsched lightesp --output esp.json && wattsched platform --hosts 15 "
                              "--output esp.xml && wattsched run esp.xml esp.json -s efs --per-user")
    add_output_argument(p, "output .json")
    p.add_argument("--copies", type=positive_int, default=4, help="Light-ESPs one after the other (default 4)")
    p.add_argument("--users", choices=("same-workload", "different-workloads"), default="same-workload",
                   help="same-workload: 3 users with the same jobs and energy factors --efficiencies (paper "
                        "§IV-B.1); different-workloads: 3 users with 1/6, 2/6, 3/6 of the jobs, factor 1 "
                        "(§IV-B.2) (default same-workload)")
    p.add_argument("--efficiencies", type=efficiencies, default=(0.7, 1.0, 1.3), metavar="G,N,L",
                   help="energy factors of users 1, 2, 3 with same-workload (default 0.7,1.0,1.3)")
    p.add_argument("--seed", type=int, default=1, help="seed of the submission order (default 1)")
    p.add_argument("--hosts-per-node", type=positive_int, default=1,
                   help="hosts per 12-core node: 1 = a host is a node (15 hosts), 12 = a host is a core (default 1)")
    p.add_argument("--period", type=positive_float, default=935.0, metavar="S",
                   help="seconds between the starts of two copies (default 935, table II's theoretical run time)")
    p.add_argument("--walltime-factor", type=positive_float, default=1.0,
                   help="walltime / run time, at least 1 (default 1)")
    p.add_argument("--speed", type=positive_float, default=100e6, help="host speed in flop/s (default 100e6)")
    p.set_defaults(func=cmd_lightesp)

    p = sub.add_parser("eamc-workload", help="generate an EAMC-paper workload: jobs with applications and partitions",
                       description="Write a seeded workload like the EAMC paper's (§5): jobs of mean 18.29 nodes and "
                                   "3.65 h at the top frequency of p1, a daily arrival cycle over --days, each job "
                                   "with an EAR application id ('app', 1-8) and the partitions it may use "
                                   "('partitions': p1, p2), the share of STREAM (app 8, which favours p2) set by "
                                   "--mix. Run it on 'wattsched platform --node eamc'.",
                       epilog="example: wattsched eamc-workload --mix 33 --seed 1 --output w.json && wattsched "
                              "platform --node eamc --hosts 512 --output p.xml && wattsched run p.xml w.json "
                              "-s eamc-priority-inc")
    add_output_argument(p, "output .json")
    p.add_argument("--mix", choices=("13", "33", "50"), default="13",
                   help="%% of jobs favouring p2: 13 (the 8 applications uniformly), 33 or 50 (that share of "
                        "STREAM); default 13")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--jobs", type=positive_int, default=5000, help="number of jobs (default 5000, the paper's)")
    p.add_argument("--max-res", type=positive_int, default=512,
                   help="largest job, the size of a partition (default 512)")
    p.add_argument("--days", type=positive_float, default=10.0, help="submission span in days (default 10)")
    p.add_argument("--mean-res", type=positive_float, default=18.29, help="mean requested nodes (default 18.29)")
    p.add_argument("--mean-runtime-h", type=positive_float, default=3.65,
                   help="mean run time at the top frequency of p1, hours (default 3.65)")
    p.set_defaults(func=cmd_eamc_workload)

    p = sub.add_parser("platform", help="generate a Taurus-calibrated, ESC or EAMC SimGrid platform of any size",
                       description="Write a SimGrid 4.1 platform of Taurus nodes (energy-budget paper, table I, with "
                                   "Batsim's 13 DVFS pstates, sleep and transition pstates), of the ESC paper's "
                                   "five-state nodes (--node esc: standby 2 W, powering off 480 s using 10.79 Wh, "
                                   "powering on 555 s using 13.71 Wh, idle 150 W, loaded 230 W) or the EAMC paper's "
                                   "two partitions (--node eamc: p1 of Platinum 8168 nodes at 1.2-2.7 GHz and p2 of "
                                   "Gold 6254 nodes at 1.2-3.1 GHz, one pstate per 0.1 GHz, powers of the EAR model), "
                                   "and a master host.")
    p.add_argument("--hosts", type=positive_int, required=True,
                   help="number of compute hosts (--node eamc: hosts per partition, 512 in the paper)")
    add_output_argument(p, "output .xml")
    p.add_argument("--node", choices=("taurus", "esc", "eamc"), default="taurus",
                   help="node model: taurus (energy-budget paper), esc (ESC paper) or eamc (EAMC paper's p1 and p2); "
                        "default taurus")
    p.add_argument("--flat", action="store_true", help="one <host> per node instead of a <cluster>")
    p.add_argument("--prefix", default=None, help="host name prefix (default: taurus- or node)")
    p.add_argument("--suffix", default="", help="host name suffix (default: none)")
    p.set_defaults(func=cmd_platform)
