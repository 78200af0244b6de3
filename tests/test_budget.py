"""energyBud, reducePC and powercap (schedulers/budget.py) on hand-built ClusterView states."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.energy_models.power import PlatformPower, parse_wattage_per_state
from wattsched.energy_models.taurus import TAURUS
from wattsched.schedulers.admission import AdmissionConstraint
from wattsched.schedulers.budget import BudgetPower, EnergyBud, EnergyBudget, Powercap, ReducePC
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.backfill import EasyBackfilling
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.power import OpportunisticShutdown
from wattsched.schedulers.state import Assignment, CallMeLater, ClusterView, QueryEnergy, QueuedJob, RunningJob
from tests.budget_oracle import min_balance

TAURUS_PROPS = {
    "wattage_per_state": "95.0:190.738, 95.0:171.02, 9.75:9.75, 100.99672131147543:100.99672131147543, "
                         "125.1743848996832:125.1743848996832",
    "sleep_pstates": "2:3:4",
}
P = BudgetPower()  # P̃idle 100 W, P̃comp 203.12 W
MODES: dict[str, type[EnergyBudget]] = {"energy-bud": EnergyBud, "reduce-pc": ReducePC}


def job(jid: str, res: int, wall: float | None, sub: float = 0.0) -> QueuedJob:
    return QueuedJob(jid, res, wall, sub)


def view(n: int = 4, now: float = 0.0, running: tuple[tuple[str, str, float], ...] = ()) -> ClusterView:
    v = ClusterView.idle_machine(n, now)
    v.power = PlatformPower.uniform(TAURUS.node_model, n)
    for jid, hosts, end in running:
        alloc = ProcSet.from_str(hosts)
        v.add_running(RunningJob(jid, alloc, now, end))
        v.free = v.free - alloc
    return v


def budget(mode: str = "energy-bud", n: int = 4, shutdown: bool = False, **kw) -> EnergyBudget:
    b = MODES[mode](**kw)
    if shutdown:
        b.bind_power(OpportunisticShutdown())
    b.on_platform(view(n))
    return b


def platform(constraint: AdmissionConstraint, n: int = 4) -> AdmissionConstraint:
    constraint.on_platform(view(n))
    return constraint


# the hooks with a job at the top frequency on ``hosts`` (its walltime unchanged)
def admit(c: AdmissionConstraint, job: QueuedJob, hosts: ProcSet, v: ClusterView) -> bool:
    return c.can_start(job, Assignment(hosts, 0, job.walltime_s), v)


def started(c: AdmissionConstraint, job: QueuedJob, hosts: ProcSet, v: ClusterView) -> None:
    c.on_start(job, Assignment(hosts, 0, job.walltime_s), v)


def reserve(c: AdmissionConstraint, job: QueuedJob, start_s: float, hosts: ProcSet, v: ClusterView) -> None:
    c.reserve_head(job, start_s, Assignment(hosts, 0, job.walltime_s), v)


def earliest(c: AdmissionConstraint, job: QueuedJob, start_s: float, v: ClusterView) -> float:
    return c.earliest_start_s(job, Assignment(ProcSet((0, job.res - 1)), 0, job.walltime_s), start_s, v)


# ----------------------------------------------------------------- arithmetic
def test_min_balance_is_exact_at_breakpoints():
    # rate 10 W; 30 W during [2, 4): 5 → 25 at t=2 → −15 at t=4, then +10/s
    assert min_balance(5.0, 10.0, 0.0, 10.0, [(2.0, 4.0, 30.0)]) == pytest.approx(-15.0)
    assert min_balance(0.0, 10.0, 0.0, 10.0, [(0.0, math.inf, 15.0)]) == pytest.approx(-50.0)
    assert min_balance(3.0, 10.0, 5.0, 5.0, []) == 3.0
    assert parse_wattage_per_state("95.0:190.738, 9.75:9.75") == ((95.0, 9.75), (95.0, 9.75), (190.738, 9.75))
    assert parse_wattage_per_state("100:93.3:200") == ((100.0,), (93.3,), (200.0,))


def test_rate_and_budget_fraction():
    b = budget(budget_fraction=0.5, window_start_s=100.0, window_end_s=1100.0)
    assert b.B == pytest.approx(0.5 * 4 * 203.12 * 1000)
    assert b.rate_w == pytest.approx(0.5 * 4 * 203.12)
    assert budget().unlimited and budget().rate_w == math.inf


# ----------------------------------------------------------------- the counter Cea
def test_counter_rule1_minus_overestimated_consumption():
    # 4 hosts, R = 600 W; 1 host computing (203.12) + 3 idle (300) = 503.12 W
    b = budget(budget_j=600.0 * 1000, window_start_s=100.0, window_end_s=1100.0)
    v = view(4, 0.0, running=(("a", "0", 5000.0),))
    b.on_clock(50.0, v)  # before the window: nothing
    v.now_s = 50.0
    assert b.cea_j == 0.0
    b.on_clock(300.0, v)  # 200 s inside the window
    v.now_s = 300.0
    assert b.cea_j == pytest.approx(200 * (600 - 503.12))
    b.on_clock(2000.0, v)  # clipped at te
    assert b.cea_j == pytest.approx(1000 * (600 - 503.12))


def test_monitoring_stage_replaces_the_estimate_with_the_measure():
    b = budget(budget_j=600.0 * 1000, window_start_s=100.0, window_end_s=1100.0)
    v = view(4, 100.0)
    out = b.decisions([job("q", 4, 10.0)], v)  # first pass in the window: measure E(ts)
    assert QueryEnergy() in out and CallMeLater(700.0) in out
    b.on_energy(1000.0, v)  # ANSWER at ts
    b.on_clock(700.0, v)
    v.now_s = 700.0
    assert b.cea_j == pytest.approx(600 * (600 - 400))
    b.on_call(v)
    out = b.decisions([job("q", 4, 10.0)], v)
    assert QueryEnergy() in out and CallMeLater(1100.0) in out
    b.on_energy(1000.0 + 600 * 380.0, v)  # really 380 W: Cea = 600 s × (600 − 380)
    assert b.cea_j == pytest.approx(600 * 220.0)


def test_wakeups_stop_when_the_work_is_done_and_after_the_window():
    b = budget(budget_j=1e6, window_start_s=100.0, window_end_s=1100.0)
    v = view(4, 0.0)
    assert b.decisions([job("q", 1, 10.0)], v) == [CallMeLater(100.0)]
    assert b.decisions([job("q", 1, 10.0)], v) == []  # one call pending at a time
    b.on_call(v)
    v.no_more_jobs = True
    assert b.decisions([], v) == []
    v2 = view(4, 1100.0)
    b2 = budget(budget_j=1e6, window_start_s=100.0, window_end_s=1100.0)
    assert b2.decisions([job("q", 1, 10.0)], v2) == []
    assert budget().decisions([job("q", 1, 10.0)], v) == []  # unlimited: no call at all


def test_a_call_requested_by_someone_else_does_not_cancel_ours():
    """REQUESTED_CALL carries no id: the power manager's just-in-time boot calls must not make the budget
    forget its own (nor request it twice)."""
    b = budget(budget_j=1e6, window_start_s=100.0, window_end_s=1100.0, monitoring_period_s=600.0)
    assert b.decisions([job("q", 1, 10.0)], view(4, 0.0)) == [CallMeLater(100.0)]
    b.on_call(view(4, 50.0))  # the power manager's call, at 50
    assert b.decisions([job("q", 1, 10.0)], view(4, 50.0)) == []
    b.on_call(view(4, 100.0))  # ours, at 100
    assert b.decisions([job("q", 1, 10.0)], view(4, 100.0)) == [QueryEnergy(), CallMeLater(700.0)]


# ----------------------------------------------------------------- rule 2 and the reservation
def test_no_energy_debt_over_the_whole_walltime():
    # R = 450 W on 4 hosts idle (400 W): 50 W of slack. A 1-host job adds 103.12 W.
    b = budget(budget_j=450.0 * 1000, window_start_s=0.0, window_end_s=1000.0)
    v = view(4, 0.0)
    b.begin_pass([], v)
    assert not admit(b, job("j", 1, 100.0), ProcSet(0), v)  # debt right away
    b.cea_j = 103.12 * 100 - 50 * 100  # exactly pays the excess of 100 s
    assert admit(b, job("j", 1, 100.0), ProcSet(0), v)
    assert not admit(b, job("j", 1, 101.0), ProcSet(0), v)
    assert admit(b, job("j", 1, 100.0, 0.0), ProcSet(0), view(4, 5000.0))  # outside the window


def test_running_jobs_and_jobs_started_in_the_pass_count():
    b = budget(budget_j=450.0 * 1000, window_start_s=0.0, window_end_s=1000.0)
    v = view(4, 0.0, running=(("a", "0", 100.0),))
    b.cea_j = 103.12 * 100 - 50 * 100  # pays a's excess exactly
    b.begin_pass([], v)
    assert not admit(b, job("j", 1, 1.0), ProcSet(1), v)
    v2 = view(4, 0.0)
    b.begin_pass([], v2)
    assert admit(b, job("j", 1, 100.0), ProcSet(0), v2)
    started(b, job("j", 1, 100.0), ProcSet(0), v2)
    assert not admit(b, job("k", 1, 1.0), ProcSet(1), v2)


def test_head_energy_reservation_energy_bud_vs_reduce_pc():
    """§IV-D: a short job using every free host, backfilled during the head's energy reservation, starts
    under energyBud and waits under reducePC."""
    # 4 hosts, R = 500 W, Cea = 100 kJ; host 0 busy until 1000; head needs 4 hosts at q = 1000 for 100 s
    results = {}
    for mode in ("energy-bud", "reduce-pc"):
        b = budget(mode, budget_j=500.0 * 10000, window_start_s=0.0, window_end_s=10000.0)
        v = view(4, 0.0, running=(("a", "0", 1000.0),))
        b.cea_j = 100_000.0
        b.begin_pass([], v)
        head = job("head", 4, 100.0)
        reserve(b, head, 1000.0, ProcSet((0, 3)), v)
        results[mode] = admit(b, job("short", 3, 50.0), ProcSet((1, 3)), v)
        b.release_head()
        assert admit(b, job("short", 3, 50.0), ProcSet((1, 3)), v)  # without reservation: fine
    assert results == {"energy-bud": True, "reduce-pc": False}


def test_energy_bud_reservation_protects_the_head():
    b = budget(budget_j=500.0 * 10000, window_start_s=0.0, window_end_s=10000.0)
    v = view(4, 0.0, running=(("a", "0", 1000.0),))
    b.cea_j = 5000.0  # pays a (−3.12 kJ by t=1000) and a 10 s job (1.03 kJ), not the head's 281 kJ debt
    b.begin_pass([], v)
    reserve(b, job("head", 4, 900.0), 1000.0, ProcSet((0, 3)), v)
    assert not admit(b, job("short", 1, 10.0), ProcSet(1), v)
    b.release_head()
    assert admit(b, job("short", 1, 10.0), ProcSet(1), v)


def test_reduce_pc_lowers_the_rate_by_J_over_q_minus_now():
    b = budget("reduce-pc", budget_j=500.0 * 10000, window_start_s=0.0, window_end_s=10000.0)
    v = view(4, 0.0, running=(("a", "0", 1000.0),))
    b.begin_pass([], v)
    head = job("head", 4, 100.0)
    reserve(b, head, 1000.0, ProcSet((0, 3)), v)
    J = 4 * (203.12 - 100.0) * 100.0
    assert b._cut == pytest.approx((J / 1000.0, 1000.0))


def test_unlimited_budget_admits_everything():
    b = budget()
    v = view(4, 0.0)
    assert admit(b, job("j", 4, None), ProcSet((0, 3)), v)


# ----------------------------------------------------------------- powercap
def test_powercap_checks_the_estimated_platform_power():
    cap = Powercap(budget_j=500.0 * 1000, window_start_s=100.0, window_end_s=1100.0)
    platform(cap)
    v = view(4, 0.0, running=(("a", "0", 5000.0),))
    cap.begin_pass([], v)
    # 1 computing + 3 idle = 503.12 W > 500: a 1-host job meeting the window may not start
    assert cap.platform_power_w(1) == pytest.approx(503.12)
    assert not admit(cap, job("j", 1, 500.0), ProcSet(1), v)
    assert admit(cap, job("j", 1, 50.0), ProcSet(1), v)  # ends before ts
    cap2 = Powercap(budget_j=700.0 * 1000, window_start_s=100.0, window_end_s=1100.0)
    platform(cap2)
    cap2.begin_pass([], v)
    assert admit(cap2, job("j", 1, 500.0), ProcSet(1), v)  # 606.24 W
    started(cap2, job("j", 1, 500.0), ProcSet(1), v)
    assert not admit(cap2, job("k", 1, 500.0), ProcSet(2), v)  # 709.36 W


def test_powercap_moves_the_heads_reservation_to_when_the_cap_lets_it_run():
    # 4 hosts, cap 710 W: at most 3 computing (3 × 203.12 + 100 = 709.36 W) inside [0, 10000)
    cap = Powercap(budget_j=710.0 * 10_000, window_start_s=0.0, window_end_s=10_000.0)
    platform(cap)
    v = view(4, 0.0, running=(("a", "0", 300.0), ("b", "1", 800.0)))
    cap.begin_pass([], v)
    # 2 hosts free now, but the head (2 hosts) fits under the cap only once a has ended
    assert earliest(cap, job("h", 2, 100.0), 0.0, v) == 300.0
    assert earliest(cap, job("h", 4, 100.0), 0.0, v) == 10_000.0  # never inside the window
    assert earliest(cap, job("h", 1, 100.0), 0.0, v) == 0.0
    # backfilling while h (2 hosts) is reserved at 300: a job still running at 300 must leave it room
    reserve(cap, job("h", 2, 100.0), 300.0, ProcSet((2, 3)), v)
    assert not admit(cap, job("j", 1, 1000.0), ProcSet(2), v)  # at 300: b + h + j = 4 hosts
    v2 = view(4, 0.0, running=(("a", "0", 300.0),))
    cap.begin_pass([], v2)
    reserve(cap, job("h", 2, 100.0), 300.0, ProcSet((2, 3)), v2)
    assert admit(cap, job("j", 1, 250.0), ProcSet(1), v2)  # ends before h's reservation
    cap.release_head()


def test_powercap_boots_for_a_later_job_only_if_it_leaves_the_head_its_room():
    """can_prepare applies can_start's rule while the head's reservation is made: a job booted for that
    still runs at the head's reservation must leave the head its room under the cap (the jobs prepared
    before it in the pass count there too); may_prepare rules out no job can_prepare admits."""
    import numpy as np

    # 6 hosts, cap 1020 W: at most 4 computing (4 × 203.12 + 2 × 100 = 1012.48 W) inside [0, 10000)
    cap = Powercap(budget_j=1020.0 * 10_000, window_start_s=0.0, window_end_s=10_000.0)
    platform(cap, 6)
    v = view(6, 0.0, running=(("a", "0", 300.0), ("b", "1", 5000.0)))
    cap.begin_pass([], v)
    head = job("h", 2, 100.0)
    reserve(cap, head, 300.0, ProcSet((4, 5)), v)  # at 300: b + h = 3 computing
    start_s = 150.0  # once booted

    def prepare(j: QueuedJob, hosts: ProcSet) -> bool:
        a = Assignment(hosts, 0, j.walltime_s)
        ok = cap.can_prepare(j, ProcSet(), ProcSet(), start_s, a, v)
        mask = cap.may_prepare(np.array([j.res]), np.array([j.walltime_s]), start_s, v)
        assert mask is None or bool(mask[0]) or not ok
        return ok

    assert prepare(job("short", 2, 100.0), ProcSet((2, 3)))  # ends at 250, before the head's reservation
    assert not prepare(job("long", 2, 1000.0), ProcSet((2, 3)))  # at 300: b + h + long = 5 > 4
    long1 = job("long1", 1, 1000.0)
    assert prepare(long1, ProcSet(2))  # at 300: b + h + long1 = 4
    cap.on_prepare(long1, ProcSet(2), ProcSet(), start_s, Assignment(ProcSet(2), 0, 1000.0), v)
    assert not prepare(job("long2", 1, 1000.0), ProcSet(3))  # long1 took the room left at 300
    cap.release_head()  # outside backfilling (the head itself): only the cap now
    assert prepare(job("long2", 1, 1000.0), ProcSet(3))


def test_easy_under_a_powercap_backfills_on_the_hosts_of_a_head_that_cannot_run_in_the_window():
    from wattsched.schedulers.state import StartJob

    cap = Powercap(budget_j=610.0 * 10_000, window_start_s=0.0, window_end_s=10_000.0)
    p = PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), admission=cap)
    p.start(4)
    p.on_submitted(job("h", 3, 100.0))  # 3 computing hosts: above the cap until te
    p.on_submitted(job("s", 2, 5000.0))
    # h's reservation is at te, not now: s may use h's hosts since it ends before te
    assert [d for d in p.schedule() if isinstance(d, StartJob)] == [StartJob("s", ProcSet((0, 1)))]


# ----------------------------------------------------------------- options and platform
@pytest.mark.parametrize("kwargs,option", [
    ({"budget_j": -1.0, "window_end_s": 10.0}, "budget_j"),
    ({"budget_fraction": 0.0, "window_end_s": 10.0}, "budget_fraction"),
    ({"budget_j": 1.0, "window_start_s": 10.0, "window_end_s": 5.0}, "window_end_s"),
    ({"budget_j": 1.0}, "window_end_s"),
    ({"monitoring_period_s": 0.0}, "monitoring_period_s"),
])
def test_bad_options(kwargs, option):
    with pytest.raises(OptionError, match=f"'{option}'") as error:
        EnergyBud(**kwargs)
    assert "\n" not in str(error.value)


def test_budget_below_the_idle_platform_needs_shutdown():
    with pytest.raises(OptionError, match="'budget_fraction'.*below the policy.s estimate of the platform held idle"):
        budget(budget_fraction=0.3, window_end_s=100.0)
    budget(budget_fraction=0.3, window_end_s=100.0, shutdown=True)  # fine with shutdown


def test_real_powers_and_pstates_from_the_platform():
    def start(props: dict, sleep_pstate: int | None = None) -> EnergyBudget:
        b = EnergyBud(budget_j=1e9, window_end_s=1e4)
        PolicyScheduler(order=Fcfs(), backfill=EasyBackfilling(), admission=b,
                        power=OpportunisticShutdown(sleep_pstate)).start(4, 0.0, [props] * 4)
        return b

    b = start(TAURUS_PROPS)
    assert (b.power_manager.sleep_pstate, b.power.sleep_w, b.power.switch_on_w) == (2, 9.75, 125.1743848996832)
    assert b.power.switch_off_w == pytest.approx(100.99672131147543)
    with pytest.raises(OptionError, match="'sleep_pstate' 7"):
        start(TAURUS_PROPS, 7)
    with pytest.raises(OptionError, match="'shutdown'.*no sleep_pstates"):
        start({"wattage_per_state": "95:190"})


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 11), st.integers(0, 3)), max_size=40))
def test_the_views_count_of_running_hosts_follows_the_jobs_as_they_start_and_end(steps) -> None:
    """``view.nb_running_hosts`` (what the budgets count as computing hosts: powercap's ``P̃platform``, energyBud's
    ``P̃``) is the hosts of the running jobs after any sequence of starts and ends, counted from the first read on
    and kept up to date then (a view given its running jobs directly counts them at its first read)."""
    view = ClusterView.idle_machine(16)
    k = 0
    for start, lo, width in steps:
        if start or not view.running:
            hosts = ProcSet((lo, lo + width), lo + width + 2)
            view.add_running(RunningJob(f"j{k}", hosts, 0.0, 10.0))
            k += 1
        else:
            view.remove_running(next(iter(view.running)))
        if k % 3 == 0:
            assert view.nb_running_hosts == sum(len(job.alloc) for job in view.running.values())
    assert view.nb_running_hosts == sum(len(job.alloc) for job in view.running.values())
    copy = ClusterView(now_s=0.0, nb_hosts=16, free=ProcSet(), running=dict(view.running))
    assert copy.nb_running_hosts == view.nb_running_hosts
