"""The bridge between our policies and pybatsim (Batsim 4 protocol through pybatsim).

- :class:`WattschedScheduler` is a pybatsim :class:`~pybatsim.batsim.batsim.BatsimScheduler` built from a
  preset name and options (:mod:`wattsched.schedulers.presets`): what ``pybatsim easy-backfill -o '{...}'``
  and the Docker image run against real Batsim. It translates pybatsim's camelCase callbacks into calls of
  the pure :class:`~wattsched.schedulers.core.PolicyScheduler` (pstates arrive as strings) and the policy's
  decisions into ``self.bs`` calls (EXECUTE_JOB, REJECT_JOB, SET_RESOURCE_STATE, CALL_ME_LATER, QUERY),
  which pybatsim stamps with the received ``now`` and sends back with that same ``now`` (Batsim behaviour
  39). It replies exactly as :class:`~wattsched.schedulers.protocol.BatsimTranslator`, which runs our
  presets in-process without pybatsim.
- :func:`pybatsim_handler` runs any pybatsim scheduler in-process: pybatsim's own ``Batsim`` client fed
  message by message in memory (:class:`InProcessBatsim` swaps its network handler for an in-memory one).
- :func:`load_scheduler` finds a pybatsim scheduler by preset name, pybatsim entry point, module path or
  file path (:func:`wattsched.schedulers.protocol.scheduler_handler` uses it for what is not a preset).

pybatsim is needed only here: a run of our presets does not import it (installing pybatsim 4.0.0a0 needs
``pip install --no-deps``, see the README).

**Once per message.** The policy is updated event by event but schedules once, in ``onNoMoreEvents``, after
every event of the Batsim message has been applied. pybatsim's own ``easyBackfill`` schedules after each
JOB_SUBMITTED / JOB_COMPLETED instead, so when a message holds several events the two may decide
differently. Both are valid Batsim clients; deciding on the whole message sees the complete state at that
instant. Set the class attribute ``per_event = True`` to react per event like pybatsim does (and once more at the
end of a message that held another event the policy reads, as :class:`~.protocol.BatsimTranslator` does).

One class per preset is registered under the ``pybatsim.schedulers`` entry point (``setup.cfg``), so
``pybatsim easy-backfill -o '{...}' -t -1`` runs it; pybatsim instantiates ``cls(options)``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import inspect
import logging
import os
import sys
import traceback
from importlib.metadata import entry_points
from types import FrameType, ModuleType
from typing import Any, Callable, ClassVar, Mapping, NoReturn, TypeVar

from procset import ProcSet
from pybatsim.batsim.batsim import Batsim, BatsimScheduler, Job

from wattsched.base.errors import NoAnswer, OptionError, ProtocolError, WattschedError, printable
from wattsched.base.fileio import require_regular_file
from wattsched.base.validate import DUPLICATE_KEY, decode_utf8, load_json
from wattsched.schedulers.presets import PRESETS, build, unknown_scheduler
from wattsched.schedulers.protocol import Handler, queued_job
from wattsched.schedulers.state import (
    CallMeLater,
    Decision,
    JobState,
    NotifyRegistrationFinished,
    QueryEnergy,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    SetJobMetadata,
    SetPState,
    StartJob,
)

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "pybatsim.schedulers"

#: The modules of pybatsim's own launcher: the ``pybatsim`` command (``pybatsim.cmdline.main``) and the functions it
#: calls (``pybatsim.batsim.tools.launcher.launch_scheduler``, or ``launch_scheduler_main``).
_PYBATSIM_LAUNCHER_MODULES = frozenset({"pybatsim.cmdline", "pybatsim.batsim.tools.launcher"})


def _under_pybatsim_launcher() -> bool:
    """Whether pybatsim's own launcher runs the scheduler (one of its frames is on the stack): ``pybatsim upas``,
    the Docker image. Our launchers (``wattsched serve``, ``run``, the API: :func:`pybatsim_handler` and the serve
    command's own pybatsim client) never go through it, and take a preset's error as the exception it is."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") in _PYBATSIM_LAUNCHER_MODULES:
            return True
        frame = frame.f_back
    return False


