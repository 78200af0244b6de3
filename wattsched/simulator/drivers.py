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

import json
import logging
import time
from dataclasses import dataclass
from typing import Callable

from wattsched.simulator.engine import Simulation
from wattsched.base.errors import ProtocolError, WattschedError

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


def _progress_done(sim: Simulation) -> int:
    return len(sim.jobs_rows)


def run_inprocess(sim: Simulation, handler: Handler, *, progress: ProgressCallback | None = None,
                  max_messages: int | None = None) -> RunStats:
    """Run ``sim`` to its end with a scheduler ``handler`` (message → reply), in this process.

    ``max_messages`` stops after that many Batsim messages (for benchmarks of decision costs; the
    simulation is then unfinished and has no meaningful outputs).

    Raises:
        ProtocolError: the handler returned no reply, or a reply Batsim would refuse.
    """
    t0 = time.perf_counter()
    sched_s = 0.0
    total = len(sim.jobs)  # static jobs, and the registered ones as they come
    msg: dict | None = sim.start()
    while msg is not None:
        t = time.perf_counter()
        reply = handler(msg)
        sched_s += time.perf_counter() - t
        if not isinstance(reply, dict):
            raise ProtocolError("the scheduler did not reply to Batsim's message")
        msg = sim.step(reply)
        if msg is not None and max_messages is not None and sim.nb_messages >= max_messages:
            break
        if progress is not None and msg is not None:
            progress(sim.now_s, _progress_done(sim), max(total, len(sim.jobs)))
    return RunStats(time.perf_counter() - t0, sched_s, sim.nb_messages, sim.nb_events)


def run_zmq(sim: Simulation, endpoint: str, *, progress: ProgressCallback | None = None,
            timeout_s: float | None = None) -> RunStats:
    """Run ``sim`` against a scheduler process listening (REP) on ``endpoint``, as Batsim does.

    Args:
        endpoint: e.g. ``tcp://127.0.0.1:28000``.
        timeout_s: give up when the scheduler does not answer within this many seconds
            (None: wait forever, like Batsim).
    """
    import zmq

    ctx: zmq.Context = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    if timeout_s is not None:
        sock.setsockopt(zmq.RCVTIMEO, int(timeout_s * 1000))
    try:
        sock.connect(endpoint)
    except zmq.ZMQError as exc:
        sock.close()
        raise WattschedError(f"--connect {endpoint}: not a ZeroMQ endpoint one can connect to ({exc})") from None
    t0 = time.perf_counter()
    sched_s = 0.0
    total = len(sim.jobs)  # static jobs, and the registered ones as they come
    try:
        msg: dict | None = sim.start()
        while msg is not None:
            t = time.perf_counter()
            sock.send_string(json.dumps(msg))
            try:
                raw = sock.recv_string()
            except zmq.Again:
                raise WattschedError(f"the scheduler at {endpoint} did not answer within {timeout_s} s") from None
            sched_s += time.perf_counter() - t
            try:
                reply = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ProtocolError(f"the scheduler at {endpoint} sent invalid JSON: {exc}") from None
            msg = sim.step(reply)
            if progress is not None and msg is not None:
                progress(sim.now_s, _progress_done(sim), max(total, len(sim.jobs)))
    finally:
        sock.close()
    return RunStats(time.perf_counter() - t0, sched_s, sim.nb_messages, sim.nb_events)
