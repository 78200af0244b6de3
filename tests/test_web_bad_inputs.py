"""Bad inputs on the local web page (``wattsched web``, :mod:`wattsched.web`): every one gets a sentence on
the page naming its field (HTTP 4xx), never a 500, a hang, a file outside the workspace or a half-made run.

Paths of the server in the EAMC ``ear_model`` option; file names too long for the file system; JSON
nested deeply or holding lone surrogates in option fields; seeds and user counts of the workload generator;
options the chosen scheduler does not take; control and bidirectional characters in run names; options
refused when the scheduler binds to the platform (checked before the run is created); a run deleted while
it is viewed or downloaded; forms Starlette's parsers refuse; Dask's scratch space.
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

# the test client, the app and the inputs of the web page's own tests (imported with their guard)
from tests.test_web import EASY, PLATFORM, ROOT, WORKLOAD, TestClient, create_app  # noqa: E402


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and ".dask-scratch" not in p.parts)


def errors_on(page: str) -> list[str]:
    """The error sentences a page shows."""
    return [html.unescape(m) for m in re.findall(r'<p class="error[^"]*"[^>]*>([^<]*)</p>', page)]


def field_error(page: str, field: str) -> str:
    match = re.search(rf'id="error-{re.escape(field)}">([^<]*)<', page)
    assert match is not None, (field, errors_on(page))
    return html.unescape(match.group(1))


def cli_error(*argv: str) -> str:
    """The one-line message ``wattsched ARGV`` prints, without the ``wattsched[ COMMAND]: error:`` prefix."""
    import contextlib
    import io

    from wattsched.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as stop:
            status = stop.code
    assert status == 2, err.getvalue()
    line = err.getvalue().strip().splitlines()[-1]
    return re.sub(r"^wattsched( [a-z-]+)?: error: ", "", line).split(" (see '")[0]


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(tmp_path / "ws", processes=False), raise_server_exceptions=False) as test_client:
        yield test_client


def no_run_made(workspace: Path) -> None:
    assert list((workspace / "runs").iterdir()) == []


# ---------------------------------------------------------------------------------- 1. ear_model paths
@pytest.mark.parametrize("value", ["/etc", "../../../../etc", "/proc", str(ROOT / "energy_models" / "data" / "eamc"),
                                   "workspace:../../etc", "workspace:/etc", "shipped:../eamc", "C:\\Windows",
                                   "workspace:nothere", "~/.ssh"])
def test_ear_model_takes_no_path_of_the_server(client, tmp_path, monkeypatch, value):
    import wattsched.energy_models.ear as ear

    touched = []
    monkeypatch.setattr(ear, "load_ear_model", lambda *a, **k: touched.append(a) or pytest.fail("model loaded"))
    response = client.post("/runs", data={"scheduler": "eamc-base", "platform": PLATFORM, "workload": WORKLOAD,
                                          "opt.ear_model": value})
    assert response.status_code == 400
    message = field_error(response.text, "ear_model")
    assert message.startswith("option 'ear_model': ") and "not a model this page offers" in message
    assert "shipped:eamc" in message and not touched
    no_run_made(tmp_path / "ws")


def test_ear_model_takes_a_shipped_model_or_a_folder_of_the_inputs(client, tmp_path):
    workspace = tmp_path / "ws"
    base = {"scheduler": "eamc-base", "platform": PLATFORM, "workload": WORKLOAD}
    for choice in ("shipped:eamc", "eamc"):
        response = client.post("/runs", data={**base, "opt.ear_model": choice}, follow_redirects=False)
        assert response.status_code == 303, errors_on(response.text)
        run_id = response.headers["location"].rsplit("/", 1)[1]
        assert json.loads((workspace / "runs" / run_id / "run.json").read_text())["options"] == {"ear_model": choice}
    # a folder of the workspace's inputs is taken; a link there to a folder outside is not
    shutil.copytree(ROOT / "energy_models" / "data" / "eamc", workspace / "inputs" / "mymodel")
    (workspace / "inputs" / "outside").symlink_to(ROOT / "energy_models" / "data" / "eamc")
    response = client.post("/runs", data={**base, "opt.ear_model": "workspace:mymodel"}, follow_redirects=False)
    assert response.status_code == 303, errors_on(response.text)
    response = client.post("/runs", data={**base, "opt.ear_model": "workspace:outside"})
    assert response.status_code == 400 and "not a model this page offers" in field_error(response.text, "ear_model")
    # a malformed model of the inputs is refused with its file, not with the server's path
    (workspace / "inputs" / "mymodel" / "modules").write_text("garbage\n")
    response = client.post("/runs", data={**base, "opt.ear_model": "workspace:mymodel"})
    assert response.status_code == 400 and str(tmp_path) not in response.text


def test_every_option_naming_a_file_is_a_choice_of_the_page():
    """A string option with no list of choices names a file or folder: it must be one of PATH_OPTIONS (a
    choice the workspace resolves), so that no new option reads the server's files from a form."""
    from wattsched.schedulers.presets import PRESETS
    from wattsched.web.workspace import PATH_OPTIONS

    free_text = {o.name for preset in PRESETS.values() for o in preset.options
                 if o.type is str and o.choices is None}
    assert free_text and free_text <= PATH_OPTIONS


