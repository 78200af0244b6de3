"""Hunt 10: bad inputs of the web page, ``replay``, ``traces``, ``serve`` and the readers of result folders
edited by hand that still gave a traceback, a hang, a 500 or a silent wrong answer.

* A result CSV holding an integer beyond a double (``nb_sleeping`` of 400 digits) gave a traceback
  (OverflowError in pandas); a pstate of 1e20 was read with a numpy cast warning as another number, a host count
  beyond the hosts bound was taken.
* ``node-stats``, ``paraver`` and ``plot`` took ``nb_computing_machines`` unchecked: ``1e308`` hung (a list per
  host), a 400-digit integer gave a traceback, ``0`` said "beyond 0--1"; ``metrics`` refused them. One rule now.
* ``node-stats`` and ``paraver`` on a run without ``_consumed_energy.csv`` (pstate change times then the ``%g``
  ones, rounded) refused a valid run: "job runs on host 0 ... while the host is switching off", the job's end
  (6 decimals) being past the rounded time of the switch-off that followed it.
* ``_machine_states.csv`` rows counting different numbers of hosts, and a header-only ``_pstate_changes.csv``
  while hosts slept, were read as they were (plots and node statistics of no run).
* ``replay FOLDER --keep-outputs FOLDER`` wrote our CSVs over the recording's, then compared them with themselves:
  "identical", the recorded reference gone.
* ``serve --bind inproc://x`` and ``run --connect inproc://x`` waited their whole ``--timeout`` (600 s) for a
  peer no other process can be.
* ``traces fetch -q NAME`` said "unrecognized arguments: NAME" (argparse fills a ``NAME ...`` positional only
  before the first option).
* The web page answered 500 for a finished run whose outputs no longer read (``gone()`` rebuilt the
  ``InputError`` with one argument), whose ``run.json`` is not one it writes (not JSON, a field missing or added
  by another version, an unknown preset) or whose ``status.json`` is JSON of another shape (a list, a metric that
  is text).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused, set_line
from wattsched.cli import main

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"
ROOT = Path(__file__).resolve().parent.parent


def recording(tmp_path: Path, name: str = "shutdown-boot", without: tuple[str, ...] = ()) -> Path:
    """A copy of a recording's five outputs (a real Batsim run), some left out."""
    return recording_outputs(tmp_path / name, name, without)


def set_schedule(folder: Path, key: str, value: str) -> None:
    header, row = (folder / "out_schedule.csv").read_text().splitlines()[:2]
    names, values = header.split(","), row.split(",")
    values[names.index(key)] = value
    (folder / "out_schedule.csv").write_text(f"{header}\n{','.join(values)}\n")


# ------------------------------------------------------------------------------ 1. numbers of result files
@pytest.mark.parametrize(("kind", "line", "text", "message"), [
    ("machine_states", 3, "0," + "9" * 400 + ",0,2,0,2",
     "line 3, column 'nb_sleeping': an integer of 400 digits, beyond the range of a double (±1.8e308)"),
    ("pstate_changes", 3, "0,2-3," + "9" * 400,
     "line 3, column 'new_pstate': an integer of 400 digits, beyond the range of a double (±1.8e308)"),
    ("pstate_changes", 3, "0,2-3,100000000000000000000",
     "line 3, column 'new_pstate': 1e+20 is not a pstate (a whole number from 0 to 2147483647, or -1/-2"),
    ("machine_states", 3, "0,2000001,0,2,0,2", "line 3, column 'nb_sleeping': 2,000,001 is not a count of hosts"),
    ("machine_states", 3, "0,1,0,2,0,2", "line 3: the counts add up to 5 hosts, those of line 2 to 4"),
])
def test_numbers_of_a_result_file_beyond_their_bounds_are_refused(tmp_path, capsys, kind, line, text, message):
    folder = recording(tmp_path)
    set_line(folder / f"out_{kind}.csv", line, text)
    for command in ("metrics", "node-stats"):
        refused(capsys, [command, str(folder)], f"out_{kind}.csv: {message}")


def test_a_pstate_file_cut_to_its_header_while_hosts_slept_is_refused(tmp_path, capsys):
    folder = recording(tmp_path)
    (folder / "out_pstate_changes.csv").write_text("time,machine_id,new_pstate\n")
    refused(capsys, ["node-stats", str(folder)], "out_pstate_changes.csv: row 2: missing: a header but no rows, "
                                                 "while hosts were switched off or on")
    # a run whose hosts never switched may have no change (nothing to miss)
    folder = recording(tmp_path, "fcfs-compute")
    (folder / "out_pstate_changes.csv").write_text("time,machine_id,new_pstate\n")
    assert main(["metrics", str(folder)]) == 0


