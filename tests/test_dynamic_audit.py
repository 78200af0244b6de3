"""Dynamic job registration audit (B44) against Batsim 4.2.1: ``protocol.cpp`` handle_register_job /
handle_register_profile, ``jobs.cpp`` JobIdentifier / Job::from_json / Jobs::delete_job, ``profiles.cpp``
remove_profile / remove_unreferenced_profiles / operator[], ``jobs_execution.cpp`` (composed profiles).
Each test fails on the engine before ``dynamic_audit.diff`` and passes after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REFERENCE, reply
from tests.test_behaviour_variants import compute, composed
from wattsched.base.errors import ProtocolError
from wattsched.simulator.engine import Simulation
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

C10 = compute(1e9)  # 10 s at pstate 0 of the dynamic-jobs platform
EXEC1 = ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"})


def started(tmp_path, profiles=None, **options) -> Simulation:
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1,
                                                                        "profile": "c10"}],
                                                 "profiles": profiles or {"c10": C10}}))
    sim = Simulation(load_platform(REFERENCE / "dynamic-jobs" / "platform.xml"), load_workload(tmp_path / "w.json"),
                     dynamic_jobs=True, acknowledge_dynamic_jobs=True, **options)
    sim.start()
    sim.step(reply(0))
    return sim


def rp(name="p", wl="dyn", prof=None):
    return "REGISTER_PROFILE", {"workload_name": wl, "profile_name": name, "profile": prof or C10}


def rj(job_id="dyn!a", jid=None, **job):
    return "REGISTER_JOB", {"job_id": job_id, "job": {"id": job_id if jid is None else jid, "subtime": 0.0, "res": 1,
                                                      "profile": "p", **job}}


def submitted(msg):
    return [e["data"] for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]


# (1) Batsim aborts, the engine accepted


def test_profile_of_a_deleted_dynamic_job_is_gone(tmp_path) -> None:
    """Jobs::delete_job -> Profiles::remove_profile once the JOB_COMPLETED is sent; operator[] aborts."""
    sim = started(tmp_path)
    sim.step(reply(0, rp(), rj(), ("EXECUTE_JOB", {"job_id": "dyn!a", "alloc": "1"})))
    msg = sim.step(reply(0))
    assert [e["type"] for e in msg["events"]] == ["JOB_COMPLETED"]
    with pytest.raises(ProtocolError, match="no longer accessible"):
        sim.step(reply(msg["now"], rj("dyn!b")))


def test_profile_of_a_rejected_job_is_gone_from_the_next_reply(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp(), rj(), ("REJECT_JOB", {"job_id": "dyn!a"}), rj("dyn!b")))  # same reply: fine
    assert [d["job_id"] for d in submitted(msg)] == ["dyn!a", "dyn!b"]
    with pytest.raises(ProtocolError, match="no longer accessible"):
        sim.step(reply(0, rj("dyn!c")))


def test_static_profiles_are_dropped_too(tmp_path) -> None:
    """remove_unreferenced_profiles at load; a static job's deletion drops its profile (and its sub-profiles)."""
    sim = started(tmp_path, {"c10": C10, "unused": C10})
    with pytest.raises(ProtocolError, match="'unused' of workload 'w0' is no longer accessible"):
        sim.step(reply(0, rj("w0!x", profile="unused")))
    sim = started(tmp_path, {"c10": composed(["s"]), "s": C10})
    msg = sim.step(reply(0, EXEC1))
    msg = sim.step(reply(0))
    assert msg["events"][0]["type"] == "JOB_COMPLETED"
    with pytest.raises(ProtocolError, match="'s' of workload 'w0' is no longer accessible"):
        sim.step(reply(msg["now"], rj("w0!x", profile="s")))


def test_a_registered_profile_with_a_job_before_any_deletion_is_fine(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp(), rj(), rj("dyn!b"), ("EXECUTE_JOB", {"job_id": "dyn!a", "alloc": "1"})))
    assert len(submitted(msg)) == 2


@pytest.mark.parametrize("job_id, jid", [
    ("dyn!dyn1", "dyn1"),      # the workload name inside the id: JobIdentifier("dyn1") has one part
    ("dyn!a!", "dyn!a!"),      # three parts
    ("dyn!5000000000", 5000000000),  # not a rapidjson Int (nor a string)
])
def test_ids_batsim_cannot_read(tmp_path, job_id, jid) -> None:
    sim = started(tmp_path)
    with pytest.raises(ProtocolError, match="REGISTER_JOB"):
        sim.step(reply(0, rp(), rj(job_id, jid)))


def test_smpi_mapping_is_checked(tmp_path) -> None:
    sim = started(tmp_path)
    with pytest.raises(ProtocolError, match="smpi_ranks_to_hosts_mapping"):
        sim.step(reply(0, rp(), rj(smpi_ranks_to_hosts_mapping=[1])))


def test_an_id_the_regex_breaks_aborts(tmp_path) -> None:
    """Job::from_json rewrites '"id": ...' with a regex up to the next ',', '}', '(', ')' or '|'."""
    sim = started(tmp_path)
    with pytest.raises(ProtocolError, match="REGISTER_JOB"):
        sim.step(reply(0, rp(), rj("dyn!a|b")))


