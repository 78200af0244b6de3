"""EAMC: energy-aware placement and frequency across heterogeneous partitions (D'Amico & Corbalan, "Energy
hardware and workload aware job scheduling towards interconnected HPC environments", §4), on the EAR model
(:mod:`wattsched.energy_models.ear`, eq. 1-3). docs/architecture.md §6.

**The platform** (:class:`EamcPlatform`): every host's ``partition`` property names its partition (the
generated EAMC platform writes it per ``<cluster>``, :mod:`wattsched.platforms.generate`) and its
``ear_model`` property the EAR module (the kind of node) of the model data; a partition's pstates are mapped
to the module's frequencies by their speeds (speed = frequency: one flop per cycle, ``2700.0Mf`` is 2.7 GHz).
A platform without ``partition`` properties is one partition. **A job** carries ``app`` (its application:
an id of the model) and optionally ``partitions`` (those it may run on, the first one its primary
partition; default: every partition in platform order). Its walltime and its profile (``delay``, or
``parallel_homogeneous`` flops at the top speed) are its time at the top frequency of its primary
partition. A job without ``app`` runs as any job, on one of its partitions.

**Energy Prediction Module** (:class:`EnergyPrediction`, §4.1-4.2, Listing 1). For each job-partition jp,
eq. 4 chooses the frequency

    f_opt = argmin_f  sqrt( (E_jp(f)/E_jp^min)² + t_weight · (t_jp(f)/t_jp^min)² )      (eq. 4)

over the frequencies the model and the platform both have (minima over the same ones), and eq. 5 ranks the
job's partitions at their f_opt, normalizing across partitions:

    part_eff_p = sqrt( (E_p(f_opt)/E_j^min)² + t_weight · (t_p(f_opt)/t_j^min)² )          (eq. 5)

best (smallest) first, ties in requested order. Per-job scales cancel (a job's time and energy on p are its
reference time × the model's T(p, f) / T_ref(p0), × nodes), so both depend on (app, partitions, t_weight)
only and are computed once. ``t_weight`` is 1 by default (the paper's 1 and 1.5, §5.2); it must be > 0.

**Where we follow the paper rather than the published plugin** (``REFERENCE.md`` §1.3-1.4), all selectable
with ``"epm": "plugin"``:

- eq. 4 as printed puts t_weight outside the square of the time term; the plugin scores
  ``(E/Emin)² + (1.5·T/Tmin)²`` (weight inside, hence 2.25 on the squared term at 1.5; identical at 1).
- eq. 5 is Euclidean; the plugin ranks by the sum ``E/Emin + 1.5·T/Tmin`` (and its qsort comparator is
  not a valid order; ours is a proper sort).
- PriorityInc-V lowers an entry "below a threshold of 35 % from the optimal part_eff": we read it as
  part_eff > (1 + 0.35) × the best part_eff; the plugin lowers the worst partition when its score exceeds
  the best one's by 0.35 in absolute score units. On the shipped data, no application is beyond 35 % at
  t_weight 1 or 1.5 (STREAM is the farthest, 33 %; the paper says ep.D was affected), so PriorityInc-V
  behaves as PriorityInc under the paper's reading; under the plugin's rule several are.
- The plugin's time coefficient scales the user's walltime by T_ref(p)/T_ref(p0) and its simulator the real
  duration likewise (``REFERENCE.md`` §1.3); we do the same with the model's time at the chosen frequency,
  but keep the run time exact (the plugin rounds it up to a whole second and the walltime to a minute; our
  walltime is rounded up to a second).

**Job-partition entries** (§4.2, figures 1-2): the queue orders below hand backfilling one entry per
partition of a job (:attr:`~wattsched.schedulers.state.QueuedJob.partition`, EASY across partitions in
:mod:`wattsched.schedulers.backfill`); a job runs on the partition of the first entry that starts, and the
head's reservation holds on its entry's partition.

- ``eamc-reorder`` (EAMC-Reorder): jobs in arrival order (FCFS), each job's entries best partition first.
- ``eamc-priority-inc`` (EAMC-PriorityInc): every job's best entry in FCFS order, then every second-best entry
  (FCFS), … — the paper's two queues of figure 2. The plugin adds the rank (0 or 1) to Slurm's multifactor
  priority, whose other factors the paper does not give; we follow the figure.
- ``eamc-priority-inc-v`` (EAMC-PriorityInc-V): as PriorityInc, and entries beyond the threshold (option
  ``threshold``, 0.35) come after all the others: "EAMCS first checks all optimal job-partition entries, then
  the second choices, and finally all the job-partitions below the threshold".
- ``requested-partitions`` (Min runtime and Min energy's queue): FCFS, each job's entries in its requested
  order, the same priority for all ("first in the first specified partition and immediately after in the
  second, not establishing the favored one", §5).
- ``favoured-partition`` (Base Slurm's queue): FCFS, one entry per job, its best partition only.

**Placement** ``partitions``: an entry's hosts are the lowest contiguous free interval of its partition
(first-fit inside the partition); a job without entry (any other queue order) tries its partitions best
ranked first, and EASY reserves it on the first partition where it fits earliest. The placement completes
each assignment with the EAR model (:meth:`PartitionPlacement.complete`): the job's walltime and run time
scaled by ``T(app, p, f) / T_ref(app, p0)``, a ``parallel_homogeneous`` profile of exactly that run time at
the chosen pstate's speed, and the metadata ``app=… partition=… ghz=… node_w=… favoured=…`` (``node_w`` the
model's power per node, eq. 1), so that the core re-registers the job (dynamic jobs, Batsim behaviour 44)
and it runs for exactly the model's time; :mod:`wattsched.analysis.eamc` reads the metadata back (the
job's energy is node_w × nodes × run time). Batsim must accept dynamic jobs (``needs_dynamic_jobs``).

**Frequency choices**: ``eamc`` (f_opt of eq. 4), ``min-runtime`` (the frequency of the least time, Min
runtime, after Auweter et al.), ``min-energy`` (the least energy, Min energy); Base uses ``top``. Ties go to
the highest frequency; a job without application runs at the top frequency. Behind any placement they slow
jobs down, so they too need Batsim's dynamic jobs (a slowed job is re-registered with its longer walltime).
"""

