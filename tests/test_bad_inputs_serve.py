"""``wattsched serve`` against a Batsim that sends what Batsim 4.2.1 never sends (issue: serve's bad inputs):
each is one line naming the message and the field, exit status 2, no traceback, no hang; an ``ipc://`` path
that is a file or a folder is refused before the bind, and the socket file serve created is removed.

The message checker (:class:`~wattsched.base.validate.BatsimMessageChecker`) is tested directly where that is
simpler; ``serve`` runs in a subprocess driven by a ZeroMQ REQ client with receive timeouts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from wattsched.base.errors import OptionError, ProtocolError
from wattsched.base.validate import BatsimMessageChecker, ipc_bind_path

ROOT = Path(__file__).resolve().parent.parent
WATTSCHED = [sys.executable, "-m", "wattsched"]
FIXTURES = ROOT / "tests" / "fixtures" / "batsim-reference"


# ------------------------------------------------------------------------------------------ builders
def begins(nb: int = 4, wattages: str | None = None) -> dict:
    """SIMULATION_BEGINS of ``nb`` hosts (``wattages``: every host's ``wattage_per_state``)."""
    props = {} if wattages is None else {"wattage_per_state": wattages}
    return {"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": nb, "nb_compute_resources": nb, "nb_storage_resources": 0,
        "compute_resources": [{"id": i, "name": f"n{i}", "state": "idle", "properties": dict(props)}
                              for i in range(nb)],
        "storage_resources": [], "allow_compute_sharing": False, "allow_storage_sharing": True,
        "config": {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
                   "dynamic-jobs-acknowledged": False, "forward-unknown-events": False},
        "profiles": {}, "workloads": {}}}


def submitted(jid: str, t: float = 1, res: int = 1, **extra: object) -> dict:
    return {"timestamp": t, "type": "JOB_SUBMITTED", "data": {"job_id": jid, "job": {
        "id": jid, "res": res, "subtime": t, "walltime": 100, "profile": "p", **extra}}}


def completed(jid: str, t: float) -> dict:
    return {"timestamp": t, "type": "JOB_COMPLETED", "data": {"job_id": jid, "job_state": "COMPLETED_SUCCESSFULLY",
                                                             "return_code": 0, "alloc": "0"}}


