"""The one bridge between the policy code and pybatsim (Batsim 4 protocol, DESIGN §3).

:class:`WattschedScheduler` is a pybatsim :class:`~pybatsim.batsim.batsim.BatsimScheduler` built from a
preset name and options (:mod:`schedulers.presets`). It translates pybatsim's camelCase callbacks into
calls of the pure :class:`~schedulers.core.PolicyScheduler` (pstates arrive as strings, walltime -1 means
none, ``job.json_dict`` carries extra workload fields such as ``user``) and the policy's decisions into
``self.bs`` calls (EXECUTE_JOB, REJECT_JOB, SET_RESOURCE_STATE, CALL_ME_LATER, QUERY), which pybatsim stamps
with the received ``now`` and sends back with that same ``now`` (README behaviour 39).

**Once per message.** The policy is updated event by event but schedules once, in ``onNoMoreEvents``, after
every event of the Batsim message has been applied. pybatsim's own ``easyBackfill`` schedules after each
JOB_SUBMITTED / JOB_COMPLETED instead, so when a message holds several events the two may decide
differently (e.g. it can start a job before seeing a completion listed later in the same message, or
backfill a job that a same-time submission would have blocked). Both are valid Batsim clients; deciding
on the whole message sees the complete state at that instant. Set the class attribute
``per_event = True`` to react per event like pybatsim does.

One class per preset (:class:`Fcfs`, :class:`EasyBackfill`, :class:`EnergyBud`, :class:`ReducePC`,
:class:`Powercap`) is registered under the
``pybatsim.schedulers`` entry point (``setup.cfg``), so ``pybatsim easy-backfill -o '{...}' -t -1`` runs
it; pybatsim instantiates ``cls(options)``. :func:`load_scheduler` finds any scheduler by preset name,
entry-point name, module path or file path.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import sys
from importlib.metadata import entry_points
from types import MappingProxyType, ModuleType
from typing import Any, ClassVar, Mapping

from procset import ProcSet
from pybatsim.batsim.batsim import BatsimScheduler, Job

from wattsched.schedulers.presets import PRESETS, build
from wattsched.schedulers.state import CallMeLater, Decision, QueryEnergy, QueuedJob, RejectJob, SetPState, StartJob
from wattsched.base.errors import OptionError

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "pybatsim.schedulers"

_JOB_KEYS = frozenset({"id", "res", "walltime", "subtime", "profile", "user"})


def queued_job(job: Job) -> QueuedJob:
    """The policy's view of a pybatsim job (``requested_time`` -1 or absent = no walltime)."""
    data: Mapping[str, Any] = job.json_dict or {}
    walltime = job.requested_time
    user = data.get("user")
    return QueuedJob(
        id=job.id,
        res=int(job.requested_resources),
        walltime_s=None if walltime is None or float(walltime) < 0 else float(walltime),
        subtime_s=float(job.submit_time),
        profile=str(job.profile),
        user=None if user is None else str(user),
        extra=MappingProxyType({k: v for k, v in data.items() if k not in _JOB_KEYS}),
    )


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

    def __init__(self, options: Mapping[str, Any] | None = None, *, preset: str | None = None) -> None:
        options = dict(options or {})
        super().__init__(options)
        name = preset or self.preset
        if name is None:
            raise OptionError(f"no preset given; presets: {', '.join(PRESETS)}")
        self.preset_name = name
        self.policy = build(name, options)
        self._running = False
        self.logger = logger

    # ------------------------------------------------------------ simulation
    def onSimulationBegins(self) -> None:
        resources = getattr(self.bs, "compute_resources", None) or {}
        properties = [dict(resources[k].get("properties") or {}) for k in sorted(resources)]
        self.policy.start(int(self.bs.nb_compute_resources), float(self.bs.time()), properties)
        self._running = True

    def onSimulationEnds(self) -> None:
        self._running = False
        logger.info("simulation ends at %s", self.bs.time())

    def onDeadlock(self) -> None:
        raise RuntimeError(
            "Batsim sent nothing before pybatsim's receive timeout; run pybatsim with '-t -1' (no timeout)"
        )

    def onBeforeEvents(self) -> None:
        if self._running:
            self.policy.set_time(float(self.bs.time()))

    def onNoMoreEvents(self) -> None:
        if self._running and not self.per_event:
            self._schedule()

    # ------------------------------------------------------------ jobs
    def onJobSubmission(self, job: Job) -> None:
        self.policy.on_submitted(queued_job(job))
        if self.per_event:
            self._schedule()

    def onJobCompletion(self, job: Job) -> None:
        self.policy.on_completed(job.id, job.job_state.name)
        if self.per_event:
            self._schedule()

    def onJobsKilled(self, jobs: list[Job]) -> None:
        """JOB_KILLED follows the JOB_COMPLETED of each killed job, which already freed its hosts."""

    def onJobMessage(self, timestamp: float, job: Job, message: Any) -> None:
        logger.warning("ignoring message from job %s: %r", job.id, message)

    # ------------------------------------------------------------ machines, energy, calls
    def onMachinePStateChanged(self, nodeid: tuple[int, int], pstate: str) -> None:
        self.policy.on_pstate_changed(ProcSet(tuple(nodeid)), int(pstate))

    def onReportEnergyConsumed(self, consumed_energy: float) -> None:
        self.policy.on_energy(float(consumed_energy))

    def onRequestedCall(self) -> None:
        self.policy.on_call()

    def onNoMoreJobsInWorkloads(self) -> None:
        logger.info("no more static jobs to submit")
        if self._running:
            self.policy.on_no_more_jobs()

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
            else:  # pragma: no cover - a new Decision type without a translation
                raise TypeError(f"no Batsim translation for {decision!r}")


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


