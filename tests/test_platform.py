"""simulator.platform: SimGrid platform loading, checked against the Batsim 4.2.1 recordings."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from wattsched.energy_models.power import NodeModel, parse_speed_list
from wattsched.simulator.platform import load_platform, parse_radical
from tests.conftest import assert_input_error
from wattsched.base.errors import InputError

REF = Path(__file__).parent / "fixtures" / "batsim-reference"
SCENARIOS = sorted(p.name for p in REF.iterdir() if (p / "platform.xml").exists())


def simulation_begins(scenario: str) -> dict:
    with open(REF / scenario / "messages.jsonl") as f:
        first = json.loads(f.readline())
    (event,) = first["message"]["events"]
    assert event["type"] == "SIMULATION_BEGINS"
    return event["data"]


def test_all_scenarios_found():
    assert len(SCENARIOS) >= 9
    assert {"cluster-platform", "two-clusters", "long-shutdown-fcfs", "composed-profiles"} <= set(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_compute_resources_match_recording(scenario):
    platform = load_platform(REF / scenario / "platform.xml")
    data = simulation_begins(scenario)
    got = [
        {"id": h.id, "name": h.name, "state": "idle", "properties": h.properties,
         "zone_properties": h.zone_properties}
        for h in platform.hosts
    ]
    assert got == data["compute_resources"]
    assert len(platform.hosts) == data["nb_resources"] == data["nb_compute_resources"]
    assert platform.master_name == "master_host"
    assert all(h.id == i for i, h in enumerate(platform.hosts))
    assert all(h.properties["role"] == "" and next(iter(h.properties)) == "role" for h in platform.hosts)


def test_byte_order_ids_long_shutdown():
    platform = load_platform(REF / "long-shutdown-fcfs" / "platform.xml")
    names = [h.name for h in platform.hosts]
    assert names[:3] == ["host0", "host1", "host10"]
    assert names[7:9] == ["host15", "host2"]
    assert names[-1] == "host9"


def test_taurus_model():
    platform = load_platform(REF / "shutdown-boot" / "platform.xml")
    (model,) = platform.models
    assert all(h.model is model for h in platform.hosts)
    assert model.nb_pstates == 16
    assert model.speeds_flops[0] == 100e6
    assert model.speeds_flops[13] == pytest.approx(1e-3)
    assert model.speeds_flops[14] == 0.1639344262295082
    assert model.idle_w[0] == 95.0 and model.full_w[0] == 190.738
    assert model.idle_w[14] == model.full_w[14] == 100.99672131147543
    assert model.wattage_off_w == 9.75
    assert (model.sleep_pstate, model.switch_off_pstate, model.switch_on_pstate) == (13, 14, 15)
    assert [p for p in range(16) if model.is_computation(p)] == list(range(13))
    assert not model.is_computation(16) and not model.is_computation(-1)
    assert all(h.initial_pstate == 0 for h in platform.hosts)


def test_cluster_platform_details():
    platform = load_platform(REF / "cluster-platform" / "platform.xml")
    names = [h.name for h in platform.hosts]
    assert names[:7] == ["orion-0", "orion-1", "orion-2", "orion-3", "taurus-0.lyon", "taurus-1.lyon",
                         "taurus-10.lyon"]
    orion, taurus = platform.hosts[0], platform.hosts[4]
    assert orion.model.speeds_flops == (150e6, 120e6, 90e6)
    assert orion.model.sleep_pstate is None
    assert [orion.model.is_computation(p) for p in range(3)] == [True, True, True]
    assert taurus.model.sleep_pstate == 13
    assert len(platform.models) == 2
    # hosts of one cluster share their model and property dicts
    assert platform.hosts[5].model is taurus.model
    assert platform.hosts[5].properties is taurus.properties
    assert orion.zone_properties["site"] == "lyon-b" and taurus.zone_properties["site"] == "lyon"


def test_two_clusters_models():
    platform = load_platform(REF / "two-clusters" / "platform.xml")
    fast, slow = platform.hosts[0], platform.hosts[2]
    assert fast.name == "fast0" and slow.name == "slow0"
    assert fast.model.speeds_flops[0] == 270e6 and slow.model.nb_pstates == 5
    assert fast.model.idle_w == (110.0,) * 6 and slow.model.full_w[-1] == 160.0
    assert platform.hosts[1].model is fast.model


# -- unit parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("1f", 1.0), ("2kf", 2e3), ("3Mf", 3e6), ("1.5Gf", 1.5e9), ("1Tf", 1e12), ("1Pf", 1e15),
    ("1Ef", 1e18), ("1Zf", 1e21), ("1Yf", 1e24), ("7", 7.0), ("1e-9Mf", 1e-3), ("4Mflops", 4e6),
    ("5flops", 5.0), ("6kflops", 6e3), ("2Gflops", 2e9), (" 8Mf ", 8e6), ("1E3kf", 1e6), (".5Mf", 5e5),
])
def test_speed_units(text, value):
    assert parse_speed_list(text) == pytest.approx((value,))


def test_speed_list():
    assert parse_speed_list("100.0Mf, 50Mf,0.1639344262295082f") == (100e6, 50e6, 0.1639344262295082)


@pytest.mark.parametrize("bad", ["1Xf", "1MF", "abc", "", "1Mf,,2Mf", "-1Mf", "0f", "1 2Mf"])
def test_speed_errors(bad):
    with pytest.raises(ValueError):
        parse_speed_list(bad)


@pytest.mark.parametrize("text,values", [
    ("0-11", list(range(12))), ("0,2-3,9", [0, 2, 3, 9]), ("5", [5]), ("3-3", [3]),
    (" 1 , 4-5 ", [1, 4, 5]), ("010-011", [10, 11]),
])
def test_radical(text, values):
    assert parse_radical(text) == values


@pytest.mark.parametrize("bad", ["", "a", "3-1", "1,,2", "1-", "-3", "1-2-3"])
def test_radical_errors(bad):
    with pytest.raises(ValueError):
        parse_radical(bad)


# -- building platforms in tmp_path -------------------------------------------------------------------
TAURUS_SPEED = "100Mf, 50Mf, 1e-9Mf, 0.1639344262295082f, 0.006599788806758183f"
TAURUS_WATTS = "95:190, 95:150, 9.75:9.75, 101:101, 125:125"


def write(tmp_path: Path, body: str, name: str = "platform.xml", header: str | None = None) -> Path:
    if header is None:
        header = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
    path = tmp_path / name
    path.write_text(f"{header}{body}\n</platform>\n" if header else body)
    return path


#: Batsim's master host (a platform without one is refused, as Batsim refuses it).
MASTER = '<host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:100"/></host>'


def zone(*hosts: str, props: str = "") -> str:
    return f'<zone id="AS0" routing="Vivaldi">{props}{MASTER}{"".join(hosts)}</zone>'


def host(name: str, speed: str | None = TAURUS_SPEED, watts: str | None = TAURUS_WATTS,
         sleep: str | None = "2:3:4", extra: str = "", props: str = "") -> str:
    attrs = f'id="{name}"' + (f' speed="{speed}"' if speed is not None else "") + extra
    inner = props
    if watts is not None:
        inner += f'<prop id="wattage_per_state" value="{watts}"/>'
    if sleep is not None:
        inner += f'<prop id="sleep_pstates" value="{sleep}"/>'
    return f"<host {attrs}>{inner}</host>"


def test_flat_hosts_order_and_props(tmp_path):
    path = write(tmp_path, zone(host("b", props='<prop id="x" value="1"/>'), host("a"), host("B"),
                                props='<prop id="site" value="s"/>'))
    platform = load_platform(path)
    assert [h.name for h in platform.hosts] == ["B", "a", "b"]
    assert platform.hosts[2].properties == {"role": "", "x": "1", "wattage_per_state": TAURUS_WATTS,
                                            "sleep_pstates": "2:3:4"}
    assert platform.hosts[0].zone_properties == {"site": "s"}
    assert platform.path == str(path)
    assert len(platform.models) == 1


def test_non_ascii_names_byte_order(tmp_path):
    path = write(tmp_path, zone(host("é"), host("z"), host("ä"), host("Z")))
    names = [h.name for h in load_platform(path).hosts]
    assert names == sorted(names, key=lambda n: n.encode())
    assert names == ["Z", "z", "ä", "é"]


def test_role_master_and_master_host(tmp_path):
    """Batsim gives master_host (its default --master-host) the role master too: two masters, Batsim aborts."""
    body = ('<zone id="AS0" routing="Vivaldi">'
            '<host id="boss" speed="1Mf"><prop id="role" value="master"/></host>'
            + host("master_host") + host("n1") + '</zone>')
    assert_error(write(tmp_path, body), "host 'boss'.role", "several master hosts")


def test_no_master_is_refused(tmp_path):
    """Batsim 4.2.1 (src/machines.cpp): "Cannot find the \"master\" role in the platform file"."""
    body = '<zone id="AS0" routing="Vivaldi">' + host("n1") + "</zone>"
    assert_error(write(tmp_path, body), "platform", "no master host", "'master_host'", 'role="master"')


def test_legacy_as_and_compute_role(tmp_path):
    body = ('<AS id="AS0" routing="Full"><prop id="k" value="v"/>' + MASTER
            + host("n1", props='<prop id="role" value="compute_node"/>') + "</AS>")
    (h,) = load_platform(write(tmp_path, body)).hosts
    assert h.zone_properties == {"k": "v"} and h.properties["role"] == "compute_node"


def test_wattage_three_values_and_missing_wattage(tmp_path, caplog):
    body = zone(host("n1", speed="2Mf, 1Mf", watts="10:12:20, 5:6:8", sleep=None),
                host("n2", speed="2Mf", watts=None, sleep=None))
    with caplog.at_level(logging.WARNING):
        platform = load_platform(write(tmp_path, body))
    n1, n2 = platform.hosts
    assert n1.model.idle_w == (10.0, 5.0) and n1.model.full_w == (20.0, 8.0)
    assert n2.model.idle_w == (0.0,) and n2.model.full_w == (0.0,)
    assert "n2" in caplog.text and "wattage_per_state" in caplog.text


def test_initial_pstate(tmp_path):
    (h,) = load_platform(write(tmp_path, zone(host("n1", extra=' pstate="1"')))).hosts
    assert h.initial_pstate == 1


def test_ignored_network_elements(tmp_path):
    # laid out as SimGrid's DTD wants: <config> first, a zone holds hosts or zones, routes last
    body = ('<config><prop id="network/model" value="CM02"/></config>'
            '<zone id="AS0" routing="Full"><zone id="z1" routing="Full">'
            + MASTER + host("n1") + host("n2") +
            '<link id="l1" bandwidth="1GBps" latency="0s"/><router id="r"/>'
            '<route src="n1" dst="n2"><link_ctn id="l1"/></route></zone>'
            '<backbone id="bb" bandwidth="1GBps" latency="0s"/>'
            '<zone id="z2" routing="Full">' + host("n3") + '</zone>'
            '<zoneRoute src="z2" dst="z2" gw_src="n3" gw_dst="n3"><link_ctn id="l1"/></zoneRoute>'
            '</zone>')
    platform = load_platform(write(tmp_path, body))
    assert [h.name for h in platform.hosts] == ["n1", "n2", "n3"]


def test_cluster_radical_list_and_props(tmp_path):
    body = ('<zone id="AS0" routing="Full"><prop id="site" value="root"/><prop id="a" value="1"/>'
            '<zone id="inner" routing="Full"><prop id="site" value="inner"/>'
            f'<cluster id="c" prefix="node-" suffix="-gpu" radical="0,2-3,10" speed="{TAURUS_SPEED}" '
            'bw="1GBps" lat="0s" core="1">'
            f'<prop id="wattage_per_state" value="{TAURUS_WATTS}"/><prop id="sleep_pstates" value="2:3:4"/>'
            '<prop id="a" value="2"/></cluster></zone>'
            f'<cluster id="d" prefix="node-" suffix="" radical="10-11" speed="1Gf" bw="1GBps" lat="0s"/>'
            '<zone id="m" routing="Vivaldi">' + MASTER + '</zone></zone>')
    platform = load_platform(write(tmp_path, body))
    assert [h.name for h in platform.hosts] == ["node-0-gpu", "node-10", "node-10-gpu", "node-11",
                                                "node-2-gpu", "node-3-gpu"]
    gpu = platform.hosts[0]
    assert gpu.properties == {"role": "", "wattage_per_state": TAURUS_WATTS, "sleep_pstates": "2:3:4",
                              "a": "2"}
    assert gpu.zone_properties == {"site": "inner", "a": "2", "wattage_per_state": TAURUS_WATTS,
                                   "sleep_pstates": "2:3:4"}
    plain = platform.hosts[1]
    assert plain.properties == {"role": ""}
    assert plain.zone_properties == {"site": "root", "a": "1"}
    assert plain.model.speeds_flops == (1e9,) and plain.model.idle_w == (0.0,)
    assert platform.master_name == "master_host"


def test_big_cluster_is_fast(tmp_path):
    body = ('<zone id="AS0" routing="Full"><zone id="m" routing="Vivaldi">'
            '<host id="master_host" speed="100Mf"/></zone>'
            f'<cluster id="big" prefix="node-" suffix="" radical="0-80639" speed="{TAURUS_SPEED}" '
            'bw="1e300Bps" lat="0s">'
            f'<prop id="wattage_per_state" value="{TAURUS_WATTS}"/><prop id="sleep_pstates" value="2:3:4"/>'
            '</cluster></zone>')
    path = write(tmp_path, body)
    start = time.perf_counter()
    platform = load_platform(path)
    elapsed = time.perf_counter() - start
    assert len(platform.hosts) == 80640
    assert elapsed < 2.0
    assert platform.hosts[1].name == "node-1" and platform.hosts[2].name == "node-10"
    assert len(platform.models) == 1


# -- errors -------------------------------------------------------------------------------------------
def assert_error(path: Path, *fragments: str) -> InputError:
    return assert_input_error(load_platform, path, *fragments)


def test_error_malformed_xml(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id='a'>\n</platform>\n")
    assert_error(path, "line 4", "malformed XML")


def test_error_missing_file(tmp_path):
    assert_error(tmp_path / "nope.xml", "cannot read")


def test_error_wrong_root(tmp_path):
    path = tmp_path / "root.xml"
    path.write_text("<?xml version='1.0'?>\n<plateforme version='4.1'/>\n")
    assert_error(path, "plateforme", "root element")


def test_error_missing_version(tmp_path):
    path = write(tmp_path, zone(host("n1")), header="<?xml version='1.0'?>\n<platform>\n")
    assert_error(path, "version", "missing")


def test_error_old_version(tmp_path):
    path = write(tmp_path, zone(host("n1")), header="<?xml version='1.0'?>\n<platform version='3'>\n")
    assert_error(path, "version", "not supported")


@pytest.mark.parametrize("speed,problem", [(None, "missing"), ("1Xf", "unknown speed unit"),
                                           ("fast", "cannot read")])
def test_error_speed(tmp_path, speed, problem):
    assert_error(write(tmp_path, zone(host("n1"), host("n2", speed=speed))), "host 'n2'.speed", problem)


def test_error_cluster_speed(tmp_path):
    body = '<zone id="AS0" routing="Full"><cluster id="c" prefix="x" radical="0-1" speed="1Qf"/></zone>'
    assert_error(write(tmp_path, body), "cluster 'c'.speed", "unit")


@pytest.mark.parametrize("watts,problem", [
    ("95:190, 95:150", "2 entries for 5 pstates"),
    ("95:190, 95:150, 9:9, 1:1, 1:1, 1:1", "6 entries"),
    ("95:190, 95:abc, 9:9, 1:1, 1:1", "not numeric"),
    ("95:190, 95, 9:9, 1:1, 1:1", "not 'idle:full'"),
    ("95:190, 95:-1, 9:9, 1:1, 1:1", "non-negative"),
])
def test_error_wattage(tmp_path, watts, problem):
    assert_error(write(tmp_path, zone(host("n1", watts=watts))), "host 'n1'.wattage_per_state", problem)


def test_error_wattage_off(tmp_path):
    body = zone(host("n1", props='<prop id="wattage_off" value="lots"/>'))
    assert_error(write(tmp_path, body), "host 'n1'.wattage_off", "not a number")


@pytest.mark.parametrize("sleep,problem", [
    ("2:3", "3 integers"), ("a:b:c", "3 integers"), ("2:3:4:5", "3 integers"),
    ("2:3:9", "switch_on pstate 9 does not exist"), ("-1:3:4", "sleep pstate -1 does not exist"),
    ("2:2:4", "also a transition pstate"), ("4:3:4", "also a transition pstate"),
])
def test_error_sleep_pstates(tmp_path, sleep, problem):
    assert_error(write(tmp_path, zone(host("n1", sleep=sleep))), "host 'n1'.sleep_pstates", problem)


@pytest.mark.parametrize("pstate,problem", [("5", "does not exist"), ("-1", "does not exist"),
                                             ("2", "sleep or transition"), ("3", "sleep or transition"),
                                             ("x", "not an integer")])
def test_error_initial_pstate(tmp_path, pstate, problem):
    body = zone(host("n1", extra=f' pstate="{pstate}"'))
    assert_error(write(tmp_path, body), "host 'n1'.pstate", problem)


def test_error_multicore_host(tmp_path):
    assert_error(write(tmp_path, zone(host("n1", extra=' core="4"'))), "host 'n1'.core", "multi-core")


def test_error_multicore_cluster(tmp_path):
    body = '<zone id="AS0" routing="Full"><cluster id="c" prefix="x" radical="0-1" speed="1Gf" core="2"/></zone>'
    assert_error(write(tmp_path, body), "cluster 'c'.core", "multi-core")


def test_error_duplicate_hosts(tmp_path):
    assert_error(write(tmp_path, zone(host("n1"), host("n1"))), "host 'n1'", "duplicate host name")


def test_error_duplicate_cluster_host(tmp_path):
    body = ('<zone id="AS0" routing="Full">' + host("x1") +
            '<cluster id="c" prefix="x" radical="0-3" speed="1Gf"/></zone>')
    assert_error(write(tmp_path, body), "cluster 'c'", "duplicate host name 'x1'")


def test_error_duplicate_in_radical(tmp_path):
    body = '<zone id="AS0" routing="Full"><cluster id="c" prefix="x" radical="0-3,2" speed="1Gf"/></zone>'
    assert_error(write(tmp_path, body), "cluster 'c'.radical", "duplicate host name 'x2'")


def test_error_bad_radical(tmp_path):
    body = '<zone id="AS0" routing="Full"><cluster id="c" prefix="x" radical="5-1" speed="1Gf"/></zone>'
    assert_error(write(tmp_path, body), "cluster 'c'.radical", "empty range")


def test_error_cluster_missing_prefix(tmp_path):
    body = '<zone id="AS0" routing="Full"><cluster id="c" radical="0-1" speed="1Gf"/></zone>'
    assert_error(write(tmp_path, body), "cluster 'c'.prefix", "missing")


def test_error_storage_host(tmp_path):
    body = zone(host("n1"), host("disk", props='<prop id="role" value="storage"/>'))
    assert_error(write(tmp_path, body), "host 'disk'.role", "storage hosts are not supported")


def test_error_no_compute_host(tmp_path):
    assert_error(write(tmp_path, zone()), "platform", "no compute host")


def test_error_unsupported_peer(tmp_path):
    body = zone(host("n1")).replace("</zone>", '<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>')
    assert_error(write(tmp_path, body), "peer", "not supported")


def test_error_prop_without_value(tmp_path):
    body = zone(host("n1", props='<prop id="k"/>'))
    assert_error(write(tmp_path, body), "host 'n1'.prop 'k'", "value")


def test_host_model_is_computation_without_sleep():
    model = NodeModel((1.0, 2.0), (0.0, 0.0), (1.0, 1.0))
    assert model.nb_pstates == 2
    assert model.is_computation(0) and model.is_computation(1)
    assert not model.is_computation(2)


# ------------------------------------------------------------ sleep_pstates without wattage_per_state (a run refused)
ROOT = Path(__file__).resolve().parent.parent
TAURUS16 = ROOT / "platforms" / "taurus_16.xml"
DEMO = ROOT / "workloads" / "demo_taurus16.json"


def _taurus_without(tmp_path: Path, *props: str) -> Path:
    """platforms/taurus_16.xml without the compute cluster's ``<prop>``s named ``props`` (the master keeps its own)."""
    lines = [line for line in TAURUS16.read_text().splitlines()
             if not any(f'<prop id="{prop}"' in line and "master" not in line and "100:100" not in line
                        for prop in props)]
    path = tmp_path / f"no-{'-'.join(props)}.xml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sleep_pstates_the_presets_cannot_read_are_one_line(tmp_path, capsys, caplog):
    """Hosts with ``sleep_pstates`` but neither ``wattage_per_state`` nor ``speed_per_state``: Batsim and the loader
    take them (0 W), but a scheduler cannot count their pstates from the properties Batsim sends, and every preset refused
    them at SIMULATION_BEGINS ("sleep pstate 13 does not exist (host has 1 pstates)"), after the loader's warning: two
    lines. Now one line naming the file, the host and the property, before the run; the warning is said only by a run
    that goes on (with ``speed_per_state`` the presets count the pstates: accepted, 0 W, warned)."""
    from tests.bad_inputs_checks import refused
    from wattsched.cli import main

    unreadable = _taurus_without(tmp_path, "wattage_per_state", "speed_per_state")
    out = tmp_path / "out"
    for scheduler in ("easy-backfill", "energy-bud", "esc"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            refused(capsys, ["run", str(unreadable), str(DEMO), "-s", scheduler, "-e", str(out), "-q"],
                    f"{unreadable}: host 'taurus-0'.sleep_pstates: the host's pstates cannot be counted",
                    "wattage_per_state or speed_per_state")
        assert "wattage_per_state property" not in caplog.text, caplog.text  # no warning before the error
        assert not list(tmp_path.glob("out*"))
    # the loader itself takes the platform (Batsim does), warning that it draws 0 W
    with caplog.at_level(logging.WARNING):
        assert load_platform(unreadable).hosts[0].model.sleep_pstate == 13
    assert "cluster 'taurus' has no wattage_per_state property: counted as 0 W" in caplog.text
    # with speed_per_state the presets read the pstates: the run goes on and the warning is said, once
    readable = _taurus_without(tmp_path, "wattage_per_state")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["run", str(readable), str(DEMO), "-s", "esc", "-e", str(out), "-q"]) == 0
    assert caplog.text.count("cluster 'taurus' has no wattage_per_state property: counted as 0 W") == 1, caplog.text


