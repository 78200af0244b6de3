"""Bad inputs of hunt 13: numbers of a platform that SimGrid reads otherwise (other scripts' digits, ``1_0``), a
``<prop>`` given twice (the first kept, as SimGrid does), a huge attribute quoted whole in the error, the XML declaration's encoding, a version
SimGrid refuses; web forms with a field given twice or a run name cut silently; a sweep grid of millions of runs.

Every check is parse-only or refused before any work: no simulation, server or sweep can start even if a fix
regresses (the web checks add another error to the same form, so a regression is a 400 without the message).
"""

from __future__ import annotations

import pytest

from tests.bad_inputs_checks import refused
from wattsched.base.errors import InputError, OptionError
from wattsched.simulator.platform import parse_platform

MASTER = '<host id="master_host" speed="1Gf"/>'


def platform(body: str, version: str = "4.1", declaration: str = '<?xml version="1.0"?>') -> bytes:
    return (f'{declaration}\n<platform version="{version}"><zone id="z" routing="Full">{MASTER}{body}'
            "</zone></platform>\n").encode()


def four_pstates(props: str = "", pstate: str = "0") -> str:
    return (f'<host id="h" speed="1Gf,1Gf,1Gf,1Gf" pstate="{pstate}">'
            f'<prop id="wattage_per_state" value="1:2,1:2,1:2,1:2"/>{props}</host>')


# ------------------------------------------------------------------ 1. numbers SimGrid and Batsim read otherwise
@pytest.mark.parametrize("body, field", [
    ('<host id="h" speed="\u0661Gf"/>', "host 'h'.speed"),                     # Arabic-Indic 1
    ('<host id="h" speed="\uff11Gf"/>', "host 'h'.speed"),                     # full-width 1
    ('<cluster id="c" prefix="c" radical="\u0660-\u0663" speed="1Gf"/>', "cluster 'c'.radical"),
    ('<host id="h" speed="1Gf"><prop id="wattage_per_state" value="1_0:2_0"/></host>',
     "host 'h'.wattage_per_state"),                                            # float() reads 10:20
    ('<host id="h" speed="1Gf"><prop id="wattage_per_state" value="\u0661:\u0662"/></host>',
     "host 'h'.wattage_per_state"),
    ('<host id="h" speed="1Gf"><prop id="wattage_per_state" value="1:2"/><prop id="wattage_off" value="\u0661"/>'
     "</host>", "host 'h'.wattage_off"),
    (four_pstates('<prop id="sleep_pstates" value="\u0661:2:3"/>'), "host 'h'.sleep_pstates"),
    (four_pstates(pstate="\u0661"), "host 'h'.pstate"),
    ('<host id="h" speed="1Gf" core="\u0661"/>', "host 'h'.core"),
    ('<host id="h" speed="1Gf"><prop id="frequency_ghz_per_state" value="\u0662"/></host>',
     "host 'h'.frequency_ghz_per_state"),
])
def test_numbers_in_other_digits_or_with_underscores_are_refused(body, field):
    """Python's ``int``/``float`` and ``\\d`` take other scripts' digits and ``_``; SimGrid's ``strtod``,
    ``std::stoi`` and Batsim do not: such a platform ran here while Batsim refuses it."""
    with pytest.raises(InputError, match=f"p.xml: {field}"):
        parse_platform(platform(body), "p.xml")


def test_an_initial_pstate_with_an_underscore_is_not_read_as_another_pstate():
    """``pstate="1_0"``: ``int()`` read pstate 10 where SimGrid's ``std::stoi`` reads 1."""
    speeds = ",".join(["1Gf"] * 11)
    watts = ",".join(["1:2"] * 11)
    body = f'<host id="h" speed="{speeds}" pstate="1_0"><prop id="wattage_per_state" value="{watts}"/></host>'
    with pytest.raises(InputError, match=r"host 'h'\.pstate: '1_0' is not an integer"):
        parse_platform(platform(body), "p.xml")


