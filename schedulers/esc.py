"""EnergySaving Cluster (ESC): threshold-driven node on/off per user group (slot ``power``).

ESC paper (Dolz, Fernández, Iserte, Mayo, Quintana-Ortí, "A flexible simulator to evaluate a power saving
system for HPC clusters", GCM'11), §2.5: an *energy saving scheduler* runs periodically beside the queue
system and switches nodes on or off when one of its conditions holds. :class:`EnergySavingCluster` is that
scheduler as a :class:`~wattsched.schedulers.power.PowerManager`; the preset ``esc`` puts it behind FCFS on
any free nodes, the paper's SGE-like queue (§2.4), and ``-s compose -o '{"power": "esc", ...}'`` behind
any other piece (EASY, an energy budget, another order).

**The pass** (§2.6 "Energy saving scheduler starts ... according to the energy saving scheduling
periodical time"): at ``t = k × period_s``, in the first Batsim message at that time. Between two passes
nothing is switched. A pass at which no rule can act is not asked for (no CALL_ME_LATER): after each
message the next pass asked for is the first at which a rule may act on the state the message left
(rules 1 and 3 only change with events; a group's mean wait and a node's idle time grow with time, so the
passes where they cross their thresholds are computed; with an admission constraint that answers
``can_prepare``, every pass is asked for while a job waits). This is the schedule of a pass every period,
except when an event happens exactly at the time of a pass that was not asked for (the pass then sees that
event; a requested call would have come first, behaviour 7); ``tests/test_esc_properties.py`` checks it.
Once the work is done (NOTIFY ``no_more_static_job_to_submit``, empty queue, nothing running) no pass is
asked for, or Batsim would never end.

**Switch-on rules** (§2.5.1), all evaluated at a pass; the nodes switched on are asleep nodes in hostname
order ("an ordered policy where the list of candidate nodes is sorted in alphabetical order using the name
of the node"; Batsim numbers hosts in byte order of their names, behaviour 1, so this is id order):

1. *"There are not enough appropriate active resources to run a job ... all the nodes that contain the
   appropriate type of resource are powered down"*: the widest queued job cannot be placed on the nodes
   that are on (idle, computing or booting) even if all were free. Enough asleep nodes are booted for it
   (the fewest in hostname order; with a contiguous placement, the placement's choice among on and asleep
   nodes). *Our reading*: a job that waits for nodes that are busy does not trigger this rule (its nodes
   are not "powered down"); the wait thresholds below are what boot nodes for it (the broader reading,
   "boot whenever the idle nodes are too few", would be the energy-budget paper's opportunistic shutdown).
2. *"The average waiting time of an enqueued job exceeds a given threshold"* of its user's group: for a
   group whose queued jobs have waited ``upper_wait_s`` on average (mean of ``now − subtime``), enough
   nodes are booted for the queue to start, in scheduling order, every job up to and including the
   group's first one ("turns on nodes which contain resources of the same type as those usually requested
   by the same user": nodes are of one type here): Σ res of those jobs − idle nodes − booting nodes.
3. *"The number of enqueued jobs for a user exceeds the maximum value for its group"*: for a user with more
   than ``max_queued`` queued jobs, likewise up to and including the user's job that brings the user back
   to ``max_queued`` queued jobs.

A pass boots the largest of the three counts (each covers the smaller ones), and never more than the
asleep nodes: a node still switching off is booted at a later pass, after its RESOURCE_STATE_CHANGED (a
switching node is never switched again). ``min_on`` nodes on are kept: they are booted when fewer are on.

**Switch-off rules** (§2.5.2), only in a pass that boots nothing:

4. *"The time that a node has been idle exceeds a threshold"*: every node idle for longer than ``idle_s``
   (strictly: idle exactly ``idle_s`` stays on) is switched off, least recently used first.
5. *"The average waiting time of a user's job is lower than the threshold assigned to its group"*: for
   each group whose mean wait of queued jobs is below ``lower_wait_s`` (0 when none of its jobs waits),
   one more idle node is switched off, least recently used first ("choosing one based on a
   least-recently-used policy").

A node's last use is the end of its last job or of its boot (t = 0 for a node never used). Neither rule
leaves fewer nodes on (idle, computing, booting) than ``min_on`` or than the widest queued job needs, nor
switches off a node the first queued job would be placed on if every node that is on were free (*ours*:
otherwise rule 1 would boot them again at the next pass, and with a contiguous placement and a short
``idle_s`` the first job could wait for ever while nodes are switched off and on around it), unless the
admission constraint refuses to keep them for that job (``can_prepare``: an energy budget that cannot pay
for it now, where switching nodes off is what lets it run).

**Groups** (§2.3 "users of the system, the groups that they belong to"): ``groups`` maps a group name to
its thresholds (``upper_wait_s``, ``lower_wait_s``, ``max_queued``; a missing key takes the top-level
option of that name, ``null`` disables the rule for the group), ``user_groups`` maps a user (the
workload's ``user`` field) to a group; everyone else is in the group ``default``, whose thresholds are the
top-level options (or ``groups["default"]``: a threshold given in both places with two values is refused, as
neither overrides the other; the same value twice is accepted). A group other than ``default`` that no user is
in is refused: it would apply to no job, yet its rule 5 would switch a node off at every pass.

The paper gives no value for the period, the idle time or the thresholds; our defaults are
``period_s`` 60 s, ``idle_s`` 1800 s (PBS Pro's ``node_idle_limit``), ``upper_wait_s`` 3600 s, no lower
threshold, no maximum of queued jobs and no minimum of nodes on.

**With the rest of the scheduler** (:mod:`wattsched.schedulers.power`): nodes asleep or switching appear to
EASY's reservation as running until they could be on (asleep: the next pass plus a boot); an energy
budget is asked (``can_prepare``) before a boot and told after (``on_prepare``), and plans idle nodes as
kept on until the pass that would switch them off (:meth:`EnergySavingCluster.kept_hosts`; a node freed
later is planned as switched off at once, which is optimistic by at most ``idle_s`` of idle power). A
placement that keeps jobs inside partitions (``partitions``) is refused: the nodes booted in hostname order
may all be on another partition than the job's. A huge ``period_s``, ``idle_s`` or wait threshold means
never: no pass is asked for beyond the times a simulation reaches (``WATTSCHED_LIMIT_TIME_S``).
"""