from __future__ import annotations

import bisect
import logging
import math
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.errors import InputError, OptionError, quoted_cut
from wattsched.base.hostsets import first_fit_within, intervals, longest_within
from wattsched.base.validate import file_name_problem
from wattsched.energy_models.ear import (
    APP_FIELD,
    EarModel,
    Projection,
    check_job_fields,
    load_ear_model,
    too_wide_for_partitions,
)
from wattsched.energy_models.power import NodeModel
from wattsched.schedulers.frequency import FrequencyChoice, top_pstate_of
from wattsched.schedulers.options import Option
from wattsched.schedulers.order import QueueOrder
from wattsched.schedulers.pieces import DYNAMIC_JOBS_ADVICE, Piece, register
from sortedcontainers import SortedKeyList

from wattsched.schedulers.placement import FreeHosts, Placement
from wattsched.schedulers.queue import EntryQueue
from wattsched.schedulers.state import Assignment, ClusterView, JobState, QueuedJob, RunningJob

logger = logging.getLogger(__name__)

__all__ = ["EAR_MODEL_PROPERTY", "PARTITION_PROPERTY", "EamcPlatform", "EnergyPrediction", "JobInfo",
           "check_ear_model_name", "metadata_text"]

#: The host property naming a host's partition.
PARTITION_PROPERTY = "partition"
#: The host property naming the EAR module (kind of node) of a host's partition in the model data.
EAR_MODEL_PROPERTY = "ear_model"
#: Where job-field errors come from, for the messages (a scheduler does not know the workload's file).
_SOURCE = "JOB_SUBMITTED"

T_WEIGHT = Option("t_weight", float, 1.0, min=0.0, min_exclusive=True, max=1e6,
                  help="weight of time against energy in EAMC eq. 4-5 (the paper's 1 and 1.5); must be > 0 "
                       "(at most 1e6: beyond, the squared time ratio times it overflows and every score ties)")
EPM_FORM = Option("epm", str, "paper", choices=("paper", "plugin"),
                  help="eq. 4-5 and the PriorityInc-V threshold as the paper prints them, or as the published "
                       "Slurm plugin computes them (weight inside the square, summed ranking, absolute threshold)")
EAR_MODEL = Option("ear_model", str, None, nullable=True,
                   help="folder of EAR model data (apps, modules, <module>.energy/.power/.time; default: the "
                        "shipped data of the paper's p1/p2 system)")
THRESHOLD = Option("threshold", float, 0.35, min=0.0,
                   help="PriorityInc-V: entries whose part_eff exceeds the best by this fraction go last (paper: 35 %)")
EAR_OPTIONS = (T_WEIGHT, EPM_FORM, EAR_MODEL)

#: The frequency rules of :meth:`EnergyPrediction.index`.
RULES = ("eamc", "min-runtime", "min-energy", "top")


# ------------------------------------------------------------------------------------------------ EPM
class EnergyPrediction:
    """The Energy Prediction Module: f_opt per job-partition (eq. 4) and the partitions' ranking (eq. 5).

    Args:
        t_weight: weight of time against energy (> 0).
        form: ``"paper"`` (eq. 4-5 as printed) or ``"plugin"`` (the published plugin's computation).
    """

    def __init__(self, t_weight: float = 1.0, form: str = "paper") -> None:
        if not (isinstance(t_weight, (int, float)) and math.isfinite(t_weight) and t_weight > 0):
            raise OptionError(f"option 't_weight' must be a number > 0 (the weight of time against energy, EAMC "
                              f"eq. 4-5), got {t_weight!r}")
        if form not in ("paper", "plugin"):
            raise OptionError(f"option 'epm' must be paper or plugin, got {form!r}")
        self.t_weight = float(t_weight)
        self.form = form

    def distance(self, energy_ratio: np.ndarray | float, time_ratio: np.ndarray | float) -> Any:
        """Eq. 4's quantity for normalized energy and time (the plugin: squared, weight inside)."""
        w = self.t_weight
        if self.form == "plugin":
            return energy_ratio ** 2 + (w * time_ratio) ** 2
        return np.sqrt(energy_ratio ** 2 + w * time_ratio ** 2)

    def part_eff(self, energy_ratio: float, time_ratio: float) -> float:
        """Eq. 5's quantity (the plugin: ``E/Emin + t_weight·T/Tmin``)."""
        if self.form == "plugin":
            return energy_ratio + self.t_weight * time_ratio
        return math.sqrt(energy_ratio ** 2 + self.t_weight * time_ratio ** 2)

    def beyond(self, part_eff: float, best: float, threshold: float) -> bool:
        """Whether an entry is beyond PriorityInc-V's threshold (paper: ``part_eff > (1 + threshold)·best``;
        plugin: ``part_eff − best ≥ threshold``)."""
        if self.form == "plugin":
            return part_eff - best >= threshold
        return part_eff > (1.0 + threshold) * best

    def index(self, projection: Projection, usable: np.ndarray, rule: str) -> int:
        """The frequency index ``rule`` chooses among the ``usable`` ones (ties: the highest frequency).

        Raises:
            OverflowError: eq. 4's scores are not all finite (ratios of the projected energies or times beyond
                what a double squares: model data no measure gives).
        """
        if rule == "top":
            return int(np.flatnonzero(usable)[-1])
        if rule == "min-runtime":
            values = projection.time_s
        elif rule == "min-energy":
            values = projection.energy_j
        else:  # eq. 4
            energy, time = projection.energy_j, projection.time_s
            with np.errstate(all="ignore"):  # (checked below: inf scores would all tie)
                values = self.distance(energy / np.min(energy[usable]), time / np.min(time[usable]))
            if not np.isfinite(values[usable]).all():
                raise OverflowError("eq. 4 cannot compare its frequencies: their projected energies or times "
                                    "differ by more than a double can square")
        best = -1
        for k in np.flatnonzero(usable):
            if best < 0 or values[k] <= values[best]:
                best = int(k)
        return best

    def rank(self, choices: Sequence[tuple[str, float, float]]) -> list[tuple[str, float]]:
        """``(partition, energy, time)`` at each partition's f_opt → ``(partition, part_eff)`` best first
        (eq. 5; stable: ties keep the given order).

        Raises:
            OverflowError: a part_eff is not finite (as :meth:`index`).
        """
        e_min = min(e for _, e, _ in choices)
        t_min = min(t for _, _, t in choices)
        try:
            effs = [(name, self.part_eff(e / e_min, t / t_min)) for name, e, t in choices]
        except ArithmeticError:  # (a square beyond a double, an energy of 0 after underflow)
            effs = [(name, math.inf) for name, _, _ in choices]
        if not all(math.isfinite(eff) for _, eff in effs):
            raise OverflowError("eq. 5 cannot rank them: their energies or times at f_opt differ by more than a "
                                "double can square")
        return sorted(effs, key=lambda item: item[1])


