"""Bad inputs hunt 34, the protocol side: fake peers (a Batsim REQ socket in front of ``serve``, a scheduler REP
socket behind ``run --connect``) and user schedulers (``-s file.py:Class``) that break the protocol.

* before: a Batsim message of two ZeroMQ frames (``send_multipart``) stopped ``serve`` with a ``ZMQError: Operation
  cannot be accomplished in current state`` traceback (its REP socket read the first frame, then could not send);
  with a pybatsim scheduler it was blamed on the scheduler (``scheduler q.py:Quiet raised ZMQError``) or, on the
  first message, said ``--bind ...: cannot bind this endpoint``. ``run --connect`` against a scheduler replying in
  two frames gave the same traceback, and a reply that is not UTF-8 a ``UnicodeDecodeError`` traceback. Now one line
  naming the message (``a message of 2 parts``, ``not UTF-8 text``).
* before: ``serve`` took a RESOURCE_STATE_CHANGED no SET_RESOURCE_STATE asked for and an ANSWER no QUERY asked for
  (the presets took them in; a pybatsim scheduler stopped with ``does not define onMachinePStateChanged``, blaming
  the scheduler for Batsim's message, as hunt 22's REQUESTED_CALL). Now refused, naming the message.
* before: fields Batsim always writes and pybatsim reads unchecked were not checked, so their absence was a
  ``KeyError`` blamed on the scheduler (``scheduler s.py:Starter raised KeyError: 'return_code' (at
  .../pybatsim/batsim/batsim.py:539)``): a JOB_SUBMITTED's ``job.id``, ``job.profile`` (and ``job.subtime``), a
  JOB_COMPLETED's ``return_code``, a JOB_KILLED's ``job_progress``, a FROM_JOB_MSG's ``msg``, a machine NOTIFY's
  ``resources``; a NOTIFY of a type Batsim never sends (``pybatsim: Unknown NOTIFY type hello``). Now refused.
* before: a user scheduler whose exception cannot be printed (its ``__str__`` raises) gave a traceback of the
  printing; one raising ``GeneratorExit`` or a ``BaseException`` of its own (asyncio's CancelledError is one) gave a
  traceback, exit 1. Now one line, exit 2 (Ctrl-C is still an interruption).
* before: a user scheduler calling ``os.fork()`` whose child returns from the callback ran the rest of the simulation
  in both processes (``run``: every output written and the metrics printed once per process, 4 times for two forks;
  ``serve``: both processes on one ZeroMQ socket). The child now ends at once with one line; the parent goes on.

Checked and found clean: ``serve`` given an empty message, NaN / -1 / 1e400 / 5000-digit ``now``, JSON 100,000 levels
deep, ``now`` 1.7e308 (no reply holds Infinity), huge ``res`` / walltimes / subtimes, events before SIMULATION_BEGINS,
SIMULATION_BEGINS twice, time going back, SIMULATION_ENDS twice in one message; ``run --connect`` given an empty reply,
a silent scheduler (``--timeout``), NaN, a CALL_ME_LATER in the past, an unknown pstate, REJECT_JOB of a running job.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.test_bad_inputs_serve import (begins, completed, free_port, msg, one_line_error, refused,  # noqa: F401
                                         scheduler_args, serve, submitted)
from wattsched import api
from wattsched.base.validate import BatsimMessageChecker

WATTSCHED = [sys.executable, "-m", "wattsched"]


# ------------------------------------------------------------------------------ a fake Batsim, a fake scheduler
def serve_frames(messages: list[list[bytes]], *args: str) -> tuple[subprocess.CompletedProcess, list]:
    """``wattsched serve`` sent each message as the given ZeroMQ frames (:func:`tests.test_bad_inputs_serve.serve`)."""
    return serve(f"tcp://127.0.0.1:{free_port()}", messages, *args)


def frames(message: dict, *more: bytes) -> list[bytes]:
    return [json.dumps(message).encode(), *more]


@pytest.fixture
def fake_scheduler():
    """A REP socket in a thread answering ``run --connect``: ``start(answer)`` with ``answer(n, message)`` the frames
    of the n-th reply; its endpoint. Closed at the end of the test."""
    import zmq

    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 100)
    stop = threading.Event()
    thread: list[threading.Thread] = []

    def start(answer) -> str:
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        sock.bind(endpoint)

        def loop() -> None:
            n = 0
            while not stop.is_set():
                try:
                    message = json.loads(sock.recv())
                except zmq.Again:
                    continue
                n += 1
                sock.send_multipart(answer(n, message))

        thread.append(threading.Thread(target=loop, daemon=True))
        thread[0].start()
        return endpoint

    yield start
    stop.set()
    if thread:
        thread[0].join(timeout=10)
    sock.close(linger=0)
    ctx.term()


def _empty(message: dict) -> bytes:
    return json.dumps({"now": message["now"], "events": []}).encode()


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    platform = tmp_path / "p.xml"
    platform.write_text(api.taurus_platform(2))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {"d": {"type": "delay", "delay": 10}},
                                    "jobs": [{"id": 1, "subtime": 5, "res": 1, "profile": "d", "walltime": 100}]}))
    return platform, workload


# ------------------------------------------------------------------------------ 1. messages of several frames
def test_serve_refuses_a_message_of_two_frames(scheduler_args):
    """was: a ZMQError traceback (preset), ``scheduler ... raised ZMQError`` (pybatsim)."""
    proc, replies = serve_frames([frames(msg(0, begins())), frames(msg(1), b"more")], *scheduler_args)
    assert len(replies) == 1
    one_line_error(proc, "Batsim message 2: a message of 2 parts (ZeroMQ frames)")
    assert "scheduler" not in proc.stderr


def test_serve_refuses_a_first_message_of_two_frames(scheduler_args):
    """was (pybatsim): ``--bind tcp://...: cannot bind this endpoint (Operation cannot be accomplished ...)``."""
    proc, replies = serve_frames([frames(msg(0, begins()), b"")], *scheduler_args)
    assert replies == []
    one_line_error(proc, "Batsim message 1: a message of 2 parts")
    assert "--bind" not in proc.stderr