from __future__ import annotations

import logging
import math
from collections import Counter, deque
from dataclasses import dataclass
from typing import AbstractSet, Any, Mapping, Sequence

import numpy as np
from procset import ProcSet

from wattsched.base.errors import OptionError, counted
from wattsched.base.hostsets import disjoint, from_sorted_ids, ids_array, inter, minus, plus, size
from wattsched.base.limits import limit
from wattsched.base.validate import MAX_DOUBLE
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.options import Option, _got, is_number
from wattsched.schedulers.pieces import register
from wattsched.schedulers.placement import lowest_ids
from wattsched.schedulers.power import (
    OpportunisticShutdown,
    PassContext,
    PowerManager,
    Transition,
    platform_sleep_model,
    PseudoMemo,
    transition_pseudo_jobs,
    transition_times_s,
)
from wattsched.schedulers.state import CallMeLater, ClusterView, Decision, JobState, QueuedJob, RunningJob, SetPState

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_GROUP", "EnergySavingCluster", "GroupThresholds"]

#: The group of every user ``user_groups`` does not name.
DEFAULT_GROUP = "default"
#: Tolerance on times: a REQUESTED_CALL arrives at the requested time as printed (behaviour 4).
TIME_EPS_S = 1e-6
#: how many of the last switch decisions :attr:`EnergySavingCluster.log` keeps
LOG_SWITCHES = 1000
_THRESHOLD_KEYS = ("upper_wait_s", "lower_wait_s", "max_queued")


@dataclass(frozen=True)
class GroupThresholds:
    """The thresholds of one user group (ESC paper §2.3, §2.5); ``None`` disables a rule.

    Attributes:
        upper_wait_s: boot nodes when the mean wait of the group's queued jobs exceeds it (rule 2).
        lower_wait_s: switch one idle node off when the mean wait is below it (rule 5).
        max_queued: boot nodes when a user of the group has more queued jobs (rule 3).
    """

    upper_wait_s: float | None
    lower_wait_s: float | None
    max_queued: int | None


def _threshold(group: str, key: str, value: Any) -> float | int | None:
    """A group's threshold checked: a finite number ≥ 0 (an integer for ``max_queued``), or None."""
    if value is None:
        return None
    where = f"option 'groups': group '{group}': '{key}'"
    if not is_number(value) or not -MAX_DOUBLE <= value <= MAX_DOUBLE:  # (an int beyond a double: not finite)
        raise OptionError(f"{where} must be a finite number or null, got {_got(value)}")
    if value < 0:
        raise OptionError(f"{where} must not be negative, got {_got(value)}")
    if key == "max_queued":
        if not float(value).is_integer():
            raise OptionError(f"{where} must be an integer, got {_got(value)}")
        return int(value)
    return float(value)


