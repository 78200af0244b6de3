"""Convert a Standard Workload Format trace (Parallel Workloads Archive) into a Batsim JSON workload.

The energy-budget paper (§V-C) replays 1-week extracts of three PWA traces (Curie, MetaCentrum,
SDSC-Blue); this module makes those extracts. SWF (Feitelson et al., PWA "swf.html"): one job per line,
18 whitespace-separated numeric fields, ``;`` starts a header comment, ``-1`` means unknown:

 1 job number · 2 submit time (s) · 3 wait time · 4 run time (s) · 5 allocated processors · 6 average CPU
 time · 7 used memory · 8 requested processors · 9 requested time (s) · 10 requested memory · 11 status
 (1 completed, 0 failed, 5 cancelled, ...) · 12 user id · 13 group id · 14 executable · 15 queue ·
 16 partition · 17 preceding job · 18 think time.

Conversion rules (``procs_per_host`` trace processors make one simulated host; the default, 1, is the
papers' choice of counting processors — the energy-budget paper attributes the Taurus node measures to each
processor; ``"node"`` takes the header's MaxProcs / MaxNodes):

* The header (``; MaxProcs: 1152`` …) gives defaults: the machine size ``nb_hosts`` = MaxProcs /
  ``procs_per_host`` when none is given (else, without a MaxProcs line, the widest job; a MaxProcs that is
  not a number, is 0 or negative, or is fewer processors than one host's is then an error naming the
  header field, not a guess), and is copied into ``meta`` with the log's
  UnixStartTime and time zone (a header number must be whole: ``8.5`` or ``1e3`` is not read as 8 or 1; a
  UnixStartTime beyond the dates Python shows is left unknown, one that is no number, ``x``, is an error naming
  its line). A field the conversion reads given twice must say the same both times (other fields, such as the
  ``Note`` lines logs repeat, keep their first value). Files may be gzip-compressed (recognised by
  content, whatever their name), start with a byte-order mark, have CRLF line ends, or non-UTF-8 bytes in comments.
* ``id`` = the SWF job number; ``user`` = field 12 and ``group`` = field 13 (``-1`` kept when unknown; Batsim
  keeps extra job fields, the fair-share presets read ``user``); a fractional job number, user or group is an
  error naming its line and field.
* ``subtime`` = submit time − origin, where origin = ``start_time_s`` when given, else the earliest
  submit time among the kept jobs: an extract keeps the trace's real submission times relative to its start.
  With ``start_time_s``/``duration_s`` only jobs submitted in ``[start, start + duration)`` are kept (trace
  time, before shifting); ``job_numbers`` keeps a range of job numbers; ``max_jobs`` stops after that many
  kept jobs. Every count below covers the extract only.
* ``res`` = allocated processors (field 5), or requested processors (field 8) when field 5 is ``-1``,
  divided by ``procs_per_host`` and rounded up; a count that is not a whole number (``2.5``) is an error
  naming its line and field.
* ``walltime`` = requested time (field 9) when > 0. When it is ``-1`` (every job of the NASA log, 71 % of
  LLNL-Thunder's), the ``walltime_rule`` decides, and the jobs it hit are counted: ``"runtime"`` (default: the
  run time, a perfect estimate, so that EASY has one), ``"none"`` (no walltime: Batsim never kills the job
  and EASY cannot plan around it; wide jobs may starve), ``"factor:F"`` (F × run time, F ≥ 1) or
  ``"limit:S"`` (S seconds, at least the run time).
* run time = field 4; when it exceeds the walltime (the trace says the job was killed, often a few
  seconds past its limit) it is **clamped to the walltime** (counted). Batsim then completes the job
  successfully exactly at its walltime (reference behaviour 14); the occupancy is the same as a kill.
* status (field 11) is not used otherwise: a failed (0) or cancelled (5) job that ran occupied the machine.
* profile: ``parallel_homogeneous`` with ``cpu`` = run time × ``speed_flops`` flops per host and
  ``com`` 0, named ``"c<cpu>"`` (``c360000000000`` for 3600 s at 100 Mflop/s) and shared by every job
  with the same work.

Jobs that cannot be simulated as they are, each class with its choice (``"drop"``, the default: left out and
counted; ``"keep"``; ``"error"``: the conversion stops on the first one, naming its line):

* ``too_large`` (option ``too_large``): ``res`` > ``nb_hosts``. Kept, Batsim submits them and the
  scheduler rejects them (as pybatsim's EASY does; the run counts them as rejected);
* ``cancelled`` and ``no_runtime`` (option ``no_runtime``): run time ≤ 0, status 5 (cancelled before
  start) or not. Kept, they become jobs of run time 0 (a zero-work profile).

The bounds ``wattsched run`` applies (:mod:`wattsched.base.limits`) are applied here, before anything is
written: the machine size (``nb_hosts``, or the header's) and every kept job's ``res`` within ``hosts``; the
number of kept jobs within ``jobs``; every
walltime (requested, or given by the rule: ``limit:S`` with S beyond it is refused as an option), every
``subtime`` and every run time of a job without walltime (rule ``none``) within ``time_s``.

Always dropped and counted: ``no_processors`` (neither field 5 nor 8 positive), ``no_submit_time``
(submit time < 0), ``outside_window`` and ``outside_job_numbers``. The result is a dict
``{"nb_res", "jobs", "profiles", "meta"}``; ``jobs`` are sorted by ``subtime`` (stable). ``meta`` (ignored by
Batsim, which reads only ``nb_res``, ``jobs`` and ``profiles``) records the source, the header, the options,
the host speed the work is meant for (``wattsched run`` warns when the platform's differs) and the counts;
:func:`summary_line` is its one-line account, which ``wattsched swf`` prints.

:func:`busiest_window` finds the extract of a given length with the highest offered load, the kind of
period the papers pick ("we selected traces with high average usage", EFS paper §IV-A).

Command line: ``wattsched swf trace.swf[.gz]|TRACE --output w.json --speed 100e6 [--hosts N] [--window START,END]``
(``TRACE``: a name or file name of ``wattsched traces``, read from the mirror or the cache when no file of that name
is in the current folder).
"""

