"""Power managers (schedulers/power.py): opportunistic shutdown on hand-built states, through the core."""

from __future__ import annotations

import pytest
from procset import ProcSet

from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.backfill import EasyBackfilling
from wattsched.schedulers.budget import EnergyBud, Powercap
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.power import NoPowerManager, OpportunisticShutdown
from wattsched.schedulers.state import CallMeLater, QueuedJob, SetPState, StartJob
from wattsched.base.errors import OptionError

PROPS = {"wattage_per_state": "95:190, 9.75:9.75, 101:101, 125:125", "sleep_pstates": "1:2:3"}


def policy(n: int = 4, admission=None, props=None) -> PolicyScheduler:
    p = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), admission=admission, power=OpportunisticShutdown())
    p.start(n, 0.0, [props or {}] * n if props is not None else None)
    return p


def test_idle_hosts_are_switched_off_and_the_sleep_pstate_is_the_platforms():
    p = policy(4, props=PROPS)
    assert p.power.sleep_pstate == 1
    p.on_submitted(QueuedJob("a", 1, 100.0, 0.0))
    out = p.schedule()
    assert out == [StartJob("a", ProcSet(0)), SetPState(ProcSet((1, 3)), 1)]
    assert p.view.switching == ProcSet((1, 3)) and not p.view.free
    assert p.schedule() == []  # never switch a host that is switching
    p.on_hosts_changed(ProcSet((1, 3)), 1)
    assert p.view.off == ProcSet((1, 3))


def test_asleep_hosts_are_booted_for_the_head_which_waits_for_the_boot():
    p = policy(4)
    p.on_submitted(QueuedJob("a", 2, 100.0, 0.0))
    p.schedule()  # a on 0-1, 2-3 off
    p.on_hosts_changed(ProcSet((2, 3)), 13)
    p.set_time(10.0)
    p.on_submitted(QueuedJob("b", 3, 50.0, 10.0))
    out = p.schedule()
    # reservation: a ends at 100, hosts 2-3 can be on at 10 + 151.52: the head needs host 0-1 and 2
    assert out == [SetPState(ProcSet(2), 0)] or out == [SetPState(ProcSet((2, 3)), 0)] or \
        all(isinstance(d, SetPState) and d.pstate == 0 for d in out)
    booting = p.view.switching
    assert booting and booting <= ProcSet((2, 3))
    assert p.schedule() == []  # the head waits; nothing is switched twice
    p.set_time(161.52)
    p.on_completed("a")
    p.on_hosts_changed(booting, 0)
    out = p.schedule()
    assert isinstance(out[0], StartJob) and out[0].job_id == "b"


def test_head_reservation_accounts_for_boot_time():
    p = policy(4)
    p.on_submitted(QueuedJob("a", 4, 1000.0, 0.0))
    p.schedule()
    p.set_time(10.0)
    p.on_completed("a")
    p.on_submitted(QueuedJob("h", 4, 100.0, 10.0))
    p.on_submitted(QueuedJob("s", 1, 10.0, 10.0))
    out = p.schedule()
    # all four hosts free: h starts at once, nothing is switched off
    assert out == [StartJob("h", ProcSet((0, 3)))]
    p2 = policy(4)
    p2.on_hosts_changed(ProcSet((0, 3)), 13)  # everything asleep
    p2.on_submitted(QueuedJob("h", 4, 100.0, 0.0))
    p2.on_submitted(QueuedJob("s", 1, 10.0, 0.0))
    out = p2.schedule()
    assert out == [SetPState(ProcSet((0, 3)), 0)]
    pending = p2.power.pending_hosts(p2.view)
    assert [j.expected_end_s for j in pending] == [pytest.approx(151.52)]


