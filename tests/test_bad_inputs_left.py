"""Bad input, the gaps left after the earlier rounds: a platform without Batsim's master host, a UPAS gear that is
not a positive frequency, a JSON key given twice, a fair-share ``shares`` option naming users the workload does
not have, a sweep run whose output prefix is a folder; and two code-quality mends (the analysis modules' public
host helpers, ``beta`` reading its workload once).

Same contract as :mod:`tests.test_bad_inputs`: exit status 2, one stderr line naming the file (or option) and
the field, no traceback, nothing written. The ``shares`` case is a warning, not an error: one line, the run goes on.
"""

from __future__ import annotations

import ast
import json
import logging
from pathlib import Path

import pytest

from tests.test_bad_inputs import PLATFORM, WORKLOAD, check, cli, command, one_job, run_args, write  # noqa: F401
from wattsched.base.errors import InputError, OptionError
from wattsched.base.validate import load_json, load_yaml
from wattsched.simulator.platform import load_platform

ROOT = Path(__file__).resolve().parent.parent

TAURUS_SPEED = "100Mf, 50Mf"
TAURUS_WATTS = "95:190, 95:150"
MASTER = '<host id="master_host" speed="100Mf"/>'


def platform_xml(body: str) -> str:
    return (f'<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="AS0" routing="Full">\n{body}</zone>\n'
            "</platform>\n")


def host(name: str, props: str = "") -> str:
    return (f'<host id="{name}" speed="{TAURUS_SPEED}"><prop id="wattage_per_state" value="{TAURUS_WATTS}"/>'
            f"{props}</host>\n")


def run_refused(tmp_path: Path, cli, xml: str, *needles: str) -> str:
    """``wattsched run`` on platform ``xml`` (``p.xml``): refused in one line, nothing written."""
    out = tmp_path / "out"
    line = check(cli("run", write(tmp_path, "p.xml", xml), write(tmp_path, "w.json", one_job()),
                     "-e", str(out / "r"), "-q"), "p.xml", *needles)
    assert not out.exists()
    return line


# ------------------------------------------------------------------------------ 1. the master host
@pytest.mark.parametrize("body", [
    host("h0") + host("h1"),  # every host a compute host
    '<cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="0"/>\n',  # a cluster only
    host("master") + host("h1"),  # close, but not Batsim's default --master-host
    host("h0", '<prop id="role" value="compute_node"/>'),
])
def test_a_platform_without_a_master_host_is_refused(tmp_path, cli, body):
    """Batsim 4.2.1, src/machines.cpp: ``Cannot find the "master" role in the platform file``."""
    run_refused(tmp_path, cli, platform_xml(body), "platform", "no master host", "'master_host'", 'role="master"')


def test_a_platform_without_a_master_host_is_refused_in_a_subprocess(tmp_path):
    out = tmp_path / "out"
    check(command("run", write(tmp_path, "p.xml", platform_xml(host("h0"))), str(WORKLOAD), "-e", str(out / "r")),
          "p.xml", "no master host")
    assert not out.exists()


@pytest.mark.parametrize(("master", "expected"), [
    (MASTER, "master_host"),
    ('<host id="boss" speed="1Mf"><prop id="role" value="master"/></host>\n', "boss"),
])
def test_either_form_of_master_host_is_taken(tmp_path, master, expected):
    platform = load_platform(write(tmp_path, "p.xml", platform_xml(master + host("h0"))))
    assert platform.master_name == expected and [h.name for h in platform.hosts] == ["h0"]


def test_every_platform_the_project_ships_or_generates_has_a_master_host(tmp_path):
    from wattsched.platforms import generate

    shipped = sorted((ROOT / "platforms").glob("*.xml")) + sorted((ROOT / "tests" / "fixtures").rglob("*.xml"))
    assert len(shipped) >= 20
    generated = {
        "taurus": generate.taurus_platform_xml(4), "taurus_flat": generate.taurus_platform_xml(4, cluster=False),
        "esc": generate.esc_platform_xml(4), "esc_flat": generate.esc_platform_xml(4, cluster=False),
        "upas": generate.upas_platform_xml(4), "upas_flat": generate.upas_platform_xml(4, cluster=False),
        "eamc": generate.eamc_platform_xml((4, 4)),
    }
    for name, text in generated.items():
        shipped.append(Path(write(tmp_path, f"{name}.xml", text)))
    for path in shipped:
        assert load_platform(path).master_name == "master_host", path


