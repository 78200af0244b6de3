"""Golden regression: every scheduler preset on small fixed inputs must reproduce its stored outputs.

The golden files live in ``tests/golden/<preset>/<input>/out_*.csv``. After an intended change of
behaviour, regenerate them with ``make golden`` (``python -m tests.test_golden --update``) and review
the diff of the CSV files in the commit.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from wattsched.schedulers.protocol import needs_dynamic_jobs, scheduler_handler
from wattsched.schedulers.presets import PRESETS
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.analysis.regress import compare_outputs, format_report, update_golden

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "batsim-reference"

#: Small fixed inputs: (platform, workload).
INPUTS = {
    "taurus16-demo": (ROOT / "platforms" / "taurus_16.xml", ROOT / "workloads" / "demo_taurus16.json"),
    "taurus16-random150": (REFERENCE / "long-shutdown-fcfs" / "platform.xml",
                           REFERENCE / "long-shutdown-fcfs" / "workload.json"),
    # the demo's jobs with a β each (wattsched beta) on 16 UPAS processors (wattsched platform --node upas)
    "upas16-demo": (ROOT / "platforms" / "upas_16.xml", ROOT / "workloads" / "demo_upas16.json"),
}
#: The inputs of every variant not in VARIANT_INPUTS.
DEFAULT_INPUTS = ("taurus16-demo", "taurus16-random150")
#: Inputs with partitions and applications (EAMC): 8 + 8 hosts of the p1/p2 system, 80 jobs of the 33 % mix
#: (``wattsched platform --node eamc --hosts 8``; ``wattsched eamc-workload --mix 33 --seed 7 --jobs 80
#: --max-res 8 --mean-res 3 --mean-runtime-h 1 --days 1``), simulated with dynamic jobs.
EAMC_INPUTS = {
    "eamc-p1p2-80": (Path(__file__).resolve().parent / "fixtures" / "eamc" / "platform.xml",
                     Path(__file__).resolve().parent / "fixtures" / "eamc" / "workload.json"),
}

#: An energy budget of half the all-computing energy over a window in the middle of each input.
BUDGET = {"budget_fraction": 0.5, "window_start_s": 20000.0, "window_end_s": 60000.0}

#: Golden variants: name -> (preset, options). Every preset appears at least once.
VARIANTS: dict[str, tuple[str, dict]] = {
    "fcfs": ("fcfs", {}),
    "easy-backfill": ("easy-backfill", {}),
    "energy-bud": ("energy-bud", BUDGET),
    "energy-bud-shutdown": ("energy-bud", {**BUDGET, "shutdown": True}),
    "reduce-pc": ("reduce-pc", BUDGET),
    "reduce-pc-shutdown": ("reduce-pc", {**BUDGET, "shutdown": True}),
    "powercap": ("powercap", BUDGET),
    "powercap-shutdown": ("powercap", {**BUDGET, "shutdown": True}),
    # a combination no preset names: reducePC with shutdown and best-fit placement
    "compose": ("compose", {**BUDGET, "admission": "reduce-pc", "power": "shutdown", "placement": "best-fit"}),
    # fair-share orders (EFS paper); a short half-life and charging while jobs run, so that both matter
    "fairshare": ("fairshare", {}),
    "fairshare-running": ("fairshare", {"charge": "running", "half_life_s": 3600.0, "shares": {"1": 3}}),
    "efs": ("efs", {}),
    "efs-shutdown": ("efs", {"shutdown": True, "half_life_s": 7200.0}),
    "fs-efs": ("fs-efs", {"normalization": "total"}),
    # EnergyFairShare under an energy budget with shutdown
    "compose-efs-energy-bud": ("compose", {**BUDGET, "order": "efs", "admission": "energy-bud", "power": "shutdown"}),
    "esc": ("esc", {}),
    # ESC's rules behind EASY under an energy budget
    "esc-easy-budget": ("compose", {**BUDGET, "admission": "energy-bud", "power": "esc", "idle_s": 600.0,
                                    "period_s": 300.0}),
    # UPAS (its defaults: WQ_threshold 0), without a wait-queue limit, with shutdown, and under an energy budget
    "upas": ("upas", {}),
    "upas-no-limit": ("upas", {"wq_threshold": None}),
    "upas-shutdown": ("upas", {"wq_threshold": 4, "shutdown": True}),
    "compose-upas-energy-bud": ("compose", {**BUDGET, "frequency": "upas", "admission": "energy-bud",
                                            "wq_threshold": None, "beta_at_start": "worst-case"}),
}
#: Variants run on other inputs than DEFAULT_INPUTS (UPAS needs a platform whose hosts name their gears).
VARIANT_INPUTS: dict[str, tuple[str, ...]] = {
    name: ("upas16-demo",) for name in ("upas", "upas-no-limit", "upas-shutdown", "compose-upas-energy-bud")}

#: Golden variants on the EAMC inputs only: the EAMC paper's policies and baselines, and compositions.
EAMC_VARIANTS: dict[str, tuple[str, dict]] = {
    "eamc-reorder": ("eamc-reorder", {}),
    "eamc-priority-inc": ("eamc-priority-inc", {"t_weight": 1.5}),
    # the paper's reading of the 35 % rule (no application is beyond it here: as PriorityInc)
    "eamc-priority-inc-v": ("eamc-priority-inc-v", {"t_weight": 1.5}),
    # the plugin's scores and absolute threshold, under which some applications are beyond it
    "eamc-priority-inc-v-plugin": ("eamc-priority-inc-v", {"epm": "plugin", "t_weight": 1.5}),
    "eamc-base": ("eamc-base", {}),
    "min-runtime": ("min-runtime", {}),
    "min-energy": ("min-energy", {}),
    # EAMC with opportunistic shutdown
    "eamc-priority-inc-shutdown": ("eamc-priority-inc", {"shutdown": True}),
    # EAMC's placement and f_opt behind a plain FCFS queue (no entries: each job's partitions best first)
    "compose-fcfs-eamc": ("compose", {"order": "fcfs", "placement": "partitions", "frequency": "eamc"}),
}
VARIANTS.update(EAMC_VARIANTS)


def run_case(preset: str, input_name: str, prefix: Path, options: dict) -> None:
    platform, workload = {**INPUTS, **EAMC_INPUTS}[input_name]
    handler = scheduler_handler(preset, options)
    dynamic = needs_dynamic_jobs(handler)  # as 'wattsched run' does for a preset that re-registers jobs (UPAS, EAMC)
    sim = Simulation(load_platform(platform), load_workload(workload), dynamic_jobs=dynamic,
                     acknowledge_dynamic_jobs=dynamic)
    run_inprocess(sim, handler)
    write_outputs(sim, prefix)


CASES = [(v, i) for v in VARIANTS
         for i in sorted(EAMC_INPUTS if v in EAMC_VARIANTS else VARIANT_INPUTS.get(v, DEFAULT_INPUTS))]


def test_every_preset_has_golden_outputs() -> None:
    assert set(PRESETS) <= {preset for preset, _ in VARIANTS.values()}


@pytest.mark.parametrize("variant,input_name", CASES)
def test_preset_matches_golden(variant: str, input_name: str, tmp_path) -> None:
    golden = GOLDEN / variant / input_name
    assert (golden / "out_jobs.csv").exists(), f"no golden outputs for {variant}/{input_name}: run 'make golden'"
    preset, options = VARIANTS[variant]
    run_case(preset, input_name, tmp_path / "out", options)
    diffs = compare_outputs(tmp_path / "out", golden / "out")
    assert not diffs, format_report(diffs)


def test_a_changed_decision_gives_a_readable_diff(tmp_path) -> None:
    run_case("easy-backfill", "taurus16-demo", tmp_path / "out", {"placement": "best-fit"})
    diffs = compare_outputs(tmp_path / "out", GOLDEN / "easy-backfill" / "taurus16-demo" / "out")
    assert diffs
    report = format_report(diffs, limit=5)
    first = str(diffs[0])
    assert first.startswith("out_jobs.csv: job ")
    assert "(golden) →" in first and "(run)" in first
    assert "more" in report or len(diffs) <= 5


def test_wattsched_regress_exit_codes(tmp_path, capsys) -> None:
    from wattsched.cli import main

    golden = GOLDEN / "fcfs" / "taurus16-demo" / "out"
    run_case("fcfs", "taurus16-demo", tmp_path / "same", {})
    assert main(["regress", str(tmp_path / "same"), str(golden)]) == 0
    run_case("easy-backfill", "taurus16-demo", tmp_path / "other", {})
    assert main(["regress", str(tmp_path / "other"), str(golden)]) == 1
    out = capsys.readouterr().out
    assert "out_jobs.csv: job" in out


def update_all() -> None:
    for variant, input_name in CASES:
        preset, options = VARIANTS[variant]
        with tempfile.TemporaryDirectory() as tmp:
            run_case(preset, input_name, Path(tmp) / "out", options)
            target = GOLDEN / variant / input_name
            target.mkdir(parents=True, exist_ok=True)
            update_golden(Path(tmp) / "out", target)
            print(f"golden {variant}/{input_name} written")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m tests.test_golden --update")
    update_all()
