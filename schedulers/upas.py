"""UPAS: the gear of a job from the machine's utilization in the previous interval (slot ``frequency``).

Etinski, Corbalan, Labarta, Valero, "Utilization driven power-aware parallel job scheduling" (CSRD 2010; the
*UPAS paper*), §2.2. Time is cut into intervals of ``T`` (``interval_s``, 600 s; the paper also runs 3600 s)
from the start of the simulation. The utilization of interval ``I_j`` is (eq. 1)::

    U_j = Σ_k Proc_k · RunTime_k / (N_proc · T)

over the jobs that ran during ``I_j`` (``RunTime_k`` their time inside it). A job started during ``I_j`` runs,
for its whole execution, at (eq. 2)::

    f_top    if U_{j−1} ≥ U_upper  or  WQ_size > WQ_threshold
    f_upper  if U_lower ≤ U_{j−1} < U_upper  and  WQ_size ≤ WQ_threshold
    f_lower  if U_{j−1} < U_lower  and  WQ_size ≤ WQ_threshold

with the paper's values as defaults: U_upper 0.8, U_lower 0.5, f_upper 2.0 GHz, f_lower 1.4 GHz (§4), and
WQ_threshold 0 (the paper evaluates 0, 4, 16 and no limit, ``null``; 0 is its most conservative setting).
The gears are found on the platform through the ``frequency_ghz_per_state`` property of its hosts
(:mod:`wattsched.energy_models.upas`, ``wattsched platform --node upas``); ``f_top`` is the fastest. The
job's walltime at its gear is its requested time rescaled by the β model (eq. 4) with its own β, known at
start as the paper assumes, or with β = 1 (``"beta_at_start": "worst-case"``, §3.4's alternative); the core
re-registers a slowed job with that walltime (dynamic jobs), and EASY's reservation and backfilling use it.

How we read the paper where it leaves a choice:

* **Utilization from events.** ``U`` is integrated from the ``on_started`` / ``on_completed`` events every
  piece hears (busy processors × time, split at interval boundaries), never by scanning the running jobs:
  O(1) per decision. Before the first interval ends, ``U_{−1}`` is the utilization of the interval before the
  simulation, 0 (the machine starts empty).
* **WQ_size** is the number of jobs waiting when the job starts, the job itself not counted (otherwise
  WQ_threshold = 0 would never allow DVFS): jobs a pass has already started are no longer waiting, those it
  starts after this one still are. So with WQ_threshold = 0 a job runs at a reduced gear only when nothing
  else waits.
* **Reservations.** The paper assumes, for a waiting job, the gear eq. 2 gave at its submission; here every
  pass asks eq. 2 again for the gear the job would get if it started now (the head's own walltime does not
  move EASY's reservation, which depends on the running jobs' ends).
"""

from __future__ import annotations

import math

from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.base.limits import limit
from wattsched.energy_models.dvfs import CPU_BOUND, BetaModel
from wattsched.energy_models.upas import FREQUENCY_PROPERTY, parse_frequencies
from wattsched.schedulers.frequency import FrequencyChoice
from wattsched.schedulers.options import Option
from wattsched.schedulers.pieces import DYNAMIC_JOBS_ADVICE, register
from wattsched.schedulers.state import ClusterView, JobState, QueuedJob, RunningJob

__all__ = ["IntervalUtilization", "Upas"]