# ------------------------------------------------------------------ 2. frequency_ghz_per_state
FREQUENCY = "frequency_ghz_per_state"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1.4", "2.3, nan", "2.3, 0", "fast", ""])
def test_a_gear_that_is_not_a_positive_frequency_is_refused_on_a_host(tmp_path, cli, value):
    body = MASTER + host("h0", f'<prop id="{FREQUENCY}" value="{value}"/>')
    run_refused(tmp_path, cli, platform_xml(body), f"host 'h0'.{FREQUENCY}", "positive number of GHz"
                if value not in ("fast", "") else "not a comma-separated list")


def test_a_gear_that_is_not_a_positive_frequency_is_refused_on_a_cluster_or_zone(tmp_path):
    prop = f'<prop id="{FREQUENCY}" value="2.3, nan"/>'
    cluster = (f'<cluster id="c" prefix="h" radical="0-1" speed="{TAURUS_SPEED}" bw="1GBps" lat="0">{prop}'
               "</cluster>\n")
    with pytest.raises(InputError, match=rf"c\.xml: cluster 'c'\.{FREQUENCY}: '2.3, nan': every frequency"):
        load_platform(write(tmp_path, "c.xml", platform_xml(MASTER + cluster)))
    zone = f'<zone id="z" routing="Full">{prop}{host("h0")}</zone>\n'
    with pytest.raises(InputError, match=rf"z\.xml: zone 'z'\.{FREQUENCY}: '2.3, nan'"):
        load_platform(write(tmp_path, "z.xml", platform_xml(MASTER + zone)))


def test_positive_gears_are_taken(tmp_path):
    body = MASTER + host("h0", f'<prop id="{FREQUENCY}" value="2.3, 1.15"/>')
    (h0,) = load_platform(write(tmp_path, "p.xml", platform_xml(body))).hosts
    assert h0.properties[FREQUENCY] == "2.3, 1.15"


# ------------------------------------------------------------------------------ 3. duplicate keys
def test_a_duplicate_key_of_a_job_is_refused(tmp_path, cli):
    text = json.dumps(one_job()).replace('"walltime": 100', '"walltime": 100, "walltime": 5')
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", text), out)), "w.json", "jobs[0].walltime",
          "duplicate key of job 1", "Batsim's takes the first")
    assert not out.exists()


@pytest.mark.parametrize(("where", "value", "needles"), [
    ('"nb_res": 1', '"nb_res": 1, "nb_res": 2', ["w.json: nb_res: duplicate key"]),
    ('"delay": 10', '"delay": 10, "delay": 20', ["profiles.p.delay", "duplicate key"]),
    ('"profiles": {', '"profiles": {"p": {"type": "delay", "delay": 1}, ', ["w.json: profiles.p: duplicate key"]),
])
def test_a_duplicate_key_anywhere_in_a_workload_is_refused(tmp_path, cli, where, value, needles):
    text = json.dumps(one_job()).replace(where, value, 1)
    assert text != json.dumps(one_job())
    out = tmp_path / "out"
    check(cli(*run_args(write(tmp_path, "w.json", text), out)), *needles)
    assert not out.exists()


@pytest.mark.parametrize(("options", "needles"), [
    ('{"budget_fraction": 0.5, "window_end_s": 100, "budget_fraction": 0.9}',
     ["option -o", "budget_fraction", "duplicate key"]),
    ('{"budget_fraction": 0.5, "window_end_s": 100, "monitoring": {"a": 1, "a": 2}}',
     ["option -o", "monitoring.a", "duplicate key"]),
])
def test_a_duplicate_key_in_options_is_refused(tmp_path, cli, options, needles):
    out = tmp_path / "out"
    check(cli(*run_args(str(WORKLOAD), out, "-s", "energy-bud", "-o", options)), *needles)
    check(cli(*run_args(str(WORKLOAD), out, "-s", "energy-bud", "-o", "@" + write(tmp_path, "o.json", options))),
          "o.json", needles[1], "duplicate key")
    assert not out.exists()


def sweep_entry(tmp_path: Path, name: str, **fields) -> dict:
    entry = {"name": name, "platform": str(PLATFORM), "workload": str(WORKLOAD), "scheduler": "fcfs",
             "options": {}, "prefix": str(tmp_path / "runs" / name)}
    entry.update(fields)
    return entry