@pytest.mark.parametrize(("reply", "needles"), [
    (lambda m: [_empty(m), b"more"], ["a reply of 2 parts (ZeroMQ frames)"]),
    (lambda m: [_empty(m)[:-1] + b"\xff}"], ["not UTF-8 text (invalid start byte at byte"]),
], ids=["two frames", "not UTF-8"])
def test_run_connect_refuses_a_reply_of_two_frames_or_not_utf8(tmp_path, capsys, fake_scheduler, reply, needles):
    """was: a ZMQError (two frames) or UnicodeDecodeError (not UTF-8) traceback, exit 1."""
    endpoint = fake_scheduler(lambda n, m: [_empty(m)] if n == 1 else reply(m))
    platform, workload = _inputs(tmp_path)
    out = tmp_path / "out"
    from tests.bad_inputs_checks import refused as cli_refused

    cli_refused(capsys, ["run", str(platform), str(workload), "--connect", endpoint, "--timeout", "5",
                         "-e", str(out / "r"), "-q"], "the scheduler's reply to Batsim message 2 (t=5", *needles)
    assert not out.exists()


# ------------------------------------------------------------------------------ 2. answers nobody asked for
def _checker(*replies: dict) -> BatsimMessageChecker:
    checker = BatsimMessageChecker(sees_replies=True)
    checker.check(msg(0, begins(wattages="95:190, 95:170, 9:9")))
    for reply in replies:
        checker.replied({"now": 0, "events": [reply]})
    return checker


SWITCH = {"timestamp": 0, "type": "SET_RESOURCE_STATE", "data": {"resources": "0-1", "state": "1"}}
QUERY = {"timestamp": 0, "type": "QUERY", "data": {"requests": {"consumed_energy": {}}}}
CHANGED = {"timestamp": 1, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": "0-1", "state": "1"}}
ANSWER = {"timestamp": 1, "type": "ANSWER", "data": {"consumed_energy": 10.0}}


@pytest.mark.parametrize(("event", "needle"), [
    (CHANGED, "RESOURCE_STATE_CHANGED: no SET_RESOURCE_STATE of the scheduler waits for it"),
    (ANSWER, "ANSWER: no QUERY of the scheduler waits for it"),
], ids=["RESOURCE_STATE_CHANGED", "ANSWER"])
def test_an_answer_nobody_asked_for_is_refused(event, needle):
    refused(_checker(), msg(1, event), "Batsim message 2 (t=1)", needle)
    checker = _checker(SWITCH, QUERY)  # asked: one each
    checker.check(msg(1, event))
    refused(checker, msg(2, {**event, "timestamp": 2}), "Batsim message 3 (t=2)", needle)
    unseen = BatsimMessageChecker()  # the replies not shown: nothing is known of what was asked
    unseen.check(msg(0, begins()))
    unseen.check(msg(1, event))


def test_serve_refuses_a_state_change_nobody_asked_for(scheduler_args):
    """was (pybatsim): ``scheduler quiet.py:Quiet does not define onMachinePStateChanged``."""
    proc, _ = serve_frames([frames(msg(0, begins())), frames(msg(1, CHANGED))], *scheduler_args)
    one_line_error(proc, "Batsim message 2 (t=1): RESOURCE_STATE_CHANGED: no SET_RESOURCE_STATE")
    assert "does not define" not in proc.stderr


# ------------------------------------------------------------------------------ 3. fields Batsim always writes
def _started() -> BatsimMessageChecker:
    checker = BatsimMessageChecker(sees_replies=True)
    checker.check(msg(0, begins(), submitted("w0!1", t=0)))
    checker.replied({"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB",
                                           "data": {"job_id": "w0!1", "alloc": "0"}}]})
    return checker


