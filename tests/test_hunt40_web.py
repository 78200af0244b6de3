"""Hunt 40: bad inputs of the local web page (``wattsched web``, :mod:`wattsched.web`) through its real routes.

* Values a refusal echoes (an unknown scheduler, an input choice, an upload's kind, a platform's node kind) were
  shown whole and raw: a field of a megabyte made a message of a megabyte, and a bidirectional override (U+202E)
  or a newline in it made the message read other than it was. Cut and printable, as the other fields' are.
* A multipart body without its closing boundary was read as a whole form: the part it ended in was dropped without
  a word (an option given last, ``opt.budget_fraction``, left out of the run launched; a file cut short: "choose a
  file"), and a body of parts ended by delimiters but no closing one was stored.
* A field the page's forms do not have (``nmae=...``) was dropped without a word: refused, naming it.
* The workspace's ``runs/`` folder removed or replaced by a file behind the server's back: a launch was a 500
  (``NotADirectoryError``), the list of runs too when the whole workspace was gone; an upload sent with that
  launch stayed in ``inputs/``; a run whose files could not all be written left its folder; a run whose Dask
  cluster could not start stayed ``queued`` for ever; an upload into an unwritable ``inputs/`` showed the
  server's absolute path.
* ``/inputs?stored=ANY`` and ``/?deleted=ANY`` said "stored ANY" or "deleted run ANY" of any text a link put there.
* Blank (white space only) ``days``, ``load`` and ``users`` of the workload generator were refused as "got ''"
  where empty ones take their default.
* A cross-site POST from a browser that sends no ``Origin`` (its ``Referer`` or ``Sec-Fetch-Site`` saying
  another site) was taken.
* The warnings of an upload, a generated workload or a run (a host counted as 0 W, a load the workload cannot
  reach, shares of users without a job), which the CLI prints, were lost (in a worker process, or a log nobody
  reads): shown on the page.
* ``create_app`` on a folder name holding a NUL raised ``ValueError``.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

from tests.test_web import EASY, PLATFORM, ROOT, WORKLOAD, TestClient, create_app, wait_done  # noqa: E402

MULTIPART = {"content-type": "multipart/form-data; boundary=xyz"}
#: A platform whose hosts have no ``wattage_per_state``: loaded with a warning per host ("counted as 0 W").
NO_WATTAGE = b"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <host id="master_host" speed="100Mf"/>
  <host id="h1" speed="100Mf"/>
</zone>
</platform>
"""


