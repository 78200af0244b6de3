"""ESC's power manager (schedulers/esc.py): each rule of the ESC paper's §2.5 on hand-built states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from procset import ProcSet

from wattsched.base.errors import OptionError
from wattsched.energy_models.esc import ESC
from wattsched.platforms.generate import speed_attribute, wattage_per_state_attribute
from wattsched.schedulers.backfill import EasyBackfilling, FcfsNoBackfill
from wattsched.schedulers.budget import EnergyBud
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.esc import EnergySavingCluster
from wattsched.schedulers.order import Fcfs
from wattsched.schedulers.placement import FirstFit, NonContiguous
from wattsched.schedulers.presets import build
from wattsched.schedulers.state import CallMeLater, QueuedJob, SetPState, StartJob

PROPS = {"speed_per_state": speed_attribute(ESC), "wattage_per_state": wattage_per_state_attribute(ESC),
         "wattage_off": "2.0", "sleep_pstates": "1:2:3"}
SLEEP = 1


def esc(n: int = 4, *, placement=None, backfill=None, admission=None, **options) -> PolicyScheduler:
    p = PolicyScheduler(order=Fcfs(), backfill=backfill or FcfsNoBackfill(), placement=placement or NonContiguous(),
                        admission=admission, power=EnergySavingCluster(**options))
    p.start(n, 0.0, [PROPS] * n)
    return p


def at(p: PolicyScheduler, t: float, *, call: bool = False) -> list:
    """A Batsim message at ``t`` (a REQUESTED_CALL when ``call``), then the pass."""
    p.set_time(t)
    if call:
        p.on_call()
    return p.schedule()


def switches(decisions: list) -> list[SetPState]:
    return [d for d in decisions if isinstance(d, SetPState)]


def asleep(p: PolicyScheduler, hosts: ProcSet) -> None:
    p.on_hosts_changed(hosts, SLEEP)


# ------------------------------------------------------------------ the platform and the pass
def test_platform_gives_the_sleep_pstate_and_the_transition_times():
    p = esc(2)
    assert (p.power.sleep_pstate, p.power.switch_on_s, p.power.switch_off_s) == (1, 555.0, 480.0)
    with pytest.raises(OptionError, match="scheduler 'esc': the platform has no sleep_pstates"):
        PolicyScheduler(order=Fcfs(), backfill=FcfsNoBackfill(), power=EnergySavingCluster()).start(
            2, 0.0, [{"wattage_per_state": "150:230"}] * 2)


def test_passes_run_every_period_only_and_stop_once_the_work_is_done():
    p = esc(2, period_s=60.0, idle_s=1000.0)
    # t = 0: nothing to do; the next pass that can act is the first after 1000 s of idleness
    assert p.schedule() == [CallMeLater(1020.0)]
    p.set_time(10.0)
    p.on_submitted(QueuedJob("a", 1, None, 10.0))
    assert p.schedule() == [StartJob("a", ProcSet(0))]  # no pass at 10: not a multiple of the period
    p.set_time(500.0)
    p.on_completed("a")
    p.on_no_more_jobs()
    assert p.schedule() == []  # the work is done: no call, and the one for 1020 was already asked
    assert at(p, 1020.0, call=True) == [SetPState(ProcSet(1), SLEEP)]  # host 0 idle since 500 only


def test_only_passes_at_which_a_rule_may_act_are_asked_for():
    p = esc(2, period_s=60.0, idle_s=1e9)
    p.on_submitted(QueuedJob("a", 2, None, 0.0))
    assert p.schedule() == [StartJob("a", ProcSet((0, 1)))]
    p.set_time(5.0)
    p.on_submitted(QueuedJob("b", 1, None, 5.0))
    assert p.schedule() == []  # b waits for busy nodes, none is off, nothing is idle: no rule can act
    q = esc(2, period_s=60.0, idle_s=1e9, every_period=True)
    q.on_submitted(QueuedJob("a", 2, None, 0.0))
    assert q.schedule() == [StartJob("a", ProcSet((0, 1))), CallMeLater(60.0)]
    # a node asleep and a job waiting: the pass at which the group's mean wait exceeds 3600 s
    r = esc(2, period_s=60.0, idle_s=1e9)
    asleep(r, ProcSet(1))
    r.on_submitted(QueuedJob("a", 1, None, 0.0))
    r.schedule()
    r.set_time(10.0)
    r.on_submitted(QueuedJob("b", 1, None, 10.0))
    assert r.schedule() == [CallMeLater(3660.0)]  # 3660 - 10 > 3600; 3600 - 10 is not
    assert switches(at(r, 3660.0, call=True)) == [SetPState(ProcSet(1), 0)]


# ------------------------------------------------------------------ switch-off rules (§2.5.2)
def test_a_node_idle_one_second_short_of_idle_s_stays_on():
    p = esc(1, period_s=1.0, idle_s=300.0)
    assert at(p, 299.0, call=True) == [CallMeLater(301.0)]  # idle 299 s < 300 s
    assert at(p, 300.0, call=True) == []  # idle exactly 300 s: not longer (the call for 301 is asked)
    assert switches(at(p, 301.0, call=True)) == [SetPState(ProcSet(0), SLEEP)]


def test_idle_time_counts_from_the_last_job_end():
    p = esc(2, period_s=10.0, idle_s=100.0)
    p.on_submitted(QueuedJob("a", 1, None, 0.0))
    p.schedule()  # a on host 0
    p.set_time(50.0)
    p.on_completed("a")
    p.schedule()
    # host 1 idle since 0 goes at 110; host 0, idle since 50, at 160
    assert switches(at(p, 110.0, call=True)) == [SetPState(ProcSet(1), SLEEP)]
    assert switches(at(p, 150.0, call=True)) == []
    assert switches(at(p, 160.0, call=True)) == [SetPState(ProcSet(0), SLEEP)]


def test_the_least_recently_used_idle_node_goes_first():
    # lower threshold 10 s and nobody waits: one node per pass goes off, least recently used first
    p = esc(3, period_s=10.0, idle_s=1e9, lower_wait_s=10.0, upper_wait_s=None)
    for job, host_end in (("a", 30.0), ("b", 10.0), ("c", 20.0)):
        p.on_submitted(QueuedJob(job, 1, None, 0.0))
    p.schedule()  # a on 0, b on 1, c on 2
    for job, t in (("b", 5.0), ("c", 6.0), ("a", 7.0)):
        p.set_time(t)
        p.on_completed(job)
        p.schedule()
    assert switches(at(p, 10.0, call=True)) == [SetPState(ProcSet(1), SLEEP)]  # idle since 5
    assert switches(at(p, 20.0, call=True)) == [SetPState(ProcSet(2), SLEEP)]  # since 6
    assert switches(at(p, 30.0, call=True)) == [SetPState(ProcSet(0), SLEEP)]  # since 7


def test_idle_nodes_go_least_recently_used_first_down_to_min_on():
    p = esc(4, period_s=10.0, idle_s=50.0, min_on=2)
    for k in range(4):
        p.on_submitted(QueuedJob(f"j{k}", 1, None, 0.0))
    p.schedule()
    for host, t in ((3, 1.0), (0, 2.0), (2, 3.0), (1, 4.0)):
        p.set_time(t)
        p.on_completed(f"j{host}")
        p.schedule()
    assert switches(at(p, 60.0, call=True)) == [SetPState(ProcSet(0, 3), SLEEP)]  # the two least recently used


def test_no_node_the_widest_queued_job_needs_is_switched_off():
    p = esc(3, period_s=10.0, idle_s=50.0)
    p.on_submitted(QueuedJob("long", 1, None, 0.0))
    p.schedule()  # long on host 0, hosts 1-2 idle since 0
    p.set_time(1.0)
    p.on_submitted(QueuedJob("wide", 3, None, 1.0))
    p.schedule()  # wide waits for host 0
    assert switches(at(p, 60.0, call=True)) == []  # 1-2 idle 60 s > 50 s, but wide needs all three on


# ------------------------------------------------------------------ switch-on rules (§2.5.1)
def test_rule1_a_job_that_needs_nodes_that_are_off_boots_them_at_the_next_pass():
    p = esc(4, period_s=60.0)
    asleep(p, ProcSet((1, 3)))
    p.on_submitted(QueuedJob("a", 1, None, 0.0))
    assert p.schedule()[0] == StartJob("a", ProcSet(0))
    p.set_time(70.0)
    p.on_submitted(QueuedJob("w", 3, None, 70.0))
    assert p.schedule() == [CallMeLater(120.0)]  # not a pass time
    # w needs 3 nodes, 1 is on: 2 asleep nodes are booted, in hostname (= id) order
    assert switches(at(p, 120.0, call=True)) == [SetPState(ProcSet((1, 2)), 0)]
    assert p.power.log[-1][2:] == ("on", "rule 1: job w needs 3 nodes, 1 is on")
    assert switches(at(p, 180.0, call=True)) == []  # booting nodes count as on
    p.set_time(675.0)
    p.on_hosts_changed(ProcSet((1, 2)), 0)
    p.on_completed("a")
    assert p.schedule()[0] == StartJob("w", ProcSet((0, 2)))


def test_rule1_does_not_fire_for_a_job_waiting_for_busy_nodes():
    p = esc(4, period_s=60.0, upper_wait_s=None)
    asleep(p, ProcSet((2, 3)))
    p.on_submitted(QueuedJob("a", 2, None, 0.0))
    p.schedule()  # a on 0-1
    p.set_time(1.0)
    p.on_submitted(QueuedJob("b", 2, None, 1.0))
    p.schedule()
    assert switches(at(p, 60.0, call=True)) == []  # b's nodes are busy, not off: it waits
    assert switches(at(p, 6000.0, call=True)) == []


def test_rule1_with_a_contiguous_placement_boots_what_the_placement_needs():
    p = esc(4, period_s=60.0, placement=FirstFit())
    asleep(p, ProcSet(1))
    asleep(p, ProcSet(3))
    p.on_submitted(QueuedJob("a", 2, None, 0.0))
    # hosts 0 and 2 are on but not contiguous: a cannot be placed without booting host 1
    assert switches(p.schedule()) == [SetPState(ProcSet(1), 0)]


def test_rule2_a_group_whose_mean_wait_crosses_its_threshold_gets_nodes_in_hostname_order():
    p = esc(4, period_s=1.0, groups={"physics": {"upper_wait_s": 100.0}}, user_groups={"ann": "physics"},
            upper_wait_s=None)
    asleep(p, ProcSet((1, 3)))
    p.on_submitted(QueuedJob("run", 1, None, 0.0, user="bob"))
    p.schedule()  # run on host 0 (the only node on)
    p.on_submitted(QueuedJob("x", 1, None, 0.0, user="ann"))
    p.on_submitted(QueuedJob("y", 1, None, 0.0, user="bob"))
    p.schedule()
    assert switches(at(p, 100.0, call=True)) == []  # physics waits 100 s on average: not above
    assert p.power.mean_wait_s("physics", 100.0) == 100.0
    # 101 s: x (physics, first in the queue) needs one node: the first asleep in hostname order
    assert switches(at(p, 101.0, call=True)) == [SetPState(ProcSet(1), 0)]
    assert p.power.log[-1][3] == "rule 2: group 'physics' waits 101 s on average"
    assert switches(at(p, 102.0, call=True)) == []  # the boot covers x; bob's default group has no threshold


def test_rule2_counts_the_jobs_ahead_of_the_group_in_the_queue():
    p = esc(6, period_s=1.0, groups={"g": {"upper_wait_s": 10.0}}, user_groups={"ann": "g"}, upper_wait_s=None)
    asleep(p, ProcSet((2, 5)))
    p.on_submitted(QueuedJob("run", 2, None, 0.0))
    p.schedule()  # run on 0-1
    p.on_submitted(QueuedJob("h", 2, None, 0.0, user="bob"))
    p.on_submitted(QueuedJob("x", 1, None, 5.0, user="ann"))
    p.schedule()
    # at 16 x has waited 11 s: FCFS starts h then x, so 3 nodes are needed (none idle, none booting)
    assert switches(at(p, 16.0, call=True)) == [SetPState(ProcSet((2, 4)), 0)]


def test_rule3_a_user_with_too_many_queued_jobs_gets_nodes():
    p = esc(4, period_s=10.0, max_queued=2, upper_wait_s=None)
    asleep(p, ProcSet((1, 3)))
    p.on_submitted(QueuedJob("run", 1, None, 0.0))
    p.schedule()
    for k in range(4):
        p.on_submitted(QueuedJob(f"q{k}", 1, None, 1.0, user="ann"))
    p.schedule()
    # ann has 4 queued jobs, 2 allowed: nodes for her first 2 jobs are booted
    assert switches(at(p, 10.0, call=True)) == [SetPState(ProcSet((1, 2)), 0)]
    assert p.power.log[-1][3] == "rule 3: user 'ann' has too many queued jobs"


def test_a_switching_node_is_never_switched_again():
    p = esc(2, period_s=10.0, idle_s=5.0)
    assert switches(at(p, 10.0, call=True)) == [SetPState(ProcSet((0, 1)), SLEEP)]  # switching off until 490
    p.set_time(20.0)
    p.on_submitted(QueuedJob("a", 1, None, 20.0))
    p.schedule()
    assert switches(at(p, 30.0, call=True)) == []  # a needs a node, but both still switch off
    p.set_time(490.0)
    p.on_hosts_changed(ProcSet((0, 1)), SLEEP)
    assert switches(at(p, 490.0, call=True)) == [SetPState(ProcSet(0), 0)]  # asleep now: booted


def test_no_switch_off_in_a_pass_that_boots():
    p = esc(4, period_s=10.0, idle_s=5.0)
    asleep(p, ProcSet((2, 3)))
    p.on_submitted(QueuedJob("w", 4, None, 0.0))
    out = switches(p.schedule())
    assert out == [SetPState(ProcSet((2, 3)), 0)]  # hosts 0-1 idle stay on: w needs them


def test_min_on_nodes_are_booted_and_kept():
    p = esc(4, period_s=10.0, idle_s=5.0, min_on=3)
    asleep(p, ProcSet((0, 3)))
    assert switches(at(p, 10.0, call=True)) == [SetPState(ProcSet((0, 2)), 0)]


def test_min_on_beyond_the_platform_is_refused():
    """``min_on`` larger than the platform could never be kept: refused naming the option and both counts (it was
    accepted, and every node kept on)."""
    esc(4, min_on=4)
    with pytest.raises(OptionError, match=r"option 'min_on' of esc: 5 nodes kept on, but the platform has 4"):
        esc(4, min_on=5)


def test_the_budget_is_asked_before_a_boot():
    # a budget too small to pay a boot inside its window: no boot (the window opens once the hosts, on at 0 s, can be
    # asleep: a budget below that is refused, hunt 39)
    budget = EnergyBud(budget_j=4 * 2.0 * 10_000 + 1.0, window_start_s=480.0, window_end_s=10_480.0)
    p = esc(4, period_s=10.0, admission=budget, backfill=EasyBackfilling())
    asleep(p, ProcSet((0, 3)))
    p.set_time(480.0)
    p.on_submitted(QueuedJob("a", 1, 100.0, 480.0))
    assert switches(p.schedule()) == []
    assert budget.power_manager is p.power
    assert p.power.kept_hosts(p.view) == {}


def test_idle_nodes_are_kept_until_the_pass_that_switches_them_off():
    p = esc(2, period_s=60.0, idle_s=100.0)
    assert p.power.kept_hosts(p.view) == {0: 120.0, 1: 120.0}
    p2 = esc(2, idle_s=math.inf)
    assert p2.power.kept_hosts(p2.view) == {0: math.inf, 1: math.inf}


def test_kept_nodes_are_the_same_mapping_until_a_node_becomes_idle_or_busy():
    """An energy budget rebuilds its segments of the kept nodes for every new mapping (issue 15): a pass at a
    period's tick that changes nothing keeps the mapping (the same object), a job's start and end give new ones,
    with the ended job's node kept from its end."""
    p = esc(2, period_s=60.0, idle_s=1000.0)
    p.schedule()
    kept = p.power.kept_hosts(p.view)
    assert kept == {0: 1020.0, 1: 1020.0}
    version = p.power.plan_version
    assert not switches(at(p, 60.0, call=True))  # a pass at a tick that switches nothing
    assert p.power.plan_version != version and p.power.kept_hosts(p.view) is kept
    p.set_time(100.0)
    p.on_submitted(QueuedJob("a", 1, None, 100.0))
    assert p.schedule() == [StartJob("a", ProcSet(0))]
    assert p.power.kept_hosts(p.view) == {1: 1020.0}
    p.set_time(500.0)
    p.on_completed("a")
    p.schedule()
    assert p.power.kept_hosts(p.view) == {0: 1560.0, 1: 1020.0}  # idle since 500: the first pass after 1,500 s