def _without(event: dict, *path: str) -> dict:
    event = json.loads(json.dumps(event))
    where = event["data"]
    for key in path[:-1]:
        where = where[key]
    del where[path[-1]]
    return event


KILLED = {"timestamp": 1, "type": "JOB_KILLED", "data": {"job_ids": ["w0!1"], "job_progress": {}}}


@pytest.mark.parametrize(("event", "needles"), [
    (_without(submitted("w0!2"), "job", "id"), ["JOB_SUBMITTED", "'job.id' None is not the event's 'job_id'"]),
    (_without(submitted("w0!2"), "job", "profile"), ["JOB_SUBMITTED", "'job.profile' is missing"]),
    (_without(KILLED, "job_progress"), ["JOB_KILLED", "'job_progress' must be an object"]),
    ({"timestamp": 1, "type": "FROM_JOB_MSG", "data": {"job_id": "w0!1"}}, ["FROM_JOB_MSG", "'msg' is missing"]),
    ({"timestamp": 1, "type": "NOTIFY", "data": {"type": "hello"}}, ["NOTIFY", "unknown type 'hello'"]),
    ({"timestamp": 1, "type": "NOTIFY", "data": {"type": "event_machine_unavailable"}},
     ["NOTIFY", "'resources' must be an interval set"]),
], ids=["job.id", "job.profile", "job_progress", "msg", "NOTIFY type", "NOTIFY resources"])
def test_fields_batsim_always_writes_are_required(event, needles):
    refused(_started(), msg(1, event), "Batsim message 2 (t=1)", *needles)


@pytest.mark.parametrize(("event", "needles"), [
    (_without(submitted("w0!2"), "job", "subtime"), ["JOB_SUBMITTED", "'job.subtime' is missing"]),
    (_without(completed("w0!1", 1), "return_code"), ["JOB_COMPLETED", "'return_code' must be an integer"]),
], ids=["job.subtime", "return_code"])
def test_fields_pybatsim_reads_are_required_for_it(event, needles):
    """Our translator names what these lack itself (tests/test_bad_inputs_serve.py); pybatsim's client gave a
    KeyError blamed on the scheduler."""
    checker = _started()
    checker.pybatsim = True
    refused(checker, msg(1, event), "Batsim message 2 (t=1)", *needles)
    _started().check(msg(1, event))


def test_notify_types_batsim_sends_are_taken():
    checker = _started()
    for kind in ("no_more_static_job_to_submit", "no_more_external_event_to_occur"):
        checker.check(msg(1, {"timestamp": 1, "type": "NOTIFY", "data": {"type": kind}}))
    checker.check(msg(1, {"timestamp": 1, "type": "NOTIFY", "data": {"type": "event_machine_available",
                                                                    "resources": "0-1"}}))
    forwarding = BatsimMessageChecker()
    event = begins()
    event["data"]["config"]["forward-unknown-events"] = True
    forwarding.check(msg(0, event))
    forwarding.check(msg(1, {"timestamp": 1, "type": "NOTIFY", "data": {"type": "hello"}}))


def test_serve_a_pybatsim_scheduler_is_not_blamed_for_a_completion_without_return_code(tmp_path):
    """was: ``scheduler starter.py:Starter raised KeyError: 'return_code' (at .../pybatsim/batsim/batsim.py:539)``."""
    (tmp_path / "starter.py").write_text(STARTER)
    proc, replies = serve_frames([frames(msg(0, begins())), frames(msg(1, submitted("w0!1"))),
                                  frames(msg(2, _without(completed("w0!1", 2), "return_code")))],
                                 "-s", f"{tmp_path / 'starter.py'}:Starter")
    assert "EXECUTE_JOB" in json.dumps(replies[1])
    one_line_error(proc, "Batsim message 3 (t=2): JOB_COMPLETED: field 'return_code' must be an integer")