def test_what_simgrid_reads_is_still_read():
    """``std::stoi`` takes a leading ``+`` and white space; watts and speeds keep their spaces and exponents."""
    body = ('<host id="h" speed=" 1e9f , 5e8f" core="+1" pstate=" 1"><prop id="wattage_per_state" '
            'value=" 1.5 :\t2e1, 1:3"/><prop id="wattage_off" value=" 0.5 "/></host>'
            '<cluster id="c" prefix="c-" suffix=".x" radical="0-1,5" speed="1Gf" bw="1GBps" lat="0s"/>')
    # a zone holds hosts or clusters, not both (SimGrid's DTD): the host and the master in a zone of their own
    host_end = body.index("</host>") + len("</host>")
    text = (f'<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full"><zone id="hz" routing="Full">'
            f'{MASTER}{body[:host_end]}</zone>{body[host_end:]}</zone></platform>\n').encode()
    loaded = parse_platform(text, "p.xml")
    host = loaded.host_by_name("h")
    assert host.initial_pstate == 1 and host.model.speeds_flops == (1e9, 5e8)
    assert host.model.idle_w == (1.5, 1.0) and host.model.full_w == (20.0, 3.0) and host.model.wattage_off_w == 0.5
    assert [h.name for h in loaded.hosts] == ["c-0.x", "c-1.x", "c-5.x", "h"]


# --------------------------------------------------------------------------------------- 2. a <prop> given twice
def test_a_prop_given_twice_keeps_the_first_value_with_a_warning(caplog):
    """SimGrid keeps the first value of a host's ``<prop>`` (``try_emplace``), Python's dict kept the last: the
    host drew 1:3 W here and 1:2 W under Batsim. The first is used, and a warning names the file and field."""
    body = ('<host id="h" speed="1Gf"><prop id="wattage_per_state" value="1:2"/>'
            '<prop id="wattage_per_state" value="1:3"/></host>')
    with caplog.at_level("WARNING"):
        loaded = parse_platform(platform(body), "p.xml")
    assert loaded.hosts[0].model.full_w == (2.0,)
    assert "p.xml: host 'h'.prop 'wattage_per_state' given twice: the first value, '1:2', is used" in caplog.text
    zone = (f'<zone id="in" routing="Full"><prop id="a" value="1"/><prop id="a" value="2"/>{MASTER}'
            '<host id="h" speed="1Gf"/></zone>')
    caplog.clear()
    with caplog.at_level("WARNING"):
        parse_platform(f'<?xml version="1.0"?>\n<platform version="4.1">{zone}</platform>\n'.encode(), "p.xml")
    assert "zone 'in'.prop 'a' given twice" in caplog.text


# --------------------------------------------------------------------------------- 3. a huge attribute's error
@pytest.mark.parametrize("body", [
    '<host id="h" speed="' + "1" * 1_000_000 + 'f"/>',
    '<host id="h" speed="1Gf"><prop id="wattage_per_state" value="' + "1:" * 500_000 + '"/></host>',
    '<cluster id="c" prefix="c" radical="' + "x," * 500_000 + '" speed="1Gf"/>',
    '<host id="' + "h" * 1_000_000 + '" speed="x"/>',                          # the id in the field
    '<host id="' + "h" * 1_000_000 + '" speed="1Gf"/><host id="' + "h" * 1_000_000 + '" speed="1Gf"/>',
])
def test_a_huge_attribute_is_quoted_short_in_its_error(body):
    with pytest.raises(InputError) as refused_:
        parse_platform(platform(body), "p.xml")
    assert len(str(refused_.value)) < 300 and "characters)" in str(refused_.value), str(refused_.value)[:300]


def test_a_huge_attribute_is_one_short_line_from_the_command(capsys, tmp_path):
    path = tmp_path / "p.xml"
    path.write_bytes(platform('<host id="h" speed="' + "1" * 1_000_000 + 'f"/>'))
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 1, "jobs": [], "profiles": {}}')
    err = refused(capsys, ["run", str(path), str(workload), "-s", "fcfs", "-e", str(tmp_path / "out" / "x")],
                  "host 'h'.speed")
    assert len(err) < 400 and not (tmp_path / "out").exists()


# -------------------------------------------------------------------------- 4. the declaration's encoding, version
@pytest.mark.parametrize("encoding", ["ISO-8859-1", "UTF-16", "ascii"])
def test_the_declared_encoding_does_not_change_how_the_utf8_bytes_read(encoding):
    """SimGrid's lexer reads the bytes as they are; Python's parser followed the declaration, reading a UTF-8
    'é' as 'Ã©' (Latin-1) or refusing the file (UTF-16, ascii)."""
    data = platform('<host id="h\u00e9" speed="1Gf"/>', declaration=f'<?xml version="1.0" encoding="{encoding}"?>')
    assert [h.name for h in parse_platform(data, "p.xml").hosts] == ["h\u00e9"]


@pytest.mark.parametrize("version, problem", [("4.5", "is not supported"), ("5", "is not supported"),
                                              ("3.0", "is not supported"), ("\u0664.1", "is not a version number"),
                                              ("4.1.x", "is not a version number")])
