"""Bad inputs hunt 18: outputs left beside an error, options of a scheduler that are not ours, and the bounds'
environment variables.

* ``plot RUN -d DIR`` drew its figures one after another: ``plot --window S,E`` (or ``--budget-power W``) of a
  result folder without ``_consumed_energy.csv`` wrote ``gantt.png`` and ``machine_states.png``, then failed on
  the power plot; ``plot`` of a run whose every job was rejected (no machine-state row) wrote ``gantt.png`` and
  ``power.png``, then failed on the host states. Every figure is now built before any file is written.
* ``run -s <pybatsim or user scheduler> -o '{"window_end_s": 5, "window_start_s": 10}'`` read those options as an
  energy budget's window to measure: a ValueError traceback (exit 1) once the outputs were written (``"x"`` as the
  start too). Only a preset's checked options give a budget window; another scheduler's options are its own.
* Text of the inputs drawn or printed as markup: a job id holding two ``$`` (Batsim takes it) was read as
  matplotlib's mathtext by ``plot``'s Gantt chart, and a ``\\`` there gave a ValueError traceback (so did an option
  value in a sweep's comparison plots, after every run had ended); a user name holding ``[/bold]`` gave rich's
  MarkupError traceback from ``run --per-user`` (once the outputs were written) and ``metrics --workload``, and
  ``[red]x`` was printed as ``x``.
* A misspelt bound variable (``WATTSCHED_LIMIT_HOST=5000000``, ``WATTSCHED_LIMIT_hosts``) was ignored without a
  word, the bound it meant left at its default; a bound of a count given a fraction (``WATTSCHED_LIMIT_HOSTS=1.5``)
  was taken ("at most 1.5 hosts"). Both are refused, by every command and by the API, before any work.
* ``serve --bind tcp://127.0.0.1:*`` (a port ZeroMQ chooses, which ``check_endpoint`` takes) said it waited on
  ``tcp://127.0.0.1:*``, and its errors named ``*``: no Batsim could be told where to connect. It names the port.

The result-folder checks read copies of a real Batsim recording; the runs simulate one job on two hosts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused
from wattsched import api
from wattsched.base.errors import OptionError
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}


def _inputs(tmp_path: Path, res: int = 1) -> tuple[str, str]:
    """A platform of two Taurus hosts and a workload of one job on ``res`` hosts, as files."""
    platform = tmp_path / "two.xml"
    platform.write_text(api.taurus_platform(2))
    workload = tmp_path / "one.json"
    workload.write_text(json.dumps({**ONE_JOB, "nb_res": max(2, res),
                                    "jobs": [{**ONE_JOB["jobs"][0], "res": res}]}))
    return str(platform), str(workload)


# ------------------------------------------------------------------------ 1. plot: all figures or none
@pytest.mark.parametrize("option", [["--window", "0,100"], ["--budget-power", "500"]])
def test_plot_against_a_budget_without_consumed_energy_writes_no_figure(capsys, tmp_path, option):
    """It wrote gantt.png and machine_states.png, then failed on the power plot."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute", without=("out_consumed_energy.csv",))
    figures = tmp_path / "figures"
    refused(capsys, ["plot", str(outputs / "out"), "-d", str(figures), *option], "consumed_energy.csv",
            "power plot")
    assert not figures.exists()


def test_plot_of_a_run_without_machine_state_rows_writes_every_figure_or_none(capsys, tmp_path):
    """Every job rejected (wider than the platform): no machine-state row. It wrote gantt.png and power.png, then
    failed on the host states. Every host idle is now drawn (hunt 36: a valid run was refused), the hosts counted by
    the schedule; without a schedule to count them, nothing is written."""
    platform, workload = _inputs(tmp_path, res=5)
    assert main(["run", platform, workload, "-s", "fcfs", "-e", str(tmp_path / "run" / "out"), "-q"]) == 0
    capsys.readouterr()
    figures = tmp_path / "figures"
    assert main(["plot", str(tmp_path / "run" / "out"), "-d", str(figures)]) == 0
    assert sorted(p.name for p in figures.iterdir()) == ["gantt.png", "machine_states.png", "power.png"]
    (tmp_path / "run" / "out_schedule.csv").unlink()  # no row and no schedule: the hosts cannot be counted
    refused(capsys, ["plot", str(tmp_path / "run" / "out"), "-d", str(tmp_path / "f2")], "out_machine_states.csv",
            "no rows to plot")
    assert not (tmp_path / "f2").exists()


def test_plot_still_draws_the_budget_on_the_power_plot(capsys, tmp_path):
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    figures = tmp_path / "figures"
    assert main(["plot", str(outputs / "out"), "-d", str(figures), "--window", "0,100", "--budget-power", "500"]) == 0
    assert sorted(p.name for p in figures.iterdir()) == ["gantt.png", "machine_states.png", "power.png"]


# ----------------------------------------------------------- 2. a budget window only from a preset's options
@pytest.mark.parametrize("options", ['{"window_end_s": 5, "window_start_s": 10}', '{"window_end_s": 5, '
                                     '"window_start_s": "x"}', '{"window_end_s": -5}'])
def test_the_options_of_a_pybatsim_scheduler_are_no_budget_window(capsys, tmp_path, options):
    """They gave a ValueError traceback after the outputs were written."""
    pytest.importorskip("pybatsim")
    platform, workload = _inputs(tmp_path)
    prefix = tmp_path / "run" / "out"
    status = main(["run", platform, workload, "-s", "backfill-easy", "-o", options, "-e", str(prefix), "--json",
                   "-q"])
    out, err = capsys.readouterr()
    assert status == 0 and "Traceback" not in err, err
    metrics = json.loads(out)
    assert metrics["nb_jobs_started"] == 1 and not any(key.startswith("budget_window") for key in metrics)


