"""The two ways to drive one :class:`~simulator.engine.Simulation`: in-process and over ZeroMQ.

- :func:`run_inprocess` hands every Batsim message to a *handler* in this process (a function from
  a message to the scheduler's reply: no sockets, no JSON). The schedulers layer provides handlers
  (:func:`wattsched.schedulers.adapter.scheduler_handler`: our presets directly, any pybatsim
  scheduler through pybatsim's own client). This is the fast default.
- :func:`run_zmq` is a Batsim stand-in: it connects as REQ to a scheduler's REP endpoint, like
  ``batsim -s tcp://...``, so an unmodified scheduler process (``pybatsim easy-backfill``,
  ``wattsched serve`` or any Batsim 4 client) runs against the embedded simulator.

Messages are handed to an in-process scheduler as Python objects shared with the engine (job
entries, host properties): schedulers must treat them as read-only, as pybatsim's do.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from wattsched.simulator.engine import Simulation
from wattsched.base.errors import NoAnswer, OptionError, ProtocolError
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import check_endpoint, check_json_tree, load_json

log = logging.getLogger(__name__)

#: Called after every Batsim message with (simulated time in s, jobs finished or rejected, total jobs).
ProgressCallback = Callable[[float, int, int], None]


@dataclass
class RunStats:
    """Wall-clock figures of one run (``_schedule.csv``'s ``scheduling_time``/``simulation_time``)."""

    simulation_time_s: float
    scheduling_time_s: float
    messages: int
    events: int


#: A Batsim message in, the scheduler's reply out.
Handler = Callable[[dict], dict]

#: Seconds :func:`run_zmq` waits for a scheduler's answer to one message by default (``--timeout``).
DEFAULT_TIMEOUT_S = 600.0


def describe_message(number: int, msg: dict) -> str:
    """``"Batsim message 12 (t=3600, JOB_COMPLETED w0!3, REQUESTED_CALL)"``: a message in an error."""
    kinds: list[str] = []
    for ev in msg.get("events", [])[:4]:
        data = ev.get("data") or {}
        job = data.get("job_id") if isinstance(data, dict) else None
        kinds.append(f"{ev.get('type')} {job}" if job else str(ev.get("type")))
    more = len(msg.get("events", [])) - len(kinds)
    return f"Batsim message {number} (t={msg.get('now', 0):.12g}, {', '.join(kinds)}{f', +{more}' if more > 0 else ''})"


@dataclass(frozen=True)
class _Bounds:
    """The bounds a reply is checked against (:mod:`wattsched.base.limits`), read once per run: the environment
    is not read again at each of a run's messages."""

    nesting: int
    time_s: float

    @classmethod
    def now(cls) -> "_Bounds":
        return cls(int(limit("nesting")), limit("time_s"))


def _apply(sim: Simulation, msg: dict, reply: object, bounds: _Bounds, *, parsed: bool = False) -> dict | None:
    """``sim.step(reply)``; a reply Batsim would refuse raises :class:`ProtocolError` naming the message it
    answers and the event at fault. ``parsed``: ``reply`` comes from :func:`load_json`, which checked its
    numbers and nesting already (over ZeroMQ)."""
    number = sim.nb_messages

    if not parsed:
        check_json_tree(_never_calls_dropped(reply, msg.get("now")), "", _describing_error(number, msg),
                        max_depth=bounds.nesting)
    _check_reply_times(reply, number, msg, bounds.time_s)
    try:
        return sim.step(reply)  # type: ignore[arg-type]
    except ProtocolError as exc:
        raise ProtocolError(f"the scheduler's reply to {describe_message(number, msg)}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ProtocolError(f"the scheduler's reply to {describe_message(number, msg)} is malformed "
                            f"({type(exc).__name__}: {exc})") from None


def _never_calls_dropped(reply: object, now: object) -> object:
    """``reply`` for the number checks, without what an in-process scheduler may send at +inf and is not its
    own number: a ``CALL_ME_LATER`` at +inf ("never"; the simulator then delivers a REQUESTED_CALL at t = inf;
    our presets no longer ask for one, a third-party in-process scheduler may), and the message's own ``now``
    echoed in the reply. Over ZeroMQ JSON carries neither."""
    if not isinstance(reply, dict) or not isinstance(reply.get("events"), list):
        return reply
    events = [ev for ev in reply["events"] if not (
        isinstance(ev, dict) and ev.get("type") == "CALL_ME_LATER" and isinstance(ev.get("data"), dict)
        and ev["data"].get("timestamp") == math.inf)]
    if now == math.inf:
        events = [{**ev, "timestamp": 0.0} if isinstance(ev, dict) and ev.get("timestamp") == now else ev
                  for ev in events]
        reply = {**reply, "now": 0.0} if reply.get("now") == now else reply
    return reply if events == reply["events"] else {**reply, "events": events}


def _check_reply_times(reply: object, number: int, msg: dict, bound: float) -> None:
    """Times in a reply (``now``, each event's ``timestamp``, CALL_ME_LATER's) within the ``time_s`` bound
    (``bound``): a scheduler asking to be woken up in 10^300 s is refused, not simulated. Job metadata must be
    something ``_jobs.csv`` can carry."""
    if not isinstance(reply, dict):
        return
    events = reply.get("events")
    candidates = [("now", reply.get("now"))]
    if isinstance(events, list):
        for ev in events:
            if isinstance(ev, dict):
                candidates.append((f"{ev.get('type')}.timestamp", ev.get("timestamp")))
                data = ev.get("data")
                if isinstance(data, dict) and "timestamp" in data:
                    candidates.append((f"{ev.get('type')}.data.timestamp", data.get("timestamp")))
                if ev.get("type") == "SET_JOB_METADATA" and isinstance(data, dict):
                    meta = data.get("metadata")
                    if isinstance(meta, str) and not {'"', "\n", "\r"}.isdisjoint(meta):
                        raise ProtocolError(f"the scheduler's reply to {describe_message(number, msg)}: "
                                            f"SET_JOB_METADATA {data.get('job_id')}: field 'metadata' {meta[:40]!r} "
                                            "cannot hold a double quote or a line break (Batsim writes it between "
                                            "double quotes, unescaped, in _jobs.csv)")
    for field, value in candidates:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and bound < abs(value) < math.inf:
            if field == "now" and value == msg.get("now"):  # the reply only echoes the time the simulation reached
                raise ProtocolError(f"the simulation reached t={value:.12g} s at {describe_message(number, msg)}, "
                                    f"beyond the times a simulation reaches; {limit_hint('time_s', 's')}: a job "
                                    "started or ran past it (a scheduler waiting until then, e.g. for a window that "
                                    "ends there)")
            raise ProtocolError(f"the scheduler's reply to {describe_message(number, msg)}: {field} {value:.12g} s "
                                f"is beyond the times a simulation reaches; {limit_hint('time_s', 's')}")


def _reply_error(source: str, field: str, problem: str) -> ProtocolError:
    return ProtocolError(f"{source}{' at ' + field if field else ''}: {problem}")


def _describing_error(number: int, msg: dict) -> Callable[[str, str, str], ProtocolError]:
    """The error factory of a check of the reply to message ``number``: the message is described only on error
    (describing it costs ~5 % of a run's simulator time)."""

    def reply_error(_source: str, field: str, problem: str) -> ProtocolError:
        return _reply_error(f"the scheduler's reply to {describe_message(number, msg)}", field, problem)

    return reply_error


def _reply_text(frames: list[bytes], number: int, msg: dict) -> str:
    """A reply received over ZeroMQ (its frames) as text. One of several frames is refused (the REQ socket could
    send no next message: ZMQError), and so is one that is not UTF-8 (a UnicodeDecodeError), each naming the
    message it answers."""
    error = _describing_error(number, msg)
    if len(frames) != 1:
        raise error("", "", f"a reply of {len(frames)} parts (ZeroMQ frames); a Batsim scheduler replies in one")
    try:
        return frames[0].decode()
    except UnicodeDecodeError as exc:
        raise error("", "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _progress_done(sim: Simulation) -> int:
    return len(sim.jobs_rows)


#: :func:`run_inprocess` lets this many container objects accumulate before a young collection of the garbage
#: collector (Python's default is 700)
GC_GEN0_THRESHOLD = 50_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector made less eager for a run, then as it was: a run allocates and frees
    millions of short-lived objects (events, messages, decisions), few of them in cycles, and every tenth young
    collection of the older ones and some full ones traversed every live object, the workload's jobs included (issue
    15: reducePC on the first 60,000 jobs of SDSC-Blue 41.3 → 35.5 s of CPU, 37.3 s with the collector off; the
    20,000-job week under EASY within noise, reducePC with shutdown there 3 % less). Unreachable cycles are still
    collected, at most this many objects later (:data:`GC_GEN0_THRESHOLD`)."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_GEN0_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _no_answer(signum: int, frame: object) -> None:
    raise NoAnswer


def run_inprocess(sim: Simulation, handler: Handler, *, progress: ProgressCallback | None = None,
                  max_messages: int | None = None, timeout_s: float | None = None) -> RunStats:
    """Run ``sim`` to its end with a scheduler ``handler`` (message → reply), in this process.

    ``max_messages`` stops after that many Batsim messages (for benchmarks of decision costs; the
    simulation is then unfinished and has no meaningful outputs). ``timeout_s``: give up when the handler does not
    answer a message within that many seconds of wall time (a scheduler that loops or blocks; SIGALRM, so from the
    main thread of a POSIX process only; None: no limit, as Batsim waits forever).

    Raises:
        ProtocolError: the handler returned no reply, or a reply Batsim would refuse, or not within ``timeout_s``.
    """
    with _fewer_collections():
        if timeout_s is None:
            return _run_inprocess(sim, handler, progress, max_messages, None)
        previous = signal.signal(signal.SIGALRM, _no_answer)
        try:
            return _run_inprocess(sim, handler, progress, max_messages, timeout_s)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            signal.signal(signal.SIGALRM, previous)


def _run_inprocess(sim: Simulation, handler: Handler, progress: ProgressCallback | None, max_messages: int | None,
                   timeout_s: float | None) -> RunStats:
    t0 = time.perf_counter()
    sched_s = 0.0
    total = len(sim.jobs)  # static jobs, and the registered ones as they come
    bounds = _Bounds.now()
    msg: dict | None = sim.start()
    while msg is not None:
        t = time.perf_counter()
        if timeout_s is None:
            reply = handler(msg)
        else:
            try:
                signal.setitimer(signal.ITIMER_REAL, timeout_s)
                try:
                    reply = handler(msg)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0.0)
            except NoAnswer:
                raise ProtocolError(f"the scheduler did not answer {describe_message(sim.nb_messages, msg)} within "
                                    f"{timeout_s:g} s (--timeout)") from None
        sched_s += time.perf_counter() - t
        if not isinstance(reply, dict):
            raise ProtocolError(f"the scheduler did not reply to {describe_message(sim.nb_messages, msg)}")
        msg = _apply(sim, msg, reply, bounds)
        if msg is not None and max_messages is not None and sim.nb_messages >= max_messages:
            break
        if progress is not None and msg is not None:
            progress(sim.now_s, _progress_done(sim), max(total, len(sim.jobs)))
    return RunStats(time.perf_counter() - t0, sched_s, sim.nb_messages, sim.nb_events)


