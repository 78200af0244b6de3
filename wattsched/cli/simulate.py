"""``wattsched run``, ``replay`` and ``serve``: simulations, conformance with real Batsim, and real Batsim."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from wattsched.base.errors import InputError, OptionError, ProtocolError, counted, printable
from wattsched.base.limits import limit
from wattsched.cli.analyse import run_window
from wattsched.cli.common import (
    add_options_argument,
    add_progress_arguments,
    named,
    naming_options_file,
    non_negative_int,
    positive_float,
    progress_enabled,
    timeout_seconds,
    scheduler_options,
)

#: Seconds to wait for the peer's next message (``--timeout``); the same as the Batsim stand-in's default.
DEFAULT_TIMEOUT_S = 600.0
#: The scheduler of ``wattsched run`` without ``-s``.
DEFAULT_SCHEDULER = "easy-backfill"

EPILOG_RUN = """\
examples:
  wattsched run platforms/taurus_16.xml workloads/demo_taurus16.json -s easy-backfill -e results/easy
  wattsched run P.xml W.json -s energy-bud -o '{"budget_fraction": 0.5, "window_end_s": 86400, "shutdown": true}'
  wattsched run P.xml W.json -s compose -o '{"admission": "reduce-pc", "power": "shutdown", "window_end_s": 86400}'
  wattsched run P.xml W.json -s easy-backfill -o @options.json
  wattsched run P.xml W.json --window 0,86400 --json -q        (the first day's metrics too, as JSON)
  wattsched run P.xml W.json -s efs -o '{"half_life_s": 86400}' --per-user   (EnergyFairShare, per-user stretch)
  wattsched run P.xml W.json -s compose -o '{"order": "efs", "admission": "energy-bud", "power": "shutdown",
                                            "budget_fraction": 0.6, "window_end_s": 86400}'
  wattsched run eamc.xml eamc.json -s eamc-priority-inc -o '{"t_weight": 1.5}'   (EAMC across partitions,
                                                                         dynamic jobs enabled for it)
  wattsched run P.xml W.json -s mypackage.mymodule:MyScheduler        (any pybatsim scheduler class)
  wattsched run P.xml W.json --connect tcp://127.0.0.1:28000          (Batsim stand-in: the scheduler
                                                                         runs in another process)
