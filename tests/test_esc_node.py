"""The ESC paper's five-state node (energy_models/esc.py) and its platforms (platforms/generate.py): the
numbers of §3, the ``esc-states`` recording of real Batsim, and the energy of a hand-computed run to the
microjoule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wattsched.cli import main
from wattsched.energy_models.esc import ESC, WH_J, esc_node
from wattsched.platforms.generate import esc_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import REFERENCE

ROOT = Path(__file__).resolve().parents[1]
RECORDING = REFERENCE / "esc-states"


def test_the_node_has_the_papers_numbers():
    m = ESC.node_model
    assert (m.idle_w[0], m.full_w[0], m.sleep_w) == (150.0, 230.0, 2.0)
    assert (m.switch_off_s, m.switch_on_s) == (480.0, 555.0)
    assert m.switch_off_w * m.switch_off_s == ESC.switch_off_j == 10.79 * WH_J == 38844.0
    assert m.switch_on_w * m.switch_on_s == ESC.switch_on_j == 13.71 * WH_J == 49356.0
    assert (m.sleep_pstate, m.switch_off_pstate, m.switch_on_pstate) == (1, 2, 3)


def test_generated_platform_is_the_recordings_with_the_papers_boot_energy(tmp_path):
    """Same hosts, names, ids, speeds and powers as real Batsim's ``esc-states`` platform; only the boot's
    mean power differs (the recording rounds it to 88.92 W), and ``esc_node(switch_on_w=88.92)`` is it."""
    reference = load_platform(RECORDING / "platform.xml")
    for node, same_boot in ((ESC, False), (esc_node(switch_on_w=88.92), True)):
        path = tmp_path / "p.xml"
        path.write_text(esc_platform_xml(6, cluster=False, node=node))
        ours = load_platform(path)
        assert [h.name for h in ours.hosts] == [h.name for h in reference.hosts]
        for a, b in zip(ours.hosts, reference.hosts):
            assert a.model.speeds_flops == b.model.speeds_flops
            assert a.model.idle_w[:3] == b.model.idle_w[:3] and a.model.full_w[:3] == b.model.full_w[:3]
            assert (a.model.sleep_pstate, a.model.switch_off_pstate, a.model.switch_on_pstate) == (1, 2, 3)
            assert (a.model.switch_on_w == b.model.switch_on_w) is same_boot
            assert a.properties["speed_per_state"] == "1000.0Mf, 1e-9Mf, 0.0020833333333333333f, 0.0018018018018018018f"
    assert reference.hosts[0].model.switch_on_w * 555 == pytest.approx(49350.6)


def test_platforms_of_any_size_name_hosts_in_byte_order(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(esc_platform_xml(11))
    names = [h.name for h in load_platform(path).hosts]
    assert names == sorted(f"node{i}" for i in range(11))  # node0, node1, node10, node2, ...: hostname order
    for n in (128, 57):
        assert (ROOT / "platforms" / f"esc_{n}.xml").read_text() == esc_platform_xml(n)


def test_cli_writes_an_esc_platform(tmp_path):
    out = tmp_path / "p.xml"
    assert main(["platform", "--node", "esc", "--hosts", "3", "--flat", "--output", str(out)]) == 0
    assert out.read_text() == esc_platform_xml(3, cluster=False)


def _run(tmp_path: Path, node, options: dict) -> Simulation:
    platform = tmp_path / "p.xml"
    platform.write_text(esc_platform_xml(2, node=node))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "profiles": {"c100": {"type": "parallel_homogeneous", "cpu": 100e9,
                                                                       "com": 0}},
                                    "jobs": [{"id": 1, "subtime": 1000, "res": 2, "profile": "c100", "walltime": 200}]}))
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, scheduler_handler("esc", options))
    return sim


@pytest.mark.parametrize("node,boot_j", [(ESC, 49356.0), (esc_node(switch_on_w=88.92), 49350.6)])
def test_energy_of_a_hand_computed_run_to_the_microjoule(tmp_path, node, boot_j):
    """Two nodes, passes every 60 s, idle_s 100 s, one 2-node job of 100 s submitted at 1000 s:

    - [0, 120): both idle (the pass at 120 is the first with an idle time above 100 s): 2 × 150 W × 120 s;
    - [120, 600): both power off: 2 × 10.79 Wh;
    - [600, 1020): both in standby until the pass after the submission (rule 1): 2 × 2 W × 420 s;
    - [1020, 1575): both power on: 2 × 13.71 Wh;
    - [1575, 1675): the job, loaded: 2 × 230 W × 100 s; then the work is done and the simulation ends.
    """
    sim = _run(tmp_path, node, {"period_s": 60, "idle_s": 100})
    job = sim.jobs_rows[0]
    assert (job.start_s, job.end_s) == (1575.0, 1675.0)
    expected = 2 * 150 * 120 + 2 * 10.79 * WH_J + 2 * 2 * 420 + 2 * boot_j + 2 * 230 * 100
    assert sim.energy_j == pytest.approx(expected, abs=1e-6)
    assert sim.makespan_s == 1675.0
    rows = {(t, kind): e for t, e, kind, _ in sim.energy_rows}
    assert rows[(600.0, "p")] == pytest.approx(2 * 150 * 120 + 2 * 38844.0, abs=1e-6)  # a shutdown: 10.79 Wh
    assert rows[(1575.0, "p")] - rows[(1020.0, "p")] == pytest.approx(2 * boot_j, abs=1e-6)  # a boot