#: The pybatsim class of every preset (registered in setup.cfg under ``pybatsim.schedulers``).
PRESET_CLASSES: dict[str, type[WattschedScheduler]] = {  # type: ignore[misc]
    cls.preset: cls for cls in (Fcfs, EasyBackfill, EnergyBud, ReducePC, Powercap)}


def _unknown(spec: str, why: str = "") -> OptionError:
    names = ", ".join(PRESETS)
    plugins = ", ".join(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} - set(PRESETS)))
    return OptionError(
        f"unknown scheduler '{spec}'{why}; presets: {names}; pybatsim schedulers: {plugins or 'none'}; "
        "or package.module[:Class] or path/to/file.py[:Class]"
    )


def _load_file(path: str) -> ModuleType:
    name = "wattsched_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _unknown(path, " (not a Python file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception:
        del sys.modules[name]
        raise
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


def load_scheduler(name_or_module_path: str, options: Mapping[str, Any] | None = None) -> BatsimScheduler:
    """A ready pybatsim scheduler from a name or a path.

    Args:
        name_or_module_path: a preset name (``easy-backfill``); a name registered under the
            ``pybatsim.schedulers`` entry point (``backfill-easy``); ``package.module:Class``;
            ``package.module`` (its first BatsimScheduler subclass, preferring those defined there);
            or a file ``path/to/sched.py[:Class]``.
        options: scheduler options (a JSON object), passed as ``cls(options)``.

    Raises:
        OptionError: unknown scheduler, ambiguous entry-point name, or bad options of a preset.
    """
    spec = name_or_module_path.strip()
    opts = dict(options or {})
    if spec in PRESET_CLASSES:
        return PRESET_CLASSES[spec](opts)
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
    if len({ep.value for ep in found}) > 1:
        raise OptionError(f"scheduler name '{spec}' is registered more than once: "
                          + ", ".join(sorted({ep.value for ep in found})))
    if found:
        return found[0].load()(opts)
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
    else:
        raise _unknown(spec)
    return _scheduler_class(module, class_name, spec)(opts)
