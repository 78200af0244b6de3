"""A run's node states as a Paraver trace: ``.prv`` (records), ``.pcf`` (state and event names, colours)
and ``.row`` (row names), the pictures of the ESC paper's figure 4 (§2.7: "this module generates a file, in
prv format ... There is also a configuration file, in pcf format, to configure the states of the cores and
the colors").

The trace (format of Paraver's ``paraver-kernel``: ``utils/traceparser/traceheader.h``,
``tracebodyio_v1.cpp``, ``pcffileparser.cpp``, ``rowfileparser.cpp``):

- **one row per compute host**: N nodes of one CPU each, one application of N tasks of one thread, task
  ``i`` on node ``i`` (1-based: host id + 1). Header::

      #Paraver (01/01/70 at 00:00):<end in µs>:N(1,...,1):1:N(1:1,1:2,...,1:N)

  Times are integer microseconds from the start of the simulation (no ``_ns`` suffix: microseconds,
  Batsim prints times with 6 decimals); the date is fixed (a simulation has none), so the files of a run
  are always the same;
- **state records** ``1:cpu:1:task:1:begin:end:state`` for every interval of every host (sorted by begin
  time, then host; zero-length intervals left out; every host covers ``[0, end]`` without gap), with the
  states of :mod:`wattsched.analysis.node_states`: 0 off (standby), 1 running (loaded), 2 idle,
  3 switching on, 4 switching off (the five states of the ESC paper's node, §2.1);
- **event records** ``2:cpu:1:task:1:time:type:value``: type 1000 *job id* (the job's number when it
  starts on the host, 0 when it ends; jobs whose id is not a number get codes 1..n; the ``.pcf`` names every
  value with its job's id),
  type 1001 *pstate* (the host's pstate at 0 and whenever it reaches one: DVFS, asleep, booted). Records
  of one time come in the order: states, then events (per host: a job's end before the next one's start).

The ``.pcf`` names the five states (``STATES``), gives them colours (``STATES_COLOR``: standby grey,
loaded red, idle green, switching on orange, switching off purple, as ``wattsched plot``'s machine states)
and names both event types (``EVENT_TYPE``, with ``VALUES``). The ``.row`` names the rows with the hosts'
names (``LEVEL CPU``, ``LEVEL NODE``, ``LEVEL THREAD``; from the platform when given, else ``host <id>``).

Command line: ``wattsched paraver RESULTS [--output-dir DIR] [--platform P.xml]``.
"""

from __future__ import annotations

from bisect import bisect_left
from pathlib import Path
from typing import Sequence

from wattsched.analysis.node_states import STATES, NodeStates
from wattsched.base.errors import OptionError, counted
from wattsched.base.fileio import atomic_paths

__all__ = ["JOB_EVENT", "PSTATE_EVENT", "STATE_COLOURS", "paraver_text", "write_paraver"]

JOB_EVENT = 1000
PSTATE_EVENT = 1001
#: RGB colour of each state (off, running, idle, switching on, switching off).
STATE_COLOURS: tuple[tuple[int, int, int], ...] = (
    (127, 127, 127), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189))
DATE = "01/01/70 at 00:00"


def _us(t: float) -> int:
    return int(round(t * 1e6))


def _job_codes(states: NodeStates) -> dict[str, int]:
    """The event value of every job: its number when every id is one (and none is 0), else codes 1..n."""
    ids = sorted({job for jobs in states.jobs for _, _, job in jobs})
    try:
        numbers = {job: int(job) for job in ids}
        if all(v > 0 for v in numbers.values()) and len(set(numbers.values())) == len(ids) \
                and max(numbers.values(), default=0) < 2**31:
            return numbers
    except ValueError:
        pass
    return {job: k for k, job in enumerate(ids, start=1)}


def _shown_jobs(states: NodeStates, host: int) -> list[tuple[float, float, str]]:
    """The jobs of ``host`` as its job events show them: a job of no work ends at its start, but Batsim prints
    1e-5 s of ``execution_time`` (behaviour 17), so its finish is cut at the next job's start or switch-off on
    the host (else its end event, 0, would hide the next job); zero-length jobs left out."""
    jobs = states.jobs[host]  # (by start)
    offs = states.switch_offs[host]  # (in time order)
    out = []
    for k, (t0, t1, job) in enumerate(jobs):
        if k + 1 < len(jobs):
            t1 = min(t1, jobs[k + 1][0])
        i = bisect_left(offs, t0)
        if i < len(offs):
            t1 = min(t1, offs[i])
        if t1 > t0:
            out.append((t0, t1, job))
    return out