def changed(resources: str, state: object, t: float = 1) -> dict:
    return {"timestamp": t, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": resources, "state": state}}


def msg(now: float, *events: dict) -> dict:
    return {"now": now, "events": list(events)}


def refused(checker: BatsimMessageChecker, message: dict, *needles: str) -> str:
    with pytest.raises(ProtocolError) as info:
        checker.check(json.loads(json.dumps(message)))
    text = str(info.value)
    assert "\n" not in text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


def started_checker(*events: dict) -> BatsimMessageChecker:
    checker = BatsimMessageChecker(sees_replies=True)
    checker.check(msg(0, begins(), *events))
    return checker


# ------------------------------------------------------------------------------------------ the checker
def test_real_batsim_recordings_pass_the_checker():
    """Every message of the recordings of Batsim 4.2.1, with the replies shown, is accepted."""
    folders = sorted(FIXTURES.glob("*/messages.jsonl"))
    assert folders
    for path in folders:
        checker = BatsimMessageChecker(sees_replies=True)
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["from"] == "batsim":
                checker.check(record["message"])
            else:
                checker.replied(record["message"])
        assert checker.ended, path


@pytest.mark.parametrize("first", [submitted("w0!1", t=0), changed("0", "0", t=0),
                                   {"timestamp": 0, "type": "REQUESTED_CALL", "data": {}}])
def test_events_before_simulation_begins(first):
    refused(BatsimMessageChecker(), msg(0, first), "Batsim message 1 (t=0)", first["type"], "before SIMULATION_BEGINS")


def test_first_message_without_simulation_begins():
    refused(BatsimMessageChecker(), msg(0), "Batsim message 1", "no SIMULATION_BEGINS")


def test_simulation_begins_twice():
    checker = started_checker()
    refused(checker, msg(1, begins()), "Batsim message 2 (t=1)", "second SIMULATION_BEGINS")
    refused(BatsimMessageChecker(), msg(0, begins(), begins()), "Batsim message 1", "second SIMULATION_BEGINS")


@pytest.mark.parametrize(("edit", "needles"), [
    (lambda d: [r.pop("id") for r in d["compute_resources"]], ["compute_resources[0].id", "got None"]),
    (lambda d: d["compute_resources"].pop(), ["lists 3 hosts", "'nb_compute_resources' says 4"]),
    (lambda d: d["compute_resources"][1].update(id=0), ["compute_resources[1].id", "host 0 is listed twice"]),
    (lambda d: d["compute_resources"][1].update(id=9), ["compute_resources[1].id", "0-3"]),
    (lambda d: d["compute_resources"][1].update(properties="x"), ["compute_resources[1].properties"]),
    (lambda d: d.pop("nb_compute_resources"), ["nb_compute_resources"]),
])
def test_simulation_begins_hosts(edit, needles):
    event = begins()
    edit(event["data"])
    refused(BatsimMessageChecker(), msg(0, event), "Batsim message 1 (t=0)", "SIMULATION_BEGINS", *needles)


def test_time_going_back():
    checker = started_checker()
    checker.check(msg(5))
    refused(checker, msg(4), "Batsim message 3 (t=4)", "'now' goes back", "4 after 5")


def test_event_later_than_now():
    refused(started_checker(), msg(3, submitted("w0!1", t=4)), "Batsim message 2 (t=3)", "JOB_SUBMITTED",
            "'timestamp' 4 is later than the message's 'now' 3")


def test_nothing_after_simulation_ends():
    ends = {"timestamp": 1, "type": "SIMULATION_ENDS", "data": {}}
    refused(started_checker(), msg(1, ends, {"timestamp": 1, "type": "REQUESTED_CALL", "data": {}}),
            "Batsim message 2", "events[1]: REQUESTED_CALL after SIMULATION_ENDS")
    checker = started_checker()
    checker.check(msg(1, ends))
    refused(checker, msg(2), "Batsim message 3", "after SIMULATION_ENDS")


def test_completed_or_killed_job_never_started():
    checker = started_checker(submitted("w0!1", t=0), submitted("w0!2", t=0))
    checker.replied({"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB",
                                           "data": {"job_id": "w0!2", "alloc": "0"}},
                                          {"timestamp": 0, "type": "KILL_JOB", "data": {"job_ids": ["w0!2"]}}]})
    checker.check(msg(1, completed("w0!2", 1)))
    checker.check(msg(1, {"timestamp": 1, "type": "JOB_KILLED", "data": {"job_ids": ["w0!2"], "job_progress": {}}}))
    refused(checker, msg(2, completed("w0!1", 2)), "Batsim message 4 (t=2)", "JOB_COMPLETED", "'w0!1' was never started")
    refused(checker, msg(2, {"timestamp": 2, "type": "JOB_KILLED", "data": {"job_ids": ["w0!1"]}}),
            "JOB_KILLED", "'w0!1' was never started")


def killed(*ids: str, t: float = 1) -> dict:
    return {"timestamp": t, "type": "JOB_KILLED", "data": {"job_ids": list(ids), "job_progress": {}}}


