"""More bad input (issue 18, second round): generators that wrote files ``wattsched run`` then refused, a golden
update that copied a mangled run or made a folder of a prefix, a ``parallel`` profile on another number of hosts
than its job's ``res``, platform attributes that were ignored, an integer too long for Python to convert.

Same contract as :mod:`tests.test_bad_inputs`: exit status 2, one stderr line naming the file (or option) and
the field, no traceback, nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_bad_inputs import PLATFORM, check, cli, command, one_job, run_args, write  # noqa: F401 (fixture)
from wattsched.base.errors import InputError, OptionError

REFERENCE = Path(__file__).parent / "fixtures" / "batsim-reference"

SWF_HEADER = "; Version: 2.2\n; MaxProcs: {max_procs}\n"
SWF_LINE = "1 100 5 60 {procs} -1 -1 {procs} 120 -1 1 3 1 -1 1 -1 -1 -1\n"


def swf(tmp_path: Path, max_procs: str = "8", procs: str = "2", line: str | None = None) -> str:
    """A one-job SWF trace (header line 2 is MaxProcs, the job is line 3)."""
    return write(tmp_path, "t.swf", SWF_HEADER.format(max_procs=max_procs) + (line or SWF_LINE.format(procs=procs)))


# ------------------------------------------------------------------- 1. generators and run's bounds
def test_synth_longest_run_time_beyond_the_time_bound(tmp_path, cli):
    out = tmp_path / "out" / "w.json"
    check(cli("synth", "--hosts", "4", "--seed", "1", "--days", "1", "--max-runtime", "1e300", "--output", str(out)),
          "--max-runtime", "8e+300 s", "WATTSCHED_LIMIT_TIME_S")
    assert not out.parent.exists()


def test_synth_model_beyond_the_time_bound_through_the_api():
    import dataclasses

    from wattsched.workloads.synthetic import DEFAULT_MODEL, synthetic_week

    model = dataclasses.replace(DEFAULT_MODEL, runtime_range_s=(1.0, 2e9))  # 8 × 2e9 s > 1e10 s
    with pytest.raises(OptionError, match="runtime_range_s: .*WATTSCHED_LIMIT_TIME_S"):
        synthetic_week(4, seed=1, duration_s=86400.0, model=model)


@pytest.mark.parametrize(("rule", "needles"), [
    ("limit:1e300", ["--walltime", "limit:1e300", "WATTSCHED_LIMIT_TIME_S"]),
    ("factor:1e300", ["walltime rule 'factor:1e300'", "line 3", "WATTSCHED_LIMIT_TIME_S"]),
])
def test_swf_walltime_rule_beyond_the_time_bound(tmp_path, cli, rule, needles):
    trace = swf(tmp_path, line="1 100 5 60 2 -1 -1 2 -1 -1 1 3 1 -1 1 -1 -1 -1\n")  # no requested time
    out = tmp_path / "out" / "w.json"
    check(cli("swf", trace, "--walltime", rule, "--output", str(out)), *needles)
    assert not out.parent.exists()


def test_swf_requested_time_beyond_the_time_bound(tmp_path, cli):
    trace = swf(tmp_path, line="1 100 5 60 2 -1 -1 2 1e11 -1 1 3 1 -1 1 -1 -1 -1\n")
    check(cli("swf", trace, "--output", str(tmp_path / "w.json")),
          "t.swf", "line 3, field 'requested_time'", "WATTSCHED_LIMIT_TIME_S")
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("max_procs", "args", "needles"), [
    ("8", ["--hosts", "99999999999"], ["--hosts", "1e+11 hosts", "WATTSCHED_LIMIT_HOSTS"]),
    ("99999999999", [], ["t.swf", "header MaxProcs", "1e+11 hosts", "WATTSCHED_LIMIT_HOSTS"]),
    ("0", [], ["t.swf", "header MaxProcs", "0 is not a positive number of processors", "--hosts"]),
    ("-8", [], ["t.swf", "header MaxProcs", "-8 is not a positive number of processors", "--hosts"]),
])
def test_swf_machine_size(tmp_path, cli, max_procs, args, needles):
    out = tmp_path / "w.json"
    check(cli("swf", swf(tmp_path, max_procs=max_procs), *args, "--output", str(out)), *needles)
    assert not out.exists()


def test_swf_max_procs_not_positive_with_hosts_given(tmp_path, cli):
    """The header is not consulted when --hosts gives the machine size."""
    out = tmp_path / "w.json"
    assert cli("swf", swf(tmp_path, max_procs="0"), "--hosts", "4", "--output", str(out)).returncode == 0
    assert json.loads(out.read_text())["nb_res"] == 4


@pytest.mark.parametrize(("line", "field"), [
    ("1 100 5 60 2.5 -1 -1 2.5 120 -1 1 3 1 -1 1 -1 -1 -1\n", "allocated_processors"),
    ("1 100 5 60 -1 -1 -1 2.5 120 -1 1 3 1 -1 1 -1 -1 -1\n", "requested_processors"),
])
def test_swf_fractional_processor_count(tmp_path, cli, line, field):
    out = tmp_path / "w.json"
    check(cli("swf", swf(tmp_path, line=line), "--output", str(out)),
          "t.swf", f"line 3, field '{field}'", "2.5 is not a whole number of processors")
    assert not out.exists()


def test_swf_generated_workload_runs(tmp_path, cli):
    """What the bounds let through, ``wattsched run`` takes."""
    out = tmp_path / "w.json"
    assert cli("swf", swf(tmp_path, max_procs="16"), "--walltime", "limit:1e10", "--output", str(out)).returncode == 0
    assert cli(*run_args(str(out), tmp_path / "o")).returncode == 0


# ------------------------------------------------------------------------- 2. regress --update
def copy_outputs(scenario: str, target: Path) -> Path:
    target.mkdir(parents=True)
    for path in (REFERENCE / scenario).glob("out_*.csv"):
        shutil.copy(path, target / path.name)
    return target


def contents(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_regress_update_refuses_a_mangled_run(tmp_path, cli):
    golden = copy_outputs("fcfs-compute", tmp_path / "golden")
    run = copy_outputs("simultaneous-events", tmp_path / "run")
    jobs = run / "out_jobs.csv"
    lines = jobs.read_text().splitlines()
    lines[2] = ",".join(lines[2].split(",")[:5])  # a truncated row, line 3
    jobs.write_text("\n".join(lines) + "\n")
    before = contents(golden)
    check(cli("regress", str(run), str(golden), "--update"), "out_jobs.csv", "line 3")
    assert contents(golden) == before


def test_regress_update_of_a_golden_prefix(tmp_path, cli):
    """``tests/golden/NAME/out`` (the README's form) names the files out_*.csv: they are replaced."""
    golden = copy_outputs("fcfs-compute", tmp_path / "golden")
    run = copy_outputs("simultaneous-events", tmp_path / "run")
    assert cli("regress", str(run), str(golden / "out"), "--update").returncode == 0
    assert not (golden / "out").exists()
    assert sorted(contents(golden)) == sorted(p.name for p in run.glob("out_*.csv"))
    assert cli("regress", str(run), str(golden / "out")).returncode == 0


# ------------------------------------------------------------------ 3. parallel profile vs res
def test_parallel_profile_on_another_number_of_hosts(tmp_path, cli):
    """Real Batsim loads such a workload and stops when the task starts (``generate_parallel_task``'s
    assertion): the run stops there too, naming the workload file, the job and the profile."""
    doc = {"nb_res": 4, "jobs": [{"id": 2, "subtime": 0, "walltime": 200, "res": 4, "profile": "p1"}],
           "profiles": {"p1": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 0, 0, 0]}}}
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", doc), out, "-s", "fcfs")),
          "w.json", "w0!2", "profile 'p1'", "2 hosts", "res")
    assert not out.exists()


