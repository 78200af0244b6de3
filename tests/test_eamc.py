"""EAMC (schedulers/eamc.py): the EPM (eq. 4-5), job-partition entries and EASY across partitions, the
placement's time model, runs on the embedded simulator (run time = the model's), pybatsim, bad inputs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from wattsched.base.errors import InputError, OptionError
from wattsched.energy_models.ear import load_ear_model
from wattsched.platforms.generate import eamc_platform_xml
from wattsched.schedulers.core import PolicyScheduler
from wattsched.schedulers.eamc import EnergyPrediction
from wattsched.schedulers.presets import build
from wattsched.schedulers.state import (
    QueuedJob,
    RegisterJob,
    RegisterProfile,
    SetJobMetadata,
    SetPState,
    StartJob,
)
from wattsched.simulator.platform import load_platform
from tests.conftest import REFERENCE

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "eamc"
MODULE = {"p1": "normal", "p2": "normal2"}
TOP_GHZ = {"p1": 2.7, "p2": 3.1}
SPEED = 2.7e9  # p1's top speed: the profiles' flops are run time × this


# ------------------------------------------------------------------------------------------------ EPM
@pytest.mark.parametrize("form", ["paper", "plugin"])
@pytest.mark.parametrize("t_weight", [1.0, 1.5])
def test_stream_favours_p2_and_the_seven_others_p1(form: str, t_weight: float) -> None:
    """The paper's statement (§5): "for the tested t_weight values, the first seven apps favour the first
    partition, while app 8 favours the second"."""
    model = load_ear_model()
    epm = EnergyPrediction(t_weight, form)
    for app in model.apps:
        choices = []
        for part, module in MODULE.items():
            projection = model.projection(app, module)
            k = epm.index(projection, projection.available, "eamc")
            choices.append((part, float(projection.energy_j[k]), float(projection.time_s[k])))
        assert epm.rank(choices)[0][0] == ("p2" if app == 8 else "p1"), app


def test_eq_4_and_5_by_hand() -> None:
    """f_opt minimizes sqrt((E/Emin)² + t_weight·(T/Tmin)²) over the available frequencies (eq. 4); part_eff
    normalizes across partitions at f_opt (eq. 5)."""
    model = load_ear_model()
    tw = 1.5
    epm = EnergyPrediction(tw)
    best = {}
    for part, module in MODULE.items():
        projection = model.projection(2, module)  # ep.D
        e, t, ok = projection.energy_j, projection.time_s, projection.available
        emin, tmin = min(e[k] for k in range(len(e)) if ok[k]), min(t[k] for k in range(len(t)) if ok[k])
        dist = {k: math.sqrt((e[k] / emin) ** 2 + tw * (t[k] / tmin) ** 2) for k in range(len(e)) if ok[k]}
        k = min(dist, key=lambda i: (dist[i], -i))
        assert epm.index(projection, ok, "eamc") == k
        best[part] = (float(e[k]), float(t[k]))
    emin = min(e for e, _ in best.values())
    tmin = min(t for _, t in best.values())
    by_hand = {p: math.sqrt((e / emin) ** 2 + tw * (t / tmin) ** 2) for p, (e, t) in best.items()}
    ranked = epm.rank([(p, e, t) for p, (e, t) in best.items()])
    assert dict(ranked) == pytest.approx(by_hand)
    assert [p for p, _ in ranked] == sorted(by_hand, key=by_hand.__getitem__)
    # the plugin's forms: weight inside the square, summed ranking
    plugin = EnergyPrediction(tw, "plugin")
    assert plugin.distance(1.2, 1.1) == pytest.approx(1.2 ** 2 + (1.5 * 1.1) ** 2)
    assert plugin.part_eff(1.2, 1.1) == pytest.approx(1.2 + 1.5 * 1.1)
    assert epm.beyond(1.36, 1.0, 0.35) and not epm.beyond(1.35, 1.0, 0.35)
    assert plugin.beyond(2.35, 2.0, 0.35) and not plugin.beyond(2.34, 2.0, 0.35)