def paraver_text(states: NodeStates, names: Sequence[str] | None = None) -> tuple[str, str, str]:
    """The ``.prv``, ``.pcf`` and ``.row`` texts of ``states`` (module docstring)."""
    n = states.nb_hosts
    if names is not None and len(names) != n:
        raise OptionError(f"{counted(len(names), 'host name')} for {counted(n, 'host')}")
    end = _us(states.end_s)
    header = (f"#Paraver ({DATE}):{end}:{n}({','.join('1' * n)}):1:"
              f"{n}({','.join(f'1:{i}' for i in range(1, n + 1))})")
    codes = _job_codes(states)
    # (time, kind, host, text), kind: 1 state, 2 job end, 3 job start, 4 pstate (a job ending at t before
    # the one starting at t on the same host)
    records: list[tuple[int, int, int, str]] = []
    for h in range(n):
        cpu = h + 1
        for a, b, state in states.intervals[h]:
            begin, finish = _us(a), _us(b)
            if finish > begin:
                records.append((begin, 1, cpu, f"1:{cpu}:1:{cpu}:1:{begin}:{finish}:{state}"))
        for t0, t1, job in _shown_jobs(states, h):
            records.append((_us(t1), 2, cpu, f"2:{cpu}:1:{cpu}:1:{_us(t1)}:{JOB_EVENT}:0"))
            records.append((_us(t0), 3, cpu, f"2:{cpu}:1:{cpu}:1:{_us(t0)}:{JOB_EVENT}:{codes[job]}"))
        for t, pstate in states.pstates[h]:
            records.append((_us(t), 4, cpu, f"2:{cpu}:1:{cpu}:1:{_us(t)}:{PSTATE_EVENT}:{pstate}"))
    records.sort(key=lambda r: (r[0], r[1] != 1, r[2], r[1]))
    prv = header + "\n" + "".join(r[3] + "\n" for r in records)

    pstates = sorted({p for ps in states.pstates for _, p in ps})
    pcf = [
        "DEFAULT_OPTIONS", "",
        "LEVEL               THREAD", "UNITS               MICROSEC", "LOOK_BACK           100",
        "SPEED               1", "FLAG_ICONS          ENABLED", f"NUM_OF_STATE_COLORS {len(STATES)}",
        "YMAX_SCALE          37", "", "",
        "DEFAULT_SEMANTIC", "", "THREAD_FUNC          State As Is", "", "",
        "STATES",
        *[f"{k}    {label}" for k, label in enumerate(("Off (standby)", "Running (loaded)", "Idle", "Switching on",
                                                         "Switching off"))],
        "", "",
        "STATES_COLOR",
        *[f"{k}    {{{r},{g},{b}}}" for k, (r, g, b) in enumerate(STATE_COLOURS)],
        "", "",
        "EVENT_TYPE", f"0    {JOB_EVENT}    Job id", "VALUES", "0      none",
        *[f"{code}      {job}" for job, code in sorted(codes.items(), key=lambda kv: kv[1])],
        "", "",
        "EVENT_TYPE", f"0    {PSTATE_EVENT}    Pstate", "VALUES", *[f"{p}      pstate {p}" for p in pstates],
        "",
    ]
    labels = list(names) if names is not None else [f"host {h}" for h in range(n)]
    row = "".join(f"LEVEL {level} SIZE {n}\n" + "".join(f"{label}\n" for label in labels) + "\n"
                  for level in ("CPU", "NODE", "THREAD"))
    return prv, "\n".join(pcf) + "\n", row


def write_paraver(states: NodeStates, prefix: str | Path, names: Sequence[str] | None = None) -> list[Path]:
    """Write ``<prefix>.prv``, ``.pcf`` and ``.row`` atomically (all three or none); returns their paths."""
    base = Path(prefix)
    paths = [base.with_name(base.name + ext) for ext in (".prv", ".pcf", ".row")]
    texts = paraver_text(states, names)
    try:
        with atomic_paths(paths) as temps:
            for temp, text in zip(temps, texts):
                temp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OptionError(f"cannot write {base}.prv: {exc.strerror}") from None
    return paths