def _exit_one_line(message: str) -> NoReturn:
    """End the ``pybatsim`` process on one error line, exit status 2 (as ``wattsched``'s own errors)."""
    sys.stdout.flush()  # pybatsim's "Scheduler: ..." line first
    print(f"pybatsim: error: {printable(' '.join(message.split(chr(10))))}", file=sys.stderr, flush=True)
    raise SystemExit(2)


_Callback = TypeVar("_Callback", bound=Callable[..., Any])


def _one_line_under_pybatsim(method: _Callback) -> _Callback:
    """A preset's refusal (a :class:`WattschedError`: an option the platform cannot serve, Batsim without dynamic
    jobs for UPAS or EAMC...) raised in ``method`` ends pybatsim's own launcher on one line and a non-zero status,
    where pybatsim printed the traceback whose last line gave the reason; under our launchers it goes up unchanged
    (``wattsched`` prints it on one line itself, naming the Batsim message)."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except WattschedError as error:
            if not _under_pybatsim_launcher():
                raise
            _exit_one_line(str(error))

    return wrapper  # type: ignore[return-value]


def _launcher_options_text(options: object) -> str | None:
    """The text given as ``-o`` to pybatsim's own launcher (``pybatsim NAME -o TEXT``) when ``options`` is what it
    read from it (``pybatsim.cmdline.main`` on the stack, building the scheduler with the very object it parsed),
    read again from the arguments it parsed; None under any other launcher, without ``-o``, or for options a
    scheduler gives another one itself. pybatsim reads ``-o`` with ``json.load``, which keeps the last value of a key
    given twice, reads NaN and 1e400 as numbers and takes any JSON value: ``wattsched run`` and ``serve`` refuse
    them."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not (frame.f_globals.get("__name__") == "pybatsim.cmdline"
                                     and frame.f_code.co_name == "main"):
        frame = frame.f_back
    if frame is None or getattr(frame.f_locals.get("arguments"), "scheduler_options", None) is not options:
        return None
    parser, argv = frame.f_locals.get("parser"), frame.f_locals.get("args")
    actions = [action for action in getattr(parser, "_actions", ()) if action.dest == "scheduler_options"]
    if not isinstance(parser, argparse.ArgumentParser) or len(actions) != 1:
        return None  # another pybatsim than 4.0.0a0's: its options as it read them
    action = actions[0]
    kept = action.type, action.default
    action.type, action.default = None, None  # the text as given (parsed as pybatsim parsed it: it did so already)
    try:
        namespace, _ = parser.parse_known_args(argv)
    except SystemExit:  # pragma: no cover - pybatsim parsed these arguments a moment ago
        return None
    finally:
        action.type, action.default = kept
    text = getattr(namespace, "scheduler_options", None)
    return text if isinstance(text, str) else None


def _options_error(source: str, field: str, problem: str) -> OptionError:
    """The errors of ``wattsched run -o`` (``cli.common.scheduler_options``) for options text from ``source``."""
    where = f" at {field}" if field else ""
    what = "scheduler options" if problem.startswith(DUPLICATE_KEY) else "scheduler options are not valid JSON"
    return OptionError(f"{source}: {what}{where}: {problem}")


def _read_options_text(text: str) -> dict[str, Any]:
    """``-o TEXT`` of pybatsim's launcher read as ``wattsched run -o`` reads it (``@FILE`` as pybatsim takes it: after
    stripping white space): a JSON object, each key once, finite numbers.

    Raises:
        OptionError: the messages of ``wattsched run -o``.
    """
    source = "option -o"
    text = text.strip()
    if text.startswith("@"):
        source = text[1:]
        try:
            require_regular_file(source)
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as exc:  # pragma: no cover - pybatsim read it a moment ago
            raise OptionError(f"-o {text}: cannot read {source}: {exc.strerror or exc}") from None
        given = text
        text = decode_utf8(data, source, lambda _source, _field, problem: OptionError(f"-o {given}: {source}: {problem}"))
    value = load_json(text, source, _options_error, unique_keys=True)
    if not isinstance(value, dict):
        raise OptionError(f"{source}: scheduler options must be a JSON object like '{{\"placement\": \"best-fit\"}}'")
    return value