@pytest.mark.parametrize("value", ["1e308", "9" * 400, "0"])
def test_node_stats_paraver_and_plot_check_the_hosts_of_the_schedule_as_metrics_does(tmp_path, capsys, value):
    folder = recording(tmp_path)
    set_schedule(folder, "nb_computing_machines", value)
    started = time.monotonic()
    for argv in (["metrics"], ["node-stats"], ["paraver"], ["plot", "-d", str(tmp_path / "png")]):
        refused(capsys, [*argv, str(folder)], "out_schedule.csv: nb_computing_machines:",
                "is not a number of hosts (a whole number >= 1")
    assert time.monotonic() - started < 10
    assert not (tmp_path / "png").exists() and not list(folder.glob("*.prv"))


def test_node_stats_without_consumed_energy_takes_the_rounded_pstate_times(tmp_path, capsys):
    """A job ends at 1234.564 s on host 0, which is switched off at once: ``_pstate_changes.csv`` prints that
    time with %g as 1234.56, before the job's end; without ``_consumed_energy.csv`` (its exact time) the
    rounded time is all there is."""
    jobs_header = (REFERENCE / "fcfs-compute" / "out_jobs.csv").read_text().splitlines()[0]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "out_jobs.csv").write_text(
        f"{jobs_header}\n1,w0,p,0.000000,1,2000.000000,1,COMPLETED_SUCCESSFULLY,0.000000,1234.564000,1234.564000,"
        '0.000000,1234.564000,1.000000,0,100.000000,""\n')
    (folder / "out_machine_states.csv").write_text(
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing\n"
        "0,0,0,0,0,1\n1234.56,0,0,0,1,0\n1234.56,0,0,1,0,0\n1240.56,1,0,0,0,0\n")
    (folder / "out_pstate_changes.csv").write_text("time,machine_id,new_pstate\n0,0,0\n1234.56,0,-2\n1240.56,0,13\n")
    assert main(["node-stats", "--json", str(folder)]) == 0, capsys.readouterr().err
    stats = json.loads(capsys.readouterr().out)
    assert stats["nb_shutdowns"] == 1 and stats["time_running_s"] == pytest.approx(1234.56, abs=0.01)
    # a job that overlaps a switch-off by more than the rounding still contradicts it
    set_line(folder / "out_jobs.csv", 2, "1,w0,p,0.000000,1,2000.000000,1,COMPLETED_SUCCESSFULLY,0.000000,"
                                         '1234.600000,1234.600000,0.000000,1234.600000,1.000000,0,100.000000,""')
    refused(capsys, ["node-stats", str(folder)], "job 1: runs on host 0", "while the host is switching off")


# ---------------------------------------------------------------------------------------------- 2. replay
def test_replay_refuses_to_keep_its_outputs_over_the_recording(tmp_path, capsys):
    folder = tmp_path / "rec"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    jobs = folder / "out_jobs.csv"
    jobs.write_text(jobs.read_text().replace("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", 1))
    before = jobs.read_bytes()
    (tmp_path / "link").symlink_to(folder)
    for keep in (folder, tmp_path / "link"):
        refused(capsys, ["replay", str(folder), "--keep-outputs", str(keep)],
                f"--keep-outputs {keep}: {keep / 'out_jobs.csv'} is the recorded out_jobs.csv file",
                "give a folder outside the recording")
        assert jobs.read_bytes() == before
    assert main(["replay", str(folder), "--keep-outputs", str(tmp_path / "ours")]) == 1  # the edit is a difference
    assert "final_state" in capsys.readouterr().out and (tmp_path / "ours" / "out_jobs.csv").is_file()


# ---------------------------------------------------------------------------------- 3. endpoints, traces
@pytest.mark.parametrize("argv", [["serve", "--bind", "inproc://x"],
                                  ["run", str(ROOT / "platforms" / "taurus_16.xml"),
                                   str(ROOT / "workloads" / "demo_taurus16.json"), "--connect", "inproc://x"]])