def test_a_registered_composed_profile_runs_with_a_warning(tmp_path, caplog) -> None:
    """profile_sequence is filled by Workload::check_validity, never run for a registered profile: real Batsim
    would crash running the job. The embedded simulator runs it (UPAS registers such profiles: see the README's
    note on dynamic jobs) and warns once."""
    sim = started(tmp_path)
    with caplog.at_level("WARNING"):
        sim.step(reply(0, rp("q"), rp("p", prof=composed(["q"])), rj(),
                       ("EXECUTE_JOB", {"job_id": "dyn!a", "alloc": "1"})))
    assert "composed profile registered by REGISTER_PROFILE; real Batsim 4.2.1 never links" in caplog.text


# (2) Batsim accepts, the engine refused


@pytest.mark.parametrize("extra", [{"res": 0}, {"subtime": -5.0}])
def test_res_zero_and_negative_subtime_are_accepted(tmp_path, extra) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp(), rj(**extra), ("REJECT_JOB", {"job_id": "dyn!a"})))
    assert submitted(msg)[0]["job"] == {"id": "dyn!a", "subtime": 0.0, "res": 1, "profile": "p", **extra}


def test_empty_workload_and_profile_names_are_accepted(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp("", "dyn"), rp("x", ""), rj("!a", profile="x")))
    assert submitted(msg)[0]["job_id"] == "!a"


def test_job_id_with_a_run_of_bangs(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp(), rj("dyn!!a", "a")))
    assert submitted(msg)[0]["job_id"] == "dyn!a"


# (3) both accept, different results


def test_every_id_field_is_rewritten(tmp_path) -> None:
    sim = started(tmp_path)
    msg = sim.step(reply(0, rp(), rj("dyn!a", "a", meta={"id": 7, "k": 1})))
    assert submitted(msg)[0]["job"] == {"id": "dyn!a", "subtime": 0.0, "res": 1, "profile": "p",
                                        "meta": {"id": "dyn!a", "k": 1}}


def test_upas_replaces_a_beta_job_with_its_own_profile(caplog) -> None:
    """Real Batsim 4.2.1 cannot run a composed profile registered by REGISTER_PROFILE: UPAS's slowed β jobs
    (each with its own composed profile) are replaced by ``w0!resized.<id>`` naming that profile, so no such
    registration is made (no warning), and the outputs merge each replacement with its original."""
    from wattsched.analysis.outputs import merge_replacements
    from wattsched.base.batsim_files import original_job_id
    from wattsched.schedulers.protocol import scheduler_handler
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    root = Path(__file__).resolve().parent.parent
    workload = load_workload(root / "workloads" / "demo_upas16.json")
    sim = Simulation(load_platform(root / "platforms" / "upas_16.xml"), workload, dynamic_jobs=True,
                     acknowledge_dynamic_jobs=True)
    with caplog.at_level("WARNING"):
        run_inprocess(sim, scheduler_handler("upas", {}))
    assert "composed profile registered" not in caplog.text
    replaced = [rj for rj in sim.iter_jobs() if rj.job.id.startswith("w0!resized.")]
    assert replaced and not any(rj.job.id.startswith("resized!") for rj in sim.iter_jobs())
    by_id = {j.id: j for j in workload.jobs}
    assert all(rj.job.profile == by_id[original_job_id(rj.job.id)].profile for rj in replaced)
    import pandas as pd
    jobs = pd.DataFrame({"workload_name": [rj.job.id.partition("!")[0] for rj in sim.iter_jobs()],
                         "job_id": [rj.job.id.partition("!")[2] for rj in sim.iter_jobs()],
                         "final_state": [rj.final_state for rj in sim.iter_jobs()]})
    merged = merge_replacements(jobs)
    assert len(merged) == len(workload.jobs) and "REJECTED" not in set(merged["final_state"])


def test_original_job_id_reads_both_replacement_forms() -> None:
    from wattsched.base.batsim_files import original_job_id

    assert original_job_id("resized!w0.7") == "w0!7" and original_job_id("w0!resized.7") == "w0!7"
    assert original_job_id("w0!7") == "w0!7" and original_job_id("w0!resizedX") == "w0!resizedX"


def test_a_users_job_named_like_a_replacement_is_left_alone() -> None:
    """``w0!resized.7`` is a replacement only when ``w0!7`` was rejected: otherwise it is a job of the user's."""
    import pandas as pd

    from wattsched.analysis.outputs import merge_replacements

    jobs = pd.DataFrame({"workload_name": ["w0", "w0", "w0"], "job_id": ["7", "resized.7", "resized.8"],
                         "final_state": ["REJECTED", "COMPLETED_SUCCESSFULLY", "COMPLETED_SUCCESSFULLY"]})
    merged = merge_replacements(jobs)
    assert list(merged["job_id"]) == ["7", "resized.8"]
    assert list(merged["final_state"]) == ["COMPLETED_SUCCESSFULLY", "COMPLETED_SUCCESSFULLY"]