class WattschedScheduler(BatsimScheduler):
    """A wattsched preset speaking the Batsim protocol through pybatsim.

    Args:
        options: the preset's options (JSON object); validated at construction.
        preset: preset name; defaults to the class attribute :attr:`preset` of per-preset subclasses.

    Raises:
        OptionError: unknown preset, unknown option or bad option value.
    """

    preset: ClassVar[str | None] = None
    per_event: ClassVar[bool] = False

    @_one_line_under_pybatsim
    def __init__(self, options: Mapping[str, Any] | None = None, *, preset: str | None = None) -> None:
        given = _launcher_options_text(options)
        if given is not None:  # pybatsim's launcher read -o with json.load: read it again as 'wattsched run' reads it
            options = _read_options_text(given)
        if options is not None and not isinstance(options, Mapping):
            raise OptionError(f"scheduler options must be a JSON object like '{{\"placement\": \"best-fit\"}}', "
                              f"not {type(options).__name__}")
        options = dict(options or {})
        super().__init__(options)
        name = preset or self.preset
        if name is None:
            raise OptionError(f"no preset given; presets: {', '.join(PRESETS)}")
        self.preset_name = name
        try:
            self.policy = build(name, options)
        except OptionError as error:  # options of -o @FILE: the file named first, as 'wattsched run' names it
            source = given.strip()[1:] if given is not None and given.strip().startswith("@") else None
            if source is None or str(error).startswith(f"{source}: "):
                raise
            raise OptionError(f"{source}: {error}") from None
        self._running = False
        self._others = False  # per_event: an event other than a submission or a completion in this message
        self.logger = logger

    # ------------------------------------------------------------ simulation
    @_one_line_under_pybatsim
    def onSimulationBegins(self) -> None:
        bs = self.bs
        resources = getattr(bs, "compute_resources", None) or {}
        properties = [dict(resources[k].get("properties") or {}) for k in sorted(resources)]
        self.policy.start(int(bs.nb_compute_resources), float(bs.time()), properties,
                          dynamic_jobs=bool(getattr(bs, "dynamic_job_registration_enabled", False)),
                          profiles=getattr(bs, "profiles", None))
        self._running = True

    @_one_line_under_pybatsim
    def onSimulationEnds(self) -> None:
        self._running = False
        logger.info("simulation ends at %s", self.bs.time())

    def onDeadlock(self) -> None:
        message = "Batsim sent nothing before pybatsim's receive timeout; run pybatsim with '-t -1' (no timeout)"
        if _under_pybatsim_launcher():
            _exit_one_line(message)
        raise RuntimeError(message)

    @_one_line_under_pybatsim
    def onBeforeEvents(self) -> None:
        if self._running:
            self.policy.set_time(float(self.bs.time()))

    @_one_line_under_pybatsim
    def onNoMoreEvents(self) -> None:
        others, self._others = self._others, False
        if self._running and (not self.per_event or others):
            self._schedule()

    # ------------------------------------------------------------ jobs
    @_one_line_under_pybatsim
    def onJobSubmission(self, job: Job) -> None:
        self.policy.on_submitted(queued_job(job.id, job.json_dict or {}))
        if self.per_event:
            self._schedule()

    @_one_line_under_pybatsim
    def onJobCompletion(self, job: Job) -> None:
        self.policy.on_completed(job.id, JobState.parse(job.job_state.name))
        if self.per_event:
            self._schedule()

    def onJobsKilled(self, jobs: list[Job]) -> None:
        """JOB_KILLED follows the JOB_COMPLETED of each killed job, which already freed its hosts."""

    def onJobMessage(self, timestamp: float, job: Job, message: Any) -> None:
        logger.warning("ignoring message from job %s: %r", job.id, message)

    # ------------------------------------------------------------ machines, energy, calls
    @_one_line_under_pybatsim
    def onMachinePStateChanged(self, nodeid: tuple[int, int], pstate: str) -> None:
        self.policy.on_hosts_changed(ProcSet(tuple(nodeid)), int(pstate))
        self._others = True

    @_one_line_under_pybatsim
    def onReportEnergyConsumed(self, consumed_energy: float) -> None:
        self.policy.on_energy(float(consumed_energy))
        self._others = True

    @_one_line_under_pybatsim
    def onRequestedCall(self) -> None:
        self.policy.on_call()
        self._others = True

    @_one_line_under_pybatsim
    def onNoMoreJobsInWorkloads(self) -> None:
        logger.info("no more static jobs to submit")
        if self._running:
            self.policy.on_no_more_jobs()
            self._others = True

    def onAddResources(self, to_add: ProcSet) -> None:
        logger.warning("ADD_RESOURCES %s ignored (dynamic resources are not supported)", to_add)

    def onRemoveResources(self, to_remove: ProcSet) -> None:
        logger.warning("REMOVE_RESOURCES %s ignored (dynamic resources are not supported)", to_remove)

    def onNotifyEventMachineUnavailable(self, machines: ProcSet) -> None:
        logger.warning("machines %s unavailable: external events are not supported", machines)

    def onNotifyEventMachineAvailable(self, machines: ProcSet) -> None:
        logger.warning("machines %s available: external events are not supported", machines)

    def onNotifyGenericEvent(self, event_data: Any) -> None:
        logger.warning("ignoring external event %r", event_data)

    def onDatasetArrivedOnStorage(self, dataset_id: Any, source_id: Any, dest_id: Any) -> None:
        """Storage is not used."""

    def onDataTransferNotTerminated(self, dataset_id: Any, source_id: Any, dest_id: Any) -> None:
        """Storage is not used."""

    # ------------------------------------------------------------ decisions
    def _schedule(self) -> None:
        self.apply(self.policy.schedule())

    def apply(self, decisions: list[Decision]) -> None:
        """Turn the policy's decisions into pybatsim calls, in order."""
        bs = self.bs
        for decision in decisions:
            if isinstance(decision, StartJob):
                job = bs.jobs[decision.job_id]
                job.allocation = ProcSet(decision.alloc)
                bs.execute_job(job)
            elif isinstance(decision, RejectJob):
                bs.reject_jobs_by_id([decision.job_id])
            elif isinstance(decision, SetPState):
                bs.set_resource_state(ProcSet(decision.hosts), decision.pstate)
            elif isinstance(decision, CallMeLater):
                bs.wake_me_up_at(decision.at_s)
            elif isinstance(decision, QueryEnergy):
                bs.request_consumed_energy()
            elif isinstance(decision, RegisterProfile):
                bs.register_profiles(decision.workload, {decision.name: dict(decision.profile)})
            elif isinstance(decision, RegisterJob):
                job = decision.job
                bs.register_job(decision.job_id, job["res"], job.get("walltime", -1), job["profile"], job["subtime"])
            elif isinstance(decision, NotifyRegistrationFinished):
                bs.notify_registration_finished()
            elif isinstance(decision, SetJobMetadata):
                bs.set_job_metadata(decision.job_id, decision.metadata)
            else:  # pragma: no cover - a new Decision type without a translation
                raise TypeError(f"no Batsim translation for {decision!r}")


