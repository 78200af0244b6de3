"""Convert a Standard Workload Format trace (Parallel Workloads Archive) into a Batsim JSON workload.

The energy-budget paper (§V-C) replays 1-week extracts of three PWA traces (Curie, MetaCentrum,
SDSC-Blue); this module makes those extracts. SWF (Feitelson et al., PWA "swf.html"): one job per line,
18 whitespace-separated numeric fields, ``;`` starts a header comment, ``-1`` means unknown:

 1 job number · 2 submit time (s) · 3 wait time · 4 run time (s) · 5 allocated processors · 6 average CPU
 time · 7 used memory · 8 requested processors · 9 requested time (s) · 10 requested memory · 11 status
 (1 completed, 0 failed, 5 cancelled, ...) · 12 user id · 13 group id · 14 executable · 15 queue ·
 16 partition · 17 preceding job · 18 think time.

Conversion rules (``procs_per_host`` trace processors make one simulated host; the default, 1, is the
paper's choice of attributing the Taurus node measures to each processor):

* ``id`` = the SWF job number; ``user`` = field 12 (``-1`` kept when unknown; Batsim keeps extra fields).
* ``subtime`` = submit time − origin, where origin = ``start_time_s`` when given, else the earliest
  submit time among the kept jobs. With ``start_time_s``/``duration_s`` only jobs submitted in
  ``[start, start + duration)`` are kept (trace time, before shifting).
* ``res`` = allocated processors (field 5), or requested processors (field 8) when field 5 is ``-1``,
  divided by ``procs_per_host`` and rounded up.
* ``walltime`` = requested time (field 9) when > 0; otherwise the job has no ``walltime`` key (Batsim
  never kills it).
* run time = field 4; when it exceeds the walltime (the trace says the job was killed, often a few
  seconds past its limit) it is **clamped to the walltime**. Note that Batsim then completes the job
  successfully exactly at its walltime (a compute task ending exactly at the walltime succeeds,
  reference behaviour 14); the occupancy of the machine is the same as a kill.
* profile: ``parallel_homogeneous`` with ``cpu`` = run time × ``speed_flops`` flops per host and
  ``com`` 0, named ``"c<cpu>"`` (``c360000000000`` for 3600 s at 100 Mflop/s) and shared by every job
  with the same work.

Jobs dropped, counted by reason in ``workload["meta"]["filtered"]``:

* ``cancelled``: status 5 (cancelled) and run time ≤ 0 (never started);
* ``no_runtime``: any other job with run time ≤ 0 (no zero-length convention: nothing to simulate);
* ``no_processors``: neither field 5 nor field 8 is positive;
* ``no_submit_time``: submit time < 0;
* ``too_large``: ``res`` > ``nb_hosts`` (when ``nb_hosts`` is given);
* ``outside_window``: submitted before ``start_time_s`` or at/after ``start_time_s + duration_s``.
* ``outside_job_numbers``: a job number outside ``job_numbers`` (when given).

``max_jobs`` stops after that many kept jobs (file order). The result is a dict
``{"nb_res", "jobs", "profiles", "meta"}``; ``jobs`` are sorted by ``subtime`` (stable), ``nb_res`` =
``nb_hosts`` or the largest ``res``. ``meta`` (ignored by Batsim, which reads only ``nb_res``, ``jobs``
and ``profiles``) records the source, the options and the counts.

:func:`busiest_window` finds the extract of a given length with the highest offered load, the kind of
period the papers pick ("we selected traces with high average usage", EFS paper §IV-A).

Command line: ``wattsched swf trace.swf --output w.json --speed 100e6 [--hosts N] [--window START,END]``.
"""

from __future__ import annotations

import gzip
import math
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from wattsched.base.errors import InputError, OptionError

__all__ = ["SWF_FIELDS", "SwfJob", "read_swf", "swf_to_batsim", "profile_name", "busiest_window"]

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


class SwfJob(dict):
    """One SWF line: a dict from :data:`SWF_FIELDS` names to numbers, plus ``line`` (1-based)."""


