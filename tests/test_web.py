"""The local web page (``wattsched web``, :mod:`wattsched.web`) through Starlette's test client.

Forms generated from the option schema; a launched run reaching ``done`` with its page, metrics (those of
``wattsched metrics``) and downloads; the CLI's one-line errors next to their fields; refused uploads
(malformed, oversize) and paths outside the workspace, with nothing written; runs kept across a restart;
the comparison page. Runs go through the real Dask engine, with worker threads (faster to start).
"""

from __future__ import annotations

import html
import json
import logging
import re
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
from procset import ProcSet

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient  # noqa: E402

from wattsched.web.app import create_app, format_value  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = "shipped:taurus_16.xml"
WORKLOAD = "shipped:demo_taurus16.json"
ENERGY_BUD = {"scheduler": "energy-bud", "platform": PLATFORM, "workload": WORKLOAD, "name": "budget 60%",
              "opt.shutdown": "true", "opt.budget_fraction": "0.6", "opt.window_end_s": "20000"}
#: A budget below the idle platform without shutdown: valid options, refused when the simulation begins.
TOO_SMALL = {**ENERGY_BUD, "opt.shutdown": "false", "opt.budget_fraction": "0.01", "name": "too small"}
EASY = {"scheduler": "easy-backfill", "platform": PLATFORM, "workload": WORKLOAD, "name": "easy"}


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def cli_error(*argv: str) -> str:
    """The one-line message ``wattsched ARGV`` prints, without ``wattsched[ COMMAND]: error: `` and the
    pointer to ``--help``."""
    import contextlib
    import io

    from wattsched.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as stop:  # argparse
            status = stop.code
    assert status == 2, err.getvalue()
    (line,) = err.getvalue().strip().splitlines()
    return re.sub(r"^wattsched( [a-z-]+)?: error: ", "", line).split(" (see '")[0]