"""


def cmd_run(args: argparse.Namespace) -> int:
    from wattsched.analysis.metrics import compute_metrics, format_table, metrics_to_json, read_workload_json
    from wattsched.base.batsim_files import output_paths
    from wattsched.experiments.runner import run_simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.workloads.users import check_job_fields

    if args.connect is not None and (args.scheduler is not None or args.options is not None):  # ignored likewise
        given = [flag for flag, value in (("-s", args.scheduler), ("-o", args.options)) if value is not None]
        verb = "apply" if len(given) > 1 else "applies"
        raise OptionError(f"{' and '.join(given)} {verb} without --connect only (the scheduler is the one listening "
                          f"on {args.connect}: give its name and options to 'wattsched serve -s NAME -o JSON')")
    scheduler = args.scheduler if args.scheduler is not None else DEFAULT_SCHEDULER
    options = scheduler_options(args.options) if args.options is not None else {}
    if args.options is not None and args.options.startswith("@"):  # an input too: it was replaced by an output
        from wattsched.experiments.runner import check_not_inputs, check_prefix, shown_path

        check_not_inputs(check_prefix(args.export), {"options": args.options[1:]},
                         f"output prefix {shown_path(args.export)}")
    platform = load_platform(args.platform, hold_warnings=True)  # said once the scheduler took it (run_simulation)
    workload = load_workload(args.workload)
    check_job_fields((job.entry for job in workload.jobs), args.workload)
    # the users, read now: a workload file deleted or replaced during a long run failed the command once the outputs
    # were written (or gave other users)
    users = read_workload_json(args.workload) if args.per_user else None
    with naming_options_file(args.options):  # (the jobs' EAMC fields are checked there too, for the scheduler)
        stats = run_simulation(platform, workload, args.export, scheduler=scheduler, options=options,
                               dynamic_jobs=args.enable_dynamic_jobs,
                               acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs,
                               connect=args.connect, show_progress=progress_enabled(args),
                               timeout_s=args.timeout)  # (None: run_zmq's default with --connect, else no limit)
    paths = output_paths(args.export)
    budget = _budget_window(scheduler, options) if args.connect is None else None
    nb_hosts = platform.nb_hosts
    wide = sum(job.res > nb_hosts for job in workload.jobs)
    # the workload and the simulation's objects freed (cycles among them) before the outputs are read back: the
    # metrics' frames were the peak of a whole log's run on top of them (the first 60,000 jobs of SDSC-Blue under EASY:
    # 320 MiB at the peak, 256 MiB now; 292 MiB without the collection)
    del platform, workload
    gc.collect()
    metrics = compute_metrics(str(args.export), tau_s=args.tau, workload=users, workload_name=args.workload,
                              window=args.window, extra_windows=budget)
    rejected = int(metrics.get("nb_jobs_rejected", 0))
    if rejected:
        print(f"warning: {counted(rejected, 'job')} rejected by the scheduler"
              + (f", {wide} of them wider than the platform's {counted(nb_hosts, 'host')} (Batsim submits "
                 "such jobs; the presets reject them, as pybatsim's EASY does)" if wide else ""), file=sys.stderr)
    if args.json:
        print(metrics_to_json(metrics))
    else:
        print(format_table(metrics, title=f"{scheduler if args.connect is None else args.connect} on "
                                          f"{Path(args.platform).name} / {Path(args.workload).name}"))
        print(f"outputs: {paths['jobs'].parent}/{Path(str(args.export)).name}_*.csv  "
              f"({stats.events} events in {stats.messages} messages, {stats.simulation_time_s:.2f} s wall-clock, "
              f"{stats.scheduling_time_s:.2f} s in the scheduler)")
    return 0


def _budget_window(scheduler: str, options: dict) -> dict[str, tuple[float, float]] | None:
    """The energy budget's window of a preset's options (``window_start_s``, ``window_end_s``, checked by the
    preset), measured by the metrics beside the run's; None without one. The options of another scheduler (a
    pybatsim class, ``file.py``) are its own: a ``window_end_s`` there is no budget of ours (read as one, a
    ``window_start_s`` after it or of text gave a ValueError traceback once the outputs were written); a preset's own
    pybatsim class reads them as its preset (:func:`~wattsched.experiments.runner.preset_of`)."""
    from wattsched.experiments.runner import preset_of
    from wattsched.schedulers.presets import PRESETS

    preset = PRESETS.get(preset_of(scheduler) or "")
    if preset is None:
        return None
    values = preset.validate(options)[1]
    if values.get("window_end_s") is None:
        return None
    return {"budget_window": (float(values.get("window_start_s") or 0.0), float(values["window_end_s"]))}


def cmd_replay(args: argparse.Namespace) -> int:
    from wattsched.simulator.replay import replay

    for folder in args.folders:
        _check_messages_recorded(Path(folder))
    if args.keep_outputs is not None:
        written: dict[Path, str] = {}
        for folder in args.folders:
            for target in _check_kept_outputs(Path(folder), Path(args.keep_outputs)):
                if target in written:  # the second replay replaced the first's CSVs without a word
                    raise OptionError(f"--keep-outputs {args.keep_outputs}: {printable(written[target])} and "
                                      f"{printable(folder)} would both write {printable(str(target))}, the second "
                                      "replacing the first's; replay them one at a time, each into its own folder")
                written[target] = folder
    failed = 0
    for folder in args.folders:
        report = replay(folder, rel_tol=args.rel_tol, outputs_dir=args.keep_outputs)
        print(printable(report.format(limit=args.limit), keep="\n"))  # a recording's ids, escaped
        failed += not report.ok
    if len(args.folders) > 1:
        print(f"{len(args.folders)} scenarios: {len(args.folders) - failed} identical, {failed} with differences")
    return 1 if failed else 0


def _check_messages_recorded(folder: Path) -> None:
    """Refuse, before any replay, a recording whose ``messages.jsonl`` holds no message (0 bytes, or blank lines
    only: a recording cut short, a copy that failed): the replay reads past its blank lines and, with nothing to
    compare, said the simulation "differs" (``the recording ends but the simulation goes on``), as if our
    simulator were wrong, when the recording is.

    Raises:
        InputError: ``FOLDER/messages.jsonl: empty (no message recorded)``.
    """
    from wattsched.base.fileio import require_regular_file

    path = folder / "messages.jsonl"
    try:  # a missing file, one that cannot be read or is no regular file: the replay says so, as before
        require_regular_file(path)  # a FIFO or a device is not read here
        with open(path, "rb") as fh:
            if any(line.strip() for line in fh):  # blank as the replay skips it; stops at the first message
                return
    except OSError:
        return
    raise InputError(path, "", "empty (no message recorded)")


def _check_kept_outputs(folder: Path, keep: Path) -> list[Path]:
    """Refuse, before any replay, a ``--keep-outputs`` folder where our CSVs would replace a file of the
    recording ``folder`` (its recorded CSVs when ``keep`` is the recording itself, also through a link): the
    replay would then compare our files with themselves and report them identical. Returns the files the replay
    of ``folder`` writes in ``keep`` (none known when the recording lacks its ``batsim-args.txt``)."""
    from wattsched.base.batsim_files import OUTPUT_KINDS
    from wattsched.experiments.runner import check_not_inputs
    from wattsched.simulator.replay import parse_args_file

    args_file = folder / "batsim-args.txt"
    if not (folder.is_dir() and args_file.is_file()):
        return []  # the replay says what is missing
    prefix = parse_args_file(args_file)[0].get("e", "out")
    recorded = {f"recorded {path.name}": path for path in sorted(folder.iterdir()) if path.is_file()}
    targets = [keep / f"{prefix}_{kind}.csv" for kind in OUTPUT_KINDS]
    check_not_inputs(targets, recorded, f"--keep-outputs {keep}", "give a folder outside the recording")
    return targets


def cmd_serve(args: argparse.Namespace) -> int:
    from wattsched.base.signals import terminate_as_interrupt
    from wattsched.base.validate import check_endpoint, ipc_bind_path
    from wattsched.schedulers.presets import PRESETS
    from wattsched.schedulers.protocol import scheduler_handler

    options = scheduler_options(args.options) if args.options is not None else {}
    check_endpoint(args.bind, "--bind")
    ipc_path = ipc_bind_path(args.bind, "--bind")  # no file, folder or live socket replaced by the bind
    before = _file_identity(ipc_path)
    try:
        with terminate_as_interrupt(), naming_options_file(args.options):  # the socket file removed on SIGTERM too
            if args.scheduler.strip() in PRESETS:
                # our presets answer through the translator (a JSON string in, one out: no pybatsim objects)
                _serve_translator(scheduler_handler(args.scheduler, options), args.bind, args.timeout)
            else:
                _serve_pybatsim(args.scheduler, options, args.bind, args.timeout)
    finally:
        if ipc_path is not None:
            _remove_own_socket(ipc_path, before)
    print("wattsched: simulation ended", file=sys.stderr)
    return 0


def _file_identity(path: Path | None) -> tuple[int, int] | None:
    """(device, inode) of ``path`` when it exists."""
    try:
        st = path.lstat() if path is not None else None
    except OSError:
        return None
    return None if st is None else (st.st_dev, st.st_ino)


def _remove_own_socket(path: Path, before: tuple[int, int] | None) -> None:
    """Remove the socket file ``serve`` bound at ``path``: a socket there that was not there before the bind
    (``before``: the identity of what was), nothing else."""
    import stat

    try:
        st = path.lstat()
        if stat.S_ISSOCK(st.st_mode) and (st.st_dev, st.st_ino) != before:
            path.unlink()
    except OSError:
        pass  # gone already (ZeroMQ removes it when its context ends)


def _text(frames: list[bytes], number: int) -> str:
    """A message (its ZeroMQ frames) as text; one that is not UTF-8, or of several frames, is refused naming it
    (``number``): the reply to a message of several frames cannot be sent (the REP socket's send raised ZMQError,
    a traceback, or was blamed on a pybatsim scheduler's code)."""
    if len(frames) != 1:
        raise ProtocolError(f"Batsim message {number}: a message of {len(frames)} parts (ZeroMQ frames); Batsim "
                            "sends each message in one")
    try:
        return frames[0].decode()
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"Batsim message {number}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _numbered(exc: Exception, number: int, now: Any) -> Exception:
    """An error of the scheduler's translator on message ``number`` (checked: ``now`` is a number), naming the
    message as the checker's errors do."""
    text = f"Batsim message {number} (t={now:g}): {exc}"
    return OptionError(text) if isinstance(exc, OptionError) else ProtocolError(text)


def _serve_pybatsim(name: str, options: dict, bind: str, timeout_s: float) -> None:
    """Any other pybatsim scheduler, in pybatsim's own Batsim class, on the guarded network handler.

    Raises:
        OptionError: the scheduler's code raised (or called ``sys.exit``) while loading or answering a message:
            one line naming it, the error and its line, as ``run -s`` (:func:`~wattsched.schedulers.adapter.
            user_code_error`); or ``bind`` cannot be bound.
        ProtocolError: Batsim broke the protocol, went away or sent nothing for ``timeout_s`` seconds.
    """
    import pybatsim.batsim.batsim as pybatsim_batsim
    import zmq

    from wattsched.base.errors import WattschedError
    from wattsched.schedulers.adapter import _source_file, load_scheduler, user_code_error

    scheduler = load_scheduler(name, options)
    network_class = _guarded_network_class(timeout_s, f"scheduler {name.strip()}")
    plain = pybatsim_batsim.NetworkHandler
    pybatsim_batsim.NetworkHandler = network_class  # pybatsim's Batsim binds and reads in its constructor
    network = None
    try:
        network_class.created.clear()
        try:
            try:
                bs = pybatsim_batsim.Batsim(scheduler, bind, -1)
            except zmq.ZMQError as exc:
                raise OptionError(f"--bind {bind}: cannot bind this endpoint ({exc})") from None
            finally:
                pybatsim_batsim.NetworkHandler = plain
                network = network_class.created[0] if network_class.created else None
            bs.start()
        except (WattschedError, KeyboardInterrupt):
            raise
        except BaseException as error:  # user code: reported on one line, as run -s reports it
            raise user_code_error(f"scheduler {name.strip()}", error, _source_file(type(scheduler))) from None
    finally:
        if network is not None:
            network.close()


def _guarded_network_class(timeout_s: float, label: str) -> Any:
    """pybatsim's network handler, made safe for a peer that breaks the protocol: every message Batsim sends
    is parsed and checked (:class:`~wattsched.base.validate.BatsimMessageChecker`) before pybatsim sees it;
    a peer that disconnects, or sends nothing for ``timeout_s`` seconds, raises :class:`ProtocolError`; the
    socket and its context are closed on every way out (the port is released). A child process the scheduler
    (``label``) forked that returns into the simulation ends before it sends a reply on the parent's socket
    (:func:`~wattsched.schedulers.adapter.end_forked_child`)."""
    import zmq
    from pybatsim.batsim.network import NetworkHandler

    from wattsched.base.errors import ProtocolError
    from wattsched.base.validate import BatsimMessageChecker, load_json
    from wattsched.schedulers.adapter import end_forked_child

    def error(source: str, field: str, problem: str) -> ProtocolError:
        return ProtocolError(f"{source}{' at ' + field if field else ''}: {problem}")

    slice_ms = _slice_ms(timeout_s)
    pid = os.getpid()
    max_depth = int(limit("nesting"))  # read once, not at every message

    class GuardedNetwork(NetworkHandler):
        created: list["GuardedNetwork"] = []
        connection: Any
        context: Any
        socket_endpoint: str

        def __init__(self, endpoint: str, *rest: Any, **kwargs: Any) -> None:
            super().__init__(endpoint, *rest, **kwargs)
            self.checker = BatsimMessageChecker(sees_replies=True, pybatsim=True)
            self.monitor: Any = None
            GuardedNetwork.created.append(self)

        def bind(self) -> None:
            try:
                super().bind()
            except zmq.ZMQError:
                self.close()
                raise
            self.connection.setsockopt(zmq.LINGER, 0)
            self.socket_endpoint = _bound_endpoint(self.connection, self.socket_endpoint)
            self.monitor = self.connection.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            self.connection.setsockopt(zmq.RCVTIMEO, slice_ms)
            print(f"wattsched: waiting for Batsim on {self.socket_endpoint} (Batsim connects with -s)",
                  file=sys.stderr)

        def recv(self, blocking: bool = False) -> dict:
            """The next message, parsed and checked; waits as ``serve`` does (:func:`_wait_longer`)."""
            number = self.checker.number
            try:
                raw = self.connection.recv_multipart()
            except zmq.Again:
                raw = _wait_longer(self.connection, self.monitor, number, self.socket_endpoint, timeout_s, slice_ms)
            msg = load_json(_text(raw, number + 1), f"Batsim message {number + 1}", error, max_depth=max_depth)
            self.checker.check(msg)
            return msg

        def send(self, msg: dict) -> None:
            end_forked_child(pid, label)
            self.checker.replied(msg)  # jobs started, and registered (known from now on: B44)
            super().send(msg)

        def close(self) -> None:
            if self.monitor is not None:
                self.monitor.close(linger=0)
                self.monitor = None
            if self.connection is not None:
                self.connection.close(linger=0)
                self.connection = None
            self.context.term()

    return GuardedNetwork


def _bound_endpoint(sock: Any, bind: str) -> str:
    """The endpoint Batsim connects to once ``sock`` is bound to ``bind``: ``bind`` itself, but for a wildcard
    (``tcp://HOST:*``, ``ipc://*``) the port or path ZeroMQ chose, which the waiting line and the errors named
    ``*`` (no Batsim could be told where to connect)."""
    import zmq

    if not (bind.endswith(":*") or bind == "ipc://*"):
        return bind
    return sock.getsockopt_string(zmq.LAST_ENDPOINT)


#: ``wattsched serve`` waits for a message in slices of at most this many milliseconds, and between two looks
#: whether Batsim disconnected: a dead peer is reported within a second.
WAIT_SLICE_MS = 1000


def _slice_ms(timeout_s: float) -> int:
    """One wait slice (:data:`WAIT_SLICE_MS`, shorter when the whole timeout is)."""
    return max(1, min(WAIT_SLICE_MS, int(timeout_s * 1000)))


def _peer_disconnected(monitor: Any) -> bool:
    """Whether the socket monitor reported a disconnection since the last look (without waiting)."""
    import zmq
    from zmq.utils.monitor import recv_monitor_message

    while True:
        try:
            event = recv_monitor_message(monitor, zmq.NOBLOCK)
        except zmq.Again:
            return False
        if event["event"] == zmq.EVENT_DISCONNECTED:
            return True


def _serve_translator(handler: Any, bind: str, timeout_s: float) -> None:
    """Answer Batsim's requests on a REP socket bound to ``bind`` with ``handler`` (a
    :class:`~wattsched.schedulers.protocol.BatsimTranslator`) until it answered SIMULATION_ENDS. Every message
    is decoded (UTF-8), parsed and checked before the scheduler sees it, and every reply shown to the checker
    (the jobs started); an error of the translator names the message as the checker's do; a peer that disconnects (noticed within
    :data:`WAIT_SLICE_MS`) or sends nothing for ``timeout_s`` seconds raises :class:`ProtocolError`; the socket
    is closed on every way out (the port is released).

    The wait is a blocking receive with a timeout of one slice, not a poll of the socket and its monitor: a
    poll of two ZeroMQ sockets costs about a third more system calls per message than a receive (what
    pybatsim does), and the monitor only matters once the receive times out."""
    import zmq

    from wattsched.base.errors import WattschedError
    from wattsched.base.validate import BatsimMessageChecker, load_json

    def error(source: str, field: str, problem: str) -> ProtocolError:
        return ProtocolError(f"{source}{' at ' + field if field else ''}: {problem}")

    ctx: zmq.Context = zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    monitor = None
    checker = BatsimMessageChecker(sees_replies=True)
    slice_ms = _slice_ms(timeout_s)
    max_depth = int(limit("nesting"))  # read once, not at every message
    try:
        try:
            sock.bind(bind)
        except zmq.ZMQError as exc:
            raise OptionError(f"--bind {bind}: cannot bind this endpoint ({exc})") from None
        bind = _bound_endpoint(sock, bind)
        print(f"wattsched: waiting for Batsim on {bind} (Batsim connects with -s)", file=sys.stderr)
        monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        sock.setsockopt(zmq.RCVTIMEO, slice_ms)
        receive, send, check, replied, dumps = (sock.recv_multipart, sock.send_string, checker.check, checker.replied,
                                                json.dumps)
        while not handler.ended:
            try:
                raw = receive()
            except zmq.Again:
                raw = _wait_longer(sock, monitor, checker.number, bind, timeout_s, slice_ms)
            message = load_json(_text(raw, checker.number + 1), f"Batsim message {checker.number + 1}", error,
                                max_depth=max_depth)
            check(message)
            try:
                reply = handler(message)
            except WattschedError as exc:  # the translator's own checks (a job object it cannot read, ...)
                raise _numbered(exc, checker.number, message["now"]) from None
            replied(reply)  # jobs started, and registered (known from now on: B44)
            send(dumps(reply))
    finally:
        if monitor is not None:
            monitor.close(linger=0)
        sock.close(linger=0)


def _wait_longer(sock: Any, monitor: Any, number: int, bind: str, timeout_s: float, slice_ms: int) -> list[bytes]:
    """The next message (its frames) once a first slice passed without one: slice after slice, looking for a
    disconnection between them, until ``timeout_s`` seconds have passed since the first slice began."""
    import zmq

    deadline = time.monotonic() + timeout_s - slice_ms / 1000
    try:
        while True:
            if _peer_disconnected(monitor):
                raise ProtocolError(f"Batsim closed the connection on {bind} (did it die?) after message {number}")
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                raise ProtocolError(f"Batsim sent nothing on {bind} for {timeout_s:g} s after message {number}; "
                                    "--timeout S waits longer")
            sock.setsockopt(zmq.RCVTIMEO, min(slice_ms, left_ms))
            try:
                return sock.recv_multipart()
            except zmq.Again:
                pass
    finally:
        sock.setsockopt(zmq.RCVTIMEO, slice_ms)


#: The ``type`` of ``-s``: a scheduler's name, not an empty one.
SCHEDULER_NAME = named("a preset name ('wattsched schedulers' lists them), 'module:Class' or 'file.py[:Class]'")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a workload on a platform with a scheduler (embedded simulator)",
                       description="Simulate WORKLOAD on PLATFORM with the embedded Batsim 4.2.1-compatible "
                                   "simulator, write Batsim's five output CSVs at the --export prefix (PREFIX_jobs.csv, "
                                   "_schedule.csv, _machine_states.csv, _consumed_energy.csv, _pstate_changes.csv), "
                                   "and print the metrics (utilization, AVEbsld, energy, ...). With --connect the "
                                   "scheduler runs in another process ('wattsched serve') and this one acts as Batsim.",
                       epilog=EPILOG_RUN)
    p.add_argument("platform", type=named("a SimGrid platform XML file"),
                   help="SimGrid platform XML file (version 4.1) with the hosts' power states, e.g. "
                        "platforms/taurus_16.xml ('wattsched platform' writes one)")
    p.add_argument("workload", type=named("a Batsim JSON workload file"),
                   help="Batsim JSON workload file, e.g. workloads/demo_taurus16.json ('wattsched synth', 'swf', "
                        "'lightesp' and 'eamc-workload' write one)")
    p.add_argument("-s", "--scheduler", type=SCHEDULER_NAME,  # None: DEFAULT_SCHEDULER, unless --connect
                   help="preset name (see 'wattsched schedulers'), pybatsim entry-point name, "
                        f"'package.module:Class' or 'file.py[:Class]' (default: {DEFAULT_SCHEDULER}; not with "
                        "--connect)")
    add_options_argument(p)
    p.add_argument("-e", "--export", default="out/out", metavar="PREFIX",
                   type=named("an output prefix such as out/out", written=True),
                   help="output prefix, not a folder: -e results/easy writes results/easy_jobs.csv, "
                        "results/easy_schedule.csv, ... (default: out/out)")
    p.add_argument("--connect", metavar="ENDPOINT", type=named("an endpoint such as tcp://127.0.0.1:28000"),
                   help="do not load a scheduler: act as Batsim and connect (ZeroMQ REQ) to a scheduler already "
                        "listening on ENDPOINT, tcp://HOST:PORT or ipc://PATH, e.g. tcp://127.0.0.1:28000 "
                        "('wattsched serve' binds it); -s and -o are then refused")
    p.add_argument("--timeout", type=timeout_seconds, default=None, metavar="S",
                   help=f"give up when the scheduler does not answer a message within S seconds (with --connect: "
                        f"default {DEFAULT_TIMEOUT_S:g}; in this process: no limit unless given, for a scheduler "
                        "module that may loop or block)")
    p.add_argument("--enable-dynamic-jobs", action="store_true",
                   help="accept dynamic job registration from the scheduler (Batsim's flag of the same name); a "
                        "scheduler that slows a job down re-registers it with its longer walltime (on, with "
                        "--acknowledge-dynamic-jobs, for the presets and compositions that need it: upas, eamc-*, "
                        "min-runtime, min-energy; with --connect, give both flags for such a scheduler: the one "
                        "listening stops at SIMULATION_BEGINS without them)")
    p.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                   help="answer each registration with a JOB_SUBMITTED (Batsim's flag of the same name)")
    p.add_argument("--tau", type=positive_float, default=10.0, metavar="S",
                   help="bounded-slowdown threshold in seconds, > 0 (default 10)")
    p.add_argument("--window", type=run_window, metavar="START,END",
                   help="also measure utilization and energy from START to END, in seconds of simulated time "
                        "(0 ≤ START < END), besides the whole run; an energy budget's window (options "
                        "window_start_s, window_end_s) is measured too")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON instead of a table")
    p.add_argument("--per-user", action="store_true",
                   help="also print each user's mean stretch (from the workload's 'user' field)")
    add_progress_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="replay recordings of real Batsim and report differences",
                       description="Replay each FOLDER, a recording of real Batsim (platform.xml, workload.json, "
                                   "batsim-args.txt, messages.jsonl and Batsim's five out_*.csv: the prefix and file "
                                   "names are those of batsim-args.txt), against the embedded simulator: the recorded "
                                   "scheduler replies are sent again, and every Batsim message and CSV is compared "
                                   "(times exact, energies within --rel-tol). Prints one summary line per folder, and "
                                   "a count with several. Exits 1 and prints the first differences when a Batsim "
                                   "message or a CSV differs.",
                       epilog="examples:\n"
                              "  wattsched replay tests/fixtures/batsim-reference/fcfs-compute\n"
                              "  wattsched replay tests/fixtures/batsim-reference/* --limit 3\n"
                              "  wattsched replay tests/fixtures/batsim-reference/dvfs-energy --keep-outputs ours")
    p.add_argument("folders", nargs="+", metavar="FOLDER", type=named("a folder recorded with real Batsim"),
                   help="a recording of real Batsim (e.g. tests/fixtures/batsim-reference/fcfs-compute)")
    p.add_argument("--rel-tol", type=positive_float, default=1e-7, metavar="R",
                   help="relative tolerance on energies, > 0 (default 1e-7)")
    p.add_argument("--limit", type=non_negative_int, default=10, metavar="N",
                   help="differences printed per folder, at most (default 10; 0: only their count)")
    p.add_argument("--keep-outputs", metavar="DIR", type=named("a folder, or leave --keep-outputs out", written=True),
                   help="write our CSVs into DIR, outside the recordings, and keep them (default: a temporary "
                        "folder, deleted); one FOLDER at a time when their prefixes are the same")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("serve", help="run a scheduler that waits for real Batsim (binds the REP socket)",
                       description="Bind the Batsim REP socket at --bind and run the scheduler for one simulation "
                                   "(our presets directly, any other scheduler through pybatsim), then exit. Start "
                                   "Batsim with '-s ENDPOINT' (or run 'wattsched run P W --connect ENDPOINT').",
                       epilog="examples:\n"
                              "  wattsched serve -s energy-bud -o '{\"budget_fraction\": 0.5, \"window_end_s\": 86400}'\n"
                              "  batsim -p P.xml -w W.json -e out/out --energy -s tcp://127.0.0.1:28000   (in another "
                              "shell)\n"
                              "  wattsched serve --bind tcp://*:28000 --timeout 3600            (in a container)")
    p.add_argument("-s", "--scheduler", default="easy-backfill", type=SCHEDULER_NAME,
                   help="preset name (see 'wattsched schedulers'), pybatsim entry-point name, "
                        "'package.module:Class' or 'file.py[:Class]' (default: easy-backfill)")
    add_options_argument(p)
    p.add_argument("--bind", default="tcp://127.0.0.1:28000", metavar="ENDPOINT",
                   type=named("an endpoint such as tcp://127.0.0.1:28000"),
                   help="ZeroMQ endpoint to bind: tcp://HOST:PORT (PORT 1-65535, or * for a free one, printed) "
                        "or ipc://PATH (default tcp://127.0.0.1:28000; use tcp://*:28000 in a container)")
    p.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"give up when Batsim sends nothing for S seconds (default {DEFAULT_TIMEOUT_S:g})")
    p.set_defaults(func=cmd_serve)