# ------------------------------------------------------------------------------------------- 2. 500s
def test_a_long_upload_file_name_is_shortened(client, tmp_path):
    good = (ROOT / "platforms" / "taurus_16.xml").read_bytes()
    name = "a" * 300 + ".xml"
    response = client.post("/inputs/upload", data={"kind": "platform"}, files={"file": (name, good)},
                           follow_redirects=False)
    assert response.status_code == 303
    (stored,) = (tmp_path / "ws" / "inputs").iterdir()
    assert len(stored.name) < 120 and stored.read_bytes() == good
    # a bad file with such a name is refused with the name shortened, on the run form too
    response = client.post("/runs", data=EASY, files={"platform_file": (name, b"<platform")})
    assert response.status_code == 400
    shown = field_error(response.text, "platform").split(":")[0]
    assert shown == "a" * 93 + "....xml"  # at most 100 characters, its start and its suffix
    no_run_made(tmp_path / "ws")


def test_generated_workload_seed_and_users_are_checked_like_the_cli(client, tmp_path):
    response = client.post("/inputs/workload", data={"hosts": "4", "seed": "7" * 300, "days": "0.2"},
                           follow_redirects=False)
    assert response.status_code == 303  # the CLI takes any seed ≥ 0; the stored name is shortened
    response = client.post("/inputs/workload", data={"hosts": "16", "seed": "-1", "days": "0.2"})
    assert response.status_code == 400
    assert field_error(response.text, "workload-seed") == cli_error("synth", "--hosts", "16", "--seed", "-1")
    response = client.post("/inputs/workload", data={"hosts": "16", "seed": "1", "users": "10000000000000"})
    assert response.status_code == 400
    message = field_error(response.text, "workload-users")
    assert message.startswith("argument --users: 1e+13 users") and "WATTSCHED_LIMIT_JOBS" in message
    assert len(list((tmp_path / "ws" / "inputs").iterdir())) == 1


@pytest.mark.parametrize("scheduler, option", [("fairshare", "shares"), ("energy-bud", "budget_j"),
                                               ("esc", "groups"), ("esc", "min_on")])
def test_deeply_nested_json_in_an_option_is_refused(client, tmp_path, scheduler, option):
    response = client.post("/runs", data={"scheduler": scheduler, "platform": PLATFORM, "workload": WORKLOAD,
                                          f"opt.{option}": "[" * 100_000})
    assert response.status_code == 400
    assert field_error(response.text, option) == (f"option '{option}': JSON nested too deeply; at most 64 levels "
                                                  "(raise with WATTSCHED_LIMIT_NESTING)")
    no_run_made(tmp_path / "ws")


def test_a_lone_surrogate_in_an_option_is_refused(client, tmp_path):
    response = client.post("/runs", data={"scheduler": "fairshare", "platform": PLATFORM, "workload": WORKLOAD,
                                          "opt.shares": '{"\\ud800": 1}'})
    assert response.status_code == 400
    assert "surrogate" in field_error(response.text, "shares")
    no_run_made(tmp_path / "ws")


