"""Hunt 8: bad inputs that still gave a traceback, a silent accept or half-written outputs.

* SIGTERM (``timeout``, ``docker stop``) while ``wattsched run`` writes its outputs left the five temporary
  ``.out_*.csv.XXXX`` files (and the folder the run created) behind: only Ctrl-C cleaned up.
* A platform element outside SimGrid's DTD (``<hots>``, ``<Host>``, a namespaced ``<x:host>``, a ``<porp>`` in
  a host) was ignored: the platform silently lost a host or a property. ``<include>`` (removed in SimGrid 3.18)
  and a ``<trace_connect>`` changing a host's speed or availability were ignored too.
* A result folder with a time of 1e308 s (finite, beyond any simulation) gave a traceback (OverflowError) in
  ``node-stats`` and ``paraver``; pstate changes out of time order were read as they came; a negative, fractional
  or huge ``requested_number_of_resources``, or a negative ``waiting_time``/``execution_time``, silently changed
  the utilization and the waiting and stretch metrics.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused
from wattsched.cli import main

ROOT = Path(__file__).resolve().parents[1]

MASTER = '<host id="master_host" speed="100Mf"/>'
HOST = ('<host id="{name}" speed="100Mf"><prop id="wattage_per_state" value="95:190"/>'
        '<prop id="site" value="s1"/></host>')
WORKLOAD = ('{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "a", "walltime": 100}], '
            '"profiles": {"a": {"type": "delay", "delay": 10}}}')


def platform_xml(body: str) -> str:
    return ("<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
            f"<zone id=\"AS0\" routing=\"Full\">\n{body}\n</zone>\n</platform>\n")


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml(MASTER + HOST.format(name="h0") + HOST.format(name="h1")))
    workload = tmp_path / "w.json"
    workload.write_text(WORKLOAD)
    return platform, workload


# ------------------------------------------------------------------------------------------------ SIGTERM
SIGTERM_WHILE_WRITING = textwrap.dedent("""
    import os, signal, sys, time
    import wattsched.simulator.outputs as outputs
    first = outputs.consumed_energy_lines
    def stopped(sim):  # the fourth of the five files: three are written, the run is then stopped
        yield from first(sim)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    outputs.consumed_energy_lines = stopped
    from wattsched.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("folder_exists", [True, False])