class Compose(WattschedScheduler):
    """Preset ``compose`` for pybatsim: any piece in any slot (``-o '{"admission": "energy-bud", ...}'``)."""

    preset = "compose"


class Fcfs(WattschedScheduler):
    """Preset ``fcfs`` for pybatsim: first come, first served, no backfilling."""

    preset = "fcfs"


class EasyBackfill(WattschedScheduler):
    """Preset ``easy-backfill`` for pybatsim: EASY backfilling (energy-budget paper §II, Algorithm 1)."""

    preset = "easy-backfill"


class EnergyBud(WattschedScheduler):
    """Preset ``energy-bud`` for pybatsim: energyBud (energy-budget paper §IV-B, Algorithm 2)."""

    preset = "energy-bud"


class ReducePC(WattschedScheduler):
    """Preset ``reduce-pc`` for pybatsim: reducePC (energy-budget paper §IV-D)."""

    preset = "reduce-pc"


class Powercap(WattschedScheduler):
    """Preset ``powercap`` for pybatsim: EASY under the powercap B / (te − ts) (energy-budget paper §V-C)."""

    preset = "powercap"


class FairShare(WattschedScheduler):
    """Preset ``fairshare`` for pybatsim: EASY behind FairShare on CPU-seconds (EFS paper §III-B, eq. 1-4)."""

    preset = "fairshare"