def test_a_platform_warning_is_not_said_before_a_refusal(tmp_path, capsys, caplog):
    """Without wattage_per_state nor sleep_pstates, ESC refuses the platform (no pstate to switch hosts off): that
    refusal alone, not the loader's 0 W warning before it; the loader holds its warnings when asked."""
    from tests.bad_inputs_checks import refused

    bare = _taurus_without(tmp_path, "wattage_per_state", "speed_per_state", "sleep_pstates", "wattage_off")
    with caplog.at_level(logging.WARNING):
        refused(capsys, ["run", str(bare), str(DEMO), "-s", "esc", "-e", str(tmp_path / "out"), "-q"],
                "scheduler 'esc': the platform has no sleep_pstates")
        platform = load_platform(bare, hold_warnings=True)
    assert "wattage_per_state" not in caplog.text, caplog.text
    assert platform.held_warnings == [f"{bare}: cluster 'taurus' has no wattage_per_state property: counted as 0 W"]
    with caplog.at_level(logging.WARNING):
        platform.release_warnings()
        platform.release_warnings()
    assert caplog.text.count("counted as 0 W") == 1 and platform.held_warnings == []


def test_a_pybatsim_scheduler_takes_sleep_pstates_the_presets_cannot_read_with_the_warning(tmp_path, caplog):
    """The platform the presets refuse is Batsim's to take, and a pybatsim scheduler (pybatsim's filler) runs on it:
    the run goes on, and the loader's warning is said."""
    pytest.importorskip("pybatsim")
    from wattsched.cli import main

    unreadable = _taurus_without(tmp_path, "wattage_per_state", "speed_per_state")
    with caplog.at_level(logging.WARNING):
        assert main(["run", str(unreadable), str(DEMO), "-s", "filler", "-e", str(tmp_path / "out"), "-q"]) == 0
    assert caplog.text.count("cluster 'taurus' has no wattage_per_state property: counted as 0 W") == 1, caplog.text
