"""The EFS paper's experiments (wattsched/experiments/efs.py) at a tiny size, and the table-I metric."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

from wattsched.analysis.metrics import per_user_normalized_stretch, stretches
from wattsched.base.errors import OptionError
from wattsched.experiments.efs import PAPER_TABLE1, run_experiment

SDSC = Path(__file__).parent / "fixtures" / "swf" / "sdsc-sp2-excerpt.swf"


def jobs_frame(rows) -> pd.DataFrame:
    """A jobs.csv-like frame from (job_id, wait, run, user)."""
    return pd.DataFrame([{"job_id": j, "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": 0.0,
                          "waiting_time": w, "execution_time": r, "user": u} for j, w, r, u in rows])


def test_normalized_stretch_is_the_mean_of_per_job_ratios() -> None:
    baseline = jobs_frame([("1", 10, 10, "a"), ("2", 0, 10, "a"), ("3", 30, 10, "b")])
    run = jobs_frame([("1", 0, 10, "a"), ("2", 10, 10, "a"), ("3", 30, 10, "b")])
    assert stretches(run).to_dict() == {"1": 1.0, "2": 2.0, "3": 4.0}
    # a: (1/2 + 2/1) / 2 — the mean of the ratios, not the ratio of the means (1.5 / 1.5 = 1)
    assert per_user_normalized_stretch(run, baseline) == {"a": pytest.approx(1.25), "b": 1.0}
    without_user = run.drop(columns="user")
    assert per_user_normalized_stretch(without_user, baseline, {"1": "a", "2": "a"}) == {"a": pytest.approx(1.25)}
    assert per_user_normalized_stretch(without_user, baseline) == {}


def test_tiny_reproduction(tmp_path) -> None:
    pwa = tmp_path / "pwa"
    pwa.mkdir()
    with open(SDSC, "rb") as src, gzip.open(pwa / "SDSC-SP2-1998-4.2-cln.swf.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    out = tmp_path / "efs"
    result = run_experiment(out, traces=["sdsc"], weeks=1, pwa=pwa, nb_users=2, seeds=1, workers=1,
                            show_progress=False)
    frame = result.frame
    assert (frame["status"] == "done").all(), frame[["name", "error"]]
    # Light-ESP: 2 experiments × 4 policies; table I: baseline, 2 checks, 2 users × 2 × 2
    assert len(frame) == 8 + 3 + 8
    assert set(result.lightesp["policy"]) == {"FIFO", "FS", "EFS", "FS+EFS"}
    assert (result.lightesp["utilization"] > 0.5).all()
    stats = result.stats.set_index(["trace", "policy", "efficiency"])
    assert set(stats.index) == {("sdsc", p, e) for p in ("EFS", "FS+EFS") for e in ("green", "gluttonous")}
    assert (stats["users"] == 2).all()
    report = result.report.read_text()
    assert "PWA log SDSC-SP2-1998-4.2-cln.swf.gz" in report
    assert "EFS, equal factors: schedule identical to the baseline" in report
    assert "green users' mean < 1 < gluttonous users' mean" in report
    paper = PAPER_TABLE1[("sdsc", "EFS", "green")]
    assert "| SDSC-SP2 | efs | green |" in report and " | ".join(f"{v:.2f}" for v in paper) in report
    assert "EFS: green < normal < glutton" in report
    for name in ("fig2_lightesp_same_workload.png", "fig3_lightesp_different_workloads.png", "lightesp.csv",
                 "table1.csv", "table1_users.csv", "runs.csv"):
        assert (out / name).exists(), name
    # resumable: a second call simulates nothing again
    again = run_experiment(out, traces=["sdsc"], weeks=1, pwa=pwa, nb_users=2, seeds=1, workers=1,
                           show_progress=False)
    assert (again.frame["status"] == "skipped").all()
    assert "(0 simulated, the others' outputs reused" in again.report.read_text()
    assert "simulated" not in report.split("**Wall time**")[1].split("\n")[0]
    assert again.stats.equals(result.stats)


def test_synthetic_trace_when_the_log_is_missing(tmp_path) -> None:
    result = run_experiment(tmp_path / "efs", parts=["table1"], traces=["sdsc"], weeks=1, pwa=tmp_path, nb_users=1,
                            workers=1, show_progress=False)
    assert "synthetic (SDSC-SP2-1998-4.2-cln.swf.gz not found)" in result.report.read_text()


def test_bad_arguments(tmp_path, capsys) -> None:
    with pytest.raises(OptionError, match="unknown trace"):
        run_experiment(tmp_path, traces=["nowhere"])
    with pytest.raises(OptionError, match="unknown part"):
        run_experiment(tmp_path, parts=["figure9"])
    with pytest.raises(OptionError, match="--pwa"):
        run_experiment(tmp_path, pwa=tmp_path / "missing")
    from wattsched.cli import main

    assert main(["reproduce", "efs", "--out", str(tmp_path / "x"), "--traces", "mars", "-q"]) == 2
    assert "unknown trace(s) mars" in capsys.readouterr().err
    assert not (tmp_path / "x" / "report.md").exists()
    with pytest.raises(SystemExit) as info:
        main(["reproduce", "efs", "--help"])
    assert info.value.code == 0
    assert "table I" in capsys.readouterr().out


def test_other_statistics_of_the_normalized_stretch() -> None:
    baseline = jobs_frame([("1", 10, 10, "a"), ("2", 0, 10, "a")])
    run = jobs_frame([("1", 0, 10, "a"), ("2", 10, 10, "a")])
    assert per_user_normalized_stretch(run, baseline, statistic="geometric") == {"a": pytest.approx(1.0)}
    assert per_user_normalized_stretch(run, baseline, statistic="ratio-of-means") == {"a": pytest.approx(1.0)}
    with pytest.raises(ValueError, match="statistic"):
        per_user_normalized_stretch(run, baseline, statistic="median")


def test_charging_while_jobs_run_is_a_separate_study(tmp_path) -> None:
    result = run_experiment(tmp_path / "efs", parts=["lightesp"], seeds=1, charge="running", workers=1,
                            show_progress=False)
    frame = result.frame.set_index("policy")
    assert '"charge": "running"' in frame.loc["EFS", "options"].iloc[0]
    assert "charge" not in frame.loc["FIFO", "options"].iloc[0]
    assert all("_running" in p for p in frame["prefix"])
    assert "charged while jobs run" in result.report.read_text()
    with pytest.raises(OptionError, match="--charge"):
        run_experiment(tmp_path, charge="start")
