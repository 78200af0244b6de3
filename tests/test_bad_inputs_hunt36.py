"""Bad inputs hunt 36: the analysis commands' options and the outputs they write (``metrics``, ``plot``, ``paraver``,
``node-stats``, ``regress`` and :class:`wattsched.api.Result`'s writers).

* before: ``plot`` of a valid run where no job ran (a workload of no job, or every job rejected) wrote nothing and
  said ``r/out_machine_states.csv: no rows to plot`` (exit 2): Batsim writes no machine-state row when no host
  changes state. Now the three PNGs are written, the machine states all idle (the rule of the other rows: before the
  first, every host is idle).
* before: the power plot (``plot``, ``Result.plot_power``, the web page's chart) started at the first row of
  ``_consumed_energy.csv``, the first job's start (80 s in real Batsim's ``pybatsim-easy``, 323 s for
  ``demo_taurus16.json``): the power the hosts drew before it (its first row's energy, counted from 0, Batsim's
  ``epower``) was left out. Now the steps start at 0.
* before: ``metrics --workload`` took any workload holding the run's job ids (every workload numbers its jobs from
  1) for the run's: the per-user stretch of ``zerort`` joined on ``demo_taurus16.json`` gave users 1 and 2 to jobs it
  does not hold, exit 0. Now each job's subtime and res must be the run's: one line naming the workload and the job.
* before: a job that ran less than Batsim's 6 printed decimals (a walltime of 1e-7 s reached, ``execution_time``
  ``0.000000``) after waiting gave ``metrics --json`` and ``run --json`` ``"mean_stretch": Infinity`` (not JSON) and
  the table ``inf``; one that did not wait was left out of the means (NaN). Now its stretch is the file's
  ``stretch`` column (Batsim's, from the exact times), and a metric that is not finite is ``null`` in the JSON.

Checked and found clean: ``--window`` before, inside, after and around the run, of 1e-300 s, its end at the
``time_s`` bound (energy extrapolated at the last row's ``wattmin``); ``--tau`` 0, negative, ``inf``, ``1e-320`` and
1e308; ``--max-power`` at its bounds; ``-d`` a file, under a file, a folder with spaces and unicode, ``./-x``, an
output that is a folder (nothing written); ``regress --update`` into a file, under a file, onto the run itself, an
existing golden of another prefix; ``--rel-tol`` and ``--limit`` at and beyond their bounds; Paraver traces of every
kind of run (each host covers [0, end], the states at every machine-state row, one job event per host of a job, every
pstate named in the ``.pcf``, the ``.row`` of the platform's hosts); ``Result.write_paraver`` to a folder, an empty
name, under a file.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused
from wattsched.cli import main

ROOT = Path(__file__).resolve().parent.parent
TAURUS = ROOT / "platforms" / "taurus_16.xml"


def _workload(path: Path, jobs: list[dict], profiles: dict) -> Path:
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    return path


def _run(capsys: pytest.CaptureFixture[str], workload: Path, prefix: Path) -> Path:
    assert main(["run", str(TAURUS), str(workload), "-s", "fcfs", "-e", str(prefix)]) == 0
    capsys.readouterr()
    return prefix


def _strict_json(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------------- 1. plot of a run where no job ran
@pytest.mark.parametrize("res", [64, None])
def test_plot_of_a_run_where_no_job_ran_writes_the_three_pngs(capsys, tmp_path, res):
    jobs = [{"id": 1, "subtime": 10, "res": res, "profile": "d", "walltime": 100}] if res else []
    workload = _workload(tmp_path / "w.json", jobs, {"d": {"type": "delay", "delay": 5}})
    prefix = _run(capsys, workload, tmp_path / "o" / "out")
    assert len((tmp_path / "o" / "out_machine_states.csv").read_text().splitlines()) == 1  # the header alone
    assert main(["plot", str(prefix), "-d", str(tmp_path / "p")]) == 0, capsys.readouterr().err
    for name in ("gantt.png", "power.png", "machine_states.png"):
        data = (tmp_path / "p" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1200, 600)

    from wattsched.analysis.plots import machine_states_figure

    axes = machine_states_figure(prefix).axes[0]
    assert axes.get_ylim() == (0.0, 16.0)
    idle = axes.collections[1].get_paths()[0].vertices[:, 1]  # the stack's top of computing + idle: every host
    assert idle.max() == 16.0


# ------------------------------------------------------------------------- 2. the power from t = 0
def test_the_power_plot_starts_at_zero_with_the_power_drawn_before_the_first_row():
    from wattsched.analysis.outputs import load_outputs
    from wattsched.analysis.plots import power_figure, power_steps

    energy = load_outputs(REFERENCE / "pybatsim-easy").consumed_energy
    assert energy["time"].iloc[0] == 80.0 and energy["epower"].iloc[0] == 1520.0
    times, power = power_steps(energy)
    assert times[0] == 0.0 and times[1] == 80.0
    assert power[0] == pytest.approx(1520.0)  # Batsim's epower of the row at 80: 121600 J over 80 s
    line = next(line for line in power_figure(REFERENCE / "pybatsim-easy").axes[0].get_lines()
                if line.get_label() == "platform power")
    assert line.get_xdata()[0] == 0.0


# ------------------------------------------------------------------ 3. a workload that is not the run's
def test_metrics_refuses_another_workload_with_the_same_job_ids(capsys, tmp_path):
    profiles = {"d": {"type": "delay", "delay": 5}}
    ours = _workload(tmp_path / "ours.json", [{"id": 1, "subtime": 0, "res": 2, "profile": "d", "user": "ann"},
                                               {"id": 2, "subtime": 1, "res": 4, "profile": "d", "user": "bob"}],
                     profiles)
    prefix = _run(capsys, ours, tmp_path / "o" / "out")
    assert main(["metrics", str(prefix), "--workload", str(ours), "--json"]) == 0
    assert {"mean_stretch_user_ann", "mean_stretch_user_bob"} <= _strict_json(capsys.readouterr().out).keys()
    moved = _workload(tmp_path / "moved.json", [{"id": 1, "subtime": 0, "res": 2, "profile": "d", "user": "x"},
                                                 {"id": 2, "subtime": 3.5, "res": 4, "profile": "d", "user": "y"}],
                      profiles)
    refused(capsys, ["metrics", str(prefix), "--workload", str(moved)], str(moved), "job '2'.subtime",
            "3.500000 where the run has 1.000000", "not the workload of this run")
    wider = _workload(tmp_path / "wider.json", [{"id": 1, "subtime": 0, "res": 3, "profile": "d", "user": "x"},
                                                 {"id": 2, "subtime": 1, "res": 4, "profile": "d", "user": "y"}],
                      profiles)
    refused(capsys, ["metrics", str(prefix), "--workload", str(wider)], "job '1'.res", "3 where the run has 2")


# ---------------------------------------------------------------------- 4. a run shorter than 1 µs
def test_a_job_shorter_than_the_printed_decimals_has_the_files_stretch(capsys, tmp_path):
    jobs = [{"id": 1, "subtime": 0, "res": 16, "profile": "d", "walltime": 100, "user": "a"},
            {"id": 2, "subtime": 1, "res": 4, "profile": "d", "walltime": 1e-7, "user": "b"},
            {"id": 3, "subtime": 50, "res": 4, "profile": "d", "walltime": 1e-7, "user": "c"}]
    workload = _workload(tmp_path / "w.json", jobs, {"d": {"type": "delay", "delay": 50}})
    prefix = _run(capsys, workload, tmp_path / "o" / "out")
    rows = (tmp_path / "o" / "out_jobs.csv").read_text().splitlines()
    assert any(row.startswith("2,") and ",50.000000,0.000000,50.000000,49.000000," in row for row in rows), rows
    assert main(["metrics", str(prefix), "--workload", str(workload), "--json"]) == 0
    metrics = _strict_json(capsys.readouterr().out)
    assert metrics["mean_stretch_user_b"] == pytest.approx(49 / 1e-7, rel=1e-6)  # waited 49 s, ran 1e-7 s
    assert metrics["mean_stretch_user_c"] == 1.0  # ran at once: no longer left out of the mean
    assert metrics["mean_stretch"] == pytest.approx((1 + 49 / 1e-7 + 1) / 3, rel=1e-6)
    assert main(["run", str(TAURUS), str(workload), "-s", "fcfs", "-e", str(tmp_path / "r" / "out"), "--json"]) == 0
    assert math.isfinite(_strict_json(capsys.readouterr().out)["mean_stretch"])


def test_a_metric_that_is_not_finite_is_null_in_the_json():
    from wattsched.analysis.metrics import metrics_to_json

    assert _strict_json(metrics_to_json({"a": math.inf, "b": -math.inf, "c": math.nan, "d": 1.5, "e": 2})) == {
        "a": None, "b": None, "c": None, "d": 1.5, "e": 2}