def parse_groups(defaults: GroupThresholds, groups: Mapping[str, Any] | None,
                 user_groups: Mapping[str, Any] | None) -> tuple[dict[str, GroupThresholds], dict[str, str]]:
    """The thresholds of every group and the group of every listed user, checked.

    Raises:
        OptionError: a group that is not an object, an unknown key, a bad number, a lower threshold
            above the upper one, a user in a group ``groups`` does not define or whose group is not a name, or a
            group no user is in (one line each).
    """
    out = {DEFAULT_GROUP: defaults}
    for name, spec in (groups or {}).items():
        if not str(name).strip():  # no group could be told from another by it in the outputs and errors
            raise OptionError(f"option 'groups': the key {_got(name)} is {'a blank' if name else 'an empty'} group "
                              "name; name the group (e.g. \"physics\")")
        if not isinstance(spec, Mapping):
            raise OptionError(f"option 'groups': group '{name}' must be an object like "
                              f"{{\"upper_wait_s\": 3600}}, got {_got(spec)}")
        unknown = sorted(set(spec) - set(_THRESHOLD_KEYS))
        if unknown:
            raise OptionError(f"option 'groups': group '{name}': unknown key '{unknown[0]}' "
                              f"(keys: {', '.join(_THRESHOLD_KEYS)})")
        values = {k: _threshold(name, k, spec[k]) if k in spec else getattr(defaults, k) for k in _THRESHOLD_KEYS}
        out[str(name)] = GroupThresholds(**values)  # type: ignore[arg-type]
    for name, g in out.items():
        if g.upper_wait_s is not None and g.lower_wait_s is not None and g.lower_wait_s > g.upper_wait_s:
            top = name == DEFAULT_GROUP and name not in (groups or {})
            where = "options" if top else f"option 'groups': group '{name}':"
            raise OptionError(f"{where} lower_wait_s {g.lower_wait_s:g} is above upper_wait_s {g.upper_wait_s:g} "
                              "(the lower wait threshold must not exceed the upper one)")
    members: dict[str, str] = {}
    for user, group in (user_groups or {}).items():
        if not str(user).strip():  # names no user: a job without a 'user' field is in the default group
            raise OptionError(f"option 'user_groups': the key {_got(user)} is {'a blank' if user else 'an empty'} user "
                              f"name; name a user (jobs without a 'user' field are in group '{DEFAULT_GROUP}')")
        if not isinstance(group, str):  # (a number: group names are JSON keys, strings; 1 is not "1")
            hint = f" ({_got(str(group))})" if is_number(group) else ""
            raise OptionError(f"option 'user_groups': user '{user}' is in group {_got(group)}, which is not a group "
                              f"name: a group is named by a string{hint} (groups: {', '.join(sorted(out))})")
        if group not in out:
            raise OptionError(f"option 'user_groups': user '{user}' is in group {_got(group)}, which is not defined "
                              f"(groups: {', '.join(sorted(out))}; define it in option 'groups')")
        members[str(user)] = group
    # a group no user is in applies to no job, but its rule 5 (a mean wait of 0 is below any lower_wait_s) would
    # switch a node off at every pass
    empty = sorted(set(out) - set(members.values()) - {DEFAULT_GROUP})
    if empty:
        raise OptionError(f"option 'groups': group '{empty[0]}' has no user (no entry of option 'user_groups' is in "
                          f"it): its thresholds would apply to no job; put users in it or leave it out")
    return out, members


def check_default_group(top: Mapping[str, Any], groups: Any) -> None:
    """Refuse a threshold of the group ``default`` given both at top level (``top``: the thresholds the user gave
    there, by name) and in ``groups["default"]`` with another value: both set the default group's threshold and
    neither overrides the other. A malformed ``groups`` is left to :func:`parse_groups` to name.

    Raises:
        OptionError: ``option 'groups.default.upper_wait_s' and top-level 'upper_wait_s' both given: ...``.
    """
    spec = groups.get(DEFAULT_GROUP) if isinstance(groups, Mapping) else None
    if not isinstance(spec, Mapping):
        return
    for key in _THRESHOLD_KEYS:
        if key not in top or key not in spec:
            continue
        try:
            in_group = _threshold(DEFAULT_GROUP, key, spec[key])
        except OptionError:
            continue  # a bad value: parse_groups says so
        if in_group != top[key]:  # 600 and 600.0 agree; null and a number do not
            raise OptionError(f"option 'groups.default.{key}' and top-level '{key}' both given: "
                              f"{_got(spec[key])} and {_got(top[key])}; both set the threshold of the group "
                              f"'default' (users in no other group): give it once")


_SLEEP_PSTATE: Option = OpportunisticShutdown.options[0]  # one option, one meaning, whatever the power piece


