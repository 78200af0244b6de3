"""Hunt 8b: what the previous hunt found and left.

* ``node-stats --baseline`` took the outputs of an unrelated run (another number of hosts, other jobs) and printed
  time and energy ratios that compared nothing.
* Control characters in job ids (ESC, U+001C, U+2028) went raw to the terminal from ``regress`` and the error
  line; a NUL, which Batsim reads as the end of the id (rapidjson ``GetString()`` into a ``std::string``,
  ``Job::from_json`` in ``src/jobs.cpp``), was accepted.
* ``plot --budget-power 1e308`` (or ``--window 0,1e308``) wrote its plots with a numpy overflow warning.
* ``speed="1 Gf"`` was read as 1 Gflop/s; SimGrid 3.32's ``xbt_parse_get_value_with_unit`` (``strtod``, then the
  rest as the unit) refuses it: ``unknown unit:  Gf``.
* A UTF-16 workload was read (``json.loads`` decodes bytes in UTF-16); Batsim reads UTF-8 only (rapidjson
  ``Document::Parse`` of the bytes as a C string, ``src/workload.cpp``). A UTF-16 grid or options file was refused
  with Python's raw codec message.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tests.bad_inputs_checks import refused, usage_error
from wattsched.cli import main

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"

MASTER = '<host id="master_host" speed="100Mf"/>'
HOST = '<host id="{name}" speed="{speed}"><prop id="wattage_per_state" value="95:190"/></host>'


def platform_xml(*speeds: str) -> str:
    hosts = "".join(HOST.format(name=f"h{i}", speed=s) for i, s in enumerate(speeds))
    return ("<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
            f"<zone id=\"AS0\" routing=\"Full\">\n{MASTER}{hosts}\n</zone>\n</platform>\n")


def workload(ids: list, subtime: float = 0.0, res: int = 1, nb_res: int = 2) -> str:
    return json.dumps({"nb_res": nb_res, "profiles": {"a": {"type": "delay", "delay": 10}},
                       "jobs": [{"id": i, "subtime": subtime, "res": res, "profile": "a", "walltime": 100}
                                for i in ids]})


def simulate(tmp_path: Path, name: str, text: str, hosts: int = 2) -> Path:
    """Run FCFS on ``hosts`` hosts with the workload ``text``; the export prefix."""
    platform = tmp_path / f"p{hosts}.xml"
    platform.write_text(platform_xml(*["100Mf"] * hosts))
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    prefix = tmp_path / name / "out"
    assert main(["run", str(platform), str(path), "-s", "fcfs", "-e", str(prefix), "-q"]) == 0
    return prefix


# ------------------------------------------------------------------------------ 1. node-stats --baseline
def test_node_stats_refuses_a_baseline_with_another_number_of_hosts(capsys):
    err = refused(capsys, ["node-stats", str(REFERENCE / "esc-states"), "--baseline", str(REFERENCE / "fcfs-compute")],
                  "esc-states", "fcfs-compute", "6 compute hosts against 4 in the baseline")
    assert "baseline" in err


@pytest.mark.parametrize("other,needles", [
    (workload([1, 2]), ("not the same jobs", "'w0!2' only in the baseline")),
    (workload([1], subtime=5.0), ("job 'w0!1'.submission_time", "0.000000 against 5.000000")),
    (workload([1], res=2), ("job 'w0!1'.requested_number_of_resources", "1 against 2")),
])
def test_node_stats_refuses_a_baseline_of_other_jobs(tmp_path, capsys, other, needles):
    run = simulate(tmp_path, "run", workload([1]))
    base = simulate(tmp_path, "base", other)
    capsys.readouterr()
    refused(capsys, ["node-stats", str(run), "--baseline", str(base)], f"{run} and baseline {base}", *needles)


def test_node_stats_takes_a_baseline_of_the_same_jobs_and_hosts(tmp_path, capsys):
    run = simulate(tmp_path, "run", workload([1, 2]))
    base = simulate(tmp_path, "base", workload([1, 2]))
    capsys.readouterr()
    assert main(["node-stats", str(run), "--baseline", str(base), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["time_ratio"] == 1.0


# --------------------------------------------------------------------------------- 2. control characters
IDS = ["\x1b[31mred", "x\u2028y", "z\x1cq"]


def test_regress_prints_control_characters_of_job_ids_escaped(tmp_path, capsys):
    """Batsim accepts them in an id (it only refuses '!'), so the loader does too; the printers escape them."""
    run = simulate(tmp_path, "run", workload(IDS))
    golden = simulate(tmp_path, "golden", workload(IDS, subtime=5.0))
    capsys.readouterr()
    assert main(["regress", str(run), str(golden)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u2028" not in out and "\x1c" not in out
    assert "job \\x1b[31mred: submission_time" in out and "job x\\u2028y" in out and "job z\\x1cq" in out


def test_the_error_line_escapes_control_characters(tmp_path, capsys):
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml("100Mf", "100Mf"))
    path = tmp_path / "w.json"
    path.write_text(workload(["\x1b]0;title\x07\x1b[2J"], subtime=-1.0))
    err = refused(capsys, ["run", str(platform), str(path), "-e", str(tmp_path / "o" / "out")],
                  "\\x1b]0;title\\x07\\x1b[2J")
    assert "\x1b" not in err and "\x07" not in err
    assert not (tmp_path / "o").exists()


def test_metrics_table_escapes_its_title():
    from wattsched.analysis.metrics import format_table

    assert "\x1b" not in format_table({"makespan_s": 1.0}, title="\x1b[2Jrun")


def test_log_lines_escape_control_characters_but_keep_line_breaks():
    import logging

    from wattsched.cli import _PrintableFormatter

    record = logging.LogRecord("w", logging.WARNING, __file__, 1, "user %s\nnext", ("\x1b[31mbob\u2028",), None)
    line = _PrintableFormatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert line == "WARNING w: user \\x1b[31mbob\\u2028\nnext"


@pytest.mark.parametrize("job,profile,needle", [
    ("a\u0000b", "a", "it would cut this one to 'w0!a'"),
    ("a", "p\u0000q", "it would cut this one to 'p'"),
])
def test_a_nul_in_a_job_id_or_profile_name_is_refused(tmp_path, capsys, job, profile, needle):
    """Batsim reads ids and profile names with GetString() into a std::string: it would stop at the NUL."""
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml("100Mf"))
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 1, "profiles": {profile: {"type": "delay", "delay": 10}},
                                "jobs": [{"id": job, "subtime": 0, "res": 1, "profile": profile}]}))
    refused(capsys, ["run", str(platform), str(path), "-e", str(tmp_path / "o" / "out")], "NUL", needle)
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------- 3. plot bounds
@pytest.mark.parametrize("argv,needle", [
    (["--budget-power", "1e308"], "--budget-power 1e+308"),
    (["--budget-power", "1e299"], "--budget-power 1e+299"),
    (["--window", "0,1e308"], "window 0,1e+308 is beyond any simulated time"),
])
def test_plot_refuses_an_absurd_budget_and_writes_nothing(tmp_path, capsys, argv, needle):
    out = tmp_path / "plots"
    check = usage_error if argv[0] == "--window" else refused
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(capsys, ["plot", str(REFERENCE / "dvfs-energy"), "-d", str(out), *argv], needle)
    assert not out.exists()


def test_plot_draws_a_budget_within_the_bound_without_warning(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["plot", str(REFERENCE / "dvfs-energy"), "-d", str(tmp_path), "--budget-power", "1e298",
                     "--window", "0,1e10"]) == 0
    assert (tmp_path / "power.png").exists()


def test_metrics_refuses_a_window_beyond_any_simulated_time(capsys):
    """was: ``window_energy_j`` inf."""
    usage_error(capsys, ["metrics", str(REFERENCE / "dvfs-energy"), "--window", "0,1e308"], "--window", "1e+10 s")


@pytest.mark.parametrize("command", [["run", "p.xml", "w.json"], ["swf", "t.swf"]])
def test_run_and_swf_refuse_a_window_beyond_any_simulated_time(capsys, command):
    """``run --window`` (the metrics' window) and ``swf --window`` (an extract of the trace) took any end."""
    usage_error(capsys, [*command, "--window=-1e300,5"], "--window", "beyond any simulated time", "1e+10 s")


# ------------------------------------------------------------------------------------- 4. speed units
@pytest.mark.parametrize("speed", ["1 Gf", "100 Mf,50Mf", "1Gf, 2\tMf"])
def test_a_space_between_a_speed_and_its_unit_is_refused(tmp_path, capsys, speed):
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml(speed))
    path = tmp_path / "w.json"
    path.write_text(workload([1], nb_res=1))
    refused(capsys, ["run", str(platform), str(path), "-e", str(tmp_path / "o" / "out")],
            "host 'h0'.speed", "a space between the number and its unit")


