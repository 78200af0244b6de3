"""Replay a recording of real Batsim against the embedded simulator and report the differences.

A recording folder holds ``platform.xml``, ``workload.json``, ``batsim-args.txt``, ``messages.jsonl``
(every message both ways, ``{"from": "batsim"|"scheduler", "message": {...}}``) and Batsim's
``out_*.csv`` files (see ``tests/fixtures/batsim-reference/README.md``). The replay answers the i-th
message of the embedded simulator with the recorded i-th scheduler reply, and checks that each
Batsim message equals the recorded one (times exact as printed, energies within ``rel_tol``) and
that the five CSV files match (times exact, energy columns within ``rel_tol``). Batsim flags of
``batsim-args.txt`` that change the simulation become options of :class:`Simulation` (B44:
``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``); :func:`format_summary` sums up several
replays.

Same-time events that real Batsim delivers in two messages (behaviours 38, 43) are reproduced by
the engine's clock (SimGrid's solver steps), so a split is compared like any other message. One
difference is tolerated and reported as such: the ``epower`` cell of a ``_consumed_energy.csv`` row
written a few ulps of the clock after the previous one (see :func:`compare_csv`).
"""

from __future__ import annotations

import csv
import json
import math
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from wattsched.simulator.engine import Simulation
from wattsched.base.batsim_files import OUTPUT_KINDS
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.base.errors import InputError, ProtocolError
from wattsched.base.fileio import require_regular_file
from wattsched.base.validate import decode_utf8, load_json

#: Numeric columns / keys compared with a relative tolerance (energies); all others are exact.
ENERGY_KEYS = frozenset({"consumed_energy", "energy", "consumed_joules", "epower"})
#: The default relative tolerance on energies. On the 14 recordings, every energy, job energy,
#: ``consumed_joules`` and ANSWER comes out to the printed digit; only three ``epower`` cells (an
#: energy difference over a few seconds) differ, by 7.7e-8 relative at most (docs/simgrid-clock.md).
ENERGY_REL_TOL = 1e-7
#: ``_schedule.csv`` columns that hold wall-clock times of the run.
WALLCLOCK_KEYS = frozenset({"scheduling_time", "simulation_time"})


@dataclass
class ReplayReport:
    """Outcome of a replay: differences (empty when equal) and tolerated splits."""

    scenario: str
    differences: list[str] = field(default_factory=list)
    tolerated: list[str] = field(default_factory=list)
    messages_compared: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        """One line: identical (with what was tolerated) or the number of differences and the first."""
        if self.ok:
            extra = f", {len(self.tolerated)} tolerance(s) used" if self.tolerated else ""
            return f"{self.scenario}: identical ({self.messages_compared} Batsim messages{extra})"
        return f"{self.scenario}: {len(self.differences)} difference(s), first: {self.differences[0]}"

    def format(self, limit: int = 10) -> str:
        head = f"{self.scenario}: {self.messages_compared} Batsim messages compared"
        lines = [head + (", identical" if self.ok else f", {len(self.differences)} difference(s)")]
        for t in self.tolerated:
            lines.append(f"  tolerated: {t}")
        for d in self.differences[:limit]:
            lines.append(f"  {d}")
        if len(self.differences) > limit:
            lines.append(f"  ... and {len(self.differences) - limit} more")
        return "\n".join(lines)


def record_messages(sim: Simulation) -> list[str]:
    """Record every message of ``sim`` both ways, as a recording's ``messages.jsonl`` holds them: the
    returned list fills up (one JSON line a message) while a driver runs the simulation."""
    lines: list[str] = []
    start, step = sim.start, sim.step

    def recorded_start() -> dict:
        msg = start()
        lines.append(json.dumps({"from": "batsim", "message": msg}))
        return msg

    def recorded_step(reply: dict) -> dict | None:
        lines.append(json.dumps({"from": "scheduler", "message": reply}))
        msg = step(reply)
        if msg is not None:
            lines.append(json.dumps({"from": "batsim", "message": msg}))
        return msg

    sim.start, sim.step = recorded_start, recorded_step  # type: ignore[method-assign]
    return lines


def _close(a: float, b: float, rel_tol: float) -> bool:
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-5)


