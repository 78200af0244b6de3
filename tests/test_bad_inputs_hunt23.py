"""Bad inputs hunt 23: web forms in bodies of another type, a NUL in an input choice, a checkbox's garbage;
``run --window`` and ``simulate(window=...)`` starting before 0; a missing output named nowhere; ``regress`` on
files with a UTF-8 BOM.

* before: the web page read a POST body of any type but a form (``application/json``, ``text/plain``, none) as an
  empty form: ``POST /runs`` with a JSON run said "platform: no input ''" and "workload: no input ''", naming
  fields the client had sent. Now it says the body is of type 'application/json' and which types a form takes.
* before: ``POST /runs`` with the platform choice ``workspace:a<NUL>b`` was a 500 (``ValueError: embedded null
  byte`` from the path's ``resolve()``). Now ``platform: no input 'workspace:a\\x00b'`` (400).
* before: ``POST /inputs/platform`` with ``flat=maybe`` (a checkbox: ``on`` or nothing) generated and stored a
  clustered platform without a word. Now refused (400), nothing stored.
* before: ``wattsched run P W --window=-5,10`` simulated, wrote the five outputs, then stopped on
  ``metrics: window start: -5.0 must be non-negative`` (no option named, outputs left with an error exit);
  ``api.simulate(..., window=(-5, 10))`` simulated and returned a result whose ``metrics`` raised that. Now both are
  refused before the simulation, as ``metrics --window`` and ``plot --window`` are.
* before: ``Result.machine_states`` (``consumed_energy``, ``pstate_changes``) of a result whose file was removed
  said ``<machine_states output>: missing output file``, naming no file. Now it names the file's path.
* before: ``regress`` on outputs saved with a UTF-8 BOM (a spreadsheet's "CSV UTF-8") said ``out_jobs.csv: column
  'job_id': missing from the header`` (the column is there) or reported a header difference ``\\ufefftime``, while
  ``metrics``, ``plot``, ``paraver`` and ``node-stats`` read the same files. Now ``regress`` reads them too.

Noticed and left: the run form ignores fields that are neither the page's nor ``opt.*`` (a browser posts only the
page's); ``metrics --window`` past a run's end extrapolates the last row's power (documented in
:mod:`wattsched.analysis.metrics`); ``Result.write_paraver`` makes missing parent folders (as ``paraver -d`` does).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, usage_error
from wattsched import api
from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main

SMALL = REFERENCE / "shutdown-boot"  # 4 hosts, 5 jobs: simulated in well under a second


# ----------------------------------------------------------------------------------------------- 1. web page
@pytest.fixture
def client(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web import TestClient, create_app

    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as test_client:
        yield test_client


def _errors(page: str) -> list[str]:
    import html
    import re

    return [html.unescape(m) for m in re.findall(r'<p class="error[^"]*"[^>]*>([^<]*)</p>', page)]


def _stored(tmp_path: Path) -> list[Path]:
    """The workspace's inputs and runs (its index is written whenever a page lists the runs)."""
    return sorted(p for folder in ("inputs", "runs") for p in (tmp_path / "ws" / folder).rglob("*"))


EASY = {"scheduler": "easy-backfill", "platform": "shipped:taurus_16.xml", "workload": "shipped:demo_taurus16.json",
        "name": "easy"}


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
@pytest.mark.parametrize("url", ["/runs", "/inputs/upload", "/inputs/platform", "/inputs/workload"])
@pytest.mark.parametrize("content_type, shown", [("application/json", "of type 'application/json'"),
                                                 ("text/plain; charset=utf-8", "of type 'text/plain'"),
                                                 (None, "of no type")])
