"""The shadow of SimGrid's clock against the recordings of real Batsim (behaviours 38 and 43).

Each recording is replayed through :func:`wattsched.simulator.simgrid_clock.check_recording`: the
scheduler's replies drive a :class:`BatsimShadow` (job starts, kills, calls, DVFS, switches, and
the sleeps Batsim does to reach a reply's timestamp), and every recorded Batsim message that holds
events of a solver step (submissions, completions other than kills, requested calls, switch ends)
must be exactly one step of the shadow, with the same events and the same printed ``now``. Two
such messages with the same ``now`` are a split: the shadow must predict each recorded split and
no other. The energy plugin is shadowed too: every ``_consumed_energy.csv`` row and every ANSWER
must come out character for character.
"""

from __future__ import annotations

import csv
import functools
import math
from fractions import Fraction

import pytest

from tests.conftest import REFERENCE, SCENARIOS
from wattsched.simulator.simgrid_clock import (
    REMAINS_PRECISION,
    BatsimShadow,
    format_long_double,
    L07Clock,
    check_recording,
    long_double_sleep,
)
from wattsched.simulator.workload import ParallelProfile

#: The recorded splits: (scenario, line of the late message) -> what it holds.
RECORDED_SPLITS = {
    ("pybatsim-easy-c", 213): "w0!55",  # B43: t=3940, a few ulps after the printed time
    ("pybatsim-easy-c", 605): "w0!136",  # B43: t=11300, the very same double
    ("simultaneous-events", 9): "w0!10",  # B8: the zero-work job ends in a zero-delta step
}


@functools.lru_cache(maxsize=None)
def _check(scenario: str):
    return check_recording(REFERENCE / scenario)


def test_the_fourteen_recordings_are_fixtures() -> None:
    assert len(SCENARIOS) >= 14
    assert "pybatsim-easy-c" in SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_step_message_is_one_predicted_step(scenario: str) -> None:
    check = _check(scenario)
    assert check.groups, "no step message compared"
    assert check.ok, "\n".join(check.mismatches[:10])
    # the whole recording was consumed: nothing is left to end in the shadow
    assert check.shadow.advance() is None


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_splits_are_predicted_exactly(scenario: str) -> None:
    check = _check(scenario)
    expected = sorted(line for (s, line) in RECORDED_SPLITS if s == scenario)
    assert check.recorded_splits == expected
    assert check.predicted_splits == expected  # no false positive, no false negative


def test_behaviour_43_the_two_late_completions_of_pybatsim_easy_c() -> None:
    groups = {line: (now, rec, pred, exact) for line, now, rec, pred, exact in _check("pybatsim-easy-c").groups}
    # t=3940: the submissions end one step; w0!55 (started 3910, 30 s) ends in the next one,
    # one ulp later, after the reply that starts w0!67
    assert groups[211][3] == 3940.0
    assert groups[211][2] == [("JOB_SUBMITTED", "w0!67"), ("JOB_SUBMITTED", "w0!68")]
    assert groups[213][2] == [("JOB_COMPLETED", "w0!55", "COMPLETED_SUCCESSFULLY")]
    assert groups[213][3] == math.nextafter(3940.0, math.inf)
    # t=11300: w0!162 ends one step; w0!136 (started 11290, 10 s) ends in the next one at the
    # very same double: the step's delta is below half an ulp of the clock
    assert groups[603][2] == [("JOB_COMPLETED", "w0!162", "COMPLETED_SUCCESSFULLY")]
    assert groups[605][2] == [("JOB_COMPLETED", "w0!136", "COMPLETED_SUCCESSFULLY")]
    assert groups[603][3] == groups[605][3] == 11300.0
    late = {round(now, 3): delta for now, delta, _ in _check("pybatsim-easy-c").shadow.trace if 0 < delta < 1e-9}
    assert 0 < late[3940.0] < 1e-12 and 0 < late[11300.0] < 1e-12


