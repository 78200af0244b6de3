"""Bad inputs hunt 15 found and left: output names holding a control character (``run -e $'o/out\\n'`` wrote
``o/out\\n_jobs.csv``...); ``platform --prefix x,y`` (host names Batsim's ``--add-role-to-hosts host1,host2:role``
cannot name); a fair-share ``shares`` keyed by an empty user name; SWF headers giving a field the conversion reads
twice with two values, or a UnixStartTime (or, for ``--procs-per-host node``, a MaxNodes) that is no number; jobs
files whose ``success`` contradicts ``final_state``, and Batsim time series starting before 0 s.

Every refusal happens before any work and writes nothing; the output checks read copies of real Batsim's
recordings (none of which, nor any golden output, holds such a row: the last test reads them all).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_inputs_checks import recording_outputs, refused, set_field, usage_error
from wattsched import api
from wattsched.base.errors import InputError, OptionError, OutputError
from wattsched.cli import main
from wattsched.workloads.swf import read_swf_trace, swf_to_batsim

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "taurus_16.xml")
WORKLOAD = str(ROOT / "workloads" / "demo_taurus16.json")

ONE_JOB = {"nb_res": 2, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", "walltime": 100, "user": "u1"}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}
CONTROL = ["\n", "\r", "\x1b", "\x7f", "\x85", "\u2028"]


# ------------------------------------------------------------------------- 1. output names and control characters
@pytest.mark.parametrize("char", CONTROL, ids=repr)
def test_an_output_prefix_holding_a_control_character_is_a_usage_error(capsys, tmp_path, monkeypatch, char):
    """``-e $'o/out\\n'`` wrote five files whose names end in a line break."""
    monkeypatch.chdir(tmp_path)
    err = usage_error(capsys, ["run", PLATFORM, WORKLOAD, "-e", f"o/out{char}", "--tau", "1"],
                      "argument -e/--export:", f"holds the control character {repr(char)[1:-1]}")
    assert char not in err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["plot", "R", "-d", "o\n"], "argument -d/--output-dir:"),
    (["paraver", "R", "--out-dir", "o\x1b"], "argument --out-dir:"),
    (["replay", "R", "--keep-outputs", "k\n"], "argument --keep-outputs:"),
    (["regress", "R", "g\n"], "argument golden:"),
    (["sweep", "grid.yaml", "--out", "s\n"], "argument --out:"),
    (["reproduce", "esc", "--report-dir", "r\n"], "argument --report-dir:"),
    (["web", "--workspace", "w\n"], "argument --workspace:"),
], ids=["plot", "paraver", "replay", "regress", "sweep", "reproduce", "web"])
def test_every_folder_we_write_refuses_a_control_character(capsys, tmp_path, monkeypatch, argv, option):
    """The folders written into (-d, --keep-outputs, a golden folder, --out, --report-dir, --workspace) refuse a
    control character as the output prefix does (hunt 15b left them: a folder named with a line break was made)."""
    monkeypatch.chdir(tmp_path)
    import uvicorn  # a web page that got past the check would be served for ever: fail instead

    def no_server(*args: object, **kwargs: object) -> None:
        raise AssertionError("the web page was served")

    monkeypatch.setattr(uvicorn, "run", no_server)
    usage_error(capsys, argv, option, "control character")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("char", ["\n", "\x1b"], ids=repr)
def test_an_output_file_holding_a_control_character_is_a_usage_error(capsys, tmp_path, char):
    usage_error(capsys, ["synth", "--hosts", "2", "--seed", "1", "--output", str(tmp_path / f"w{char}.json")],
                "argument --output:", "control character")
    assert list(tmp_path.iterdir()) == []


def test_simulate_refuses_an_out_holding_a_control_character(tmp_path):
    with pytest.raises(OutputError, match=r"^output prefix \(out, -e\) '.*/run/out\\n': holds the control "
                                          r"character \\n \(U\+000A\)"):
        api.simulate(api.taurus_platform(2), ONE_JOB, "fcfs", out=f"{tmp_path}/run/out\n")
    assert not (tmp_path / "run").exists()


def test_a_runs_file_prefix_holding_a_control_character_is_refused(tmp_path):
    from wattsched.experiments.sweep import load_runs

    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([{"name": "a", "platform": PLATFORM, "workload": WORKLOAD, "scheduler": "fcfs",
                                 "options": {}, "prefix": str(tmp_path / "a" / "out\x1b")}]))
    with pytest.raises(OptionError, match=r"runs\.json: run 0 \('a'\): prefix: '.*out\\x1b' holds the control "
                                          "character"):
        load_runs(runs)


def test_output_names_in_any_script_are_still_taken(tmp_path):
    from wattsched.experiments.runner import check_prefix

    paths = check_prefix(tmp_path / "résultats d'été" / "run ١")
    assert paths["jobs"].name == "run ١_jobs.csv" and not (tmp_path / "résultats d'été").exists()
    out = tmp_path / "synthé.json"
    assert main(["synth", "--hosts", "2", "--seed", "1", "--days", "0.01", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["nb_res"] == 2


# ------------------------------------------------------------------------------ 2. host names of wattsched platform
@pytest.mark.parametrize("node", ["taurus", "esc", "upas"])
@pytest.mark.parametrize("option, value", [("--prefix", "x,y"), ("--prefix", "node:"), ("--suffix", ",b"),
                                           ("--suffix", "a:b")])
def test_platform_refuses_host_names_batsim_cannot_list(capsys, tmp_path, node, option, value):
    """``--prefix x,y`` wrote hosts ``x,y0``...: SimGrid takes them, but Batsim's ``--add-role-to-hosts`` reads
    ``host1,host2:role``, so no such host could be named there."""
    out = tmp_path / "p.xml"
    refused(capsys, ["platform", "--hosts", "2", "--node", node, option, value, "--output", str(out)],
            f"{option}: host name {option[2:]} '{value}' must not contain a comma or a colon",
            "--add-role-to-hosts")
    assert not out.exists()


def test_platform_names_the_option_of_a_host_name_xml_cannot_hold(capsys, tmp_path):
    refused(capsys, ["platform", "--hosts", "2", "--prefix", 'a"b', "--output", str(tmp_path / "p.xml")],
            "--prefix: host name prefix 'a\"b' must not contain spaces, quotes")
    assert not (tmp_path / "p.xml").exists()


def test_the_generators_refuse_them_too():
    from wattsched.platforms.generate import esc_platform_xml, taurus_platform_xml

    with pytest.raises(OptionError, match="^host name prefix 'x,y' must not contain a comma or a colon"):
        taurus_platform_xml(2, prefix="x,y")
    with pytest.raises(OptionError, match="^host name suffix ':' must not contain a comma or a colon"):
        esc_platform_xml(2, suffix=":", cluster=False)


@pytest.mark.parametrize("prefix", ["n-", "nœud_", "rack.1-", "h"])
def test_host_names_of_other_characters_are_still_generated(capsys, tmp_path, prefix):
    out = tmp_path / "p.xml"
    assert main(["platform", "--hosts", "2", "--flat", "--prefix", prefix, "--output", str(out)]) == 0
    assert f'id="{prefix}1"' in out.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------- 3. fair-share shares
@pytest.mark.parametrize("scheduler", ["fairshare", "efs"])
@pytest.mark.parametrize("key, shown", [("", '"" is an empty'), (" ", '" " is a blank')])
def test_a_share_of_an_empty_user_name_is_refused(tmp_path, scheduler, key, shown):
    """``shares: {"": 1}`` named no user and weighed in eq. 1's sum of the shares."""
    with pytest.raises(OptionError, match=f"^option 'shares' of order '{scheduler}': the key {shown} user name"):
        api.simulate(api.taurus_platform(2), ONE_JOB, scheduler, {"shares": {key: 1, "u1": 2}},
                     out=tmp_path / "run" / "out")
    assert not (tmp_path / "run").exists()