class EnergyFairShare(WattschedScheduler):
    """Preset ``efs`` for pybatsim: EASY behind EnergyFairShare, FairShare on joules (EFS paper §III-C)."""

    preset = "efs"


class FairSharePlusEnergy(WattschedScheduler):
    """Preset ``fs-efs`` for pybatsim: EASY behind FS+EFS (EFS paper §IV-A)."""

    preset = "fs-efs"


class Esc(WattschedScheduler):
    """Preset ``esc`` for pybatsim: FCFS with EnergySaving Cluster's on/off rules (ESC paper §2.5)."""

    preset = "esc"


class Upas(WattschedScheduler):
    """Preset ``upas`` for pybatsim: EASY with UPAS's frequency assignment (UPAS paper §2.2, eq. 1-2). Batsim must
    run with ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``: slowed jobs are re-registered."""

    preset = "upas"


class EamcReorder(WattschedScheduler):
    """Preset ``eamc-reorder`` for pybatsim: EAMC-Reorder (EAMC paper §4.2); Batsim needs dynamic jobs."""

    preset = "eamc-reorder"


class EamcPriorityInc(WattschedScheduler):
    """Preset ``eamc-priority-inc`` for pybatsim: EAMC-PriorityInc (EAMC paper §4.2); needs dynamic jobs."""

    preset = "eamc-priority-inc"


class EamcPriorityIncV(WattschedScheduler):
    """Preset ``eamc-priority-inc-v`` for pybatsim: EAMC-PriorityInc-V (EAMC paper §4.2); needs dynamic jobs."""

    preset = "eamc-priority-inc-v"


class EamcBase(WattschedScheduler):
    """Preset ``eamc-base`` for pybatsim: Base Slurm, the favoured partition at the top frequency (EAMC paper §5)."""

    preset = "eamc-base"


class MinRuntime(WattschedScheduler):
    """Preset ``min-runtime`` for pybatsim: both partitions, the frequency of the least time (EAMC paper §5)."""

    preset = "min-runtime"


class MinEnergy(WattschedScheduler):
    """Preset ``min-energy`` for pybatsim: both partitions, the frequency of the least energy (EAMC paper §5)."""

    preset = "min-energy"


#: The pybatsim class of every preset (registered in setup.cfg under ``pybatsim.schedulers``).
PRESET_CLASSES: dict[str, type[WattschedScheduler]] = {
    cls.preset: cls for cls in (Fcfs, EasyBackfill, EnergyBud, ReducePC, Powercap, FairShare, EnergyFairShare,
                                FairSharePlusEnergy, Esc, Upas, EamcReorder, EamcPriorityInc, EamcPriorityIncV,
                                EamcBase, MinRuntime, MinEnergy, Compose)}


def _unknown(spec: str, why: str = "") -> OptionError:
    names = ", ".join(PRESETS)
    others = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} - set(PRESETS))
    plugins = ", ".join(others)
    return OptionError(
        f"{unknown_scheduler(spec, others)}{why}; presets: {names}; pybatsim schedulers: {plugins or 'none'}; "
        "or package.module[:Class] or path/to/file.py[:Class]"
    )


