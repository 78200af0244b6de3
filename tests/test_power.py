"""Power managers (schedulers/power.py): opportunistic shutdown on hand-built states, through the core."""

from __future__ import annotations

import pytest
from procset import ProcSet

from schedulers.backfill import easy_backfill
from schedulers.budget import EnergyBudget
from schedulers.core import PolicyScheduler
from schedulers.order import fcfs
from schedulers.power import NoPowerManager, OpportunisticShutdown
from schedulers.state import QueuedJob, SetPState, StartJob
from wattsched.errors import OptionError

PROPS = {"wattage_per_state": "95:190, 9.75:9.75, 101:101, 125:125", "sleep_pstates": "1:2:3"}


def policy(n: int = 4, admission=None, props=None) -> PolicyScheduler:
    p = PolicyScheduler(order=fcfs, backfill=easy_backfill, admission=admission, power=OpportunisticShutdown())
    p.start(n, 0.0, [props or {}] * n if props is not None else None)
    return p


def test_idle_hosts_are_switched_off_and_the_sleep_pstate_is_the_platforms():
    p = policy(4, props=PROPS)
    assert p.power.sleep_pstate == 1 and p.sleep_pstates == {1}
    p.on_submitted(QueuedJob("a", 1, 100.0, 0.0))
    out = p.schedule()
    assert out == [StartJob("a", ProcSet(0)), SetPState(ProcSet((1, 3)), 1)]
    assert p.view.switching == ProcSet((1, 3)) and not p.view.free
    assert p.schedule() == []  # never switch a host that is switching
    p.on_pstate_changed(ProcSet((1, 3)), 1)
    assert p.view.off == ProcSet((1, 3))


def test_asleep_hosts_are_booted_for_the_head_which_waits_for_the_boot():
    p = policy(4)
    p.on_submitted(QueuedJob("a", 2, 100.0, 0.0))
    p.schedule()  # a on 0-1, 2-3 off
    p.on_pstate_changed(ProcSet((2, 3)), 13)
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
    p.on_pstate_changed(booting, 0)
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
    p2.on_pstate_changed(ProcSet((0, 3)), 13)  # everything asleep
    p2.on_submitted(QueuedJob("h", 4, 100.0, 0.0))
    p2.on_submitted(QueuedJob("s", 1, 10.0, 0.0))
    out = p2.schedule()
    assert out == [SetPState(ProcSet((0, 3)), 0)]
    pending = p2.power.pending_hosts(p2.view)
    assert [j.expected_end_s for j in pending] == [pytest.approx(151.52)]


def test_the_budget_can_refuse_a_boot():
    budget = EnergyBudget(budget_j=4 * 9.75 * 1000 + 1.0, window_start_s=0.0, window_end_s=1000.0, shutdown=True)
    p = policy(4, admission=budget)
    p.on_pstate_changed(ProcSet((0, 3)), 13)
    p.on_submitted(QueuedJob("h", 1, 100.0, 0.0))
    assert [d for d in p.schedule() if isinstance(d, SetPState)] == []  # cannot pay a boot
    assert budget.power_manager is p.power


def test_shutdown_needs_a_sleep_pstate_on_the_platform():
    with pytest.raises(OptionError, match="'shutdown'"):
        policy(2, props={"wattage_per_state": "95:190"})
    assert NoPowerManager().decide([], None) == []  # type: ignore[arg-type]
