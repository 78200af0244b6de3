"""What a README audit found: commands and options the README and the listings name must exist.

* ``wattsched schedulers`` sent readers of the ``compose`` preset to ``wattsched schedulers --pieces``, an option
  that command does not have (the pieces are listed by ``wattsched schedulers`` itself).
* The README says ``-q`` is the same option everywhere and silences a reproduction's progress; ``wattsched
  reproduce energy-budget`` had no ``-q`` (the four other reproductions had).
* ``wattsched run --help`` named the presets whose runs turn Batsim's dynamic jobs on by themselves without
  ``upas``, which does (README, "Utilization-driven DVFS").
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pandas as pd
import pytest

from wattsched.cli import build_parser, main


def test_schedulers_listing_names_only_options_that_exist(capsys):
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    options = set(re.findall(r"wattsched schedulers (--?[\w-]+)", out))
    parser = build_parser()
    for option in options:  # each must parse: argparse exits 2 on an unknown option
        parser.parse_args(["schedulers", option])
    assert "--pieces" not in out


def test_reproduce_energy_budget_takes_quiet(monkeypatch, tmp_path):
    args = build_parser().parse_args(["reproduce", "energy-budget", "-q", "--out", str(tmp_path / "eb")])
    assert args.quiet is True
    assert build_parser().parse_args(["reproduce", "energy-budget", "--out", str(tmp_path / "eb")]).quiet is False

    import wattsched.experiments.energy_budget as energy_budget

    seen: dict = {}

    def fake_run_experiment(out, machines, **kwargs):
        seen.update(kwargs)
        return SimpleNamespace(inputs=[], notes=[], frame=pd.DataFrame({"name": [], "status": []}), wall_s=0.0)

    monkeypatch.setattr(energy_budget, "run_experiment", fake_run_experiment)
    monkeypatch.setattr(energy_budget, "refused_by_design", lambda frame: frame["name"].astype(bool))
    assert main(["reproduce", "energy-budget", "-q", "--machines", "metacentrum", "--synthetic",
                 "--out", str(tmp_path / "eb")]) == 0
    assert seen["show_progress"] is False


@pytest.mark.parametrize("quiet, expected", [(True, False), (False, None)])
def test_energy_budget_experiment_passes_show_progress_to_its_sweeps(monkeypatch, tmp_path, quiet, expected):
    import wattsched.experiments.energy_budget as energy_budget

    calls: list = []

    def fake_run_sweep(runs, **kwargs):
        calls.append(kwargs.get("show_progress"))
        raise RuntimeError("stop after the first sweep")

    monkeypatch.setattr(energy_budget, "run_sweep", fake_run_sweep)
    machines, _ = energy_budget.choose_machines(False, ["metacentrum"], 0.002)
    with pytest.raises(RuntimeError, match="stop after"):
        energy_budget.run_experiment(tmp_path / "eb", machines, synthetic=True, workers=1,
                                     show_progress=False if quiet else None)
    assert calls == [expected]


def test_run_help_names_upas_among_the_presets_with_dynamic_jobs(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    start = help_text.index("--enable-dynamic-jobs accept")
    sentence = help_text[start:help_text.index("--acknowledge-dynamic-jobs answer")]
    assert "upas" in sentence and "eamc-*" in sentence


# The README's UPAS example (`wattsched run platforms/upas_16.xml workloads/demo_upas16.json -s upas ...`) warned
# "the workload's work is meant for hosts of 1e+08 flop/s, the platform's top speed is 2.3e+09 flop/s: run times
# scale by 0.0435", which was false: `wattsched beta` rewrites every compute part for the top gear (--speed) but
# left meta.speed_flops at its input's speed. It also lost meta.upas.beta_clip (swallowed by a comment).

def test_beta_workload_records_the_speed_its_work_is_written_for():
    from workloads.synthetic import synthetic_week
    from workloads.upas import beta_workload

    base = synthetic_week(16, seed=1, duration_s=86400.0, target_load=0.4, speed_flops=100e6)
    assert base["meta"]["speed_flops"] == 100e6
    work = beta_workload(base, seed=1, speed_flops=2.3e9, base_speed_flops=100e6)
    assert work["meta"]["speed_flops"] == 2.3e9
    assert work["meta"]["upas"]["beta_clip"] == [0.01, 1.0]
    assert base["meta"]["speed_flops"] == 100e6  # the input is untouched


def test_readme_upas_example_runs_without_a_speed_warning(caplog):
    from pathlib import Path

    from wattsched.experiments.runner import check_speed
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    root = Path(__file__).resolve().parents[1]
    platform = load_platform(root / "platforms" / "upas_16.xml")
    workload = load_workload(root / "workloads" / "demo_upas16.json")
    with caplog.at_level("WARNING"):
        check_speed(platform, workload)
    assert "meta.speed_flops" not in caplog.text