def user_code_error(what: str, error: BaseException, source: str | None = None) -> OptionError:
    """An exception (or a ``sys.exit``) raised by a user's scheduler code, on one line:
    ``<what> raised <Type>: <message> (at <file>:<line>)``.

    Args:
        what: who raised it, e.g. ``"scheduler my_sched.py"``.
        error: the exception caught.
        source: the scheduler's own file: the line shown is the innermost of this file in the traceback
            (else the innermost line of real Python files; a SyntaxError's own file and line).
    """
    if isinstance(error, SyntaxError):
        at = (error.filename, error.lineno)
        message = error.msg
    else:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<")]
        mine = [f for f in frames if source is not None and os.path.realpath(f.filename) == os.path.realpath(source)]
        last = mine or frames
        at = (last[-1].filename, last[-1].lineno) if last else (None, None)
        message = _shown(str, error)
    raised = (f"called sys.exit({_shown(repr, error.code)})" if isinstance(error, SystemExit)
              else f"raised {type(error).__name__}" + (f": {message}" if message else ""))
    where = f" (at {at[0]}:{at[1]})" if at[0] else ""
    missing = _undefined_callback(error, at)
    if missing is not None:  # pybatsim's BatsimScheduler.onJobSubmission etc. raise it: the class lacks the callback
        raised = f"does not define {missing} (pybatsim's BatsimScheduler.{missing} raises NotImplementedError)"
        where = ""
    return OptionError(" ".join(f"{what} {raised}{where}".split()))


def _shown(show: Callable[[Any], str], value: Any) -> str:
    """``show(value)`` (``str`` or ``repr``) of a user's object; one whose ``__str__`` or ``__repr__`` raises (a
    traceback of its own, in place of the one-line error) is named by its type."""
    try:
        return show(value)
    except Exception:
        return f"<{type(value).__name__} whose {show.__name__}() raised>"


def _undefined_callback(error: BaseException, at: tuple[str | None, int | None]) -> str | None:
    """The callback (``onJobSubmission``...) whose default of pybatsim's ``BatsimScheduler`` raised ``error``, a bare
    :class:`NotImplementedError` at ``at`` (file, line): the scheduler class does not define it. None otherwise."""
    if type(error) is not NotImplementedError or error.args or at[0] is None:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    name = frames[-1].name if frames else ""
    default = getattr(BatsimScheduler, name, None) if name.startswith("on") else None
    code = getattr(default, "__code__", None)
    if code is None or os.path.realpath(code.co_filename) != os.path.realpath(at[0]):
        return None
    return name


def end_forked_child(pid: int, label: str) -> None:
    """End this process at once, with one error line, when it is not ``pid`` but a child the scheduler's code forked
    (``os.fork``) that returned into the simulation instead of ending with ``os._exit``: it ran the rest of the
    simulation beside its parent (each process wrote every output and printed the metrics; under ``serve``, both
    answered on the parent's socket). Nothing of the parent's is cleaned up in it (its files, its socket)."""
    if os.getpid() != pid:
        os.write(2, f"wattsched: error: process {os.getpid()}, forked by {label} (os.fork), returned into the "
                    "simulation and was ended (a child must end with os._exit); the simulation goes on in process "
                    f"{pid}\n".encode())
        os._exit(2)


def _source_file(cls: type) -> str | None:
    """The file a scheduler class is defined in (None for a class without one)."""
    try:
        return inspect.getfile(cls)
    except TypeError:
        return None


def _load_file(path: str) -> ModuleType:
    """The module of a scheduler file ``path``.

    Raises:
        OptionError: ``path`` is not a Python file, or running it raised (a SyntaxError, an ImportError, any
            exception or ``sys.exit``): one line naming the file, the error and its line.
    """
    name = "wattsched_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _unknown(path, " (not a Python file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # user code: whatever it raises is reported on one line
        del sys.modules[name]
        raise user_code_error(f"scheduler file {path}", error, path) from None
    return module


def _scheduler_class(module: ModuleType, class_name: str | None, spec: str) -> type[BatsimScheduler]:
    if class_name is not None:
        cls = getattr(module, class_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, BatsimScheduler)):
            raise _unknown(spec, f" (no BatsimScheduler subclass '{class_name}' in {module.__name__})")
        return cls
    candidates = [c for c in vars(module).values()
                  if inspect.isclass(c) and issubclass(c, BatsimScheduler)
                  and c not in (BatsimScheduler, WattschedScheduler)]
    own = [c for c in candidates if c.__module__ == module.__name__]
    if not (own or candidates):
        raise _unknown(spec, f" (no BatsimScheduler subclass in {module.__name__})")
    return (own or candidates)[0]