# ------------------------------------------------------------------ options
@pytest.mark.parametrize("options,fragment", [
    ({"period_s": -5}, "option 'period_s' of esc is out of range, got -5"),
    ({"period_s": 0}, "option 'period_s' of esc is out of range, got 0"),
    ({"lower_wait_s": 900, "upper_wait_s": 600}, "lower_wait_s 900 is above upper_wait_s 600"),
    ({"groups": {"g": {"lower_wait_s": 50, "upper_wait_s": 10}}}, "group 'g': lower_wait_s 50 is above upper_wait_s 10"),
    ({"user_groups": {"ann": "physcis"}, "groups": {"physics": {}}},
     "user 'ann' is in group \"physcis\", which is not defined (groups: default, physics"),
    ({"groups": {"g": {"upper": 5}}}, "group 'g': unknown key 'upper'"),
    ({"user_groups": {"": "physics"}, "groups": {"physics": {}}}, "option 'user_groups': the key \"\" is an empty user name"),
    ({"user_groups": {" ": "physics"}, "groups": {"physics": {}}}, "the key \" \" is a blank user name"),
    ({"groups": {"g": 5}}, "group 'g' must be an object"),
    ({"groups": {"": {}}, "user_groups": {"ann": ""}}, "option 'groups': the key \"\" is an empty group name"),
    ({"groups": {" ": {"upper_wait_s": 5}}}, "option 'groups': the key \" \" is a blank group name"),
    ({"groups": {"g": {"max_queued": 2.5}}}, "'max_queued' must be an integer"),
    ({"groups": {"g": {"upper_wait_s": -1}}}, "'upper_wait_s' must not be negative"),
    ({"groups": [1]}, "option 'groups' of esc must be a JSON object"),
])
def test_bad_options_give_one_clear_line(options, fragment):
    with pytest.raises(OptionError) as info:
        build("esc", options)
    message = str(info.value)
    assert "\n" not in message and fragment in message, message