def test_the_zero_work_job_is_the_split_of_simultaneous_events() -> None:
    check = _check("simultaneous-events")
    (line, now, rec, pred, exact), = [g for g in check.groups if g[0] == 9]
    assert rec == pred == [("JOB_COMPLETED", "w0!10", "COMPLETED_SUCCESSFULLY")]
    assert exact == 100.0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_energy_rows_answers_and_job_energies_are_reproduced_exactly(scenario: str) -> None:
    check = _check(scenario)
    with open(REFERENCE / scenario / "out_consumed_energy.csv", newline="") as fh:
        recorded = list(csv.reader(fh))[1:]
    predicted = check.shadow.rows
    assert len(predicted) == len(recorded)
    for k, (row, pred) in enumerate(zip(recorded, predicted), start=2):
        time, energy, epower = pred.cells()
        assert (time, pred.kind, energy, epower) == (row[0], row[2], row[1], row[4]), f"line {k}"
    assert all(p == r for p, r in check.answers), [a for a in check.answers if a[0] != a[1]]
    # and every job's consumed_energy in _jobs.csv (long double, %Lf)
    with open(REFERENCE / scenario / "out_jobs.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["final_state"] != "REJECTED":
                energy = check.shadow.job_energy[f"{row['workload_name']}!{row['job_id']}"]
                assert format_long_double(energy) == row["consumed_energy"], row["job_id"]


def test_epower_cells_between_rows_printed_with_the_same_time() -> None:
    """The cells ``compare_csv`` tolerates: NA when the clock did not move, a quotient otherwise."""
    same = numeric = 0
    for scenario in SCENARIOS:
        rows = _check(scenario).shadow.rows
        for prev, row in zip(rows, rows[1:]):
            if row.cells()[0] == prev.cells()[0]:
                same += 1
                numeric += row.epower is not None
                assert (row.epower is None) == (row.time == prev.time)
    assert (same, numeric) == (654, 27)
    # B43: the late end of w0!55, 2**-41 s after the previous row
    row = _check("pybatsim-easy-c").shadow.rows[102]
    assert row.kind == "e" and row.cells() == ("3940.000000", row.cells()[1], "7168.000000")


def test_the_threshold_arithmetic_decides_the_splits() -> None:
    """The test above is not vacuous: other thresholds give other splits."""
    exact_zero = check_recording(REFERENCE / "pybatsim-easy-c", maxmin_precision=0.0)
    assert set(exact_zero.predicted_splits) - {213, 605}  # splits real Batsim did not make
    coarse = check_recording(REFERENCE / "pybatsim-easy-c", maxmin_precision=1.0)  # 1e-9 on remains
    assert coarse.predicted_splits == []  # misses both


# --------------------------------------------------------------------------------------------------
# The arithmetic on small cases
# --------------------------------------------------------------------------------------------------
def _step(clock: L07Clock) -> tuple[float, list[int]]:
    """One solver step; the ended actions are removed, as Batsim's actors do."""
    delta, ended = clock.solve_step()
    for h in ended:
        clock.cancel(h)
    return delta, ended


def test_remains_is_the_fraction_left_and_the_clock_the_sum_of_deltas() -> None:
    clock = L07Clock([(1e8,), (50e6,)], [0, 0])
    a = clock.execute((0,), (3e9,), "a")  # 30 s
    b = clock.execute((0, 1), (1e9, 1e9), "b")  # host 1 is the bottleneck: 20 s
    assert clock.remains(a) == 1.0 and clock.rate(a) == 1e8 / 3e9
    assert clock.rate(b) == min(1e8 / 1e9, 50e6 / 1e9)
    delta, ended = clock.solve_step()
    assert ended == [b] and delta == 1.0 / (50e6 / 1e9)
    clock.cancel(b)
    assert clock.remains(a) == 1.0 - (1e8 / 3e9) * delta
    first = clock.now
    delta2, ended = clock.solve_step()
    assert ended == [a] and clock.now == first + delta2


def test_an_execution_ends_with_another_step_only_below_1e_14() -> None:
    rate = 1e8 / 3e9
    for gap_s, same_step in ((1e-13, True), (1e-12, False)):
        clock = L07Clock([(1e8,)], [0])
        job = clock.execute((0,), (3e9,), "job")
        clock.sleep(1.0 / rate - gap_s, "timer")  # a timer a hair before the job's end
        _, ended = _step(clock)
        assert (job in ended) == same_step
        if not same_step:
            left = clock.remains(job)
            assert left == 1.0 - rate * (1.0 / rate - gap_s) >= REMAINS_PRECISION
            delta, ended = _step(clock)
            assert ended == [job] and delta == left / rate


def test_a_sleep_ends_with_another_step_below_1e_9() -> None:
    for extra_s, same_step in ((5e-10, True), (2e-9, False)):
        clock = L07Clock([(1e8,)], [0])
        clock.execute((0,), (1e9,), "job")  # 10 s
        timer = clock.sleep(10.0 + extra_s, "timer")
        _, ended = clock.solve_step()
        assert (timer in ended) == same_step


def test_dvfs_keeps_the_work_done_and_applies_at_the_next_step() -> None:
    clock = L07Clock([(1e8, 5e7)], [0])
    job = clock.execute((0,), (6e9,), "job")  # 60 s at pstate 0
    clock.sleep(40.0, "dvfs at 40")
    _step(clock)
    clock.set_pstate(0, 1)
    left = 1.0 - (1e8 / 6e9) * 40.0
    assert clock.remains(job) == left
    delta, ended = _step(clock)
    assert ended == [job] and delta == left / (5e7 / 6e9) and clock.now == 40.0 + delta


def test_the_submitter_sleeps_a_long_double_difference() -> None:
    assert long_double_sleep(3940.0, 3880.0) == 60.0
    t = math.nextafter(3880.0, 0.0)
    assert Fraction(long_double_sleep(3940.0, t)) == Fraction(3940) - Fraction(t)  # exact here


def test_shadow_of_a_walltime_and_a_composed_job() -> None:
    from wattsched.simulator.workload import ComposedProfile, DelayProfile

    shadow = BatsimShadow([(1e8,), (1e8,)], [0, 0], [("w0!1", 0.0, 25.0), ("w0!2", 0.0, None)])
    first = shadow.advance()
    assert first.now == 0.0 and sorted(first.events) == [("JOB_SUBMITTED", "w0!1"), ("JOB_SUBMITTED", "w0!2")]
    shadow.start_job("w0!1", [0], ParallelProfile("c30", "parallel_homogeneous", 3e9))
    shadow.start_job("w0!2", [1], ComposedProfile("seq", (DelayProfile("d5", 5.0), ParallelProfile("c10", "parallel_homogeneous", 1e9)), 2))
    ends = []
    while (step := shadow.advance()) is not None:
        ends.extend((e[1], e[2], step.now) for e in step.events)
    assert ends == [("w0!1", "COMPLETED_WALLTIME_REACHED", 25.0), ("w0!2", "COMPLETED_SUCCESSFULLY", 30.0)]
