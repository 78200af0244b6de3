"""The EAMC paper's inputs: the two-partition platform (platforms/generate.py) and the workload generator
(workloads/eamc.py), and their commands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from wattsched.base.errors import InputError, OptionError
from wattsched.platforms.generate import eamc_platform_xml
from wattsched.simulator.platform import load_platform
from wattsched.workloads.eamc import MIXES, STREAM, check_eamc_jobs, eamc_workload


@pytest.mark.parametrize("sizes", [(512, 512), (3, 7)])
def test_the_platform_has_two_partitions_visible_in_host_properties(tmp_path: Path, sizes: tuple[int, int]) -> None:
    path = tmp_path / "p.xml"
    path.write_text(eamc_platform_xml(sizes))
    platform = load_platform(path)
    assert platform.nb_hosts == sum(sizes)
    for h, host in enumerate(platform.hosts):
        part = "p1" if h < sizes[0] else "p2"
        assert host.name.startswith(f"{part}-")
        assert host.properties["partition"] == part
        assert host.properties["ear_model"] == {"p1": "normal", "p2": "normal2"}[part]
    for part, n, top in (("p1", 16, 2.7), ("p2", 20, 3.1)):
        model = platform.hosts[0 if part == "p1" else -1].model
        freqs = [model.speeds_flops[p] / 1e9 for p in model.computation_pstates]
        assert len(freqs) == n and freqs[0] == pytest.approx(top) and min(freqs) == pytest.approx(1.2)
        assert np.allclose(sorted(freqs), [1.2 + 0.1 * k for k in range(n)])  # one pstate per 0.1 GHz step
        assert model.top_pstate == 0 and (model.sleep_pstate, model.switch_off_pstate, model.switch_on_pstate) == (1, 2, 3)
        assert all(model.idle_w[p] == 100.0 and model.full_w[p] > 200 for p in model.computation_pstates)


def test_the_platform_refuses_bad_sizes() -> None:
    for sizes in [(0, 4), (4,), (4, 4, 4), (1.5, 2)]:
        with pytest.raises(OptionError, match="two positive host counts"):
            eamc_platform_xml(sizes)  # type: ignore[arg-type]


@pytest.mark.parametrize("mix", MIXES)
def test_the_workload_has_the_papers_means_and_mix(mix: str) -> None:
    w = eamc_workload(seed=3, mix=mix)
    jobs = w["jobs"]
    assert len(jobs) == 5000
    assert np.mean([j["res"] for j in jobs]) == pytest.approx(18.29, abs=0.01)
    runtimes = [w["profiles"][j["profile"]]["cpu"] / 2.7e9 for j in jobs]
    assert np.mean(runtimes) == pytest.approx(3.65 * 3600, abs=1.0)
    assert all(j["walltime"] >= r for j, r in zip(jobs, runtimes))  # nobody is killed
    assert max(j["subtime"] for j in jobs) < 10 * 86400 and all(1 <= j["res"] <= 512 for j in jobs)
    apps = np.array([j["app"] for j in jobs])
    share = {"13": 1 / 8, "33": 0.33, "50": 0.50}[mix]
    assert np.mean(apps == STREAM) == pytest.approx(share, abs=0.03)
    assert set(apps) == set(range(1, 9))
    if mix != "13":  # the others uniform over the seven
        counts = np.bincount(apps[apps != STREAM], minlength=8)[1:8]
        assert counts.min() > 0.8 * counts.mean()
    assert all(j["partitions"] == ["p1", "p2"] for j in jobs)


def test_the_workload_is_seeded() -> None:
    a = eamc_workload(seed=5, mix="33", nb_jobs=300, max_res=128)
    assert a == eamc_workload(seed=5, mix="33", nb_jobs=300, max_res=128)
    assert a != eamc_workload(seed=6, mix="33", nb_jobs=300, max_res=128)


def test_the_workload_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(OptionError, match="unknown application mix"):
        eamc_workload(seed=1, mix="25")
    with pytest.raises(OptionError, match="cannot be reached with jobs of at most 32 hosts"):
        eamc_workload(seed=1, max_res=32)
    with pytest.raises(OptionError, match="nb_jobs must be a positive integer"):
        eamc_workload(seed=1, nb_jobs=0)


def test_check_eamc_jobs() -> None:
    sizes = {"p1": 4, "p2": 8}
    check_eamc_jobs([{"id": 1, "res": 8, "app": 3}, {"id": 2, "res": 4, "partitions": ["p1"]}], "w.json", sizes,
                    range(1, 9))
    cases = [({"id": 1, "app": 9}, "w.json: job '1'.app: unknown application 9"),
             ({"id": 1, "app": 0}, "job '1'.app: must be an application id"),
             ({"id": 1, "partitions": ["p9"]}, "job '1'.partitions: the platform has no partition 'p9' (partitions: p1, p2)"),
             ({"id": 1, "res": 5, "partitions": ["p1"]}, "job '1'.res: 5 hosts: more than any of its partitions has (p1 4)")]
    for entry, fragment in cases:
        with pytest.raises(InputError) as info:
            check_eamc_jobs([entry], "w.json", sizes, range(1, 9))
        assert fragment in str(info.value)
    with pytest.raises(InputError, match="no EAR model on this platform"):
        check_eamc_jobs([{"id": 1, "app": 2}], "w.json", {}, None)
    # wider than the platform: rejected in the run, as by every scheduler; any placement but on partitions runs it
    check_eamc_jobs([{"id": 1, "res": 13}], "w.json", sizes, None, nb_hosts=12)
    check_eamc_jobs([{"id": 1, "res": 5, "partitions": ["p1"]}], "w.json", sizes, None, by_partition=False)
    with pytest.raises(InputError, match="no partition 'p9'"):  # the fields are checked all the same
        check_eamc_jobs([{"id": 1, "partitions": ["p9"]}], "w.json", sizes, None, by_partition=False)


def test_the_commands_write_the_inputs(tmp_path: Path) -> None:
    from wattsched.cli import main

    assert main(["platform", "--node", "eamc", "--hosts", "6", "--output", str(tmp_path / "p.xml")]) == 0
    assert load_platform(tmp_path / "p.xml").nb_hosts == 12
    assert main(["eamc-workload", "--mix", "50", "--seed", "2", "--jobs", "100", "--max-res", "64", "--days", "2",
                 "--output", str(tmp_path / "w.json")]) == 0
    workload = json.loads((tmp_path / "w.json").read_text())
    assert len(workload["jobs"]) == 100 and workload["meta"]["mix"] == "50"
    assert main(["platform", "--node", "eamc", "--hosts", "6", "--flat", "--output", str(tmp_path / "q.xml")]) == 2


def test_eamc_on_a_platform_without_partitions_or_jobs_without_application_says_so(tmp_path: Path, caplog) -> None:
    """EAMC's placement on a plain Taurus platform (no host has a 'partition') ran as EASY with a frequency choice,
    and jobs without an 'app' field ran at the top frequency unranked, without a word: one warning each, once (and
    one of its frequency choice, for a platform without EAR modules: hunt 44, H44-3)."""
    import logging

    from wattsched import api

    workload = {"nb_res": 4, "profiles": {"p": {"type": "delay", "delay": 10}},
                "jobs": [{"id": str(k), "subtime": k, "res": 1, "walltime": 20, "profile": "p"} for k in range(3)]}
    with caplog.at_level(logging.WARNING, logger="wattsched.schedulers.eamc"):
        api.simulate(api.taurus_platform(4), workload, "eamc-reorder", out=tmp_path / "out")
    said = [r.getMessage() for r in caplog.records if r.name == "wattsched.schedulers.eamc"]
    assert len(said) == 3, said
    assert "no host of the platform has a 'partition' property" in said[0]
    assert said[1].startswith("frequency 'eamc': no host of the platform has an 'ear_model' property")
    assert said[2].startswith("job w0!0 has no 'app' field (the first such job)")


def test_a_job_wider_than_every_range_of_its_partitions_is_refused_before_the_run() -> None:
    """Placement ``partitions`` puts a job inside one range of host ids of a partition: the check before the run
    (``check_eamc_inputs``, which ``wattsched run``, sweeps and the API make) refuses a job that no range of its
    partitions holds, naming the workload, the job and the ranges, as the scheduler itself would at the job's
    submission; a job that one range holds, or that a placement ignoring partitions runs, passes."""
    from wattsched.workloads.eamc import check_eamc_inputs

    hosts = [{"partition": p} for p in ["p1"] * 3 + ["p2"] * 4 + ["p1"] * 3]  # p1: 0-2 and 7-9
    with pytest.raises(InputError, match=r"w\.json: job '1'\.res: 5 hosts: more than any of its partitions has "
                                         r"\(p1 6, p2 4; in one range of host ids, the most a job gets there: p1 3\)"):
        check_eamc_inputs(hosts, [{"id": 1, "res": 5}], "w.json")
    with pytest.raises(InputError, match=r"job '2'\.res: 4 hosts: .*\(p1 6; in one range .*: p1 3\)"):
        check_eamc_inputs(hosts, [{"id": 2, "res": 4, "partitions": ["p1"]}], "w.json")
    check_eamc_inputs(hosts, [{"id": 3, "res": 4}, {"id": 4, "res": 3, "partitions": ["p1"]}], "w.json")
    check_eamc_inputs(hosts, [{"id": 5, "res": 6, "partitions": ["p1"]}], "w.json", by_partition=False)
