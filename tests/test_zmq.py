"""The embedded simulator as a Batsim stand-in over ZeroMQ, against pybatsim's own launcher."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from wattsched.simulator.drivers import run_inprocess, run_zmq
from wattsched.simulator.engine import Simulation
from wattsched.simulator.outputs import write_outputs
from wattsched.simulator.platform import load_platform
from wattsched.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "taurus_16.xml"
WORKLOAD = ROOT / "workloads" / "demo_taurus16.json"  # 210 jobs
PYBATSIM = Path(sys.executable).parent / "pybatsim"


def free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def new_sim() -> Simulation:
    return Simulation(load_platform(PLATFORM), load_workload(WORKLOAD))


def run_over_zmq(scheduler_name: str, prefix: Path) -> None:
    endpoint = free_endpoint()
    proc = subprocess.Popen(
        [str(PYBATSIM), "-t", "-1", "-s", endpoint, scheduler_name],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        sim = new_sim()
        run_zmq(sim, endpoint, timeout_s=60)
        write_outputs(sim, prefix)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out


def run_here(handler, prefix: Path) -> None:
    sim = new_sim()
    run_inprocess(sim, handler)
    write_outputs(sim, prefix)


def same_outputs(a: Path, b: Path) -> None:
    for name in ("jobs", "machine_states", "consumed_energy", "pstate_changes"):
        assert Path(f"{a}_{name}.csv").read_text() == Path(f"{b}_{name}.csv").read_text(), name
    sched_a = Path(f"{a}_schedule.csv").read_text().splitlines()
    sched_b = Path(f"{b}_schedule.csv").read_text().splitlines()
    keys = sched_a[0].split(",")
    va = dict(zip(keys, sched_a[1].split(",")))
    vb = dict(zip(keys, sched_b[1].split(",")))
    for k in ("scheduling_time", "simulation_time"):
        va.pop(k), vb.pop(k)
    assert va == vb


pytestmark = pytest.mark.skipif(not PYBATSIM.exists(), reason="pybatsim's launcher is not installed")


def test_pybatsim_shipped_easy_over_zmq_equals_in_process(tmp_path) -> None:
    from pybatsim.schedulers.easyBackfill import EasyBackfill

    from wattsched.schedulers.adapter import pybatsim_handler

    run_over_zmq("backfill-easy", tmp_path / "zmq")
    run_here(pybatsim_handler(EasyBackfill({})), tmp_path / "inproc")
    same_outputs(tmp_path / "zmq", tmp_path / "inproc")
    jobs = (tmp_path / "zmq_jobs.csv").read_text().splitlines()
    assert len(jobs) == 1 + 210


def test_our_preset_launched_by_pybatsim_equals_wattsched_run(tmp_path) -> None:
    """pybatsim's launcher runs the preset through the pybatsim adapter; `wattsched run` through the
    translator, without pybatsim: the same schedule."""
    from wattsched.schedulers.protocol import scheduler_handler

    run_over_zmq("easy-backfill", tmp_path / "zmq")
    run_here(scheduler_handler("easy-backfill", {}), tmp_path / "inproc")
    same_outputs(tmp_path / "zmq", tmp_path / "inproc")


def test_wattsched_serve_and_run_connect(tmp_path) -> None:
    """`wattsched serve` waits for a Batsim; `wattsched run --connect` is one (the CLI both ways)."""
    from wattsched.cli import main
    from wattsched.schedulers.protocol import scheduler_handler

    endpoint = free_endpoint()
    wattsched = Path(sys.executable).parent / "wattsched"
    proc = subprocess.Popen([str(wattsched), "serve", "-s", "easy-backfill", "--bind", endpoint],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert main(["run", str(PLATFORM), str(WORKLOAD), "--connect", endpoint, "-e", str(tmp_path / "zmq"),
                     "-q", "--json"]) == 0
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "simulation ended" in out
    run_here(scheduler_handler("easy-backfill", {}), tmp_path / "inproc")
    same_outputs(tmp_path / "zmq", tmp_path / "inproc")