# ------------------------------------------------------------------------------------------- platform
@dataclass(frozen=True, eq=False)
class EarPartition:
    """A partition as the scheduler sees it: hosts, node model, EAR module and pstate ↔ frequency maps."""

    name: str
    hosts: ProcSet
    node: NodeModel
    module: str | None
    pstate_of: Mapping[int, int]  # model frequency index → pstate
    index_of: Mapping[int, int]  # pstate → model frequency index

    @cached_property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """The hosts' intervals ``(inf, sup)``."""
        return tuple((itv.inf, itv.sup) for itv in self.hosts.intervals())

    def first_fit(self, free: FreeHosts, n: int) -> ProcSet | None:
        """The lowest ``n`` contiguous free hosts of the partition (first-fit inside it), or None."""
        items = intervals(free) if isinstance(free, ProcSet) else free
        for lo, hi in self.bounds:
            hosts = first_fit_within(items, lo, hi, n)
            if hosts is not None:
                return hosts
        return None

    @cached_property
    def widest_range(self) -> int:
        """The hosts of the partition's longest range of ids: :meth:`first_fit` gives no job more."""
        return max(hi - lo + 1 for lo, hi in self.bounds)

    def widest(self, free: FreeHosts) -> int:
        """The most contiguous free hosts of the partition: :meth:`first_fit` places no wider job."""
        items = intervals(free) if isinstance(free, ProcSet) else free
        return max(longest_within(items, lo, hi) for lo, hi in self.bounds)

    @property
    def top_pstate(self) -> int:
        return self.node.top_pstate

    @property
    def size(self) -> int:
        return len(self.hosts)


@dataclass(frozen=True)
class JobInfo:
    """What EAMC knows of a job (:meth:`EamcPlatform.info`).

    Attributes:
        app: its application, or None (a job the model does not describe).
        requested: the partitions it may run on, in its requested order (the first is its primary one).
        ranked: the same, best part_eff first (eq. 5; the requested order without application).
        part_eff: eq. 5's value per partition (empty without application).
    """

    app: int | None
    requested: tuple[str, ...]
    ranked: tuple[str, ...]
    part_eff: Mapping[str, float]

    @property
    def favoured(self) -> str:
        return self.ranked[0]

    @property
    def primary(self) -> str:
        return self.requested[0]