def test_job_killed_answers_one_kill_job_of_its_ids():
    """Batsim sends a JOB_KILLED only for a KILL_JOB, one at most per KILL_JOB, with ids of that kill (B-c,
    ``server_on_killing_done``): an unasked one, or one naming a job no pending kill names, is refused."""
    checker = started_checker(submitted("w0!1", t=0), submitted("w0!2", t=0))
    checker.replied({"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": j, "alloc": h}}
                                          for j, h in (("w0!1", "0"), ("w0!2", "1"))]})
    refused(checker, msg(1, killed("w0!1")), "Batsim message 2 (t=1)", "JOB_KILLED",
            "no KILL_JOB of the scheduler naming ['w0!1'] waits for it")
    checker = started_checker(submitted("w0!1", t=0), submitted("w0!2", t=0))
    checker.replied({"now": 0, "events": [
        *({"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": j, "alloc": h}} for j, h in (("w0!1", "0"), ("w0!2", "1"))),
        {"timestamp": 0, "type": "KILL_JOB", "data": {"job_ids": ["w0!1"]}}]})
    refused(checker, msg(1, killed("w0!1", "w0!2")), "JOB_KILLED", "naming ['w0!1', 'w0!2']")
    checker.check(msg(1, killed("w0!1")))
    refused(checker, msg(2, killed("w0!1", t=2)), "JOB_KILLED", "no KILL_JOB")  # its kill was answered
    checker.replied({"now": 2, "events": [{"timestamp": 2, "type": "KILL_JOB", "data": {"job_ids": ["w0!2", "w0!1"]}},
                                          {"timestamp": 2, "type": "KILL_JOB", "data": {"job_ids": ["w0!2"]}}]})
    checker.check(msg(3, killed("w0!2", t=3)))  # the first kill's answer, without the job that had ended
    checker.check(msg(3, killed("w0!2", t=3)))
    refused(checker, msg(4, killed("w0!2", t=4)), "JOB_KILLED", "no KILL_JOB")


def test_registered_job_acknowledged_once():
    checker = started_checker()
    checker.replied({"now": 0, "events": [{"timestamp": 0, "type": "REGISTER_JOB", "data": {"job_id": "dyn!1"}}]})
    checker.check(msg(1, submitted("dyn!1")))  # Batsim's acknowledgement
    refused(checker, msg(2, submitted("dyn!1", t=2)), "already submitted")


@pytest.mark.parametrize(("state", "needles"), [
    ("abc", ["field 'state' must be a pstate number", "'abc'"]),
    (1, ["field 'state' must be a pstate number", "got 1"]),
    ("-1", ["field 'state' must be a pstate number"]),
    ("3", ["host 0 has no pstate 3", "pstates 0-2"]),
])
def test_resource_state(state, needles):
    checker = BatsimMessageChecker()
    checker.check(msg(0, begins(wattages="80:150, 80:125, 9:9")))
    checker.check(msg(1, changed("0-3", "2")))
    refused(checker, msg(1, changed("0-3", state)), "Batsim message 3 (t=1)", "RESOURCE_STATE_CHANGED", *needles)


def test_resource_intervals_as_procset_reads_them():
    refused(started_checker(), msg(1, changed("3-1", "0")), "'3-1' is not an interval set")
    refused(started_checker(), msg(1, changed("0  1", "0")), "is not an interval set")


def test_query_and_bad_beta():
    query = {"timestamp": 1, "type": "QUERY", "data": {"requests": {"estimate_waiting_time": {"job_id": "w0!1"}}}}
    refused(started_checker(), msg(1, query), "Batsim message 2 (t=1)", "QUERY", "Batsim 4.2.1 sends no query")
    refused(started_checker(), msg(1, submitted("w0!1", beta="abc")), "Batsim message 2 (t=1)",
            "'job.beta' must be a number", "'abc'")


# ------------------------------------------------------------------------------------------ serve
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(endpoint: str, messages: list, *args: str) -> tuple[subprocess.CompletedProcess, list]:
    """``wattsched serve --bind endpoint`` sent ``messages`` (dicts, bytes as they are, or a list of bytes: the
    ZeroMQ frames of one message) by a REQ client that waits at most 5 s for each reply, and no longer once the
    server has ended; the replies received (parsed) and the finished process."""
    import time

    import zmq

    server = subprocess.Popen([*WATTSCHED, "serve", "--bind", endpoint, "--timeout", "5", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 50)
    replies = []
    try:
        sock.connect(endpoint)
        for number, message in enumerate(messages, 1):
            if isinstance(message, list):
                sock.send_multipart(message)
            else:
                sock.send(message if isinstance(message, bytes) else json.dumps(message).encode())
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    replies.append(json.loads(sock.recv()))
                    break
                except zmq.Again:
                    pass
            if len(replies) < number:
                break
        out, err = server.communicate(timeout=30)
    finally:
        sock.close(linger=0)
        ctx.term()
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
    return subprocess.CompletedProcess(server.args, server.returncode, out, err), replies


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("wattsched: error: ")]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