@register
class EnergySavingCluster(PowerManager):
    """EnergySaving Cluster's energy saving scheduler (ESC paper §2.5); see the module docstring.

    Args:
        period_s: time between two energy-saving passes (§2.6).
        idle_s: a node idle for longer is switched off (§2.5.2); ``math.inf`` never.
        upper_wait_s, lower_wait_s, max_queued: the default group's thresholds (§2.5.1, §2.5.2).
        min_on: nodes kept on (idle, computing or booting) at all times.
        groups: group name → thresholds; user_groups: user → group name.
        sleep_pstate: the sleep pstate (default: the platform's ``sleep_pstates``).
        every_period: ask for a pass every ``period_s`` while work remains (not an option: the passes that
            are not asked for otherwise are those at which no rule can act; tests compare both).

    Raises:
        OptionError: a period that is not positive, a lower threshold above the upper one, a user in an
            unknown group, a malformed group, or a threshold given other than its default and, with another
            value, in ``groups["default"]`` (from options, :meth:`check_given` tells a given default too).
    """

    name = "esc"
    description = "EnergySaving Cluster: periodic on/off of nodes by idle time and per-group wait thresholds"
    reference = "ESC paper §2.5"
    follows_placement = False  # boots nodes in hostname order (§2.5.1), whatever partition a job needs
    options = (
        Option("period_s", float, 60.0, min=0.001, help="time between two energy-saving passes, s"),
        Option("idle_s", float, 1800.0, min=0.0,
               help="switch off a node idle for longer than this, s (a huge value: never)"),
        Option("upper_wait_s", float, 3600.0, min=0.0, nullable=True,
               help="default group: boot nodes when its queued jobs' mean wait exceeds this, s (null: never)"),
        Option("lower_wait_s", float, None, min=0.0, nullable=True,
               help="default group: switch one idle node off per pass when the mean wait is below this, s"),
        Option("max_queued", int, None, min=0, nullable=True,
               help="default group: boot nodes when a user has more queued jobs than this"),
        Option("min_on", int, 0, min=0, help="nodes kept on at all times"),
        Option("groups", dict, None, nullable=True,
               help='user groups and their thresholds: {"name": {"upper_wait_s": ..., "lower_wait_s": ..., '
                    '"max_queued": ...}}'),
        Option("user_groups", dict, None, nullable=True,
               help='the group of each user: {"user": "group name"}; others: default'),
        _SLEEP_PSTATE,
    )

    def __init__(self, period_s: float = 60.0, idle_s: float = 1800.0, upper_wait_s: float | None = 3600.0,
                 lower_wait_s: float | None = None, max_queued: int | None = None, min_on: int = 0,
                 groups: Mapping[str, Any] | None = None, user_groups: Mapping[str, Any] | None = None,
                 sleep_pstate: int | None = None, every_period: bool = False) -> None:
        if not period_s > 0 or not math.isfinite(period_s):
            raise OptionError(f"option 'period_s' of esc must be a positive number of seconds, got {_got(period_s)}")
        if not idle_s >= 0:
            raise OptionError(f"option 'idle_s' of esc must not be negative, got {_got(idle_s)}")
        if min_on < 0:
            raise OptionError(f"option 'min_on' of esc must not be negative, got {min_on}")
        top = dict(zip(_THRESHOLD_KEYS, (upper_wait_s, lower_wait_s, max_queued)))
        default = GroupThresholds(*(None if v is None else _threshold(DEFAULT_GROUP, k, v)  # type: ignore[arg-type]
                                    for k, v in top.items()))
        # Built directly (the Python API), a top-level threshold other than its default was given; from options,
        # check_given has already compared every threshold the user gave, its default value included.
        defaults = {o.name: o.default for o in self.options}
        check_default_group({k: v for k, v in top.items() if v != defaults[k]}, groups)
        self.groups, self.user_groups = parse_groups(default, groups, user_groups)
        self.period_s = float(period_s)
        self.idle_s = float(idle_s)
        self.min_on = int(min_on)
        self._sleep_option = sleep_pstate
        # not None: this manager switches hosts off (an energy budget reads it before on_platform sets it)
        self.sleep_pstate = TAURUS.sleep_pstate if sleep_pstate is None else sleep_pstate
        self.switch_on_s = self.switch_off_s = math.nan
        self._lower_groups = [g for g, t in self.groups.items() if t.lower_wait_s is not None]
        self._no_group_rule = all(t.upper_wait_s is None and t.max_queued is None for t in self.groups.values())
        # per host: when it last became idle (end of a job or of a boot), and a count of its changes (kept_hosts)
        self._idle_since = np.zeros(0)
        self._idle_version = 0
        self._booting = ProcSet()  # hosts we booted whose RESOURCE_STATE_CHANGED has not come
        self._transitions: list[Transition] = []
        self._pseudo_memo: PseudoMemo = {}  # the switches' pseudo jobs kept between passes (transition_pseudo_jobs)
        #: ask for every pass while work remains, not only those at which a rule may act (for tests)
        self.every_period = every_period
        self._refused = False  # the admission constraint refused the last pass's boot
        self._last_pass_s = -math.inf  # the last pass run (a multiple of period_s)
        self._horizon_s = math.inf  # the latest pass asked for (the time bound, from on_platform)
        self._next_pass_s = 0.0  # the next pass time (a multiple of period_s)
        self._calls: set[float] = set()  # CALL_ME_LATER times requested and not yet past
        # the queue, incrementally: per group (count, Σ subtime), per user count, per width count
        self._queued: dict[str, tuple[str, str | None, int, float]] = {}
        self._group_n: Counter[str] = Counter()
        self._group_sub: dict[str, float] = {g: 0.0 for g in self.groups}
        self._user_n: Counter[str | None] = Counter()
        self._res_n: Counter[int] = Counter()
        self._all_hosts = ProcSet()
        self._on_cache: tuple[tuple, ProcSet] | None = None
        self._off_cache: tuple[tuple, tuple[ProcSet, int]] | None = None
        #: the last :data:`LOG_SWITCHES` switches decided, for tests and debugging: (time, hosts, "on" | "off",
        #: rule) (bounded: on a whole log at 80,640 nodes every decision kept took about 100 MiB)
        self.log: deque[tuple[float, ProcSet, str, str]] = deque(maxlen=LOG_SWITCHES)

    # ------------------------------------------------------------------ events
    @classmethod
    def check_given(cls, values: Mapping[str, Any], given: AbstractSet[str]) -> None:
        """A threshold given both at top level and in ``groups["default"]``, with two values, is refused
        (:func:`check_default_group`); only here, where options are validated, is a top-level value the user
        gave told apart from its default filled in (``upper_wait_s`` 3600 given is given)."""
        check_default_group({k: values[k] for k in _THRESHOLD_KEYS if k in given}, values.get("groups"))

    def on_platform(self, view: ClusterView) -> None:
        """The sleep pstate and transition times from the platform; every node idle since now.

        Raises:
            OptionError: the platform has no sleep pstate, or another one than ``sleep_pstate``, or fewer nodes
                than ``min_on``.
        """
        if self.min_on > view.nb_hosts:
            raise OptionError(f"option 'min_on' of esc: {self.min_on} nodes kept on, but the platform has "
                              f"{counted(view.nb_hosts, 'compute node')}")
        model = platform_sleep_model(view, self._sleep_option, "scheduler 'esc'")
        self.sleep_pstate = model.sleep_pstate
        self.switch_on_s, self.switch_off_s = transition_times_s(model)
        self._idle_since = np.full(view.nb_hosts, view.now_s)
        self._idle_version += 1
        self._all_hosts = view.all_hosts
        self._on_cache = None
        self._off_cache = None
        self._last_pass_s = -math.inf
        self._next_pass_s = self._tick_at_or_after(view.now_s)
        self._horizon_s = limit("time_s")  # a pass later than any simulated time never comes

    def group_of(self, job: QueuedJob) -> str:
        """The group of ``job``'s user (``default`` when unknown or not listed)."""
        return self.user_groups.get(job.user, DEFAULT_GROUP) if job.user is not None else DEFAULT_GROUP

    def on_submitted(self, job: QueuedJob, view: ClusterView) -> None:
        group = self.group_of(job)
        self._queued[job.id] = (group, job.user, job.res, job.subtime_s)
        self._group_n[group] += 1
        self._group_sub[group] += job.subtime_s
        self._user_n[job.user] += 1
        self._res_n[job.res] += 1

    def _dequeued(self, job_id: str) -> None:
        entry = self._queued.pop(job_id, None)
        if entry is None:
            return
        group, user, res, sub = entry
        self._group_n[group] -= 1
        self._group_sub[group] -= sub
        if self._group_n[group] == 0:
            self._group_sub[group] = 0.0  # no rounding drift once the group's queue is empty
        self._user_n[user] -= 1
        if self._user_n[user] <= 0:
            del self._user_n[user]
        self._res_n[res] -= 1
        if self._res_n[res] <= 0:
            del self._res_n[res]

    def on_started(self, job: RunningJob, view: ClusterView) -> None:
        self._dequeued(job.id)
        self.plan_version += 1

    def on_completed(self, job: RunningJob, state: JobState, view: ClusterView) -> None:
        for a, b in job.alloc.intervals():
            self._idle_since[a:b + 1] = view.now_s
        self._idle_version += 1
        self.plan_version += 1

    def on_hosts_changed(self, hosts: ProcSet, pstate: int, view: ClusterView) -> None:
        """A boot ended (the hosts are idle from now) or a switch-off ended."""
        if pstate != self.sleep_pstate:
            booted = inter(hosts, self._booting)
            if booted:
                self._booting = minus(self._booting, booted)
                for a, b in booted.intervals():
                    self._idle_since[a:b + 1] = view.now_s
                self._idle_version += 1
        self.plan_version += 1

    # ------------------------------------------------------------------ what others ask
    def pending_hosts(self, view: ClusterView) -> list[RunningJob]:
        """Nodes booting (until their boot ends), switching off (until the pass after, plus a boot) and asleep
        (until the next pass plus a boot) as pseudo running jobs for EASY's reservation."""
        nxt = self._next_pass_s
        return transition_pseudo_jobs(view, self.switching_parts(view), ProcSet(), "~esc",
                                      lambda end_s: self._tick_at_or_after(end_s) + self.switch_on_s,
                                      nxt + self.switch_off_s + self.switch_on_s, nxt + self.switch_on_s,
                                      self._pseudo_memo)

    def kept_hosts(self, view: ClusterView) -> Mapping[int, float]:
        """Every idle node, until the pass that would switch it off for its idle time (rule 4). The same
        mapping (the same object) while the free nodes (a set the core replaces, never changes in place) and the
        times since which nodes are idle stay: an energy budget asks at every plan it builds, and builds its plan's
        segments of the kept nodes again for a new mapping (issue 15: keyed on :attr:`plan_version`, which every
        pass at a period's tick bumps, the mapping was new at 10,800 of the 26,900 plans of ``energy-bud+esc`` on the
        week of 1,152 hosts)."""
        cached = self._kept_cache
        if cached is not None and cached[0] is view.free and cached[1] == self._idle_version:
            return cached[2]
        ids = ids_array(view.free)
        kept = dict(zip(ids.tolist(), self._idle_deadlines(self._idle_since[ids]).tolist()))
        self._kept_cache = (view.free, self._idle_version, kept)
        return kept

    _kept_cache: tuple[ProcSet, int, dict[int, float]] | None = None

    def transitions(self, view: ClusterView) -> Sequence[Transition]:
        return self._transitions

    # ------------------------------------------------------------------ the pass
    def _tick_at_or_after(self, t: float, later: int = 0) -> float:
        """The first pass time ``k × period_s`` at or after ``t`` (the ``later``-th one after it); always
        ``k × period_s`` for an integer ``k``, so that a pass time is the same float however it is found."""
        k = max(0, math.ceil((t - TIME_EPS_S) / self.period_s)) + later
        return k * self.period_s

    def _first_pass_beyond(self, origin: float, threshold: float) -> float:
        """The first pass at which ``now − origin`` exceeds ``threshold`` (an idle time, a mean wait)."""
        if math.isinf(threshold):
            return math.inf
        t = self._tick_at_or_after(origin + threshold)
        return t if t - origin > threshold else self._tick_at_or_after(origin + threshold, 1)

    def _idle_deadline(self, since: float) -> float:
        """The first pass at which a node idle since ``since`` has been idle longer than ``idle_s``."""
        return self._first_pass_beyond(since, self.idle_s)

    def _idle_deadlines(self, since: np.ndarray) -> np.ndarray:
        """:meth:`_idle_deadline` of many nodes at once, the same floats (``k × period_s``, ``k`` a whole number)."""
        if math.isinf(self.idle_s):
            return np.full(len(since), math.inf)
        t = since + self.idle_s
        k = np.maximum(np.ceil((t - TIME_EPS_S) / self.period_s), 0.0) + 0.0  # (+ 0.0: no -0.0)
        tick = k * self.period_s
        return np.where(tick - since > self.idle_s, tick, (k + 1.0) * self.period_s)

    def mean_wait_s(self, group: str, now: float) -> float:
        """Mean of ``now − subtime`` over the group's queued jobs (0 when none waits)."""
        n = self._group_n[group]
        return now - self._group_sub[group] / n if n else 0.0

    def decide(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> list[Decision]:
        now = view.now_s
        switching = view.switching
        if self._transitions:
            self._transitions = [t for t in self._transitions if not disjoint(t.hosts, switching)]
        if self._booting:
            self._booting = inter(self._booting, switching)
        self._calls = {t for t in self._calls if t > now + TIME_EPS_S}
        if len(self._queued) != len(queue):  # a job left the queue without starting (killed while waiting)
            self._resync(queue)
        decisions: list[Decision] = []
        tick = self._tick_at_or_after(now)
        if abs(now - tick) <= TIME_EPS_S and tick > self._last_pass_s:  # passes run at k × period_s only
            decisions = self._pass(queue, view, ctx)
            self._last_pass_s = tick
            self.plan_version += 1
        self._next_pass_s = tick if tick > self._last_pass_s else self._tick_at_or_after(now, 1)
        wake = self._next_useful_pass(queue, view, ctx)
        if wake is not None and wake > self._horizon_s:
            wake = None  # a huge period or threshold (idle_s, *_wait_s): that pass is never reached
        if wake is not None and not any(abs(t - wake) <= TIME_EPS_S for t in self._calls):
            self._calls.add(wake)
            decisions.append(CallMeLater(wake))
        return decisions

    def _resync(self, queue: Sequence[QueuedJob]) -> None:
        waiting = {job.id for job in queue}
        for job_id in [j for j in self._queued if j not in waiting]:
            self._dequeued(job_id)

    def _on_hosts(self, view: ClusterView) -> ProcSet:
        """Nodes idle, computing or booting (not asleep, not switching off). Cached while the sets it is made
        of are the same objects (policy code never mutates a host set, it replaces it)."""
        key = (view.off, view.switching, self._booting)
        cached = self._on_cache
        if cached is not None and all(a is b for a, b in zip(cached[0], key)):
            return cached[1]
        on = self._all_hosts
        if view.off or view.switching:
            on = minus(minus(on, view.off), minus(view.switching, self._booting))
        self._on_cache = (key, on)
        return on

    def _on_count(self, view: ClusterView) -> int:
        """``size(self._on_hosts(view))`` without building it (the hosts we boot are switching)."""
        return view.nb_hosts - size(view.off) - size(view.switching) + size(self._booting)

    def _pass(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> list[Decision]:
        """One energy-saving pass at ``view.now_s``: the switch-on rules, else the switch-off rules."""
        now = view.now_s
        self._refused = False
        if not view.off and not view.free:
            return []  # nothing to boot, nothing to switch off
        on_hosts = self._on_hosts(view)
        boot, rule, target = self._boots(queue, view, ctx, on_hosts, now)
        if boot:
            if target is not None:
                assignment = ctx.assign(target, lowest_ids(plus(boot, view.free), target.res))
                start_s = now + self.switch_on_s
                if not ctx.admission.can_prepare(target, boot, ProcSet(), start_s, assignment, view):
                    self._refused = True  # ask again at the next pass
                    return []
                ctx.admission.on_prepare(target, boot, ProcSet(), start_s, assignment, view)
            self._booting = plus(self._booting, boot)
            # as the core will, at once: the next pass is judged on it
            view.switching, view.off = plus(view.switching, boot), minus(view.off, boot)
            self._transitions.append(Transition(boot, True, now + self.switch_on_s))
            self.log.append((now, boot, "on", rule))
            logger.debug("t=%s esc boots %s (%s)", now, boot, rule)
            return [SetPState(boot, 0)]
        off, rule = self._offs(queue, view, ctx, on_hosts, now)
        if not off:
            return []
        assert self.sleep_pstate is not None
        view.switching, view.free = plus(view.switching, off), minus(view.free, off)  # as the core will
        self._transitions.append(Transition(off, False, now + self.switch_off_s))
        self.log.append((now, off, "off", rule))
        logger.debug("t=%s esc switches off %s (%s)", now, off, rule)
        return [SetPState(off, self.sleep_pstate)]

    def _next_useful_pass(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext) -> float | None:
        """The next pass at which a rule may act, judged on the state after this message (None: none before
        the next event). Rules 1 and 3 and ``min_on`` only change with events; rule 2's mean wait and rule
        4's idle time grow with time (their crossings are computed); rule 5 stops firing as waits grow."""
        if view.no_more_jobs and not queue and not view.running:
            return None  # the work is done: asking for more would keep Batsim running for ever
        nxt = self._next_pass_s
        if self.every_period or self._refused:
            return nxt
        if any(abs(t - nxt) <= TIME_EPS_S for t in self._calls):
            return None  # the next pass is asked for already; it judges again after it
        if queue and type(ctx.admission).can_prepare is not AdmissionConstraint.can_prepare:
            return nxt  # an admission constraint (energy budget) may answer otherwise as time passes
        if not view.off and not view.free:
            return None  # nothing to boot or switch off before an event frees or puts to sleep a node
        on_hosts = self._on_hosts(view)
        if view.off and self._boots(queue, view, ctx, on_hosts, nxt)[0]:
            return nxt
        candidates, room = self._off_candidates(queue, view, ctx, on_hosts)
        if candidates and room > 0 and self._select_off(candidates, room, nxt)[0]:
            return nxt
        later: list[float] = []
        if view.off and queue:
            for group, n in self._group_n.items():
                upper = self.groups[group].upper_wait_s
                if n and upper is not None:
                    mean_sub = self._group_sub[group] / n
                    later.append(self._first_pass_beyond(mean_sub, upper))
        if candidates and room > 0 and not math.isinf(self.idle_s):
            since = min(float(self._idle_since[a:b + 1].min()) for a, b in candidates.intervals())
            later.append(self._idle_deadline(since))
        later = [t for t in later if t > nxt + TIME_EPS_S]
        return min(later) if later else None

    # ------------------------------------------------------------------ switch-on rules
    def _boots(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext, on_hosts: ProcSet,
               at: float) -> tuple[ProcSet, str, QueuedJob | None]:
        """Rules 1-3 and ``min_on`` at time ``at``: the asleep nodes to boot, why, and the job it is for."""
        asleep = view.off
        if not asleep:
            return ProcSet(), "", None
        boot, rule, target = ProcSet(), "", None
        if queue:
            boot, rule, target = self._switch_on(queue, view, ctx, on_hosts, size(view.free) + size(self._booting), at)
        on_n = size(on_hosts) + size(boot)
        if on_n < self.min_on:
            boot = plus(boot, lowest_ids(minus(asleep, boot), self.min_on - on_n))
            rule = rule or f"min_on {self.min_on}"
        return boot, rule, target

    def _switch_on(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext, on_hosts: ProcSet,
                   available_n: int, at: float) -> tuple[ProcSet, str, QueuedJob | None]:
        """Rules 1-3: the asleep nodes to boot, the rule that asked for most, and the job it asked for."""
        asleep = view.off
        best: tuple[int, str, QueuedJob | None] = (0, "", None)
        # rule 1: the widest queued job does not fit on the nodes that are on (all free)
        widest = max(self._res_n) if self._res_n else 0
        boot1 = ProcSet()
        if widest:
            probe = QueuedJob("~esc-widest", widest, None, at)  # a placement depends on the width only
            on_n = size(on_hosts)
            if widest > on_n or (ctx.contiguous and ctx.place(probe, on_hosts) is None):
                boot1 = lowest_ids(asleep, max(0, widest - on_n))
                if not boot1 or (ctx.contiguous and ctx.place(probe, plus(on_hosts, boot1)) is None):
                    found = ctx.place(probe, plus(on_hosts, asleep))  # contiguity: the placement's choice
                    boot1 = inter(found.hosts, asleep) if found is not None else lowest_ids(asleep, widest)
                job = next(j for j in queue if j.res == widest)
                best = (size(boot1), f"rule 1: job {job.id} needs {counted(widest, 'node')}, "
                                         f"{on_n} {'is' if on_n == 1 else 'are'} on", job)
        if not self._no_group_rule:
            for need, why, job in self._threshold_needs(queue, at, available_n):
                if need > best[0]:
                    best = (need, why, job)
        n, rule, target = best
        if n == 0:
            return ProcSet(), "", None
        if rule.startswith("rule 1") and size(boot1) == n:
            return boot1, rule, target
        return lowest_ids(asleep, n), rule, target

    def _threshold_needs(self, queue: Sequence[QueuedJob], now: float,
                         available_n: int) -> list[tuple[int, str, QueuedJob]]:
        """Rules 2 and 3: for each group / user over its threshold, the nodes its jobs need to start in
        queue order (Σ res up to the job, minus idle and booting nodes)."""
        # the job up to which the queue must start: the group's first (rule 2), the user's k-th (rule 3)
        wanted_group: dict[str, str] = {}
        for group, n in self._group_n.items():
            upper = self.groups[group].upper_wait_s
            if n and upper is not None and self.mean_wait_s(group, now) > upper:
                wanted_group[group] = f"rule 2: group '{group}' waits {self.mean_wait_s(group, now):.0f} s on average"
        wanted_user: dict[str | None, int] = {}
        for user, n in self._user_n.items():
            group = self.user_groups.get(user, DEFAULT_GROUP) if user is not None else DEFAULT_GROUP
            limit = self.groups[group].max_queued
            if limit is not None and n > limit:
                wanted_user[user] = n - limit
        if not wanted_group and not wanted_user:
            return []
        out: list[tuple[int, str, QueuedJob]] = []
        demand = 0
        seen: Counter[str | None] = Counter()
        for job in queue:
            demand += job.res
            group = self.group_of(job)
            if group in wanted_group:
                out.append((demand - available_n, wanted_group.pop(group), job))
            if job.user in wanted_user:
                seen[job.user] += 1
                if seen[job.user] == wanted_user[job.user]:
                    del wanted_user[job.user]
                    out.append((demand - available_n, f"rule 3: user '{job.user}' has too many queued jobs", job))
            if not wanted_group and not wanted_user:
                break
        return out

    # ------------------------------------------------------------------ switch-off rules
    def _off_candidates(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext,
                        on_hosts: ProcSet) -> tuple[ProcSet, int]:
        """The idle nodes rules 4 and 5 may switch off, and how many at most: ``min_on`` nodes, the widest
        queued job's count of nodes and the nodes the first queued job would be placed on (were the nodes
        that are on all free) stay on, unless the admission constraint refuses to keep them for it."""
        free = view.free
        if not free:
            return ProcSet(), 0
        head_id = queue[0].id if queue else None
        key = (free, on_hosts, head_id, max(self._res_n) if self._res_n else 0,
               view.running_version)
        cached = self._off_cache
        plain_admission = type(ctx.admission).can_prepare is AdmissionConstraint.can_prepare
        if plain_admission and cached is not None and cached[0][0] is free and cached[0][1] is on_hosts \
                and cached[0][2:] == key[2:]:
            return cached[1]
        out = self._compute_off_candidates(queue, view, ctx, on_hosts)
        self._off_cache = (key, out)
        return out

    def _compute_off_candidates(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext,
                                on_hosts: ProcSet) -> tuple[ProcSet, int]:
        free = view.free
        floor = self.min_on
        if queue:  # the first job waits for these nodes (a contiguous placement needs these very ones) ...
            head = queue[0]
            placed = ctx.place(head, on_hosts)
            assignment = placed if placed is not None else ctx.assign(head, lowest_ids(on_hosts, head.res))
            # ... unless the admission constraint would not let it run on them (an energy budget: then
            # switching them off is what lets it run)
            if ctx.admission.can_prepare(head, ProcSet(), inter(assignment.hosts, free), view.now_s, assignment, view):
                floor = max(floor, max(self._res_n))
                if placed is not None:
                    free = minus(free, placed.hosts)
        return free, size(on_hosts) - floor

    def _offs(self, queue: Sequence[QueuedJob], view: ClusterView, ctx: PassContext, on_hosts: ProcSet,
              at: float) -> tuple[ProcSet, str]:
        """Rules 4 and 5 at time ``at``: the idle nodes to switch off, least recently used first, and why."""
        candidates, room = self._off_candidates(queue, view, ctx, on_hosts)
        if not candidates or room <= 0:
            return ProcSet(), ""
        return self._select_off(candidates, room, at)

    def _select_off(self, candidates: ProcSet, room: int, at: float) -> tuple[ProcSet, str]:
        """Rules 4 and 5 among ``candidates`` at time ``at``: least recently used first, then hostname order.
        How many go is counted before anything is sorted (most passes switch nothing off); a large set is
        counted and sorted with numpy (the same float comparisons, element by element)."""
        large = size(candidates) > 256
        if large:
            arr = ids_array(candidates)
            since_arr = self._idle_since[arr]
            n_idle = int(np.count_nonzero(at - since_arr > self.idle_s)) if not math.isinf(self.idle_s) else 0
            count = len(arr)
        else:  # small sets: plain Python is faster than numpy's per-call cost
            pairs = [(float(self._idle_since[h]), h) for a, b in candidates.intervals() for h in range(a, b + 1)]
            n_idle = sum(1 for t, _ in pairs if at - t > self.idle_s) if not math.isinf(self.idle_s) else 0
            count = len(pairs)
        n_lower = 0
        for g in self._lower_groups:
            lower = self.groups[g].lower_wait_s
            if lower is not None and self.mean_wait_s(g, at) < lower:
                n_lower += 1
        n = min(room, count, n_idle + n_lower)
        if n <= 0:
            return ProcSet(), ""
        if large:
            ids = arr[np.lexsort((arr, since_arr))[:n]].tolist()
        else:
            ids = [h for _, h in sorted(pairs)[:n]]
        rules = []
        if n_idle:
            rules.append(f"rule 4: idle longer than {self.idle_s:g} s")
        if n > n_idle:
            rules.append("rule 5: mean wait below the lower threshold")
        return from_sorted_ids(sorted(ids)), "; ".join(rules)
