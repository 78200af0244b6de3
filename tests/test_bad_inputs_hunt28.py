"""Bad inputs hunt 28: the workload and platform generators and converters (``swf``, ``synth``, ``lightesp``,
``eamc-workload``, ``beta``, ``platform``, ``traces``).

* before: an SWF comment holding a form feed (or ``\\x1c``-``\\x1e``, NEL, U+2028: :meth:`str.splitlines`'s other
  line breaks) was cut there, its end read as a job line: ``line 2: expected 18 fields, found 1`` for a valid
  trace, and every later line was numbered one too many. Now only LF, CRLF and CR end a line.
* before: ``swf`` wrote a workload of more jobs than the ``jobs`` bound (``WATTSCHED_LIMIT_JOBS``), which ``wattsched
  run`` then refused. Now refused at the first job beyond it, naming its line and the options that keep fewer.
* before: an SWF trace was read with no look at the memory it takes (about 15-18 bytes per byte of text, more
  once decompressed), where a Batsim workload is refused beyond ``memory_fraction``: a log of a few GB was
  killed by the system. Now refused first, the file named (after decompression too).
* before: ``swf FILE --mirror DIR`` ignored ``--mirror`` (even a folder that does not exist): it applies to a trace
  name only. Now refused, as the commands refuse the options they would ignore.
* before: ``swf --busiest 1e300`` took an extract of 1e300 days (``--window`` refuses one beyond the ``time_s``
  bound), and ``--busiest 1e-300`` printed an offered load of 300 digits. Now bounded as a time, and the load
  printed with 3 significant digits.
* before: ``--output -`` (of ``synth``, ``swf``, ``lightesp``, ``eamc-workload``, ``beta``, ``platform``) wrote a
  file named ``-``; now it is standard output, as the option's default.
* before: ``platform --flat --hosts 2000000`` (within the hosts bound) built 2 GB of text and checked it, about 10 KB a
  host: the system's out-of-memory kill. Now refused first beyond the memory share, naming ``--flat``.
* before: ``eamc-workload --mean-res 512`` said ``mean_res 512.0 cannot be reached with jobs of at most 512 hosts``,
  naming neither option; now ``mean_res (--mean-res) 512 ... (--max-res)``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused, usage_error
from wattsched.base.limits import available_memory_bytes
from wattsched.cli import main

JOB = "{n} {t} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 -1 -1 -1 -1"


def _trace(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------- 1. a form feed in a comment
@pytest.mark.parametrize("char", ["\x0c", "\x1d", "\x85", "\u2028"])
def test_a_form_feed_in_an_swf_comment_is_no_line_end(capsys, tmp_path, char):
    trace = _trace(tmp_path / "t.swf", [f"; Note: page{char}two", JOB.format(n=1, t=0)])
    out = tmp_path / "w.json"
    assert main(["swf", str(trace), "--output", str(out)]) == 0, capsys.readouterr().err
    assert [job["id"] for job in json.loads(out.read_text())["jobs"]] == [1]


def test_an_error_after_a_form_feed_names_its_own_line(capsys, tmp_path):
    trace = _trace(tmp_path / "t.swf", ["; Note: page\x0ctwo", JOB.format(n=1, t=0), JOB.format(n=2, t=0)[:-3]])
    refused(capsys, ["swf", str(trace)], "t.swf: line 3: expected 18 fields, found 17")


# ---------------------------------------------------------------------------- 2. the jobs bound
def test_swf_refuses_more_jobs_than_the_jobs_bound(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WATTSCHED_LIMIT_JOBS", "2")
    trace = _trace(tmp_path / "t.swf", [JOB.format(n=n, t=10 * n) for n in range(1, 5)])
    out = tmp_path / "w.json"
    refused(capsys, ["swf", str(trace), "--output", str(out)], "t.swf: line 3: 3 jobs kept", "--max-jobs",
            "at most 2 (raise with WATTSCHED_LIMIT_JOBS)")
    assert not out.exists()
    assert main(["swf", str(trace), "--max-jobs", "2", "--output", str(out)]) == 0  # what the message advises
    assert len(json.loads(out.read_text())["jobs"]) == 2


# ------------------------------------------------------------------------------------ 3. memory
def _memory_allowing(monkeypatch: pytest.MonkeyPatch, allowed_bytes: float) -> None:
    available = available_memory_bytes()
    if available is None:
        pytest.skip("the available memory is unknown here")
    monkeypatch.setenv("WATTSCHED_LIMIT_MEMORY_FRACTION", repr(allowed_bytes / available))


def test_swf_refuses_a_trace_beyond_the_memory(capsys, tmp_path, monkeypatch):
    trace = _trace(tmp_path / "t.swf", [JOB.format(n=n, t=n) for n in range(1, 101)])  # 5 KB
    _memory_allowing(monkeypatch, 10_000)
    out = tmp_path / "w.json"
    refused(capsys, ["swf", str(trace), "--output", str(out)], "t.swf: reading this SWF trace would need about",
            "WATTSCHED_LIMIT_MEMORY_FRACTION")
    assert not out.exists()


def test_swf_refuses_a_gzip_trace_whose_text_is_beyond_the_memory(capsys, tmp_path):
    trace = tmp_path / "t.swf.gz"  # 1 MB of comments in 2 KB
    trace.write_bytes(gzip.compress((";" + "x" * 999 + "\n").encode() * 1000 + JOB.format(n=1, t=0).encode()))
    assert trace.stat().st_size < 20_000
    with pytest.MonkeyPatch.context() as monkeypatch:
        _memory_allowing(monkeypatch, 2_000_000)  # the file's 2 KB pass, its 1 MB of text do not
        refused(capsys, ["swf", str(trace)], "t.swf.gz: reading this SWF trace (at least 1,001,047 bytes once decompressed) "
                                             "would need about")
    assert main(["swf", str(trace), "--output", str(tmp_path / "w.json")]) == 0  # read within the default share


def test_swf_stops_decompressing_once_the_text_is_beyond_the_memory(capsys, tmp_path):
    """A gzip bomb: the text is refused by the part decompressed so far, not once all of it was allocated."""
    trace = tmp_path / "t.swf.gz"
    trace.write_bytes(gzip.compress((";" + "x" * 999 + "\n").encode() * 1000 + JOB.format(n=1, t=0).encode()))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr("wattsched.workloads.swf._GUNZIP_CHUNK_BYTES", 65_536)
        _memory_allowing(monkeypatch, 2_000_000)  # 100 KB of text at 20 bytes a byte: the second chunk is too many
        refused(capsys, ["swf", str(trace)], "t.swf.gz: reading this SWF trace (at least 131,072 bytes once "
                                             "decompressed) would need about")


def test_swf_reads_every_gzip_member_and_refuses_a_truncated_one(capsys, tmp_path):
    trace = tmp_path / "t.swf.gz"  # two members, as `cat a.gz b.gz` makes: both are read (gzip.decompress does)
    trace.write_bytes(gzip.compress(JOB.format(n=1, t=0).encode() + b"\n")
                      + gzip.compress(JOB.format(n=2, t=5).encode() + b"\n"))
    out = tmp_path / "w.json"
    assert main(["swf", str(trace), "--output", str(out)]) == 0
    assert len(json.loads(out.read_text())["jobs"]) == 2
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(trace.read_bytes()[:30])
    capsys.readouterr()
    refused(capsys, ["swf", str(cut)], "cut.swf.gz: a gzip file that does not decompress")


# ---------------------------------------------------------------------- 4. --mirror with a file
def test_swf_refuses_a_mirror_it_would_ignore(capsys, tmp_path):
    trace = _trace(tmp_path / "t.swf", [JOB.format(n=1, t=0)])
    out = tmp_path / "w.json"
    refused(capsys, ["swf", str(trace), "--mirror", str(tmp_path / "nowhere"), "--output", str(out)],
            f"--mirror {tmp_path / 'nowhere'}: only with a trace name of 'wattsched traces'")
    assert not out.exists()


# -------------------------------------------------------------------------------- 5. --busiest
def test_swf_busiest_beyond_any_time_is_refused(capsys, tmp_path):
    trace = _trace(tmp_path / "t.swf", ["; MaxProcs: 8", JOB.format(n=1, t=0)])
    usage_error(capsys, ["swf", str(trace), "--busiest", "1e300"], "argument --busiest: 1e+300 days",
                "WATTSCHED_LIMIT_TIME_S")


def test_swf_busiest_prints_its_load_in_a_few_digits(capsys, tmp_path):
    trace = _trace(tmp_path / "t.swf", ["; MaxProcs: 8", JOB.format(n=1, t=0)])
    assert main(["swf", str(trace), "--busiest", "1e-300", "--output", str(tmp_path / "w.json")]) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "busiest 1e-300 days: from 0 s, offered load 2.89e+296", first


# ----------------------------------------------------------------------------- 6. --output -
@pytest.mark.parametrize("argv", [["synth", "--hosts", "2", "--seed", "1", "--days", "0.1"], ["lightesp"],
                                  ["platform", "--hosts", "2"]])
def test_output_dash_is_standard_output(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--output", "-"]) == 0
    assert capsys.readouterr().out.lstrip().startswith(("{", "<?xml"))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------- 7. the EAMC mean's options
def test_eamc_mean_res_out_of_reach_names_the_options(capsys, tmp_path):
    refused(capsys, ["eamc-workload", "--jobs", "10", "--mean-res", "512", "--output", str(tmp_path / "w.json")],
            "mean_res (--mean-res) 512 cannot be reached with jobs of at most 512 hosts (--max-res)")
    assert not (tmp_path / "w.json").exists()


def test_platform_refuses_flat_hosts_beyond_the_memory(capsys, tmp_path):
    out = tmp_path / "p.xml"
    with pytest.MonkeyPatch.context() as monkeypatch:
        _memory_allowing(monkeypatch, 5_000_000)  # 1,000 flat hosts take about 10 MB
        refused(capsys, ["platform", "--hosts", "1000", "--flat", "--output", str(out)],
                "platform: hosts: a platform of 1000 flat hosts (--flat;", "would need about")
        assert main(["platform", "--hosts", "1000", "--output", str(out)]) == 0  # the <cluster> form: a few KB
    assert main(["platform", "--hosts", "1000", "--flat", "--output", str(out)]) == 0  # within the default share