def test_the_backfilling_view_is_built_once_while_nothing_changes():
    """EASY's pass and the shutdown's boot planning ask for the view with hosts off as pseudo jobs: the second
    time, with nothing changed, the first view is returned; a start, a time or a switch gives a new one, which
    holds the change."""
    p = policy(4)
    p.on_hosts_changed(ProcSet((2, 3)), 13)  # 2-3 asleep
    p.on_submitted(QueuedJob("a", 1, 100.0, 0.0))
    view = p.view
    seen = p.backfill_view(view)
    assert seen is not view and seen.free == ProcSet((0, 1)) and [j.alloc for j in seen.pending_by_end] == [
        ProcSet((2, 3))]
    assert p.backfill_view(view) is seen
    p.schedule()  # a starts on 0, 1 is switched off
    after = p.backfill_view(p.view)
    assert after is not seen and after.free == ProcSet() and ProcSet(0) in [j.alloc for j in after.running_by_end]
    p.set_time(5.0)
    assert p.backfill_view(p.view) is not after


def test_the_budget_can_refuse_a_boot():
    # the window opens once the hosts, on at 0 s, can be asleep (a budget below that is refused, hunt 39)
    budget = EnergyBud(budget_j=4 * 9.75 * 1000 + 1.0, window_start_s=10.0, window_end_s=1010.0)
    p = policy(4, admission=budget)
    p.on_hosts_changed(ProcSet((0, 3)), 13)
    p.set_time(10.0)
    p.on_submitted(QueuedJob("h", 1, 100.0, 0.0))
    assert [d for d in p.schedule() if isinstance(d, SetPState)] == []  # cannot pay a boot
    assert budget.power_manager is p.power


def test_boots_are_just_in_time_and_later_jobs_get_hosts_booted_without_delaying_the_head():
    p = policy(4)
    p.on_submitted(QueuedJob("a", 2, 1000.0, 0.0))
    p.schedule()  # a on 0-1 until 1000 at the latest, 2-3 switched off
    p.on_hosts_changed(ProcSet((2, 3)), 13)
    p.set_time(10.0)
    p.on_submitted(QueuedJob("h", 4, 100.0, 10.0))
    p.on_submitted(QueuedJob("s", 1, 100.0, 10.0))
    # h waits for a until 1000: its hosts are booted at 1000 - 151.52, not now; s fits before 1000 once
    # host 2 is on (10 + 151.52 + 100 <= 1000), so host 2 is booted for it
    assert p.schedule() == [CallMeLater(1000.0 - 151.52), SetPState(ProcSet(2), 0)]
    p.set_time(20.0)
    p.on_submitted(QueuedJob("l", 1, 5000.0, 20.0))
    assert p.schedule() == []  # s waits for its boot; l would delay h (no host outside h's reservation)
    p.set_time(161.52)
    p.on_hosts_changed(ProcSet(2), 0)
    assert p.schedule() == [StartJob("s", ProcSet(2))]
    p.set_time(200.0)
    p.on_completed("s")
    assert p.schedule() == [SetPState(ProcSet(2), 13)]
    p.on_hosts_changed(ProcSet(2), 13)
    p.set_time(1000.0 - 151.52)
    p.on_call()
    assert p.schedule() == [SetPState(ProcSet((2, 3)), 0)]  # on at 1000, when a ends
    p.set_time(990.0)
    p.on_completed("a")
    assert p.schedule() == []  # 0-1 are kept for h: switching them off and on again would be late
    p.set_time(1000.0)
    p.on_hosts_changed(ProcSet((2, 3)), 0)
    assert p.schedule()[0] == StartJob("h", ProcSet((0, 3)))


def test_boots_for_the_head_and_a_later_job_in_one_pass_are_separate_transitions():
    p = policy(4)
    p.on_hosts_changed(ProcSet((0, 3)), 13)
    p.on_submitted(QueuedJob("h", 2, 100.0, 0.0))
    p.on_submitted(QueuedJob("s", 1, 100.0, 0.0))
    assert p.schedule() == [SetPState(ProcSet((0, 2)), 0)]  # 0-1 for h, 2 for s (outside h's hosts)
    assert [(str(t.hosts), t.booting) for t in p.power.transitions(p.view)] == [("0-1", True), ("2", True)]
    pending = p.power.pending_hosts(p.view)
    assert sum(len(j.alloc) for j in pending) == len(ProcSet().union(*(j.alloc for j in pending))) == 4