def test_a_group_inherits_the_default_thresholds_and_null_disables_a_rule():
    power = EnergySavingCluster(upper_wait_s=600.0, max_queued=5,
                                groups={"a": {"max_queued": None}, "b": {"upper_wait_s": 60}},
                                user_groups={"u1": "a", "u2": "b"})
    assert (power.groups["a"].upper_wait_s, power.groups["a"].max_queued) == (600.0, None)
    assert (power.groups["b"].upper_wait_s, power.groups["b"].max_queued) == (60.0, 5)
    assert power.group_of(QueuedJob("j", 1, None, 0.0, user="u1")) == "a"
    assert power.group_of(QueuedJob("j", 1, None, 0.0, user="zed")) == "default"
    assert power.group_of(QueuedJob("j", 1, None, 0.0)) == "default"


def test_a_period_that_is_not_positive_is_refused_when_built_directly():
    with pytest.raises(OptionError, match="option 'period_s' of esc must be a positive number of seconds, got 0"):
        EnergySavingCluster(period_s=0.0)


@pytest.mark.parametrize("period_s, idle_s", [(60.0, 1800.0), (7.0, 0.0), (0.3, 10.1), (60.0, math.inf)])
def test_idle_deadlines_of_many_nodes_are_the_one_node_floats(period_s, idle_s):
    """The vectorised idle deadlines (every idle node's, for an energy budget's plan) are the very floats of
    the scalar rule, on idle starts at, just before and just after pass times."""
    esc = EnergySavingCluster(period_s=period_s, idle_s=idle_s)
    since = sorted({max(0.0, k * period_s + d) for k in range(0, 50, 7) for d in (-1e-9, 0.0, 1e-9, 0.5, -idle_s)}
                   | {0.0, 1e-7, 123.456})
    expected = [esc._idle_deadline(t) for t in since]
    assert esc._idle_deadlines(np.array(since)).tolist() == expected
