"""The Paraver export (analysis/paraver.py, ``wattsched paraver``) read back with an independent reader, on
real Batsim's ``esc-states`` outputs and on one of our ESC runs: every state interval of every host is
checked against ``_machine_states.csv`` and against the simulation's own machine-state rows."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from wattsched.cli import main
from wattsched.platforms.generate import esc_platform_xml
from wattsched.schedulers.protocol import scheduler_handler
from wattsched.simulator.drivers import run_inprocess
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload
from wattsched.workloads.synthetic import synthetic_week
from tests.conftest import REFERENCE

RECORDING = REFERENCE / "esc-states"
#: state number → machine_states.csv column (the .pcf names are checked to say the same)
COLUMNS = {0: "nb_sleeping", 1: "nb_computing", 2: "nb_idle", 3: "nb_switching_on", 4: "nb_switching_off"}


# ------------------------------------------------------------------ an independent reader
def read_trace(prefix: Path) -> dict:
    """The three files, parsed from their text alone."""
    lines = Path(f"{prefix}.prv").read_text().splitlines()
    m = re.fullmatch(r"#Paraver \((\d\d/\d\d/\d\d at \d\d:\d\d)\):(\d+):(\d+)\(([\d,]+)\):1:(\d+)\(([\d:,]+)\)", lines[0])
    assert m, lines[0]
    end, nodes, cpus, tasks, threads = int(m[2]), int(m[3]), m[4].split(","), int(m[5]), m[6].split(",")
    assert cpus == ["1"] * nodes and tasks == nodes and threads == [f"1:{i}" for i in range(1, nodes + 1)]
    states: dict[int, list[tuple[int, int, int]]] = {h: [] for h in range(1, nodes + 1)}
    events: list[tuple[int, int, int, int]] = []
    last_time = -1
    for line in lines[1:]:
        fields = [int(x) for x in line.split(":")]
        kind, cpu, appl, task, thread = fields[:5]
        assert appl == 1 and thread == 1 and cpu == task and 1 <= cpu <= nodes
        time = fields[5]
        assert time >= last_time, "records must be sorted by time"
        last_time = time
        if kind == 1:
            begin, finish, state = fields[5:]
            assert begin < finish <= end
            states[cpu].append((begin, finish, state))
        else:
            assert kind == 2 and len(fields) == 8
            events.append((time, cpu, fields[6], fields[7]))
    pcf = Path(f"{prefix}.pcf").read_text().splitlines()
    names = {}
    section = None
    for line in pcf:
        if line in ("STATES", "STATES_COLOR", "EVENT_TYPE", "DEFAULT_OPTIONS", "DEFAULT_SEMANTIC"):
            section = line
        elif section == "STATES" and line.strip():
            k, label = line.split(None, 1)
            names[int(k)] = label
    row = Path(f"{prefix}.row").read_text().splitlines()
    assert row[0] == f"LEVEL CPU SIZE {nodes}"
    return {"end_us": end, "nodes": nodes, "states": states, "events": events, "state_names": names,
            "row_names": row[1:nodes + 1], "pcf": pcf}


def check_against_machine_states(trace: dict, rows: list[tuple[float, ...]]) -> None:
    """Every host's intervals tile [0, end]; every interval boundary is a machine-state row time; at every
    row time the hosts per state are the row's counts (the last row of a time: the state after it)."""
    assert {k: v.split()[0].lower() for k, v in trace["state_names"].items()} == {
        0: "off", 1: "running", 2: "idle", 3: "switching", 4: "switching"}
    times = {round(t * 1e6) for t, *_ in rows}
    for host, ivs in trace["states"].items():
        assert ivs[0][0] == 0 and ivs[-1][1] == trace["end_us"]
        for (_, b, s1), (a, _, s2) in zip(ivs, ivs[1:]):
            assert b == a and s1 != s2  # contiguous, one record per state run
            assert a in times, (host, a)
    after: dict[int, tuple] = {}
    for t, *counts in rows:
        after[round(t * 1e6)] = tuple(counts)
    for t, counts in after.items():
        state_of = Counter()
        for ivs in trace["states"].values():
            now = [s for a, b, s in ivs if a <= t < b]
            state_of[now[0] if now else ivs[-1][2]] += 1
        expected = dict(zip(("nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"), counts))
        if t == trace["end_us"]:
            continue  # the state after the last change is not an interval of the trace
        assert {COLUMNS[s]: state_of[s] for s in COLUMNS} == expected, t