# ------------------------------------------------------------------------------- 3. unknown options
@pytest.mark.parametrize("form, option", [
    ({"scheduler": "compose", "opt.admission": "none", "opt.budget_fraction": "0.5", "opt.window_end_s": "3000"},
     "budget_fraction"),
    ({"scheduler": "fcfs", "opt.budget_j": "5"}, "budget_j"),
    ({"scheduler": "eamc-base", "opt.threshold": "0.3"}, "threshold"),
    ({"scheduler": "easy-backfill", "opt.bogus": "1"}, "bogus"),
])
def test_an_option_the_scheduler_does_not_take_is_refused_as_the_cli_does(client, tmp_path, form, option):
    response = client.post("/runs", data={"platform": PLATFORM, "workload": WORKLOAD, **form})
    assert response.status_code == 400
    general = field_error(response.text, "general")
    assert f"'{option}'" in general
    cli_options = {k[4:]: json.loads(v) if k != "opt.admission" else v for k, v in form.items() if k.startswith("opt.")}
    assert general == cli_error("run", str(ROOT / "platforms" / "taurus_16.xml"),
                                str(ROOT / "workloads" / "demo_taurus16.json"), "-s", form["scheduler"],
                                "-o", json.dumps(cli_options), "-e", str(tmp_path / "cli" / "out"))
    no_run_made(tmp_path / "ws")
    # an empty field of another piece means "not given", as before
    response = client.post("/runs", data={"platform": PLATFORM, "workload": WORKLOAD, **form, f"opt.{option}": ""},
                           follow_redirects=False)
    assert response.status_code in (303, 400) and f"'{option}'" not in "".join(errors_on(response.text))


# ------------------------------------------------------------------------------------------ 4. names
@pytest.mark.parametrize("name", ["a\x00b", "a\x1b[31mred", "tab\there", "a\x7fb", "a\x85b", "evil\u202etxt.exe",
                                  "a\u2066b", "a\ufeffb"])
def test_run_names_with_control_or_bidi_characters_are_refused(client, tmp_path, name):
    response = client.post("/runs", data={**EASY, "name": name})
    assert response.status_code == 400
    assert field_error(response.text, "name").startswith("run name: character U+")
    no_run_made(tmp_path / "ws")


def test_run_names_in_any_script_are_kept(client, tmp_path):
    response = client.post("/runs", data={**EASY, "name": "Zürich ☃ 東京 — Ελλάδα"}, follow_redirects=False)
    assert response.status_code == 303
    (run,) = (tmp_path / "ws" / "runs").iterdir()
    assert json.loads((run / "run.json").read_text())["name"] == "Zürich ☃ 東京 — Ελλάδα"


def test_a_name_that_is_not_utf8_is_refused(client, tmp_path):
    parts = [(k, None, v.encode()) for k, v in EASY.items() if k != "name"] + [("name", None, b"bad\xff\xfe\x80")]
    response = client.post("/runs", content=multipart(parts), headers=HEADERS, follow_redirects=False)
    if response.status_code == 303:  # decoded with replacement characters: shown as such, never raw bytes
        (run,) = (tmp_path / "ws" / "runs").iterdir()
        name = json.loads((run / "run.json").read_text())["name"]
        assert name.startswith("bad") and not re.search("[\x00-\x1f\x7f-\x9f\ud800-\udfff]", name)
    else:
        assert response.status_code == 400 and field_error(response.text, "name")


# ------------------------------------------------------------------ 5. checks before the run is created
def test_an_option_the_platform_refuses_is_refused_before_the_run(client, tmp_path):
    form = {"scheduler": "esc", "platform": PLATFORM, "workload": WORKLOAD, "opt.sleep_pstate": "9" * 23}
    response = client.post("/runs", data=form)
    assert response.status_code == 400
    assert field_error(response.text, "sleep_pstate") == cli_error(
        "run", str(ROOT / "platforms" / "taurus_16.xml"), str(ROOT / "workloads" / "demo_taurus16.json"), "-s", "esc",
        "-o", json.dumps({"sleep_pstate": int("9" * 23)}), "-e", str(tmp_path / "cli" / "out"))
    no_run_made(tmp_path / "ws")