def _parse_number(text: str, source: Path, line_no: int, field: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(source, f"line {line_no}, field '{field}'", f"{text!r} is not a number")
    return value


def read_swf(swf_path: str | Path) -> list[SwfJob]:
    """Parse an SWF file (``.swf``, or gzipped ``.swf.gz``) into one :class:`SwfJob` per job line (comments
    and blank lines skipped).

    Raises:
        InputError: unreadable file, a line without 18 fields, or a field that is not a number
            (the message gives the file, the line number and the field name).
    """
    source = Path(swf_path)
    try:
        if source.suffix == ".gz":  # the Parallel Workloads Archive ships its logs gzipped
            with gzip.open(source, "rt", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        else:
            text = source.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(source, "", f"cannot read the file: {exc.strerror or exc}") from exc
    jobs: list[SwfJob] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(";", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != len(SWF_FIELDS):
            raise InputError(
                source, f"line {line_no}", f"expected {len(SWF_FIELDS)} fields, found {len(parts)}"
            )
        job = SwfJob(
            (name, _parse_number(part, source, line_no, name)) for name, part in zip(SWF_FIELDS, parts)
        )
        job["line"] = line_no
        jobs.append(job)
    return jobs


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
    run_s: float
    clamped: bool


def _int_or_float(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def swf_to_batsim(
    swf_path: str | Path,
    *,
    speed_flops: float,
    nb_hosts: int | None = None,
    max_jobs: int | None = None,
    start_time_s: float | None = None,
    duration_s: float | None = None,
    procs_per_host: int = 1,
    job_numbers: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Batsim workload dict of an SWF trace, following the rules of the module docstring.

    Args:
        swf_path: the ``.swf`` file.
        speed_flops: host speed the run times were measured at (flop/s), e.g. 100e6 for Taurus pstate 0.
        nb_hosts: platform size; larger jobs are dropped (``too_large``) and ``nb_res`` is set to it.
        max_jobs: keep at most this many jobs (the first ones in file order that pass the filters).
        start_time_s: start of the extract in trace time; also the origin of ``subtime``.
        duration_s: length of the extract (needs no ``start_time_s``: the first submit time is used).
        procs_per_host: trace processors per simulated host.
        job_numbers: ``(first, last)``: keep only the jobs whose SWF job number is in ``[first, last]`` (the
            UPAS paper simulates jobs 20K-25K of a log, table 1).

    Raises:
        InputError: malformed SWF (file, line, field) or a duplicate job number.
        OptionError: non-positive ``speed_flops``, ``nb_hosts``, ``max_jobs``, ``duration_s`` or
            ``procs_per_host``.
    """
    if not (speed_flops > 0 and math.isfinite(speed_flops)):
        raise OptionError(f"speed_flops must be a positive number, got {speed_flops!r}")
    for name, value in (("nb_hosts", nb_hosts), ("max_jobs", max_jobs)):
        if value is not None and value < 1:
            raise OptionError(f"{name} must be at least 1, got {value!r}")
    if procs_per_host < 1:
        raise OptionError(f"procs_per_host must be at least 1, got {procs_per_host!r}")
    if duration_s is not None and not duration_s > 0:
        raise OptionError(f"duration_s must be positive, got {duration_s!r}")

    source = Path(swf_path)
    records = read_swf(source)
    window_start = start_time_s
    if window_start is None and duration_s is not None:
        submits = [r["submit_time"] for r in records if r["submit_time"] >= 0]
        window_start = min(submits) if submits else 0.0

    filtered: Counter[str] = Counter()
    kept: list[_Kept] = []
    seen: dict[int, int] = {}
    for r in records:
        number = int(r["job_number"])
        if number in seen:
            raise InputError(
                source, f"line {r['line']}, field 'job_number'",
                f"job number {number} already used on line {seen[number]}",
            )
        seen[number] = int(r["line"])
        if max_jobs is not None and len(kept) >= max_jobs:
            continue
        if job_numbers is not None and not job_numbers[0] <= number <= job_numbers[1]:
            filtered["outside_job_numbers"] += 1
            continue
        run_s = r["run_time"]
        if run_s <= 0:
            filtered["cancelled" if int(r["status"]) == _STATUS_CANCELLED else "no_runtime"] += 1
            continue
        procs = r["allocated_processors"] if r["allocated_processors"] != -1 else r["requested_processors"]
        if procs <= 0:
            filtered["no_processors"] += 1
            continue
        submit_s = r["submit_time"]
        if submit_s < 0:
            filtered["no_submit_time"] += 1
            continue
        if window_start is not None and (
            submit_s < window_start or (duration_s is not None and submit_s >= window_start + duration_s)
        ):
            filtered["outside_window"] += 1
            continue
        res = math.ceil(procs / procs_per_host)
        if nb_hosts is not None and res > nb_hosts:
            filtered["too_large"] += 1
            continue
        walltime_s: float | None = r["requested_time"] if r["requested_time"] > 0 else None
        clamped = walltime_s is not None and run_s > walltime_s
        if clamped:
            run_s = walltime_s
        kept.append(_Kept(submit_s, number, res, walltime_s, int(r["user_id"]), run_s, clamped))

    origin = window_start if window_start is not None else min((k.submit_s for k in kept), default=0.0)
    profiles: dict[str, dict[str, Any]] = {}
    jobs: list[dict[str, Any]] = []
    for k in sorted(kept, key=lambda k: k.submit_s):
        cpu = k.run_s * speed_flops
        name = profile_name(cpu)
        profiles.setdefault(name, {"type": "parallel_homogeneous", "cpu": cpu, "com": 0})
        job: dict[str, Any] = {
            "id": k.number, "subtime": _int_or_float(k.submit_s - origin), "res": k.res, "profile": name
        }
        if k.walltime_s is not None:
            job["walltime"] = _int_or_float(k.walltime_s)
        job["user"] = k.user
        jobs.append(job)

    nb_res = nb_hosts if nb_hosts is not None else max((j["res"] for j in jobs), default=1)
    meta = {
        "source": str(source),
        "generator": "wattsched.workloads.swf",
        "speed_flops": speed_flops,
        "procs_per_host": procs_per_host,
        "origin_s": origin,
        "nb_lines": len(records),
        "nb_jobs": len(jobs),
        "nb_clamped_to_walltime": sum(k.clamped for k in kept),
        "filtered": dict(sorted(filtered.items())),
    }
    if job_numbers is not None:
        meta["job_numbers"] = list(job_numbers)
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles, "meta": meta}


def busiest_window(swf_path: str | Path, *, nb_hosts: int, duration_s: float, step_s: float = 7 * 86400.0
                   ) -> tuple[float, float]:
    """The start (trace seconds, a multiple of ``step_s``) of the ``duration_s`` extract with the highest
    offered load Σ processors × run time / (``nb_hosts`` × ``duration_s``), and that load.

    Counts the jobs :func:`swf_to_batsim` would keep (run time > 0, 1 ≤ processors ≤ ``nb_hosts``, submit
    time ≥ 0) by their submission time; a job's whole area counts in the window it is submitted in.

    Raises:
        InputError: malformed SWF. OptionError: non-positive ``nb_hosts``, ``duration_s`` or ``step_s``.
    """
    if nb_hosts < 1 or not duration_s > 0 or not step_s > 0:
        raise OptionError(f"nb_hosts, duration_s and step_s must be positive, got {nb_hosts}, {duration_s}, {step_s}")
    area_by_step: Counter[int] = Counter()
    last = 0
    for r in read_swf(swf_path):
        procs = r["allocated_processors"] if r["allocated_processors"] != -1 else r["requested_processors"]
        if r["run_time"] <= 0 or not 1 <= procs <= nb_hosts or r["submit_time"] < 0:
            continue
        step = int(r["submit_time"] // step_s)
        area_by_step[step] += procs * r["run_time"]
        last = max(last, step)
    width = max(1, math.ceil(duration_s / step_s))
    best_start, best_area = 0, -1.0
    for first in range(0, max(1, last - width + 2)):
        area = sum(area_by_step.get(first + i, 0.0) for i in range(width))
        if area > best_area:
            best_start, best_area = first, area
    return best_start * step_s, max(best_area, 0.0) / (nb_hosts * duration_s)
