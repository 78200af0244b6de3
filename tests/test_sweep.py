"""experiments.sweep: parallel runs, resume, failures reported without losing the other runs."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from wattsched.cli import main
from wattsched.experiments.sweep import Run, failed_runs, load_runs, outputs_exist, report_failures, run_sweep, runs_to_json
from wattsched.base.errors import OptionError

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")


@pytest.fixture
def workload(tmp_path: Path) -> str:
    """The first 30 jobs of the 16-host demo workload (a fraction of a second per run)."""
    full = json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())
    jobs = full["jobs"][:30]
    used = {j["profile"] for j in jobs}
    small = {"nb_res": full["nb_res"], "jobs": jobs, "profiles": {k: v for k, v in full["profiles"].items() if k in used}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(small))
    return str(path)


def tiny_runs(out: Path, workload: str) -> list[Run]:
    window = (0.0, 20000.0)
    return [
        Run("easy", PLATFORM, workload, "easy-backfill", {}, str(out / "easy"), window=window,
            max_power_w=16 * 190.738, extra_windows={"first_hour": (0.0, 3600.0)}, tags={"algorithm": "EASY"}),
        Run("easy-bestfit", PLATFORM, workload, "easy-backfill", {"placement": "best-fit"},
            str(out / "easy_bf"), window=window, tags={"algorithm": "EASY-bf"}),
        Run("fcfs", PLATFORM, workload, "fcfs", {}, str(out / "fcfs"), window=window, tags={"algorithm": "FCFS"}),
    ]


def test_runs_in_parallel_and_returns_metrics(tmp_path: Path, workload: str) -> None:
    runs = tiny_runs(tmp_path / "out", workload)
    frame = run_sweep(runs, workers=2, csv_path=tmp_path / "metrics.csv", show_progress=False)
    assert list(frame["name"]) == ["easy", "easy-bestfit", "fcfs"]
    assert set(frame["status"]) == {"done"}
    assert all(outputs_exist(r.prefix) for r in runs)
    assert (frame["nb_jobs_started"] == 30).all()
    assert list(frame["algorithm"]) == ["EASY", "EASY-bf", "FCFS"]
    easy = frame.set_index("name").loc["easy"]
    assert 0 < easy["utilization"] <= 1
    assert 0 < easy["window_energy_relative"] <= 1
    assert easy["first_hour_nb_jobs_started"] >= 1
    assert easy["first_hour_energy_j"] > 0
    # EASY never waits longer on average than FCFS on the same jobs.
    fcfs = frame.set_index("name").loc["fcfs"]
    assert easy["mean_waiting_time_s"] <= fcfs["mean_waiting_time_s"]
    saved = pd.read_csv(tmp_path / "metrics.csv")
    assert list(saved["name"]) == list(frame["name"])


def test_second_call_skips_existing_outputs_unless_forced(tmp_path: Path, workload: str) -> None:
    runs = tiny_runs(tmp_path / "out", workload)[:2]
    first = run_sweep(runs, workers=2, show_progress=False)
    stamp = Path(runs[0].prefix + "_jobs.csv").stat().st_mtime_ns
    second = run_sweep(runs, workers=2, show_progress=False)
    assert set(second["status"]) == {"skipped"}
    assert Path(runs[0].prefix + "_jobs.csv").stat().st_mtime_ns == stamp
    assert list(second["utilization"]) == pytest.approx(list(first["utilization"]))
    forced = run_sweep(runs, workers=1, force=True, show_progress=False)
    assert set(forced["status"]) == {"done"}


def test_failing_run_is_reported_and_others_complete(tmp_path: Path, workload: str) -> None:
    runs = tiny_runs(tmp_path / "out", workload)
    bad = Run("broken", PLATFORM, workload, "no-such-scheduler", {}, str(tmp_path / "out" / "broken"))
    frame = run_sweep([runs[0], bad, runs[2]], workers=2, show_progress=False)
    assert list(frame["status"]) == ["done", "failed", "done"]
    [(name, error)] = failed_runs(frame)
    assert name == "broken" and "no-such-scheduler" in error and "\n" not in error
    stream = io.StringIO()
    assert report_failures(frame, stream) == 1
    assert stream.getvalue().startswith("run broken failed: unknown scheduler 'no-such-scheduler'")
    assert not outputs_exist(bad.prefix)


def test_duplicate_names_are_refused(tmp_path: Path, workload: str) -> None:
    run = tiny_runs(tmp_path, workload)[0]
    with pytest.raises(OptionError, match="same name 'easy'"):
        run_sweep([run, run], show_progress=False)


def test_cli_round_trip_and_exit_status(tmp_path: Path, workload: str, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tiny_runs(tmp_path / "out", workload)[:1]
    runs.append(Run("bad-option", PLATFORM, workload, "easy-backfill", {"nope": 1}, str(tmp_path / "out" / "bad")))
    spec = tmp_path / "runs.json"
    spec.write_text(runs_to_json(runs))
    assert load_runs(spec) == runs
    assert main(["sweep", str(spec), "--out", str(tmp_path / "table"), "-j", "2", "-q"]) == 1
    err = capsys.readouterr().err
    assert "run bad-option failed: unknown option 'nope'" in err
    assert pd.read_csv(tmp_path / "table" / "results.csv")["status"].tolist() == ["done", "failed"]


def test_off_a_terminal_a_line_per_finished_run(tmp_path: Path, workload: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Without a terminal (stderr captured here) and no choice made, each finished run prints one line: a
    study started under nohup or in CI says how far it is. show_progress=False prints nothing."""
    runs = tiny_runs(tmp_path / "out", workload)[:2]
    run_sweep(runs, workers=1)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0].split(",")[0] for line in lines] == ["runs 1/2", "runs 2/2"]
    assert re.search(r": easy done in \d+ s$", lines[0]) and re.search(r": easy-bestfit done in \d+ s$", lines[1])
    run_sweep(runs, workers=1, force=True, show_progress=False)
    assert capsys.readouterr().err == ""


def test_a_local_cluster_takes_a_free_port_for_its_http_server(tmp_path: Path, workload: str) -> None:
    """Dask's scheduler serves HTTP even without its dashboard, on port 8787 unless told: a sweep (or the web page's
    runs) while another cluster held that port printed Dask's "Port 8787 is already in use" warning."""
    import socket
    import warnings

    holder = socket.socket()
    try:
        holder.bind(("0.0.0.0", 8787))
        holder.listen()
    except OSError:  # already taken by another process: the situation this test makes
        pass
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = run_sweep(tiny_runs(tmp_path / "out", workload)[:2], workers=2, show_progress=False)
    finally:
        holder.close()
    assert set(frame["status"]) == {"done"}
    assert not [w for w in caught if "8787" in str(w.message)], [str(w.message) for w in caught]