def test_a_powercap_that_refuses_the_head_still_boots_hosts_for_later_jobs():
    # cap: 2 hosts computing and 2 idle (2 × 203.12 + 2 × 100 W); everything asleep inside the window
    cap = Powercap(budget_j=606.24 * 10_000, window_start_s=0.0, window_end_s=10_000.0)
    p = policy(4, admission=cap)
    p.on_hosts_changed(ProcSet((0, 3)), 13)
    p.on_submitted(QueuedJob("h", 3, 100.0, 0.0))
    p.on_submitted(QueuedJob("s", 1, 5000.0, 0.0))
    p.on_submitted(QueuedJob("t", 1, 50.0, 0.0))
    out = p.schedule()
    # h (3 hosts) cannot run under the cap before te: its reservation moves to te (boot just in time);
    # s and t end before te, so hosts 0 and 1 are booted for them (the cap allows two computing hosts)
    assert out == [CallMeLater(10_000.0 - 151.52), SetPState(ProcSet((0, 1)), 0), CallMeLater(10_000.0)]
    p.set_time(151.52)
    p.on_hosts_changed(ProcSet((0, 1)), 0)
    assert p.schedule() == [StartJob("s", ProcSet(0)), StartJob("t", ProcSet(1))]
    p2 = policy(4, admission=Powercap(budget_j=503.0 * 10_000, window_start_s=0.0, window_end_s=10_000.0))  # below one computing host and three idle
    p2.on_hosts_changed(ProcSet((0, 3)), 13)
    p2.on_submitted(QueuedJob("h", 3, 100.0, 0.0))
    p2.on_submitted(QueuedJob("s", 1, 5000.0, 0.0))
    assert p2.schedule() == [CallMeLater(10_000.0 - 151.52), CallMeLater(10_000.0)]  # s is refused: no boot


def test_a_job_booted_for_starts_when_its_boot_ends_even_if_the_head_could_take_its_hosts():
    """The booking commits the job to its hosts (as a resource manager's power saving does): at the end
    of the boot it starts there first, instead of EASY recomputing the head's reservation on the hosts
    just switched on (which left them idle, then off again: boot/shutdown churn)."""
    class NotH(AdmissionConstraint):  # h waits for something else than hosts (energy, say)
        def can_start(self, job, assignment, view):
            return job.id != "h"

        def can_prepare(self, job, boot, keep, start_s, assignment, view):
            return job.id != "h"

    p = policy(8, admission=NotH())
    p.on_hosts_changed(ProcSet((0, 7)), 13)
    p.on_submitted(QueuedJob("h", 2, 5000.0, 0.0))
    p.on_submitted(QueuedJob("s", 3, 500.0, 0.0))
    out = p.schedule()
    assert out[0] == SetPState(ProcSet((2, 4)), 0)  # h's reservation is 0-1 at 151.52; s outside it
    p.set_time(151.52)
    p.on_hosts_changed(ProcSet((2, 4)), 0)
    assert p.schedule() == [StartJob("s", ProcSet((2, 4)))]


def test_shutdown_needs_a_sleep_pstate_on_the_platform():
    with pytest.raises(OptionError, match="'shutdown'"):
        policy(2, props={"wattage_per_state": "95:190"})
    assert NoPowerManager().decide([], None, None) == []  # type: ignore[arg-type]