def test_a_duplicate_key_in_a_sweep_run_list_is_refused(tmp_path, cli):
    text = json.dumps([sweep_entry(tmp_path, "a")]).replace('"scheduler": "fcfs"',
                                                             '"scheduler": "fcfs", "scheduler": "easy-backfill"')
    check(cli("sweep", write(tmp_path, "runs.json", text), "--out", str(tmp_path / "table"), "-q"),
          "runs.json", "[0].scheduler", "duplicate key")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "table").exists()


GRID_INPUTS = f"platforms: [{PLATFORM}]\nworkloads: [{WORKLOAD}]\n"


@pytest.mark.parametrize(("name", "text", "needles"), [
    ("grid.yaml", GRID_INPUTS + "schedulers: [fcfs]\nschedulers: [easy-backfill]\n",
     ["grid.yaml", "line 4", "duplicate key 'schedulers'"]),
    ("grid.yaml", GRID_INPUTS + "schedulers:\n  - name: fcfs\n    name: easy-backfill\n",
     ["grid.yaml", "line 5", "duplicate key 'name'"]),
    ("grid.json", json.dumps({"platforms": [str(PLATFORM)], "workloads": [str(WORKLOAD)], "schedulers": ["fcfs"]})
     .replace('"schedulers"', '"seeds": [1], "seeds": [2], "schedulers"'), ["grid.json", "duplicate key 'seeds'"]),
])
def test_a_duplicate_key_in_a_grid_is_refused(tmp_path, cli, name, text, needles):
    check(cli("sweep", write(tmp_path, name, text), "--out", str(tmp_path / "table"), "-q"), *needles)
    assert not (tmp_path / "table").exists()


def test_yaml_anchors_and_merge_keys_are_not_duplicates():
    text = "base: &b {a: 1}\nfirst: *b\nsecond: *b\nthird:\n  <<: *b\n  c: 2\n"
    assert load_yaml(text, "g.yaml", unique_keys=True)["third"] == {"a": 1, "c": 2}


def test_a_duplicate_key_in_the_workload_of_metrics_is_refused(tmp_path):
    from wattsched.analysis.metrics import load_workload_users

    text = json.dumps(one_job(user="alice")).replace('"user": "alice"', '"user": "alice", "user": "bob"')
    with pytest.raises(InputError, match=r"w\.json: jobs\[0\]\.user: duplicate key of job 1"):
        load_workload_users(write(tmp_path, "w.json", text))


def test_a_duplicate_key_in_the_workload_of_beta_is_refused(tmp_path, cli):
    text = json.dumps(one_job()).replace('"res": 1', '"res": 1, "res": 2')
    out = tmp_path / "beta.json"
    check(cli("beta", write(tmp_path, "w.json", text), "--seed", "1", "--output", str(out)),
          "w.json", "jobs[0].res", "duplicate key")
    assert not out.exists()


def test_a_duplicate_key_in_a_web_option_field_is_refused():
    pytest.importorskip("starlette")
    from wattsched.web.forms import options_from_form

    _, _, errors = options_from_form("fairshare", {"opt.shares": '{"alice": 1, "alice": 2}'})
    assert "shares" in errors and "duplicate key" in errors["shares"], errors