class IntervalUtilization:
    """Eq. 1 from start and end events: busy processors integrated over fixed intervals of ``interval_s``.

    Call :meth:`change` when processors become busy (+n) or free (−n), :meth:`previous` for ``U_{j−1}`` at a
    time of interval ``j``. Times never go back.
    """

    __slots__ = ("interval_s", "nb_procs", "busy", "last_s", "index", "area", "previous_area")

    def __init__(self, interval_s: float, nb_procs: int, start_s: float = 0.0) -> None:
        self.interval_s = interval_s
        self.nb_procs = nb_procs
        self.busy = 0
        self.last_s = start_s
        self.index = math.floor(start_s / interval_s)
        self.area = 0.0  # busy processor-seconds of interval `index` up to last_s
        self.previous_area = 0.0  # of interval index − 1

    def _advance(self, now_s: float) -> None:
        if now_s <= self.last_s:
            return
        index = math.floor(now_s / self.interval_s)
        if index == self.index:
            self.area += self.busy * (now_s - self.last_s)
        else:
            end = (self.index + 1) * self.interval_s
            closed = self.area + self.busy * (end - self.last_s)
            self.previous_area = closed if index == self.index + 1 else self.busy * self.interval_s
            self.area = self.busy * (now_s - index * self.interval_s)
            self.index = index
        self.last_s = now_s

    def change(self, now_s: float, delta: int) -> None:
        """``delta`` processors become busy (> 0) or free (< 0) at ``now_s``."""
        self._advance(now_s)
        self.busy += delta

    def previous(self, now_s: float) -> float:
        """``U_{j−1}``: utilization of the interval before the one holding ``now_s`` (eq. 1)."""
        self._advance(now_s)
        return self.previous_area / (self.nb_procs * self.interval_s)