class EamcPlatform:
    """The platform's partitions, the EAR model and the EPM as one piece of EAMC sees them (each piece
    builds its own at SIMULATION_BEGINS; :meth:`info` is cached per job until :meth:`forget`).

    Args:
        by_partition: the job runs on one of its partitions (placement ``partitions``): :meth:`info` refuses a job
            wider than each of them. False for a frequency choice behind a placement that ignores partitions, which
            runs such a job on any hosts (EASY's first-fit), as ``wattsched run`` checks its inputs
            (:func:`~wattsched.workloads.eamc.check_eamc_jobs`).

    Raises:
        OptionError: hosts with and without a partition, a partition mixing node models or EAR modules, a
            module the model lacks, unknown pstate speeds.
        InputError: malformed model data (file and line).
    """

    def __init__(self, view: ClusterView, t_weight: float, form: str, model_dir: str | None, *,
                 by_partition: bool = True) -> None:
        self.epm = EnergyPrediction(t_weight, form)
        self.by_partition = by_partition
        power = view.power
        assert power is not None
        props = view.host_properties
        names = [None if not props or h >= len(props) else props[h].get(PARTITION_PROPERTY)
                 for h in range(view.nb_hosts)]
        if any(n is not None for n in names) and any(n is None for n in names):
            missing = names.index(None)
            raise OptionError(f"host {missing} has no '{PARTITION_PROPERTY}' property while others have one: every "
                              "host must belong to a partition")
        groups: dict[str, list[int]] = {}
        for h, name in enumerate(names):
            groups.setdefault("" if name is None else str(name), []).append(h)
        modules = {name: {None if not props else props[h].get(EAR_MODEL_PROPERTY) for h in hosts}
                   for name, hosts in groups.items()}
        self.model: EarModel | None = None
        if any(m != {None} for m in modules.values()) or model_dir is not None:
            self.model = load_ear_model(model_dir)
        self.partitions: dict[str, EarPartition] = {}
        for name, hosts in groups.items():
            self.partitions[name] = self._partition(name, hosts, modules[name], view)
        #: first host of each partition's intervals, for :meth:`partition_of`
        spans = sorted((itv.inf, itv.sup, p) for p in self.partitions.values() for itv in p.hosts.intervals())
        self._starts = [s[0] for s in spans]
        self._spans = spans
        self._usable: dict[tuple[int, str], np.ndarray] = {}
        self._index: dict[tuple[str, int, str], int] = {}
        self._rankings: dict[tuple[int, tuple[str, ...]], tuple[tuple[str, ...], Mapping[str, float]]] = {}
        self._info: dict[str, JobInfo] = {}

    def _partition(self, name: str, hosts: list[int], modules: set, view: ClusterView) -> EarPartition:
        assert view.power is not None
        label = f"partition '{name}'" if name else "the platform"
        nodes = {id(view.power.host(h)): view.power.host(h) for h in hosts}
        if len(nodes) != 1:
            raise OptionError(f"{label}: its hosts have different pstates or powers (one node model per partition)")
        node = next(iter(nodes.values()))
        if len(modules) != 1:
            raise OptionError(f"{label}: its hosts name different '{EAR_MODEL_PROPERTY}' modules {sorted(map(str, modules))}")
        module = next(iter(modules))
        pstate_of: dict[int, int] = {}
        if module is not None:
            assert self.model is not None
            if module not in self.model.modules:
                raise OptionError(f"{label}: property '{EAR_MODEL_PROPERTY}' names module '{module}', which EAR model "
                                  f"{self.model.source} lacks (modules: {', '.join(self.model.modules)})")
            if not node.speeds_known:
                raise OptionError(f"{label}: the EAR model maps pstates to frequencies by their speeds, and the "
                                  "hosts give none (add a 'speed_per_state' property, as 'wattsched platform' does)")
            ear_module = self.model.modules[module]
            for pstate in node.computation_pstates:
                k = ear_module.frequency_index(node.speeds_flops[pstate] / 1e9)
                if k is not None and k not in pstate_of:
                    pstate_of[k] = pstate
            if node.top_pstate not in pstate_of.values():
                raise OptionError(f"{label}: the speed of its top pstate ({node.speeds_flops[node.top_pstate]:g} flop/s)"
                                  f" is no frequency of EAR module '{module}' (speed = frequency, e.g. 2700.0Mf for "
                                  "2.7 GHz)")
        index_of = {p: k for k, p in pstate_of.items()}
        return EarPartition(name, ProcSet(*hosts), node, None if module is None else str(module),
                            MappingProxyType(pstate_of), MappingProxyType(index_of))

    # ------------------------------------------------------------------ lookups
    def partition_of(self, host: int) -> EarPartition:
        k = bisect.bisect_right(self._starts, host) - 1
        return self._spans[k][2]

    def usable(self, app: int, partition: EarPartition) -> np.ndarray:
        """The frequency indexes of ``partition``'s module where ``app`` has a projection and the platform a
        pstate."""
        key = (app, partition.name)
        mask = self._usable.get(key)
        if mask is None:
            assert self.model is not None and partition.module is not None
            projection = self.model.projection(app, partition.module)
            mask = projection.available.copy()
            for k in range(len(mask)):
                if k not in partition.pstate_of:
                    mask[k] = False
            if not mask.any():
                raise OptionError(f"partition '{partition.name}': application {app} has no frequency that both the EAR "
                                  "model and the platform have")
            self._usable[key] = mask
        return mask

    def index(self, rule: str, app: int, partition: EarPartition) -> int:
        """The model frequency index of ``rule`` for ``app`` on ``partition`` (cached)."""
        key = (rule, app, partition.name)
        k = self._index.get(key)
        if k is None:
            assert self.model is not None and partition.module is not None
            try:
                k = self.epm.index(self.model.projection(app, partition.module), self.usable(app, partition), rule)
            except OverflowError as exc:
                raise self._beyond(app, f"on partition '{partition.name}'", exc) from None
            self._index[key] = k
        return k

    def pstate(self, rule: str, job: QueuedJob, partition: EarPartition) -> int:
        """The pstate ``rule`` gives ``job`` on ``partition`` (the top one for a job the model does not describe)."""
        info = self.info(job)
        if info.app is None or partition.module is None:
            return partition.top_pstate
        return partition.pstate_of[self.index(rule, info.app, partition)]

    def _ranking(self, app: int, names: tuple[str, ...]) -> tuple[tuple[str, ...], Mapping[str, float]]:
        key = (app, names)
        cached = self._rankings.get(key)
        if cached is None:
            assert self.model is not None
            choices = []
            for name in names:
                part = self.partitions[name]
                assert part.module is not None
                k = self.index("eamc", app, part)
                projection = self.model.projection(app, part.module)
                choices.append((name, float(projection.energy_j[k]), float(projection.time_s[k])))
            try:
                ranked = self.epm.rank(choices)
            except OverflowError as exc:
                raise self._beyond(app, f"on partitions {', '.join(names)}", exc) from None
            cached = (tuple(n for n, _ in ranked), MappingProxyType(dict(ranked)))
            self._rankings[key] = cached
        return cached

    def _beyond(self, app: int, where: str, exc: OverflowError) -> InputError:
        """The error of EPM scores that are not finite for ``app`` (:meth:`EnergyPrediction.index`, ``rank``),
        naming the model data."""
        assert self.model is not None
        return InputError(self.model.source, f"application {app}", f"{where}: {exc} (check its signatures in "
                          "'apps' and the modules' coefficients)")

    def info(self, job: QueuedJob) -> JobInfo:
        """The job's application and partitions, validated, with the EPM's ranking (cached by job id).

        Raises:
            InputError: an ``app`` the model does not know, a ``partitions`` entry the platform lacks, a job
                no requested partition can describe or (``by_partition``) hold.
        """
        cached = self._info.get(job.id)
        if cached is not None:
            return cached
        extra = job.extra
        where = f"job '{job.id}'"
        app, given = check_job_fields(extra, _SOURCE, where, None if self.model is None else self.model.apps,
                                      [p for p in self.partitions if p])
        if given is not None:
            requested = given
        else:
            requested = tuple(self.partitions)
        if app is not None:
            model = self.model
            assert model is not None
            described = tuple(n for n in requested if self.partitions[n].module is not None
                              and model.has(app, str(self.partitions[n].module)))
            if not described:
                raise InputError(_SOURCE, f"{where}.{APP_FIELD}", f"the EAR model has no data for application {app} "
                                 f"on its partitions ({', '.join(requested)})")
            requested = described
        if self.by_partition:  # first-fit inside a partition: one interval of its hosts (hunt 48: a partition of two
            # ranges of ids took a job as wide as both, which then waited for ever)
            fits = tuple(n for n in requested if self.partitions[n].widest_range >= job.res)
        else:
            fits = tuple(n for n in requested if self.partitions[n].size >= job.res)
        if not fits and not self.by_partition:  # a placement that ignores partitions runs it on any hosts
            fits = requested
        if not fits:
            parts = self.partitions
            raise InputError(_SOURCE, f"{where}.res", too_wide_for_partitions(
                job.res, requested, {n: parts[n].size for n in requested},
                {n: parts[n].widest_range for n in requested}))
        if app is None:
            info = JobInfo(None, fits, fits, MappingProxyType({}))
        else:
            ranked, effs = self._ranking(app, fits)
            info = JobInfo(app, fits, ranked, effs)
        self._info[job.id] = info
        return info

    def forget(self, job_id: str) -> None:
        self._info.pop(job_id, None)