from __future__ import annotations

import bisect
import datetime
import itertools
import math
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from wattsched.base.errors import InputError, OptionError, counted
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import check_count, check_memory, is_plain_decimal, option_error

__all__ = ["SWF_FIELDS", "SwfHeader", "SwfJob", "header_hosts", "read_swf", "read_swf_trace", "swf_to_batsim",
           "summary_line",
           "profile_name", "busiest_window", "WALLTIME_RULES", "CHOICES"]

SWF_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)

_STATUS_CANCELLED = 5
#: The walltime rules for jobs without a requested time (module docstring).
WALLTIME_RULES = ("runtime", "none", "factor:F", "limit:S")
#: What to do with a class of jobs that cannot be simulated as they are.
CHOICES = ("drop", "keep", "error")


class SwfJob(dict):
    """One SWF line: a dict from :data:`SWF_FIELDS` names to numbers, plus ``line`` (1-based)."""


@dataclass(frozen=True)
class SwfHeader:
    """The header fields of an SWF log that a conversion uses (None when absent).

    Attributes:
        max_procs, max_nodes: the machine's processors and nodes (the whole number before any comment; None
            when the value does not start with one, e.g. ``8.5``).
        unix_start_time: the log's time 0 as a Unix time (None when not a whole number of a representable date).
        time_zone: ``TimeZoneString`` (e.g. ``US/Pacific``).
        fields: every ``Key: value`` line of the header, as text (the first of a key given twice).
        lines: the line number (1-based) of each of ``fields``.
    """

    max_procs: int | None = None
    max_nodes: int | None = None
    unix_start_time: int | None = None
    time_zone: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


#: The header fields a conversion reads (:class:`SwfHeader`); the others (``Version``, ``Note``, ``Queue``,
#: ``Partition``..., some of which the archive writes several times) are kept as text only.
_USED_HEADER_FIELDS = ("MaxProcs", "MaxNodes", "UnixStartTime", "TimeZoneString")
_NUMERIC_HEADER_FIELDS = ("MaxProcs", "MaxNodes", "UnixStartTime")


def _shown(text: str) -> str:
    """``text`` quoted for an error line, cut at 40 characters (a field of thousands of digits)."""
    return repr(text) if len(text) <= 40 else f"{text[:37]!r}... ({len(text)} characters)"


def _parse_number(text: str, source: Path, line_no: int, name: str) -> float:
    try:  # float() also reads '1_000' and digits of other scripts ('١٠'): no SWF writer does, so not a number
        value = float(text) if text.isascii() and "_" not in text else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        problem = "is not a number" if math.isnan(value) else "is beyond the range of a double"
        raise InputError(source, f"line {line_no}, field '{name}'", f"{_shown(text)} {problem}")
    return value


def _leading_int(text: str) -> int | None:
    """The whole number a header value starts with (``338 (batch partition; 512 total)`` → 338), or None when
    it does not start with one: ``8.5``, ``1e3`` or ``0x10`` are not read as 8, 1 or 0."""
    match = re.match(r"\s*(-?\d+)(?![\w.,])", text, re.ASCII)  # not the digits of other scripts
    return int(match.group(1)) if match else None