def test_run_refuses_a_share_of_an_empty_user_name(capsys, tmp_path):
    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(api.taurus_platform(2))
    workload.write_text(json.dumps(ONE_JOB))
    refused(capsys, ["run", str(platform), str(workload), "-s", "fairshare", "-o", '{"shares": {"": 1}}',
                     "-e", str(tmp_path / "run" / "out")],
            "option 'shares' of order 'fairshare': the key \"\" is an empty user name")
    assert not (tmp_path / "run").exists()


def test_shares_of_named_users_still_run():
    result = api.simulate(api.taurus_platform(2), ONE_JOB, "fairshare", {"shares": {"u1": 2, "absent": 1}})
    assert result.metrics["nb_jobs_completed_successfully"] == 1


# ----------------------------------------------------------------------------------------------------- 4. SWF headers
JOB = "1 100 5 60 2 -1 -1 2 120 -1 1 3 1 -1 1 -1 -1 -1\n"


def _swf(tmp_path: Path, header: str) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(header + JOB)
    return path


@pytest.mark.parametrize("header, where, shown", [
    ("; MaxProcs: 8\n; Note: two sizes\n; MaxProcs: 16\n", "line 3, header MaxProcs", "'16', while line 1 gives '8'"),
    ("; MaxNodes: 4\n; MaxNodes: 2\n; MaxProcs: 8\n", "line 2, header MaxNodes", "'2', while line 1 gives '4'"),
    ("; MaxProcs: 8\n; UnixStartTime: 1000000000\n; UnixStartTime: 1000000001\n", "line 3, header UnixStartTime",
     "'1000000001', while line 2 gives '1000000000'"),
    ("; MaxProcs: 8\n; TimeZoneString: US/Pacific\n; TimeZoneString: Europe/Paris\n",
     "line 3, header TimeZoneString", "'Europe/Paris', while line 2 gives 'US/Pacific'"),
])
def test_a_header_field_read_given_twice_with_two_values_is_refused(capsys, tmp_path, header, where, shown):
    """The first value was taken silently (the machine size of the first MaxProcs line)."""
    refused(capsys, ["swf", str(_swf(tmp_path, header)), "--output", str(tmp_path / "w.json")],
            f"t.swf: {where}: {shown}")
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize("value", ["x", "", "0x10", "soon 1000000000"])
def test_a_unix_start_time_that_is_no_number_is_refused(capsys, tmp_path, value):
    """``UnixStartTime: x`` was read as an unknown start: the workload's meta said none, without a word."""
    path = _swf(tmp_path, f"; MaxProcs: 8\n; UnixStartTime: {value}\n")
    refused(capsys, ["swf", str(path), "--output", str(tmp_path / "w.json")],
            f"t.swf: line 2, header UnixStartTime: {value.strip()!r} is not a number of seconds")
    assert not (tmp_path / "w.json").exists()