def test_a_presets_budget_window_is_still_measured(capsys, tmp_path):
    platform, workload = _inputs(tmp_path)
    status = main(["run", platform, workload, "-s", "energy-bud", "-o", '{"budget_j": 1e6, "window_start_s": 1, '
                   '"window_end_s": 50}', "-e", str(tmp_path / "run" / "out"), "--json", "-q"])
    metrics = json.loads(capsys.readouterr().out)
    assert status == 0 and metrics["budget_window_energy_j"] > 0


# --------------------------------------------------------------- 3. ids, labels and names drawn as they are
MATH = "a$\\foo{$"


def test_plot_draws_a_job_id_holding_dollar_signs_as_it_is(capsys, tmp_path):
    platform, workload = _inputs(tmp_path)
    data = json.loads(Path(workload).read_text())
    data["jobs"][0]["id"] = MATH
    Path(workload).write_text(json.dumps(data))
    assert main(["run", platform, workload, "-s", "fcfs", "-e", str(tmp_path / "run" / "out"), "-q"]) == 0
    figures = tmp_path / "figures"
    status = main(["plot", str(tmp_path / "run" / "out"), "-d", str(figures)])
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    assert sorted(p.name for p in figures.iterdir()) == ["gantt.png", "machine_states.png", "power.png"]


def test_a_sweeps_comparison_plots_draw_labels_holding_dollar_signs_as_they_are(tmp_path):
    """Written once every run had ended: a ValueError traceback lost the plots."""
    import pandas as pd

    from wattsched.experiments.grid import write_results

    frame = pd.DataFrame({"name": ["a", "b"], "label": [f'fairshare shares={{"{MATH}": 1}}', "fcfs"],
                          "status": ["done", "done"], "utilization": [0.5, 0.6]})
    written = write_results(frame, tmp_path / "study")
    assert tmp_path / "study" / "plots" / "utilization.png" in written


@pytest.mark.parametrize("user", ["[/bold]", "[red]x"])
def test_a_user_name_in_square_brackets_is_printed_as_it_is(capsys, tmp_path, user):
    """``[/bold]`` gave rich's MarkupError traceback; ``[red]x`` was printed as ``x``."""
    platform, workload = _inputs(tmp_path)
    data = json.loads(Path(workload).read_text())
    data["jobs"][0]["user"] = user
    Path(workload).write_text(json.dumps(data))
    prefix = str(tmp_path / "run" / "out")
    for argv in (["run", platform, workload, "-s", "fcfs", "-e", prefix, "-q", "--per-user"],
                 ["metrics", prefix, "--workload", workload]):
        status = main(argv)
        out, err = capsys.readouterr()
        assert status == 0 and "Traceback" not in err, err
        assert f"mean_stretch_user_{user} " in out, out


# ------------------------------------------------------------------------------ 4. the bounds' variables
@pytest.mark.parametrize("variable, value, needles", [
    ("WATTSCHED_LIMIT_HOST", "5000000", ["WATTSCHED_LIMIT_HOST:", "no such bound", "did you mean WATTSCHED_LIMIT_HOSTS"]),
    ("WATTSCHED_LIMIT_hosts", "5000000", ["WATTSCHED_LIMIT_hosts:", "did you mean WATTSCHED_LIMIT_HOSTS"]),
    ("WATTSCHED_LIMIT_HOSTS", "1.5", ["WATTSCHED_LIMIT_HOSTS:", "whole number", "'1.5'"]),
    ("WATTSCHED_LIMIT_MIN_PERIOD_S", "0", ["WATTSCHED_LIMIT_MIN_PERIOD_S:", "positive number"]),
])
def test_a_bound_variable_that_bounds_nothing_is_refused(capsys, monkeypatch, tmp_path, variable, value, needles):
    """Each was taken without a word (the last as long as no check read its bound: fcfs has no period)."""
    platform, workload = _inputs(tmp_path)
    monkeypatch.setenv(variable, value)
    refused(capsys, ["run", platform, workload, "-s", "fcfs", "-e", str(tmp_path / "run" / "out")], *needles)
    assert not (tmp_path / "run").exists()
    with pytest.raises(OptionError, match=needles[0]):
        api.simulate(platform, workload, "fcfs")


def test_bound_variables_of_every_kind_are_still_taken(capsys, monkeypatch, tmp_path):
    platform, workload = _inputs(tmp_path)
    for variable, value in (("WATTSCHED_LIMIT_HOSTS", " 100 "), ("WATTSCHED_LIMIT_DAYS", "1.5"),
                            ("WATTSCHED_LIMIT_TIME_S", "1e9"), ("WATTSCHED_LIMIT_JOBS", "")):
        monkeypatch.setenv(variable, value)
    assert main(["run", platform, workload, "-s", "fcfs", "-e", str(tmp_path / "run" / "out"), "-q"]) == 0


# -------------------------------------------------------------------------- 5. serve on a port ZeroMQ chooses
@pytest.mark.parametrize("scheduler", ["fcfs", "backfill-easy"])
def test_serve_on_a_wildcard_port_names_the_port_it_bound(capsys, scheduler):
    if scheduler == "backfill-easy":
        pytest.importorskip("pybatsim")
    status = main(["serve", "-s", scheduler, "--bind", "tcp://127.0.0.1:*", "--timeout", "0.3"])
    waiting, error = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    port = re.fullmatch(r"wattsched: waiting for Batsim on tcp://127\.0\.0\.1:(\d+) \(Batsim connects with -s\)",
                        waiting)
    assert port is not None and 1 <= int(port.group(1)) <= 65535, waiting
    assert f"tcp://127.0.0.1:{port.group(1)} for 0.3 s" in error and "*" not in error, error