def test_no_wake_up_is_asked_for_a_head_behind_a_job_without_walltime():
    """The head waits for a job that may run forever: its hosts asleep are not booted, and no CALL_ME_LATER at
    +inf is asked (JSON cannot carry it to real Batsim); the job's end brings the next pass."""
    p = policy(4, props=PROPS)
    p.on_submitted(QueuedJob("endless", 2, None, 0.0))
    assert p.schedule() == [StartJob("endless", ProcSet((0, 1))), SetPState(ProcSet((2, 3)), 1)]
    p.on_hosts_changed(ProcSet((2, 3)), 1)
    p.set_time(10.0)
    p.on_submitted(QueuedJob("wide", 4, 100.0, 10.0))
    out = p.schedule()
    assert not any(isinstance(d, CallMeLater) for d in out), out
    assert p.view.off == ProcSet((2, 3))


# ----------------------------------------------------------------- the kept hosts' bookkeeping (issue 15)
from hypothesis import given, settings, strategies as st  # noqa: E402

from wattsched.schedulers.state import ClusterView, RunningJob  # noqa: E402


@settings(max_examples=300, deadline=None, derandomize=True)
@given(bookings=st.lists(st.tuples(st.sets(st.integers(0, 40), min_size=1), st.sampled_from([5.0, 10.0, 20.0])),
                         max_size=6),
       rounds=st.lists(st.tuples(st.sets(st.integers(0, 40)), st.sets(st.integers(0, 40)),
                                 st.sampled_from([0.0, 5.0, 10.0, 30.0])), min_size=1, max_size=3),
       cached=st.booleans())
def test_forget_kept_equals_the_filter_host_by_host(bookings, rounds, cached):
    """OpportunisticShutdown._forget_kept (set differences and the hosts booked until a past time, not a visit
    of every kept host) keeps exactly the hosts the plain filter keeps (time not come, free or switching), in
    the same order, and says whether any went; its cached set of kept hosts stays the set of the dict's keys.
    Hosts are booked in turns (a host booked again gets the later booking's time), then forgotten over
    several passes."""
    manager = OpportunisticShutdown()
    kept: dict[int, float] = {}
    for hosts, until in bookings:
        if cached:
            manager._kept_set()  # the cache is kept up to date by the bookings
        manager._keep(ProcSet(*hosts), until)
        for h in sorted(hosts):
            kept[h] = until
        assert manager._kept == kept and manager._kept_set() == ProcSet(*kept)
    for free, switching, now in rounds:
        switching -= free
        view = ClusterView(now_s=now, nb_hosts=41, free=ProcSet(*free), switching=ProcSet(*switching))
        expected = {h: t for h, t in kept.items() if t > now and (h in free or h in switching)}
        manager.on_started(RunningJob("j", ProcSet(), now, now), view)  # (a start: kept hosts may have been taken)
        changed = manager._forget_kept(now, view)
        assert list(manager._kept.items()) == list(expected.items())
        assert changed == (expected != kept)
        assert manager._kept_set() == ProcSet(*expected)
        kept = expected


def _budget_run(tmp_path, monkeypatch, preset: str, budget_fraction: float, narrow: bool) -> tuple:
    """``preset`` + shutdown under a budget on a queue twice the machine's load (many refused boots; every
    seventh job has no walltime), with the bulk drop of dominated jobs on at every occasion, or off."""
    import json

    from wattsched.platforms.generate import taurus_platform_xml
    from wattsched.schedulers import power as power_module
    from wattsched.schedulers import queue as queue_module
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload
    from wattsched.workloads.synthetic import synthetic_week

    monkeypatch.setattr(power_module, "NARROW_AFTER_DOMINATED", 1 if narrow else 10**9)
    monkeypatch.setattr(power_module, "NARROW_COST_JOBS", 0)
    monkeypatch.setattr(queue_module, "NARROW_MIN_JOBS", 1)
    monkeypatch.setattr(queue_module, "INDEX_MIN_JOBS", 1)
    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(taurus_platform_xml(64))
    day = synthetic_week(64, seed=5, duration_s=86400.0, target_load=2.0)
    for job in day["jobs"][::7]:
        job["walltime"] = -1
    workload.write_text(json.dumps(day))
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, scheduler_handler(preset, {"window_start_s": 3600.0, "window_end_s": 80000.0,
                                                  "budget_fraction": budget_fraction, "shutdown": True}))
    return [(r.job.id, r.start_s, r.alloc_str, r.end_s) for r in sim.jobs_rows], list(sim.pstate_rows)