def test_sigterm_while_the_outputs_are_written_leaves_nothing(inputs, tmp_path, folder_exists):
    """was: killed at once (status -15), the five ``.out_*.csv.XXXX`` temporary files left in the folder."""
    platform, workload = inputs
    out = tmp_path / "out"
    if folder_exists:
        out.mkdir()
    done = subprocess.run([sys.executable, "-c", SIGTERM_WHILE_WRITING, "run", str(platform), str(workload),
                           "-e", str(out / "run"), "-q"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip() == "wattsched: interrupted"
    if folder_exists:
        assert list(out.iterdir()) == []
    else:
        assert not out.exists()


# ----------------------------------------------------------------------------------------- platform XML
@pytest.mark.parametrize("body, needles", [
    (MASTER + HOST.format(name="h0") + HOST.format(name="h1").replace("<host", "<hots").replace("</host>", "</hots>"),
     ["<hots>", "unknown element inside <zone>"]),
    (MASTER + HOST.format(name="h0") + HOST.format(name="h1").replace("<host", "<Host").replace("</host>", "</Host>"),
     ["<Host>", "unknown element"]),
    (MASTER + HOST.format(name="h0")
     + HOST.format(name="h1").replace("<host", '<x:host xmlns:x="urn:x"').replace("</host>", "</x:host>"),
     ["<{urn:x}host>", "unknown element"]),
    (MASTER + HOST.format(name="h0") + HOST.format(name="h1").replace('<prop id="site"', '<porp id="site"'),
     ["host 'h1'.<porp>", "unknown element inside <host>"]),
    (MASTER + '<include file="more_hosts.xml"/>' + HOST.format(name="h0"),
     ["<include file='more_hosts.xml'>", "removed in SimGrid 3.18"]),
    (MASTER + HOST.format(name="h0") + '<trace id="t" periodicity="1">0 0.5\n</trace>'
     '<trace_connect trace="t" element="h0" kind="SPEED"/>',
     ["<trace_connect element='h0'>", "kind SPEED is not supported"]),
    (MASTER + HOST.format(name="h0") + '<trace id="t" periodicity="1">0 0\n</trace>'
     '<trace_connect trace="t" element="h0"/>',
     ["<trace_connect element='h0'>", "kind HOST_AVAIL is not supported"]),
])
def test_an_element_simgrid_does_not_know_is_refused_not_ignored(inputs, tmp_path, capsys, body, needles):
    """was: ignored: the run went on with one host fewer (the two-host job rejected), or without a property."""
    platform, workload = inputs
    platform.write_text(platform_xml(body))
    refused(capsys, ["run", str(platform), str(workload), "-e", str(tmp_path / "o" / "out"), "-q"],
            "p.xml", *needles)
    assert not (tmp_path / "o").exists()


def test_the_rest_of_simgrids_dtd_is_still_ignored(inputs, tmp_path, capsys):
    platform, workload = inputs
    host = HOST.format(name="h1").replace("</host>", '<disk id="d" read_bw="1GBps" write_bw="1GBps"/></host>')
    # where SimGrid's DTD puts them: <config> first in <platform>, <actor> last, routes last in their zone
    platform.write_text(platform_xml(
        MASTER + HOST.format(name="h0") + host
        + '<router id="r"/><link id="l" bandwidth="1GBps" latency="0s"/>'
        '<backbone id="b" bandwidth="1GBps" latency="0s"/><host_link id="h0" up="l" down="l"/>'
        '<trace id="t" periodicity="1">0 1\n</trace><trace_connect trace="t" element="l" kind="BANDWIDTH"/>'
        '<route src="h0" dst="h1"><link_ctn id="l"/></route>')
        .replace('<zone id="AS0"', '<config><prop id="network/model" value="CM02"/></config><zone id="AS0"')
        .replace("</platform>", '<actor host="h0" function="f"><argument value="1"/></actor></platform>'))
    assert main(["run", str(platform), str(workload), "-e", str(tmp_path / "o" / "out"), "-q"]) == 0
    assert "rejected by the scheduler" not in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ result folders
@pytest.fixture
def run(tmp_path) -> Path:
    """The five outputs of a recorded Batsim run with shutdowns and boots."""
    return recording_outputs(tmp_path / "run", "shutdown-boot")


def set_cell(path: Path, line: int, column: str, value: str) -> None:
    """Line ``line`` (1 = header; -1 = the last) of CSV ``path`` with ``column`` set to ``value``."""
    lines = path.read_text().splitlines()
    index = lines[0].split(",").index(column)
    cells = lines[line if line < 0 else line - 1].split(",")
    cells[index] = value
    lines[line if line < 0 else line - 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("kind, line, column, command", [
    ("machine_states", -1, "time", ["node-stats"]),
    ("machine_states", -1, "time", ["paraver", "-d", "{tmp}/pv"]),
    ("pstate_changes", -1, "time", ["node-stats"]),
    ("jobs", 6, "finish_time", ["metrics"]),
    ("consumed_energy", -1, "time", ["metrics"]),
])
def test_a_time_beyond_any_simulation_is_refused(run, tmp_path, capsys, kind, line, column, command):
    """was: OverflowError tracebacks (node-stats, paraver: durations of inf), metrics of inf."""
    path = run / f"out_{kind}.csv"
    set_cell(path, line, column, "1e308")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command] + [str(run)]
    refused(capsys, argv, path.name, f"column '{column}'", "1e+308 s", "WATTSCHED_LIMIT_TIME_S")
    assert not (tmp_path / "pv").exists()


def test_pstate_changes_out_of_time_order_are_refused(run, capsys):
    """was: read in the order written: an error about a job on a host that is off, or wrong statistics."""
    path = run / "out_pstate_changes.csv"
    lines = path.read_text().splitlines()
    lines[4], lines[5] = lines[5], lines[4]
    path.write_text("\n".join(lines) + "\n")
    refused(capsys, ["node-stats", str(run)], "out_pstate_changes.csv", "line 6, column 'time'",
            "lower than the row before")


@pytest.mark.parametrize("value, needle", [
    ("-3", "-3 is not a count of hosts"),
    ("2.5", "2.5 is not a count of hosts"),
    ("1e308", "WATTSCHED_LIMIT_HOSTS"),
])
def test_requested_hosts_that_are_no_count_are_refused(run, capsys, value, needle):
    """was: taken: the utilization came out negative, lowered or infinite (a count of 2.5 was cut to 2 by dvfs)."""
    set_cell(run / "out_jobs.csv", 4, "requested_number_of_resources", value)
    refused(capsys, ["metrics", str(run)], "out_jobs.csv", "line 4, column 'requested_number_of_resources'", needle)


@pytest.mark.parametrize("column", ["waiting_time", "execution_time"])
def test_negative_waiting_and_execution_times_are_refused(run, capsys, column):
    """The metrics read these columns as they are: a negative one lowered the mean waiting time and stretch."""
    set_cell(run / "out_jobs.csv", 4, column, "-100.000000")
    refused(capsys, ["metrics", str(run)], "out_jobs.csv", f"line 4, column '{column}'", "negative")


def test_the_recorded_run_itself_passes(run, capsys):
    assert main(["metrics", str(run)]) == 0
    assert main(["node-stats", str(run)]) == 0


# ---------------------------------------------------------------------------------------- byte-order marks
def test_an_options_file_with_a_byte_order_mark_is_read_as_a_workload_is(inputs, tmp_path, capsys):
    """was: ``-o @opts.json`` saved by an editor that writes a UTF-8 BOM (Notepad) was refused, "Unexpected UTF-8
    BOM (decode using utf-8-sig)", while a workload or a grid with one is read."""
    platform, workload = inputs
    workload.write_bytes(b"\xef\xbb\xbf" + workload.read_bytes())
    options = tmp_path / "opts.json"
    options.write_bytes(b'\xef\xbb\xbf{"placement": "best-fit"}\r\n')
    assert main(["run", str(platform), str(workload), "-s", "easy-backfill", "-o", f"@{options}",
                 "-e", str(tmp_path / "o" / "out"), "-q"]) == 0, capsys.readouterr().err
    assert (tmp_path / "o" / "out_jobs.csv").exists()


def test_a_runs_file_with_a_byte_order_mark_is_read_as_a_grid_is(inputs, tmp_path):
    from wattsched.experiments.sweep import load_runs

    platform, workload = inputs
    runs = tmp_path / "runs.json"
    runs.write_bytes(b"\xef\xbb\xbf" + (f'[{{"name": "a", "platform": "{platform}", "workload": "{workload}", '
                                         f'"scheduler": "fcfs", "options": {{}}, "prefix": "{tmp_path}/a/out"}}]'
                                         ).encode())
    assert [run.name for run in load_runs(runs)] == ["a"]