def test_a_body_that_is_not_a_form_is_refused_saying_its_type(client, tmp_path, url, content_type, shown):
    """A JSON run was read as an empty form: "platform: no input ''" for a platform the body named."""
    import json

    headers = {"content-type": content_type} if content_type else {}
    response = client.post(url, content=json.dumps({**EASY, "kind": "platform", "hosts": 4}), headers=headers)
    assert response.status_code == 400
    errors = _errors(response.text)
    assert any(f"its body is {shown} (post it from the page" in e and "multipart/form-data" in e for e in errors), errors
    assert _stored(tmp_path) == []
    # a POST without a body (no Content-Type) is still an empty form: the page says what the form lacks
    assert "kind: must be platform or workload" in " ".join(_errors(client.post("/inputs/upload").text))


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
@pytest.mark.parametrize("kind", ["platform", "workload"])
def test_a_nul_in_a_workspace_choice_is_no_input_not_a_500(client, tmp_path, kind):
    response = client.post("/runs", data={**EASY, kind: "workspace:a\x00b.xml"})
    assert response.status_code == 400, response.text[:300]
    assert any(e.startswith(f"{kind}: no input 'workspace:a\\x00b.xml'") for e in _errors(response.text)), \
        _errors(response.text)
    assert _stored(tmp_path) == []


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_the_flat_checkbox_takes_on_or_nothing(client, tmp_path):
    response = client.post("/inputs/platform", data={"hosts": "4", "flat": "maybe"})
    assert response.status_code == 400
    assert "flat: a checkbox (on, or left out), got 'maybe'" in _errors(response.text)
    assert _stored(tmp_path) == []
    assert client.post("/inputs/platform", data={"hosts": "4", "flat": "on"}, follow_redirects=False).status_code == 303


# ---------------------------------------------------------------------------- 2. windows that start before 0
def test_run_refuses_a_window_before_0_before_simulating(capsys, tmp_path):
    """It wrote the five outputs, then said ``metrics: window start: -5.0 must be non-negative``."""
    out = tmp_path / "r"
    usage_error(capsys, ["run", str(SMALL / "platform.xml"), str(SMALL / "workload.json"), "-e", str(out / "out"),
                         "-q", "--window=-5,10"], "--window", "window start -5 is before 0")
    assert not out.exists()


def test_simulate_refuses_a_window_before_0_before_simulating(monkeypatch):
    """It simulated, and the result's ``metrics`` raised."""
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before the window was checked")

    monkeypatch.setattr(api, "run_simulation", never)
    with pytest.raises(OptionError, match=r"^window start -5 is before 0"):
        api.simulate(str(SMALL / "platform.xml"), str(SMALL / "workload.json"), window=(-5, 10))


# ------------------------------------------------------------------------------ 3. results whose file went
@pytest.mark.parametrize("kind", ["machine_states", "consumed_energy", "pstate_changes"])
def test_a_removed_output_of_a_result_is_named_by_its_path(tmp_path, kind):
    """It said ``<machine_states output>: missing output file``."""
    result = api.simulate(str(SMALL / "platform.xml"), str(SMALL / "workload.json"), out=tmp_path / "r" / "out")
    path = tmp_path / "r" / f"out_{kind}.csv"
    path.unlink()
    with pytest.raises(InputError, match="missing output file") as raised:
        getattr(result, kind)
    assert str(raised.value).startswith(f"{path}: ")


# ------------------------------------------------------------------------------------ 4. regress and a BOM
def _with_bom(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    for path in (REFERENCE / "dvfs-energy").glob("out_*.csv"):
        (run / path.name).write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    return run


def test_regress_reads_outputs_with_a_utf8_bom_as_the_other_commands_do(capsys, tmp_path):
    """It said ``column 'job_id': missing from the header``, or a header difference ``\\ufefftime``."""
    run = _with_bom(tmp_path)
    assert main(["metrics", str(run)]) == 0  # pandas reads the BOM as the encoding's
    capsys.readouterr()
    assert main(["regress", str(run), str(REFERENCE / "dvfs-energy")]) == 0
    assert main(["regress", str(REFERENCE / "dvfs-energy"), str(run)]) == 0
    assert capsys.readouterr().out.splitlines() == ["no differences", "no differences"]


def test_regress_still_finds_a_difference_behind_a_bom(capsys, tmp_path):
    run = _with_bom(tmp_path)
    jobs = run / "out_jobs.csv"
    jobs.write_bytes(jobs.read_bytes().replace(b"COMPLETED_SUCCESSFULLY", b"COMPLETED_KILLED", 1))
    assert main(["regress", str(run), str(REFERENCE / "dvfs-energy")]) == 1
    assert "COMPLETED_KILLED" in capsys.readouterr().out
    shutil.rmtree(run)
