"""experiments.energy_budget: the run matrix of the paper's §V, the report and its ordering checks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wattsched.experiments.energy_budget import (
    ALGORITHMS, BUDGETS, EASY, SWF_WALLTIME_RULE, WINDOW_S, Machine, MachineInputs, available_algorithms,
    build_runs, check_shutdown_lowers_bsld, check_utilization_order, choose_machines, machine_log, plot_figures,
    run_experiment, shutdown_changes, split_swf, swf_inputs, variant, write_report,
)
from wattsched.base.errors import InputError, OptionError
from wattsched.workloads.traces import Trace, sha256_of

ROOT = Path(__file__).resolve().parents[1]
TINY = Machine("Tiny", "tiny", 16)


def tiny_inputs() -> MachineInputs:
    return MachineInputs(TINY, 16, str(ROOT / "platforms" / "taurus_16.xml"),
                         str(ROOT / "workloads" / "demo_taurus16.json"), "demo", 210)


# ----------------------------------------------------------------------------------------- the runs
def test_run_matrix_is_algorithms_times_shutdown_times_budgets_plus_easy(tmp_path: Path) -> None:
    runs = build_runs([tiny_inputs()], tmp_path)
    assert len(runs) == 1 + len(ALGORITHMS) * 2 * len(BUDGETS) == 49
    assert len({r.name for r in runs}) == len({r.prefix for r in runs}) == 49
    easy = runs[0]
    assert (easy.scheduler, dict(easy.options), easy.tags["algorithm"]) == ("easy-backfill", {}, "EASY")
    budgeted = runs[1:]
    assert {r.scheduler for r in budgeted} == {"energy-bud", "reduce-pc", "powercap"}
    assert sorted({r.tags["budget_percent"] for r in budgeted}) == [30, 49, 50, 60, 70, 80, 90, 100]
    for run in budgeted:
        opts = run.options
        assert (opts["window_start_s"], opts["window_end_s"]) == (2 * 86400.0, 5 * 86400.0) == WINDOW_S
        assert opts["shutdown"] is run.tags["shutdown"]
        assert opts["budget_fraction"] == pytest.approx(
            100 / 203.12 if run.tags["budget_percent"] == 49 else run.tags["budget_percent"] / 100)
        assert run.tags["budget_j"] == pytest.approx(16 * 203.12 * 3 * 86400 * opts["budget_fraction"])
        assert run.tags["variant"] == variant(run.tags["algorithm"], opts["shutdown"])
    for run in runs:  # metrics over the week, budget window measured too
        assert run.window == (0.0, 7 * 86400.0)
        assert run.max_power_w == pytest.approx(16 * 190.738)
        assert run.extra_windows["budget"] == WINDOW_S and run.tau_s == 10.0
    per_cell = pd.Series([(r.tags["algorithm"], r.tags["shutdown"]) for r in budgeted]).value_counts()
    assert set(per_cell) == {len(BUDGETS)} and len(per_cell) == 6


def test_missing_presets_are_left_out() -> None:
    have, missing = available_algorithms(ALGORITHMS, {"easy-backfill": 1, "energy-bud": 1})
    assert [a.name for a in have] == ["energyBud"]
    assert [a.name for a in missing] == ["reducePC", "powercap"]
    runs = build_runs([tiny_inputs()], "out", have)
    assert len(runs) == 1 + 2 * len(BUDGETS)


def test_sizes_and_swf_specs() -> None:
    sizes, note = choose_machines(False, None, None)
    assert [n for _, n in sizes] == [144, 420, 1260] and note.startswith("reduced")
    sizes, note = choose_machines(True, ["curie"], None)
    assert [(m.name, n) for m, n in sizes] == [("Curie", 80640)] and note.startswith("full size")
    with pytest.raises(OptionError, match="unknown machine"):
        choose_machines(False, ["nope"], None)
    assert split_swf("a/b.swf:86400") == ("a/b.swf", 86400.0)
    assert split_swf("a/b.swf") == ("a/b.swf", None)


# --------------------------------------------------------------------------------------- the report
def fake_results(machine: str = "SDSC-Blue") -> pd.DataFrame:
    """Every variant at every budget; utilization energyBud > reducePC > powercap; SHUT lowers AVEbsld."""
    base = {"energyBud": 0.80, "reducePC": 0.75, "powercap": 0.70}
    rows = [{"machine": machine, "nb_hosts": 144, "status": "done", "algorithm": "EASY", "variant": "EASY",
             "shutdown": False, "budget_percent": 100, "budget_j": math.inf, "utilization": 0.82,
             "mean_bounded_slowdown": 50.0, "window_energy_relative": 0.9, "week_nb_jobs_started": 600,
             "budget_nb_jobs_started": 300}]
    for algo, u in base.items():
        for shut in (False, True):
            for b in BUDGETS:
                rows.append({
                    "machine": machine, "nb_hosts": 144, "status": "done", "algorithm": algo,
                    "variant": variant(algo, shut), "shutdown": shut, "budget_percent": b.percent,
                    "budget_j": 1e9 * b.fraction, "budget_energy_j": 0.9e9 * b.fraction,
                    "utilization": u * (0.5 + b.fraction / 2) + (0.01 if shut else 0.0),
                    "mean_bounded_slowdown": (100.0 - b.percent) + (-5.0 if shut else 0.0) + 10,
                    "window_energy_relative": 0.4 + 0.4 * b.fraction, "week_nb_jobs_started": 400 + b.percent,
                    "budget_nb_jobs_started": 100 + b.percent,
                })
    frame = pd.DataFrame(rows)
    frame["budget_energy_over_b"] = frame["budget_energy_j"] / frame["budget_j"].replace(math.inf, float("nan"))
    return frame


def test_report_tables_and_figures(tmp_path: Path) -> None:
    frame = fake_results()
    path = write_report(frame, tmp_path / "report.md", wall_s=65.0, size_note="reduced: test")
    text = path.read_text()
    assert "## SDSC-Blue (144 hosts)" in text
    assert "| budget | energyBud IDLE | energyBud SHUT | reducePC IDLE | reducePC SHUT | powercap IDLE | " \
           "powercap SHUT | EASY |" in text
    assert "| 100 % | 0.800 | 0.810 | 0.750 | 0.760 | 0.700 | 0.710 | 0.820 |" in text  # utilization row
    assert "| 49 % |" in text and "| 30 % |" in text
    assert "### AVEbsld (τ = 10 s), all jobs" in text and "### Energy inside the window / budget B" in text
    assert "Missing algorithms" not in text and "**Wall time**: 65 s" in text
    paths = plot_figures(frame, tmp_path)
    assert sorted(p.name for p in paths) == ["sdsc-blue_fig2_utilization.png", "sdsc-blue_fig3_avebsld.png",
                                             "sdsc-blue_fig4_energy.png", "sdsc-blue_fig5_jobs_started.png"]
    assert all(p.stat().st_size > 5000 and p.read_bytes()[:4] == b"\x89PNG" for p in paths)


def test_orderings_hold_on_a_case_where_they_hold(tmp_path: Path) -> None:
    frame = fake_results()
    util = check_utilization_order(frame)
    assert util.status == "holds" and "14" in util.summary and not util.violations
    bsld = check_shutdown_lowers_bsld(frame)
    assert bsld.status == "holds" and "lower at 8 of 8 budgets" in bsld.summary
    text = write_report(frame, tmp_path / "report.md").read_text()
    assert "utilization at budgets below 100 %**: **holds**" in text
    assert "lowers energyBud's AVEbsld**: **holds**" in text


def test_orderings_fail_with_numbers_where_they_fail(tmp_path: Path) -> None:
    frame = fake_results()
    bad = (frame["variant"] == "reducePC SHUT") & (frame["budget_percent"] == 70)
    frame.loc[bad, "utilization"] = 0.99
    at100 = (frame["algorithm"] == "powercap") & (frame["budget_percent"] == 100)
    frame.loc[at100, "utilization"] = 0.99  # 100 % is outside the claim
    shut = frame["variant"] == "energyBud SHUT"
    frame.loc[shut, "mean_bounded_slowdown"] += 20.0  # shutdown now raises AVEbsld everywhere
    util = check_utilization_order(frame)
    assert util.status == "fails" and util.summary.startswith("in 1 of 14")
    assert any("| SHUT | 70 % |" in row and "0.9900" in row for row in util.violations)
    bsld = check_shutdown_lowers_bsld(frame)
    assert bsld.status == "fails" and "lower at 0 of 8 budgets" in bsld.summary
    assert len(bsld.violations) == 2 + 8
    text = write_report(frame, tmp_path / "report.md").read_text()
    assert "**fails**" in text and "| SHUT | 70 % |" in text and "| 30 % | 80.00 | 95.00 | +18.8 % |" in text


def test_missing_algorithms_are_stated_and_never_filled(tmp_path: Path) -> None:
    frame = fake_results()
    frame = frame[frame["algorithm"].isin(["EASY", "energyBud"])]
    missing = [a for a in ALGORITHMS if a.name != "energyBud"]
    text = write_report(frame, tmp_path / "report.md", missing=missing).read_text()
    assert "**Missing algorithms**: the presets `reduce-pc` (reducePC), `powercap` (powercap)" in text
    assert "reducePC IDLE" not in text and "powercap SHUT" not in text
    assert "**not checked**. no results for reducePC, powercap." in text


def test_end_to_end_tiny_machine(tmp_path: Path) -> None:
    """Inputs, EASY load calibration, sweep, results.csv, report and figures on a 16-host machine."""
    result = run_experiment(tmp_path, [(TINY, 16)], algorithms=(), workers=1)
    assert (tmp_path / "results.csv").exists() and (tmp_path / "report.md").exists()
    assert list(result.frame["algorithm"]) == [EASY.name]
    assert result.frame["utilization"].iloc[0] > 0.70 or "load 1.3" in result.notes[0]
    text = (tmp_path / "report.md").read_text()
    assert "| Tiny | 16 | synthetic week" in text
    assert (tmp_path / "tiny_fig2_utilization.png").exists()
    # EASY was simulated by the load calibration of this invocation: not "reused"; a second invocation reuses it
    assert result.frame["status"].tolist() == ["done"] and "reused" not in text
    again = run_experiment(tmp_path, [(TINY, 16)], algorithms=(), workers=1)
    assert again.frame["status"].tolist() == ["skipped"]
    assert "1 of the 1 runs reused the outputs of an earlier one" in (tmp_path / "report.md").read_text()


# ------------------------------------------------------------------------------- the real logs as inputs
PWA = ROOT / "tests" / "fixtures" / "swf" / "pwa"  # excerpts of the archive's logs (fixtures README)
BLUE = PWA / "SDSC-BLUE-2000-4.2-cln-head200.swf.gz"
BLUE_MACHINE = Machine("SDSC-Blue", "sdsc-blue", 1152, "sdsc-blue")


def _catalogue(path: Path, sha256: str | None = None) -> dict[str, Trace]:
    return {"sdsc-blue": Trace("sdsc-blue", path.name, "l_x", "test", 1152, 200, "", "",
                               sha256 or sha256_of(path))}


def test_machine_log_from_the_mirror_checked_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATTSCHED_TRACES", str(tmp_path / "cache"))  # an empty download cache
    empty = tmp_path / "empty"
    empty.mkdir()
    assert machine_log(BLUE_MACHINE, PWA, catalogue=_catalogue(BLUE)) == BLUE
    assert machine_log(BLUE_MACHINE, empty, catalogue=_catalogue(BLUE)) is None
    assert machine_log(Machine("MetaCentrum", "metacentrum", 3356), PWA) is None  # not in the archive copy
    with pytest.raises(InputError, match="sha256"):  # another file under the log's name is refused
        machine_log(BLUE_MACHINE, PWA, catalogue=_catalogue(BLUE, "0" * 64))
    with pytest.raises(OptionError, match="no such folder"):
        machine_log(BLUE_MACHINE, tmp_path / "nowhere")


def test_a_real_week_is_the_busiest_with_its_source_stated(tmp_path: Path) -> None:
    from wattsched.workloads.swf import busiest_window, read_swf_trace

    inp = swf_inputs(BLUE_MACHINE, BLUE, tmp_path, catalogue_name="sdsc-blue")
    start_s, _ = busiest_window(BLUE, nb_hosts=1152, duration_s=7 * 86400.0, step_s=86400.0)
    _, records = read_swf_trace(BLUE)
    in_week = [r for r in records if start_s <= r["submit_time"] < start_s + 7 * 86400.0 and r["run_time"] > 0]
    workload = json.loads(Path(inp.workload).read_text())
    assert inp.nb_hosts == workload["nb_res"] == 1152 and inp.nb_jobs == len(workload["jobs"]) == len(in_week) > 0
    assert all(0 <= j["subtime"] < 7 * 86400.0 and j["walltime"] > 0 for j in workload["jobs"])
    assert workload["meta"]["walltime_rule"] == SWF_WALLTIME_RULE == "runtime"
    assert "busiest week" in inp.source and "catalogue `sdsc-blue`" in inp.source
    assert f"trace days {start_s / 86400:g}-" in inp.source
    assert sha256_of(BLUE) in inp.details[0] and f"{inp.nb_jobs} jobs of 200 lines" in inp.details[1]
    mid = sorted(r["submit_time"] for r in in_week)[len(in_week) // 2]
    later = swf_inputs(BLUE_MACHINE, f"{BLUE}:{mid:g}", tmp_path)  # a week given by its start
    expected = [r for r in records if mid <= r["submit_time"] < mid + 7 * 86400.0 and r["run_time"] > 0]
    assert "the week given" in later.source and later.nb_jobs == len(expected) < inp.nb_jobs
    with pytest.raises(InputError, match="no job is submitted in the week"):
        swf_inputs(BLUE_MACHINE, f"{BLUE}:1e9", tmp_path)


def test_synthetic_weeks_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wattsched.experiments.energy_budget as eb

    small, big = Machine("Small", "small", 16, "small"), Machine("Big", "big", 5000, "big")
    monkeypatch.setattr(eb, "machine_log", lambda machine, pwa=None: BLUE if machine.key == "big" else None)
    inp = eb.machine_inputs(small, 16, tmp_path, full=False)
    assert inp.source.startswith("synthetic week") and "no small log in the mirror or cache" in inp.details[0]
    inp = eb.machine_inputs(big, 16, tmp_path, full=False)  # a real week needs the 5,000 hosts: not when reduced
    assert inp.nb_hosts == 16 and "needs all 5000 hosts" in inp.details[0]
    assert eb.machine_inputs(big, 16, tmp_path, full=False, synthetic=True).details == ()
    inp = eb.machine_inputs(big, 16, tmp_path, full=True)
    assert inp.nb_hosts == 5000 and "PWA log" in inp.source


def test_table2_is_the_mean_change_with_shutdown_beside_the_papers(tmp_path: Path) -> None:
    frame = fake_results()
    table = shutdown_changes(frame)
    expected = sum(100 * -5.0 / ((100 - b.percent) + 10) for b in BUDGETS) / len(BUDGETS)
    assert table.loc["mean_bounded_slowdown", "energyBud"] == pytest.approx(expected)
    idle = frame[(frame["variant"] == "powercap IDLE")].set_index("budget_percent")["utilization"]
    assert table.loc["utilization", "powercap"] == pytest.approx(
        sum(100 * 0.01 / idle[b.percent] for b in BUDGETS) / len(BUDGETS))
    assert table.loc["window_energy_relative", "reducePC"] == pytest.approx(0.0)
    no_idle_at_30 = frame[~((frame["budget_percent"] == 30) & (frame["shutdown"] == False))]  # noqa: E712
    fewer = sum(100 * -5.0 / ((100 - b.percent) + 10) for b in BUDGETS if b.percent != 30) / (len(BUDGETS) - 1)
    assert shutdown_changes(no_idle_at_30).loc["mean_bounded_slowdown", "energyBud"] == pytest.approx(fewer)
    text = write_report(frame, tmp_path / "report.md").read_text()
    assert f"| AVEbsld | {expected:+.2f} % / -8.61 % |" in text


def test_end_to_end_on_a_log_excerpt(tmp_path: Path) -> None:
    """A machine given a log (``--swf``): its busiest week, EASY once, the source in the report."""
    result = run_experiment(tmp_path, [(TINY, 16)], swf={"tiny": str(BLUE)}, algorithms=(), workers=1)
    assert list(result.frame["algorithm"]) == [EASY.name] and result.inputs[0].nb_hosts == 16
    text = (tmp_path / "report.md").read_text()
    assert "| Tiny | 16 | PWA log SDSC-BLUE-2000-4.2-cln-head200.swf.gz, its busiest week" in text
    assert f"sha256 {sha256_of(BLUE)}" in text and "too large" in text  # the summary line: wide jobs dropped


def test_budgets_below_the_idle_platform_without_shutdown_are_refused_by_design(tmp_path: Path) -> None:
    """The 30 % runs without shutdown are refused before simulating, as they must be: the report lists them
    as refused, not failed, and `wattsched reproduce energy-budget` does not count them as failures (exit 0),
    while any other failure is still one."""
    from wattsched.experiments.energy_budget import refused_by_design

    idle_error = ("option 'budget_fraction': budget 1.8e+10 J is below the policy's estimate of the platform held "
                  "idle over the window (...); no schedule can meet it without shutdown")
    frame = pd.DataFrame([
        {"name": "m/energyBud IDLE/30", "machine": "m", "status": "failed", "error": idle_error, "shutdown": False,
         "budget_fraction": 0.3},
        {"name": "m/energyBud SHUT/30", "machine": "m", "status": "failed", "error": "boom", "shutdown": True, "budget_fraction": 0.3},
        {"name": "m/energyBud IDLE/49", "status": "failed", "error": "boom", "shutdown": False,
         "budget_fraction": 100 / 203.12},
        {"name": "m/EASY", "status": "done", "error": None, "shutdown": None, "budget_fraction": float("nan")},
    ])
    assert refused_by_design(frame).tolist() == [True, False, False, False]
    text = write_report(frame.iloc[:2], tmp_path / "report.md").read_text()
    assert "**Refused runs** (1), as they should be" in text and "- `m/energyBud IDLE/30`" in text
    assert "**Failed runs** (1)" in text and "`m/energyBud SHUT/30`: boom" in text


def test_the_wall_time_says_when_runs_were_reused(tmp_path: Path) -> None:
    """A report written again over earlier outputs (runs ``skipped``) does not pass the seconds of this
    invocation off as the experiment's."""
    frame = pd.DataFrame([{"name": "m/EASY", "machine": "m", "status": "skipped"},
                          {"name": "m/x", "machine": "m", "status": "done"}])
    text = write_report(frame.iloc[:0], tmp_path / "a.md", wall_s=60.0).read_text()
    assert "**Wall time**: 60 s (1.0 min)" in text and "reused" not in text
    text = write_report(frame, tmp_path / "b.md", wall_s=38.0).read_text()
    assert "1 of the 2 runs reused the outputs of an earlier one" in text


def test_synthetic_weeks_of_loads_differing_in_the_third_decimal_are_two_weeks(tmp_path: Path) -> None:
    """The cache's file name kept two decimals of the load: --load 0.951 reused the week drawn for 0.954."""
    from wattsched.experiments.energy_budget import MACHINES, synthetic_inputs

    a = synthetic_inputs(MACHINES[0], 16, tmp_path, seed=1, load=0.951)
    b = synthetic_inputs(MACHINES[0], 16, tmp_path, seed=1, load=0.954)
    assert a.workload != b.workload
    assert Path(a.workload).read_text() != Path(b.workload).read_text()
    assert synthetic_inputs(MACHINES[0], 16, tmp_path, seed=1, load=0.951).workload == a.workload  # reused
