"""Per-job energy and decayed per-user usage of energy_models/accounting.py (EFS paper §III)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from procset import ProcSet

from wattsched.energy_models.accounting import (
    DecayedUsage,
    job_energy_j,
    job_power_w,
    parse_energy_factor,
    parse_user,
)
from wattsched.energy_models.power import NodeModel, PlatformPower
from wattsched.energy_models.taurus import TAURUS

ROOT = Path(__file__).resolve().parent.parent
HOUR = 3600.0


# ------------------------------------------------------------------------------------------- decay
def test_usage_halves_after_one_half_life() -> None:
    usage = DecayedUsage(half_life_s=7 * 86400.0)
    usage.charge("alice", 1000.0, at_s=0.0)
    assert usage.usage("alice", 7 * 86400.0) == 500.0
    assert usage.usage("alice", 14 * 86400.0) == 250.0
    assert usage.usage("alice", 0.0) == 1000.0
    assert usage.usage("bob", 10.0) == 0.0


def test_decay_is_exact_not_slurms_first_order_approximation() -> None:
    hl = 3600.0
    usage = DecayedUsage(half_life_s=hl)
    usage.charge("u", 1.0, 0.0)
    t = 10 * hl
    assert usage.usage("u", t) == pytest.approx(2 ** -10, rel=1e-12)
    slurm = (1 - 0.693 / hl) ** t  # SLURM's decay_factor per second, applied t times
    assert abs(slurm - 2 ** -10) / 2 ** -10 > 1e-4  # the approximation we do not copy differs


def test_reading_does_not_change_the_usage() -> None:
    a, b = DecayedUsage(1000.0), DecayedUsage(1000.0)
    for u in (a, b):
        u.charge("x", 5.0, 0.0)
    for t in (10.0, 250.0, 777.0):
        a.usage("x", t)  # reads in between
    a.charge("x", 1.0, 800.0)
    b.charge("x", 1.0, 800.0)
    assert a.usage("x", 2000.0) == pytest.approx(b.usage("x", 2000.0), rel=1e-14)


def test_a_rate_accrues_the_integral_of_the_decay() -> None:
    hl = 500.0
    usage = DecayedUsage(hl)
    usage.start_rate("u", 3.0, 100.0)
    # ∫_100^t 3·2^-(t-τ)/hl dτ, numerically
    t, n = 900.0, 200_000
    step = (t - 100.0) / n
    numeric = sum(3.0 * 2 ** (-(t - (100.0 + (i + 0.5) * step)) / hl) * step for i in range(n))
    at_t = usage.usage("u", t)
    assert at_t == pytest.approx(numeric, rel=1e-9)
    usage.stop_rate("u", 3.0, t)
    assert usage.usage("u", t + hl) == pytest.approx(at_t / 2, rel=1e-12)


def test_without_decay_running_and_end_charges_agree() -> None:
    running, end = DecayedUsage(math.inf), DecayedUsage(math.inf)
    running.start_rate("u", 4.0, 10.0)
    running.start_rate("u", 2.0, 20.0)
    running.stop_rate("u", 2.0, 70.0)
    running.stop_rate("u", 4.0, 110.0)
    end.charge("u", 2.0 * 50.0, 70.0)
    end.charge("u", 4.0 * 100.0, 110.0)
    assert running.usage("u", 500.0) == end.usage("u", 500.0) == 500.0
    assert running.total(500.0) == 500.0


def test_half_life_must_be_positive() -> None:
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="half_life_s must be > 0"):
            DecayedUsage(bad)


# ------------------------------------------------------------------------------------------ fields
@pytest.mark.parametrize("value,account", [("alice", "alice"), (7, "7"), (7.5, "7.5"), (-1, "-1"), (None, None)])
def test_user_field(value, account) -> None:
    assert parse_user(value) == account


@pytest.mark.parametrize("value", [True, [1], {"a": 1}, math.nan])
def test_user_field_refused(value) -> None:
    with pytest.raises(ValueError, match="string or a"):
        parse_user(value)


@pytest.mark.parametrize("value,kind", [("", "an empty"), ("  ", "a blank"), ("\t", "a blank")])
def test_user_field_naming_no_account_is_refused(value, kind) -> None:
    """An empty or blank user is no account a fair-share ``shares`` or an ESC ``user_groups`` entry could name
    (both refuse an empty user name): the workload is refused, as other bad ``user`` values are."""
    with pytest.raises(ValueError, match=f"must name an account, got {kind} string"):
        parse_user(value)


def test_energy_factor_field() -> None:
    assert parse_energy_factor(None) == 1.0
    assert parse_energy_factor(0.7) == 0.7
    for bad in (0, -0.3, "0.7", True, math.inf):
        with pytest.raises(ValueError, match="> 0"):
            parse_energy_factor(bad)


# -------------------------------------------------------------------------------------- job energy
def test_job_energy_is_power_of_the_pstate_times_run_time_times_factor() -> None:
    power = PlatformPower.uniform(TAURUS.node_model, 8)
    hosts = ProcSet((2, 4))
    full0 = TAURUS.node_model.full_w[0]
    assert job_power_w(power, hosts, 0) == pytest.approx(3 * full0)
    assert job_energy_j(power, hosts, 0, 100.0) == pytest.approx(power.job_energy_j(hosts, 0, 100.0))
    assert job_energy_j(power, hosts, 0, 100.0, factor=0.7) == pytest.approx(0.7 * 3 * full0 * 100.0)
    assert job_energy_j(power, hosts, 5, 10.0) == pytest.approx(3 * TAURUS.node_model.full_w[5] * 10.0)


def test_job_energy_with_per_host_pstates_and_two_kinds_of_hosts() -> None:
    small = NodeModel((1e8, 5e7), (10.0, 5.0), (100.0, 40.0))
    big = NodeModel((2e8, 1e8), (20.0, 10.0), (300.0, 120.0))
    power = PlatformPower((small, big), __import__("numpy").array([0, 0, 1, 1], dtype="int32"))
    pstates = [0, 1, 0, 1]
    assert job_power_w(power, ProcSet((0, 3)), pstates) == 100.0 + 40.0 + 300.0 + 120.0
    assert job_power_w(power, ProcSet((1, 2)), 1) == 40.0 + 120.0


def test_accounted_energy_equals_batsims_per_job_energy(tmp_path) -> None:
    """The energy an EnergyFairShare order charges each job (factor 1, charged at its end, no decay) equals
    the simulator's consumed_energy of that job in _jobs.csv."""
    from wattsched.schedulers.protocol import BatsimTranslator
    from wattsched.schedulers.presets import build
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.outputs import write_outputs
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    policy = build("efs", {"half_life_s": 1e300})
    order = policy.order
    charged: dict[str, float] = {}
    original = order.on_completed

    def spy(job, state, view):
        before = order.usage["energy"].usage(job.user, view.now_s)
        original(job, state, view)
        charged[job.id.split("!")[1]] = order.usage["energy"].usage(job.user, view.now_s) - before

    order.on_completed = spy  # type: ignore[method-assign]
    sim = Simulation(load_platform(ROOT / "platforms" / "taurus_16.xml"),
                     load_workload(ROOT / "workloads" / "demo_taurus16.json"))
    run_inprocess(sim, BatsimTranslator(policy))
    write_outputs(sim, tmp_path / "out")
    with open(tmp_path / "out_jobs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())["jobs"]) == len(charged)
    for row in rows:
        assert charged[row["job_id"]] == pytest.approx(float(row["consumed_energy"]), rel=1e-9), row["job_id"]