@register
class Upas(FrequencyChoice):
    """UPAS's frequency assignment (UPAS paper §2.2, eq. 1-2; module docstring)."""

    name = "upas"
    description = ("a job's gear from the previous interval's utilization: top above u_upper, f_upper between the "
                   "thresholds, f_lower below u_lower; top while more than wq_threshold jobs wait")
    reference = "UPAS paper (Etinski et al. 2010) §2.2, eq. 1-2; β model eq. 4"
    options = (
        Option("interval_s", float, 600.0, help="T, the interval of the utilization (eq. 1), s: the paper's 600 (also "
                                                "3600); must be positive"),
        Option("u_upper", float, 0.8, min=0.0, max=1.0, help="U_upper: utilization from which jobs run at the top gear"),
        Option("u_lower", float, 0.5, min=0.0, max=1.0, help="U_lower: utilization below which jobs run at f_lower"),
        Option("f_upper_ghz", float, 2.0, min=0.0, help="f_upper, a gear of the platform (GHz)"),
        Option("f_lower_ghz", float, 1.4, min=0.0, help="f_lower, a gear of the platform (GHz), at most f_upper"),
        Option("wq_threshold", int, 0, min=0, nullable=True,
               help="WQ_threshold: no DVFS while more jobs wait (null: no limit; the paper runs 0, 4, 16, null)"),
        Option("beta_at_start", str, "known", choices=("known", "worst-case"),
               help="walltime at a lower gear from the job's β (known at start, the paper's assumption) or β = 1"),
    )

    def __init__(self, interval_s: float = 600.0, u_upper: float = 0.8, u_lower: float = 0.5,
                 f_upper_ghz: float = 2.0, f_lower_ghz: float = 1.4, wq_threshold: int | None = 0,
                 beta_at_start: str = "known") -> None:
        if not interval_s > 0:
            raise OptionError(f"option 'interval_s' of upas must be positive, got {interval_s:g}")
        if not math.isfinite(limit("time_s") / interval_s):  # interval indices must stay within a double
            raise OptionError(f"option 'interval_s' of upas: an interval of {interval_s:g} s is too short: the "
                              f"simulated times would count more intervals than a double holds")
        if u_lower > u_upper:
            raise OptionError(f"options 'u_lower' ({u_lower:g}) and 'u_upper' ({u_upper:g}) of upas are reversed: "
                              "U_lower must not exceed U_upper")
        if f_lower_ghz > f_upper_ghz:
            raise OptionError(f"options 'f_lower_ghz' ({f_lower_ghz:g}) and 'f_upper_ghz' ({f_upper_ghz:g}) of upas "
                              "are reversed: f_lower must not exceed f_upper")
        self.interval_s = interval_s
        self.u_upper, self.u_lower = u_upper, u_lower
        self.f_upper_ghz, self.f_lower_ghz = f_upper_ghz, f_lower_ghz
        self.wq_threshold = wq_threshold
        self.worst_case = beta_at_start == "worst-case"
        self.p_top = self.p_upper = self.p_lower = 0
        self.f_top_ghz = math.nan
        self.utilization = IntervalUtilization(interval_s, 1)

    def needs_dynamic_jobs(self) -> bool:
        return self.u_upper > 0.0  # with U_upper = 0 every job runs at the top gear

    # ------------------------------------------------------------------ platform
    def on_platform(self, view: ClusterView) -> None:
        power = view.power
        texts = {str(props.get(FREQUENCY_PROPERTY)) if props.get(FREQUENCY_PROPERTY) is not None else None
                 for props in view.host_properties} or {None}
        if None in texts:
            raise OptionError(f"frequency 'upas': the platform's hosts have no '{FREQUENCY_PROPERTY}' property naming "
                              "the gear (GHz) of each pstate (write the platform with 'wattsched platform --node upas')")
        if len(texts) > 1:
            raise OptionError(f"frequency 'upas': the hosts' '{FREQUENCY_PROPERTY}' properties differ; UPAS needs one "
                              "gear set")
        text = texts.pop()
        assert text is not None and power is not None
        try:
            gears = parse_frequencies(text)
        except ValueError as exc:
            raise OptionError(f"frequency 'upas': platform property '{FREQUENCY_PROPERTY}': {exc}") from None
        model = power.models[0]
        if len(power.models) > 1 or len(gears) > len(model.computation_pstates) or any(
                not model.is_computation(p) for p in range(len(gears))):
            raise OptionError(f"frequency 'upas': '{FREQUENCY_PROPERTY}' must name the first computation pstates of "
                              "hosts of one kind")
        if not model.speeds_known:
            raise OptionError("frequency 'upas': the platform gives no pstate speeds (a 'speed_per_state' property, "
                              "as 'wattsched platform' writes): the β model needs them")

        def pstate_of(label: str, f_ghz: float) -> int:
            for p, f in enumerate(gears):
                if math.isclose(f, f_ghz, rel_tol=1e-9):
                    return p
            raise OptionError(f"option '{label}' of upas: {f_ghz:g} GHz is not a gear of the platform (gears: "
                              f"{', '.join(f'{f:g}' for f in gears)} GHz)")

        self.p_top = max(range(len(gears)), key=lambda p: gears[p])
        self.f_top_ghz = gears[self.p_top]
        if self.p_top != model.top_pstate:
            raise OptionError(f"frequency 'upas': the top gear ({self.f_top_ghz:g} GHz, pstate {self.p_top}) is not "
                              f"the fastest pstate ({model.top_pstate})")
        top_speed = model.speeds_flops[self.p_top]
        for p, f in enumerate(gears):
            if not math.isclose(model.speeds_flops[p] / top_speed, f / self.f_top_ghz, rel_tol=1e-9):
                raise OptionError(f"frequency 'upas': pstate {p} runs at {model.speeds_flops[p]:g} flop/s, not in "
                                  f"proportion to its {f:g} GHz: eq. 4 needs speed ∝ frequency")
        self.p_upper = pstate_of("f_upper_ghz", self.f_upper_ghz)
        self.p_lower = pstate_of("f_lower_ghz", self.f_lower_ghz)
        if self.needs_dynamic_jobs() and not view.dynamic_jobs:
            raise OptionError("frequency 'upas' lowers jobs' gears, so Batsim must accept dynamic jobs (a slowed job "
                              f"is re-registered with its longer walltime instead of being killed): {DYNAMIC_JOBS_ADVICE}")
        self.utilization = IntervalUtilization(self.interval_s, view.nb_hosts, 0.0)

    # ------------------------------------------------------------------ events
    def on_started(self, job: RunningJob, view: ClusterView) -> None:
        self.utilization.change(view.now_s, len(job.alloc))

    def on_completed(self, job: RunningJob, state: JobState, view: ClusterView) -> None:
        self.utilization.change(view.now_s, -len(job.alloc))

    # ------------------------------------------------------------------ decision
    def pstate_for(self, job: QueuedJob, hosts: ProcSet, view: ClusterView) -> int | None:
        if self.wq_threshold is not None and view.nb_waiting - 1 > self.wq_threshold:
            return self.p_top
        u = self.utilization.previous(view.now_s)
        if u >= self.u_upper:
            return self.p_top
        return self.p_upper if u >= self.u_lower else self.p_lower

    def runtime_model(self, job: QueuedJob) -> BetaModel:
        return CPU_BOUND if self.worst_case else job.runtime