def _job_id(job: RunningJob) -> str:
    """The id of the original job of a running one (a replacement's ``job`` is the original)."""
    return job.job.id if job.job is not None else job.id


def check_ear_model_name(ear_model: str) -> None:
    """Refuse an ``ear_model`` that names no folder: empty or blank (``""`` was read as the current folder: "modules:
    missing"), or a name the system refuses (too long: an OSError traceback; a NUL).

    Raises:
        OptionError: naming the option.
    """
    if not ear_model.strip():
        raise OptionError("option 'ear_model' is empty: give a folder of EAR model data, or leave it out (or null) "
                          "for the shipped one")
    problem = file_name_problem(ear_model)
    if problem is not None:
        raise OptionError(f"option 'ear_model' {quoted_cut(ear_model)}: {problem}")


class _EarPiece(Piece):
    """The options and the :class:`EamcPlatform` every EAMC piece reads (t_weight, epm, ear_model)."""

    options: ClassVar[tuple[Option, ...]] = EAR_OPTIONS
    reference = "EAMC paper §4, eq. 4-5"
    #: the piece places jobs on their partitions, or serves a placement that does (:class:`EamcPlatform`'s argument)
    by_partition: ClassVar[bool] = True

    def __init__(self, t_weight: float = 1.0, epm: str = "paper", ear_model: str | None = None) -> None:
        EnergyPrediction(t_weight, epm)  # checks the options now, before any run
        if ear_model is not None:
            check_ear_model_name(ear_model)
            load_ear_model(ear_model)  # a malformed model file is reported before the run
        self._settings = (t_weight, epm, ear_model)
        self._platform: EamcPlatform | None = None
        self._platform_warnings: list[tuple[Any, ...]] = []

    @property
    def platform(self) -> EamcPlatform:
        if self._platform is None:
            raise RuntimeError(f"{self.name}: no SIMULATION_BEGINS yet")
        return self._platform

    def on_platform(self, view: ClusterView) -> None:
        t_weight, epm, ear_model = self._settings
        self._platform = EamcPlatform(view, t_weight, epm, ear_model, by_partition=self.by_partition)
        self._platform_warnings = []

    def warn_of_platform(self, *args: Any) -> None:
        """A warning about the platform (``logger.warning``'s arguments), said at the next message: a piece of a later
        slot may still refuse the platform, and its error is then the run's one line."""
        self._platform_warnings.append(args)

    def on_clock(self, now_s: float, view: ClusterView) -> None:
        if self._platform_warnings:  # every piece took the platform
            for args in self._platform_warnings:
                logger.warning(*args)
            self._platform_warnings.clear()

    def on_started(self, job: RunningJob, view: ClusterView) -> None:
        self._forget(_job_id(job))

    def on_completed(self, job: RunningJob, state: JobState, view: ClusterView) -> None:
        self._forget(_job_id(job))

    def _forget(self, job_id: str) -> None:
        self.platform.forget(job_id)


