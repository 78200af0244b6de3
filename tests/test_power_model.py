"""The per-host power model (energy_models/power.py): read from platform text and Batsim properties, the
same for the simulator and the schedulers, and its per-job energy estimate against simulated energies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from procset import ProcSet

from wattsched.base.errors import InputError
from wattsched.energy_models.power import ModelTextError, NodeModel, PlatformPower
from wattsched.energy_models.taurus import TAURUS
from wattsched.platforms.generate import taurus_platform_xml
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from tests.conftest import reply

ROOT = Path(__file__).resolve().parent.parent


def test_the_scheduler_reads_the_simulators_model_from_the_properties():
    platform = load_platform(ROOT / "platforms" / "taurus_16.xml")
    power = PlatformPower.from_properties([h.properties for h in platform.hosts])
    assert power.uniform_model == platform.hosts[0].model == TAURUS.node_model
    model = power.host(3)
    assert (model.top_pstate, model.sleep_w, model.switch_on_s, model.switch_off_s) == (0, 9.75, 151.52, 6.1)
    assert model.slowdown(10) == pytest.approx(100.0 / 50.088809946714036)
    assert model.computation_pstates == tuple(range(13))


def test_without_speeds_the_watts_are_known_and_the_speeds_are_not():
    props = {"wattage_per_state": "95:190, 9.75:9.75, 101:101, 125:125", "sleep_pstates": "1:2:3"}
    model = NodeModel.from_properties(props)
    assert (model.nb_pstates, model.sleep_w, model.switch_on_w, model.top_pstate) == (4, 9.75, 125.0, 0)
    assert not model.speeds_known and math.isnan(model.switch_on_s) and model.slowdown(0) == 1.0
    assert NodeModel.from_properties({}).idle_w == (0.0,)  # a host with no power property draws nothing


def test_heterogeneous_hosts_share_models_by_kind():
    fast = {"speed_per_state": "200Mf, 100Mf", "wattage_per_state": "100:200, 100:150"}
    slow = {"speed_per_state": "100Mf, 50Mf", "wattage_per_state": "80:120, 80:100"}
    power = PlatformPower.from_properties([fast, slow, fast, slow])
    assert len(power.models) == 2 and list(power.model_of) == [0, 1, 0, 1]
    assert power.uniform_model is None
    assert power.slowdown(ProcSet((0, 1)), 1) == 2.0
    assert power.job_energy_j(ProcSet((0, 1)), 0, 10.0) == 10.0 * (200 + 120)
    assert power.job_energy_j(ProcSet((0, 1)), 0, 10.0, compute_s=4.0) == 4.0 * 320 + 6.0 * 180


@pytest.mark.parametrize("props,field", [
    ({"wattage_per_state": "95:190, x:1"}, "wattage_per_state"),
    ({"wattage_per_state": "95:190", "sleep_pstates": "0:1"}, "sleep_pstates"),
    ({"wattage_per_state": "95:190", "speed_per_state": "1Mf, 2Mf"}, "wattage_per_state"),
    ({"speed_per_state": "fast"}, "speed_per_state"),
    ({"wattage_per_state": "95:190", "wattage_off": "-1"}, "wattage_off"),
])
def test_a_malformed_property_names_the_resource_and_the_property(props, field):
    with pytest.raises(ModelTextError):
        NodeModel.from_properties(props)
    with pytest.raises(InputError) as error:
        PlatformPower.from_properties([{}, props])
    assert f"compute resource 1 property '{field}'" in str(error.value) and "\n" not in str(error.value)


def test_the_energy_estimate_of_a_job_equals_the_simulated_one(tmp_path):
    """One job alone on its hosts at pstate 5: a compute job, and a composed job (compute then delay)."""
    (tmp_path / "p.xml").write_text(taurus_platform_xml(4))
    cpu = 30 * TAURUS.pstates[5].speed_flops
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": "c", "subtime": 0, "res": 2, "profile": "compute"},
        {"id": "m", "subtime": 0, "res": 2, "profile": "mixed"}], "profiles": {
        "compute": {"type": "parallel_homogeneous", "cpu": cpu, "com": 0},
        "delay": {"type": "delay", "delay": 20},
        "mixed": {"type": "composed", "repeat": 1, "seq": ["compute", "delay"]}}}))
    platform = load_platform(tmp_path / "p.xml")
    sim = Simulation(platform, load_workload(tmp_path / "w.json"))
    sim.start()
    msg = sim.step(reply(0.0, ("SET_RESOURCE_STATE", {"resources": "0-3", "state": "5"})))
    while msg is not None and not any(e["type"] == "JOB_SUBMITTED" for e in msg["events"]):
        msg = sim.step(reply(msg["now"]))
    msg = sim.step(reply(0.0, ("EXECUTE_JOB", {"job_id": "w0!c", "alloc": "0-1"}),
                         ("EXECUTE_JOB", {"job_id": "w0!m", "alloc": "2-3"})))
    while msg is not None:
        msg = sim.step(reply(msg["now"]))
    power = PlatformPower.from_properties([h.properties for h in platform.hosts])
    rows = {rj.job.id: rj for rj in sim.iter_jobs()}
    assert rows["w0!c"].energy_j == pytest.approx(power.job_energy_j(ProcSet((0, 1)), 5, 30.0), rel=1e-12)
    assert rows["w0!m"].end_s == pytest.approx(50.0)
    assert rows["w0!m"].energy_j == pytest.approx(power.job_energy_j(ProcSet((2, 3)), 5, 50.0, compute_s=30.0),
                                                  rel=1e-12)