# ------------------------------------------------------------------------------ 4-5. platforms
TAURUS_SPEED = "100Mf, 50Mf"
TAURUS_WATTS = "95:190, 95:150"


def platform(tmp_path: Path, host_attributes: str = "", speed_per_state: str = TAURUS_SPEED,
             routing: str = "Full") -> str:
    xml = (f'<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="AS0" routing="{routing}">\n'
           f'<host id="master_host" speed="100Mf"/>\n'
           f'<host id="h0" speed="{TAURUS_SPEED}" {host_attributes}>\n'
           f'  <prop id="speed_per_state" value="{speed_per_state}"/>\n'
           f'  <prop id="wattage_per_state" value="{TAURUS_WATTS}"/>\n'
           f'</host>\n</zone>\n</platform>\n')
    return write(tmp_path, "p.xml", xml)


def run_on(tmp_path: Path, cli, xml: str):
    out = tmp_path / "out"
    result = cli("run", xml, write(tmp_path, "w.json", one_job()), "-e", str(out / "r"), "-q")
    assert not out.exists() or result.returncode == 0
    return result


def test_speed_per_state_of_another_length_than_speed(tmp_path, cli):
    check(run_on(tmp_path, cli, platform(tmp_path, speed_per_state="100Mf")),
          "p.xml", "host 'h0'.speed_per_state", "1 speeds for the 2 pstates")