# ------------------------------------------------------------------------------------------- orders
class _EntryOrder(_EarPiece, QueueOrder):
    """Job-partition entries (module docstring): each job's entries with their class; entries are sorted by
    class, then by job in FCFS order (submission time, then arrival), then in the job's entry order. The keys
    never change while a job waits, so the entries are kept sorted as jobs arrive and start (a pass copies
    the list), and by width per partition (what :meth:`EntryQueue.fitting` reads); :meth:`sort` rebuilds them
    if the queue it is given holds other jobs."""

    entries = True
    keys_fixed = True

    def __init__(self, t_weight: float = 1.0, epm: str = "paper", ear_model: str | None = None) -> None:
        super().__init__(t_weight, epm, ear_model)
        self._entries: dict[str, list[QueuedJob]] = {}
        self._keys: dict[tuple[str, str | None], tuple] = {}
        self._sorted: SortedKeyList = SortedKeyList(key=self._key)
        #: per partition, its entries by width then order (:meth:`_fitting`)
        self._by_width: dict[str | None, SortedKeyList] = {}
        self._arrivals = 0

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        """``(class, partition)`` of each entry of a job, in the job's entry order."""
        raise NotImplementedError

    def _key(self, entry: QueuedJob) -> tuple:
        return self._keys[entry.id, entry.partition]

    def _width_key(self, entry: QueuedJob) -> tuple:
        return entry.res, self._keys[entry.id, entry.partition]

    def on_platform(self, view: ClusterView) -> None:
        super().on_platform(view)
        self._entries.clear()
        self._keys.clear()
        self._sorted.clear()
        self._by_width.clear()

    def on_submitted(self, job: QueuedJob, view: ClusterView) -> None:
        self._add(job)

    def _add(self, job: QueuedJob) -> None:
        if job.id in self._entries:
            return
        arrival = self._arrivals
        self._arrivals += 1
        entries = []
        for position, (cls, partition) in enumerate(self.classes(self.platform.info(job))):
            entry = QueuedJob(job.id, job.res, job.walltime_s, job.subtime_s, job.profile, job.user, job.runtime,
                              job.extra, partition)
            self._keys[job.id, partition] = (cls, job.subtime_s, arrival, position)
            entries.append(entry)
        self._entries[job.id] = entries
        self._sorted.update(entries)
        for entry in entries:
            by_width = self._by_width.get(entry.partition)
            if by_width is None:
                by_width = self._by_width[entry.partition] = SortedKeyList(key=self._width_key)
            by_width.add(entry)

    def _forget(self, job_id: str) -> None:
        super()._forget(job_id)
        entries = self._entries.pop(job_id, None)
        if entries is not None:
            for entry in entries:
                self._sorted.remove(entry)
                self._by_width[entry.partition].remove(entry)
                del self._keys[job_id, entry.partition]

    def sort(self, jobs: Any, view: ClusterView) -> list[QueuedJob]:
        if len(jobs) != len(self._entries):  # a job left the queue unannounced: follow the queue
            waiting = {job.id for job in jobs}
            for job_id in [j for j in self._entries if j not in waiting]:
                self._forget(job_id)
            for job in jobs:
                self._add(job)
        return EntryQueue(self._sorted, self._fitting, self._entries)

    def _fitting(self, widest: Callable[[object], int], head: QueuedJob) -> list[QueuedJob]:
        """:meth:`EntryQueue.fitting`: per partition, the entries up to its widest fit (one bisect), those after the
        head, merged in queue order."""
        after = self._key(head)
        found: list[QueuedJob] = []
        for partition, by_width in self._by_width.items():
            if not by_width:
                continue
            count = by_width.bisect_key_left((widest(partition) + 1,))  # (a width and an order key: the key's tuple)
            if count:
                found.extend(entry for entry in by_width.islice(0, count) if self._key(entry) > after)
        if len(found) > 1:
            found.sort(key=self._key)
        return found


@register
class Reorder(_EntryOrder):
    """EAMC-Reorder (§4.2, figure 1): FCFS over jobs, each job's entries best partition first."""

    name = "eamc-reorder"
    description = "EAMC-Reorder: jobs FCFS, each job's partition entries best part_eff first (eq. 5)"
    reference = "EAMC paper §4.2, figure 1"

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        return [(0, p) for p in info.ranked]


@register
class PriorityInc(_EntryOrder):
    """EAMC-PriorityInc (§4.2, figure 2): all best entries (FCFS), then all second-best entries, …"""

    name = "eamc-priority-inc"
    description = "EAMC-PriorityInc: every job's best partition entry first (FCFS), then the second choices, ..."
    reference = "EAMC paper §4.2, figure 2"

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        return list(enumerate(info.ranked))


@register
class PriorityIncV(_EntryOrder):
    """EAMC-PriorityInc-V (§4.2): PriorityInc, with the entries beyond the threshold last."""

    name = "eamc-priority-inc-v"
    description = "EAMC-PriorityInc-V: PriorityInc, entries whose part_eff exceeds the best by the threshold last"
    reference = "EAMC paper §4.2 (threshold 35 %)"
    options = (*EAR_OPTIONS, THRESHOLD)

    def __init__(self, t_weight: float = 1.0, epm: str = "paper", ear_model: str | None = None,
                 threshold: float = 0.35) -> None:
        super().__init__(t_weight, epm, ear_model)
        self.threshold = threshold

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        if not info.part_eff:
            return list(enumerate(info.ranked))
        best = info.part_eff[info.ranked[0]]
        last = len(info.ranked)
        epm = self.platform.epm
        return [(last if rank and epm.beyond(info.part_eff[p], best, self.threshold) else rank, p)
                for rank, p in enumerate(info.ranked)]


@register
class RequestedPartitions(_EntryOrder):
    """Min runtime's and Min energy's queue (§5): FCFS, each job's entries in its requested order."""

    name = "requested-partitions"
    description = "FCFS, each job's partition entries in its requested order, no favoured partition"
    reference = "EAMC paper §5 (Min runtime, Min energy)"

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        return [(0, p) for p in info.requested]


@register
class FavouredPartition(_EntryOrder):
    """Base Slurm's queue (§5): FCFS, each job submitted to its favoured (best part_eff) partition only."""

    name = "favoured-partition"
    description = "FCFS, each job on its favoured partition only (best part_eff, eq. 5)"
    reference = "EAMC paper §5 (Base Slurm)"

    def classes(self, info: JobInfo) -> list[tuple[int, str]]:
        return [(0, info.favoured)]