def test_min_runtime_and_min_energy_frequencies() -> None:
    model = load_ear_model()
    epm = EnergyPrediction()
    for app in model.apps:
        for module in MODULE.values():
            p = model.projection(app, module)
            assert p.energy_j[epm.index(p, p.available, "min-energy")] == np.nanmin(p.energy_j)
            assert p.time_s[epm.index(p, p.available, "min-runtime")] == np.nanmin(p.time_s)
            assert epm.index(p, p.available, "top") == len(p.available) - 1


@pytest.mark.parametrize("value", [0, -1.5, 0.0])
def test_t_weight_must_be_positive(value: float) -> None:
    """Refused with the range the options listing shows, (0, 1e6] (it showed [-inf, 1e+06] and took none <= 0)."""
    with pytest.raises(OptionError, match=r"'t_weight' of eamc-priority-inc is out of range, got .*"
                                          r"t_weight \(float in \(0, 1e\+06\], default 1.0\)"):
        build("eamc-priority-inc", {"t_weight": value})
    with pytest.raises(OptionError, match="'t_weight' must be a number > 0"):
        EnergyPrediction(value)


def test_t_weight_is_bounded_above() -> None:
    """A weight of 1e308 overflowed every score to inf (numpy warnings, every frequency tied): refused."""
    build("eamc-priority-inc", {"t_weight": 1e6})
    with pytest.raises(OptionError, match="'t_weight' of eamc-priority-inc is out of range, got 1e"):
        build("eamc-priority-inc", {"t_weight": 1e308})


def test_entries_need_a_partitioned_placement() -> None:
    with pytest.raises(OptionError, match="needs a placement that keeps a job inside one partition"):
        build("compose", {"order": "eamc-reorder", "placement": "first-fit"})


# ------------------------------------------------------------------------------- scheduler scenarios
PROFILES = {"w0": {f"c{s}": {"type": "parallel_homogeneous", "cpu": s * SPEED, "com": 0} for s in (50, 100, 1000, 3600)}}


@pytest.fixture(scope="module")
def properties(tmp_path_factory) -> list[dict]:
    path = tmp_path_factory.mktemp("eamc") / "p.xml"
    path.write_text(eamc_platform_xml((4, 4)))  # p1: hosts 0-3, p2: hosts 4-7
    return [dict(h.properties) for h in load_platform(path).hosts]


def started(preset: str, properties: list[dict], options: dict | None = None) -> PolicyScheduler:
    policy = build(preset, options or {})
    policy.start(len(properties), 0.0, properties, dynamic_jobs=True, profiles=PROFILES)
    return policy


def job(n: int, res: int, walltime: float, app: int = 1, partitions: tuple = ("p1", "p2"), run: int = 100,
        subtime: float = 0.0) -> QueuedJob:
    return QueuedJob(f"w0!{n}", res, walltime, subtime, f"c{run}",
                     extra=MappingProxyType({"app": app, "partitions": list(partitions)}))


def starts(decisions: list) -> dict[str, str]:
    return {d.job_id: str(d.alloc) for d in decisions if isinstance(d, StartJob)}


def test_entries_orders(properties: list[dict]) -> None:
    jobs = [job(1, 1, 100, app=1), job(2, 1, 100, app=8), job(3, 1, 100, app=4)]
    expected = {
        "eamc-reorder": [(1, "p1"), (1, "p2"), (2, "p2"), (2, "p1"), (3, "p1"), (3, "p2")],
        "eamc-priority-inc": [(1, "p1"), (2, "p2"), (3, "p1"), (1, "p2"), (2, "p1"), (3, "p2")],
        "min-runtime": [(1, "p1"), (1, "p2"), (2, "p1"), (2, "p2"), (3, "p1"), (3, "p2")],
        "eamc-base": [(1, "p1"), (2, "p2"), (3, "p1")],
    }
    for preset, order in expected.items():
        policy = started(preset, properties)
        for j in jobs:
            policy.on_submitted(j)
        entries = policy.order.sort(policy.queue, policy.view)
        assert [(int(e.id[3:]), e.partition) for e in entries] == order, preset
    # PriorityInc-V: entries beyond the threshold after every other one. The paper's reading: none is beyond
    # (PriorityInc's order); the plugin's: STREAM's p1 entry (its score is 0.658 above p2's at t_weight 1)
    jobs = [job(1, 1, 100, app=8), job(2, 1, 100, app=1)]
    for options, order in (({}, [(1, "p2"), (2, "p1"), (1, "p1"), (2, "p2")]),
                           ({"epm": "plugin"}, [(1, "p2"), (2, "p1"), (2, "p2"), (1, "p1")]),
                           ({"epm": "plugin", "threshold": 0.6}, [(1, "p2"), (2, "p1"), (2, "p2"), (1, "p1")]),
                           ({"epm": "plugin", "threshold": 0.7}, [(1, "p2"), (2, "p1"), (1, "p1"), (2, "p2")])):
        policy = started("eamc-priority-inc-v", properties, options)
        for j in jobs:
            policy.on_submitted(j)
        assert [(int(e.id[3:]), e.partition) for e in policy.order.sort(policy.queue, policy.view)] == order, options