def test_protocol_messages_keep_the_fast_path():
    """The per-message reader is unchanged: no duplicate check (a hook per object) unless asked, so a message
    keeps Python's reading; the option is keyword-only and off by default."""
    import inspect

    message = '{"now": 1.0, "now": 2.0, "events": []}'
    assert load_json(message, "Batsim message 1") == {"now": 2.0, "events": []}
    with pytest.raises(InputError, match="now: duplicate key"):
        load_json(message, "m.json", unique_keys=True)
    parameter = inspect.signature(load_json).parameters["unique_keys"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is False
    for module in ("wattsched/simulator/drivers.py", "wattsched/cli/simulate.py"):
        assert "unique_keys" not in (ROOT / module).read_text(), module


def test_a_duplicate_key_is_named_after_other_errors_and_in_every_parse_path():
    with pytest.raises(InputError, match=r"jobs\[0\]\.subtime: NaN"):  # the walk's error comes first
        load_json('{"jobs": [{"subtime": NaN, "a": 1, "a": 2}]}', "w.json", unique_keys=True)
    long = "1" + "0" * 5000  # parsed twice (Python refuses to convert it the first time)
    with pytest.raises(InputError, match=r"w\.json: b: duplicate key"):
        load_json(f'{{"a": [1], "b": 1, "b": 2, "c": "{long}"}}'.encode(), "w.json", unique_keys=True)
    with pytest.raises(InputError, match="x: duplicate key"):
        load_json('{"x": 1, "x": 2}', "w.json", unique_keys=True)
    assert load_json('{"x": {"y": 1}, "y": {"x": 2}}', "w.json", unique_keys=True) == {"x": {"y": 1}, "y": {"x": 2}}


# ------------------------------------------------------------------------------ 4. shares
def users_workload(tmp_path: Path) -> str:
    doc = one_job(user="alice")
    doc["jobs"].append({**doc["jobs"][0], "id": 2, "user": "bob"})
    return write(tmp_path, "w.json", doc)


def test_shares_naming_users_without_jobs_are_warned_about_in_one_line(tmp_path):
    out = tmp_path / "out"
    proc = command(*run_args(users_workload(tmp_path), out, "-s", "fairshare",
                             "-o", '{"shares": {"alice": 2, "alcie": 1, "carol": 1}}'))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in ("option 'shares'", "'alcie', 'carol' have no job in", "w.json", "its users: 'alice', 'bob'"):
        assert needle in lines[0], (needle, lines[0])
    assert (out / "run_jobs.csv").exists()


def test_shares_of_known_users_and_other_schedulers_say_nothing(tmp_path, caplog):
    from wattsched import api

    workload = users_workload(tmp_path)
    with caplog.at_level(logging.WARNING):
        api.simulate(PLATFORM, workload, scheduler="efs", options={"shares": {"alice": 2, "bob": 1}},
                     out=tmp_path / "a")
        api.simulate(PLATFORM, workload, scheduler="fcfs", out=tmp_path / "b")
    assert "shares" not in caplog.text


def test_shares_are_checked_through_the_api_and_a_sweep(tmp_path, caplog):
    from wattsched import api
    from wattsched.experiments.sweep import Run, execute_run

    workload = users_workload(tmp_path)
    with caplog.at_level(logging.WARNING):
        api.simulate(PLATFORM, json.loads(Path(workload).read_text()), scheduler="compose",
                     options={"order": "fairshare", "shares": {"dave": 1}}, out=tmp_path / "a")
    assert "option 'shares': 'dave' has no job in <workload object> (its users: 'alice', 'bob')" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        row = execute_run(Run("r", str(PLATFORM), workload, "fs-efs", {"shares": {"erin": 1}}, str(tmp_path / "b")))
    assert row["status"] == "done" and f"'erin' has no job in {workload}" in caplog.text


def test_shares_on_a_workload_without_users_say_so(tmp_path, caplog):
    from wattsched import api

    with caplog.at_level(logging.WARNING):
        api.simulate(PLATFORM, write(tmp_path, "w.json", one_job()), scheduler="fairshare",
                     options={"shares": {f"u{i}": 1 for i in range(8)}}, out=tmp_path / "a")
    assert "'u0', 'u1', 'u2', 'u3', 'u4' and 3 more have no job" in caplog.text
    assert "its jobs have no 'user' field" in caplog.text


# ------------------------------------------------------------------------------ 5. sweep prefixes
@pytest.mark.parametrize("trailing", ["", "/"])
def test_a_sweep_run_whose_prefix_is_a_folder_is_refused_before_any_run(tmp_path, cli, trailing):
    folder = tmp_path / "runs" / "b"
    folder.mkdir(parents=True)
    runs = [sweep_entry(tmp_path, "a"), sweep_entry(tmp_path, "b", prefix=str(folder) + trailing)]
    check(cli("sweep", write(tmp_path, "runs.json", runs), "--out", str(tmp_path / "table"), "-j", "1", "-q"),
          "runs.json", "run 1 ('b'): prefix", "is a folder; give a prefix inside it")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["b"]  # run 'a' did not start
    assert not (tmp_path / "table").exists() and not any(folder.iterdir())


def test_a_sweep_run_whose_prefix_is_a_new_name_runs(tmp_path):
    from wattsched.experiments.sweep import load_runs

    (tmp_path / "runs").mkdir()
    runs = load_runs(write(tmp_path, "runs.json", [sweep_entry(tmp_path, "a")]))
    assert [r.prefix for r in runs] == [str(tmp_path / "runs" / "a")]


# ------------------------------------------------------------------------------ 6. code quality
def test_the_analysis_modules_import_no_private_name_of_another_module():
    for path in sorted((ROOT / "wattsched" / "analysis").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wattsched"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, (path.name, node.module, private)


def test_the_public_host_helpers_of_node_states(tmp_path):
    from wattsched.analysis.node_states import parse_host_set, run_nb_hosts
    from wattsched.analysis.outputs import load_outputs

    assert list(parse_host_set("0-2 5", "j.csv", "job 1.allocated_resources", 6)) == [0, 1, 2, 5]
    with pytest.raises(InputError, match=r"j\.csv: job 1\.allocated_resources: host 6 beyond 0-5"):
        parse_host_set("6", "j.csv", "job 1.allocated_resources", 6)
    recording = ROOT / "tests" / "fixtures" / "batsim-reference" / "fcfs-compute"
    assert run_nb_hosts(load_outputs(recording / "out")) == 4


def test_beta_reads_its_workload_once(tmp_path, cli, monkeypatch):
    import wattsched.base.validate as validate

    parsed: list[str] = []
    original = validate.load_json

    def counting(data, source, *args, **kwargs):
        parsed.append(source)
        return original(data, source, *args, **kwargs)

    for module in ("wattsched.simulator.workload", "wattsched.workloads.upas"):
        monkeypatch.setattr(f"{module}.load_json", counting)
    workload = write(tmp_path, "w.json", one_job())
    out = tmp_path / "beta.json"
    result = cli("beta", workload, "--seed", "1", "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert parsed == [workload]
    beta = json.loads(out.read_text())
    assert beta["nb_res"] == 1 and 0 < beta["jobs"][0]["beta"] <= 1 and beta["meta"]["upas"]["seed"] == 1


# ------------------------------------------------------------------------------ powers whose energy overflows
def test_wattages_whose_energy_cannot_be_a_double_are_refused_before_the_run(tmp_path, cli):
    """A processor of 1e300 W (``platform --node upas --top-power 1e300``) ran the whole simulation and ended in
    energies of inf, refused only when the outputs were checked."""
    huge = ('<host id="h{k}" speed="1Gf"><prop id="wattage_per_state" value="95:1e300"/></host>\n')
    xml = platform_xml(MASTER + "".join(huge.format(k=k) for k in range(4)))
    run_refused(tmp_path, cli, xml, "wattage_per_state", "beyond the largest number a double holds",
                "WATTSCHED_LIMIT_TIME_S")


def test_large_but_finite_energies_are_taken(tmp_path):
    ok = '<host id="h{k}" speed="1Gf"><prop id="wattage_per_state" value="95:1e9"/></host>\n'
    path = write(tmp_path, "p.xml", platform_xml(MASTER + "".join(ok.format(k=k) for k in range(4))))
    assert len(load_platform(path).hosts) == 4


# ------------------------------------------------------------------------------ a job's energy_factor
@pytest.mark.parametrize("scheduler", ["efs", "easy-backfill"])
@pytest.mark.parametrize("value", [0, -1.5, "2", True])
def test_an_energy_factor_that_is_not_a_positive_number_is_refused_before_the_run(tmp_path, cli, scheduler, value):
    """It was refused only when the job's energy was first charged (EFS orders), naming no file, or never."""
    out = tmp_path / "out"
    line = check(cli("run", str(PLATFORM), write(tmp_path, "w.json", one_job(energy_factor=value)), "-s", scheduler,
                     "-e", str(out / "r"), "-q"), "w.json", "w0!1", ".energy_factor", "> 0")
    assert not out.exists(), line


def test_a_positive_energy_factor_is_taken(tmp_path, cli):
    proc = cli("run", str(PLATFORM), write(tmp_path, "w.json", one_job(energy_factor=0.7)), "-s", "efs",
               "-e", str(tmp_path / "out" / "r"), "-q")
    assert proc.returncode == 0, proc.stderr


def test_a_user_name_of_megabytes_in_shares_is_cut_in_the_warning(tmp_path, caplog):
    """Found by hunt 40: the warning printed the name whole (a line of 500 KB on the terminal or the server's log)."""
    from wattsched import api

    workload = users_workload(tmp_path)
    with caplog.at_level(logging.WARNING):
        api.simulate(PLATFORM, json.loads(Path(workload).read_text()), scheduler="compose",
                     options={"order": "fairshare", "shares": {"x" * 500_000: 1}}, out=tmp_path / "a")
    line = next(r.getMessage() for r in caplog.records if "option 'shares'" in r.getMessage())
    assert len(line) < 400 and "(500000 characters) has no job in" in line, line[:400]