def _diff_json(a: Any, b: Any, path: str, rel_tol: float, out: list[str], key: str = "") -> None:
    """Differences between ``a`` (ours) and ``b`` (recorded)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                out.append(f"{path}.{k}: missing (recorded {b[k]!r})")
        for k in a:
            if k not in b:
                out.append(f"{path}.{k}: unexpected {a[k]!r}")
            else:
                _diff_json(a[k], b[k], f"{path}.{k}", rel_tol, out, k)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items, recorded {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _diff_json(x, y, f"{path}[{i}]", rel_tol, out, key)
        return
    numeric = isinstance(a, (int, float)) and isinstance(b, (int, float))
    if numeric and not isinstance(a, bool) and not isinstance(b, bool):
        same = _close(a, b, rel_tol) if key in ENERGY_KEYS else a == b
    else:
        same = a == b
    if not same:
        out.append(f"{path}: ours {a!r}, recorded {b!r}")


def _summary(msg: dict) -> str:
    return f"now={msg['now']} [" + ", ".join(e["type"] for e in msg["events"]) + "]"


def compare_message(ours: dict, recorded: dict, index: int, rel_tol: float) -> list[str]:
    """Differences between one Batsim message of ours and the recorded one (line ``index``)."""
    out: list[str] = []
    _diff_json(ours, recorded, f"line {index}", rel_tol, out)
    if out and [e["type"] for e in ours["events"]] != [e["type"] for e in recorded["events"]]:
        return [f"line {index}: ours {_summary(ours)}, recorded {_summary(recorded)}"]
    return out


def _normalise_begins(msg: dict) -> dict:
    """Batsim sends the workload's absolute path; the recordings keep its file name."""
    msg = json.loads(json.dumps(msg))
    for ev in msg["events"]:
        if ev["type"] == "SIMULATION_BEGINS":
            wl = ev["data"]["workloads"]
            for k, v in wl.items():
                wl[k] = os.path.basename(v)
    return msg