def test_a_nan_frequency_is_refused_before_a_upas_run(client, tmp_path):
    text = (ROOT / "platforms" / "upas_16.xml").read_text()
    bad = re.sub(r'(frequency_ghz_per_state" value=")[^,"]*', r"\1nan", text, count=1)
    assert bad != text
    path = tmp_path / "freq_nan.xml"
    path.write_text(bad)
    form = {"scheduler": "upas", "workload": "shipped:demo_upas16.json"}
    response = client.post("/runs", data=form, files={"platform_file": ("freq_nan.xml", bad.encode())})
    assert response.status_code == 400
    expected = cli_error("run", str(path), str(ROOT / "workloads" / "demo_upas16.json"), "-s", "upas", "-e",
                         str(tmp_path / "cli" / "out"))
    # the platform loader refuses it, naming the file: the page names an upload by its name, the CLI by its path
    assert "freq_nan.xml: cluster 'upas'.frequency_ghz_per_state" in expected
    assert errors_on(response.text) == [expected.replace(str(path), path.name)]
    assert str(tmp_path) not in response.text
    assert list((tmp_path / "ws" / "inputs").iterdir()) == []  # not stored: stored only with its run
    no_run_made(tmp_path / "ws")


# ------------------------------------------------------------------------- 6. deleted while being read
def done_run(client: TestClient, workspace: Path) -> str:
    response = client.post("/runs", data=EASY, follow_redirects=False)
    assert response.status_code == 303
    run_id = response.headers["location"].rsplit("/", 1)[1]
    import time

    deadline = time.monotonic() + 90
    while json.loads((workspace / "runs" / run_id / "status.json").read_text())["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return run_id


def test_a_run_deleted_while_it_is_viewed_or_downloaded_is_a_clean_404(tmp_path, monkeypatch, caplog):
    import wattsched.analysis.outputs as outputs

    workspace = tmp_path / "ws"
    app = create_app(workspace, processes=False)
    space = app.state.workspace
    deleting: list[str] = []

    async def delete_when_answering(scope, receive, send):  # the deletion lands between headers and body
        async def sending(message):
            if message["type"] == "http.response.start" and deleting:
                space.delete_run(deleting.pop())
            await send(message)
        await app(scope, receive, sending)

    with TestClient(app, raise_server_exceptions=False) as client:
        ids = [done_run(client, workspace) for _ in range(2)]
        expected = (workspace / "runs" / ids[0] / "out_jobs.csv").read_bytes()
    with TestClient(delete_when_answering, raise_server_exceptions=False) as client:
        deleting.append(ids[0])
        response = client.get(f"/runs/{ids[0]}/files/jobs.csv")
        assert response.status_code == 200 and response.content == expected  # the whole file
        assert not (workspace / "runs" / ids[0]).exists()
        # deleted between the page's check and its reading of the outputs
        original = outputs.load_outputs

        def deleted_first(prefix, *args, **kwargs):
            if (workspace / "runs" / ids[1]).exists():
                space.delete_run(ids[1])
            return original(prefix, *args, **kwargs)

        monkeypatch.setattr(outputs, "load_outputs", deleted_first)
        response = client.get(f"/runs/{ids[1]}")
        assert response.status_code == 404
        assert errors_on(response.text) == [f"run {ids[1]} no longer exists (it was deleted)"]
        assert str(workspace) not in response.text
        for url in (f"/runs/{ids[1]}", f"/runs/{ids[1]}/files/jobs.csv"):
            assert client.get(url).status_code == 404
    assert "FileNotFoundError" not in caplog.text and "without completing response" not in caplog.text


# ------------------------------------------------------------------------ 7. forms the parsers refuse
def multipart(parts: list[tuple[str, str | None, bytes]], boundary: str = "xyzb") -> bytes:
    out = b""
    for name, filename, data in parts:
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'.encode()
        out += (f'; filename="{filename}"'.encode() if filename else b"") + b"\r\n\r\n" + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


HEADERS = {"content-type": "multipart/form-data; boundary=xyzb"}


@pytest.mark.parametrize("url, error_id", [("/runs", "general"), ("/inputs/upload", "upload")])
def test_a_form_the_parser_refuses_gets_the_page_with_a_sentence(client, tmp_path, url, error_id):
    cases = [
        (multipart([("kind", None, b"platform"), ("file", "a" * 5000 + ".xml", b"<x/>")]), HEADERS,
         "malformed multipart data"),
        (multipart([(f"f{i}", "x.xml", b"1") for i in range(4)]), HEADERS, "it holds more than"),
        (multipart([("opt.shares", None, b"x" * (1024 * 1024 + 10))]), HEADERS,
         "field 'opt.shares' holds more than 1024 KiB"),
        (b"abc", {"content-type": "multipart/form-data"}, "has no boundary"),
        (multipart([(f"f{i}", None, b"1") for i in range(1200)]), HEADERS, "fields"),
    ]
    for body, headers, expected in cases:
        response = client.post(url, content=body, headers=headers)
        assert response.status_code == 400, expected
        assert response.headers["content-type"].startswith("text/html") and "<form" in response.text
        message = field_error(response.text, error_id)
        assert message.startswith("the form could not be read: ") and expected in message, message
    assert files_under(tmp_path / "ws") == [tmp_path / "ws" / "index.json"]


def test_urlencoded_forms_the_parser_refuses_get_the_page(client):
    urlencoded = {"content-type": "application/x-www-form-urlencoded"}
    response = client.post("/inputs/workload", content="hosts=" + "1" * (1024 * 1024 + 5), headers=urlencoded)
    assert response.status_code == 400 and "holds more than 1024 KiB" in field_error(response.text, "workload-hosts")
    response = client.post("/inputs/platform", content="&".join(f"a{i}=1" for i in range(50)), headers=urlencoded)
    assert response.status_code == 400 and "more than 10 fields" in field_error(response.text, "platform-hosts")


# ---------------------------------------------------------------------------------- 8. Dask's scratch
def test_dask_scratch_space_is_inside_the_workspace(tmp_path, monkeypatch):
    import tempfile

    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    workspace = tmp_path / "ws"
    with TestClient(create_app(workspace, processes=False)) as client:
        done_run(client, workspace)
        assert (workspace / ".dask-scratch").is_dir()
    assert list(system_tmp.iterdir()) == []


# ------------------------------------------------------------------ 9. user text inside the figures' JSON
def small_workload() -> bytes:
    """The first 30 jobs of the demo workload (tiny runs)."""
    document = json.loads((ROOT / "workloads" / "demo_taurus16.json").read_text())
    jobs = document["jobs"][:30]
    used = {job["profile"] for job in jobs}
    return json.dumps({"nb_res": 16, "jobs": jobs,
                       "profiles": {k: v for k, v in document["profiles"].items() if k in used}}).encode()


def test_run_names_cannot_end_the_script_that_holds_a_figure(client, tmp_path):
    """A run's name is in the compare page's figures (their legends): inside <script type=application/json>,
    '</script>' would end the element and '<!--<script>' would make the HTML parser read past its end."""
    import time

    names = ["<!--<script>", "x</script><img src=x onerror=alert(1)>&amp;"]
    ids = []
    for name in names:
        response = client.post("/runs", data={**EASY, "name": name}, files={"workload_file": ("small.json",
                                                                                            small_workload())},
                               follow_redirects=False)
        assert response.status_code == 303, errors_on(response.text)
        ids.append(response.headers["location"].rsplit("/", 1)[1])
    deadline = time.monotonic() + 60
    for run_id in ids:
        while json.loads((tmp_path / "ws" / "runs" / run_id / "status.json").read_text())["state"] != "done":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    page = client.get(f"/compare?run={ids[0]}&run={ids[1]}").text
    scripts = re.findall(r'<script type="application/json" id="figure-(\w+)">(.*?)</script>', page, re.S)
    assert [key for key, _ in scripts] == ["power", "utilization"]
    for _, text in scripts:
        assert "<" not in text and ">" not in text
        legends = [trace["name"] for trace in json.loads(text)["data"]]
        assert all(any(legend.startswith(name) for legend in legends) for name in names)


# ------------------------------------------------------------------ 10. bodies and generated inputs too large
def test_a_body_without_its_length_is_cut_at_the_upload_bound(tmp_path):
    """A multipart body sent chunked (or with a false Content-Length) is read up to the bound of its uploads
    only, not spooled to disk whole before it is refused."""
    import anyio

    app = create_app(tmp_path / "ws", processes=False, max_upload_bytes=100_000)
    body = multipart([("kind", None, b"platform"), ("platform_file", "p.xml", b"x" * 5_000_000),
                      ("file", "p.xml", b"x" * 5_000_000)])

    async def post(url: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, str, int]:
        """Status, page and bytes the app asked for, the body given in chunks of 64 KiB."""
        chunks = [body[i:i + 65536] for i in range(0, len(body), 65536)]
        given, answer = [0], {"status": 0, "body": b""}

        async def receive():
            chunk = chunks.pop(0) if chunks else b""
            given[0] += len(chunk)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

        async def send(message):
            answer["status"] = message.get("status", answer["status"])
            answer["body"] += message.get("body", b"")

        scope = {"type": "http", "method": "POST", "path": url, "raw_path": url.encode(), "query_string": b"",
                 "headers": [(b"host", b"testserver"), (b"content-type", HEADERS["content-type"].encode())] + headers,
                 "scheme": "http", "server": ("testserver", 80), "client": ("127.0.0.1", 1), "root_path": "",
                 "http_version": "1.1", "asgi": {"version": "3.0"}}
        await app(scope, receive, send)
        return answer["status"], answer["body"].decode(), given[0]

    for url, error_id in (("/inputs/upload", "upload"), ("/runs", "general")):
        for headers in ([], [(b"content-length", b"100")]):
            status, page, given = anyio.run(post, url, headers)
            assert status == 413
            assert "bytes accepted (raise with wattsched web --max-upload-mb" in field_error(page, error_id)
            assert given < 1_000_000
    assert files_under(tmp_path / "ws") == [tmp_path / "ws" / "index.json"]


def test_a_generated_input_larger_than_an_upload_is_refused(tmp_path):
    with TestClient(create_app(tmp_path / "ws", processes=False, max_upload_bytes=100_000),
                    raise_server_exceptions=False) as client:
        # a flat platform: refused from its size before it is generated
        response = client.post("/inputs/platform", data={"hosts": "200", "flat": "on"})
        assert response.status_code == 413
        message = field_error(response.text, "platform-hosts")
        assert message.startswith("platform of 200 hosts (about ") and "100000 bytes accepted" in message
        # the generator's bound on hosts comes first, on the form
        response = client.post("/inputs/platform", data={"hosts": "9" * 20, "flat": "on"})
        assert response.status_code == 400
        assert field_error(response.text, "platform-hosts") == cli_error("platform", "--hosts", "9" * 20)
        response = client.post("/inputs/workload", data={"hosts": "64", "seed": "1", "days": "7"})
        assert response.status_code == 413
        assert "bytes accepted" in field_error(response.text, "workload-hosts")
        # a cluster of as many hosts is a few lines
        assert client.post("/inputs/platform", data={"hosts": "200"}, follow_redirects=False).status_code == 303
    assert len(list((tmp_path / "ws" / "inputs").iterdir())) == 1


# ------------------------------------------------------------------------------- 11. input choices
@pytest.mark.parametrize("choice, expected", [
    ("workspace:", "platform: no input 'workspace:' (choose a shipped one or one of the workspace's inputs)"),
    ("workspace:.", "platform: no input 'workspace:.' (choose a shipped one or one of the workspace's inputs)"),
    ("workspace:../index.json", "platform: '../index.json' is outside the workspace's inputs"),
])
def test_an_empty_workspace_choice_is_no_input_not_outside(client, tmp_path, choice, expected):
    response = client.post("/runs", data={**EASY, "platform": choice})
    assert response.status_code == 400 and field_error(response.text, "platform") == expected
    no_run_made(tmp_path / "ws")