# ---------------------------------------------------------------------------------------- placement
def metadata_text(app: int, partition: str, ghz: float, node_w: float, favoured: str) -> str:
    """The SET_JOB_METADATA text of a job placed by EAMC (read by :func:`wattsched.analysis.eamc.parse_metadata`)."""
    return f"app={app} partition={partition} ghz={ghz:g} node_w={node_w!r} favoured={favoured}"


@register
class PartitionPlacement(_EarPiece, Placement):
    """Each job inside one partition, run for the EAR model's time there (module docstring)."""

    name = "partitions"
    description = ("a job inside one partition (its entry's, else its best-ranked where it fits), run for the EAR "
                   "model's time at its frequency there (dynamic jobs)")
    reference = "EAMC paper §3.3 (time coefficient), §4.2"
    partitioned = True
    contiguous = True
    keeps_reservation = True  # first-fit inside the partition

    def needs_dynamic_jobs(self) -> bool:
        return True  # every job is re-registered at its partition's walltime and profile

    def __init__(self, t_weight: float = 1.0, epm: str = "paper", ear_model: str | None = None) -> None:
        super().__init__(t_weight, epm, ear_model)
        #: job id → (partition, pstate) → (walltime, profile, metadata)
        self._completed: dict[str, dict[tuple[str, int], tuple[float | None, dict, str]]] = {}
        self._reference: dict[str, float] = {}

    def on_platform(self, view: ClusterView) -> None:
        """The partitions; refuses a Batsim without dynamic jobs when a partition has an EAR model.

        Raises:
            OptionError: see :class:`EamcPlatform`, or dynamic jobs disabled.
        """
        super().on_platform(view)
        if not view.dynamic_jobs and any(p.module is not None for p in self.platform.partitions.values()):
            raise OptionError("placement 'partitions' re-registers every job with its run time on the partition and "
                              f"frequency chosen (EAR model): {DYNAMIC_JOBS_ADVICE}")
        if set(self.platform.partitions) == {""}:  # (it ran as EASY with a frequency choice, without a word)
            self.warn_of_platform("placement 'partitions': no host of the platform has a '%s' property: the whole "
                                  "machine is one partition ('wattsched platform --node eamc' writes a platform with "
                                  "partitions)", PARTITION_PROPERTY)
        self._warned_app = False

    def on_submitted(self, job: QueuedJob, view: ClusterView) -> None:
        if not self._warned_app and APP_FIELD not in job.extra:  # (said once a run)
            self._warned_app = True
            logger.warning("job %s has no '%s' field (the first such job): EAMC runs a job without application at "
                           "the top frequency, on its partitions in their order, unranked", job.id, APP_FIELD)

    def _forget(self, job_id: str) -> None:
        super()._forget(job_id)
        self._reference.pop(job_id, None)
        self._completed.pop(job_id, None)

    def candidates(self, job: QueuedJob) -> tuple[str, ...]:
        return (job.partition,) if job.partition is not None else self.platform.info(job).ranked

    def fit_key(self, job: QueuedJob) -> object:
        return job.partition if job.partition is not None else self.platform.info(job).ranked

    def widest_fit(self, key: object, free: ProcSet) -> int:
        """The most contiguous free hosts of the partition ``key`` (an entry's), or the most of any of the partitions
        ``key`` (a job's ranked partitions: :meth:`fit_key`; it goes to the first where it fits)."""
        partitions = self.platform.partitions
        if isinstance(key, str):
            return partitions[key].widest(free)
        return max(partitions[name].widest(free) for name in key)  # type: ignore[attr-defined]

    def allocate(self, job: QueuedJob, free: FreeHosts, view: ClusterView) -> ProcSet | None:
        partitions = self.platform.partitions
        for name in self.candidates(job):
            hosts = partitions[name].first_fit(free, job.res)
            if hosts is not None:
                return hosts
        return None

    def reserve(self, job: QueuedJob, free_now: ProcSet, free_then: FreeHosts, view: ClusterView) -> ProcSet | None:
        return self.allocate(job, free_then, view)

    def complete(self, job: QueuedJob, assignment: Assignment, view: ClusterView) -> Assignment:
        """The assignment with its partition and, for a job with an application on a partition with an EAR
        module, the model's walltime, a profile of the model's run time at the pstate's speed, and the
        metadata (module docstring).

        Raises:
            OptionError: the pstate's frequency has no EAR data for the application (a frequency choice that
                does not know the model), or the job's profile gives no run time.
        """
        platform = self.platform
        hosts = assignment.hosts
        part = platform.partitions[job.partition] if job.partition is not None else platform.partition_of(hosts.min)
        info = platform.info(job)
        if info.app is None or part.module is None:
            return Assignment(hosts, assignment.pstate, assignment.walltime_s, part.name or None)
        pstate = assignment.pstate if assignment.pstate is not None else view.pstates[hosts.min]
        cache = self._completed.setdefault(job.id, {})
        done = cache.get((part.name, pstate))
        if done is None:
            done = cache[part.name, pstate] = self._complete(job, info, part, pstate, view)
        walltime, profile, metadata = done
        return Assignment(hosts, assignment.pstate, walltime, part.name, profile, metadata)

    def _complete(self, job: QueuedJob, info: JobInfo, part: EarPartition, pstate: int, view: ClusterView
                  ) -> tuple[float | None, dict, str]:
        platform = self.platform
        model = platform.model
        app = info.app
        assert model is not None and app is not None and part.module is not None
        k = part.index_of.get(pstate)
        if k is None or not platform.usable(app, part)[k]:
            raise OptionError(f"job {job.id} (application {app}) on partition '{part.name}' at pstate {pstate}: the EAR "
                              "model has no data for this frequency (choose the frequency with 'eamc', 'min-runtime', "
                              "'min-energy' or 'top')")
        primary = platform.partitions[info.primary]
        assert primary.module is not None
        top = model.projection(app, primary.module).time_s[primary.index_of[primary.top_pstate]]
        ratio = float(model.projection(app, part.module).time_s[k]) / float(top)
        reference = self._reference_run_s(job, primary, view)
        run_s = reference * ratio
        walltime = job.walltime_s
        if walltime is not None:
            scaled = math.ceil(walltime * ratio)
            if walltime >= reference and scaled < run_s + 1e-3:  # never killed by a rounding of the run time
                scaled = math.ceil(run_s + 1e-3)
            walltime = float(scaled)
        profile = {"type": "parallel_homogeneous", "cpu": run_s * part.node.speeds_flops[pstate], "com": 0.0}
        projection = model.projection(app, part.module)
        metadata = metadata_text(app, part.name, float(projection.frequencies_ghz[k]), float(projection.power_w[k]),
                                 info.favoured)
        return walltime, profile, metadata

    def _reference_run_s(self, job: QueuedJob, primary: EarPartition, view: ClusterView) -> float:
        """The job's run time at the top frequency of its primary partition, from its profile."""
        cached = self._reference.get(job.id)
        if cached is not None:
            return cached
        workload = job.id.partition("!")[0]
        profile: Mapping[str, Any] = view.profiles.get(workload, {}).get(job.profile) or {}
        kind = profile.get("type")
        run_s = math.nan
        try:
            if kind == "delay":
                run_s = float(profile["delay"])
            elif kind == "parallel_homogeneous":
                run_s = float(profile["cpu"]) / primary.node.speeds_flops[primary.top_pstate]
        except (KeyError, TypeError, ValueError):
            pass
        if not (math.isfinite(run_s) and run_s >= 0):
            raise OptionError(f"job {job.id}: profile '{job.profile}' gives no run time; EAMC needs a 'delay' or "
                              "'parallel_homogeneous' profile (the run time at the top frequency of the job's first "
                              f"partition), got {repr(kind) if profile else 'no such profile'}")
        self._reference[job.id] = run_s
        return run_s


