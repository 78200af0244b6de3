"""Protocol faults in both directions (issue 18): a peer that dies mid-run, stops answering, sends malformed
JSON, an unknown event, an event on an unknown job or host, or a refused decision. Every one ends with exit
status 2, one line naming the message and the event, no output file, no orphan process and the port
released (``wattsched run --connect``, ``wattsched serve``, and in-process)."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "taurus_16.xml"
WORKLOAD = ROOT / "workloads" / "demo_taurus16.json"
WATTSCHED = [sys.executable, "-m", "wattsched"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a new server (a ZeroMQ REP socket, as ``wattsched serve`` binds) can bind ``port`` now."""
    import zmq

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    try:
        sock.bind(f"tcp://127.0.0.1:{port}")
    except zmq.ZMQError:
        return False
    finally:
        sock.close(linger=0)
        ctx.term()
    return True


def in_process(capsys, *args: str) -> subprocess.CompletedProcess:
    """``wattsched ARGS`` through :func:`wattsched.cli.main` in this process (the same edge, faster)."""
    from wattsched.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("wattsched: ") or
             line.startswith("wattsched: error")]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("wattsched: error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# A scheduler (REP) that answers the first messages with empty replies, then misbehaves as told.
FAKE_SCHEDULER = textwrap.dedent("""
    import json, os, sys, time, zmq
    endpoint, mode, good = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sock = zmq.Context().socket(zmq.REP)
    sock.bind(endpoint)
    n = 0
    while True:
        msg = json.loads(sock.recv_string())
        n += 1
        if n <= good:
            sock.send_string(json.dumps({"now": msg["now"], "events": []}))
            continue
        now = msg["now"]
        if mode == "die":
            os._exit(3)
        if mode == "silent":
            time.sleep(60)
        replies = {
            "malformed": '{"now": 1, "events": [',
            "unknown-event": json.dumps({"now": now, "events": [{"timestamp": now, "type": "DANCE", "data": {}}]}),
            "unknown-job": json.dumps({"now": now, "events": [{"timestamp": now, "type": "EXECUTE_JOB",
                                                               "data": {"job_id": "w0!nope", "alloc": "0"}}]}),
            "unknown-host": json.dumps({"now": now, "events": [{"timestamp": now, "type": "SET_RESOURCE_STATE",
                                                                "data": {"resources": "99", "state": "1"}}]}),
            "nan": '{"now": NaN, "events": []}',
        }
        sock.send_string(replies[mode])
""")


@pytest.fixture
def fake_scheduler(tmp_path):
    procs: list[subprocess.Popen] = []

    def start(mode: str, good: int = 1) -> str:
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        script = tmp_path / "fake_scheduler.py"
        script.write_text(FAKE_SCHEDULER)
        procs.append(subprocess.Popen([sys.executable, str(script), endpoint, mode, str(good)]))
        return endpoint

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize(("mode", "good", "needles"), [
    ("die", 3, ["closed the connection", "Batsim message 4"]),
    ("malformed", 1, ["malformed JSON", "Batsim message 2"]),
    ("unknown-event", 1, ["DANCE", "Batsim message 2"]),
    ("unknown-job", 2, ["EXECUTE_JOB", "w0!nope", "Batsim message 3"]),
    ("unknown-host", 1, ["SET_RESOURCE_STATE", "99", "Batsim message 2"]),
    ("nan", 1, ["NaN", "Batsim message 2"]),
])
def test_run_connect_peer_faults(tmp_path, capsys, fake_scheduler, mode, good, needles):
    """The scheduler process dies mid-run (killed, not answering) or replies what Batsim refuses: exit 2, one
    line naming the message (its number, time and events) and the fault, no output, quickly. (The death
    through the ``wattsched`` command itself, the others through its entry point in this process.)"""
    endpoint = fake_scheduler(mode, good)
    out = tmp_path / "out"
    out.mkdir()
    start = time.monotonic()
    args = ["run", str(PLATFORM), str(WORKLOAD), "--connect", endpoint, "-e", str(out / "run"), "--timeout", "30"]
    if mode == "die":
        proc = subprocess.run([*WATTSCHED, *args], capture_output=True, text=True, timeout=60)
    else:
        proc = in_process(capsys, *args)
    assert_one_line_error(proc, *needles)
    assert time.monotonic() - start < 25  # a dead peer is noticed at once, not after the timeout
    assert list(out.iterdir()) == []


def test_run_connect_timeout(tmp_path, capsys, fake_scheduler):
    endpoint = fake_scheduler("silent", 2)
    out = tmp_path / "out"
    proc = in_process(capsys, "run", str(PLATFORM), str(WORKLOAD), "--connect", endpoint, "-e", str(out / "run"),
                      "--timeout", "1")
    assert_one_line_error(proc, "did not answer within 1 s", "Batsim message 3", "--timeout")
    assert not out.exists()


def test_run_connect_nothing_listens(tmp_path, capsys):
    proc = in_process(capsys, "run", str(PLATFORM), str(WORKLOAD), "--connect", f"tcp://127.0.0.1:{free_port()}",
                      "-e", str(tmp_path / "run"), "--timeout", "1")
    assert_one_line_error(proc, "nothing seems to listen", "Batsim message 1")


@pytest.mark.parametrize("endpoint", ["bogus", "tcp://127.0.0.1:99999", "tcp://127.0.0.1", "http://x:1"])
def test_malformed_endpoints(tmp_path, capsys, endpoint):
    proc = in_process(capsys, "run", str(PLATFORM), str(WORKLOAD), "--connect", endpoint, "-e", str(tmp_path / "r"))
    assert_one_line_error(proc, "--connect", endpoint)
    proc = in_process(capsys, "serve", "--bind", endpoint)
    assert_one_line_error(proc, "--bind", endpoint)
    assert list(tmp_path.iterdir()) == []


def test_malformed_endpoint_through_the_command(tmp_path):
    proc = subprocess.run([*WATTSCHED, "serve", "--bind", "tcp://127.0.0.1:99999"], capture_output=True, text=True,
                          timeout=60)
    assert_one_line_error(proc, "--bind", "not a TCP port")


# A Batsim (REQ) that sends SIMULATION_BEGINS, then what the test says.
FAKE_BATSIM = textwrap.dedent("""
    import json, os, sys, zmq
    endpoint, then = sys.argv[1], sys.argv[2]
    sock = zmq.Context().socket(zmq.REQ)
    sock.connect(endpoint)
    begins = {"now": 0, "events": [{"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0, "allow_compute_sharing": False,
        "allow_storage_sharing": False, "compute_resources": [
            {"id": i, "name": f"h{i}", "state": "idle", "properties": {}, "zone_properties": {}} for i in (0, 1)],
        "storage_resources": [], "workloads": {"w0": "w.json"}, "profiles": {"w0": {}},
        "config": {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
                   "dynamic-jobs-acknowledged": False, "forward-unknown-events": False}}}]}
    sock.send_string(json.dumps(begins))
    sock.recv_string()
    if then == "die":
        os._exit(3)
    second = {
        "malformed": '{"now": 1, "events": [{',
        "unknown-event": json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "DANCE", "data": {}}]}),
        "unknown-job": json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "JOB_COMPLETED",
                                                         "data": {"job_id": "w0!7", "job_state": "COMPLETED_KILLED",
                                                                  "return_code": 0, "alloc": "0"}}]}),
        "unknown-host": json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "RESOURCE_STATE_CHANGED",
                                                          "data": {"resources": "5", "state": "0"}}]}),
    }[then]
    sock.send_string(second)
    sock.RCVTIMEO = 20000
    try:
        sock.recv_string()
    except zmq.Again:
        pass
""")


BUSY_SCHEDULER = textwrap.dedent("""
    from pybatsim.batsim.batsim import BatsimScheduler

    class Busy(BatsimScheduler):
        '''Starts every submitted job on host 0, busy or not.'''

        def onJobSubmission(self, job):
            job.allocation = "0"
            self.bs.execute_jobs([job])
""")


def serve_scheduler(tmp_path: Path, pybatsim: bool) -> list[str]:
    """``serve``'s scheduler arguments: the default preset (the translator on a plain REP socket), or a pybatsim
    scheduler from a file (pybatsim's own Batsim class on the guarded network handler)."""
    if not pybatsim:
        return []
    (tmp_path / "busy.py").write_text(BUSY_SCHEDULER)
    return ["-s", f"{tmp_path / 'busy.py'}:Busy"]


@pytest.mark.parametrize("pybatsim", [False, True], ids=["preset", "pybatsim"])
@pytest.mark.parametrize(("then", "needles"), [
    ("die", ["Batsim closed the connection", "after message 1"]),
    ("malformed", ["Batsim message 2", "malformed JSON"]),
    ("unknown-event", ["Batsim message 2", "unknown event type 'DANCE'"]),
    ("unknown-job", ["Batsim message 2", "JOB_COMPLETED", "unknown job 'w0!7'"]),
    ("unknown-host", ["Batsim message 2", "RESOURCE_STATE_CHANGED", "unknown host 5"]),
])
def test_serve_peer_faults(tmp_path, then, needles, pybatsim):
    """``wattsched serve`` (a preset, or a pybatsim scheduler) against a Batsim that dies or breaks the protocol:
    exit 2, one line, the port released (bound again at once) and no process left."""
    port = free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    script = tmp_path / "fake_batsim.py"
    script.write_text(FAKE_BATSIM)
    server = subprocess.Popen([*WATTSCHED, "serve", "--bind", endpoint, "--timeout", "30",
                               *serve_scheduler(tmp_path, pybatsim)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    batsim = subprocess.Popen([sys.executable, str(script), endpoint, then])
    try:
        out, err = server.communicate(timeout=60)
    finally:
        for proc in (server, batsim):
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
    done = subprocess.CompletedProcess(server.args, server.returncode, out, err)
    assert_one_line_error(done, *needles)
    assert port_is_free(port)


@pytest.mark.parametrize("pybatsim", [False, True], ids=["preset", "pybatsim"])
def test_serve_timeout_releases_the_port(tmp_path, pybatsim):
    port = free_port()
    proc = subprocess.run([*WATTSCHED, "serve", "--bind", f"tcp://127.0.0.1:{port}", "--timeout", "1",
                           *serve_scheduler(tmp_path, pybatsim)], capture_output=True, text=True, timeout=60)
    assert_one_line_error(proc, "Batsim sent nothing", "for 1 s", "--timeout")
    assert port_is_free(port)


def test_inprocess_scheduler_on_a_busy_host(tmp_path):
    """In-process (a pybatsim scheduler loaded from a file): a job started on a busy host is refused with the
    message it answered, the event and the job named; nothing is written."""
    scheduler = tmp_path / "busy.py"
    scheduler.write_text(BUSY_SCHEDULER)
    out = tmp_path / "out"
    proc = subprocess.run([*WATTSCHED, "run", str(PLATFORM), str(WORKLOAD), "-s", f"{scheduler}:Busy",
                           "-e", str(out / "run")], capture_output=True, text=True, timeout=120)
    assert_one_line_error(proc, "the scheduler's reply to Batsim message", "EXECUTE_JOB")
    assert not out.exists()


def test_a_fault_of_the_simulator_is_not_blamed_on_the_reply(monkeypatch):
    """An internal error while the simulator runs to its next message (here a clock that fails once the
    first reply is applied) is a SimulatorFault naming the time and message, with its cause kept; it is
    not reported as a malformed reply of the scheduler (it used to be: 'the scheduler's reply to Batsim
    message 55450 ... is malformed (ValueError ...)' for a bug of the clock)."""
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator import clock as clock_module
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation, SimulatorFault
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    sim = Simulation(load_platform(PLATFORM), load_workload(WORKLOAD))
    solve = clock_module.StepClock.solve_step

    def failing(self):
        if sim.nb_messages >= 2:
            raise ValueError("operands could not be broadcast together")
        return solve(self)

    monkeypatch.setattr(clock_module.StepClock, "solve_step", failing)
    with pytest.raises(SimulatorFault, match=r"internal error of the simulator at t=.*ValueError") as info:
        run_inprocess(sim, scheduler_handler("easy-backfill", {}))
    assert isinstance(info.value.__cause__, ValueError)


def test_a_scheduler_that_keeps_the_clock_at_one_time_is_stopped(monkeypatch):
    """A scheduler answering every message with a QUERY gets an ANSWER at that time again (B26), for ever: real
    Batsim would never end (a CALL_ME_LATER at the current time is refused: Batsim aborts on it). After
    ``messages_at_one_time`` messages in a row at one time the run ends with a ProtocolError naming the time and
    the bound; a run of the same workload whose clock moves is not stopped by the same bound."""
    from wattsched.base.errors import ProtocolError
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    monkeypatch.setenv("WATTSCHED_LIMIT_MESSAGES_AT_ONE_TIME", "200")

    def stuck(message: dict) -> dict:
        now = message["now"]
        return {"now": now, "events": [{"timestamp": now, "type": "QUERY", "data": {"requests": {"consumed_energy": {}}}}]}

    sim = Simulation(load_platform(PLATFORM), load_workload(WORKLOAD))
    with pytest.raises(ProtocolError, match=r"kept the simulation at t=0\.0 for 200 messages.*"
                                            r"WATTSCHED_LIMIT_MESSAGES_AT_ONE_TIME"):
        run_inprocess(sim, stuck)
    assert sim.nb_messages == 200
    sim = Simulation(load_platform(PLATFORM), load_workload(WORKLOAD))
    run_inprocess(sim, scheduler_handler("easy-backfill", {}))
    assert sim.ended and sim.nb_messages > 200