def test_a_job_starts_once_on_the_first_entry_that_fits(properties: list[dict]) -> None:
    policy = started("min-runtime", properties)
    policy.on_submitted(job(1, 2, 100))
    out = policy.schedule()
    assert starts(out) == {"resized!w0.1": "0-1"}  # p1, its first requested partition


def test_the_pass_starts_over_when_the_head_starts_on_another_partition(properties: list[dict]) -> None:
    """J1 cannot start on p1 (its first entry): it is EASY's head, reserved on p1 at t=100; its p2 entry then
    starts it on p2. J2 (p1 only, long) would delay that reservation, which no longer exists: EASY starts over
    without J1 and J2 starts in the same pass."""
    policy = started("min-runtime", properties)
    policy.on_submitted(job(0, 2, 100, partitions=("p1",)))
    assert starts(policy.schedule()) == {"resized!w0.0": "0-1"}
    policy.on_submitted(job(1, 4, 1000, run=1000))
    policy.on_submitted(job(2, 2, 1000, partitions=("p1",), run=1000))
    assert starts(policy.schedule()) == {"resized!w0.1": "4-7", "resized!w0.2": "2-3"}


def test_the_heads_reservation_holds_on_its_partition_only(properties: list[dict]) -> None:
    policy = started("min-runtime", properties)
    policy.on_submitted(job(0, 2, 100, partitions=("p1",)))
    policy.on_submitted(job(9, 2, 100, partitions=("p2",)))
    assert starts(policy.schedule()) == {"resized!w0.0": "0-1", "resized!w0.9": "4-5"}
    policy.set_time(10.0)
    policy.on_submitted(job(1, 4, 50, partitions=("p1",), run=50, subtime=10))  # head: p1 at t=100
    policy.on_submitted(job(2, 2, 1000, partitions=("p1",), run=1000, subtime=10))  # would delay it
    policy.on_submitted(job(3, 2, 1000, partitions=("p2",), run=1000, subtime=10))  # other partition: free
    policy.on_submitted(job(4, 2, 50, partitions=("p1",), run=50, subtime=10))  # ends at 60 < 100
    assert starts(policy.schedule()) == {"resized!w0.3": "6-7", "resized!w0.4": "2-3"}


def test_the_assignment_is_the_models_time_at_the_partition_and_frequency(properties: list[dict]) -> None:
    policy = started("eamc-priority-inc", properties)
    policy.on_submitted(job(1, 2, 7200, app=8, run=3600))  # STREAM: p2 at f_opt 1.2 GHz
    out = policy.schedule()
    model = load_ear_model()
    p1, p2 = model.projection(8, "normal"), model.projection(8, "normal2")
    ratio = p2.time_s[0] / p1.time_s[-1]  # T(p2, 1.2 GHz) / T_ref(p1, 2.7 GHz)
    register_profile = next(d for d in out if isinstance(d, RegisterProfile))
    register_job = next(d for d in out if isinstance(d, RegisterJob))
    metadata = next(d for d in out if isinstance(d, SetJobMetadata))
    pstate = next(d for d in out if isinstance(d, SetPState))
    assert register_profile.profile == {"type": "parallel_homogeneous", "cpu": pytest.approx(3600 * ratio * 1.2e9),
                                        "com": 0.0}
    assert register_job.job["walltime"] == math.ceil(7200 * ratio) and register_job.job["subtime"] == 0.0
    assert metadata.job_id == "resized!w0.1"
    assert metadata.metadata == f"app=8 partition=p2 ghz=1.2 node_w={float(p2.power_w[0])!r} favoured=p2"
    assert str(pstate.hosts) == "4-5" and pstate.pstate == 22  # pstate 4 + k is 3.0 - 0.1 k GHz on p2
    assert starts(out) == {"resized!w0.1": "4-5"}