# ---------------------------------------------------------------------------------------- frequency
class _EarFrequency(_EarPiece, FrequencyChoice):
    rule: ClassVar[str] = "top"
    per_partition = True  # the rule's frequency of the job's application on its partition (EamcPlatform.pstate)
    #: behind a placement that ignores partitions a job wider than each of its partitions runs on any hosts (the
    #: placement ``partitions`` refuses it itself)
    by_partition = False

    def needs_dynamic_jobs(self) -> bool:
        return self.rule != "top"  # a job below the top frequency runs longer than its workload walltime

    def on_platform(self, view: ClusterView) -> None:
        """The partitions; refuses a Batsim without dynamic jobs when a partition has an EAR model (a job slowed
        down would keep its workload walltime and be killed at it, whatever the placement).

        A platform whose hosts name no EAR module gives the rule nothing to choose from: every job runs at the top
        frequency, which a warning says (the placement ``partitions`` warns likewise of a platform without partitions).

        Raises:
            OptionError: see :class:`EamcPlatform`, or dynamic jobs disabled.
        """
        super().on_platform(view)
        if all(p.module is None for p in self.platform.partitions.values()):
            self.warn_of_platform("frequency '%s': no host of the platform has an '%s' property (the EAR module of "
                                  "its partition): every job runs at the top frequency ('wattsched platform --node "
                                  "eamc' writes a platform with EAR modules)", self.name, EAR_MODEL_PROPERTY)
        if (self.needs_dynamic_jobs() and not view.dynamic_jobs
                and any(p.module is not None for p in self.platform.partitions.values())):
            raise OptionError(f"frequency '{self.name}' lowers jobs' frequencies (EAR model), so Batsim must accept "
                              "dynamic jobs (a slowed job is re-registered with its longer walltime instead of being "
                              f"killed): {DYNAMIC_JOBS_ADVICE}")

    def pstate_for(self, job: QueuedJob, hosts: ProcSet, view: ClusterView) -> int | None:
        """The rule's frequency on the job's partition. A placement that ignores partitions may give a job hosts of
        several (they are spans of host ids: the first and the last host tell): no frequency of one partition's
        model means the same pstate on another, so the job runs at the top frequency (it got the pstate number of
        its first host's partition on every host: another frequency, or another pstate kind, on the others)."""
        platform = self.platform
        if job.partition is not None:
            part = platform.partitions[job.partition]
        else:
            part = platform.partition_of(hosts.min)
            if platform.partition_of(hosts.max) is not part:
                platform.info(job)  # (its fields checked, as any job's)
                return top_pstate_of(hosts, view)
        return platform.pstate(self.rule, job, part)


@register
class EamcFrequency(_EarFrequency):
    """f_opt of eq. 4 on the job's partition."""

    name = "eamc"
    description = "EAMC's f_opt: the frequency of the least weighted distance of normalized energy and time (eq. 4)"
    reference = "EAMC paper §4.1, eq. 4"
    rule = "eamc"


@register
class MinRuntimeFrequency(_EarFrequency):
    """Min runtime (§5, after Auweter et al.): the frequency of the least predicted time."""

    name = "min-runtime"
    description = "the frequency of the least predicted run time on the job's partition (EAR model)"
    reference = "EAMC paper §5 (Min runtime)"
    rule = "min-runtime"


@register
class MinEnergyFrequency(_EarFrequency):
    """Min energy (§5, after Auweter et al.): the frequency of the least predicted energy."""

    name = "min-energy"
    description = "the frequency of the least predicted energy on the job's partition (EAR model)"
    reference = "EAMC paper §5 (Min energy)"
    rule = "min-energy"
