"""The Batsim 4 protocol for our policies, without pybatsim: Batsim messages in, replies out.

:class:`BatsimTranslator` turns each Batsim message (the ``{"now": t, "events": [...]}`` dict) into calls of a
:class:`~wattsched.schedulers.core.PolicyScheduler` and its decisions into the events of the reply, stamped
with the received ``now``. It is what the embedded simulator calls in-process (no sockets, no JSON, no
pybatsim per-message bookkeeping), and what ``wattsched serve`` puts behind a ZeroMQ socket.

It answers exactly as :class:`~wattsched.schedulers.adapter.WattschedScheduler` does through pybatsim (the
same events with the same data, in the same order: Batsim behaviour 39), so a preset gives the same
schedule either way (``tests/test_protocol.py`` checks it on whole simulations).

**Once per message.** The policy is told every event of the message, then schedules once (``per_event``:
after every JOB_SUBMITTED and JOB_COMPLETED, like pybatsim's own ``easyBackfill``, and once more at the end of a
message that held another event the policy reads: a switch's end, an energy ANSWER, a REQUESTED_CALL, the end of
the static jobs; without that pass a power manager or a budget waiting for one of them never acted again).
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, Callable, Mapping

from wattsched.base.errors import OptionError, ProtocolError
from wattsched.base.hostsets import parse_canonical
from wattsched.energy_models.dvfs import CPU_BOUND, BetaModel
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.state import (
    CallMeLater,
    Decision,
    JobState,
    NotifyRegistrationFinished,
    QueryEnergy,
    QueuedJob,
    RegisterJob,
    RegisterProfile,
    RejectJob,
    SetJobMetadata,
    SetPState,
    StartJob,
)

logger = logging.getLogger(__name__)

#: A Batsim message in, the scheduler's reply out (what the simulator's in-process driver calls).
Handler = Callable[[dict], dict]

_JOB_KEYS = frozenset({"id", "res", "walltime", "subtime", "profile", "user", "beta"})


def queued_job(job_id: str, entry: Mapping[str, Any]) -> QueuedJob:
    """The policy's view of a job object of JOB_SUBMITTED (``walltime`` -1 or absent = none; ``beta``, when
    the workload gives it, is the job's β model).

    Raises:
        ProtocolError: a field of the wrong type or out of range.
    """
    try:
        walltime = entry.get("walltime")
        beta = entry.get("beta")
        user = entry.get("user")
        return QueuedJob(
            id=job_id,
            res=int(entry["res"]),
            walltime_s=None if walltime is None or float(walltime) < 0 else float(walltime),
            subtime_s=float(entry["subtime"]),
            profile=str(entry.get("profile", "")),
            user=None if user is None else str(user),
            runtime=CPU_BOUND if beta is None else BetaModel(float(beta)),
            extra=MappingProxyType({k: v for k, v in entry.items() if k not in _JOB_KEYS}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ProtocolError(f"JOB_SUBMITTED {job_id}: field 'job' is not a valid job object ({exc})") from None


def decision_event(decision: Decision, now: float) -> dict:
    """The Batsim event of one decision, as pybatsim writes it."""
    if isinstance(decision, StartJob):
        return {"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": decision.job_id, "alloc": str(decision.alloc)}}
    if isinstance(decision, RejectJob):
        return {"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": decision.job_id}}
    if isinstance(decision, SetPState):
        return {"timestamp": now, "type": "SET_RESOURCE_STATE",
                "data": {"resources": str(decision.hosts), "state": str(decision.pstate)}}
    if isinstance(decision, CallMeLater):
        return {"timestamp": now, "type": "CALL_ME_LATER", "data": {"timestamp": decision.at_s}}
    if isinstance(decision, QueryEnergy):
        return {"timestamp": now, "type": "QUERY", "data": {"requests": {"consumed_energy": {}}}}
    if isinstance(decision, RegisterProfile):
        return {"timestamp": now, "type": "REGISTER_PROFILE", "data": {
            "workload_name": decision.workload, "profile_name": decision.name, "profile": dict(decision.profile)}}
    if isinstance(decision, RegisterJob):
        return {"timestamp": now, "type": "REGISTER_JOB", "data": {"job_id": decision.job_id, "job": dict(decision.job)}}
    if isinstance(decision, NotifyRegistrationFinished):
        return {"timestamp": now, "type": "NOTIFY", "data": {"type": "registration_finished"}}
    if isinstance(decision, SetJobMetadata):
        return {"timestamp": now, "type": "SET_JOB_METADATA",
                "data": {"job_id": decision.job_id, "metadata": decision.metadata}}
    raise TypeError(f"no Batsim translation for {decision!r}")  # pragma: no cover - a new Decision type


class BatsimTranslator:
    """A policy scheduler answering Batsim messages (see the module docstring).

    Args:
        policy: a fresh policy scheduler (one simulation).
        per_event: schedule after every submission and completion, like pybatsim's ``easyBackfill`` (and at the
            end of a message that held another event the policy reads: the module docstring).
    """

    def __init__(self, policy: PolicyScheduler, *, per_event: bool = False) -> None:
        self.policy = policy
        self.per_event = per_event
        self._running = False
        self._ended = False

    def __call__(self, message: dict) -> dict:
        """Handle one Batsim message and return the reply (same ``now``, every event stamped with it)."""
        try:
            now = message["now"]
            events = message["events"]
        except (KeyError, TypeError):
            raise ProtocolError("a Batsim message must be an object with 'now' and 'events'") from None
        policy = self.policy
        out: list[Decision] = []
        if self._running:
            policy.set_time(float(now))
        others = False  # per_event: an event other than a submission or a completion was told to the policy
        for event in events:
            kind = event.get("type")
            data = event.get("data") or {}
            if kind == "SIMULATION_BEGINS":
                resources = sorted(data.get("compute_resources") or [], key=lambda r: r["id"])
                properties = [dict(r.get("properties") or {}) for r in resources]
                config = data.get("config") or {}
                policy.start(int(data["nb_compute_resources"]), float(now), properties,
                             dynamic_jobs=bool(config.get("dynamic-jobs-enabled")), profiles=data.get("profiles"))
                self._running = True
            elif kind == "SIMULATION_ENDS":
                self._running = False
                self._ended = True
            elif kind == "JOB_SUBMITTED":
                policy.on_submitted(queued_job(data["job_id"], data["job"]))
                if self.per_event:
                    out += policy.schedule()
            elif kind == "JOB_COMPLETED":
                policy.on_completed(data["job_id"], JobState.parse(data.get("job_state", "")))
                if self.per_event:
                    out += policy.schedule()
            elif kind == "JOB_KILLED":
                pass  # the JOB_COMPLETED of each killed job came first and freed its hosts
            elif kind == "RESOURCE_STATE_CHANGED":
                policy.on_hosts_changed(parse_canonical(data["resources"])[0], int(data["state"]))
                others = True
            elif kind == "ANSWER":
                if "consumed_energy" in data:
                    policy.on_energy(float(data["consumed_energy"]))
                    others = True
            elif kind == "REQUESTED_CALL":
                policy.on_call()
                others = True
            elif kind == "NOTIFY":
                if data.get("type") == "no_more_static_job_to_submit":
                    policy.on_no_more_jobs()
                    others = True
                else:
                    logger.info("NOTIFY %s ignored", data.get("type"))
            elif kind == "FROM_JOB_MSG":  # a job's "send" profile: the presets read no message (as the adapter)
                logger.warning("ignoring message from job %s: %r", data.get("job_id"), data.get("msg"))
            else:
                raise ProtocolError(f"unknown event type {kind!r} from Batsim")
        if self._running and (not self.per_event or others):
            out += policy.schedule()
        return {"now": now, "events": [decision_event(d, now) for d in out]}

    @property
    def ended(self) -> bool:
        """SIMULATION_ENDS was answered."""
        return self._ended


def scheduler_handler(name_or_module_path: str | type, options: Mapping[str, Any] | None = None) -> Handler:
    """The message handler of a scheduler: our presets through :class:`BatsimTranslator` (pybatsim is not
    imported), any other pybatsim scheduler (an entry-point name, ``package.module[:Class]``,
    ``file.py[:Class]`` or a ``BatsimScheduler`` subclass itself) through pybatsim's own client in memory
    (:func:`wattsched.schedulers.adapter.pybatsim_handler`).

    Raises:
        OptionError: bad options of a preset; an unknown scheduler; pybatsim missing for a non-preset.
    """
    from wattsched.schedulers.presets import PRESETS, build, unknown_preset

    spec = name_or_module_path.strip() if isinstance(name_or_module_path, str) else name_or_module_path
    if isinstance(spec, str) and spec in PRESETS:
        return BatsimTranslator(build(spec, dict(options or {})))
    try:
        from wattsched.schedulers.adapter import load_scheduler, pybatsim_handler
    except ImportError:
        what = unknown_preset(spec) if isinstance(spec, str) else f"scheduler class {spec.__qualname__}"
        raise OptionError(f"{what}; other pybatsim schedulers need pybatsim "
                          "(pip install --no-deps pybatsim==4.0.0a0)") from None
    name = spec if isinstance(spec, str) else f"{spec.__module__}:{spec.__qualname__}"
    return pybatsim_handler(load_scheduler(spec, options), name)


def needs_dynamic_jobs(handler: Handler) -> bool:
    """True when ``handler`` runs one of our presets whose pieces, with its options, start jobs with another walltime
    than their workload entry's (UPAS slows jobs down: :attr:`PolicyScheduler.needs_dynamic_jobs`), so that the run
    needs Batsim's dynamic jobs; False for any other pybatsim scheduler (it says nothing)."""
    policy = getattr(handler, "policy", None)
    return isinstance(policy, PolicyScheduler) and policy.needs_dynamic_jobs
