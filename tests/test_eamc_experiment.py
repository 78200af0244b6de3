"""The EAMC reproduction (wattsched/experiments/eamc.py) on a tiny system: runs, summary, report, figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from wattsched.experiments.eamc import PAPER, POLICIES, epm_table, run_experiment


def test_a_tiny_reproduction_writes_the_report_and_figures(tmp_path: Path) -> None:
    result = run_experiment(tmp_path / "out", report_dir=tmp_path / "report", scale=0.02, seeds=1, mixes=("13", "50"),
                            workers=1, show_progress=False,
                            workload_options={"mean_res": 3, "mean_runtime_s": 3600.0, "span_days": 1.0})
    frame, summary = result.frame, result.summary
    assert len(frame) == 2 * len(POLICIES) and (frame["status"] == "done").all()
    assert result.inputs.hosts_per_partition == 10 and result.inputs.nb_jobs == 100
    assert (frame["nb_jobs_completed_successfully"] == 100).all()
    s = summary.set_index(["mix", "policy"])
    assert s.loc[("13", "Base"), "vs_base_jobs_energy_j"] == 0 and s.loc[("50", "Min runtime"), "vs_minrt_mean_response_time_s"] == 0
    assert s.loc[("13", "Base"), "favoured_partition_share"] == 1.0
    assert s.loc[("13", "Base"), "mean_frequency_ghz_p1"] == pytest.approx(2.7)
    # the improvement is (reference - policy) / reference
    base = s.loc[("13", "Base"), "jobs_energy_j"]
    minen = s.loc[("13", "Min energy"), "jobs_energy_j"]
    assert s.loc[("13", "Min energy"), "vs_base_jobs_energy_j"] == pytest.approx((base - minen) / base * 100)
    report = (tmp_path / "report" / "report.md").read_text()
    for heading in ("## The EPM's choices", "## Figure 3", "## Figure 4", "## Figure 5", "## The paper's statements",
                    "## Headline orderings"):
        assert heading in report
    assert all(claim.text in report for claim in PAPER)
    for name in ("fig3_vs_base.png", "fig4_vs_min_runtime.png", "fig5_favoured_partition.png"):
        assert (tmp_path / "report" / name).stat().st_size > 10_000
    assert (tmp_path / "out" / "results.csv").exists() and (tmp_path / "out" / "summary.csv").exists()
    # resumable: a second call simulates nothing and says where the wall time came from
    again = run_experiment(tmp_path / "out", report_dir=tmp_path / "report", scale=0.02, seeds=1, mixes=("13", "50"),
                           workers=1, show_progress=False,
                           workload_options={"mean_res": 3, "mean_runtime_s": 3600.0, "span_days": 1.0})
    assert (again.frame["status"] == "skipped").all()
    assert "re-rendered" in (tmp_path / "report" / "report.md").read_text()


def test_the_epm_table_states_the_papers_favoured_partitions() -> None:
    table = epm_table()
    assert len(table) == 2 * 2 * 8
    assert ((table["app"] == 8) == (table["favoured"] == "p2")).all()
    paper = table[table["form"] == "paper"]
    assert not paper["other_beyond_threshold"].any()  # no application beyond 35 % in the paper's reading
    plugin = table[(table["form"] == "plugin") & table["other_beyond_threshold"]]
    assert set(plugin["name"]) == {"STREAM", "sp-mz.C", "bt-mz.C"}


def test_bad_arguments(tmp_path: Path) -> None:
    from wattsched.base.errors import OptionError

    with pytest.raises(OptionError, match="unknown mix"):
        run_experiment(tmp_path, mixes=("25",))
    with pytest.raises(OptionError, match="--scale must be in"):
        run_experiment(tmp_path, scale=1.5)


@pytest.mark.slow
def test_the_papers_headline_orderings_at_a_quarter_of_its_size(tmp_path: Path) -> None:
    """EAMC paper §5.1-5.2 on 128 + 128 nodes and 1,250 jobs (one seed, W13 and W50): PriorityInc close to Min
    runtime in response time (the paper: −2 … −25 %) with less energy (up to −20 %), Min energy much slower
    (+51 … +93 %), PriorityInc placing more jobs in their favoured partition than Reorder (figure 5)."""
    result = run_experiment(tmp_path / "out", scale=0.25, seeds=1, mixes=("13", "50"), workers=2, show_progress=False)
    assert (result.frame["status"] == "done").all()
    s = result.summary.set_index(["mix", "policy"])
    for mix in ("13", "50"):
        minrt = s.loc[(mix, "Min runtime")]
        for tw in ("1", "1.5"):
            pi, reorder = s.loc[(mix, f"PriorityInc-{tw}")], s.loc[(mix, f"Reorder-{tw}")]
            assert pi["mean_response_time_s"] <= 1.10 * minrt["mean_response_time_s"], (mix, tw)
            assert pi["jobs_energy_j"] < minrt["jobs_energy_j"], (mix, tw)
            assert pi["favoured_partition_share"] > reorder["favoured_partition_share"], (mix, tw)
        assert s.loc[(mix, "Min energy"), "mean_response_time_s"] >= 1.25 * minrt["mean_response_time_s"], mix
        assert s.loc[(mix, "Min energy"), "jobs_energy_j"] < minrt["jobs_energy_j"], mix


def test_a_scale_too_small_for_the_mean_job_size_is_refused_first(capsys, tmp_path: Path, monkeypatch) -> None:
    """``reproduce eamc --scale 0.1`` (51 + 51 nodes) was refused by the workload generator, naming ``--mean-res`` and
    ``--max-res`` (options of ``eamc-workload``, not of ``reproduce``) and no scale that works. Now refused before any
    workload is drawn, naming --scale and the smallest scale (to 0.001) that works with the seeds."""
    import wattsched.workloads.eamc as generator
    from tests.bad_inputs_checks import refused
    from wattsched.cli import main

    def no_draw(**kwargs):
        raise AssertionError("a workload was drawn")

    monkeypatch.setattr(generator, "eamc_workload", no_draw)
    out = tmp_path / "out"
    err = refused(capsys, ["reproduce", "eamc", "--scale", "0.1", "--out", str(out), "-j", "1", "-q"],
                  "--scale 0.1 (51 + 51 nodes, 500 jobs)", "mean size of 18.29 nodes",
                  "the smallest scale that works with seeds 1 to 3 is 0.105")
    assert "--mean-res" not in err and "--max-res" not in err
    assert not out.exists()
    refused(capsys, ["reproduce", "eamc", "--scale", "0.1", "--seed", "2", "--seeds", "1", "--out", str(out), "-q"],
            "seed 2", "the smallest scale that works with seed 2 is 0.101")
    assert not out.exists()


def test_the_smallest_scale_named_is_the_generators() -> None:
    """The scale named works for the generator with every seed, the one 0.001 below does not for some seed."""
    from wattsched.base.errors import OptionError
    from wattsched.experiments.eamc import check_scale, sizes
    from wattsched.workloads.eamc import eamc_workload

    with pytest.raises(OptionError, match=r"is 0\.105 \(to 0\.001\)$"):
        check_scale(0.02, [1, 2, 3])
    check_scale(0.105, [1, 2, 3])
    for scale, drawn in ((0.105, True), (0.104, False)):
        hosts, jobs = sizes(False, scale)
        outcomes = []
        for seed in (1, 2, 3):
            try:
                eamc_workload(seed=seed, nb_jobs=jobs, max_res=hosts)
                outcomes.append(True)
            except OptionError:
                outcomes.append(False)
        assert all(outcomes) is drawn, (scale, outcomes)
    with pytest.raises(OptionError, match="--scale 0.104"):
        check_scale(0.104, [1, 2, 3])
    # means of the caller's (the tiny test study's) are checked, sizes of the caller's left to the generator
    check_scale(0.02, [1], {"mean_res": 3, "mean_runtime_s": 3600.0})
    check_scale(0.02, [1], {"max_res": 64})