def launch(client: TestClient, form: dict[str, str], files: dict | None = None) -> str:
    response = client.post("/runs", data=form, files=files, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["location"].rsplit("/", 1)[1]


def wait_done(client: TestClient, run_id: str, timeout_s: float = 90.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        fragment = client.get(f"/runs/{run_id}/status")
        state = re.search(r'id="state">(\w+)<', fragment.text).group(1)
        if state not in ("queued", "running"):
            assert fragment.headers.get("HX-Refresh") == "true"  # the page reloads with the results
            return state
        assert "HX-Refresh" not in fragment.headers and 'hx-trigger="every 1s"' in fragment.text
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish in {timeout_s} s")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A workspace with two finished runs: energy-bud with shutdown and EASY, on the demo inputs, launched
    together."""
    workspace = tmp_path_factory.mktemp("web") / "ws"
    app = create_app(workspace, workers=2, processes=False)
    with TestClient(app) as client:
        assert client.post("/runs", data=TOO_SMALL).status_code == 400  # refused before any run is created
        first = [launch(client, ENERGY_BUD), launch(client, EASY)]
        # a run that fails (made past the page's checks, as a run failing on its own would): created last, the
        # delete test reads the index's order
        spec = app.state.workspace.new_run(name="too small", scheduler="energy-bud", platform=PLATFORM,
                                           workload=WORKLOAD, options={"shutdown": False, "budget_fraction": 0.01,
                                                                       "window_end_s": 20000})
        app.state.manager.submit(spec.id)
        ids = first + [spec.id]
        assert [wait_done(client, run_id) for run_id in ids] == ["done", "done", "failed"]
    return workspace, ids[:2], ids[2]


# -------------------------------------------------------------------------------------------- forms
def test_the_option_form_is_generated_from_the_schema(tmp_path):
    from wattsched.schedulers.pieces import REGISTRY, SLOTS
    from wattsched.schedulers.presets import PRESETS

    def names(text: str) -> list[str]:
        return re.findall(r'name="opt\.([A-Za-z0-9_]+)"', text)

    with TestClient(create_app(tmp_path, processes=False)) as client:
        preset = PRESETS["energy-bud"]
        page = client.get("/new?scheduler=energy-bud").text
        budget_options = [o.name for o in REGISTRY["admission"]["energy-bud"].options]
        switches = [sw.option.name for sw in preset.switches]
        assert names(page) == switches + [o.name for o in REGISTRY["placement"]["first-fit"].options] + budget_options
        # a switch's select lists its choices, each option's help and valid range are shown
        assert re.search(r'<select id="opt\.placement"[^>]*hx-get="/options"', page)
        placement = next(sw.option for sw in preset.switches if sw.option.name == "placement")
        assert placement.choices and len(placement.choices) >= 3
        for choice in placement.choices:
            assert f'<option value="{choice}">' in page
        for option in preset.options:
            if option.name in names(page):
                assert option.describe() in html.unescape(page) and option.help in html.unescape(page)
        # shutdown on: the fieldset now has the shutdown piece's options too
        fragment = client.get("/options", params={"scheduler": "energy-bud", "opt.shutdown": "true"}).text
        shutdown_options = [o.name for o in REGISTRY["power"]["shutdown"].options]
        assert shutdown_options and set(shutdown_options) <= set(names(fragment))
        assert not set(shutdown_options) & set(names(page))
        # compose: one select per slot, and the chosen pieces' options only
        compose = client.get("/options", params={"scheduler": "compose", "opt.admission": "powercap"}).text
        assert names(compose)[:len(SLOTS)] == list(SLOTS)
        assert "budget_fraction" in names(compose)
        assert "budget_fraction" not in names(client.get("/options", params={"scheduler": "compose"}).text)
        assert client.get("/options", params={"scheduler": "nope"}).status_code == 400


def test_a_bad_option_is_shown_next_to_its_field_with_the_cli_message(tmp_path):
    platform = str(ROOT / "platforms" / "taurus_16.xml")
    workload = str(ROOT / "workloads" / "demo_taurus16.json")
    cases = [  # (form, field, CLI options)
        ({**ENERGY_BUD, "opt.budget_fraction": "lots"}, "budget_fraction",
         {"shutdown": True, "budget_fraction": "lots", "window_end_s": 20000}),
        ({**EASY, "scheduler": "esc", "opt.period_s": "0"}, "period_s", {"period_s": 0}),  # out of range
        ({**ENERGY_BUD, "opt.window_end_s": ""}, "window_end_s", {"shutdown": True, "budget_fraction": 0.6}),
    ]
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        for form, field, options in cases:
            response = client.post("/runs", data=form)
            assert response.status_code == 400
            expected = cli_error("run", platform, workload, "-s", form["scheduler"], "-o", json.dumps(options),
                                 "-e", str(tmp_path / "cli" / "out"))
            shown = re.search(rf'id="error-{field}">([^<]*)<', response.text)
            assert shown is not None, (field, response.text[-2000:])
            assert html.unescape(shown.group(1)) == expected
            # the field keeps what was typed, nothing is written
            assert re.search(rf'name="opt\.{field}"[^>]*value="{re.escape(form["opt." + field])}"', response.text)
        assert files_under(tmp_path / "ws" / "runs") == [] and not (tmp_path / "cli").exists()


# --------------------------------------------------------------------------------------------- runs
def test_a_launched_run_reaches_done_with_its_page_and_downloads(finished):
    from wattsched.analysis.metrics import compute_metrics
    from wattsched.base.batsim_files import output_paths

    workspace, (budget_id, _), _ = finished
    prefix = workspace / "runs" / budget_id / "out"
    with TestClient(create_app(workspace, processes=False)) as client:
        page = client.get(f"/runs/{budget_id}").text
        assert 'id="state">done<' in page and "hx-trigger" not in page  # no more polling
        # the metrics shown are those of `wattsched metrics` on the run's outputs
        shown = dict(re.findall(r'data-metric="([^"]+)">([^<]*)<', page))
        expected = compute_metrics(str(prefix))
        assert shown == {name: format_value(value) for name, value in expected.items()}
        assert int(shown["nb_jobs"]) == 210
        # downloads: the five CSVs and the Paraver trace, byte for byte
        links = re.findall(rf'href="/runs/{budget_id}/files/([^"]+)"', page)
        assert links == [f"{kind}.csv" for kind in output_paths(prefix)] + ["paraver.prv", "paraver.pcf", "paraver.row"]
        for name in links:
            response = client.get(f"/runs/{budget_id}/files/{name}")
            assert response.status_code == 200
            on_disk = prefix.with_name("out_" + name) if name.endswith(".csv") else prefix.with_suffix("." + name[-3:])
            assert response.content == on_disk.read_bytes()
        # the charts: Gantt, power against the budget (0.6 × 16 hosts × P̃comp), host states
        figures = {key: json.loads(text.replace("<\\/", "</")) for key, text in
                   re.findall(r'<script type="application/json" id="figure-(\w+)">(.*?)</script>', page, re.S)}
        assert set(figures) == {"gantt", "power", "states"}
        rectangles = [(x, y) for trace in figures["gantt"]["data"]
                      for x, y in zip(trace["x"][::6], trace["y"][::6])]  # each rectangle's first corner
        jobs = pd.read_csv(prefix.with_name("out_jobs.csv"))
        assert sorted(rectangles) == sorted((float(start), float(ProcSet.from_str(hosts)[0]) - 0.5) for start, hosts in
                                            zip(jobs["starting_time"], jobs["allocated_resources"]))
        from wattsched.energy_models.taurus import TAURUS

        budget = [t for t in figures["power"]["data"] if t["name"].startswith("budget power")]
        assert budget and budget[0]["y"][0] == pytest.approx(0.6 * 16 * TAURUS.estimated_comp_w)
        assert figures["power"]["layout"]["shapes"][0]["x1"] == 20000
        sleeping = next(t for t in figures["states"]["data"] if t["name"] == "sleeping")
        assert max(sleeping["y"]) > 0  # shutdown switched hosts off


def test_a_run_that_fails_shows_the_cli_error_and_no_outputs(finished, tmp_path):
    workspace, _, failed_id = finished
    expected = cli_error("run", str(ROOT / "platforms" / "taurus_16.xml"), str(ROOT / "workloads" / "demo_taurus16.json"),
                         "-s", "energy-bud", "-o", json.dumps({"budget_fraction": 0.01, "window_end_s": 20000,
                                                              "shutdown": False}), "-e", str(tmp_path / "out"))
    with TestClient(create_app(workspace, processes=False)) as client:
        page = client.get(f"/runs/{failed_id}").text
        assert 'id="state">failed<' in page and 'id="metrics"' not in page
        assert html.unescape(re.search(r'id="error">([^<]*)<', page).group(1)) == expected
        assert client.get(f"/runs/{failed_id}/files/jobs.csv").status_code == 404
    assert sorted(p.name for p in (workspace / "runs" / failed_id).iterdir()) == ["run.json", "status.json"]


def test_progress_is_shown_while_a_run_is_running(tmp_path, monkeypatch):
    from wattsched.web.runs import simulate
    from wattsched.web.workspace import Workspace

    space = Workspace(tmp_path)
    spec = space.new_run(name="live", scheduler="easy-backfill", options={}, platform=PLATFORM, workload=WORKLOAD)
    space.set_status(spec.id, state="running", sim_time_s=3723.5, jobs_done=17, jobs=210)
    app = create_app(tmp_path, processes=False)
    space.set_status(spec.id, state="running", sim_time_s=3723.5, jobs_done=17, jobs=210)  # as a worker would
    with TestClient(app) as client:
        fragment = client.get(f"/runs/{spec.id}/status").text
        assert 'id="sim-time">01:02:03.5<' in fragment and 'id="jobs-done">17<' in fragment
        assert 'hx-trigger="every 1s"' in client.get("/").text  # the runs table polls the running row
    # the task records its progress as it goes, then the end: every job done at the makespan
    import wattsched.web.runs as runs

    seen: list[tuple[str, float, int]] = []
    original = Workspace.set_status

    def spy(self, run_id, **fields):
        status = original(self, run_id, **fields)
        seen.append((status["state"], status["sim_time_s"], status["jobs_done"]))
        return status

    monkeypatch.setattr(runs, "PROGRESS_PERIOD_S", 0.0)
    monkeypatch.setattr(Workspace, "set_status", spy)
    assert simulate(str(tmp_path), spec.id) == "done"
    running = [(t, done) for state, t, done in seen if state == "running"]
    assert running[0] == (0.0, 0) and len(running) > 100 and running == sorted(running)
    assert 0 < running[len(running) // 2][1] < 210
    assert seen[-1][0] == "done"
    status = space.status(spec.id)
    assert status["jobs_done"] == status["jobs"] == 210
    assert status["sim_time_s"] == status["metrics"]["makespan_s"]


def test_runs_survive_a_restart(finished, tmp_path):
    import shutil

    workspace = tmp_path / "copy"
    shutil.copytree(finished[0], workspace)
    from wattsched.web.workspace import Workspace

    left = Workspace(workspace).new_run(name="cut short", scheduler="fcfs", options={}, platform=PLATFORM,
                                        workload=WORKLOAD)  # queued when the server stopped
    (workspace / "index.json").unlink()  # the index is rebuilt from the run folders
    with TestClient(create_app(workspace, processes=False)) as client:
        index = client.get("/").text
        for run_id in finished[1]:
            assert re.search(rf'id="row-{run_id}">.*?state-done', index, re.S)
            assert 'id="metrics"' in client.get(f"/runs/{run_id}").text
        assert re.search(rf'id="row-{left.id}">.*?state-interrupted', index, re.S)
        assert "launch it again" in client.get(f"/runs/{left.id}").text


def test_the_comparison_page(finished):
    workspace, ids, _ = finished
    with TestClient(create_app(workspace, processes=False)) as client:
        page = client.get("/compare", params=[("run", run_id) for run_id in ids])
        assert page.status_code == 200
        runs = [json.loads((workspace / "runs" / run_id / "status.json").read_text())["metrics"] for run_id in ids]
        row = re.search(r"<td>total_energy_j</td>(.*?)</tr>", page.text, re.S).group(1)
        assert re.findall(r'class="num">([^<]*)<', row) == [format_value(m["total_energy_j"]) for m in runs]
        assert runs[0]["total_energy_j"] < runs[1]["total_energy_j"]  # shutdown under a budget saves energy
        figures = dict(re.findall(r'id="figure-(\w+)">(.*?)</script>', page.text, re.S))
        for key in ("power", "utilization"):
            traces = json.loads(figures[key])["data"]
            assert [t["name"] for t in traces] == [f"budget 60% ({ids[0][-6:]})", f"easy ({ids[1][-6:]})"]
        assert max(json.loads(figures["utilization"])["data"][1]["y"]) <= 1.0
        assert client.get("/compare", params={"run": ids[0]}).status_code == 400


# ------------------------------------------------------------------------------------------ refusals
def test_a_malformed_platform_upload_shows_its_error_and_stores_nothing(tmp_path):
    bad = tmp_path / "broken.xml"
    bad.write_text('<?xml version="1.0"?>\n<platform version="4.1"><zone id="z"')
    expected = cli_error("run", str(bad), str(ROOT / "workloads" / "demo_taurus16.json"))
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        before = files_under(tmp_path / "ws")
        response = client.post("/inputs/upload", data={"kind": "platform"},
                               files={"file": ("broken.xml", bad.read_bytes(), "text/xml")})
        assert response.status_code == 400
        shown = html.unescape(re.search(r'id="error-upload">([^<]*)<', response.text).group(1))
        assert shown == expected.replace(str(bad), "broken.xml")
        # a workload with a bad job is refused the same way
        response = client.post("/inputs/upload", data={"kind": "workload"},
                               files={"file": ("w.json", b'{"nb_res": 2, "jobs": [{"id": 1}], "profiles": {}}')})
        assert response.status_code == 400 and "w.json" in response.text
        assert files_under(tmp_path / "ws") == before
        # a good one is stored and offered on the run form
        good = (ROOT / "platforms" / "taurus_16.xml").read_bytes()
        response = client.post("/inputs/upload", data={"kind": "platform"}, files={"file": ("mine.xml", good)})
        assert response.status_code == 200 and 'id="stored"' in response.text
        stored = files_under(tmp_path / "ws" / "inputs")
        assert len(stored) == 1 and stored[0].read_bytes() == good
        assert f'value="workspace:{stored[0].name}"' in client.get("/new").text


def test_an_oversize_upload_is_refused(tmp_path):
    with TestClient(create_app(tmp_path / "ws", processes=False, max_upload_bytes=1000)) as client:
        before = files_under(tmp_path / "ws")
        response = client.post("/inputs/upload", data={"kind": "workload"}, files={"file": ("big.json", b" " * 5000)})
        assert response.status_code == 413 and "more than the 1000 bytes accepted" in response.text
        assert files_under(tmp_path / "ws") == before == [tmp_path / "ws" / "index.json"]


def test_no_form_posted_from_another_site_writes_or_runs_anything(tmp_path):
    good = (ROOT / "platforms" / "taurus_16.xml").read_bytes()
    evil = {"Origin": "http://evil.example"}
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        before = files_under(tmp_path / "ws")
        posts = {"/runs": {"data": ENERGY_BUD}, "/inputs/platform": {"data": {"hosts": "4", "node": "esc"}},
                 "/inputs/workload": {"data": {"hosts": "4", "seed": "3", "days": "0.5"}},
                 "/inputs/upload": {"data": {"kind": "platform"}, "files": {"file": ("mine.xml", good)}}}
        for url, kwargs in posts.items():
            response = client.post(url, headers=evil, follow_redirects=False, **kwargs)
            assert response.status_code == 403, url
            assert f"{url}: a form must be posted from this page" in html.unescape(response.text)
        assert files_under(tmp_path / "ws") == before
        # the same form from this page's own origin is taken
        response = client.post("/inputs/platform", data={"hosts": "4", "node": "esc"},
                               headers={"Origin": "http://testserver"})
        assert response.status_code == 200


def test_generated_inputs_use_the_cli_generators_and_messages(tmp_path):
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        response = client.post("/inputs/platform", data={"hosts": "0", "node": "esc"})
        assert response.status_code == 400
        shown = html.unescape(re.search(r'id="error-platform-hosts">([^<]*)<', response.text).group(1))
        assert shown == cli_error("platform", "--hosts", "0")
        assert client.post("/inputs/platform", data={"hosts": "4", "node": "esc"}).status_code == 200
        assert client.post("/inputs/workload", data={"hosts": "4", "seed": "3", "days": "0.5"}).status_code == 200
    (platform,) = (tmp_path / "ws" / "inputs").glob("platform-*.xml")
    (workload,) = (tmp_path / "ws" / "inputs").glob("workload-*.json")
    from wattsched.platforms.generate import esc_platform_xml
    from wattsched.workloads.synthetic import synthetic_week

    assert platform.read_text() == esc_platform_xml(4, prefix="node")
    assert json.loads(workload.read_text()) == json.loads(json.dumps(synthetic_week(4, seed=3, duration_s=43200.0)))


def test_nothing_outside_the_workspace_can_be_read_or_written(tmp_path, finished):
    workspace, ids, _ = finished
    secret = tmp_path / "secret.xml"
    secret.write_text("<platform>top secret</platform>")
    (workspace / "inputs" / "platform-link.xml").symlink_to(secret)
    before = files_under(workspace)
    with TestClient(create_app(workspace, processes=False)) as client:
        for url in (f"/runs/{ids[0]}/files/..%2F..%2F..%2Findex.json", f"/runs/{ids[0]}/files/..%2Frun.json",
                    "/runs/..%2F..%2Fsecret/files/jobs.csv", f"/runs/{ids[0]}%2F..%2F..%2Fsecret",
                    "/static/..%2F..%2Fapp.py", "/compare?run=../../secret&run=" + ids[0]):
            response = client.get(url)
            assert response.status_code in (400, 404), url
            assert "top secret" not in response.text and '"runs"' not in response.text
        for choice in ("workspace:../../secret.xml", f"workspace:{secret}", "workspace:platform-link.xml",
                       f"shipped:../{secret.name}", str(secret)):
            response = client.post("/runs", data={**EASY, "platform": choice})
            assert response.status_code == 400
            assert re.search(r'id="error-platform">[^<]*(outside the workspace|no input)', response.text), choice
        response = client.post("/inputs/upload", data={"kind": "platform"},
                               files={"file": ("../../../escape.xml", (ROOT / "platforms" / "taurus_16.xml").read_bytes())})
        assert response.status_code == 200
    (workspace / "inputs" / "platform-link.xml").unlink()
    stored = sorted(set(files_under(workspace)) - set(before))
    assert len(stored) == 1 and stored[0].parent == workspace / "inputs"  # the upload's name lost its path
    assert not (tmp_path / "escape.xml").exists()


# ---------------------------------------------------------------------------- uploads on the run form
def small_inputs(tmp_path: Path) -> tuple[bytes, bytes]:
    """A 4-host platform and a short synthetic workload for it, as a user would upload them."""
    from wattsched.platforms.generate import taurus_platform_xml
    from wattsched.workloads.synthetic import synthetic_week

    return (taurus_platform_xml(4).encode(),
            json.dumps(synthetic_week(4, seed=2, duration_s=7200.0, users=3)).encode())


def test_the_run_form_takes_uploads_checked_like_the_cli_and_stored_only_with_the_run(tmp_path):
    platform, workload = small_inputs(tmp_path)
    bad = tmp_path / "broken.xml"
    bad.write_text('<?xml version="1.0"?>\n<platform version="4.1"><zone id="z"')
    expected = cli_error("run", str(bad), str(ROOT / "workloads" / "demo_taurus16.json"))
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        page = client.get("/new").text
        assert re.search(r'<form id="run-form"[^>]*enctype="multipart/form-data"', page)
        assert 'name="platform_file" type="file"' in page and 'name="workload_file" type="file"' in page
        before = files_under(tmp_path / "ws")
        # a malformed platform: the CLI's line next to the platform field; the good workload is not kept either
        response = client.post("/runs", data=EASY, files={"platform_file": ("broken.xml", bad.read_bytes()),
                                                          "workload_file": ("mine.json", workload)})
        assert response.status_code == 400
        shown = html.unescape(re.search(r'id="error-platform">([^<]*)<', response.text).group(1))
        assert shown == expected.replace(str(bad), "broken.xml")
        assert 'id="error-workload"' not in response.text
        # good uploads with a bad option: the option's error, nothing stored
        response = client.post("/runs", data={**ENERGY_BUD, "opt.budget_fraction": "lots"},
                               files={"platform_file": ("mine.xml", platform), "workload_file": ("mine.json", workload)})
        assert response.status_code == 400 and 'id="error-budget_fraction"' in response.text
        # a workload whose job is malformed, named by the uploaded file's name (its path dropped)
        response = client.post("/runs", data=EASY, files={
            "workload_file": ("../../w.json", b'{"nb_res": 2, "jobs": [{"id": 1}], "profiles": {}}')})
        assert response.status_code == 400
        assert html.unescape(re.search(r'id="error-workload">([^<]*)<', response.text).group(1)).startswith("w.json: ")
        assert files_under(tmp_path / "ws") == before
        # both uploaded with the run: stored, used by the run (an empty file field keeps the select's choice)
        run_id = launch(client, {**EASY, "name": "uploaded"},
                        files={"platform_file": ("mine.xml", platform), "workload_file": ("mine.json", workload)})
        assert wait_done(client, run_id) == "done"
        stored = files_under(tmp_path / "ws" / "inputs")
        assert sorted(p.read_bytes() for p in stored) == sorted([platform, workload])
        spec = json.loads((tmp_path / "ws" / "runs" / run_id / "run.json").read_text())
        assert {spec["platform"], spec["workload"]} == {f"workspace:{p.name}" for p in stored}
        status = json.loads((tmp_path / "ws" / "runs" / run_id / "status.json").read_text())
        assert status["metrics"]["nb_jobs"] == len(json.loads(workload)["jobs"]) and status["metrics"]["nb_hosts"] == 4
        run_id = launch(client, {**EASY, "platform": f"workspace:{Path(spec['platform']).name.split(':')[-1]}",
                                 "workload": WORKLOAD}, files={"workload_file": ("", b"")})
        assert json.loads((tmp_path / "ws" / "runs" / run_id / "run.json").read_text())["workload"] == WORKLOAD
        assert wait_done(client, run_id) == "done"


def test_an_oversize_upload_on_the_run_form_is_refused_by_the_bound(tmp_path, monkeypatch):
    platform, _ = small_inputs(tmp_path)
    monkeypatch.setenv("WATTSCHED_LIMIT_UPLOAD_BYTES", str(len(platform) - 1))  # the bound of base/limits.py
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        before = files_under(tmp_path / "ws")
        response = client.post("/runs", data=EASY, files={"platform_file": ("mine.xml", platform)})
        assert response.status_code == 413
        shown = html.unescape(re.search(r'id="error-platform">([^<]*)<', response.text).group(1))
        assert shown == (f"mine.xml: more than the {len(platform) - 1} bytes accepted (raise with wattsched web "
                         "--max-upload-mb or WATTSCHED_LIMIT_UPLOAD_BYTES)")
        # a request whose declared size is beyond two uploads is refused before it is read
        huge = b" " * (2 * len(platform) + 70 * 1024)
        response = client.post("/runs", data=EASY, files={"platform_file": ("mine.xml", huge)})
        assert response.status_code == 413 and 'id="error-general"' in response.text
        assert files_under(tmp_path / "ws") == before
    monkeypatch.setenv("WATTSCHED_LIMIT_UPLOAD_BYTES", str(len(platform)))
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        response = client.post("/runs", data={**EASY, "scheduler": "nope"}, files={"platform_file": ("mine.xml", platform)})
        assert response.status_code == 400 and 'id="error-platform"' not in response.text  # accepted, not stored
        assert files_under(tmp_path / "ws") == before


# --------------------------------------------------------------------------------------- deletion
def test_a_finished_run_is_deleted_after_confirmation_and_stays_deleted_after_a_restart(finished, tmp_path):
    import shutil

    workspace = tmp_path / "copy"
    shutil.copytree(finished[0], workspace)
    budget_id, easy_id = finished[1]
    with TestClient(create_app(workspace, processes=False)) as client:
        page = client.get(f"/runs/{budget_id}").text
        assert re.search(rf'<form id="delete-form" action="/runs/{budget_id}/delete" method="post">', page)
        # the first POST asks for confirmation and deletes nothing
        response = client.post(f"/runs/{budget_id}/delete")
        assert response.status_code == 200 and 'id="confirm-question"' in response.text
        assert re.search(r'<input type="hidden" name="confirm" value="yes">', response.text)
        assert (workspace / "runs" / budget_id / "out_jobs.csv").is_file()
        # confirmed: the folder, its outputs and its index entry go; the other runs stay
        response = client.post(f"/runs/{budget_id}/delete", data={"confirm": "yes"}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/?deleted=")
        index = client.get(response.headers["location"]).text
        assert f"budget 60% ({budget_id})" in html.unescape(re.search(r'id="deleted">(.*?)</p>', index).group(1))
        assert f'id="row-{budget_id}"' not in index and f'id="row-{easy_id}"' in index
        assert client.get(f"/runs/{budget_id}").status_code == 404
        assert client.get(f"/runs/{budget_id}/files/jobs.csv").status_code == 404
        assert client.post(f"/runs/{budget_id}/delete", data={"confirm": "yes"}).status_code == 404
        assert client.get("/compare", params=[("run", budget_id), ("run", easy_id)]).status_code == 404
    assert sorted(p.name for p in (workspace / "runs").iterdir()) == sorted([easy_id, finished[2]])
    assert [r["id"] for r in json.loads((workspace / "index.json").read_text())["runs"]] == [easy_id, finished[2]]
    # a restart (the index rebuilt or not) does not bring it back
    for lose_index in (False, True):
        if lose_index:
            (workspace / "index.json").unlink()
        with TestClient(create_app(workspace, processes=False)) as client:
            index = client.get("/").text
            assert f'id="row-{budget_id}"' not in index and f'id="row-{easy_id}"' in index


def test_a_deletion_cut_short_leaves_a_consistent_workspace(tmp_path, monkeypatch):
    """The server stops between the steps of a deletion: after a restart the run is either whole and listed,
    or gone from the folders and the index."""
    import shutil

    from wattsched.web.workspace import Workspace

    space = Workspace(tmp_path)
    keep = space.new_run(name="keep", scheduler="fcfs", options={}, platform=PLATFORM, workload=WORKLOAD)
    gone = space.new_run(name="gone", scheduler="fcfs", options={}, platform=PLATFORM, workload=WORKLOAD)
    for spec in (keep, gone):
        space.set_status(spec.id, state="done")
    # stopped after the folder was renamed, before the index was rewritten and the folder removed
    monkeypatch.setattr(shutil, "rmtree", lambda *a, **k: None)
    real_write = __import__("wattsched.web.workspace", fromlist=["_write_json"])._write_json

    def stop(path, value):
        if path.name == "index.json":
            raise KeyboardInterrupt
        real_write(path, value)

    monkeypatch.setattr("wattsched.web.workspace._write_json", stop)
    with pytest.raises(KeyboardInterrupt):
        space.delete_run(gone.id)
    monkeypatch.undo()
    assert any(p.name.startswith(".deleted-") for p in (tmp_path / "runs").iterdir())
    assert gone.id in (tmp_path / "index.json").read_text()  # the index still names it
    with TestClient(create_app(tmp_path, processes=False)) as client:
        index = client.get("/").text
        assert f'id="row-{gone.id}"' not in index and f'id="row-{keep.id}"' in index
        assert client.get(f"/runs/{gone.id}").status_code == 404
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [keep.id]  # the leftover removed at the restart
    (tmp_path / "index.json").unlink()
    assert [r["id"] for r in Workspace(tmp_path).runs()] == [keep.id]


def test_a_running_run_a_foreign_page_and_paths_outside_cannot_delete(tmp_path):
    from wattsched.web.workspace import Workspace

    space = Workspace(tmp_path / "ws")
    running = space.new_run(name="live", scheduler="fcfs", options={}, platform=PLATFORM, workload=WORKLOAD)
    done = space.new_run(name="done", scheduler="fcfs", options={}, platform=PLATFORM, workload=WORKLOAD)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "run.json").write_text(json.dumps({**done.as_dict(), "id": "20260101-000000-abcdef"}))
    (secret / "status.json").write_text('{"state": "done"}')
    (tmp_path / "ws" / "runs" / "20260101-000000-abcdef").symlink_to(secret)  # a run folder leading outside
    (tmp_path / "precious.txt").write_text("keep me")
    app = create_app(tmp_path / "ws", processes=False)  # marks `running` interrupted: set it running again
    space.set_status(running.id, state="running", sim_time_s=10.0, jobs_done=1, jobs=210)
    space.set_status(done.id, state="done")
    (tmp_path / "ws" / "runs" / done.id / "out_jobs.csv").symlink_to(tmp_path / "precious.txt")
    before = files_under(tmp_path)
    with TestClient(app) as client:
        assert 'id="delete-form"' not in client.get(f"/runs/{running.id}").text
        response = client.post(f"/runs/{running.id}/delete", data={"confirm": "yes"})
        assert response.status_code == 409
        assert html.unescape(re.search(r'id="error">([^<]*)<', response.text).group(1)) == \
            f"run {running.id} (live) is running: it can be deleted once it has ended"
        response = client.post(f"/runs/{done.id}/delete", data={"confirm": "yes"},
                               headers={"Origin": "http://evil.example"})
        assert response.status_code == 403
        for url in ("/runs/..%2F..%2Fsecret/delete", "/runs/20260101-000000-abcdef/delete",
                    f"/runs/{done.id}%2F..%2F..%2F..%2Fsecret/delete", "/runs/20260101-000000-abcdef%2F../delete"):
            assert client.post(url, data={"confirm": "yes"}).status_code == 404, url
        assert files_under(tmp_path) == before
        # a link inside a run's folder is removed, not what it points to; from this page's own origin
        response = client.post(f"/runs/{done.id}/delete", data={"confirm": "yes"}, follow_redirects=False,
                               headers={"Origin": "http://testserver"})
        assert response.status_code == 303
    assert (tmp_path / "precious.txt").read_text() == "keep me" and (secret / "run.json").is_file()
    assert not (tmp_path / "ws" / "runs" / done.id).exists()


def test_an_unexpected_error_is_one_line_in_the_log_and_on_the_page(tmp_path, caplog):
    app = create_app(tmp_path, processes=False)

    def broken():
        raise RuntimeError("disk on fire\nsecond line")

    app.state.workspace.runs = broken
    with caplog.at_level(logging.ERROR), TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/")
    assert response.status_code == 500 and "Traceback" not in response.text and "disk on fire" not in response.text
    records = [r for r in caplog.records if r.name.startswith("wattsched.web")]
    assert [r.getMessage() for r in records] == ["GET /: RuntimeError: disk on fire"]
    assert all(r.exc_info is None for r in caplog.records)


def test_the_command_serves_the_page(tmp_path):
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "wattsched", "web", "--port", str(port), "--workspace",
                               str(tmp_path / "ws")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/new", timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
                time.sleep(0.2)
        assert page.status_code == 200 and 'id="run-form"' in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/static/htmx.min.js").text.startswith("/* htmx.org 1.9.12")
        assert httpx.get(f"http://127.0.0.1:{port}/assets/plotly.min.js").status_code == 200
        # another site's name for this address (DNS rebinding) is not answered
        assert httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": "evil.example"}).status_code == 400
        # a second server on the same port: one line, exit status 2, no workspace made
        second = subprocess.run([sys.executable, "-m", "wattsched", "web", "--port", str(port), "--workspace",
                                 str(tmp_path / "other")], capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and not (tmp_path / "other").exists()
        assert second.stderr == f"wattsched: error: --host 127.0.0.1 --port {port}: cannot listen there " \
                                "(Address already in use)\n"
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert (tmp_path / "ws" / "runs").is_dir()


def test_a_future_cancelled_at_shutdown_keeps_the_end_its_run_recorded(tmp_path):
    """The cluster closing cancels the futures whose result it had not sent yet: a run that recorded its end
    (failed with the CLI's error, or done) keeps it; a run that had not (a worker died under it) fails with
    one line."""
    from wattsched.web.runs import RunManager
    from wattsched.web.workspace import Workspace

    class Cancelled:
        status = "cancelled"

    workspace = Workspace(tmp_path / "ws")
    manager = RunManager(workspace, processes=False)
    ended, running = (workspace.new_run(name=n, scheduler="easy-backfill", options={}, platform="p.xml",
                                        workload="w.json").id for n in ("ended", "running"))
    workspace.set_status(ended, state="failed", error="option 'budget_fraction': too small")
    workspace.set_status(running, state="running")
    for run_id in (ended, running):
        manager._finished(run_id, Cancelled())
    assert workspace.status(ended)["error"] == "option 'budget_fraction': too small"
    assert workspace.status(running)["state"] == "failed" and workspace.status(running)["error"] == "task cancelled"


def test_the_page_generates_upas_processors_as_the_cli_does(tmp_path):
    """The upas preset refuses Taurus nodes and says to generate UPAS processors: the page offers them too."""
    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        assert 'value="upas"' in client.get("/inputs").text
        assert client.post("/inputs/platform", data={"hosts": "4", "node": "upas"}).status_code == 200
        response = client.post("/inputs/platform", data={"hosts": "4", "node": "eamc"})
        assert response.status_code == 400 and "invalid choice: 'eamc'" in html.unescape(response.text)
    (platform,) = (tmp_path / "ws" / "inputs").glob("platform-*.xml")
    from wattsched.platforms.generate import upas_platform_xml

    assert platform.read_text() == upas_platform_xml(4, prefix="cpu")


@pytest.mark.parametrize("host, answered", [
    ("127.0.0.1", ["127.0.0.1", "localhost", "[::1]"]),
    ("localhost", ["127.0.0.1", "localhost", "[::1]"]),
    ("::1", ["127.0.0.1", "localhost", "[::1]"]),
    ("127.0.0.2", ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"]),  # (any Host header was answered)
    ("::ffff:127.0.0.1", ["127.0.0.1", "localhost", "[::1]", "[::ffff:7f00:1]"]),
    ("0.0.0.0", None), ("::", None), ("192.168.1.5", None), ("myhost.example", None),
])
def test_the_page_on_a_loopback_address_answers_loopback_hosts_only(host, answered):
    """On any loopback address the page answers only requests naming this machine (against DNS rebinding: a page of
    another site resolving its name to 127.0.0.2); on another address it is open to other machines, by any name."""
    from wattsched.cli.web import loopback_hosts

    assert loopback_hosts(host) == answered