def test_a_max_nodes_that_is_no_number_is_refused_when_read(tmp_path):
    """With ``procs_per_host='node'`` it said '8/None is not a whole number of processors per node'."""
    path = _swf(tmp_path, "; MaxProcs: 8\n; MaxNodes: four\n")
    with pytest.raises(InputError, match="t.swf: line 2, header MaxNodes: 'four' is not a whole number"):
        swf_to_batsim(path, speed_flops=100e6, procs_per_host="node")
    assert swf_to_batsim(path, speed_flops=100e6)["nb_res"] == 8  # not read otherwise


def test_headers_real_logs_write_are_still_read(tmp_path):
    """Repeated notes, a field repeated with the same number (one with a comment), fields the conversion does not
    read (whatever they hold), and UnixStartTime numbers that give no date (left unknown, as before)."""
    path = _swf(tmp_path, "; Version: 2.2\n; Note: first\n; Note: second\n; MaxProcs: 8\n; MaxProcs: 8 (all)\n"
                          "; MaxJobs: many\n; UnixStartTime: 1000000000\n; UnixStartTime: 1000000000\n")
    header, jobs = read_swf_trace(path)
    assert (header.max_procs, header.unix_start_time, header.fields["Note"], len(jobs)) == (8, 1000000000, "first", 1)
    assert header.lines["UnixStartTime"] == 7
    for value in ("1e20", "8.5"):
        assert read_swf_trace(_swf(tmp_path, f"; UnixStartTime: {value}\n"))[0].unix_start_time is None


# ------------------------------------------------------------------------------------ 5. outputs no Batsim run writes
@pytest.mark.parametrize("command", ["metrics", "node-stats"])
@pytest.mark.parametrize("line, value, state", [(3, "0", "COMPLETED_SUCCESSFULLY"), (2, "1", "REJECTED"),
                                                (7, "1", "COMPLETED_WALLTIME_REACHED"), (3, "", "COMPLETED_SUCCESSFULLY"),
                                                (3, "2", "COMPLETED_SUCCESSFULLY")])
def test_a_success_contradicting_the_final_state_is_refused(capsys, tmp_path, command, line, value, state):
    """Batsim writes success=1 exactly for COMPLETED_SUCCESSFULLY (``simulator/outputs.py`` does as it; every
    recording agrees): another value is a hand-edited row that evalys and others would count otherwise."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    set_field(outputs / "out_jobs.csv", line, "success", value)
    refused(capsys, [command, str(outputs / "out")], "out_jobs.csv",
            f"line {line}, column 'success': {value or 'empty'}, while final_state is {state}")


@pytest.mark.parametrize("kind", ["consumed_energy", "machine_states", "pstate_changes"])
def test_a_time_before_the_start_is_refused(capsys, tmp_path, kind):
    """A first ``time`` of -5 s was taken (the energy file's time never falls: only its first row can be it)."""
    outputs = recording_outputs(tmp_path / "outputs", "fcfs-compute")
    set_field(outputs / f"out_{kind}.csv", 2, "time", "-5")
    written = tmp_path / "written"
    refused(capsys, ["paraver", str(outputs / "out"), "-d", str(written)], f"out_{kind}.csv",
            "line 2, column 'time': -5 s, before the simulation's start at 0 s")
    assert not written.exists()


def test_every_recording_and_golden_output_is_still_read():
    from wattsched.analysis.outputs import load_outputs

    jobs_files = sorted(p for folder in (ROOT / "tests" / "fixtures", ROOT / "tests" / "golden")
                        for p in folder.rglob("*_jobs.csv"))
    assert len(jobs_files) > 20
    for path in jobs_files:
        outputs = load_outputs(path.parent, path.name[: -len("_jobs.csv")])
        assert (outputs.jobs["success"] == (outputs.jobs["final_state"] == "COMPLETED_SUCCESSFULLY")).all()
