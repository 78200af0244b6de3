"""A preset's pybatsim class (``-s wattsched.schedulers.adapter:EamcReorder``) reads its options as the preset does in
the checks made before a run (:func:`wattsched.experiments.runner.preset_of`): with a model of its own
(``ear_model``), its jobs' applications were checked against the shipped model (noticed in an earlier session: an
application of the model's own was refused), and an energy budget's window was not measured beside the run's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wattsched.cli import main
from wattsched.energy_models.ear import DATA_DIR
from wattsched.experiments.runner import eamc_reading, preset_of

ROOT = Path(__file__).resolve().parent.parent
EAMC = ROOT / "tests" / "fixtures" / "eamc"
# pybatsim 4.0.0a0 logs each dynamic job registered again with Logger.warn, deprecated (as tests/test_hunt43_paths.py)
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")


def test_a_presets_class_is_its_preset_and_another_class_is_none():
    assert preset_of(" wattsched.schedulers.adapter:EamcReorder ") == "eamc-reorder"
    assert preset_of("wattsched.schedulers.adapter:EnergyBud") == "energy-bud"
    assert preset_of("easy-backfill") == "easy-backfill"
    for other in ("wattsched.schedulers.adapter:WattschedScheduler", "wattsched.schedulers.adapter:Nope",
                  "wattsched.schedulers.adapter", "pkg.module:EamcReorder", "sched.py:EamcReorder"):
        assert preset_of(other) is None, other
    assert eamc_reading("wattsched.schedulers.adapter:EamcReorder", {"ear_model": "m"}) == ("m", True)
    assert eamc_reading("wattsched.schedulers.adapter:EasyBackfill", {}) == (None, False)
    assert eamc_reading("pkg.module:EamcReorder", {"ear_model": "m"}) == (None, False)  # its options are its own


def test_an_application_of_a_models_own_runs_through_the_presets_class_as_through_its_name(tmp_path):
    model = tmp_path / "ear"
    shutil.copytree(DATA_DIR, model)
    lines = (model / "apps").read_text().splitlines()
    extra = ["9" + line[1:] for line in lines[1:] if line.startswith("8 ")]  # application 9: a copy of 8
    (model / "apps").write_text("\n".join([str(int(lines[0]) + 1), *lines[1:], *extra]) + "\n")
    workload = json.loads((EAMC / "workload.json").read_text())
    workload["jobs"][0]["app"] = 9
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    jobs = []
    for k, scheduler in enumerate(("eamc-reorder", "wattsched.schedulers.adapter:EamcReorder")):
        assert main(["run", str(EAMC / "platform.xml"), str(path), "-s", scheduler, "-o",
                     json.dumps({"ear_model": str(model)}), "-e", str(tmp_path / f"o{k}" / "r"), "-q"]) == 0
        jobs.append((tmp_path / f"o{k}" / "r_jobs.csv").read_text())
    assert jobs[0] == jobs[1]


def test_the_budget_window_of_a_presets_class_is_measured(capsys, tmp_path):
    options = json.dumps({"budget_fraction": 0.6, "window_end_s": 43200})
    for k, scheduler in enumerate(("energy-bud", "wattsched.schedulers.adapter:EnergyBud")):
        assert main(["run", str(ROOT / "platforms" / "taurus_16.xml"), str(ROOT / "workloads" / "demo_taurus16.json"),
                     "-s", scheduler, "-o", options, "-e", str(tmp_path / f"o{k}" / "r"), "-q", "--json"]) == 0
        metrics = json.loads(capsys.readouterr().out)
        assert metrics["budget_window_energy_j"] > 0, scheduler


def test_a_grids_preset_class_is_checked_on_the_platforms_before_the_sweep(tmp_path):
    """A shutdown on a platform without sleep pstates: refused before any run, as for the preset's name (the class
    used to be a failed run after the others)."""
    from wattsched import api
    from wattsched.base.errors import InputError

    platform = ROOT / "tests" / "fixtures" / "batsim-reference" / "two-clusters" / "platform.xml"
    grid = {"platforms": [str(platform)], "workloads": [{"synth": {"hosts": 4, "days": 1, "load": 0.5}}],
            "schedulers": [{"name": "wattsched.schedulers.adapter:EnergyBud", "options": {"shutdown": True}}]}
    with pytest.raises(InputError, match=r"schedulers\[0\].*on platform.*sleep_pstates"):
        api.sweep(grid, out=tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists()


def test_a_presets_class_given_itself_is_its_preset():
    from wattsched.schedulers.adapter import EamcReorder, WattschedScheduler

    assert preset_of(EamcReorder) == "eamc-reorder"
    assert preset_of(WattschedScheduler) is None and preset_of(dict) is None
    assert eamc_reading(EamcReorder, {"ear_model": "m"}) == ("m", True)