def _read_csv(path: Path) -> list[list[str]]:
    """The rows of ``path``, UTF-8 (checked by :func:`replay`) with or without a BOM (a spreadsheet's save, read as
    ``regress`` reads one: its header differed from ours by ``\\ufeffjob_id``)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return list(csv.reader(fh))


#: Rows of ``_consumed_energy.csv`` written at most this many ulps of the clock after the previous
#: one have an ``epower`` that is rounding noise (see :func:`compare_csv`).
EPOWER_NOISE_ULPS = 8


def compare_csv(ours: Path, recorded: Path, rel_tol: float, tolerated: list[str] | None = None,
                noise_rows: frozenset[int] = frozenset()) -> list[str]:
    """Row-by-row comparison; energy columns within ``rel_tol``, wall-clock columns ignored.

    ``noise_rows`` are the lines of ``_consumed_energy.csv`` whose row our clock wrote a few ulps
    (at most :data:`EPOWER_NOISE_ULPS`) after the previous row's (B43). Their ``epower`` is
    Δenergy/Δtime over those ulps, where Δenergy is the rounding of SimGrid's per-host energy doubles
    (each host is billed a few 1e-11 J on top of some 1e6 J): only a per-host model of every host at
    every row gives it (``simgrid_clock.EnergyShadow``, O(hosts) per row). When both the recorded
    and our cell are numbers there, the cell is not compared and is counted in ``tolerated``; an NA
    (the clock did not move) must match like any other cell.
    """
    a, b = _read_csv(ours), _read_csv(recorded)
    name = recorded.name
    if not b:
        return [f"{name}: recorded file is empty"]
    if a[:1] != b[:1]:
        return [f"{name}: header {a[:1]} differs from recorded {b[:1]}"]
    header = b[0]
    out: list[str] = []
    if len(a) != len(b):
        out.append(f"{name}: {len(a) - 1} rows, recorded {len(b) - 1}")
    skipped = 0
    for i, (ra, rb) in enumerate(zip(a[1:], b[1:]), start=2):
        for col, x, y in zip(header, ra, rb):
            if col in WALLCLOCK_KEYS or x == y:
                continue
            if col == "epower" and i in noise_rows and "NA" not in (x, y) and ra[0] == rb[0] == b[i - 2][0]:
                skipped += 1
                continue
            if col in ENERGY_KEYS:
                try:
                    if _close(float(x), float(y), rel_tol):
                        continue
                except ValueError:
                    pass
            out.append(f"{name} line {i} column {col}: ours {x!r}, recorded {y!r}")
    if skipped and tolerated is not None:
        tolerated.append(f"{name}: {skipped} epower cell(s) of rows a few ulps of the clock after the previous one (B43)")
    return out


#: Batsim flags of ``batsim-args.txt`` that are options of :class:`Simulation` (B44).
SIMULATION_FLAGS = {
    "--enable-dynamic-jobs": "dynamic_jobs",
    "--acknowledge-dynamic-jobs": "acknowledge_dynamic_jobs",
}


#: Batsim flags with a value: the inputs and export prefix (used), the socket and verbosity (no effect).
VALUE_FLAGS = frozenset({"-p", "--platform", "-w", "--workload", "-e", "--export", "-s", "--socket-endpoint",
                         "-v", "--verbosity"})
#: Batsim flags without a value that do not change the outputs compared (energy mode, no Pajé trace, quiet).
PLAIN_FLAGS = frozenset({"-E", "--energy", "--disable-schedule-tracing", "-q", "--quiet"})


def parse_args_file(path: Path) -> tuple[dict[str, str], set[str]]:
    """Input files (``p``, ``w``, ``e``) and :class:`Simulation` options of a Batsim command line.

    Raises:
        InputError: the file cannot be read or split (an unbalanced quote), or holds a flag the replay does not
            know (it would replay another simulation than the recorded one), a flag without its value, an input
            given twice or a stray word.
    """
    try:
        require_regular_file(path)
        args = shlex.split(decode_utf8(path.read_bytes(), str(path)))  # not UTF-8: said so, not the codec's words
    except OSError as exc:
        raise InputError(path, "", f"cannot be read: {exc.strerror}") from None
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise InputError(path, "", f"not a command line: {exc}") from None
    opts: dict[str, str] = {}
    flags: set[str] = set()
    i = 0
    while i < len(args):
        a, field = args[i], f"argument {i + 1} {args[i]!r}"
        flag, value = _attached_value(a)
        if flag in VALUE_FLAGS:
            if value == "" or (value is None and (i + 1 >= len(args) or args[i + 1].startswith("-"))):
                raise InputError(path, field, "needs a value")
            key = flag.lstrip("-")[0]
            if key in opts and key in "pwe":
                raise InputError(path, field, "given twice: the replay takes one platform, one workload and one "
                                              "export prefix")
            opts[key] = args[i + 1] if value is None else value
            i += 2 if value is None else 1
            continue
        if value is not None and flag in PLAIN_FLAGS | set(SIMULATION_FLAGS):
            raise InputError(path, field, f"{flag} takes no value")
        if a in SIMULATION_FLAGS:
            flags.add(SIMULATION_FLAGS[a])
        elif a not in PLAIN_FLAGS:
            known = ", ".join(sorted(VALUE_FLAGS | PLAIN_FLAGS | set(SIMULATION_FLAGS)))
            raise InputError(path, field, f"not a Batsim flag the replay knows; known: {known}" if a.startswith("-")
                             else "unexpected word (not a flag's value)")
        i += 1
    return {k: v for k, v in opts.items() if k in "pwe"}, flags


def _attached_value(arg: str) -> tuple[str, str | None]:
    """A flag and the value written in the same word, as Batsim's command line (docopt) takes them:
    ``--export=out`` and ``-eout`` are ``("--export", "out")`` and ``("-e", "out")``; any other word is itself,
    without a value. (They were refused as flags the replay does not know, the list of known ones naming them.)"""
    if arg.startswith("--") and "=" in arg:
        flag, value = arg.split("=", 1)
        return flag, value
    if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[:2] in VALUE_FLAGS:
        return arg[:2], arg[2:]
    return arg, None


def replay(folder: str | os.PathLike, *, rel_tol: float = ENERGY_REL_TOL, outputs_dir: str | os.PathLike | None = None) -> ReplayReport:
    """Replay the recording in ``folder``; CSVs are written to ``outputs_dir`` (a temp dir by default)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "", "not a folder")
    args_file = folder / "batsim-args.txt"
    if not args_file.exists():
        raise InputError(folder, args_file.name, "missing from the recording folder")
    opts, flags = parse_args_file(args_file)
    platform_path = folder / opts.get("p", "platform.xml")
    workload_path = folder / opts.get("w", "workload.json")
    prefix = opts.get("e", "out")
    messages_path = folder / "messages.jsonl"
    recorded_csvs = [folder / f"{prefix}_{name}.csv" for name in OUTPUT_KINDS]
    for p in (platform_path, workload_path, messages_path, *recorded_csvs):
        if not p.exists():
            raise InputError(folder, p.name, "missing from the recording folder")
    for p in (messages_path, *recorded_csvs):  # a folder gave a traceback, a FIFO blocked the replay for ever
        try:
            require_regular_file(p)
            if p != messages_path:  # (read by lines below) a CSV that is not UTF-8 gave a traceback after the run
                decode_utf8(p.read_bytes(), str(p))
        except OSError as error:
            raise InputError(p, "", f"cannot be read ({error.strerror})") from None
    recorded: list[tuple[str, dict, int]] = []  # (side, message, line of messages.jsonl)
    try:
        fh = open(messages_path, "rb")
    except OSError as error:
        raise InputError(messages_path, "", f"cannot be read ({error.strerror})") from None
    with fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            def at_line(src: str, field: str, problem: str, n: int = n) -> InputError:
                return InputError(src, f"line {n}" + (f" ({field})" if field else ""), problem)

            obj = load_json(line, str(messages_path), at_line, unique_keys=True)
            if not (isinstance(obj, dict) and obj.get("from") in ("batsim", "scheduler")
                    and isinstance(obj.get("message"), dict)):
                raise InputError(messages_path, f"line {n}", "not a recorded message "
                                 "({\"from\": \"batsim\" or \"scheduler\", \"message\": {...}})")
            recorded.append((obj["from"], obj["message"], n))
    if not recorded:  # (the command line checks every folder first: wattsched.cli.simulate._check_messages_recorded)
        raise InputError(messages_path, "", "empty (no message recorded)")
    report = ReplayReport(folder.name)
    sim = Simulation(load_platform(platform_path), load_workload(workload_path),
                     dynamic_jobs="dynamic_jobs" in flags, acknowledge_dynamic_jobs="acknowledge_dynamic_jobs" in flags)
    ours: dict | None = _normalise_begins(sim.start())
    i = 0
    while i < len(recorded):
        side, rec, line_no = recorded[i]
        if side != "batsim":
            report.differences.append(f"line {line_no}: expected a Batsim message, the recording has a {side} one")
            break
        if ours is None:
            report.differences.append(f"line {line_no}: the simulation ended, recorded {_summary(rec)}")
            break
        report.messages_compared += 1
        diffs = compare_message(ours, rec, line_no, rel_tol)
        if diffs:
            report.differences.extend(diffs)
            break
        if i + 1 >= len(recorded):
            break
        _, reply, reply_line = recorded[i + 1]
        try:
            ours = sim.step(reply)
        except ProtocolError as error:  # a recorded reply Batsim would refuse (unknown event type, ...)
            raise InputError(messages_path, f"line {reply_line} (message {i + 2})", str(error)) from None
        i += 2
    if ours is not None and report.ok:
        report.differences.append(f"the recording ends but the simulation goes on: {_summary(ours)}")
    if report.ok:
        with tempfile.TemporaryDirectory() as tmp:
            out_dir = Path(outputs_dir) if outputs_dir is not None else Path(tmp)
            paths = write_outputs(sim, out_dir / prefix)
            noise = epower_noise_rows(sim)
            for name, rec_csv in zip(OUTPUT_KINDS, recorded_csvs):
                rows = noise if name == "consumed_energy" else frozenset()
                report.differences.extend(compare_csv(paths[name], rec_csv, rel_tol, report.tolerated, rows))
    return report


def epower_noise_rows(sim: Simulation) -> frozenset[int]:
    """Lines of ``_consumed_energy.csv`` (2 = first row) written 1 to :data:`EPOWER_NOISE_ULPS`
    ulps of the clock after the previous row (B43)."""
    out = set()
    prev = 0.0
    for line, row in enumerate(sim.energy_rows, start=2):
        t = row[0]
        if 0.0 < t - prev <= EPOWER_NOISE_ULPS * math.ulp(t):
            out.add(line)
        prev = t
    return frozenset(out)


def format_summary(reports: Sequence[ReplayReport]) -> str:
    """What ``wattsched replay`` prints after the reports: one line per scenario, then the count,
    e.g. ``14 scenarios: 14 identical, 0 with differences``."""
    identical = sum(report.ok for report in reports)
    noun = "scenario" if len(reports) == 1 else "scenarios"
    lines = [report.summary() for report in reports]
    lines.append(f"{len(reports)} {noun}: {identical} identical, {len(reports) - identical} with differences")
    return "\n".join(lines)