def _is_number_text(text: str) -> bool:
    """Whether the header value ``text`` starts with a number, whole or not (``8.5``, ``1e20``, ``338 (batch)``)."""
    words = text.split()
    return bool(words) and is_plain_decimal(words[0])


def _same_header_value(key: str, first: str, again: str) -> bool:
    """Whether a header field given twice says the same both times (numbers compared as the reader reads them:
    ``128`` and ``128 (all)`` agree)."""
    if key in _NUMERIC_HEADER_FIELDS and _leading_int(first) is not None:
        return _leading_int(first) == _leading_int(again)
    return first == again


def _unix_time(text: str) -> int | None:
    """The header's UnixStartTime, or None when it is not a whole number of seconds of a date Python can show
    (``1e20``, ``99999999999999999999``): the log's start is then unknown rather than wrong. (A value that is no
    number at all is refused by :func:`read_swf_trace`.)"""
    value = _leading_int(text)
    if value is None:
        return None
    try:
        datetime.datetime.fromtimestamp(value, tz=datetime.timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None
    return value


def _whole(r: SwfJob, name: str, source: Path) -> int:
    """Field ``name`` of a job line as an integer (job number, user, group).

    Raises:
        InputError: a fractional value (``3.9`` is not user 3), naming the line and the field.
    """
    value = r[name]
    if not value.is_integer():
        raise InputError(source, f"line {int(r['line'])}, field '{name}'", f"{value:g} is not a whole number")
    return int(value)


#: Memory the parsed jobs of an SWF trace take per byte of its (decompressed) text, for :func:`check_memory`
#: (a :class:`SwfJob` of 19 numbers per line of about 100 bytes, then its Batsim job).
_SWF_BYTES_PER_TEXT_BYTE = 20

#: The line ends of an SWF file: LF, CRLF or CR alone. Not those of :meth:`str.splitlines`, which also splits at a
#: form feed, ``\x1c``-``\x1e``, NEL or U+2028: a comment holding one went on as a job line ("expected 18 fields,
#: found 1"), and every later line was numbered one too many.
_LINE_END = re.compile(r"\r\n|\r|\n")


def _read_text(source: Path) -> str:
    try:
        require_regular_file(source)
        check_memory(os.path.getsize(source) * _SWF_BYTES_PER_TEXT_BYTE, str(source), "", "reading this SWF trace")
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(source, "", f"cannot read the file: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":  # gzip, as the Parallel Workloads Archive ships its logs
        return _gunzip(data, source).decode("utf-8-sig", errors="replace")
    return data.decode("utf-8-sig", errors="replace")  # (a byte-order mark is not part of the first line)


#: :func:`_gunzip` decompresses this many bytes at a time, and checks the memory the text would take between two
_GUNZIP_CHUNK_BYTES = 1 << 24


def _gunzip(data: bytes, source: Path) -> bytearray:
    """The text of a gzip file (every member, as :func:`gzip.decompress`), decompressed a chunk at a time: a text
    whose parsed jobs would not fit in the memory share is refused as soon as the part decompressed says so, not
    once all of it was allocated (a small file may decompress to gigabytes: it got the system's out-of-memory
    kill instead of an error line).

    Raises:
        InputError: naming ``source``, for a file that does not decompress or a text beyond the memory share.
    """
    out = bytearray()
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # (16: a gzip header and trailer)
            while not inflater.eof:
                piece = inflater.decompress(rest, _GUNZIP_CHUNK_BYTES)
                rest = inflater.unconsumed_tail
                if not piece and not rest:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                out += piece
                check_memory(len(out) * _SWF_BYTES_PER_TEXT_BYTE, str(source), "",
                             f"reading this SWF trace (at least {len(out):,} bytes once decompressed)")
            rest = inflater.unused_data
    except (EOFError, zlib.error) as exc:
        raise InputError(source, "", f"a gzip file that does not decompress ({exc})") from None
    return out


def read_swf_trace(swf_path: str | Path) -> tuple[SwfHeader, list[SwfJob]]:
    """Parse an SWF file (plain or gzip-compressed, LF, CRLF or CR line ends): its header and one :class:`SwfJob`
    per job line (comments and blank lines skipped).

    Header lines are ``; Key: value`` comments before the first job (the archive's "swf.html"). A key the
    conversion reads (MaxProcs, MaxNodes, UnixStartTime, TimeZoneString) given twice must say the same both
    times; other keys (``Note``, ``Queue``, ``Partition``... that logs repeat) keep their first value.

    Raises:
        InputError: unreadable file, a line without 18 fields, a field that is not a number, a header field the
            conversion reads given twice with two values, or a UnixStartTime that is not a number (the message
            gives the file, the line number and the field name).
    """
    source = Path(swf_path)
    text = _read_text(source)
    header: dict[str, str] = {}
    header_lines: dict[str, int] = {}
    jobs: list[SwfJob] = []
    for line_no, raw in enumerate(_LINE_END.split(text), start=1):
        line, _, comment = raw.partition(";")
        if comment and not jobs and ":" in comment:
            key, _, value = comment.partition(":")
            key, value = key.strip(), value.strip()
            if key and " " not in key:
                if key not in header:
                    header[key], header_lines[key] = value, line_no
                elif key in _USED_HEADER_FIELDS and not _same_header_value(key, header[key], value):
                    raise InputError(source, f"line {line_no}, header {key}",
                                     f"{_shown(value)}, while line {header_lines[key]} gives {_shown(header[key])} "
                                     "(a header field is given once)")
        line = line.strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != len(SWF_FIELDS):
            raise InputError(source, f"line {line_no}", f"expected {len(SWF_FIELDS)} fields, found {len(parts)}")
        job = SwfJob((name, _parse_number(part, source, line_no, name)) for name, part in zip(SWF_FIELDS, parts))
        job["line"] = line_no
        jobs.append(job)
    start = header.get("UnixStartTime")
    if start is not None and not _is_number_text(start):  # (MaxProcs and MaxNodes: refused when they are read)
        raise InputError(source, f"line {header_lines['UnixStartTime']}, header UnixStartTime",
                         f"{_shown(start)} is not a number of seconds (the log's start as a Unix time)")
    parsed = SwfHeader(
        max_procs=_leading_int(header.get("MaxProcs", "")), max_nodes=_leading_int(header.get("MaxNodes", "")),
        unix_start_time=_unix_time(header.get("UnixStartTime", "")),
        time_zone=header.get("TimeZoneString") or None, fields=header, lines=header_lines)
    return parsed, jobs


def read_swf(swf_path: str | Path) -> list[SwfJob]:
    """The job lines of an SWF file (:func:`read_swf_trace` without the header)."""
    return read_swf_trace(swf_path)[1]


def _number_text(value: float) -> str:
    """``360000000000`` for integral values, the shortest round-trip decimal otherwise."""
    if float(value).is_integer() and abs(value) < 1e17:
        return str(int(value))
    return repr(float(value))


def profile_name(cpu_flops: float) -> str:
    """Name of the shared ``parallel_homogeneous`` profile computing ``cpu_flops`` per host."""
    return f"c{_number_text(cpu_flops)}"


class _Kept(NamedTuple):
    submit_s: float
    number: int
    res: int
    walltime_s: float | None
    user: int
    group: int
    run_s: float
    line: int


def _int_or_float(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _walltime_rule(rule: str) -> Callable[[float], float | None]:
    """The walltime of a job without requested time, from its run time (module docstring)."""
    kind, _, value = rule.partition(":")
    if kind == "runtime" and not value:
        return lambda run_s: run_s
    if kind == "none" and not value:
        return lambda run_s: None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if kind == "factor" and math.isfinite(number) and number >= 1:
        return lambda run_s: run_s * number
    if kind == "limit" and math.isfinite(number) and number > 0:
        if number > limit("time_s"):
            raise OptionError(f"walltime rule {rule!r}: a walltime of {number:g} s; {limit_hint('time_s', 's')}")
        return lambda run_s: max(number, run_s)
    raise OptionError(f"walltime rule {rule!r}: expected one of {', '.join(WALLTIME_RULES)} (F ≥ 1, S > 0)")


def _procs_per_host(value: int | str, header: SwfHeader, source: Path) -> int:
    """The processors of one host: ``value``, or MaxProcs / MaxNodes of the header for ``"node"``.

    Raises:
        InputError: for ``"node"``, a header MaxProcs or MaxNodes missing, not a whole number or not positive, or
            not dividing; the message names the option (``--procs-per-host``) as the command line spells it.
        OptionError: a ``value`` that is neither a positive int nor ``"node"``.
    """
    if value == "node":
        asked = "procs_per_host (--procs-per-host) 'node' divides MaxProcs by MaxNodes"
        instead = "give the processors per host as a number (--procs-per-host N)"
        for key, read in (("MaxProcs", header.max_procs), ("MaxNodes", header.max_nodes)):
            if key not in header.fields:  # it said 'None/None is not a whole number of processors per node'
                raise InputError(source, f"header {key}", f"missing: {asked}; {instead}")
            if read is None:
                raise InputError(source, f"line {header.lines[key]}, header {key}",
                                 f"{_shown(header.fields[key])} is not a whole number ({asked}); {instead}")
            if read < 1:  # 8 // -2 made hosts of -4 processors: a workload of -2 hosts
                raise InputError(source, f"line {header.lines[key]}, header {key}",
                                 f"{read} is not a positive number ({asked}); {instead}")
        assert header.max_procs is not None and header.max_nodes is not None
        if header.max_procs % header.max_nodes:
            raise InputError(source, "header MaxProcs/MaxNodes",
                             f"{header.max_procs}/{header.max_nodes} is not a whole number of processors per node: "
                             f"{instead}")
        return header.max_procs // header.max_nodes
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"procs_per_host must be at least 1 or 'node', got {value!r}")
    return value


def _header_hosts(header: SwfHeader, per_host: int, source: Path) -> int | None:
    """The machine size the header gives (MaxProcs / processors per host), or None without a MaxProcs line.

    Raises:
        InputError: naming ``header MaxProcs``: not a number, not positive, fewer processors than one host's,
            or more hosts than the ``hosts`` bound.
    """
    text = header.fields.get("MaxProcs", "").strip()
    if not text:
        return None
    fix = "(fix the header, or give the machine size: --hosts N)"
    if header.max_procs is None:
        raise InputError(source, "header MaxProcs", f"{_shown(text)} is not a number of processors {fix}")
    if header.max_procs < 1:
        raise InputError(source, "header MaxProcs", f"{header.max_procs} is not a positive number of processors {fix}")
    if header.max_procs < per_host:
        raise InputError(source, "header MaxProcs", f"{header.max_procs} processors are fewer than one host's "
                                                    f"{per_host} {fix}")
    hosts = header.max_procs // per_host
    if hosts > limit("hosts"):
        raise InputError(source, "header MaxProcs", f"{header.max_procs} processors make {hosts:.3g} hosts, "
                                                    f"{limit_hint('hosts')}; or give the machine size: --hosts N")
    return hosts


def _processors_field(r: SwfJob) -> str:
    """The field giving a job's processors: allocated (field 5), or requested (field 8) when field 5 is -1."""
    return "allocated_processors" if r["allocated_processors"] != -1 else "requested_processors"


def _processors(r: SwfJob, source: Path) -> float:
    """A job's processors (:func:`_processors_field`).

    Raises:
        InputError: a count that is not a whole number, naming the line and the field.
    """
    name = _processors_field(r)
    procs = r[name]
    if not procs.is_integer():
        raise InputError(source, f"line {int(r['line'])}, field '{name}'", f"{procs:g} is not a whole number of "
                                                                          "processors")
    return procs


def header_hosts(swf_path: str | Path, procs_per_host: int | str = 1) -> int | None:
    """The machine size of an SWF log's header in hosts of ``procs_per_host`` processors (or ``"node"``), or
    None when the header gives no MaxProcs.

    Raises:
        InputError: malformed SWF, ``"node"`` without a whole number of processors per node, or a MaxProcs
            that gives no machine size (:func:`swf_to_batsim`'s rules).
    """
    header, _ = read_swf_trace(swf_path)
    return _header_hosts(header, _procs_per_host(procs_per_host, header, Path(swf_path)), Path(swf_path))


def swf_to_batsim(
    swf_path: str | Path,
    *,
    speed_flops: float,
    nb_hosts: int | None = None,
    max_jobs: int | None = None,
    start_time_s: float | None = None,
    duration_s: float | None = None,
    procs_per_host: int | str = 1,
    job_numbers: tuple[int, int] | None = None,
    walltime_rule: str = "runtime",
    too_large: str = "drop",
    no_runtime: str = "drop",
) -> dict[str, Any]:
    """Batsim workload dict of an SWF trace, following the rules of the module docstring.

    Args:
        swf_path: the ``.swf`` (or gzip-compressed) file.
        speed_flops: host speed the run times are meant at (flop/s), e.g. 100e6 for Taurus pstate 0.
        nb_hosts: platform size (default: the header's MaxProcs / ``procs_per_host``, else the widest job).
        max_jobs: keep at most this many jobs (the first ones in file order that pass the filters).
        start_time_s: start of the extract in trace time; also the origin of ``subtime``.
        duration_s: length of the extract (needs no ``start_time_s``: the first submit time is used).
        procs_per_host: trace processors per simulated host, or ``"node"`` (MaxProcs / MaxNodes).
        job_numbers: ``(first, last)``: keep only the jobs whose SWF job number is in ``[first, last]`` (the
            UPAS paper simulates jobs 20K-25K of a log, table 1).
        walltime_rule: the walltime of jobs without a requested time (:data:`WALLTIME_RULES`).
        too_large, no_runtime: ``drop``, ``keep`` or ``error`` for those classes of jobs (module docstring).

    Raises:
        InputError: malformed SWF (file, line, field), a duplicate job number, a job of a class set to
            ``error``, a header MaxProcs that gives no machine size, or a value beyond the bounds ``wattsched
            run`` applies (module docstring).
        OptionError: a non-positive number, an unknown rule or choice, ``nb_hosts`` beyond the ``hosts``
            bound, or a walltime rule giving a walltime beyond ``time_s``.
    """
    if not (speed_flops > 0 and math.isfinite(speed_flops)):
        raise OptionError(f"speed_flops must be a positive number, got {speed_flops!r}")
    for name, value in (("nb_hosts", nb_hosts), ("max_jobs", max_jobs)):
        if value is not None and value < 1:
            raise OptionError(f"{name} must be at least 1, got {value!r}")
    if nb_hosts is not None:
        check_count(nb_hosts, "hosts", "SWF conversion", "nb_hosts", "hosts", option_error)
    if duration_s is not None and not duration_s > 0:
        raise OptionError(f"duration_s must be positive, got {duration_s!r}")
    for name, choice in (("too_large", too_large), ("no_runtime", no_runtime)):
        if choice not in CHOICES:
            raise OptionError(f"{name} must be one of {', '.join(CHOICES)}, got {choice!r}")
    rule = _walltime_rule(walltime_rule)

    source = Path(swf_path)
    header, records = read_swf_trace(source)
    per_host = _procs_per_host(procs_per_host, header, source)
    machine_hosts = nb_hosts if nb_hosts is not None else _header_hosts(header, per_host, source)
    max_time_s, max_kept = limit("time_s"), limit("jobs")
    window_start = start_time_s
    if window_start is None and duration_s is not None:
        submits = [r["submit_time"] for r in records if r["submit_time"] >= 0]
        window_start = min(submits) if submits else 0.0

    counts: Counter[str] = Counter()
    filtered: Counter[str] = Counter()
    kept: list[_Kept] = []
    seen: dict[int, int] = {}

    def refuse(r: SwfJob, what: str, option: str) -> None:
        raise InputError(source, f"line {int(r['line'])}", f"job {int(r['job_number'])} {what} (option {option}: "
                                                           "error; drop or keep it instead)")

    for r in records:
        number = _whole(r, "job_number", source)
        if not -2**31 <= number < 2**31:  # the job's id: Batsim reads an integer id as a 32-bit int (IsInt)
            raise InputError(source, f"line {r['line']}, field 'job_number'",
                             f"{r['job_number']:.17g} is beyond the 32-bit integers Batsim reads as job ids")
        if number in seen:
            raise InputError(source, f"line {r['line']}, field 'job_number'",
                             f"job number {number} already used on line {seen[number]}")
        seen[number] = int(r["line"])
        if max_jobs is not None and len(kept) >= max_jobs:
            continue
        submit_s = r["submit_time"]
        if submit_s < 0:
            filtered["no_submit_time"] += 1
            continue
        if window_start is not None and (
                submit_s < window_start or (duration_s is not None and submit_s >= window_start + duration_s)):
            filtered["outside_window"] += 1
            continue
        if job_numbers is not None and not job_numbers[0] <= number <= job_numbers[1]:
            filtered["outside_job_numbers"] += 1
            continue
        procs = _processors(r, source)
        if procs <= 0:
            filtered["no_processors"] += 1
            continue
        run_s = r["run_time"]
        if run_s <= 0:
            reason = "cancelled" if int(r["status"]) == _STATUS_CANCELLED else "no_runtime"
            if no_runtime == "error":
                refuse(r, f"has no run time ({reason})", "no_runtime")
            if no_runtime == "drop":
                filtered[reason] += 1
                continue
            counts[f"kept_{reason}"] += 1
            run_s = 0.0
        res = math.ceil(procs / per_host)
        if machine_hosts is not None and res > machine_hosts:
            if too_large == "error":
                refuse(r, f"needs {res} hosts, the machine has {machine_hosts}", "too_large")
            if too_large == "drop":
                filtered["too_large"] += 1
                continue
            counts["kept_too_large"] += 1
        line = int(r["line"])
        if res > limit("hosts"):
            check_count(res, "hosts", str(source), f"line {line}, field '{_processors_field(r)}'",
                        f"hosts ({procs:g} processors, {per_host} a host)")
        walltime_s: float | None = r["requested_time"] if r["requested_time"] > 0 else None
        if walltime_s is not None and walltime_s > max_time_s:
            raise InputError(source, f"line {line}, field 'requested_time'",
                             f"a walltime of {walltime_s:g} s; {limit_hint('time_s', 's')}")
        if walltime_s is None:
            walltime_s = rule(run_s)
            counts["walltime_from_rule"] += 1
            if walltime_s is not None and walltime_s > max_time_s:
                raise OptionError(f"walltime rule {walltime_rule!r}: gives job {number} (line {line}) a walltime "
                                  f"of {walltime_s:g} s; {limit_hint('time_s', 's')}")
        if walltime_s is not None and run_s > walltime_s:
            run_s = walltime_s
            counts["clamped_to_walltime"] += 1
        if run_s > max_time_s:  # no walltime cuts it (rule 'none'): `wattsched run` stops at the bound
            raise InputError(source, f"line {line}, field 'run_time'",
                             f"a run time of {run_s:g} s and no walltime (rule {walltime_rule!r}); "
                             f"{limit_hint('time_s', 's')}")
        if len(kept) >= max_kept:  # `wattsched run` refuses a workload of more jobs
            check_count(len(kept) + 1, "jobs", str(source), f"line {line}",
                        "jobs kept (keep fewer: --max-jobs, --window or --job-numbers)")
        kept.append(_Kept(submit_s, number, res, walltime_s, _whole(r, "user_id", source), _whole(r, "group_id", source),
                          run_s, line))

    origin = window_start if window_start is not None else min((k.submit_s for k in kept), default=0.0)
    late = next((k for k in kept if k.submit_s - origin > max_time_s), None)
    if late is not None:
        raise InputError(source, f"line {late.line}, field 'submit_time'",
                         f"a subtime of {late.submit_s - origin:g} s; {limit_hint('time_s', 's')}")
    profiles: dict[str, dict[str, Any]] = {}
    jobs: list[dict[str, Any]] = []
    for k in sorted(kept, key=lambda k: k.submit_s):
        cpu = k.run_s * speed_flops
        if not math.isfinite(cpu):
            raise OptionError(f"speed_flops (--speed) {speed_flops:g}: job {k.number} (line {k.line}) runs "
                              f"{k.run_s:g} s, {cpu:g} flops, beyond the largest number a workload can hold")
        name = profile_name(cpu)
        profiles.setdefault(name, {"type": "parallel_homogeneous", "cpu": cpu, "com": 0})
        job: dict[str, Any] = {
            "id": k.number, "subtime": _int_or_float(k.submit_s - origin), "res": k.res, "profile": name
        }
        if k.walltime_s is not None:
            job["walltime"] = _int_or_float(k.walltime_s)
        job["user"] = k.user
        job["group"] = k.group
        jobs.append(job)

    nb_res = machine_hosts if machine_hosts is not None else max((j["res"] for j in jobs), default=1)
    meta: dict[str, Any] = {
        "source": str(source),
        "generator": "wattsched.workloads.swf",
        "speed_flops": speed_flops,
        "procs_per_host": per_host,
        "origin_s": origin,
        "header": {"max_procs": header.max_procs, "max_nodes": header.max_nodes,
                   "unix_start_time": header.unix_start_time, "time_zone": header.time_zone},
        "walltime_rule": walltime_rule,
        "nb_lines": len(records),
        "nb_jobs": len(jobs),
        "nb_walltime_from_rule": counts["walltime_from_rule"],
        "nb_clamped_to_walltime": counts["clamped_to_walltime"],
        "kept": {k.removeprefix("kept_"): v for k, v in sorted(counts.items()) if k.startswith("kept_")},
        "filtered": dict(sorted(filtered.items())),
    }
    if job_numbers is not None:
        meta["job_numbers"] = list(job_numbers)
    if window_start is not None:
        meta["window_s"] = [window_start, None if duration_s is None else window_start + duration_s]
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles, "meta": meta}


def summary_line(workload: dict[str, Any]) -> str:
    """One line accounting for a conversion: jobs kept of the lines read, dropped by reason, kept although
    unusual, walltimes given by the rule, run times cut to the walltime."""
    meta = workload["meta"]
    dropped = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in meta["filtered"].items() if n)
    kept = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in meta.get("kept", {}).items() if n)
    parts = [f"{counted(meta['nb_jobs'], 'job')} of {counted(meta['nb_lines'], 'line')} on "
             f"{counted(workload['nb_res'], 'host')}",
             f"dropped: {dropped or 'none'}"]
    if kept:
        parts.append(f"kept: {kept}")
    parts.append(f"walltime from the rule '{meta['walltime_rule']}': {meta['nb_walltime_from_rule']}")
    parts.append(f"run time cut to the walltime: {meta['nb_clamped_to_walltime']}")
    return f"{Path(meta['source']).name}: " + "; ".join(parts)


