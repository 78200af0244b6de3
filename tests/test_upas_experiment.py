"""``wattsched reproduce upas`` (wattsched/experiments/upas.py) on short traces: the runs of the paper's evaluation,
the metrics normalized to EASY, the report with the paper's numbers and the figures; the real log when found (an
excerpt of LLNL-Thunder stands in for it), synthetic traces shaped like table 1 otherwise."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

from wattsched.experiments.upas import MACHINES, build_runs, prepare_inputs, run_experiment, synthetic_trace

EXCERPT = Path(__file__).parent / "fixtures" / "swf" / "llnl-thunder-2007-excerpt.swf"


def test_the_runs_of_the_papers_evaluation(tmp_path):
    inputs = prepare_inputs(tmp_path, [MACHINES["sdsc"]], synthetic=True, nb_jobs=60)
    runs = build_runs(inputs, tmp_path / "runs")
    names = {r.name for r in runs}
    assert {f"sdsc/0/upas-wq{w}" for w in ("0", "4", "16", "none")} <= names and "sdsc/0/easy" in names
    assert {f"sdsc/{p}/upas-wq{w}" for p in (10, 20, 50, 75) for w in ("0", "none")} <= names
    assert "sdsc/10/upas-wq4" not in names and "sdsc/0/upas-wqnone-t3600" in names
    assert len(runs) == 20 and all(r.dynamic_jobs for r in runs)
    assert [inputs[0].sizes[p] for p in (0, 10, 20, 50, 75)] == [128, 141, 154, 192, 224]
    full = build_runs(inputs, tmp_path / "runs", full=True)
    assert "sdsc/10/upas-wq4" in {r.name for r in full} and len(full) > len(runs)
    wq4 = next(r for r in runs if r.name == "sdsc/0/upas-wq4")
    assert wq4.scheduler == "upas" and wq4.options["wq_threshold"] == 4 and wq4.options["interval_s"] == 600.0


def test_synthetic_traces_are_shaped_like_table_1():
    work = synthetic_trace(MACHINES["sdsc-blue"], seed=2, nb_jobs=300)
    assert len(work["jobs"]) == 300 and work["nb_res"] == 1152
    assert len({j["user"] for j in work["jobs"]}) > 20
    assert max(j["res"] for j in work["jobs"]) <= 1152


def test_a_short_reproduction_writes_the_report_and_figures(tmp_path, monkeypatch):
    pwa = tmp_path / "pwa"  # the archive's folder holds one log (an excerpt of it): the other machine is synthetic
    pwa.mkdir()
    with open(EXCERPT, "rb") as src, gzip.open(pwa / MACHINES["llnl-thunder"].log, "wb") as dst:
        shutil.copyfileobj(src, dst)
    monkeypatch.setenv("WATTSCHED_PWA", str(pwa))
    lines: list[str] = []
    result = run_experiment(tmp_path / "out", report_dir=tmp_path / "report", machines=["llnl-thunder", "sdsc"],
                            nb_jobs=120, workers=1, show_progress=False, note=lines.append)
    frame = result.frame
    assert (frame["status"] == "done").all() and len(frame) == 40
    assert any(line.startswith("LLNL-Thunder: the real log LLNL-Thunder") for line in lines)
    assert any(line.startswith("SDSC: synthetic SDSC-like trace") for line in lines)
    thunder, sdsc = result.inputs
    assert not thunder.synthetic and thunder.nb_estimated_walltimes == thunder.nb_jobs > 100
    assert sdsc.synthetic and sdsc.nb_jobs == 120
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    easy = results[(results["variant"] == "easy") & (results["enlargement"] == 0)]
    assert (easy["energy_idle0_ratio"] == 1.0).all() and (easy["bsld_ratio"] == 1.0).all()
    upas = results[results["dvfs"]]
    assert (upas["nb_jobs_gear_unknown"] == 0).all()
    assert (upas["energy_idle0_ratio"] <= 1.0 + 1e-9).all()  # slower gears never cost computational energy here
    assert (upas[upas["enlargement"] == 0]["nb_jobs_reduced"] > 0).any()
    report = (tmp_path / "report" / "report.md").read_text()
    for section in ("## Inputs and table 1", "## Original size (figures 1-3)", "## The paper's claims on our numbers",
                    "## Enlarged machines (figures 5-7)", "## Side checks", "## Figures"):
        assert section in report
    assert "24.91" in report and "4-12 %" in report  # the paper's numbers beside ours
    figures = sorted(p.name for p in (tmp_path / "report").glob("*.png"))
    assert len(figures) == 7 and "fig4_llnl-thunder_over_time.png" in figures


def test_an_explicit_archive_folder_without_the_log_is_refused(tmp_path):
    from wattsched.base.errors import OptionError

    (tmp_path / "pwa").mkdir()
    with pytest.raises(OptionError, match="no SDSC-SP2-1998-4.2-cln.swf.gz there"):
        prepare_inputs(tmp_path, [MACHINES["sdsc"]], pwa=str(tmp_path / "pwa"), nb_jobs=10)


def test_cli(tmp_path, capsys):
    from wattsched.cli import main

    assert main(["reproduce", "upas", "--out", str(tmp_path), "--machines", "nowhere", "--synthetic", "-q"]) == 2
    err = capsys.readouterr().err
    assert "unknown machine nowhere" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["reproduce", "upas", "--help"])
    assert "LLNL-Atlas" in capsys.readouterr().out


def _frame(savings_pct: dict[str, list[float]], utilization: dict[str, float]) -> pd.DataFrame:
    """Runs at the original size: EASY and WQ 0 / 4 / 16 / none with the given savings (%) and BSLD ratios."""
    rows = []
    for key, values in savings_pct.items():
        rows.append({"machine": key, "variant": "easy", "enlargement": 0, "status": "done", "utilization":
                     utilization[key], "energy_idle0_ratio": 1.0, "energy_idle_low_ratio": 1.0, "bsld_ratio": 1.0})
        for wq, saving in zip(("0", "4", "16", "none"), values):
            ratio = 1.0 - saving / 100.0
            rows.append({"machine": key, "variant": f"upas-wq{wq}", "enlargement": 0, "status": "done",
                         "utilization": utilization[key], "energy_idle0_ratio": ratio, "energy_idle_low_ratio": ratio,
                         "bsld_ratio": 1.0 + saving / 100.0})
    return pd.DataFrame(rows)


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    from types import SimpleNamespace

    from wattsched.experiments.upas import findings

    lines = findings(frame, [SimpleNamespace(label=k) for k in MACHINES])  # type: ignore[list-item]
    table = [line.split(" | ") for line in lines if line.startswith("| ") and not line.startswith("| claim")]
    return {cells[0].removeprefix("| ").split(" — ")[0]: cells[-1].removesuffix(" |") for cells in table}


def test_the_papers_claims_are_decided_by_explicit_tests():
    """The paper's own numbers pass the tests of the report's claims table; moving one machine's saving by more
    than the tolerance, or reversing a direction, fails the claim."""
    paper = {"ctc": [6.0, 9.0, 11.0, 12.0], "sdsc": [0.0, 1.0, 2.0, 4.0], "sdsc-blue": [7.0, 10.0, 11.0, 12.0],
             "llnl-thunder": [4.0, 7.8, 8.0, 8.0], "llnl-atlas": [8.0, 11.5, 12.0, 12.0]}
    util = {"ctc": 0.70, "sdsc": 0.85, "sdsc-blue": 0.69, "llnl-thunder": 0.80, "llnl-atlas": 0.75}
    verdicts = _verdicts(_frame(paper, util))
    per_machine = next(k for k in verdicts if k.startswith("per machine"))
    for claim in ("savings at the original size range from 4 % (very loaded) to 12 % (less loaded)", per_machine,
                  "the highest savings are achieved with no limit", "savings differ by 4-8 % between WQ 0 and no limit",
                  "relative savings of the two energy scenarios are almost equal"):
        assert verdicts[claim] == "yes", claim
    assert verdicts[next(k for k in verdicts if k.startswith("savings are larger where"))] == "yes"
    assert verdicts[next(k for k in verdicts if k.startswith("\"UPAS decreases CPU energy by 8 %"))] == "yes"

    off = _verdicts(_frame({**paper, "ctc": [6.0, 9.0, 11.0, 10.8]}, util))  # 1.2 points below the paper's 12 %
    assert off[per_machine] == "no" and off["savings at the original size range from 4 % (very loaded) to 12 % "
                                            "(less loaded)"] == "yes"
    assert off["savings differ by 4-8 % between WQ 0 and no limit"] == "yes"  # 4.8 points
    reversed_ = _verdicts(_frame({**paper, "sdsc": [4.0, 2.0, 1.0, 0.5]}, util))  # WQ 0 saves most on SDSC
    assert reversed_["the highest savings are achieved with no limit"] == "no"
    flat = _verdicts(_frame({k: [v[-1]] * 4 for k, v in paper.items()}, util))
    assert flat["savings differ by 4-8 % between WQ 0 and no limit"] == "no"
    inverted = _verdicts(_frame(paper, {k: 1.0 - u for k, u in util.items()}))
    assert inverted[next(k for k in inverted if k.startswith("savings are larger where"))] == "no"
