"""The ESC paper's experiment (experiments/esc.py, ``wattsched reproduce esc``) at a tiny size: the NASA
log read from an excerpt of the real one (tests/fixtures/swf), the synthetic fallback, the report beside
the paper's numbers, the figures and the Paraver traces."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from wattsched.base.errors import OptionError
from wattsched.cli import main
from wattsched.experiments import esc
from wattsched.experiments.esc import NASA_LOG, WORKLOADS, find_nasa_log, implied_load, synthetic_log

EXCERPT = Path(__file__).parent / "fixtures" / "swf" / "nasa-ipsc-1993-excerpt.swf"


@pytest.fixture
def pwa_dir(tmp_path) -> Path:
    folder = tmp_path / "pwa"
    folder.mkdir()
    with open(EXCERPT, "rb") as src, gzip.open(folder / NASA_LOG, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return folder


def test_paper_numbers_and_the_loads_they_imply():
    nasa, osc = WORKLOADS["nasa"], WORKLOADS["osc"]
    assert round(nasa.paper_energy_ratio, 2) == 0.73 and round(osc.paper_energy_ratio, 3) == 0.698
    assert round(nasa.paper_time_ratio, 6) == 1.00007 and round(osc.paper_time_ratio, 2) == 1.47
    # always-on energy = nodes × time × (150 W + 80 W × U)
    assert (nasa.load, osc.load) == (0.466, 0.4)
    assert implied_load(150 * 128 * 1000 / 3.6e9, 128, 1000.0) == pytest.approx(0.0)


def test_synthetic_logs_meet_their_job_count_and_load():
    work = synthetic_log(57, 20.0, 0.4, 2400, seed=3)
    assert abs(len(work["jobs"]) - 2400) <= 0.03 * 2400  # a small log: the count moves by lumps
    assert work["meta"]["offered_load"] == pytest.approx(0.4, abs=0.01)
    assert max(j["subtime"] for j in work["jobs"]) < 20 * 86400


def test_the_nasa_log_is_found_where_it_is_said_to_be(pwa_dir, tmp_path, monkeypatch):
    assert find_nasa_log(pwa_dir) == pwa_dir / NASA_LOG
    with pytest.raises(OptionError, match="no NASA-iPSC-1993-3.1-cln.swf.gz there"):
        find_nasa_log(tmp_path)
    monkeypatch.setenv("WATTSCHED_PWA", str(pwa_dir))
    assert find_nasa_log() == (pwa_dir / NASA_LOG).resolve()


def test_reproduction_at_a_tiny_size(pwa_dir, tmp_path, capsys):
    out, report = tmp_path / "out", tmp_path / "report"
    assert main(["reproduce", "esc", "--out", str(out), "--report-dir", str(report), "--pwa", str(pwa_dir),
                 "--days", "2", "-j", "1", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "nasa: the real log NASA-iPSC-1993-3.1-cln.swf.gz" in printed
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["workload"]) == {"nasa", "osc-like"} and len(frame) == 2 * 10
    escs = frame[frame["variant"] != "always-on"]
    assert (escs["energy_ratio"] < 1).all() and (escs["time_ratio"] >= 1).all()
    assert (frame[frame["variant"] == "always-on"]["nb_shutdowns"] == 0).all()
    text = (report / "report.md").read_text()
    for fragment in ("| nasa | with ESC |", "92d 0h 12m 59s", "38.73", "117.65", "| Maximum active nodes |",
                     "32 of 57", "| osc-like | 7200 | none |"):
        assert fragment in text, fragment
    for name in ("nasa_active_nodes.png", "osc-like_node_states_day.png", "grid.png"):
        assert (report / name).stat().st_size > 1000
    assert (out / "paraver" / "nasa.prv").read_text().startswith("#Paraver (")
    assert (out / "paraver" / "osc-like.row").read_text().splitlines()[1] == "node0"


def test_without_the_log_nasa_is_synthetic(tmp_path, monkeypatch):
    monkeypatch.setattr(esc, "find_nasa_log", lambda pwa=None: None)
    inputs = esc.prepare_inputs(tmp_path, days=1.0)
    assert [i.label for i in inputs] == ["nasa-like", "osc-like"]
    work = json.loads(Path(inputs[0].path).read_text())
    sizes = {j["res"] for j in work["jobs"]}
    assert sizes <= {1, 2, 4, 8, 16, 32, 64, 128}  # hypercube partitions
    assert abs(len(work["jobs"]) - 42264 / 92) <= 0.05 * 42264 / 92


def test_a_missing_pwa_dir_is_one_line(tmp_path, capsys):
    assert main(["reproduce", "esc", "--out", str(tmp_path / "o"), "--pwa", str(tmp_path), "--days", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--pwa" in err
    assert not (tmp_path / "o" / "results.csv").exists()