def load_scheduler(name_or_module_path: str | type[BatsimScheduler],
                   options: Mapping[str, Any] | None = None) -> BatsimScheduler:
    """A ready pybatsim scheduler from a name, a path or its class. A child process that the scheduler's module or
    ``__init__`` forked (``os.fork``) and that returns from them ends here with one line, before the simulation
    (:func:`end_forked_child`; :func:`pybatsim_handler` does the same for its callbacks).

    Args:
        name_or_module_path: a preset name (``easy-backfill``); a name registered under the
            ``pybatsim.schedulers`` entry point (``backfill-easy``); ``package.module:Class``;
            ``package.module`` (its first BatsimScheduler subclass, preferring those defined there);
            a file ``path/to/sched.py[:Class]``; or a ``BatsimScheduler`` subclass.
        options: scheduler options (a JSON object), passed as ``cls(options)``.

    Raises:
        OptionError: unknown scheduler, ambiguous entry-point name, bad options of a preset, or user code (a
            scheduler file or module, a class's ``__init__``) that raised or called ``sys.exit``: one line
            naming the file and the line (:func:`user_code_error`).
    """
    pid = os.getpid()
    name = name_or_module_path if isinstance(name_or_module_path, str) else name_or_module_path.__qualname__
    try:
        return _load_scheduler(name_or_module_path, options)
    finally:
        end_forked_child(pid, f"scheduler {name.strip()}")


def _load_scheduler(name_or_module_path: str | type[BatsimScheduler],
                    options: Mapping[str, Any] | None) -> BatsimScheduler:
    """:func:`load_scheduler` in the process that called it."""
    opts = dict(options or {})
    if isinstance(name_or_module_path, type):
        cls = name_or_module_path
        if not issubclass(cls, BatsimScheduler):
            raise OptionError(f"scheduler class {cls.__qualname__} is not a subclass of pybatsim's BatsimScheduler")
        return _instantiate(cls, opts, f"{cls.__module__}:{cls.__qualname__}")
    spec = name_or_module_path.strip()
    if spec in PRESET_CLASSES:
        return PRESET_CLASSES[spec](opts)
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
    if len({ep.value for ep in found}) > 1:
        raise OptionError(f"scheduler name '{spec}' is registered more than once: "
                          + ", ".join(sorted({ep.value for ep in found})))
    if found:
        try:
            cls = found[0].load()
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # a plugin's code: reported on one line
            raise user_code_error(f"scheduler {spec} ({found[0].value})", error) from None
        return _instantiate(cls, opts, spec)
    target, class_name = spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and tail and "/" not in tail and "\\" not in tail:
        target, class_name = head, tail
    if target.endswith(".py") or os.sep in target or "/" in target:
        if not os.path.isfile(target):
            raise _unknown(spec, f" (no file {target})")
        module = _load_file(target)
    elif "." in target or class_name is not None:
        try:
            module = importlib.import_module(target)
        except ImportError as error:
            raise _unknown(spec, f" (cannot import {target}: {error})") from None
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # the module's own code failed
            raise user_code_error(f"scheduler module {target}", error) from None
    else:
        raise _unknown(spec)
    return _instantiate(_scheduler_class(module, class_name, spec), opts, spec)


def _instantiate(cls: type[BatsimScheduler], options: dict[str, Any], spec: str) -> BatsimScheduler:
    """``cls(options)``; an exception of the class's own ``__init__`` (not a bad option of a preset, already one
    line) is reported on one line naming the scheduler, the error and the line that raised it."""
    try:
        return cls(options)
    except (WattschedError, KeyboardInterrupt):
        raise
    except BaseException as error:  # a SystemExit, a GeneratorExit, a BaseException of its own: one line too
        raise user_code_error(f"scheduler {spec}", error, _source_file(cls)) from None