STARTER = """
from procset import ProcSet
from pybatsim.batsim.batsim import BatsimScheduler

class Starter(BatsimScheduler):
    def onJobSubmission(self, job):
        job.allocation = ProcSet(0)
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass
"""


# ------------------------------------------------------------------------------ 4. user schedulers
USER = textwrap.dedent("""
    import os
    from procset import ProcSet
    from pybatsim.batsim.batsim import BatsimScheduler

    class Unprintable(Exception):
        def __str__(self):
            raise ValueError("cannot print me")

    class Stop(BaseException):
        pass

    class User(BatsimScheduler):
        def onJobSubmission(self, job):
            mode = self.options["mode"]
            if mode == "unprintable":
                raise Unprintable()
            if mode == "generator-exit":
                raise GeneratorExit()
            if mode == "base-exception":
                raise Stop("stop here")
            if mode == "fork":
                os.fork()  # the child returns into the simulation
            job.allocation = ProcSet(0)
            self.bs.execute_jobs([job])

        def onJobCompletion(self, job):
            pass
""")


@pytest.mark.parametrize(("mode", "needles"), [
    ("unprintable", ["raised Unprintable: <Unprintable whose str() raised>", "user.py:"]),
    ("generator-exit", ["raised GeneratorExit", "user.py:"]),
    ("base-exception", ["raised Stop: stop here", "user.py:"]),
])
def test_a_user_scheduler_raising_what_is_hard_to_report_is_one_line(tmp_path, capsys, mode, needles):
    """was: a traceback of the printing of the error (``__str__`` raising), or of the BaseException, exit 1."""
    from tests.bad_inputs_checks import refused as cli_refused

    (tmp_path / "user.py").write_text(USER)
    platform, workload = _inputs(tmp_path)
    out = tmp_path / "out"
    cli_refused(capsys, ["run", str(platform), str(workload), "-s", f"{tmp_path / 'user.py'}:User",
                         "-o", json.dumps({"mode": mode}), "-e", str(out / "r"), "-q"],
                "scheduler", "User", *needles)
    assert not out.exists()


def test_a_forked_child_returning_into_the_simulation_is_ended(tmp_path):
    """was: the child ran the rest of the simulation beside its parent, both writing the outputs and printing the
    metrics (two tables). Now the child ends at once with one line; the parent's run is whole. (In a subprocess:
    without the fix, a child of the test process would run the rest of the test session.)"""
    (tmp_path / "user.py").write_text(USER)
    assert "os._exit" in _run_whose_child_is_ended(tmp_path, "-o", json.dumps({"mode": "fork"}))


def _run_whose_child_is_ended(tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> str:
    """``wattsched run`` of ``tmp_path/user.py:User`` (with ``options``) in a subprocess: whole, once, with one error
    line saying that a forked child was ended; that line."""
    platform, workload = _inputs(tmp_path)
    proc = subprocess.run([*WATTSCHED, "run", str(platform), str(workload), "-s", f"{tmp_path / 'user.py'}:User",
                           *options, "-e", str(tmp_path / "out" / "r")], capture_output=True, text=True, timeout=60,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("outputs:") == 1, proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("wattsched: error:")]
    assert len(errors) == 1 and "forked by scheduler" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "out" / "r_jobs.csv").read_text().count("\n") == 2
    return errors[0]


FORKS_WHILE_LOADING = textwrap.dedent("""
import os

from procset import ProcSet
from pybatsim.batsim.batsim import BatsimScheduler

if os.environ["FORK_AT"] == "import":
    os.fork()  # the child returns from the import


class User(BatsimScheduler):
    def __init__(self, options):
        super().__init__(options)
        if os.environ["FORK_AT"] == "init":
            os.fork()  # the child returns from __init__

    def onJobSubmission(self, job):
        job.allocation = ProcSet(0)
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass
""")


@pytest.mark.parametrize("fork_at", ["import", "init"])
def test_a_child_forked_while_the_scheduler_loads_is_ended(tmp_path, fork_at):
    """was: a child forked by the scheduler's module or its ``__init__`` ran the whole simulation beside its parent
    (the check was made at each message, from the pid taken after loading: the child's own)."""
    import os

    (tmp_path / "user.py").write_text(FORKS_WHILE_LOADING)
    assert "user.py:User" in _run_whose_child_is_ended(tmp_path, env={**os.environ, "FORK_AT": fork_at})
