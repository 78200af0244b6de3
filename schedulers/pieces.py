"""Policy pieces: the common base of the six slots, the events every piece hears, and the registry.

A scheduler (:class:`~wattsched.schedulers.core.PolicyScheduler`) is one piece per **slot**:

=============  ==========================================  ===============================================
slot           base class                                  decides
=============  ==========================================  ===============================================
``order``      :class:`~.order.QueueOrder`                 which waiting job comes first
``backfill``   :class:`~.backfill.Backfilling`             which waiting jobs start now
``placement``  :class:`~.placement.Placement`              which hosts a job gets
``admission``  :class:`~.admission.AdmissionConstraint`    whether a job may start (budget, powercap)
``power``      :class:`~.power.PowerManager`               which hosts to switch off or on
``frequency``  :class:`~.frequency.FrequencyChoice`        the pstate a job runs at
=============  ==========================================  ===============================================

Every piece derives from :class:`Piece` and hears the same events, through no-op hooks it overrides as
needed (:meth:`Piece.on_started` to charge usage, :meth:`Piece.on_energy` to correct a counter, ...). The
core calls them for every piece in the slot order above, after updating the view.

A piece declares its slot, its ``name`` (the value that selects it, e.g. ``"energy-bud"``), its
options (:class:`~.options.Option`) and a constructor taking them as keywords; ``@register`` makes it available
to presets, to ``-s compose`` and to ``wattsched schedulers``: registering a new piece is that one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Any, ClassVar, Mapping, TypeVar

from procset import ProcSet

from wattsched.schedulers.options import Option, Options

if TYPE_CHECKING:
    from wattsched.schedulers.state import ClusterView, JobState, QueuedJob, RunningJob

#: The slots, in the order the core composes them and calls their hooks.
SLOTS: tuple[str, ...] = ("order", "backfill", "placement", "admission", "power", "frequency")

#: How a piece that needs Batsim's dynamic jobs (:meth:`Piece.needs_dynamic_jobs`) tells a run without them what to do.
DYNAMIC_JOBS_ADVICE = ("run Batsim with --enable-dynamic-jobs --acknowledge-dynamic-jobs ('wattsched run' enables them "
                       "itself, 'wattsched run --connect' and Docker need both flags given)")


def unvouched_if_overridden(cls: type, flag: str, methods: tuple[str, ...]) -> None:
    """For a slot's ``__init_subclass__``: a class that overrides one of ``methods`` without declaring ``flag`` in its
    own body gets it False. Such a flag vouches for how those methods behave (``Placement.keeps_reservation``,
    ``FrequencyChoice.per_partition``, ``QueueOrder.keys_fixed``), so a subclass that changes them, in a user's
    scheduler file say, must say it again rather than inherit it."""
    if flag not in vars(cls) and any(method in vars(cls) for method in methods):
        setattr(cls, flag, False)


class Piece:
    """One value of one slot. Every hook is a no-op; a piece overrides those it needs.

    Class attributes:
        slot: the slot (one of :data:`SLOTS`), set by each slot's base class.
        name: the value that selects the piece in options (``"fcfs"``, ``"easy"``, ``"energy-bud"``).
        description: one line for ``wattsched schedulers``.
        reference: the paper, section and equation or algorithm it implements.
        options: the options the constructor takes as keywords.
    """

    slot: ClassVar[str] = ""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    options: ClassVar[tuple[Option, ...]] = ()
    #: the piece re-registers jobs (Batsim's dynamic jobs, ``--enable-dynamic-jobs``): ``wattsched run`` enables them

    @classmethod
    def from_options(cls, values: Options) -> "Piece":
        """A fresh piece from validated option values (every option of the scheduler; the piece takes its
        own). Pieces with state are built fresh for every run."""
        return cls(**{o.name: values[o.name] for o in cls.options if o.name in values})

    @classmethod
    def check_given(cls, values: Options, given: AbstractSet[str]) -> None:
        """Checks that need to know which options the user gave (``given``, their names), not only the values
        (``values``: validated, defaults filled in, as :meth:`from_options` takes them): two options that say one
        thing in two places (ESC's ``upper_wait_s`` and ``groups.default.upper_wait_s``). Called when the options
        are validated, before any piece is built; none by default.

        Raises:
            OptionError: options the piece refuses together.
        """

    def needs_dynamic_jobs(self) -> bool:
        """True when, with these options, the piece may start jobs with another walltime or profile than their
        workload entry's (a frequency choice that slows jobs down): the run needs Batsim's dynamic jobs
        (``--enable-dynamic-jobs --acknowledge-dynamic-jobs``), which ``wattsched run`` then enables."""
        return False

    # ------------------------------------------------------------------ events (all no-ops)
    def on_platform(self, view: "ClusterView") -> None:
        """SIMULATION_BEGINS: ``view.power`` and ``view.host_properties`` describe the platform. Raise
        :class:`~wattsched.base.errors.OptionError` when it lacks what the options need."""

    def on_clock(self, now_s: float, view: "ClusterView") -> None:
        """The clock moves to ``now_s`` (before the message's events): ``view`` still describes the
        elapsed interval."""

    def on_submitted(self, job: "QueuedJob", view: "ClusterView") -> None:
        """A job arrived (after the core queued it; jobs it rejects at once are not told)."""

    def on_started(self, job: "RunningJob", view: "ClusterView") -> None:
        """A job started now on ``job.alloc`` at ``job.pstate`` (after the core's pass applied it)."""

    def on_completed(self, job: "RunningJob", state: "JobState", view: "ClusterView") -> None:
        """A running job ended in ``state`` (completed, failed, walltime reached or killed); its hosts are
        free again in ``view``."""

    def on_hosts_changed(self, hosts: ProcSet, pstate: int, view: "ClusterView") -> None:
        """Batsim applied ``pstate`` to ``hosts`` (a DVFS change done, or a switch off or on ended)."""

    def on_energy(self, energy_j: float, view: "ClusterView") -> None:
        """Batsim answered a QUERY: ``energy_j`` consumed since the start (also in ``view.energy_j``)."""

    def on_call(self, view: "ClusterView") -> None:
        """A REQUESTED_CALL arrived (calls carry no id: whoever asked must recognise its own by time)."""

    def on_no_more_jobs(self, view: "ClusterView") -> None:
        """No more static job will be submitted (NOTIFY no_more_static_job_to_submit)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


P = TypeVar("P", bound=type[Piece])

#: Registered pieces: slot → name → class.
REGISTRY: dict[str, dict[str, type[Piece]]] = {slot: {} for slot in SLOTS}


def register(cls: P) -> P:
    """Class decorator: make ``cls`` selectable by its ``name`` in its slot.

    Raises:
        ValueError: the slot is unknown or the name is taken (a programming error, found at import).
    """
    if cls.slot not in REGISTRY:
        raise ValueError(f"{cls.__name__}: unknown slot {cls.slot!r} (slots: {', '.join(SLOTS)})")
    if not cls.name or cls.name in REGISTRY[cls.slot]:
        raise ValueError(f"{cls.__name__}: name {cls.name!r} is empty or taken in slot {cls.slot!r}")
    REGISTRY[cls.slot][cls.name] = cls
    return cls


def build_piece(slot: str, name: str, values: Mapping[str, Any]) -> Piece:
    """A fresh piece of ``slot`` selected by ``name``, built from validated option ``values``."""
    return REGISTRY[slot][name].from_options(values)
