"""Audit of the five output files against Batsim 4.2.1's ``export.cpp`` (JobsTracer::write_job / finalize).

* ``finalize`` divides by ``_nb_jobs`` with no guard: a run without any job prints ``success_rate`` and the
  three ``mean_*`` as 0.0 / 0, the x86-64 default NaN, "-nan".
* ``_max_waiting_time``, ``_max_turnaround_time`` and ``_max_slowdown`` start at 0 and only grow: a registered
  job whose subtime is after its start (negative waiting) leaves them at 0.
* ``write_job`` computes in long double: a zero-time job's stretch (start + 1e-5 - submission) / 1e-5 is 1 at
  t = 1e6 (0.999996 in doubles); ``mean_slowdown`` sums those stretches.

Not followed: ``Machine::update_machine_state`` accumulates ``time_<state>`` per host in long double, where the
engine keeps one double per state (``n × now − Σ last change``): on runs of 1e9 s × 8 hosts the last printed
decimal of ``time_idle`` may differ (a per-host compensated sum would cost arrays of hosts × states in the
engine's busiest path).
"""

from __future__ import annotations

from fractions import Fraction

from tests.test_behaviour_variants import call, compute, execute, jb, on_event, run, toy_platform


def test_a_run_without_any_job_prints_nan_rates(tmp_path) -> None:
    r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, [], lambda msg, r: [])
    sched = r.csv["schedule"][0]
    assert [sched[k] for k in ("success_rate", "mean_waiting_time", "mean_turnaround_time", "mean_slowdown")] == ["-nan"] * 4
    assert [sched[k] for k in ("nb_jobs", "makespan", "max_slowdown", "consumed_joules")] == ["0", "0.000000", "0.000000", "0.000000"]


def test_the_maxima_start_at_zero(tmp_path) -> None:
    """A registered job started before its subtime: negative rows and means, maxima 0."""
    job = {"id": "j", "subtime": 10, "res": 1, "profile": "dynp"}
    r = run(tmp_path, toy_platform(2), {"p": compute(2e6)}, [],
            on_event({("SIMULATION_BEGINS", None): [call(2.0)],
                      ("REQUESTED_CALL", None): [
                          ("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "dynp", "profile": compute(4e6)}),
                          ("REGISTER_JOB", {"job_id": "dyn!j", "job": job}), execute("dyn!j", "0"),
                          ("NOTIFY", {"type": "registration_finished"})]}),
            dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    row = r.job_row("j")
    assert (row["waiting_time"], row["turnaround_time"], row["stretch"]) == ("-8.000000", "-6.000000", "-3.000000")
    sched = r.csv["schedule"][0]
    assert (sched["max_waiting_time"], sched["max_turnaround_time"], sched["max_slowdown"]) == ("0.000000",) * 3
    assert (sched["mean_waiting_time"], sched["mean_slowdown"]) == ("-8.000000", "-3.000000")


def test_a_zero_time_job_late_in_the_run_has_stretch_one(tmp_path) -> None:
    r = run(tmp_path, toy_platform(1), {"z": compute(0)}, [jb(1, profile="z", subtime=1e6)],
            on_event({("JOB_SUBMITTED", "w0!1"): [execute("w0!1", "0")]}))
    row = r.job_row("1")
    assert (row["execution_time"], row["finish_time"], row["turnaround_time"], row["stretch"]) == (
        "0.000010", "1000000.000010", "0.000010", "1.000000")
    assert r.csv["schedule"][0]["mean_slowdown"] == "1.000000"


def test_mean_slowdown_of_a_zero_time_job_that_waited(tmp_path) -> None:
    """A zero-time job waiting 1e5 s (stretch 1e10 + 1: Batsim's 1e-5l, not the double 1e-5) among others."""
    k = 3
    profiles = {"z": compute(0), **{f"c{i}": compute(2e6 / (i + 2)) for i in range(k)}}
    jobs = [jb(0, profile="z")] + [jb(i + 1, profile=f"c{i}", subtime=1 + (i + 1) * 0.0123456789) for i in range(k)]
    r = run(tmp_path, toy_platform(k + 1), profiles, jobs,
            on_event({("SIMULATION_BEGINS", None): [call(1e5)],
                      ("REQUESTED_CALL", None): [execute(f"w0!{i}", str(i)) for i in range(k + 1)]}))
    total = Fraction(0)
    for rj in r.sim.iter_jobs():
        s, e, sub = Fraction(rj.start_s), Fraction(rj.end_s), Fraction(rj.job.subtime_s)
        run_s = Fraction(1, 100_000) if rj.zero_work else e - s
        total += (s + run_s - sub) / run_s
    assert r.csv["schedule"][0]["mean_slowdown"] == f"{float(total) / (k + 1):f}" == "2500224998.688272"
