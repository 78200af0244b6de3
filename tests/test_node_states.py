"""Node states and the ESC paper's table-2 statistics from Batsim outputs (analysis/node_states.py,
``wattsched node-stats``) on a hand-computed run, on real Batsim's ``esc-states`` files, and with times
that ``_pstate_changes.csv`` prints rounded."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from wattsched.analysis.node_states import (
    IDLE, OFF, RUNNING, SWITCHING_OFF, SWITCHING_ON, format_duration, node_states, onoff_statistics,
)
from wattsched.cli import main
from wattsched.platforms.generate import esc_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE


def run(tmp_path: Path, name: str, scheduler: str, options: dict, subtime: float = 1000.0) -> Path:
    platform = tmp_path / "p.xml"
    platform.write_text(esc_platform_xml(2))
    workload = tmp_path / f"{name}.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 100e9,
                                                                    "com": 0}},
                                    "jobs": [{"id": 1, "subtime": subtime, "res": 2, "profile": "c"}]}))
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, scheduler_handler(scheduler, options))
    write_outputs(sim, tmp_path / name)
    return tmp_path / name


def test_states_and_table2_of_a_hand_computed_run(tmp_path, capsys):
    """Two nodes (the run of test_esc_node): idle [0, 120), switching off [120, 600), standby
    [600, 1020), switching on [1020, 1575), running [1575, 1675); always-on FCFS runs the job at 1000."""
    esc = run(tmp_path, "esc", "esc", {"period_s": 60, "idle_s": 100})
    base = run(tmp_path, "fcfs", "fcfs", {})
    st = node_states(esc)
    expected = [(0.0, 120.0, IDLE), (120.0, 600.0, SWITCHING_OFF), (600.0, 1020.0, OFF),
                (1020.0, 1575.0, SWITCHING_ON), (1575.0, 1675.0, RUNNING)]
    assert st.intervals == [expected, expected] and st.exact_times
    assert st.pstates[0] == [(0.0, 0), (600.0, 1), (1575.0, 0)]
    assert st.jobs[1] == [(1575.0, 1675.0, "1")]
    s = onoff_statistics(esc, baseline=base)
    assert (s.nb_shutdowns, s.max_active_nodes) == (2, 2)
    assert (s.active_s, s.inactive_s) == (2 * 1255.0, 2 * 420.0)
    assert s.mean_active_interval_total_s == 2 * (600 + 655) / 2 and s.mean_inactive_interval_total_s == 2 * 420.0
    assert math.isnan(s.mean_time_between_shutdowns_s)  # one shutdown per node
    assert s.energy_j == pytest.approx(2 * 150 * 120 + 2 * 38844 + 2 * 2 * 420 + 2 * 49356 + 2 * 230 * 100, abs=1e-6)
    assert s.baseline_energy_j == pytest.approx(2 * 150 * 1000 + 2 * 230 * 100, abs=1e-6)
    assert (s.makespan_s, s.time_ratio) == (1675.0, 1675.0 / 1100.0)
    assert s.energy_ratio == pytest.approx(260080.0 / 346000.0)
    assert main(["node-stats", str(esc), "--baseline", str(base), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["nb_shutdowns_per_node"] == 1.0 and out["mean_time_between_shutdowns_s"] is None
    assert out["time_switching_on_s"] == 2 * 555.0
    assert main(["node-stats", str(esc), "--baseline", str(base)]) == 0
    text = capsys.readouterr().out
    assert "Maximum active nodes" in text and "2 of 2" in text and "energy ratio 0.7517" in text


def test_real_batsims_files_agree_with_its_schedule(tmp_path):
    """``esc-states``: 29 shutdowns of 480 s and 23 boots of 555 s (behaviour 45), computing and idle time
    as Batsim's own ``time_computing`` / ``time_idle``."""
    s = onoff_statistics(REFERENCE / "esc-states" / "out")
    assert s.nb_shutdowns == 29 and s.max_active_nodes == 6
    t = s.time_in_state_s
    assert (t["switching off"], t["switching on"], t["running"], t["idle"]) == (13920.0, 12765.0, 17150.0, 13919.0)
    assert sum(t.values()) == 6 * s.end_s


def test_times_past_a_million_seconds_come_from_consumed_energy(tmp_path, caplog):
    # pass times are multiples of 7 s: 1234569 s is printed 1.23457e+06 in pstate_changes.csv
    esc = run(tmp_path, "late", "esc", {"period_s": 7, "idle_s": 100}, subtime=1234567.0)
    assert "1.23457e+06" in (tmp_path / "late_pstate_changes.csv").read_text()
    st = node_states(esc)
    assert st.exact_times and (1234569.0, 1235124.0, SWITCHING_ON) in st.intervals[0]
    (tmp_path / "late_consumed_energy.csv").unlink()
    rough = node_states(esc)
    assert not rough.exact_times and "6-significant-digit" in caplog.text
    assert (1234570.0, 1235120.0, SWITCHING_ON) in rough.intervals[0]


def test_format_duration():
    assert format_duration(24010 * 86400 + 19 * 3600 + 27 * 60 + 52) == "24010d 19h 27m 52s"
    assert format_duration(14 * 3600 + 34 * 60 + 2) == "14h 34m 2s"
    assert format_duration(math.nan) == "n/a"