def test_an_inproc_endpoint_no_other_process_can_reach_is_refused(tmp_path, capsys, argv):
    started = time.monotonic()
    refused(capsys, [*argv, "--timeout", "600"] + (["-e", str(tmp_path / "out")] if argv[0] == "run" else []),
            "inproc://x: an inproc:// endpoint is reachable only inside this process")
    assert time.monotonic() - started < 10 and not list(tmp_path.iterdir())


def test_trace_names_after_an_option_are_read_as_names(capsys, monkeypatch):
    monkeypatch.delenv("WATTSCHED_PWA", raising=False)
    refused(capsys, ["traces", "fetch", "-q", "nope"], "unknown trace 'nope'")
    refused(capsys, ["traces", "fetch", "--sha256", "sdsc-blue", "-q", "nope"], "unknown trace 'nope'")
    with pytest.raises(SystemExit) as stop:  # an unknown option is still one
        main(["traces", "fetch", "-q", "nope", "--bogus"])
    assert stop.value.code == 2 and "unrecognized arguments: nope --bogus" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ 4. web page
@pytest.fixture(scope="module")
def done_run(tmp_path_factory):
    """A workspace holding one finished run of one job (simulated in this process, no Dask)."""
    pytest.importorskip("starlette")
    from wattsched.web.runs import simulate
    from wattsched.web.workspace import Workspace

    root = tmp_path_factory.mktemp("web") / "ws"
    space = Workspace(root)
    workload = {"nb_res": 16, "jobs": [{"id": "1", "subtime": 0, "walltime": 100, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 10}}}
    choice = space.store_input("workload", "one.json", json.dumps(workload).encode())
    spec = space.new_run(name="one", scheduler="easy-backfill", options={}, platform="shipped:taurus_16.xml",
                         workload=choice)
    assert simulate(str(root), spec.id) == "done", space.status(spec.id)
    return root, spec.id


@pytest.fixture
def page(done_run, tmp_path):
    """A copy of the workspace of ``done_run`` and a client of the page over it."""
    pytest.importorskip("httpx")
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Using `httpx` with `starlette.testclient`")
        from starlette.testclient import TestClient
    from wattsched.web.app import create_app

    root, run_id = done_run
    copy = tmp_path / "ws"
    shutil.copytree(root, copy)
    with TestClient(create_app(copy, processes=False), raise_server_exceptions=False) as client:
        yield client, copy / "runs" / run_id, run_id


