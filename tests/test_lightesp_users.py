"""The Light-ESP generator (workloads/lightesp.py), users and energy factors of workloads
(workloads/users.py), and the SWF converter's user column on a real excerpt (tests/fixtures/swf)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from wattsched.base.errors import InputError, OptionError
from wattsched.workloads.lightesp import LIGHT_ESP, THEORETICAL_RUN_S, light_esp, nb_hosts
from wattsched.workloads.swf import busiest_window, swf_to_batsim
from wattsched.workloads.users import check_job_fields, most_active_users, with_energy_factors

SDSC = Path(__file__).parent / "fixtures" / "swf" / "sdsc-sp2-excerpt.swf"


# ------------------------------------------------------------------------------------------ Light-ESP
def test_table_ii() -> None:
    assert sum(t.count for t in LIGHT_ESP) == 230 and len(LIGHT_ESP) == 14
    assert all(t.cores % 12 == 0 and t.cores <= 180 for t in LIGHT_ESP)
    theoretic = sum(t.fraction * t.count * t.run_s for t in LIGHT_ESP)
    assert theoretic == pytest.approx(THEORETICAL_RUN_S, abs=2)  # table II: 935 s


def test_one_copy_has_the_jobs_of_table_ii_on_15_node_hosts() -> None:
    w = light_esp(copies=1)
    assert w["nb_res"] == 15 == nb_hosts()
    jobs = w["jobs"]
    assert len(jobs) == 230
    kinds = Counter((j["esp_type"], j["res"], j["walltime"]) for j in jobs)
    assert kinds == Counter({(t.name, t.cores // 12, t.run_s): t.count for t in LIGHT_ESP})
    for j in jobs:
        profile = w["profiles"][j["profile"]]
        assert profile["type"] == "parallel_homogeneous" and profile["cpu"] == j["walltime"] * 100e6


def test_one_host_per_core() -> None:
    w = light_esp(copies=1, hosts_per_node=12)
    assert w["nb_res"] == 180
    assert sorted({j["res"] for j in w["jobs"]}) == sorted({t.cores for t in LIGHT_ESP})


def test_submission_rules() -> None:
    w = light_esp(copies=2, seed=3)
    jobs = w["jobs"]
    first = jobs[:230]
    initial = [j for j in first if j["subtime"] == 0.0]
    assert len(initial) == w["meta"]["initial_batch_jobs"]
    # the initial batch asks for at least twice the machine, one job less would not
    cores = [j["res"] * 12 for j in initial]
    assert sum(cores) >= 360 > sum(cores) - cores[-1]
    assert all(j["esp_type"] != "Z" for j in initial)
    # then one job at a time, evenly spread over the period; the second Z job comes last
    later = [j["subtime"] for j in first if j["subtime"] > 0 and j["esp_type"] != "Z"]
    gaps = {round(b - a, 2) for a, b in zip(later, later[1:])}
    assert len(gaps) <= 3 and max(later) < THEORETICAL_RUN_S
    z = [j for j in first if j["esp_type"] == "Z"]
    assert len(z) == 2 and z[1]["subtime"] == max(j["subtime"] for j in first) == max(later) + 1
    # the second copy is the first shifted by the period, ids keep the submission order as strings
    assert [j["subtime"] - THEORETICAL_RUN_S for j in jobs[230:]] == pytest.approx([j["subtime"] for j in first])
    assert [j["esp_type"] for j in jobs[230:]] == [j["esp_type"] for j in first]
    assert [j["id"] for j in jobs] == sorted(j["id"] for j in jobs)
    assert light_esp(seed=3)["jobs"] == light_esp(seed=3)["jobs"] != light_esp(seed=4)["jobs"]


def test_same_workload_users_have_the_same_mix_and_rotate_between_copies() -> None:
    w = light_esp(copies=4)
    by_user = {u: Counter(j["esp_type"] for j in w["jobs"] if j["user"] == u) for u in (1, 2, 3)}
    for kind in LIGHT_ESP:  # each user gets a third of every type, within one job per copy
        counts = [by_user[u][kind.name] for u in (1, 2, 3)]
        assert max(counts) - min(counts) <= 4, (kind.name, counts)
    factors = {(j["user"], j["energy_factor"]) for j in w["jobs"]}
    assert factors == {(1, 0.7), (2, 1.0), (3, 1.3)}
    # the group of jobs of a user changes from one copy to the next
    assert [j["user"] for j in w["jobs"][230:460]] != [j["user"] for j in w["jobs"][:230]]
    work = {u: sum(j["res"] * j["walltime"] for j in w["jobs"] if j["user"] == u) for u in (1, 2, 3)}
    assert max(work.values()) / min(work.values()) < 1.02


def test_different_workloads_one_two_three_sixths() -> None:
    w = light_esp(copies=1, users="different-workloads")
    counts = Counter(j["user"] for j in w["jobs"])
    assert counts[1] < counts[2] < counts[3]
    assert counts[3] == pytest.approx(230 / 2, abs=7) and counts[1] == pytest.approx(230 / 6, abs=7)
    assert {j["energy_factor"] for j in w["jobs"]} == {1.0}


@pytest.mark.parametrize("kwargs,fragment", [
    ({"copies": 0}, "copies"), ({"users": "four"}, "users must be one of"), ({"efficiencies": (0.7, 0)}, "efficiencies"),
    ({"hosts_per_node": 0}, "hosts_per_node"), ({"walltime_factor": 0.5}, "walltime_factor"), ({"period_s": 0}, "period_s"),
])
def test_bad_generator_values(kwargs, fragment) -> None:
    with pytest.raises(OptionError, match=fragment):
        light_esp(**kwargs)


def test_wattsched_lightesp_writes_a_workload_wattsched_runs(tmp_path, capsys) -> None:
    from wattsched.cli import main

    out = tmp_path / "esp.json"
    assert main(["lightesp", "--copies", "1", "--efficiencies", "0.5,1,2", "--output", str(out)]) == 0
    w = json.loads(out.read_text())
    assert len(w["jobs"]) == 230 and {j["energy_factor"] for j in w["jobs"]} == {0.5, 1.0, 2.0}
    assert main(["platform", "--hosts", "15", "--output", str(tmp_path / "p.xml")]) == 0
    assert main(["run", str(tmp_path / "p.xml"), str(out), "-s", "efs", "-e", str(tmp_path / "o"), "-q", "--json",
                 "--per-user"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nb_jobs_completed_successfully"] == 230 and "mean_stretch_user_3" in metrics
    with pytest.raises(SystemExit) as info:
        main(["lightesp", "--efficiencies", "0.7,-1,1"])
    assert info.value.code == 2
    assert "expected three numbers > 0" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------- users
def test_check_job_fields_names_the_job_and_the_field() -> None:
    check_job_fields([{"id": 1, "user": "a"}, {"id": 2, "user": 7, "energy_factor": 1.3}, {"id": 3}], "w.json")
    with pytest.raises(InputError, match=r"w.json: job '2'.user: must be a string or a number, got an object"):
        check_job_fields([{"id": 1}, {"id": 2, "user": {"name": "x"}}], "w.json")
    with pytest.raises(InputError, match=r"job '1'.energy_factor: must be a number > 0, got null"):
        check_job_fields([{"id": 1, "energy_factor": None}], "w.json")


def test_most_active_users_and_energy_factors() -> None:
    w = {"jobs": [{"id": i, "user": u} for i, u in enumerate(["b", "a", "a", 7, "b", "a", None, None, None])]}
    assert most_active_users(w, 2) == ["a", "b"]
    assert most_active_users(w, 5) == ["a", "b", "7"]  # ties by first submission; no user is not a user
    greener = with_energy_factors(w, {"b": 0.7})
    assert [j.get("energy_factor") for j in greener["jobs"]][:5] == [0.7, None, None, None, 0.7]
    assert "energy_factor" not in w["jobs"][0]  # the original is untouched
    assert greener["meta"]["energy_factors"] == {"b": 0.7}


# ------------------------------------------------------------------------------------------- SWF
def test_swf_converter_keeps_the_user_column() -> None:
    w = swf_to_batsim(SDSC, speed_flops=100e6, nb_hosts=128)
    lines = [line.split() for line in SDSC.read_text().splitlines() if line.strip() and not line.startswith(";")]
    users = {int(f[0]): int(f[11]) for f in lines}
    assert w["jobs"] and all(j["user"] == users[j["id"]] for j in w["jobs"])
    assert most_active_users(w, 3)[0] == "159"  # 19 of the 80 lines, fewer once cancelled jobs are dropped
    check_job_fields(w["jobs"], SDSC)


def test_busiest_window() -> None:
    start, load = busiest_window(SDSC, nb_hosts=128, duration_s=86400.0, step_s=86400.0)
    lines = [line.split() for line in SDSC.read_text().splitlines() if line.strip() and not line.startswith(";")]
    area = Counter()
    for f in lines:
        run, procs, sub = float(f[3]), float(f[4]) if float(f[4]) != -1 else float(f[7]), float(f[1])
        if run > 0 and 1 <= procs <= 128:
            area[int(sub // 86400)] += procs * run
    best = max(area, key=lambda d: (area[d], -d))
    assert start == best * 86400.0 and load == pytest.approx(area[best] / (128 * 86400.0))
    with pytest.raises(OptionError):
        busiest_window(SDSC, nb_hosts=0, duration_s=1.0)