@pytest.mark.parametrize("preset, budget_fraction", [("energy-bud", 0.55), ("reduce-pc", 0.7)])
def test_dropping_the_dominated_jobs_in_bulk_changes_no_decision(tmp_path, monkeypatch, preset, budget_fraction):
    """The bulk drop of the jobs the pass's refused boots dominate (``_prepare_backfill``) passes over exactly
    the jobs the one-by-one check would: the same schedule and switches with it at every occasion as without."""
    from wattsched.schedulers.queue import Staircase

    calls = []
    original = Staircase.dominates_many
    monkeypatch.setattr(Staircase, "dominates_many",
                        lambda self, ns, ends: calls.append(len(ns)) or original(self, ns, ends))
    bulk = _budget_run(tmp_path, monkeypatch, preset, budget_fraction, narrow=True)
    assert sum(calls) > 100, calls  # the bulk drop did run, over many jobs
    one_by_one = _budget_run(tmp_path, monkeypatch, preset, budget_fraction, narrow=False)
    assert bulk == one_by_one


_part_sets = st.lists(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), min_size=1, max_size=3),
                      max_size=12)


@given(_part_sets, st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), max_size=3),
       st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), max_size=4), st.integers(0, 2**12 - 1))
def test_transition_pseudo_jobs_take_the_same_hosts_with_one_sort_of_many_switches(parts, counted, other, booting):
    """From SORT_MIN_PARTS switches on, their hosts are checked disjoint with one sort; the pseudo jobs are those of
    the general loop (each switch loses the hosts counted and those of earlier switches), whether the switches
    share hosts (the loop then runs) or not."""
    from wattsched.schedulers import power

    def hosts(pairs) -> ProcSet:
        return ProcSet(*[(a, a + d) for a, d in pairs])

    sets = [hosts(p) for p in parts]
    switching = ProcSet()
    for hs in sets:
        switching |= hs
    switching |= hosts(other)
    view = ClusterView.idle_machine(80, now_s=100.0)
    view.switching, view.off = switching, ProcSet((70, 72))
    view.free = ProcSet((0, 79)) - switching - view.off
    transitions = [power.Transition(hs, bool(booting >> k & 1), 100.0 + 10 * k) for k, hs in enumerate(sets)]
    triples = [(k, t, t.hosts & switching) for k, t in enumerate(transitions)]

    def pseudo(threshold: int) -> list:
        saved = power.SORT_MIN_PARTS
        power.SORT_MIN_PARTS = threshold
        try:
            jobs = power.transition_pseudo_jobs(view, triples, hosts(counted) & switching, "~s", lambda end: end + 151.0,
                                                500.0, 250.0)
        finally:
            power.SORT_MIN_PARTS = saved
        return [(j.id, list(j.alloc.intervals()), j.start_s, j.expected_end_s) for j in jobs]

    assert pseudo(0) == pseudo(10**9)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_part_sets, st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), max_size=3),
       st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), max_size=3), st.integers(0, 2**12 - 1),
       st.integers(0, 2**12 - 1), st.sampled_from([100.0, 130.0, 400.0]))
