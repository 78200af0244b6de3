"""Hunt 11: scheduler options and their combinations that still gave a traceback, a silently wrong order or an
error line without its file.

* UPAS's ``interval_s`` of 5e-324 s (or 1e-300 s) gave a traceback (OverflowError: the interval index of a time
  beyond a double); refused now when the simulated times would count more intervals than a double holds.
* Through the Python API, an integer beyond a double as a fair-share ``shares`` value or an ESC ``groups``
  threshold gave an OverflowError, not an OptionError; an ESC group's ``max_queued`` of numpy's int64 was refused
  while the top-level ``max_queued`` took it.
* Fair-share shares whose sum overflows a double (eight users at 1e308) made every factor NaN or 0 (``fs-efs``, and
  any order with ``age_weight``): the queue was sorted on NaN keys, a silently wrong order. Shares (and
  ``default_share``) are at most 1e100 now; a tiny ``damping`` no longer gives NaN (0 × inf) factors.
* An option refused from ``-o @file`` (a bad value, a missing window, a sleep pstate the platform lacks) did not
  name the file, unlike every other error of a file.
* A numpy bool as a flag option (``shutdown``) was refused while numpy numbers were taken as numbers; a grid built
  in Python with numpy values in its options gave a TypeError traceback (its run keys hash the options' JSON).
* A grid's options were checked before the sweep, but not against its platforms: ESC's ``min_on`` beyond the
  hosts, UPAS on a platform without gears, a sleep pstate the platform lacks were failed runs reported after every
  other run had been simulated.
* ESC's ``user_groups`` naming a user without jobs (a misspelt name) was silent; ``shares`` warned.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused
from wattsched import api
from wattsched.base.errors import OptionError
from wattsched.schedulers.fairshare import CPU, ENERGY, FairShare, FairSharePlusEnergy

ROOT = Path(__file__).resolve().parent.parent
TAURUS_16 = str(ROOT / "platforms" / "taurus_16.xml")
UPAS_16 = str(ROOT / "platforms" / "upas_16.xml")


@pytest.fixture
def workload(tmp_path) -> str:
    jobs = [{"id": i, "subtime": 10 * i, "res": 1 + i % 3, "profile": "p", "walltime": 500, "user": f"u{i % 2}"}
            for i in range(4)]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs,
                                "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}}}))
    return str(path)


@pytest.mark.parametrize("interval", ["5e-324", "1e-300"])
def test_a_upas_interval_too_short_for_a_double_is_refused(workload, tmp_path, capsys, interval):
    prefix = tmp_path / "out" / "run"
    refused(capsys, ["run", UPAS_16, workload, "-s", "upas", "-o", f'{{"interval_s": {interval}}}', "-e", str(prefix),
                     "-q"], "interval_s", "too short")
    assert not prefix.parent.exists()


@pytest.mark.parametrize("scheduler, options, needle", [
    ("fairshare", {"shares": {"u0": 10 ** 400}}, "shares"),
    ("esc", {"groups": {"g": {"max_queued": 10 ** 400}}, "user_groups": {"u0": "g"}}, "max_queued"),
    ("esc", {"groups": {"g": {"upper_wait_s": -10 ** 400}}, "user_groups": {"u0": "g"}}, "upper_wait_s"),
])
def test_the_api_refuses_an_integer_beyond_a_double_inside_an_option_object(workload, scheduler, options, needle):
    with pytest.raises(OptionError, match=needle):
        api.simulate(TAURUS_16, workload, scheduler, options)


def test_an_esc_group_takes_numpy_integers_as_the_top_level_options_do(workload):
    import numpy as np

    result = api.simulate(TAURUS_16, workload, "esc",
                          {"max_queued": np.int64(3), "groups": {"g": {"max_queued": np.int64(2)}},
                           "user_groups": {"u0": "g"}})
    assert set(result.jobs["final_state"]) == {"COMPLETED_SUCCESSFULLY"}


@pytest.mark.parametrize("scheduler", ["fairshare", "efs", "fs-efs"])
@pytest.mark.parametrize("options, needle", [
    ({"shares": {f"u{i}": 1e308 for i in range(8)}}, "shares"),
    ({"default_share": 1e200}, "default_share"),
])
def test_shares_whose_sum_overflows_a_double_are_refused(workload, scheduler, options, needle):
    with pytest.raises(OptionError, match=needle):
        api.simulate(TAURUS_16, workload, scheduler, options)


def test_a_tiny_damping_gives_no_nan_factor():
    """0 usage × an infinite scale (the damping's 5e-324 in the denominator) was NaN, and so was inf - inf in
    FS+EFS's normalization: the queue was then sorted on NaN keys."""
    order = FairShare(damping=5e-324)
    order._reset(0.0)
    order.capacity[CPU].start_rate("machine", 16.0, 0.0)
    assert order.exponents(["a", "b"], CPU, 10.0) == [0.0, 0.0]
    both = FairSharePlusEnergy(damping=5e-324)
    both._reset(0.0)
    for measure in (CPU, ENERGY):
        both.capacity[measure].start_rate("machine", 16.0, 0.0)
        both.usage[measure].charge("a", 5.0, 0.0)
        both.usage[measure].charge("b", 7.0, 0.0)
    factors = both.user_factors(["a", "b", "c"], 10.0)
    assert not any(math.isnan(f) for f in factors.values()), factors
    assert factors["c"] == 2.0  # no usage: the largest factor of both measures


@pytest.mark.parametrize("scheduler, options, needle", [
    ("energy-bud", {"placement": "x"}, "option 'placement'"),
    ("energy-bud", {"budget_fraction": 0.5}, "option 'window_end_s'"),
    ("energy-bud", {"shutdown": True, "sleep_pstate": 0}, "option 'sleep_pstate'"),  # known from the platform
])
def test_an_option_refused_from_an_options_file_names_the_file(workload, tmp_path, capsys, scheduler, options, needle):
    path = tmp_path / "opts.json"
    path.write_text(json.dumps(options))
    prefix = tmp_path / "out" / "run"
    err = refused(capsys, ["run", TAURUS_16, workload, "-s", scheduler, "-o", f"@{path}", "-e", str(prefix), "-q"],
                  needle)
    assert err.startswith(f"wattsched: error: {path}: option"), err
    assert not prefix.parent.exists()


def test_a_numpy_bool_is_a_flag_option_as_numpy_numbers_are_numbers(workload):
    """``{"shutdown": np.True_}`` was refused ("must be true or false") while np.int64 and np.float32 were taken
    as numbers and the API's own flags took numpy's bools."""
    import numpy as np

    options = {"budget_fraction": 0.9, "window_end_s": 1000}
    plain = api.simulate(TAURUS_16, workload, "energy-bud", {**options, "shutdown": True})
    numpy = api.simulate(TAURUS_16, workload, "energy-bud", {**options, "shutdown": np.True_})
    assert numpy.metrics["total_energy_j"] == plain.metrics["total_energy_j"]


def test_a_grid_with_numpy_values_in_its_options_gives_the_runs_of_python_values(workload, tmp_path):
    """A grid built in Python with numpy's numbers (``np.arange``) gave a TypeError traceback (the run key is
    the options' JSON) after its options had been accepted."""
    import numpy as np

    from wattsched.experiments.grid import grid_runs, parse_grid

    def runs(fraction, end, shutdown):
        grid = parse_grid({"platforms": [TAURUS_16], "workloads": [workload], "schedulers": [
            {"name": "energy-bud", "options": {"budget_fraction": fraction, "window_end_s": end, "shutdown": shutdown,
                                               }}]})
        return grid_runs(grid, tmp_path / "sweep")

    (numpy,) = runs(np.float32(0.5), np.int64(1000), np.True_)
    (plain,) = runs(0.5, 1000, True)
    assert numpy.options == plain.options and numpy.tags["key"] == plain.tags["key"]
    assert type(numpy.options["window_end_s"]) is int and type(numpy.options["shutdown"]) is bool


@pytest.mark.parametrize("entry, field, needle", [
    ({"name": "esc", "options": {"min_on": 17}}, "schedulers[1]", "min_on"),
    ({"name": "upas"}, "schedulers[1]", "frequency 'upas'"),
    ({"name": "energy-bud", "options": {"shutdown": True, "sleep_pstate": 0}}, "schedulers[1]", "sleep_pstate"),
])
def test_a_grid_option_the_platform_cannot_serve_is_refused_before_the_sweep(workload, tmp_path, entry, field,
                                                                             needle):
    """Only the options were checked before the sweep: an option the platform cannot serve was a failed run,
    reported after every other run of the sweep had been simulated."""
    from wattsched.base.errors import InputError
    from wattsched.experiments.grid import grid_runs, parse_grid

    grid = parse_grid({"platforms": [TAURUS_16], "workloads": [workload], "schedulers": ["easy-backfill", entry]},
                      "study.yaml")
    with pytest.raises(InputError) as raised:
        grid_runs(grid, tmp_path / "sweep")
    message = str(raised.value)
    assert "study.yaml" in message and field in message and "taurus_16" in message and needle in message, message
    assert not (tmp_path / "sweep").exists()


def test_esc_user_groups_naming_a_user_without_jobs_is_warned_as_shares_are(workload, caplog):
    """A misspelt user in ESC's ``user_groups`` silently left that user's jobs in the default group; fair-share's
    ``shares`` warned about the same mistake."""
    with caplog.at_level("WARNING"):
        api.simulate(TAURUS_16, workload, "esc", {"user_groups": {"uO": "default"}})
    assert any("option 'user_groups': 'uO' has no job" in r.getMessage() for r in caplog.records), caplog.text