PYBATSIM_SCHEDULER = """
from pybatsim.batsim.batsim import BatsimScheduler

class Quiet(BatsimScheduler):
    def onJobSubmission(self, job):
        pass
"""


@pytest.fixture(params=["preset", "pybatsim"])
def scheduler_args(request, tmp_path) -> list[str]:
    if request.param == "preset":
        return []
    pytest.importorskip("pybatsim")
    (tmp_path / "quiet.py").write_text(PYBATSIM_SCHEDULER)
    return ["-s", f"{tmp_path / 'quiet.py'}:Quiet"]


def test_serve_not_utf8(scheduler_args):
    proc, replies = serve(f"tcp://127.0.0.1:{free_port()}", [msg(0, begins()), b'{"now": 1, "events": []}\xff'],
                          *scheduler_args)
    assert len(replies) == 1
    one_line_error(proc, "Batsim message 2: not UTF-8")
    assert "scheduler" not in proc.stderr


def test_serve_event_before_simulation_begins(scheduler_args):
    proc, _ = serve(f"tcp://127.0.0.1:{free_port()}", [msg(0, submitted("w0!1", t=0))], *scheduler_args)
    one_line_error(proc, "Batsim message 1 (t=0)", "JOB_SUBMITTED before SIMULATION_BEGINS")


def test_serve_errors_of_the_translator_name_the_message():
    """A job object the checker lets through but the translator cannot read (no subtime) is named with its
    message number and time, as the checker's errors are."""
    job = submitted("w0!1", t=1)
    del job["data"]["job"]["subtime"]
    proc, _ = serve(f"tcp://127.0.0.1:{free_port()}", [msg(0, begins()), msg(1, job)])
    one_line_error(proc, "Batsim message 2 (t=1): JOB_SUBMITTED w0!1", "not a valid job object")


def test_serve_completion_of_a_job_never_started():
    """The preset rejects a job wider than the platform: its completion is one Batsim would never send."""
    proc, replies = serve(f"tcp://127.0.0.1:{free_port()}",
                          [msg(0, begins()), msg(1, submitted("w0!1", res=9)), msg(2, completed("w0!1", 2))])
    assert replies[1]["events"][0]["type"] == "REJECT_JOB"
    one_line_error(proc, "Batsim message 3 (t=2)", "JOB_COMPLETED", "'w0!1' was never started")


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_serve_refuses_an_ipc_path_that_is_not_a_socket(tmp_path, kind):
    target = tmp_path / "notes.txt"
    if kind == "file":
        target.write_text("my notes\n")
    else:
        target.mkdir()
    proc = subprocess.run([*WATTSCHED, "serve", "--bind", f"ipc://{target}", "--timeout", "1"],
                          capture_output=True, text=True, timeout=30)
    one_line_error(proc, f"--bind ipc://{target}", "not a socket", "folder" if kind == "folder" else "exists")
    if kind == "file":
        assert target.read_text() == "my notes\n"
    else:
        assert target.is_dir()


def test_serve_removes_its_ipc_socket(tmp_path):
    path = tmp_path / "batsim.sock"
    ends = {"timestamp": 1, "type": "SIMULATION_ENDS", "data": {}}
    proc, replies = serve(f"ipc://{path}", [msg(0, begins()), msg(1, ends)])
    assert proc.returncode == 0 and "simulation ended" in proc.stderr, proc.stderr
    assert len(replies) == 2
    assert not os.path.lexists(path)
    proc, _ = serve(f"ipc://{path}", [msg(0, submitted("w0!1", t=0))])  # an error: removed too
    one_line_error(proc, "before SIMULATION_BEGINS")
    assert not os.path.lexists(path)


def test_ipc_bind_path_keeps_a_live_socket(tmp_path):
    path = tmp_path / "live.sock"
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(path))
    live.listen(1)
    try:
        with pytest.raises(OptionError, match="another process listens on"):
            ipc_bind_path(f"ipc://{path}", "--bind")
    finally:
        live.close()
    assert ipc_bind_path(f"ipc://{path}", "--bind") == path  # nobody listens any more: replaced
    assert ipc_bind_path("tcp://127.0.0.1:28000", "--bind") is None