def test_a_version_simgrid_refuses_is_refused(version, problem):
    """SimGrid reads 4.0 to 4.1 ("THIS FILE COMES FROM THE FUTURE" above 4.1); any 4.x passed here."""
    with pytest.raises(InputError, match=f"platform.version: .*{problem}"):
        parse_platform(platform('<host id="h" speed="1Gf"/>', version=version), "p.xml")


@pytest.mark.parametrize("version", ["4", "4.0", "4.1", "4.10", " 4.1 "])
def test_the_versions_simgrid_reads_are_read(version):
    assert parse_platform(platform('<host id="h" speed="1Gf"/>', version=version), "p.xml").nb_hosts == 1


# ---------------------------------------------------------------------------------------------- 5. web forms
def test_a_form_field_given_twice_is_refused(tmp_path):
    """Starlette keeps the last of ``name=a&name=b``: a second scheduler or name was used silently. The launch
    form also names an unknown scheduler, so that no run can start if the check regresses."""
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web_bad_inputs import TestClient, create_app, files_under, errors_on, field_error

    workspace = tmp_path / "ws"
    with TestClient(create_app(workspace, processes=False), raise_server_exceptions=False) as client:
        urlencoded = {"content-type": "application/x-www-form-urlencoded"}
        response = client.post("/runs", content="name=a&name=b&scheduler=nope", headers=urlencoded)
        assert response.status_code == 400
        assert any("field 'name' is given twice" in e for e in errors_on(response.text)), errors_on(response.text)
        response = client.post("/runs", files={"scheduler": (None, "nope"), "platform_file": ("a.xml", b"<x/>")},
                               data={"name": "a", "workload": "x"})
        assert response.status_code == 400  # a multipart form, each field once: not refused for that
        assert not any("given twice" in e for e in errors_on(response.text))
        response = client.post("/inputs/platform", content="hosts=1&hosts=2&node=nope", headers=urlencoded)
        assert response.status_code == 400 and "field 'hosts' is given twice" in field_error(response.text,
                                                                                               "platform-hosts")
        assert not (workspace / "runs").exists() or not any((workspace / "runs").iterdir())
        assert [p.name for p in files_under(workspace)] == ["index.json"]


def test_a_run_name_longer_than_its_bound_is_refused_not_cut():
    pytest.importorskip("starlette")
    from wattsched.web.workspace import NAME_CHARS, check_run_name

    assert check_run_name("  " + "a" * NAME_CHARS + " ") == "a" * NAME_CHARS
    with pytest.raises(OptionError, match=f"run name: {NAME_CHARS + 1} characters, at most {NAME_CHARS}"):
        check_run_name("a" * (NAME_CHARS + 1))


def test_the_run_name_field_says_its_bound(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from tests.test_web_bad_inputs import TestClient, create_app
    from wattsched.web.workspace import NAME_CHARS

    with TestClient(create_app(tmp_path / "ws", processes=False)) as client:
        assert f'maxlength="{NAME_CHARS}"' in client.get("/new").text


# ------------------------------------------------------------------------------------------- 6. sweep grids
def test_a_grid_of_too_many_runs_is_refused_before_anything(tmp_path):
    """50 platforms × 50 workloads × 50 schedulers: 125,000 runs from 150 lines, which took minutes and
    gigabytes to enumerate. The files do not exist: before the bound, the grid was refused for them only."""
    from wattsched.experiments.grid import grid_runs, parse_grid

    grid = parse_grid({"platforms": [f"p{i}.xml" for i in range(50)], "workloads": [f"w{i}.json" for i in range(50)],
                       "schedulers": ["fcfs"] * 50}, "g.yaml")
    with pytest.raises(InputError, match=r"g\.yaml: 125000 runs \(50 platforms × 50 workloads × 50 schedulers × 1 "
                                         r"options\); at most 100,000 \(raise with WATTSCHED_LIMIT_RUNS\)"):
        grid_runs(grid, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_grid_counts_a_synthetic_workload_once_per_seed(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WATTSCHED_LIMIT_RUNS", "5")
    grid = tmp_path / "g.yaml"
    grid.write_text("platforms: [missing.xml]\nworkloads: [{synth: {hosts: 1, days: 0.01}}]\nseeds: [1, 2, 3]\n"
                    "schedulers: [fcfs, easy-backfill]\n")
    refused(capsys, ["sweep", str(grid), "--out", str(tmp_path / "out"), "-j", "1", "-q"],
            "6 runs (1 platforms × 3 workloads × 2 schedulers × 1 options); at most 5")
    assert not (tmp_path / "out").exists()
