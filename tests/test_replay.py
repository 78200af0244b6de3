"""Every recording of real Batsim 4.2.1 replayed against the embedded simulator must match."""

from __future__ import annotations

import json
import shutil

import pytest

from wattsched.simulator.replay import format_summary, replay
from tests.conftest import REFERENCE, SCENARIOS


def test_all_recordings_are_present() -> None:
    # the README of the recordings lists fourteen scenarios; a lost folder must not go unnoticed
    assert len(SCENARIOS) >= 14


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_replay_matches_real_batsim(scenario: str, tmp_path) -> None:
    report = replay(REFERENCE / scenario, outputs_dir=tmp_path)
    assert report.ok, report.format(limit=20)
    # all Batsim messages of the recording were compared
    lines = (REFERENCE / scenario / "messages.jsonl").read_text().splitlines()
    assert report.messages_compared == len(lines) // 2
    # the only tolerance used for the CSVs is the ulp-level epower one
    assert all("epower" in t for t in report.tolerated), report.tolerated
    for name in ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"):
        assert (tmp_path / f"out_{name}.csv").exists()


def _copy(scenario: str, tmp_path):
    dst = tmp_path / scenario
    shutil.copytree(REFERENCE / scenario, dst)
    return dst


def _changed_fcfs(tmp_path):
    """fcfs-compute with the walltime end at t=330 recorded as a success."""
    folder = _copy("fcfs-compute", tmp_path)
    lines = (folder / "messages.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj["from"] == "batsim" and obj["message"]["now"] == 330.0:
            obj["message"]["events"][0]["data"]["job_state"] = "COMPLETED_SUCCESSFULLY"
            lines[i] = json.dumps(obj)
    (folder / "messages.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_replay_reports_a_changed_message(tmp_path) -> None:
    report = replay(_changed_fcfs(tmp_path))
    assert not report.ok
    assert "job_state" in report.format()
    assert "COMPLETED_WALLTIME_REACHED" in report.format()


def test_replay_reports_a_changed_csv_cell(tmp_path) -> None:
    folder = _copy("dvfs-energy", tmp_path)
    path = folder / "out_jobs.csv"
    path.write_text(path.read_text().replace("21483.138723", "21483.238723"))
    report = replay(folder)
    assert not report.ok
    assert "out_jobs.csv line 2 column consumed_energy" in report.format()


def _split(folder, index: int, at: int) -> None:
    """Split recorded Batsim message ``index`` (0-based line) after its ``at`` first events, the
    scheduler answering the first part with nothing."""
    recorded = [json.loads(l) for l in (folder / "messages.jsonl").read_text().splitlines()]
    msg = recorded[index]["message"]
    first = {"from": "batsim", "message": {"now": msg["now"], "events": msg["events"][:at]}}
    empty = {"from": "scheduler", "message": {"now": msg["now"], "events": []}}
    second = {"from": "batsim", "message": {"now": msg["now"], "events": msg["events"][at:]}}
    split = recorded[:index] + [first, empty, second] + recorded[index + 1:]
    (folder / "messages.jsonl").write_text("\n".join(json.dumps(o) for o in split) + "\n")


def test_replay_reports_a_split_of_completions_the_clock_does_not_make(tmp_path) -> None:
    """Behaviours 38, 43: same-time completions come in two messages only when SimGrid's clock ends
    them in two solver steps; the engine reproduces that clock, so no split is tolerated any more."""
    folder = _copy("simultaneous-events", tmp_path)
    # line 13 (index 12): COMP w0!11 | COMP w0!7 at t=200, answered by EXEC w0!12 -> split it
    recorded = [json.loads(l) for l in (folder / "messages.jsonl").read_text().splitlines()]
    assert [e["type"] for e in recorded[12]["message"]["events"]] == ["JOB_COMPLETED", "JOB_COMPLETED"]
    _split(folder, 12, 1)
    report = replay(folder)
    assert not report.ok
    assert report.differences[0].startswith("line 13: ours now=200.0 [JOB_COMPLETED, JOB_COMPLETED]")
    assert report.tolerated == []


def test_replay_reports_a_merged_split_of_behaviour_43(tmp_path) -> None:
    """pybatsim-easy-c lines 603 and 605: w0!162 and w0!136 end at the very same double 11300.0 in
    two solver steps (B43); recorded in one message, the engine's two messages are a difference."""
    folder = _copy("pybatsim-easy-c", tmp_path)
    recorded = [json.loads(l) for l in (folder / "messages.jsonl").read_text().splitlines()]
    first, second = recorded[602]["message"], recorded[604]["message"]
    assert first["now"] == second["now"] == 11300.0
    first["events"] += second["events"]
    recorded[603]["message"]["events"] += recorded[605]["message"]["events"]
    del recorded[604:606]
    (folder / "messages.jsonl").write_text("\n".join(json.dumps(o) for o in recorded) + "\n")
    report = replay(folder)
    assert not report.ok
    assert report.differences[0] == (
        "line 603: ours now=11300.0 [JOB_COMPLETED], recorded now=11300.0 [JOB_COMPLETED, JOB_COMPLETED]")


def test_replay_does_not_tolerate_other_splits(tmp_path) -> None:
    folder = _copy("simultaneous-events", tmp_path)
    # REQUESTED_CALL | JOB_SUBMITTED x5 | JOB_COMPLETED x4 at t=100
    _split(folder, 4, 3)
    assert not replay(folder).ok


@pytest.mark.parametrize("scenario,lines", [("composed-profiles-c", [16]), ("shutdown-boot-c", [27, 31])])
def test_without_tolerance_only_a_few_epower_cells_differ(scenario: str, lines: list[int]) -> None:
    """The energy tolerance (1e-7) is needed by three epower cells only; everything else is exact."""
    exact = replay(REFERENCE / scenario, rel_tol=0.0)
    assert [d.split(": ")[0] for d in exact.differences] == [
        f"out_consumed_energy.csv line {n} column epower" for n in lines]
    assert replay(REFERENCE / scenario).ok  # the default tolerance
    assert not replay(REFERENCE / scenario, rel_tol=1e-8).ok


def test_format_summary_counts_the_scenarios(tmp_path) -> None:
    reports = [replay(REFERENCE / "fcfs-compute"), replay(_changed_fcfs(tmp_path))]
    lines = format_summary(reports).splitlines()
    assert lines[0].startswith("fcfs-compute: identical (17 Batsim messages")
    assert lines[1].startswith("fcfs-compute: 1 difference(s), first: line ")
    assert lines[2] == "2 scenarios: 1 identical, 1 with differences"
    assert format_summary(reports[:1]).splitlines()[-1] == "1 scenario: 1 identical, 0 with differences"
