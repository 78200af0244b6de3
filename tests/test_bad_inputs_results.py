"""Bad inputs of trace downloads (workloads/traces.py) and of result folders (analysis/outputs.py, metrics.py,
regress.py), and the Makefile's variables: one line naming the file/URL and the field, nothing half-written."""

from __future__ import annotations

import gzip
import http.server
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from wattsched.analysis.metrics import compute_metrics
from wattsched.analysis.outputs import load_outputs
from wattsched.analysis.regress import compare_outputs, update_golden
from wattsched.base.errors import InputError, OptionError, OutputError
from tests.bad_inputs_checks import recording_outputs, set_line
from wattsched.cli import main
from wattsched.workloads.traces import Trace, fetch_trace

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"
BODY = gzip.compress(b"; a tiny log\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")


# ---------------------------------------------------------------------------------------------- a server
class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits: list[str] = []

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        type(self).hits.append(self.path)
        mode = self.path.strip("/").split("/")[0]
        if mode == "good":
            self._send(BODY, {"Content-Length": str(len(BODY))})
        elif mode == "badlen":
            self._send(BODY, {"Content-Length": "abc", "Connection": "close"})
        elif mode == "trunc":
            self._send(BODY[: len(BODY) // 2], {"Content-Length": str(len(BODY)), "Connection": "close"})
        elif mode == "html":
            page = b"<html><body>Not here</body></html>"
            self._send(page, {"Content-Type": "text/html", "Content-Length": str(len(page))})
        elif mode == "slow":  # 1 byte every 0.1 s, announcing much more
            self._send(b"", {"Content-Length": "100000"})
            try:
                for _ in range(600):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                return
        elif mode == "endless":
            self._send(b"", {"Connection": "close"})
            try:
                for _ in range(4096):
                    self.wfile.write(b"\0" * 65536)
            except OSError:
                return
            self.close_connection = True

    def _send(self, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(body)
        if headers.get("Connection") == "close":
            self.close_connection = True


@pytest.fixture
def server():
    _Handler.hits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _no_mirror(tmp_path, monkeypatch):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("WATTSCHED_PWA", str(empty))
    for name in ("DOWNLOAD_MIN_RATE", "DOWNLOAD_RATE_WINDOW_S", "DOWNLOAD_BYTES"):
        monkeypatch.delenv(f"WATTSCHED_LIMIT_{name}", raising=False)


def _trace(size: int | None = None, sha256: str | None = None) -> Trace:
    return Trace("tiny", "tiny-cln.swf.gz", "l_tiny", "test", 1, 1, "", "", sha256 or _sha(BODY), size)


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------ downloads
def test_a_trickling_server_fails_at_the_minimum_rate(server, tmp_path, monkeypatch):  # B1
    monkeypatch.setenv("WATTSCHED_LIMIT_DOWNLOAD_RATE_WINDOW_S", "1")
    monkeypatch.setenv("WATTSCHED_LIMIT_DOWNLOAD_MIN_RATE", "100")
    start = time.monotonic()
    with pytest.raises(InputError, match=r"/slow/tiny-cln\.swf\.gz: cannot download tiny: under 100 bytes/s over 1 s"):
        fetch_trace(_trace(), cache=tmp_path / "cache", base_url=f"{server}/slow")
    assert time.monotonic() - start < 5
    assert not (tmp_path / "cache").exists()


def test_a_download_is_bounded_by_the_catalogue_size_or_the_limit(server, tmp_path, monkeypatch):  # B1
    with pytest.raises(InputError, match=r"/slow/tiny-cln.swf.gz: Content-Length: 100000 bytes, more than the "
                                         r"catalogue's size of tiny-cln.swf.gz \(1000 bytes\)"):
        fetch_trace(_trace(size=1000), cache=tmp_path / "c", base_url=f"{server}/slow")
    with pytest.raises(InputError, match=r"/endless/tiny-cln.swf.gz: cannot download tiny: more than 100000 bytes "
                                         r"\(raise with WATTSCHED_LIMIT_DOWNLOAD_BYTES\)"):
        monkeypatch.setenv("WATTSCHED_LIMIT_DOWNLOAD_BYTES", "100000")
        fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/endless")
    assert not (tmp_path / "c").exists()


def test_an_invalid_content_length_is_an_unknown_size(server, tmp_path):  # C5
    path = fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/badlen")
    assert path.read_bytes() == BODY


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_fifo_at_the_cache_name_is_refused_before_downloading(server, tmp_path, kind):  # C6, D9
    target = tmp_path / "c" / "tiny-cln.swf.gz"
    target.parent.mkdir()
    target.mkdir() if kind == "folder" else os.mkfifo(target)
    why = "it is a folder" if kind == "folder" else "not a regular file"
    with pytest.raises(InputError, match=rf"c/tiny-cln.swf.gz: cannot be the cached copy of tiny: {why}"):
        fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/good")
    assert _Handler.hits == []
    assert target.is_dir() if kind == "folder" else target.is_fifo()


def test_a_bad_download_names_the_url_and_why(server, tmp_path):  # E5
    with pytest.raises(InputError, match=rf"^{server}/trunc/tiny-cln.swf.gz: cannot download tiny: truncated "
                                         rf"\({len(BODY) // 2} of {len(BODY)} bytes\)$"):
        fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/trunc")
    with pytest.raises(InputError, match=rf"^{server}/html/tiny-cln.swf.gz: sha256: .*not gzip "
                                         r"\(Content-Type text/html\)"):
        fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/html")
    assert not (tmp_path / "c").exists()
    cached = tmp_path / "c2" / "tiny-cln.swf.gz"
    cached.parent.mkdir()
    cached.write_bytes(b"corrupt")
    with pytest.raises(InputError, match=r"c2/tiny-cln.swf.gz: sha256: .*delete it to download it again"):
        fetch_trace(_trace(), cache=tmp_path / "c2", base_url=f"{server}/good")


def test_a_downloaded_trace_is_an_ordinary_file(server, tmp_path):  # F2
    old = os.umask(0o022)
    try:
        path = fetch_trace(_trace(), cache=tmp_path / "c", base_url=f"{server}/good")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_sigterm_during_a_download_leaves_no_partial_file(server, tmp_path):  # F1
    cache = tmp_path / "c"
    script = (
        "import sys\n"
        "from wattsched.workloads.traces import Trace, fetch_trace\n"
        f"t = Trace('tiny', 'tiny-cln.swf.gz', 'l', 'm', 1, 1, '', '', '0' * 64)\n"
        "try:\n"
        f"    fetch_trace(t, cache={str(cache)!r}, base_url={server + '/slow'!r})\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(130)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "WATTSCHED_LIMIT_DOWNLOAD_BYTES": "1e6"})
    deadline = time.monotonic() + 20
    while not list(cache.glob(".*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(cache.glob(".*.part"))
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 130
    assert not cache.exists() or not list(cache.iterdir())


def test_fetch_checks_every_name_before_downloading(server, tmp_path, capsys):  # E13
    code = main(["traces", "fetch", "nasa-ipsc", "../../etc/passwd", "--cache", str(tmp_path / "c"),
                 "--url", f"{server}/good", "-q"])
    assert code == 2 and "unknown trace '../../etc/passwd'" in capsys.readouterr().err
    assert _Handler.hits == [] and not (tmp_path / "c").exists()


def test_bench_traces_refuses_an_empty_name():  # E13
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_traces.py"), "--only", ","],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--only: an empty name" in done.stderr and "unknown trace or run: \n" not in done.stderr


def test_traces_list_prints_the_given_url(capsys):  # E14
    assert main(["traces", "list", "--url", "http://mirror.example/pwa/"]) == 0
    out = capsys.readouterr().out
    assert "download: http://mirror.example/pwa/<file>" in out and "huji" not in out


@pytest.mark.parametrize("value", ["/nonexistent-folder", "file"])
def test_a_pwa_variable_that_is_not_a_folder_is_refused(tmp_path, monkeypatch, value):  # D8
    if value == "file":
        value = str(tmp_path / "a-file")
        Path(value).write_text("x")
    monkeypatch.setenv("WATTSCHED_PWA", value)
    with pytest.raises(OptionError, match=rf"environment variable WATTSCHED_PWA={value}: (no such|not a) folder"):
        fetch_trace(_trace(), cache=tmp_path / "c", download=False)


def test_no_mirror_is_looked_for_beside_the_current_folder(tmp_path, monkeypatch):  # D8
    from wattsched.workloads import pwa

    monkeypatch.delenv("WATTSCHED_PWA")
    monkeypatch.setattr(pwa, "__file__", str(tmp_path / "a" / "b" / "c" / "pwa.py"))  # no mirror beside the repo
    (tmp_path / "shared" / "data" / "pwa").mkdir(parents=True)
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert pwa.find_pwa() is None


# -------------------------------------------------------------------------------------------- results
@pytest.fixture
def run(tmp_path) -> Path:
    """The five outputs of a recorded Batsim run (DVFS: pstate changes with -1 rows)."""
    return recording_outputs(tmp_path / "run", "dvfs-energy")


def test_update_golden_is_all_or_nothing(run, tmp_path):  # A3
    golden = tmp_path / "golden"
    shutil.copytree(REFERENCE / "esc-states", golden, ignore=lambda _, names: [n for n in names if "out_" not in n])
    (golden / "out_machine_states.csv").unlink()
    (golden / "out_machine_states.csv").mkdir()
    before = {p.name: p.read_bytes() for p in golden.iterdir() if p.is_file()}
    with pytest.raises(OutputError, match="golden/out_machine_states.csv: it is a folder"):
        update_golden(run, golden)
    assert {p.name: p.read_bytes() for p in golden.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in golden.iterdir()) == sorted([*before, "out_machine_states.csv"])


@pytest.mark.parametrize("mangle", ["nan energy", "header-only jobs"])
def test_update_golden_refuses_a_run_metrics_refuses(run, tmp_path, mangle):  # A3
    if mangle == "nan energy":
        lines = (run / "out_consumed_energy.csv").read_text().splitlines()
        cells = lines[2].split(",")
        cells[1] = "nan"
        set_line(run / "out_consumed_energy.csv", 3, ",".join(cells))
    else:
        header = (run / "out_jobs.csv").read_text().splitlines()[0]
        (run / "out_jobs.csv").write_text(header + "\n")
    with pytest.raises(InputError):
        compute_metrics(run)
    with pytest.raises(InputError):
        update_golden(run, tmp_path / "golden")
    assert not (tmp_path / "golden").exists()


def test_a_non_numeric_pstate_is_one_line(run, capsys):  # C7
    set_line(run / "out_pstate_changes.csv", 3, "0,0-1,abc")
    for command in (["metrics"], ["node-stats"], ["paraver"]):
        assert main([*command, str(run)]) == 2
        err = capsys.readouterr().err
        assert "out_pstate_changes.csv: line 3, column 'new_pstate': 'abc' is not a number" in err
        assert "Traceback" not in err and err.count("\n") == 1


def test_a_header_only_jobs_file_is_refused_when_jobs_ran(run):  # D2
    header = (run / "out_jobs.csv").read_text().splitlines()[0]
    (run / "out_jobs.csv").write_text(header + "\n")
    with pytest.raises(InputError, match=r"out_jobs.csv: row 2: missing: a header but no rows, while 7 jobs ran"):
        load_outputs(run)
    (run / "out_schedule.csv").unlink()
    with pytest.raises(InputError, match=r"out_jobs.csv: row 2: missing: .*while hosts computed"):
        load_outputs(run)


def test_negative_counts_and_pstates_batsim_never_writes_are_refused(run):  # D3
    load_outputs(run)  # -1 rows of pending switches are Batsim's
    good = (run / "out_machine_states.csv").read_text()
    set_line(run / "out_machine_states.csv", 2, "0,-5,0,0,9,0")
    with pytest.raises(InputError, match=r"out_machine_states.csv: line 2, column 'nb_sleeping': -5 is not a count"):
        load_outputs(run)
    (run / "out_machine_states.csv").write_text(good)
    set_line(run / "out_pstate_changes.csv", 3, "0,0-1,-5")
    with pytest.raises(InputError, match=r"out_pstate_changes.csv: line 3, column 'new_pstate': -5 is not a pstate"):
        load_outputs(run)


def test_a_workload_lacking_run_jobs_is_refused(run, tmp_path):  # D4
    import json

    workload = json.loads((REFERENCE / "dvfs-energy" / "workload.json").read_text())
    for job in workload["jobs"]:
        job["user"] = "u1"
    compute_metrics(run, workload=workload)
    workload["jobs"] = workload["jobs"][:2]
    path = tmp_path / "part.json"
    path.write_text(json.dumps(workload))
    with pytest.raises(InputError, match=r"part.json: jobs: 5 of the run's 7 jobs are not in this workload"):
        compute_metrics(run, workload=path)


def test_a_duplicated_column_is_refused(run, tmp_path):  # D11
    golden = tmp_path / "golden"
    shutil.copytree(run, golden)
    lines = (run / "out_jobs.csv").read_text().splitlines()
    lines = [lines[0] + ",job_id"] + [line + ",x" for line in lines[1:]]
    (run / "out_jobs.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"out_jobs.csv: column 'job_id': twice in the header"):
        compare_outputs(run, golden)
    with pytest.raises(InputError, match=r"out_jobs.csv: column 'job_id': twice in the header"):
        load_outputs(run)


def test_metrics_counts_hosts_from_machine_states_without_a_schedule(run, capsys):  # E4
    (run / "out_schedule.csv").unlink()
    assert compute_metrics(run)["nb_hosts"] == 4
    (run / "out_machine_states.csv").unlink()
    assert main(["metrics", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{run}/out: unknown number of hosts: no _schedule.csv" in err and "nb_hosts" not in err


# ----------------------------------------------------------------------------------------------- make
def _make_n(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-n", "-C", str(ROOT), "STAMP=", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_makefile_variables_are_checked():  # D10
    for value, full in (("1", True), ("yes", True), ("true", True), ("0", False), ("no", False), ("false", False),
                        ("", False)):
        done = _make_n("reproduce-eamc", f"FULL={value}")
        assert done.returncode == 0 and ("--full" in done.stdout) == full, (value, done.stdout)
    done = _make_n("reproduce-eamc", "FULL=banana")
    assert done.returncode == 2 and "FULL=banana: expected 1, yes or true" in done.stderr
    for value in ("banana", "0", "1e3"):
        done = _make_n("fuzz", f"FUZZ_SECONDS={value}")
        assert done.returncode == 2 and f"FUZZ_SECONDS={value}: expected a positive whole number" in done.stderr
    assert _make_n("fuzz", "FUZZ_SECONDS=30").returncode == 0
    done = _make_n("bench-traces", "ONLY=a b; echo X")
    assert "--only 'a b; echo X'" in done.stdout