def shown(response) -> str:
    import html
    import re

    return " ".join(html.unescape(m) for m in re.findall(r'class="error[^"]*"[^>]*>([^<]*)<', response.text))


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_a_finished_run_whose_outputs_no_longer_read_is_a_409_naming_the_file(page):
    client, folder, run_id = page
    assert client.get(f"/runs/{run_id}").status_code == 200
    (folder / "out_jobs.csv").write_text("job_id\n1\n")
    response = client.get(f"/runs/{run_id}")
    assert response.status_code == 409
    assert f"run {run_id}: workspace/runs/{run_id}/out_jobs.csv: column 'submission_time': missing" in shown(response)
    assert client.get(f"/compare?run={run_id}&run={run_id}").status_code == 400  # one run is not two


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
@pytest.mark.parametrize(("edit", "problem"), [
    (lambda spec: "not json", "not JSON (Expecting value"),
    (lambda spec: json.dumps({**spec, "extra": 1, "scheduler": "nope"}), "'scheduler' is \"nope\", not a preset"),
    (lambda spec: json.dumps({k: v for k, v in spec.items() if k != "options"}), "no 'options'"),
    (lambda spec: json.dumps({**spec, "options": None}), "'options' is null, not an object"),
    (lambda spec: json.dumps([spec]), "a list, not an object"),
])
def test_a_run_json_the_page_did_not_write_is_a_409_naming_the_file(page, edit, problem):
    client, folder, run_id = page
    spec = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(edit(spec))
    for url in (f"/runs/{run_id}", f"/runs/{run_id}/status", f"/runs/{run_id}/files/jobs.csv"):
        response = client.get(url)
        assert response.status_code == 409, url
        assert shown(response).startswith(f"run {run_id}: runs/{run_id}/run.json: {problem}"), shown(response)
    assert client.post(f"/runs/{run_id}/delete", data={"confirm": "yes"}).status_code == 409
    assert client.get("/").status_code == 200


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
@pytest.mark.parametrize(("edit", "problem"), [
    (lambda status: [status], "a list, not an object"),
    (lambda status: {**status, "metrics": {**status["metrics"], "utilization": "high"}},
     "metric 'utilization' is \"high\", not a number"),
    (lambda status: {k: v for k, v in status.items() if k != "metrics"}, "a finished run without its metrics"),
    (lambda status: {**status, "state": "finished"}, "state \"finished\" is not one of queued, running, done"),
    (lambda status: {**status, "sim_time_s": "soon"}, "'sim_time_s' is \"soon\", not a number"),
])
def test_a_status_json_the_page_did_not_write_shows_a_failed_run_saying_why(page, edit, problem):
    client, folder, run_id = page
    status = json.loads((folder / "status.json").read_text())
    (folder / "status.json").write_text(json.dumps(edit(status)))
    for url in (f"/runs/{run_id}", f"/runs/{run_id}/status", f"/runs/{run_id}/row", "/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert f"status.json of this run cannot be read ({problem}" in shown(response), shown(response)
    assert client.get(f"/compare?run={run_id}&run={run_id}").status_code == 400


# ------------------------------------------------------------------------------ left by the hunt, fixed after it
@pytest.mark.parametrize("argv, option", [
    (["synth", "--hosts", "4", "--seed", "1", "--days", "1e308"], "--days"),
    (["eamc-workload", "--days", "1e6"], "--days"),
    (["eamc-workload", "--mean-runtime-h", "1e308"], "--mean-runtime-h"),
])
def test_a_duration_beyond_its_bound_names_its_option(capsys, argv, option):
    """was: "duration_s must be a positive number, got inf", neither the option nor the value typed."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1, err
    bound = "WATTSCHED_LIMIT_DAYS" if option == "--days" else "WATTSCHED_LIMIT_TIME_S"
    assert f"argument {option}: {argv[-1].replace('1e308', '1e+308').replace('1e6', '1e+06')}" in err, err
    assert bound in err, err


def test_an_empty_url_is_not_the_archive(capsys, monkeypatch):
    """was: ``traces fetch NAME --url ''`` downloaded from the real archive (an empty URL read as none)."""
    import wattsched.workloads.traces as traces

    monkeypatch.setattr(traces, "fetch_trace", lambda *a, **k: pytest.fail("nothing may be fetched"))
    assert main(["traces", "fetch", "sdsc-blue", "--url", ""]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "wattsched: error: --url '': an empty URL; give the folder URL to download from, or leave --url out"


def test_an_infinite_budget_fraction_is_refused():
    """was: ``budget_fraction: 1e308`` gave an infinite budget, silently the same schedule as EASY."""
    from wattsched.base.errors import OptionError
    from wattsched.schedulers.presets import build

    scheduler = build("energy-bud", {"budget_fraction": 1e308, "window_end_s": 1000.0})
    with pytest.raises(OptionError, match="option 'budget_fraction' 1e\\+308: a budget of inf J .* beyond the largest"):
        scheduler.start(4)


@pytest.mark.parametrize("argv, option", [(["traces", "list", "--mirror", "/etc/passwd"], "--mirror"),
                                          (["traces", "-q"], "--quiet")])
def test_fetch_options_with_the_list_are_refused(capsys, argv, option):
    """was: accepted and ignored (the list reads no mirror and shows no progress)."""
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (f"wattsched: error: {option} applies to 'wattsched traces fetch' only "
                                               "(the list reads no file)")


@pytest.mark.parametrize("argv", [["sweep", "grid.yaml", "-j", "300", "--out", "o"], ["web", "-j", "10000"],
                                  ["reproduce", "esc", "-j", "999", "--out", "o"]])
def test_workers_beyond_the_bound_are_a_usage_error(capsys, argv):
    """was: accepted, a sweep or the page starting that many processes."""
    from tests.bad_inputs_checks import usage_error

    usage_error(capsys, argv, "argument -j/--workers:", "processes at once", "WATTSCHED_LIMIT_WORKERS")


def test_api_sweep_workers_beyond_the_bound(tmp_path, monkeypatch):
    from wattsched import api
    from wattsched.base.errors import OptionError

    monkeypatch.setenv("WATTSCHED_LIMIT_WORKERS", "8")
    with pytest.raises(OptionError, match=r"^workers \(-j\) 9: at most 8 processes at once"):
        api.sweep({"platforms": ["p.xml"], "workloads": ["w.json"], "schedulers": ["fcfs"]}, tmp_path / "o", workers=9)
    assert not (tmp_path / "o").exists()