def run_zmq(sim: Simulation, endpoint: str, *, progress: ProgressCallback | None = None,
            timeout_s: float | None = None) -> RunStats:
    """Run ``sim`` against a scheduler process listening (REP) on ``endpoint``, as Batsim does.

    The socket has its own ZeroMQ context, closed on every way out (no thread or port left behind). A
    scheduler that closes the connection while a message waits for its answer (it died) is reported at
    once; one that does not answer within ``timeout_s`` (or that nothing listens for) when it runs out.

    Args:
        endpoint: e.g. ``tcp://127.0.0.1:28000``.
        timeout_s: give up when the scheduler does not answer a message within this many seconds
            (default :data:`DEFAULT_TIMEOUT_S`; Batsim itself waits forever).

    Raises:
        OptionError: ``endpoint`` is not a ZeroMQ endpoint.
        ProtocolError: the scheduler died, did not answer in time, or sent a malformed or refused reply
            (the message it answered and the event are named).
    """
    import zmq

    check_endpoint(endpoint, "--connect")
    timeout = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    bounds = _Bounds.now()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
    try:
        try:
            sock.connect(endpoint)
        except zmq.ZMQError as exc:
            raise OptionError(f"--connect {endpoint}: not a ZeroMQ endpoint one can connect to ({exc})") from None
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        connected = False
        t0 = time.perf_counter()
        sched_s = 0.0
        total = len(sim.jobs)  # static jobs, and the registered ones as they come
        msg: dict | None = sim.start()
        while msg is not None:
            number = sim.nb_messages
            t = time.perf_counter()
            sock.send_string(json.dumps(msg))
            deadline = t + timeout
            raw: str | None = None
            while raw is None:
                remaining_ms = max(0, int((deadline - time.perf_counter()) * 1000))
                ready = dict(poller.poll(remaining_ms))
                if sock in ready:
                    raw = _reply_text(sock.recv_multipart(), number, msg)
                    break
                if monitor in ready:
                    from zmq.utils.monitor import recv_monitor_message

                    event = recv_monitor_message(monitor)["event"]
                    connected = connected or event == zmq.EVENT_CONNECTED
                    if event == zmq.EVENT_DISCONNECTED:
                        raise ProtocolError(f"the scheduler at {endpoint} closed the connection (did it die?) "
                                            f"before answering {describe_message(number, msg)}")
                    continue
                if time.perf_counter() >= deadline:
                    why = "answer" if connected else "answer (nothing seems to listen there)"
                    raise ProtocolError(f"the scheduler at {endpoint} did not {why} within {timeout:g} s "
                                        f"to {describe_message(number, msg)}; --timeout S waits longer")
            sched_s += time.perf_counter() - t
            reply = load_json(raw, "", _describing_error(number, msg), max_depth=bounds.nesting)
            msg = _apply(sim, msg, reply, bounds, parsed=True)
            if progress is not None and msg is not None:
                progress(sim.now_s, _progress_done(sim), max(total, len(sim.jobs)))
    finally:
        monitor.close(linger=0)
        sock.close(linger=0)
        ctx.term()
    return RunStats(time.perf_counter() - t0, sched_s, sim.nb_messages, sim.nb_events)