def machine_rows(csv: Path) -> list[tuple[float, ...]]:
    lines = csv.read_text().splitlines()[1:]
    return [tuple(float(x) for x in line.split(",")) for line in lines]


def check_job_events(trace: dict, jobs_csv: Path) -> None:
    from procset import ProcSet

    starts = {(t, cpu): v for t, cpu, kind, v in trace["events"] if kind == 1000 and v}
    header, *lines = jobs_csv.read_text().splitlines()
    cols = header.split(",")
    for line in lines:
        row = dict(zip(cols, line.split(",")))
        for h in ProcSet.from_str(row["allocated_resources"]):
            assert starts[(round(float(row["starting_time"]) * 1e6), h + 1)] == int(row["job_id"])


# ------------------------------------------------------------------ real Batsim's outputs
def test_real_batsims_esc_states_trace(tmp_path, capsys):
    assert main(["paraver", str(RECORDING / "out"), "--output-dir", str(tmp_path),
                 "--platform", str(RECORDING / "platform.xml")]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / f"out.{e}") for e in ("prv", "pcf", "row")]
    trace = read_trace(tmp_path / "out")
    assert trace["nodes"] == 6 and trace["row_names"] == [f"node{i}" for i in range(6)]
    check_against_machine_states(trace, machine_rows(RECORDING / "out_machine_states.csv"))
    check_job_events(trace, RECORDING / "out_jobs.csv")
    # pstate events: 0 at start, 1 when asleep, 0 when booted (29 switch-offs, 23 boots: behaviour 45)
    pstate = Counter(v for _, _, kind, v in trace["events"] if kind == 1001)
    assert pstate == {0: 6 + 23, 1: 29}


# ------------------------------------------------------------------ our simulation
def test_our_esc_run_trace_matches_the_simulation_and_its_csv(tmp_path):
    platform = tmp_path / "p.xml"
    platform.write_text(esc_platform_xml(8))
    workload = tmp_path / "w.json"
    week = synthetic_week(8, seed=5, duration_s=86400.0, target_load=0.4, speed_flops=1e9, users=4)
    workload.write_text(json.dumps(week))
    sim = Simulation(load_platform(platform), load_workload(workload))
    run_inprocess(sim, scheduler_handler("esc", {"idle_s": 600, "period_s": 60}))
    write_outputs(sim, tmp_path / "run")
    assert main(["paraver", str(tmp_path / "run")]) == 0
    trace = read_trace(tmp_path / "run")
    assert trace["row_names"] == [f"host {h}" for h in range(8)]
    assert any(s == 0 for ivs in trace["states"].values() for *_, s in ivs)  # something was switched off
    check_against_machine_states(trace, sim.machine_rows)  # exact times
    check_against_machine_states(trace, machine_rows(tmp_path / "run_machine_states.csv"))
    check_job_events(trace, tmp_path / "run_jobs.csv")


def test_contradicting_outputs_give_one_line_and_no_file(tmp_path, capsys):
    folder = tmp_path / "bad"
    shutil.copytree(RECORDING, folder)
    jobs = folder / "out_jobs.csv"
    # job 1 submitted and started at 1000 (not 1465 and 2020, so waiting 0 s, not 555), while its hosts are asleep
    jobs.write_text(jobs.read_text().replace(",1465.000000,2,380.000000,1,COMPLETED_SUCCESSFULLY,2020.000000,190.000000,"
                                             "2210.000000,555.000000,", ",1000.000000,2,380.000000,1,"
                                             "COMPLETED_SUCCESSFULLY,1000.000000,190.000000,1190.000000,0.000000,", 1))
    assert main(["paraver", str(folder / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "job 1" in err and "host 0" in err and "off" in err
    assert not list(folder.glob("*.prv")) and not list(folder.glob("*.pcf"))