def test_spaces_around_a_pstate_speed_are_still_read():
    """SimGrid trims each pstate's speed (boost::trim in xbt_parse_get_all_speeds)."""
    from wattsched.energy_models.power import parse_speed_list

    assert parse_speed_list(" 1Gf , 500Mf ") == (1e9, 5e8)


# ------------------------------------------------------------------------------------------ 5. encodings
UTF16 = "not UTF-8 text (it looks like UTF-16)"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_workload_not_in_utf8_is_refused(tmp_path, capsys, encoding):
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml("100Mf"))
    path = tmp_path / "w.json"
    path.write_bytes(workload([1], nb_res=1).encode(encoding))
    refused(capsys, ["run", str(platform), str(path), "-e", str(tmp_path / "o" / "out")],
            str(path), UTF16 if "16" in encoding else "it looks like UTF-32")
    refused(capsys, ["metrics", str(REFERENCE / "fcfs-compute"), "--workload", str(path)], str(path), "not UTF-8")


def test_a_workload_with_a_utf8_byte_order_mark_is_still_read(tmp_path, capsys):
    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml("100Mf"))
    path = tmp_path / "w.json"
    path.write_bytes(b"\xef\xbb\xbf" + workload([1], nb_res=1).encode())
    assert main(["run", str(platform), str(path), "-e", str(tmp_path / "o" / "out"), "-q"]) == 0