def test_malformed_speed_per_state(tmp_path, cli):
    check(run_on(tmp_path, cli, platform(tmp_path, speed_per_state="fast, slow")), "p.xml", "host 'h0'.speed_per_state")


def test_unknown_routing(tmp_path, cli):
    check(run_on(tmp_path, cli, platform(tmp_path, routing="Quantum")),
          "p.xml", "zone 'AS0'.routing", "'Quantum'", "Floyd")


@pytest.mark.parametrize("routing", ["Full", "full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi",
                                     "Cluster", "Wifi"])
def test_simgrid_routings_load(tmp_path, routing):
    from wattsched.simulator.platform import load_platform

    assert load_platform(platform(tmp_path, routing=routing)).nb_hosts == 1


@pytest.mark.parametrize("attribute", ["availability_file", "speed_file", "state_file"])
def test_host_profile_files_are_not_supported(tmp_path, cli, attribute):
    check(run_on(tmp_path, cli, platform(tmp_path, f'{attribute}="avail.txt"')),
          "p.xml", f"host 'h0'.{attribute}", "not supported")


def test_a_state_file_property_is_only_a_property(tmp_path):
    """A ``<prop id="state_file">`` is not SimGrid's attribute: Batsim passes it on as any property."""
    from wattsched.simulator.platform import load_platform

    xml = Path(platform(tmp_path))
    xml.write_text(xml.read_text().replace("</host>", '  <prop id="state_file" value="x"/>\n</host>', 1))
    assert load_platform(xml).hosts[0].properties["state_file"] == "x"


# ------------------------------------------------------------------------------ 6. long integers
def test_integer_too_long_for_python_in_a_workload(tmp_path):
    text = json.dumps(one_job()).replace('"subtime": 0', '"subtime": 1' + "0" * 5000)
    out = tmp_path / "out"
    line = check(command(*run_args(write(tmp_path, "w.json", text), out)),
                 "w.json", "jobs[0].subtime", "an integer of 5001 digits", "±1.8e308")
    assert "int_max_str_digits" not in line and "4300" not in line
    assert not out.exists()


def test_integer_too_long_for_python_through_load_json():
    from wattsched.base.validate import load_json

    with pytest.raises(InputError, match=r"^x\.json: \[1\]\.a: an integer of 6000 digits"):
        load_json('[1, {"a": -' + "9" * 6000 + "}]", "x.json")