def test_bad_job_fields_are_one_line(properties: list[dict]) -> None:
    policy = started("eamc-reorder", properties)
    with pytest.raises(InputError, match=r"job 'w0!1'\.app: unknown application 9"):
        policy.on_submitted(job(1, 1, 100, app=9))
    with pytest.raises(InputError, match=r"job 'w0!2'\.partitions: the platform has no partition 'p3'"):
        policy.on_submitted(job(2, 1, 100, partitions=("p1", "p3")))
    with pytest.raises(InputError, match=r"job 'w0!3'\.res: 6 hosts: more than any of its partitions has"):
        policy.on_submitted(job(3, 6, 100))


def test_dynamic_jobs_are_required_on_an_ear_platform(properties: list[dict]) -> None:
    policy = build("eamc-reorder", {})
    with pytest.raises(OptionError, match="--enable-dynamic-jobs"):
        policy.start(len(properties), 0.0, properties, dynamic_jobs=False, profiles=PROFILES)


# ------------------------------------------------------------------------------ embedded simulations
def simulate(tmp_path: Path, preset: str, options: dict | None = None, workload: Path | None = None,
             platform: Path | None = None, handler=None) -> Path:
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.outputs import write_outputs
    from wattsched.simulator.workload import load_workload

    sim = Simulation(load_platform(platform or FIXTURES / "platform.xml"),
                     load_workload(workload or FIXTURES / "workload.json"), dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    run_inprocess(sim, handler if handler is not None else scheduler_handler(preset, options or {}))
    prefix = tmp_path / preset / "out"
    write_outputs(sim, prefix)
    return prefix


def every_app_workload(path: Path, primary: str) -> Path:
    other = "p2" if primary == "p1" else "p1"
    jobs, profiles = [], {}
    for k, (app, res, run) in enumerate((a, 1 + a % 3, 600 * a + 37) for a in range(1, 9)):
        top = TOP_GHZ[primary] * 1e9
        profiles[f"r{k}"] = {"type": "parallel_homogeneous", "cpu": run * top, "com": 0}
        for copy in range(2):
            jobs.append({"id": 2 * k + copy, "subtime": 100 * k, "res": res, "profile": f"r{k}",
                         "walltime": run * (1 + copy), "app": app, "partitions": [primary, other]})
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    return path


@pytest.mark.parametrize("preset,primary", [("eamc-priority-inc", "p1"), ("min-energy", "p2"), ("eamc-base", "p1"),
                                            ("min-runtime", "p1"), ("eamc-reorder", "p2")])
def test_every_job_runs_the_models_time_at_its_partition_and_frequency(tmp_path: Path, preset: str,
                                                                       primary: str) -> None:
    from wattsched.analysis.eamc import parse_metadata
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.analysis.outputs import load_outputs

    workload = every_app_workload(tmp_path / "w.json", primary)
    entries = {str(j["id"]): j for j in json.loads(workload.read_text())["jobs"]}
    profiles = json.loads(workload.read_text())["profiles"]
    prefix = simulate(tmp_path, preset, workload=workload)
    jobs = load_outputs(prefix).jobs
    model = load_ear_model()
    assert len(jobs) == len(entries) and set(jobs["job_id"]) == set(entries)
    energy = 0.0
    apps = set()
    for _, row in jobs.iterrows():
        entry = entries[row["job_id"]]
        meta = parse_metadata(row["metadata"])
        app, part, ghz = int(meta["app"]), meta["partition"], float(meta["ghz"])
        assert app == entry["app"] and part in entry["partitions"]
        projection = model.projection(app, MODULE[part])
        k = int(round(ghz * 10)) - 12
        reference = profiles[entry["profile"]]["cpu"] / (TOP_GHZ[primary] * 1e9)
        expected = reference * projection.time_s[k] / model.projection(app, MODULE[primary]).time_s[-1]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert row["execution_time"] == pytest.approx(expected, abs=2e-6), (row["job_id"], part, ghz)
        assert float(meta["node_w"]) == projection.power_w[k]
        first = int(str(row["allocated_resources"]).split("-")[0].split(" ")[0])
        assert (first < 8) == (part == "p1")  # on the partition it says
        energy += projection.power_w[k] * entry["res"] * expected
        apps.add(app)
    assert apps == set(range(1, 9))
    assert compute_metrics(prefix)["jobs_energy_j"] == pytest.approx(energy, rel=1e-9)


def test_the_registration_mechanism_replays_real_batsim() -> None:
    from wattsched.simulator.replay import replay

    report = replay(REFERENCE / "dynamic-jobs")
    assert report.ok, report.format()


@pytest.mark.filterwarnings("ignore:The .warn. method is deprecated:DeprecationWarning")
def test_pybatsim_runs_the_presets_exactly_as_the_translator(tmp_path: Path) -> None:
    """The pybatsim class of a preset (what real Batsim drives) registers, executes and annotates jobs as the
    in-process translator does: identical outputs."""
    from wattsched.analysis.regress import compare_outputs, format_report
    from wattsched.schedulers.adapter import load_scheduler, pybatsim_handler

    ours = simulate(tmp_path / "a", "eamc-priority-inc-v", {"epm": "plugin", "t_weight": 1.5})
    theirs = simulate(tmp_path / "b", "eamc-priority-inc-v",
                      handler=pybatsim_handler(load_scheduler("eamc-priority-inc-v", {"epm": "plugin", "t_weight": 1.5})))
    diffs = compare_outputs(theirs, ours)
    assert not diffs, format_report(diffs)


def test_eamc_with_shutdown_end_to_end(tmp_path: Path) -> None:
    from wattsched.analysis.eamc import parse_metadata
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.analysis.outputs import load_outputs

    prefix = simulate(tmp_path, "eamc-priority-inc", {"shutdown": True})
    outputs = load_outputs(prefix)
    assert (outputs.jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all() and len(outputs.jobs) == 80
    assert all(parse_metadata(m) for m in outputs.jobs["metadata"])
    assert outputs.schedule is not None and float(outputs.schedule["time_sleeping"]) > 0
    plain = compute_metrics(simulate(tmp_path / "plain", "eamc-priority-inc"))
    shut = compute_metrics(prefix)
    assert shut["total_energy_j"] < plain["total_energy_j"]  # idle hosts asleep
    assert outputs.pstate_changes is not None and set(outputs.pstate_changes["new_pstate"]) >= {1, 0}


def test_eamcs_placement_and_frequency_behind_any_order(tmp_path: Path) -> None:
    """Composed with a plain queue order (no entries), the placement tries each job's partitions best first."""
    from wattsched.analysis.eamc import parse_metadata
    from wattsched.analysis.outputs import load_outputs

    prefix = simulate(tmp_path, "compose", {"order": "fcfs", "placement": "partitions", "frequency": "eamc",
                                            "t_weight": 1.5})
    jobs = load_outputs(prefix).jobs
    assert (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all() and len(jobs) == 80
    assert {parse_metadata(m)["partition"] for m in jobs["metadata"]} == {"p1", "p2"}


# ----------------------------------------------------------------------------------------- the CLI
def cli(*argv: str) -> int:
    from wattsched.cli import main

    return main(list(argv))


@pytest.mark.parametrize("edit,fragment", [
    (lambda w: w["jobs"][3].update(app=9), "workload.json: job 'w0!4'.app: unknown application 9 (the EAR model knows"),
    (lambda w: w["jobs"][5].update(partitions=["p1", "p3"]),
     "workload.json: job 'w0!6'.partitions: the platform has no partition 'p3' (partitions: p1, p2)"),
    (lambda w: w["jobs"][0].update(partitions="p1"), "job 'w0!1'.partitions: must be a non-empty list"),
    (lambda w: w["jobs"][0].update(app="lu"), "job 'w0!1'.app: must be an application id"),
    (lambda w: w["jobs"][2].update(res=9), "job 'w0!3'.res: 9 hosts: more than any of its partitions has (p1 8, p2 8)"),
])
def test_bad_workloads_are_refused_before_the_run(tmp_path: Path, capsys, edit, fragment: str) -> None:
    workload = json.loads((FIXTURES / "workload.json").read_text())
    edit(workload)
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    assert cli("run", str(FIXTURES / "platform.xml"), str(path), "-s", "eamc-reorder", "-e", str(tmp_path / "o" / "out")) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and fragment in err, err
    assert not (tmp_path / "o").exists()


def test_a_job_wider_than_its_partitions_is_refused_only_by_a_placement_on_partitions(tmp_path: Path, capsys) -> None:
    """A job wider than each partition (p1 8, p2 8) but not than the platform: the EAMC presets keep a job on its
    partitions and refuse it before the run; EASY's first-fit runs it on any hosts (it was refused for every scheduler,
    while the API ran it). A job wider than the platform is rejected in the run, as Batsim's schedulers do (it was
    refused as an input)."""
    import csv

    workload = json.loads((FIXTURES / "workload.json").read_text())
    workload["jobs"][2].update(res=9)
    workload["jobs"][4].update(res=17)
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    assert cli("run", str(FIXTURES / "platform.xml"), str(path), "-s", "eamc-reorder", "-e", str(tmp_path / "o" / "a")) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "job 'w0!3'.res: 9 hosts: more than any of its partitions has (p1 8, p2 8)" in err, err
    assert cli("run", str(FIXTURES / "platform.xml"), str(path), "-s", "easy-backfill", "-q", "-e", str(tmp_path / "o" / "e")) == 0
    with open(tmp_path / "o" / "e_jobs.csv", newline="") as handle:
        states = {row["job_id"]: (row["final_state"], row["requested_number_of_resources"]) for row in csv.DictReader(handle)}
    assert states["3"] == ("COMPLETED_SUCCESSFULLY", "9") and states["5"] == ("REJECTED", "17"), states
    workload["jobs"][2].update(res=2)
    path.write_text(json.dumps(workload))
    assert cli("run", str(FIXTURES / "platform.xml"), str(path), "-s", "eamc-reorder", "-q", "-e", str(tmp_path / "o" / "r")) == 0
    with open(tmp_path / "o" / "r_jobs.csv", newline="") as handle:
        assert {row["job_id"]: row["final_state"] for row in csv.DictReader(handle)}["5"] == "REJECTED"
    capsys.readouterr()


def test_the_web_page_checks_a_job_wider_than_its_partitions_as_the_cli_does(tmp_path: Path) -> None:
    from wattsched.base.errors import InputError
    from wattsched.web.runs import check_run
    from wattsched.web.workspace import Workspace

    workload = json.loads((FIXTURES / "workload.json").read_text())
    workload["jobs"][2].update(res=9)
    workload["jobs"][4].update(res=17)
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(workload))
    space = Workspace(tmp_path / "ws")
    check_run(space, "easy-backfill", {}, FIXTURES / "platform.xml", path)  # first-fit: any hosts
    with pytest.raises(InputError, match=r"job 'w0!3'\.res: 9 hosts: more than any of its partitions has"):
        check_run(space, "eamc-reorder", {}, FIXTURES / "platform.xml", path)


def test_bad_options_and_model_files_are_refused_before_the_run(tmp_path: Path, capsys) -> None:
    import shutil

    from wattsched.energy_models.ear import DATA_DIR

    out = tmp_path / "o" / "out"
    args = ("run", str(FIXTURES / "platform.xml"), str(FIXTURES / "workload.json"), "-e", str(out))
    assert cli(*args, "-s", "eamc-priority-inc", "-o", '{"t_weight": -1}') == 2
    assert "option 't_weight' of eamc-priority-inc is out of range, got -1.0" in capsys.readouterr().err
    folder = tmp_path / "model"
    shutil.copytree(DATA_DIR, folder)
    lines = (folder / "normal2.energy").read_text().splitlines()
    lines[122] = "1 2 three 4 5 6"
    (folder / "normal2.energy").write_text("\n".join(lines) + "\n")
    assert cli(*args, "-s", "min-energy", "-o", json.dumps({"ear_model": str(folder)})) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "normal2.energy: line 123: coefficient: 'three' is not a number" in err, err
    assert not out.parent.exists()


def test_wattsched_run_enables_dynamic_jobs_for_the_eamc_presets(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert cli("run", str(FIXTURES / "platform.xml"), str(FIXTURES / "workload.json"), "-s", "eamc-base",
               "-e", str(out), "--json", "-q") == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["favoured_partition_share"] == 1.0 and metrics["nb_jobs_completed_successfully"] == 80
    assert metrics["mean_frequency_ghz_p1"] == pytest.approx(2.7) and metrics["mean_frequency_ghz_p2"] == pytest.approx(3.1)


# ------------------------------------------------------------------------------------------- docker
def test_the_dynamic_compose_file_adds_batsims_two_flags_to_the_main_command(tmp_path: Path) -> None:
    """docker/docker-compose.dynamic-jobs.yml, layered on docker-compose.yml, runs real Batsim with dynamic jobs
    (what the EAMC presets need) and otherwise exactly the main file's command; the presets are pybatsim
    entry points (the image's scheduler names)."""
    import subprocess
    from importlib.metadata import entry_points

    yaml = pytest.importorskip("yaml")
    from tests.test_docker import COMPOSE, DOCKER, compose_command

    main = yaml.safe_load(COMPOSE.read_text())["services"]["batsim"]["command"]
    dynamic = yaml.safe_load((DOCKER / "docker-compose.dynamic-jobs.yml").read_text())["services"]["batsim"]["command"]
    assert dynamic == [*main, "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"]
    names = {e.name for e in entry_points(group="pybatsim.schedulers")}
    assert names >= {"eamc-reorder", "eamc-priority-inc", "eamc-priority-inc-v", "eamc-base", "min-runtime",
                     "min-energy"}
    command = compose_command()
    if command is None:
        return
    env = {"SCHEDULER": "eamc-priority-inc", "PLATFORM": str(FIXTURES / "platform.xml"),
           "WORKLOAD": str(FIXTURES / "workload.json"), "OUTPUT_DIR": str(tmp_path)}
    result = subprocess.run([*command, "-f", str(COMPOSE), "-f", str(DOCKER / "docker-compose.dynamic-jobs.yml"), "config"],
                            capture_output=True, text=True, timeout=120, cwd=DOCKER.parent,
                            env={**{k: v for k, v in __import__("os").environ.items() if k not in env}, **env})
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)["services"]
    assert config["batsim"]["command"][-2:] == ["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"]
    assert config["scheduler"]["environment"]["WATTSCHED_SCHEDULER"] == "eamc-priority-inc"


def test_the_single_partition_presets_do_not_offer_the_partitions_placement() -> None:
    """EAMC's placement (and its options) belong to the EAMC presets and to compose, not to easy-backfill & co."""
    with pytest.raises(OptionError, match=r"must be one of first-fit\|best-fit\|non-contiguous, got \"partitions\""):
        build("easy-backfill", {"placement": "partitions"})
    with pytest.raises(OptionError, match="unknown option 't_weight' for energy-bud"):
        build("energy-bud", {"t_weight": 1.5, "budget_fraction": 0.5, "window_end_s": 10.0})
    policy = build("compose", {"placement": "partitions", "t_weight": 1.5})
    assert policy.placement.name == "partitions"


def test_a_job_placed_across_partitions_runs_at_the_top_frequency(properties: list[dict]) -> None:
    """An EAMC frequency behind a placement that ignores partitions (first-fit): a job on hosts of p1 and p2 got the
    pstate number of p1's f_opt on every host, another frequency on p2's. Now the top one; a job on one partition
    still gets its rule's frequency there."""
    policy = started("compose", properties, {"order": "fcfs", "placement": "first-fit", "frequency": "eamc"})
    policy.on_submitted(job(1, 2, 7200, app=8, run=3600))  # hosts 0-1, on p1 alone
    policy.schedule()
    policy.on_submitted(job(2, 4, 7200, app=8, run=3600))  # hosts 2-5: p1's 2-3 and p2's 4-5
    out = policy.schedule()
    assert starts(out) == {"w0!2": "2-5"}
    assert all(d.pstate == 0 for d in out if isinstance(d, SetPState))
    policy.on_submitted(job(3, 2, 7200, app=8, run=3600))  # hosts 6-7, on p2 alone: p2's f_opt (1.2 GHz)
    out = policy.schedule()
    assert [(str(d.hosts), d.pstate) for d in out if isinstance(d, SetPState)] == [("6-7", 22)]