def test_options_grid_and_runs_files_in_utf16_are_refused_in_one_line(tmp_path, capsys):
    from wattsched.base.errors import InputError
    from wattsched.experiments.grid import load_grid

    platform = tmp_path / "p.xml"
    platform.write_text(platform_xml("100Mf"))
    path = tmp_path / "w.json"
    path.write_text(workload([1], nb_res=1))
    options = tmp_path / "o.json"
    options.write_bytes('{"placement": "best-fit"}'.encode("utf-16"))
    err = refused(capsys, ["run", str(platform), str(path), "-s", "easy-backfill", "-o", f"@{options}",
                           "-e", str(tmp_path / "o" / "out")], f"-o @{options}", UTF16)
    assert "codec" not in err
    grid = tmp_path / "g.yaml"
    grid.write_bytes(f"platforms: [{platform}]\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"it looks like UTF-16"):
        load_grid(grid)
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / "s")], str(grid), UTF16)
    runs = tmp_path / "runs.json"
    runs.write_bytes("[]".encode("utf-16"))
    refused(capsys, ["sweep", str(runs), "--out", str(tmp_path / "s")], str(runs), UTF16)
    assert not (tmp_path / "s").exists()


def test_usage_errors_escape_the_command_lines_control_characters(capsys):
    """argparse quotes unknown words as they are: an ESC in one drove the terminal."""
    usage_error(capsys, ["run", "p.xml", "w.json", "\x1b[31mred"], "unrecognized arguments: \\x1b[31mred")