class _MemoryChannel:
    """What pybatsim's ``Batsim`` needs of its network handler: one message in, one reply out."""

    def __init__(self, first: dict) -> None:
        self.inbox: dict | None = first
        self.outbox: dict | None = None

    def bind(self) -> None:
        """Nothing to bind."""

    def recv(self, blocking: bool = False) -> dict | None:
        msg, self.inbox = self.inbox, None
        return msg

    def send(self, msg: dict) -> None:
        self.outbox = msg

    def close(self) -> None:
        """Nothing to close."""


class InProcessBatsim(Batsim):
    """pybatsim's ``Batsim`` client fed in memory: its network handler is an in-memory channel.

    ``Batsim.__init__`` opens its network handler and reads SIMULATION_BEGINS itself; here the ``network``
    attribute is a property that keeps the channel (pybatsim's own ``NetworkHandler`` is built, unused and
    without a socket), so the first message is handed over at construction and each later one by
    :meth:`handle`. pybatsim raises the interpreter's recursion limit for good; it is restored.
    """

    def __init__(self, scheduler: BatsimScheduler, first_message: dict) -> None:
        self._channel = _MemoryChannel(first_message)
        limit = sys.getrecursionlimit()
        try:
            super().__init__(scheduler, "inprocess://", -1)
        finally:
            sys.setrecursionlimit(limit)

    @property
    def network(self) -> _MemoryChannel:
        return self._channel

    @network.setter
    def network(self, handler: Any) -> None:
        """pybatsim assigns its ZeroMQ handler: the in-memory channel stays."""

    def first_reply(self) -> dict:
        return self._take_reply()

    def handle(self, message: dict) -> dict:
        """One Batsim message in, the scheduler's reply out."""
        self._channel.inbox = message
        self.do_next_event()
        return self._take_reply()

    def _take_reply(self) -> dict:
        reply, self._channel.outbox = self._channel.outbox, None
        if reply is None:
            raise ProtocolError("the pybatsim scheduler did not reply to Batsim's message")
        return reply


def pybatsim_handler(scheduler: BatsimScheduler, name: str | None = None) -> Handler:
    """A message handler running a pybatsim scheduler in-process (see :class:`InProcessBatsim`).

    Args:
        scheduler: the scheduler.
        name: how errors name it (default: its class name). An exception (or ``sys.exit``) of the scheduler's
            code while it handles a message becomes an :class:`OptionError` on one line, ``scheduler <name>
            raised <Type>: <message> (at <file>:<line>)``, so that the run stops with no output written.

    The handler of one of our presets' classes (a :class:`WattschedScheduler`: ``-s
    wattsched.schedulers.adapter:Upas``) has the preset's policy as its ``policy`` attribute, as the translator of
    the preset by name has: the run checks the platform and the workload for it and turns Batsim's dynamic jobs on
    for a policy that re-registers jobs (UPAS, EAMC) as it does for ``-s upas`` (without it, the run stopped at
    SIMULATION_BEGINS telling to enable dynamic jobs "which 'wattsched run' enables itself").
    """
    client: InProcessBatsim | None = None
    label = f"scheduler {name or type(scheduler).__name__}"
    source = _source_file(type(scheduler))
    pid = os.getpid()

    def handle(message: dict) -> dict:
        nonlocal client
        try:
            if client is None:
                client = InProcessBatsim(scheduler, message)
                return client.first_reply()
            return client.handle(message)
        except (WattschedError, KeyboardInterrupt, NoAnswer):
            raise
        except BaseException as error:  # user code (a sys.exit, a BaseException of its own): one line, the run stops
            raise user_code_error(label, error, source) from None
        finally:
            end_forked_child(pid, label)

    if isinstance(scheduler, WattschedScheduler):
        setattr(handle, "policy", scheduler.policy)  # read by protocol.needs_dynamic_jobs and the run's checks
    return handle
