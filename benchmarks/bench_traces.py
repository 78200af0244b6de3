"""Whole-trace benchmark: EASY and each energy preset over an entire log of the Parallel Workloads Archive
(issue 19).

Each log of ``--traces`` (default SDSC-Blue, 243,306 jobs on 1,152 processors, and Curie, 312,826 jobs on
the 80,640 cores the energy-budget paper counts) is converted whole, once (:func:`workloads.swf.swf_to_batsim`
with its defaults: jobs without a requested time get their run time, jobs without run time or wider than
the machine are dropped and counted: the table gives the conversion's summary line), on a Taurus platform of
one host per processor (:func:`platforms.generate.taurus_platform_xml`). The log comes from the archive mirror
(``--mirror``, ``$WATTSCHED_PWA`` or ``shared/data/pwa`` beside the repository) or the download cache,
checked against the catalogue's sha256 (:func:`workloads.traces.fetch_trace`; never downloaded here).

Every run is ``wattsched run PLATFORM WORKLOAD -s PRESET -o OPTIONS --progress --json`` in a child process
(its progress bar, with simulated time, jobs done and the time left, goes to this process's stderr), as a
user would run it: loading the workload, the simulation, the five output CSVs (in a temporary folder) and
the metrics. Measured per run: wall time, CPU time (user + system of the child, from ``os.wait4``: on a
shared machine it varies far less than the wall time) and peak memory (the child's ``ru_maxrss``).

Runs (``--only`` picks some, by label): ``easy-backfill``; ``energy-bud``, ``reduce-pc``, ``powercap``, each
without and with opportunistic shutdown (``+shutdown``), under one budget over the whole log (window
``[0, last submission)``, :data:`BUDGET_FRACTION` of its all-computing energy, so that the admission
constraint works through the whole trace; the paper's 3-day windows are in ``make reproduce-energy-budget``);
``fairshare``, ``efs`` and ``fs-efs`` (the log's user ids) on the same Taurus hosts; ``esc`` on the ESC paper's
five-state nodes (:func:`platforms.generate.esc_platform_xml`) and ``upas`` on the UPAS paper's processors
(:func:`platforms.generate.upas_platform_xml`, each job given a β by :func:`workloads.upas.beta_workload`,
seed 1), each log converted again for their nodes' top speed. Every preset with its paper's defaults.

Usage: ``python benchmarks/bench_traces.py [--traces sdsc-blue,curie] [--only easy-backfill] [--mirror DIR]``
(``make bench-traces``). Writes a markdown table to stdout and to ``benchmarks/results/traces.md``
(``--out``; rows of earlier invocations for other runs are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform as _platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("WATTSCHED_BENCH_CACHE", HERE / ".cache"))
#: Hosts of each log's machine: SDSC-Blue's MaxProcs; Curie's thin nodes, as the energy-budget paper counts
#: (its header's MaxProcs, 93,312, adds the fat and hybrid nodes).
HOSTS = {"sdsc-blue": 1152, "curie": 80640}
BUDGET_FRACTION = 0.8
NODES = ("taurus", "esc", "upas")


@dataclass(frozen=True)
class Run:
    """One row: ``preset`` on the ``node`` platform; ``shutdown`` is None for a preset without a budget, else
    the shutdown option of a budget preset (run under :data:`BUDGET_FRACTION` over the whole log)."""

    label: str
    preset: str
    shutdown: bool | None = None
    node: str = "taurus"


#: EASY first.
RUNS: list[Run] = [Run("easy-backfill", "easy-backfill")] + [
    Run(f"{preset}{'+shutdown' if shutdown else ''}", preset, shutdown)
    for preset in ("energy-bud", "reduce-pc", "powercap") for shutdown in (False, True)
] + [Run(p, p) for p in ("fairshare", "efs", "fs-efs")] + [
    Run("esc", "esc", node="esc"), Run("upas", "upas", node="upas")]
HEAD = ("| trace | hosts | jobs | run | wall s | CPU s | peak MiB | utilization | AVEbsld | mean wait s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")


def node_kind(node: str) -> tuple[float, Callable[[int], str]]:
    """Of a ``node`` kind (:data:`NODES`): its top speed (the speed a log's run times are converted at) and the
    writer of a platform of such hosts."""
    from wattsched.energy_models.esc import ESC
    from wattsched.energy_models.taurus import TAURUS
    from wattsched.energy_models.upas import UPAS_NODE
    from wattsched.platforms.generate import esc_platform_xml, taurus_platform_xml, upas_platform_xml

    model, write = {"taurus": (TAURUS, taurus_platform_xml), "esc": (ESC, esc_platform_xml),
                    "upas": (UPAS_NODE, upas_platform_xml)}[node]
    return model.max_speed_flops, write


def inputs(name: str, mirror: str | None, node: str = "taurus") -> tuple[Path, Path, dict]:
    """(platform, workload, conversion meta) of the whole log ``name`` for ``node`` hosts, written once to the
    cache folder."""
    from wattsched.workloads.swf import summary_line, swf_to_batsim
    from wattsched.workloads.traces import fetch_trace
    from wattsched.workloads.upas import beta_workload

    hosts = HOSTS[name]
    speed_flops, write = node_kind(node)
    CACHE.mkdir(parents=True, exist_ok=True)
    platform = CACHE / f"{node}_{hosts}.xml"
    if not platform.exists():
        platform.write_text(write(hosts))
    log = fetch_trace(name, mirror=mirror, download=False)
    tag = "" if node == "taurus" else f"_{node}"
    workload = CACHE / f"{log.name.removesuffix('.swf.gz')}_{hosts}h_whole{tag}.json"
    summary = CACHE / f"{workload.stem}.summary.json"
    if not workload.exists() or not summary.exists():
        converted = swf_to_batsim(log, speed_flops=speed_flops, nb_hosts=hosts)
        meta = {"summary": summary_line(converted), "nb_jobs": len(converted["jobs"]),
                "last_submit_s": max(j["subtime"] for j in converted["jobs"])}
        if node == "upas":
            converted = beta_workload(converted, seed=1)
        workload.write_text(json.dumps(converted))
        summary.write_text(json.dumps(meta))
    return platform, workload, json.loads(summary.read_text())


def run_child(platform: Path, workload: Path, preset: str, options: dict, progress: bool) -> dict:
    """One ``wattsched run`` in a child process: its metrics and wall, CPU and peak-memory figures."""
    wattsched = Path(sys.executable).with_name("wattsched")
    with tempfile.TemporaryDirectory(prefix="bench-traces-") as tmp:
        cmd = [str(wattsched), "run", str(platform), str(workload), "-s", preset, "-o", json.dumps(options),
               "-e", str(Path(tmp) / "out"), "--json", "--progress" if progress else "--quiet"]
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall_s = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit status {child.returncode}")
    metrics = json.loads(out)
    return {**metrics, "wall_s": wall_s, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024}  # ru_maxrss is in KiB on Linux


def options_for(shutdown: bool | None, last_submit_s: float) -> dict:
    if shutdown is None:
        return {}
    return {"budget_fraction": BUDGET_FRACTION, "window_start_s": 0.0, "window_end_s": float(last_submit_s),
            "shutdown": shutdown}


def row(name: str, hosts: int, label: str, r: dict) -> str:
    return (f"| {name} | {hosts:,} | {r['nb_jobs']:,} | {label} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['peak_mib']:.0f} | {r['utilization']:.3f} | {r['mean_bounded_slowdown']:.1f} | "
            f"{r['mean_waiting_time_s']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", default="sdsc-blue,curie", help="comma-separated: sdsc-blue,curie")
    parser.add_argument("--only", help="comma-separated run labels (default: all)")
    parser.add_argument("--mirror", help="folder of the archive's logs (default $WATTSCHED_PWA or shared/data/pwa)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar from the runs")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "traces.md")
    args = parser.parse_args(argv)
    names = args.traces.split(",")
    only = None if args.only is None else set(args.only.split(","))
    for option, given in (("--traces", names), ("--only", only or ())):
        if "" in given:
            parser.error(f"{option}: an empty name in a comma-separated list (give names such as easy-backfill)")
    unknown = set(names) - set(HOSTS)
    labels = {r.label for r in RUNS}
    if unknown or (only is not None and only - labels):
        parser.error(f"unknown trace or run: {', '.join(sorted(unknown | (only or set()) - labels))}")
    runs = [r for r in RUNS if only is None or r.label in only]

    previous = args.out.read_text().splitlines() if args.out.exists() else []
    rows = {line.split("|")[1].strip() + "/" + line.split("|")[4].strip(): line
            for line in previous if line.startswith("| ") and not line.startswith(HEAD[0][:9])}
    notes = [line for line in previous if line.startswith("- ")]
    for name in names:
        for node in NODES:
            todo = [r for r in runs if r.node == node]
            if not todo:
                continue
            platform, workload, meta = inputs(name, args.mirror, node)
            if node == "taurus":
                notes = [n for n in notes if not n.startswith(f"- {name}: ")] + [f"- {name}: `{meta['summary']}`"]
            for run in todo:
                print(f"{name} {run.label} ...", file=sys.stderr, flush=True)
                r = run_child(platform, workload, run.preset, options_for(run.shutdown, meta["last_submit_s"]),
                              not args.no_progress)
                rows[f"{name}/{run.label}"] = row(name, HOSTS[name], run.label, r)
                print(rows[f"{name}/{run.label}"], flush=True)
    order = {f"{n}/{run.label}": (i, j) for i, n in enumerate(HOSTS) for j, run in enumerate(RUNS)}
    lines = [
        f"Machine: {_platform.machine()}, Python {_platform.python_version()}, {os.cpu_count()} cores; each run a "
        "child process `wattsched run ... --json` on the whole log (`benchmarks/bench_traces.py`); energy presets "
        f"under a budget of {BUDGET_FRACTION:.0%} over the whole log. CPU s = the child's user + system time, "
        "peak MiB its ru_maxrss. Conversions:", "",
        *sorted(notes), "", *HEAD,
        *(rows[k] for k in sorted(rows, key=lambda k: order.get(k, (99, 99)))),
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
