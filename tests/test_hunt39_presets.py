"""Bad inputs hunt 39: extreme (legal and illegal) workloads under every preset.

* before: a run whose hosts all sleep at 0 W for a long time (UPAS's sleep pstate, ``shutdown`` on, a job submitted
  at 1e9 s) wrote an energy that falls (``4511.304348`` at 15.33 s, ``4511.304334`` at 1e9 s, ``epower``
  ``-0.000000``): the jobs' dynamic powers, added to the platform's and taken away again, left -1.4e-14 W. ``wattsched
  run`` then refused its own outputs (``..._consumed_energy.csv: line 20, column 'energy': lower than the row
  before``, exit 2). Now a power below 0 is integrated as 0.
* before: ``upas`` (and ``min-energy``, any frequency choice that slows a job down) on a job whose walltime is near the
  bound of any time (1e10 s, ``WATTSCHED_LIMIT_TIME_S``) stopped the run: the replacement it registers has the
  walltime stretched beyond the bound (``REGISTER_JOB resized!w0.4: job 'resized!w0.4'.walltime: 16428571428.571428
  must be ≤ 1e+10``), where EASY runs the workload. Now the registered walltime is capped at the bound.
* before: ``energy-bud``, ``reduce-pc`` and ``powercap`` with ``shutdown`` took a budget below anything the platform
  can draw over the window (``budget_j: 0``; without shutdown such a budget is refused), then exceeded it. Now
  refused before the run, on one line: the least the platform can draw is every host switched off at 0 s, then
  asleep (or idle all along when that is less).

Checked and found clean (every preset, ``compose`` with ESC, UPAS, EFS and the budgets, on Taurus, UPAS, ESC and EAMC
platforms of 1 to 57 hosts, a platform of one pstate and one started at its lowest pstate): a job as wide as the
machine, wider (rejected by every preset, as EASY does), ``res`` 0 and walltimes 0 (refused on loading), no
walltime, -1, walltimes below the run time (killed), 1e10 (and 1e12: refused), subtimes 0, 1e-300, 1e9,
999999999.9999999, 0.1234567890123456789, jobs of no work (cpu 0, ``parallel_homogeneous_total`` 0, ``parallel`` of
zeros, composed of them), 40 identical jobs at one time, users absent, numeric, 1e300, non-ASCII, with commas or
quotes (taken) and null, empty, blank, objects, lists, booleans (refused on one line for every preset), jobs whose
run at UPAS's or EAMC's gear exceeds their walltime (stretched with their β; EAMC's never killed), budgets of
fractions 0 (refused), 0.01 (refused without shutdown), 1 and 5, windows before the first job, after the last,
of 1e-6 s and to 1e10 s, monitoring periods of 1 s and 1e10 s, ESC with every node busy, idle_s 0, min_on above the
platform (refused) and huge periods. Energies never negative nor NaN; ``_schedule.csv`` counts agree with
``_jobs.csv``; no job before its subtime, past its walltime, on a busy host or on a sleeping one.

Noticed and left (see the hunt's report): ``wattsched run`` on an EAMC platform refuses, for every scheduler, a job
wider than its partitions (EASY runs it through the API) and one wider than the whole platform (every preset
rejects it, EAMC's too, as the README says); ``powercap`` with shutdown under a budget below the idle platform (the
paper's 30 %) starts nothing inside the window, so a window ending at 1e10 s pushes the jobs past the bound of any
time (one line); a UPAS job whose ``beta`` field says less than its profile does is killed at its stretched
walltime (β known at start is the paper's assumption; ``beta_at_start: worst-case`` avoids it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.bad_inputs_checks import one_line, refused
from wattsched import api
from wattsched.cli import main
from wattsched.platforms.generate import eamc_platform_xml, upas_platform_xml

UPAS_SPEED = 2300e6  # flop/s of a UPAS processor at its top gear


def _write(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document))
    return path


def _job(jid: int, subtime: float, res: int, profile: str, walltime: float) -> dict:
    return {"id": jid, "subtime": subtime, "res": res, "profile": profile, "walltime": walltime}


# ------------------------------------------------------------------ 1. an energy that falls while all sleep at 0 W
def test_energy_never_falls_while_every_host_sleeps_at_zero_watts(tmp_path: Path, capsys) -> None:
    platform = tmp_path / "upas.xml"
    platform.write_text(upas_platform_xml(16))
    workload = _write(tmp_path / "w.json", {
        "nb_res": 16, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 10 * UPAS_SPEED, "com": 0}},
        "jobs": [_job(1, 0, 1, "p", 100), _job(2, 0.1234567890123456789, 1, "p", 100), _job(5, 10 / 3, 1, "p", 100),
                 _job(6, 1e-300, 1, "p", 100), _job(3, 1e9, 1, "p", 100), _job(4, 1e9, 16, "p", 100)]})
    out = tmp_path / "o" / "out"
    assert main(["run", str(platform), str(workload), "-s", "fairshare", "-o", '{"shutdown": true}', "-e", str(out),
                 "-q"]) == 0, capsys.readouterr().err
    energy = pd.read_csv(f"{out}_consumed_energy.csv")
    assert (energy["energy"].diff().dropna() >= 0).all()
    asleep = energy[(energy["time"] > 15) & (energy["time"] <= 1e9)]["energy"]  # every host asleep at 0 W
    assert asleep.nunique() == 1, asleep.tolist()


# ------------------------------------------------------------------ 2. a walltime stretched beyond the time bound
@pytest.mark.parametrize("preset,options", [("upas", {"shutdown": True, "wq_threshold": None}),
                                            ("min-energy", {}), ("compose", {"frequency": "min-energy"})])
def test_a_walltime_near_the_time_bound_stretched_by_a_lower_gear_runs(preset: str, options: dict) -> None:
    if preset == "upas":
        platform, speed, extra = upas_platform_xml(16), UPAS_SPEED, {}
    else:  # the EAMC paper's partitions, jobs of its applications
        platform, speed, extra = eamc_platform_xml((4, 4)), 2.7e9, {"app": 4}
    workload = {"nb_res": 16, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 100 * speed, "com": 0}},
                "jobs": [{**_job(k, 0, 1, "p", wall), **extra} for k, wall in ((1, 50), (2, 1e10), (3, 100))]}
    jobs = api.simulate(platform, workload, preset, options, dynamic_jobs=True).jobs
    assert set(jobs["final_state"]) <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "REJECTED"}, jobs
    ran = jobs[jobs["final_state"] != "REJECTED"]
    assert len(ran) == 3 and (ran["requested_time"] <= 1e10).all()
    assert ran["requested_time"].max() == 1e10  # the slowed job's stretched walltime, capped


# ------------------------------------------------------------------ 3. a budget below anything the platform can draw
@pytest.mark.parametrize("preset", ["energy-bud", "reduce-pc", "powercap"])
def test_a_budget_below_the_sleeping_platform_is_refused_with_shutdown(tmp_path: Path, capsys, preset: str) -> None:
    platform = tmp_path / "taurus.xml"
    platform.write_text(api.taurus_platform(4))
    workload = _write(tmp_path / "w.json", {
        "nb_res": 4, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}},
        "jobs": [_job(1, 0, 2, "p", 1000), _job(2, 10, 4, "p", 1000), _job(3, 20, 5, "p", 1000)]})
    out = tmp_path / "o" / "out"
    options = {"budget_j": 0, "window_end_s": 5000, "shutdown": True}
    refused(capsys, ["run", str(platform), str(workload), "-s", preset, "-o", json.dumps(options), "-e", str(out)],
            "option 'budget_j': budget 0 J is below the least the platform can draw over the window",
            "switched off at 0 s", "no schedule can meet it")
    assert not out.parent.exists()
    # Taurus: each host switched off at 0 s (100.997 W for 6.1 s), then asleep at 9.75 W: 4 × 49306.6 J
    with pytest.raises(api.OptionError) as error:
        api.simulate(str(platform), str(workload), preset, {**options, "budget_j": 197_000})
    one_line(error, "budget 197000 J is below", "(197226 J:")
    # a window opening once the hosts can be asleep: the sleeping platform's 4 × 9.75 W × 3000 s
    with pytest.raises(api.OptionError) as error:
        api.simulate(str(platform), str(workload), preset, {**options, "window_start_s": 2000, "budget_j": 100_000})
    one_line(error, "(117000 J:")


@pytest.mark.parametrize("preset", ["energy-bud", "reduce-pc"])
def test_a_budget_the_sleeping_platform_meets_is_held(tmp_path: Path, preset: str) -> None:
    """UPAS's processors sleep at 0 W: a budget of 0 J from 1 s on (once they can all be asleep) is met by running
    nothing inside the window; one of 0 J from 0 s is refused (their switch-off takes 1 s at 21.3 W)."""
    workload = {"nb_res": 16, "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 10 * UPAS_SPEED, "com": 0}},
                "jobs": [_job(1, 0, 1, "p", 100), _job(2, 100, 16, "p", 100), _job(3, 200, 17, "p", 100)]}
    with pytest.raises(api.OptionError) as error:
        api.simulate(upas_platform_xml(16), workload, preset, {"budget_j": 0, "window_end_s": 5000, "shutdown": True})
    one_line(error, "budget 0 J is below the least the platform can draw", "(340.87 J:")
    result = api.simulate(upas_platform_xml(16), workload, preset,
                          {"budget_j": 0, "window_start_s": 1, "window_end_s": 5000, "shutdown": True})
    jobs = result.jobs.set_index("job_id")
    assert (jobs.loc[["1", "2"], "starting_time"] >= 5000).all()
    assert jobs.loc["3", "final_state"] == "REJECTED"  # wider than the platform, as EASY does
    energy = result.consumed_energy
    inside = energy[(energy["time"] >= 1) & (energy["time"] <= 5000)]["energy"]
    assert inside.max() - inside.min() == 0.0