def require_jobs(workload: dict[str, Any], source: str | Path, what: str = "") -> dict[str, Any]:
    """``workload`` (a conversion of ``source``) when it has a job.

    Raises:
        InputError: it has none, naming ``source``, ``what`` was converted of it (a window, job numbers) and
            :func:`summary_line` (the reproductions simulated empty workloads, then failed or reported on nothing).
    """
    if not workload["jobs"]:
        raise InputError(source, "", f"no job left to simulate{what} ({summary_line(workload)})")
    return workload


def busiest_window(swf_path: str | Path, *, nb_hosts: int, duration_s: float, step_s: float = 7 * 86400.0,
                   procs_per_host: int | str = 1) -> tuple[float, float]:
    """The start (trace seconds, a multiple of ``step_s``) of the ``duration_s`` extract with the highest
    offered load Σ hosts × run time / (``nb_hosts`` × ``duration_s``), and that load.

    Counts the jobs :func:`swf_to_batsim` would keep (run time > 0, 1 ≤ hosts ≤ ``nb_hosts``, submit time ≥ 0)
    by their submission time, a job's hosts being its processors / ``procs_per_host`` rounded up (as
    :func:`swf_to_batsim`); a job's whole area counts in the window it is submitted in. A ``duration_s`` that is
    not a whole number of steps (half a day) counts the jobs submitted in exactly that extract.

    Raises:
        InputError: malformed SWF. OptionError: non-positive ``nb_hosts``, ``duration_s`` or ``step_s``.
    """
    if nb_hosts < 1 or not duration_s > 0 or not step_s > 0:
        raise OptionError(f"nb_hosts, duration_s and step_s must be positive, got {nb_hosts}, {duration_s}, {step_s}")
    area_by_step: Counter[int] = Counter()
    submitted: list[tuple[float, float]] = []  # (submit time, area) of every job counted
    last = 0
    header, records = read_swf_trace(swf_path)
    per_host = _procs_per_host(procs_per_host, header, Path(swf_path))
    for r in records:
        procs = _processors(r, Path(swf_path))
        res = math.ceil(procs / per_host) if procs > 0 else 0
        if r["run_time"] <= 0 or not 1 <= res <= nb_hosts or r["submit_time"] < 0:
            continue
        step = int(r["submit_time"] // step_s)
        area_by_step[step] += res * r["run_time"]
        submitted.append((r["submit_time"], res * r["run_time"]))
        last = max(last, step)
    width = max(1, math.ceil(duration_s / step_s))
    best_start, best_area = 0, -1.0
    # Only the starts where an extract's area can rise are tried (0, and the first start that takes in a job's
    # step or submission), in increasing order: the earliest best start of a scan of every step, without
    # scanning up to a submit time of 1e15 s (billions of steps) or summing `width` steps per start.
    if width * step_s == duration_s:  # whole steps: the areas of the steps each extract covers
        steps = sorted(area_by_step)
        cumulative = [0.0, *itertools.accumulate(area_by_step[s] for s in steps)]
        highest = max(0, last - width + 1)
        for first in sorted({0, *(min(highest, max(0, s - width + 1)) for s in steps)}):
            area = cumulative[bisect.bisect_left(steps, first + width)] - cumulative[bisect.bisect_left(steps, first)]
            if area > best_area:
                best_start, best_area = first, area
    else:  # a part of a step (--busiest 0.5): the jobs submitted in [start, start + duration_s) exactly
        submitted.sort(key=lambda job: job[0])
        times = [t for t, _ in submitted]
        cumulative = [0.0, *itertools.accumulate(a for _, a in submitted)]
        candidates = {0}
        for t in times:  # the first start whose extract reaches t, and its neighbours (rounding of the division)
            first = math.floor((t - duration_s) / step_s) + 1
            candidates.update(min(last, max(0, first + d)) for d in (-1, 0, 1))
        for first in sorted(candidates):
            lo = bisect.bisect_left(times, first * step_s)
            area = cumulative[bisect.bisect_left(times, first * step_s + duration_s)] - cumulative[lo]
            if area > best_area:
                best_start, best_area = first, area
    return best_start * step_s, max(best_area, 0.0) / (nb_hosts * duration_s)