def files_under(folder: Path) -> list[Path]:
    """The inputs and runs of a workspace (its index aside)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and ".dask-scratch" not in p.parts
                  and p != folder / "index.json")


def errors_on(page: str) -> list[str]:
    """The error sentences a page shows (general ones and those beside a field)."""
    return [html.unescape(m) for m in re.findall(r'<p class="error[^"]*"[^>]*>([^<]*)</p>', page)]


def warnings_on(page: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r'<p class="warning"[^>]*>([^<]*)</p>', page)]


def part(name: str, value: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--xyz\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + value + b"\r\n"


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as test_client:
        yield test_client


# ----------------------------------------------------------------------------- 1. echoed values
HUGE = "1" * 1_000_000


@pytest.mark.parametrize("value", [HUGE, "\u202eabc", "a\nb", "\x1b[31m"])
def test_values_a_refusal_echoes_are_cut_and_printable(client, tmp_path, value):
    posts = [("/runs", {**EASY, "scheduler": value}), ("/runs", {**EASY, "platform": value}),
             ("/runs", {**EASY, "workload": f"workspace:../{value}"}),
             ("/inputs/platform", {"hosts": "2", "node": value})]
    responses = [client.post(url, data=data) for url, data in posts]
    responses.append(client.post("/inputs/upload", data={"kind": value}, files={"file": ("p.xml", b"<x/>")}))
    responses.append(client.get("/options", params={"scheduler": value[:20000]}))
    for response in responses:
        assert response.status_code == 400
        (message,) = set(errors_on(response.text))
        assert message.isprintable() and len(message) < 400, message[:200]
    assert files_under(tmp_path / "ws") == []


# ------------------------------------------------------------------------ 2. body cut short
def test_a_multipart_body_without_its_closing_boundary_is_refused(client, tmp_path):
    workspace = tmp_path / "ws"
    given = {**EASY, "scheduler": "energy-bud", "opt.window_end_s": "20000"}
    body = b"".join(part(k, v.encode()) for k, v in given.items())
    # the last option cut short: the run was launched without its budget
    response = client.post("/runs", content=body + part("opt.budget_fraction", b"0.6")[:-2], headers=MULTIPART,
                           follow_redirects=False)
    assert response.status_code == 400
    assert errors_on(response.text)[0] == ("the form could not be read: its body ends before the form's closing "
                                           "boundary (cut short, in field 'opt.budget_fraction'; post it again "
                                           "from the page)")
    assert list((workspace / "runs").iterdir()) == []
    # every part ended by a delimiter, but no closing one: nothing stored
    platform = (ROOT / "platforms" / "taurus_16.xml").read_bytes()
    body = part("kind", b"platform") + part("file", platform, "p.xml") + b"--xyz\r\n"
    response = client.post("/inputs/upload", content=body, headers=MULTIPART, follow_redirects=False)
    assert response.status_code == 400 and "closing boundary" in errors_on(response.text)[0]
    assert list((workspace / "inputs").iterdir()) == []
    # the whole body: taken as before
    body = part("kind", b"platform") + part("file", platform, "p.xml") + b"--xyz--\r\n"
    response = client.post("/inputs/upload", content=body, headers=MULTIPART, follow_redirects=False)
    assert response.status_code == 303, errors_on(response.text)


# ------------------------------------------------------------------------ 3. unknown fields
@pytest.mark.parametrize("url, data", [
    ("/runs", {**EASY, "nmae": "my run"}),
    ("/inputs/platform", {"hosts": "2", "node": "taurus", "host": "4"}),
    ("/inputs/workload", {"hosts": "4", "seed": "1", "day": "2"}),
    ("/inputs/upload", {"kind": "platform", "knid": "workload"}),
])
def test_a_field_the_form_does_not_have_is_refused(client, tmp_path, url, data):
    files = {"file": ("p.xml", (ROOT / "platforms" / "taurus_16.xml").read_bytes())} if "upload" in url else None
    response = client.post(url, data=data, files=files, follow_redirects=False)
    assert response.status_code == 400
    extra = next(k for k in data if k not in ("name", "scheduler", "platform", "workload", "hosts", "node", "seed",
                                              "kind"))
    assert any(f"field '{extra}' is not one of this form's (" in m for m in errors_on(response.text)), \
        errors_on(response.text)
    assert files_under(tmp_path / "ws") == []


def test_the_page_s_own_fields_are_taken(client):
    response = client.post("/runs", data={**EASY, "opt.placement": "best-fit"}, files={
        "platform_file": ("p.xml", (ROOT / "platforms" / "taurus_16.xml").read_bytes())}, follow_redirects=False)
    assert response.status_code == 303, errors_on(response.text)
    run_id = response.headers["location"].rsplit("/", 1)[1]
    assert wait_done(client, run_id) == "done"
    response = client.post(f"/runs/{run_id}/delete", data={"confirm": "yes", "really": "yes"})
    assert response.status_code == 400 and "field 'really'" in errors_on(response.text)[0]
    response = client.post(f"/runs/{run_id}/delete", data={"confirm": "yes"}, follow_redirects=False)
    assert response.status_code == 303
    for url, data in [("/inputs/platform", {"hosts": "2", "node": "esc", "flat": "on"}),
                      ("/inputs/workload", {"hosts": "4", "seed": "1", "days": "1", "load": "0.5", "users": "3"})]:
        assert client.post(url, data=data, follow_redirects=False).status_code == 303


# ---------------------------------------------------------------------- 4. the workspace gone
def test_a_launch_into_a_runs_folder_gone_or_replaced_is_refused_with_a_sentence(client, tmp_path):
    workspace = tmp_path / "ws"
    shutil.rmtree(workspace / "runs")
    (workspace / "runs").write_text("not a folder\n")
    upload = {"workload_file": ("w.json", (ROOT / "workloads" / "demo_taurus16.json").read_bytes())}
    response = client.post("/runs", data=EASY, files=upload, follow_redirects=False)
    assert response.status_code == 400
    (message,) = errors_on(response.text)
    assert message.startswith("cannot create the run's folder workspace/runs/") and "Not a directory" in message
    assert str(tmp_path) not in response.text
    assert list((workspace / "inputs").iterdir()) == []  # the upload is stored only with the run it launches
    assert client.get("/").status_code == 200
    # the whole workspace removed: the list is empty, a launch is refused, nothing is made again
    shutil.rmtree(workspace)
    assert client.get("/").status_code == 200
    response = client.post("/runs", data=EASY, follow_redirects=False)
    assert response.status_code == 400 and "No such file or directory" in errors_on(response.text)[0]
    assert not (workspace / "runs").exists()


def test_a_run_whose_files_cannot_all_be_written_leaves_nothing(client, tmp_path, monkeypatch):
    import wattsched.web.workspace as workspace_module
    from wattsched.base.errors import OutputError

    write = workspace_module._write_json

    def failing(path, value):
        if path.name == "run.json":
            raise OutputError(f"cannot write {path}: No space left on device")
        write(path, value)

    monkeypatch.setattr(workspace_module, "_write_json", failing)
    response = client.post("/runs", data=EASY, follow_redirects=False)
    assert response.status_code == 400
    assert "No space left on device" in errors_on(response.text)[0] and str(tmp_path) not in response.text
    assert list((tmp_path / "ws" / "runs").iterdir()) == []


def test_a_run_the_engine_cannot_start_fails_saying_why(tmp_path, monkeypatch):
    app = create_app(tmp_path / "ws", processes=False)

    def no_cluster(run_id):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(app.state.manager, "submit", no_cluster)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/runs", data=EASY, follow_redirects=False)
        assert response.status_code == 303
        page = client.get(response.headers["location"])
        assert re.search(r'id="state">(\w+)<', page.text).group(1) == "failed"  # not queued for ever
        assert errors_on(page.text) == ["the run could not be started: OSError: [Errno 28] No space left on device"]


def test_an_upload_into_an_inputs_folder_that_cannot_be_written_names_it_in_the_workspace(client, tmp_path):
    shutil.rmtree(tmp_path / "ws" / "inputs")
    (tmp_path / "ws" / "inputs").write_text("not a folder\n")
    response = client.post("/inputs/upload", data={"kind": "platform"},
                           files={"file": ("p.xml", (ROOT / "platforms" / "taurus_16.xml").read_bytes())})
    assert response.status_code == 400 and str(tmp_path) not in response.text
    assert errors_on(response.text)[0].startswith("cannot write workspace/inputs/platform-")


def test_a_workspace_name_with_a_nul_is_refused_in_one_line(tmp_path):
    from wattsched.web.workspace import WorkspaceError

    with pytest.raises(WorkspaceError, match="NUL"):
        create_app(str(tmp_path / "a\x00b"), processes=False)


# ------------------------------------------------------------------- 5. messages of a link
def test_the_page_says_stored_or_deleted_only_of_what_it_did(client):
    for url, element in [("/inputs?stored=you+were+hacked", "stored"), ("/inputs?stored=workspace:platform-x.xml",
                                                                         "stored"),
                         ("/?deleted=ALL+YOUR+RUNS", "deleted"), ("/?deleted=x+(20260101-000000-abcdef)+more",
                                                                  "deleted")]:
        response = client.get(url)
        assert response.status_code == 200 and f'id="{element}"' not in response.text, url
    response = client.post("/inputs/platform", data={"hosts": "2", "node": "taurus"})
    assert re.search(r'id="stored">stored <code>workspace:platform-[0-9a-f]+-taurus_2.xml<', response.text)
    run_id = client.post("/runs", data={**EASY, "name": "kept (a name)"}, follow_redirects=False).headers[
        "location"].rsplit("/", 1)[1]
    assert wait_done(client, run_id) == "done"
    response = client.post(f"/runs/{run_id}/delete", data={"confirm": "yes"})
    assert html.unescape(re.search(r'id="deleted">(.*?)</p>', response.text).group(1)) == \
        f"deleted run <code>kept (a name) ({run_id})</code>"


# ------------------------------------------------------------------- 6. blank generator fields
@pytest.mark.parametrize("field", ["days", "load", "users"])
def test_a_blank_generator_field_takes_its_default_as_an_empty_one(client, field):
    for blank in ("", "  ", "\t"):
        data = {"hosts": "4", "seed": "1", "days": "1", "load": "0.5", "users": "3", field: blank}
        response = client.post("/inputs/workload", data=data, follow_redirects=False)
        assert response.status_code == 303, (blank, errors_on(response.text))


# --------------------------------------------------------------------- 7. cross-site posts
@pytest.mark.parametrize("headers", [{"referer": "http://evil.example/page"}, {"sec-fetch-site": "cross-site"},
                                     {"sec-fetch-site": "same-site"}])
def test_a_cross_site_post_without_an_origin_is_refused(client, tmp_path, headers):
    for url, data in [("/inputs/platform", {"hosts": "2", "node": "taurus"}), ("/runs", EASY)]:
        response = client.post(url, data=data, headers=headers, follow_redirects=False)
        assert response.status_code == 403 and "not from another site" in errors_on(response.text)[0]
    assert files_under(tmp_path / "ws") == []
    # this page's own, and a client that says nothing (curl)
    for same in ({"referer": "http://testserver/inputs", "sec-fetch-site": "same-origin"}, {}):
        response = client.post("/inputs/platform", data={"hosts": "2", "node": "taurus"}, headers=same,
                               follow_redirects=False)
        assert response.status_code == 303


# --------------------------------------------------------------------------------- 8. warnings
def test_the_warnings_of_an_input_s_making_are_shown_beside_it(client):
    # the load the workload cannot reach over so short a period (wattsched synth says it on its terminal)
    response = client.post("/inputs/workload", data={"hosts": "4", "seed": "0", "days": "0.01", "load": "0.5",
                                                      "users": "3"})
    assert response.status_code == 200 and 'id="stored"' in response.text
    (warning,) = warnings_on(response.text)
    assert warning.startswith("warning: target_load (--load) 0.5 over 0.01 days") and "/" not in warning
    response = client.post("/inputs/upload", data={"kind": "platform"}, files={"file": ("nowatt.xml", NO_WATTAGE)})
    assert warnings_on(response.text) == ["warning: nowatt.xml: host 'h1' has no wattage_per_state property: "
                                          "counted as 0 W"]
    # no warning: the redirect as before
    response = client.post("/inputs/upload", data={"kind": "platform"}, files={
        "file": ("p.xml", (ROOT / "platforms" / "taurus_16.xml").read_bytes())}, follow_redirects=False)
    assert response.status_code == 303


def test_the_warnings_of_a_run_are_shown_on_its_page(client, tmp_path):
    response = client.post("/runs", data={"scheduler": "fairshare", "platform": PLATFORM, "workload": WORKLOAD,
                                          "opt.shares": '{"nobody": 2}'}, follow_redirects=False)
    run_id = response.headers["location"].rsplit("/", 1)[1]
    assert wait_done(client, run_id) == "done"
    (warning,) = warnings_on(client.get(f"/runs/{run_id}").text)
    assert warning == (f"warning: option 'shares': 'nobody' has no job in {WORKLOAD} (its users: '1', '2', '3', "
                       "'4', '5' and 3 more)")
    # a status.json whose warnings the page did not write: a failed run saying why
    status = tmp_path / "ws" / "runs" / run_id / "status.json"
    status.write_text(json.dumps({**json.loads(status.read_text()), "warnings": "not a list"}))
    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and "'warnings' is not a list of texts" in errors_on(page.text)[0]


def test_warnings_are_kept_for_the_page_one_line_each_and_bounded():
    import logging

    from wattsched.web.workspace import MAX_WARNINGS, WARNING_CHARS, logged_warnings

    log = logging.getLogger("wattsched.test")
    with logged_warnings({"/srv/secret/w.json": "shipped:w.json"}) as kept:
        log.warning("a\nb in /srv/secret/w.json \u202e")
        log.info("not a warning")
        log.warning("%s", "x" * 5000)
        for _ in range(3 * MAX_WARNINGS):
            log.warning("many")
    assert kept[0] == "a b in shipped:w.json \\u202e"
    assert len(kept[1]) == WARNING_CHARS and len(kept) == MAX_WARNINGS
