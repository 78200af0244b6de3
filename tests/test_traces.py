"""The trace catalogue (workloads/traces.py) and the SWF reader on excerpts of the archive's real logs.

tests/fixtures/swf/pwa/*-head200.swf.gz: the header and the first 200 job lines of each of the seven cleaned
logs of the Parallel Workloads Archive in ../shared/data/pwa (gzip -9n); see tests/fixtures/swf/README.md.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from wattsched.base.errors import InputError, OptionError
from wattsched.cli import main
from wattsched.workloads.swf import read_swf_trace, summary_line, swf_to_batsim
from wattsched.workloads.traces import TRACES, Trace, fetch_trace, find_trace, sha256_of

PWA = Path(__file__).resolve().parent / "fixtures" / "swf" / "pwa"
EXCERPTS = sorted(PWA.glob("*-head200.swf.gz"))
SPEED = 100e6


def excerpt(prefix: str) -> Path:
    return next(p for p in EXCERPTS if p.name.startswith(prefix))


# ----------------------------------------------------------------------------------------------- catalogue
def test_the_catalogue_holds_the_seven_shared_logs_with_their_facts(capsys):
    assert {t.file.removesuffix(".swf.gz") for t in TRACES} == {p.name.removesuffix("-head200.swf.gz")
                                                                 for p in EXCERPTS}
    for path in EXCERPTS:  # the catalogue's machine size is the header's MaxProcs
        trace = find_trace(path.name.removesuffix("-head200.swf.gz"))
        assert read_swf_trace(path)[0].max_procs == trace.processors
        assert trace.url().startswith("https://www.cs.huji.ac.il/labs/parallel/workload/l_")
    assert main(["traces"]) == 0
    out = capsys.readouterr().out
    assert all(t.name in out for t in TRACES)
    with pytest.raises(OptionError, match="unknown trace 'sdsc'.*sdsc-blue"):
        find_trace("sdsc")


def _fixture_trace(path: Path, sha256: str | None = None) -> Trace:
    return Trace("fixture", path.name, "l_fixture", "test", 1, 200, "", "", sha256 or sha256_of(path))


def test_fetch_reads_a_mirror_in_place_and_refuses_another_file(tmp_path):
    source = excerpt("NASA")
    assert fetch_trace(_fixture_trace(source), mirror=source.parent, cache=tmp_path) == source
    with pytest.raises(InputError, match=r"NASA-iPSC.*: sha256: is [0-9a-f]{64}, the catalogue's fixture is 0+"):
        fetch_trace(_fixture_trace(source, "0" * 64), mirror=source.parent, cache=tmp_path)
    with pytest.raises(OptionError, match="in no mirror or cache"):
        fetch_trace(_fixture_trace(source), mirror=tmp_path, cache=tmp_path, download=False)


@pytest.fixture
def http_folder(tmp_path):
    """A local HTTP server on 127.0.0.1 serving a folder."""
    served = tmp_path / "served"
    served.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_into_the_cache_checked_then_reused(http_folder, tmp_path):
    served, url = http_folder
    source = excerpt("SDSC-BLUE")
    shutil.copy(source, served / source.name)
    cache = tmp_path / "cache"
    empty = tmp_path / "no-mirror"
    empty.mkdir()
    trace = _fixture_trace(source)
    path = fetch_trace(trace, mirror=empty, cache=cache, base_url=url)
    assert path == cache / source.name and path.read_bytes() == source.read_bytes()
    (served / source.name).unlink()  # the second time comes from the cache
    assert fetch_trace(trace, mirror=empty, cache=cache, base_url=url) == path
    assert [p.name for p in cache.iterdir()] == [source.name]  # no partial file left


def test_a_download_that_differs_is_deleted_and_a_missing_one_named(http_folder, tmp_path):
    served, url = http_folder
    source = excerpt("SDSC-BLUE")
    shutil.copy(source, served / source.name)
    empty = tmp_path / "no-mirror"
    empty.mkdir()
    cache = tmp_path / "cache"
    with pytest.raises(InputError, match="sha256"):
        fetch_trace(_fixture_trace(source, "f" * 64), mirror=empty, cache=cache, base_url=url)
    assert not cache.exists()  # neither the file nor the cache folder made for it
    with pytest.raises(InputError, match=rf"^{url}/nothing.swf.gz: cannot download fixture \(.*404"):
        fetch_trace(Trace("fixture", "nothing.swf.gz", "", "", 1, 1, "", "", "0" * 64), mirror=empty, cache=cache,
                    base_url=url)


def test_cli_fetch_prints_the_checked_path(http_folder, tmp_path, capsys, monkeypatch):
    served, url = http_folder
    nasa = find_trace("nasa-ipsc")
    # The real log is not in the tests: a server holding another file under its name must be refused.
    shutil.copy(excerpt("NASA"), served / nasa.file)
    empty = tmp_path / "no-mirror"
    empty.mkdir()
    code = main(["traces", "fetch", "nasa-ipsc", "--mirror", str(empty), "--cache", str(tmp_path / "c"), "--url", url])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sha256" in err[0] and nasa.sha256 in err[0]
    assert not (tmp_path / "c" / nasa.file).exists()


def test_swf_reads_a_catalogue_file_name_from_the_mirror_unless_a_file_has_that_name(tmp_path, capsys, monkeypatch):
    """``wattsched swf NASA-iPSC-1993-3.1-cln.swf.gz`` (the catalogue's file name, as 'wattsched traces' shows it, and
    the example of the command's help) was read as a file of the current folder only: 'cannot read the file: No such
    file or directory' where ``swf nasa-ipsc`` read the mirror. Now a catalogue file name (.swf.gz, or .swf) is looked
    up as the name is when no file of that name is here; a file of that name still wins."""
    import wattsched.workloads.traces as traces

    nasa = excerpt("NASA")  # a catalogue of one trace, the excerpt, whose mirror is the fixtures' folder
    monkeypatch.setattr(traces, "TRACES", (_fixture_trace(nasa),))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "w.json"
    for argument in (nasa.name, nasa.name.removesuffix(".gz"), nasa.name.upper()):
        assert main(["swf", argument, "--mirror", str(PWA), "--output", str(out)]) == 0, capsys.readouterr().err
        err = capsys.readouterr().err.strip()
        assert err.startswith(nasa.name) and "on 128 hosts" in err, err
        assert json.loads(out.read_text())["nb_res"] == 128
        out.unlink()
    assert find_trace(nasa.name.removesuffix(".gz")).file == nasa.name
    # a file of that name here wins (and --mirror, which it would ignore, is refused)
    shutil.copy(excerpt("CTC"), tmp_path / nasa.name)
    assert main(["swf", nasa.name, "--output", str(out)]) == 0
    assert json.loads(out.read_text())["nb_res"] == read_swf_trace(excerpt("CTC"))[0].max_procs != 128
    out.unlink()
    assert main(["swf", nasa.name, "--mirror", str(PWA), "--output", str(out)]) == 2
    assert "is read as a file" in capsys.readouterr().err and not out.exists()
    # any other .swf.gz name is a file, refused as missing
    assert main(["swf", "other.swf.gz", "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "wattsched: error: other.swf.gz: cannot read the file: No such file or directory", err


# ----------------------------------------------------------------------------------------------- SWF reader
@pytest.mark.parametrize("path", EXCERPTS, ids=lambda p: p.name.split("-")[0] + "-" + p.name.split("-")[1])
def test_every_shared_log_converts_with_one_summary_line(path, tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["swf", str(path), "--output", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(path.name + ": ")
    workload = json.loads(out.read_text())
    meta = workload["meta"]
    header, records = read_swf_trace(path)
    assert workload["nb_res"] == header.max_procs  # the header's machine size by default
    # every line is accounted for: kept or dropped for a reason
    assert meta["nb_jobs"] + sum(meta["filtered"].values()) == len(records) == 200
    assert f"{meta['nb_jobs']} jobs of 200 lines" in err[0]
    assert all(isinstance(job["user"], int) and isinstance(job["group"], int) for job in workload["jobs"])
    assert meta["header"]["unix_start_time"] == header.unix_start_time


def test_jobs_without_requested_time_follow_the_stated_rule():
    nasa = excerpt("NASA")  # field 9 is -1 for every job of the NASA log
    default = swf_to_batsim(nasa, speed_flops=SPEED)
    assert default["meta"]["nb_walltime_from_rule"] == len(default["jobs"]) > 0
    cpu = {name: p["cpu"] for name, p in default["profiles"].items()}
    assert all(job["walltime"] == cpu[job["profile"]] / SPEED for job in default["jobs"])  # the run time
    assert "walltime from the rule 'runtime': " + str(len(default["jobs"])) in summary_line(default)
    none = swf_to_batsim(nasa, speed_flops=SPEED, walltime_rule="none")
    assert all("walltime" not in job for job in none["jobs"])
    doubled = swf_to_batsim(nasa, speed_flops=SPEED, walltime_rule="factor:2")
    assert [j["walltime"] for j in doubled["jobs"]] == [2 * j["walltime"] for j in default["jobs"]]
    limited = swf_to_batsim(nasa, speed_flops=SPEED, walltime_rule="limit:3600")
    assert all(j["walltime"] == max(3600, d["walltime"]) for j, d in zip(limited["jobs"], default["jobs"]))
    for bad in ("factor:0.5", "limit:-1", "twice", "factor:nan"):
        with pytest.raises(OptionError, match="walltime rule"):
            swf_to_batsim(nasa, speed_flops=SPEED, walltime_rule=bad)


def test_gzip_is_recognised_by_content_and_crlf_lines_read(tmp_path):
    source = excerpt("SDSC-SP2")
    renamed = tmp_path / "trace.swf"  # compressed, whatever its name says
    shutil.copy(source, renamed)
    crlf = tmp_path / "crlf.swf"
    crlf.write_bytes(gzip.decompress(source.read_bytes()).replace(b"\n", b"\r\n"))
    reference = swf_to_batsim(source, speed_flops=SPEED)
    for path in (renamed, crlf):
        converted = swf_to_batsim(path, speed_flops=SPEED)
        assert converted["jobs"] == reference["jobs"] and converted["nb_res"] == reference["nb_res"]
    broken = tmp_path / "broken.swf.gz"
    broken.write_bytes(source.read_bytes()[:100])
    with pytest.raises(InputError, match="broken.swf.gz: a gzip file that does not decompress"):
        swf_to_batsim(broken, speed_flops=SPEED)


def test_jobs_wider_than_the_machine_dropped_kept_or_refused():
    ctc = excerpt("CTC")
    dropped = swf_to_batsim(ctc, speed_flops=SPEED, nb_hosts=64)
    wide = dropped["meta"]["filtered"]["too_large"]
    assert wide > 0 and all(job["res"] <= 64 for job in dropped["jobs"])
    kept = swf_to_batsim(ctc, speed_flops=SPEED, nb_hosts=64, too_large="keep")
    assert sum(job["res"] > 64 for job in kept["jobs"]) == wide == kept["meta"]["kept"]["too_large"]
    with pytest.raises(InputError, match=r"CTC.*: line \d+: job \d+ needs \d+ hosts, the machine has 64"):
        swf_to_batsim(ctc, speed_flops=SPEED, nb_hosts=64, too_large="error")


def test_jobs_without_run_time_dropped_kept_or_refused():
    sp2 = excerpt("SDSC-SP2")
    dropped = swf_to_batsim(sp2, speed_flops=SPEED)
    nb = sum(dropped["meta"]["filtered"].get(k, 0) for k in ("cancelled", "no_runtime"))
    assert nb > 0
    kept = swf_to_batsim(sp2, speed_flops=SPEED, no_runtime="keep")
    assert len(kept["jobs"]) == len(dropped["jobs"]) + nb
    assert sum(kept["profiles"][j["profile"]]["cpu"] == 0 for j in kept["jobs"]) >= nb
    with pytest.raises(InputError, match="has no run time"):
        swf_to_batsim(sp2, speed_flops=SPEED, no_runtime="error")


def test_header_processors_per_node():
    blue = excerpt("SDSC-BLUE")  # MaxProcs 1152, MaxNodes 144
    workload = swf_to_batsim(blue, speed_flops=SPEED, procs_per_host="node")
    assert workload["nb_res"] == 144 and workload["meta"]["procs_per_host"] == 8
    with pytest.raises(InputError, match="MaxProcs/MaxNodes"):
        swf_to_batsim(excerpt("CEA-Curie"), speed_flops=SPEED, procs_per_host="node")  # 93312 / 5544


def test_counts_cover_the_extract_only_and_times_stay_relative():
    sp2 = excerpt("SDSC-SP2")
    _, records = read_swf_trace(sp2)
    start = records[50]["submit_time"]
    end = records[120]["submit_time"]
    extract = swf_to_batsim(sp2, speed_flops=SPEED, start_time_s=start, duration_s=end - start)
    inside = [r for r in records if start <= r["submit_time"] < end]
    meta = extract["meta"]
    assert meta["filtered"]["outside_window"] == len(records) - len(inside)
    assert sum(v for k, v in meta["filtered"].items() if k != "outside_window") == sum(
        r["run_time"] <= 0 for r in inside)
    by_number = {int(r["job_number"]): r for r in records}
    assert all(job["subtime"] == by_number[job["id"]]["submit_time"] - start for job in extract["jobs"])


def test_cli_empty_extract_is_an_error_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["swf", str(excerpt("CTC")), "--window", "1e9,2e9", "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no job left to simulate" in err[0] and "200 outside window" in err[0]
    assert not out.exists()


def test_a_speed_mismatch_is_reported(tmp_path, caplog):
    from wattsched import api

    workload = swf_to_batsim(excerpt("SDSC-SP2"), speed_flops=1e9, max_jobs=10)
    api.simulate(api.taurus_platform(128), workload, out=tmp_path / "out")
    assert "meant for hosts of 1e+09 flop/s, the platform's top speed is 1e+08 flop/s" in caplog.text
    caplog.clear()
    api.simulate(api.taurus_platform(128), swf_to_batsim(excerpt("SDSC-SP2"), speed_flops=SPEED, max_jobs=10),
                 out=tmp_path / "out2")
    assert "meant for hosts" not in caplog.text


def test_the_busiest_window_counts_hosts_as_the_conversion_does():
    from wattsched.workloads.swf import busiest_window, header_hosts

    blue = excerpt("SDSC-BLUE")  # 8 processors per node
    by_proc = busiest_window(blue, nb_hosts=header_hosts(blue), duration_s=86400.0, step_s=86400.0)
    by_node = busiest_window(blue, nb_hosts=header_hosts(blue, "node"), duration_s=86400.0, step_s=86400.0,
                             procs_per_host="node")
    assert header_hosts(blue) == 1152 and header_hosts(blue, "node") == 144
    # Whole nodes only round the processors up: the load per node is at least, and close to, the one per processor.
    assert by_proc[1] <= by_node[1] < 1.5 * by_proc[1]