def test_transition_pseudo_jobs_kept_between_calls_are_those_made_again(parts, counted, counted2, booting, dropped,
                                                                        later_s):
    """With a memo, a second call (later, some switches ended, other hosts counted) gives pseudo jobs of the same hosts
    and ends, in the same order, as a call without one; a switch unchanged and holding no counted host keeps its job."""
    from wattsched.schedulers import power

    def hosts(pairs) -> ProcSet:
        return ProcSet(*[(a, a + d) for a, d in pairs])

    sets = [hosts(p) for p in parts]
    transitions = [power.Transition(hs, bool(booting >> k & 1), 100.0 + 10 * k) for k, hs in enumerate(sets)]

    def call(now_s: float, alive: list, counted_hosts: ProcSet, memo):
        switching = ProcSet()
        for t in alive:
            switching |= t.hosts
        view = ClusterView.idle_machine(80, now_s=now_s)
        view.switching, view.off = switching, ProcSet((75, 77)) - switching
        view.free = ProcSet((0, 79)) - switching - view.off
        triples = [(k, t, t.hosts & switching) for k, t in enumerate(alive)]
        return power.transition_pseudo_jobs(view, triples, counted_hosts & switching, "~s", lambda end: end + 151.0,
                                            now_s + 400.0, now_s + 150.0, memo)

    def shape(jobs) -> list:
        return [(list(j.alloc.intervals()), j.expected_end_s) for j in jobs]

    memo: dict = {}
    first = call(100.0, transitions, hosts(counted), memo)
    assert shape(first) == shape(call(100.0, transitions, hosts(counted), None))
    alive = [t for k, t in enumerate(transitions) if not dropped >> k & 1]
    second = call(later_s, alive, hosts(counted2), memo)
    assert shape(second) == shape(call(later_s, alive, hosts(counted2), None))
    disjoint_sets = sum(len(hs) for hs in sets) == len(ProcSet().union(*sets))
    if len(alive) == len(transitions) and not counted and not counted2 and later_s <= 100.0 and disjoint_sets:
        switches = [(a, b) for a, b in zip(first, second) if a.id[2:].isdigit()]
        assert len(switches) == len(sets) and all(a is b for a, b in switches)  # nothing changed: each job kept


def test_the_shutdown_forgets_a_kept_host_a_job_took_once_a_job_started():
    """A free host kept for a job is forgotten when another job takes it. Only a start takes a kept host out of the
    free and switching hosts, so the shutdown looks for such hosts only after one (``on_started``): a job that took
    kept hosts is seen, and without a start since the last look nothing is looked for."""
    pm = OpportunisticShutdown()
    view = ClusterView.idle_machine(8, 0.0)
    pm._keep(ProcSet((0, 3)), 100.0)  # hosts 0-3 kept until t=100
    assert not pm._forget_kept(0.0, view)  # all free still
    view.free = ProcSet((2, 7))
    pm.on_started(RunningJob("j", ProcSet((0, 1)), 0.0, 50.0), view)  # a job took 0-1
    assert pm._forget_kept(1.0, view) and sorted(pm.kept_hosts(view)) == [2, 3]
    view.free = ProcSet((3, 7))  # (no start made this: not looked for)
    assert not pm._forget_kept(2.0, view) and sorted(pm.kept_hosts(view)) == [2, 3]


def test_the_hosts_version_moves_when_batsim_changes_a_host_and_not_at_the_acknowledgement_of_the_cores_dvfs():
    """``view.hosts_version`` (what EASY's kept pass checks): a RESOURCE_STATE_CHANGED that gives hosts the pstate the
    core already set when it started a job there changes nothing; another pstate, or a switch's end, does."""
    p = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), power=NoPowerManager())
    p.start(4, 0.0, None)
    view = p.view
    view.pstates[0:2] = [2, 2]  # as _start sets them with its SetPState
    version = view.hosts_version
    p.on_hosts_changed(ProcSet((0, 1)), 2)
    assert view.hosts_version == version
    p.on_hosts_changed(ProcSet((1, 2)), 2)  # host 2 was at pstate 0
    assert view.hosts_version == version + 1
    assert view.pstates == [2, 2, 2, 0]
