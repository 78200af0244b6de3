"""The schedulers on odd but valid inputs: a combination of pieces, an option at its edge or a workload that
Batsim accepts either runs to the end or is refused in one line before the run (no traceback, no ProtocolError
from inside the run, no job silently killed, no output left behind)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_bad_inputs_cli import _fails
from wattsched import api
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
EAMC_PLATFORM = str(ROOT / "tests" / "fixtures" / "eamc" / "platform.xml")
EAMC_WORKLOAD = str(ROOT / "tests" / "fixtures" / "eamc" / "workload.json")
TAURUS_16 = str(ROOT / "platforms" / "taurus_16.xml")
UPAS_16 = str(ROOT / "platforms" / "upas_16.xml")
DEMO = str(ROOT / "workloads" / "demo_taurus16.json")


# ------------------------------------------------------------------ 1. ESC behind a partitioned placement
@pytest.mark.parametrize("options", [
    {"order": "favoured-partition", "backfill": "fcfs", "placement": "partitions", "power": "esc"},
    {"order": "eamc-reorder", "placement": "partitions", "power": "esc", "frequency": "min-energy"},
    {"order": "fcfs", "placement": "partitions", "power": "esc"},
], ids=["deadlock", "index-error", "fcfs"])
def test_esc_with_a_partitioned_placement_is_refused_before_the_run(options: dict, tmp_path, capsys) -> None:
    """ESC boots nodes in hostname order: behind 'partitions' a job waited for ever on a partition left asleep
    (a deadlock reported mid-run), or its boot was judged on hosts of two partitions (IndexError)."""
    prefix = tmp_path / "out" / "run"
    _fails(["run", EAMC_PLATFORM, EAMC_WORKLOAD, "-s", "compose", "-o", json.dumps(options), "-e", str(prefix), "-q"],
           capsys, "power 'esc'", "placement 'partitions'")
    assert not prefix.parent.exists() or not any(prefix.parent.iterdir())


def test_esc_with_a_contiguous_placement_still_runs_on_partitions() -> None:
    result = api.simulate(EAMC_PLATFORM, EAMC_WORKLOAD, "compose", {"placement": "non-contiguous", "power": "esc"})
    assert set(result.jobs["final_state"]) == {"COMPLETED_SUCCESSFULLY"}


# ------------------------------------------------------------------ 2. EAMC frequencies without 'partitions'
@pytest.mark.parametrize("frequency", ["eamc", "min-runtime", "min-energy"])
def test_eamc_frequency_behind_another_placement_kills_no_job(frequency: str) -> None:
    """A job slowed down by an EAMC frequency kept its workload walltime (dynamic jobs were not enabled
    unless the placement was 'partitions') and was killed at it."""
    result = api.simulate(EAMC_PLATFORM, EAMC_WORKLOAD, "compose",
                          {"order": "fcfs", "placement": "first-fit", "frequency": frequency})
    assert "COMPLETED_WALLTIME_REACHED" not in set(result.jobs["final_state"])


def test_eamc_frequency_refuses_a_batsim_without_dynamic_jobs() -> None:
    from wattsched.base.errors import OptionError
    from wattsched.schedulers.presets import build
    from wattsched.simulator.platform import load_platform

    policy = build("compose", {"order": "fcfs", "placement": "first-fit", "frequency": "min-energy"})
    assert policy.needs_dynamic_jobs
    platform = load_platform(EAMC_PLATFORM)
    with pytest.raises(OptionError, match="frequency 'min-energy'.*dynamic jobs"):
        policy.start(len(platform.hosts), properties=[h.properties for h in platform.hosts])


# ------------------------------------------------------------------ 3. an empty workload
@pytest.mark.parametrize("platform, scheduler", [(UPAS_16, "upas"), (EAMC_PLATFORM, "eamc-priority-inc"),
                                                 (TAURUS_16, "easy-backfill")])
def test_an_empty_workload_ends_with_dynamic_jobs_too(platform: str, scheduler: str, tmp_path) -> None:
    """Batsim's submitter says goodbye even without jobs: NOTIFY no_more_static_job_to_submit comes, and a
    scheduler that registers jobs can close the registration (it was a deadlock reported at t=0)."""
    workload = tmp_path / "empty.json"
    workload.write_text(json.dumps({"nb_res": 16, "jobs": [], "profiles": {}}))
    result = api.simulate(platform, str(workload), scheduler)
    assert len(result.jobs) == 0


def test_an_empty_workload_gets_its_notify(tmp_path) -> None:
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"nb_res": 16, "jobs": [], "profiles": {}}))
    sim = Simulation(load_platform(TAURUS_16), load_workload(path))
    first = sim.start()
    assert [e["type"] for e in first["events"]] == ["SIMULATION_BEGINS"]
    second = sim.step({"now": 0.0, "events": []})
    assert [e["data"].get("type") for e in second["events"]] == ["no_more_static_job_to_submit"]


# ------------------------------------------------------------------ 4. ESC's huge durations mean never
@pytest.mark.parametrize("options", [{"idle_s": 1e300}, {"period_s": 1e300}, {"upper_wait_s": 1e300},
                                     {"idle_s": 2e10}, {"lower_wait_s": 1e300, "upper_wait_s": 1e300}])
def test_esc_huge_durations_mean_never(options: dict, tmp_path, capsys) -> None:
    """A pass beyond the times a simulation reaches was asked for (CALL_ME_LATER at 1e300 s), which the
    simulator refused mid-run."""
    prefix = tmp_path / "run"
    assert main(["run", TAURUS_16, DEMO, "-s", "esc", "-o", json.dumps(options), "-e", str(prefix), "-q"]) == 0
    assert "error" not in capsys.readouterr().err


# ------------------------------------------------------------------ 5. a run that goes past the time bound
def test_a_run_past_the_time_bound_is_named_as_the_simulations_not_the_schedulers(tmp_path, capsys) -> None:
    """A powercap window ending at the bound (1e10 s) makes the wide job wait until then: the simulation then
    reaches 1e10 + 100 s. The error said "the scheduler's reply ...: now 1e+10 s ... at most 1e+10 s"."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 16, "profiles": {"p": {"type": "delay", "delay": 100}},
                                    "jobs": [{"id": "1", "subtime": 0, "res": 16, "profile": "p"}]}))
    prefix = tmp_path / "run"
    options = {"window_start_s": 0, "window_end_s": 1e10, "budget_fraction": 0.5}
    text = _fails(["run", TAURUS_16, str(workload), "-s", "powercap", "-o", json.dumps(options), "-e", str(prefix)],
                  capsys, "the simulation reached t=10000000100 s", "JOB_COMPLETED", "WATTSCHED_LIMIT_TIME_S")
    assert "reply" not in text and "1e+10," not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]
