"""Platform audit against Batsim 4.2.1 (src/machines.cpp, src/batsim.cpp, src/permissions.cpp) and SimGrid 3.32
(src/surf/xml/simgrid.dtd + simgrid_dtd.c, surfxml_sax_cb.cpp, sg_platf.cpp, kernel/routing/NetZoneImpl.cpp).

Each test fails on the current loader and passes with the patch named in its name (test_p1_* needs
patch1_master_roles.diff, test_p2_* patch2_zones.diff, ...). Parse-only: no simulation is run, except in
test_p1_two_masters_never_reach_simulation_begins.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_behaviour_variants import TOY_SPEED, TOY_WATTS, host_xml, platform_xml, toy_platform
from wattsched.base.errors import InputError
from wattsched.simulator.platform import load_platform

HEAD = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
MASTER = '<host id="master_host" speed="100Mf"><prop id="wattage_per_state" value="100:100"/></host>'
MASTER_ZONE = f'<zone id="m" routing="Vivaldi">{MASTER}</zone>'


def cluster(cid: str = "c", radical: str = "0-1", attrs: str = 'suffix="" bw="1e300Bps" lat="0s"',
            props: str = "") -> str:
    return (f'<cluster id="{cid}" prefix="n-" radical="{radical}" speed="{TOY_SPEED}" {attrs}>'
            f'<prop id="wattage_per_state" value="{TOY_WATTS}"/>{props}</cluster>')


def load(tmp_path: Path, text: str):
    path = tmp_path / "p.xml"
    path.write_text(text)
    return load_platform(path)


def refused(tmp_path: Path, text: str, *fragments: str) -> str:
    with pytest.raises(InputError) as info:
        load(tmp_path, text)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


# ----------------------------------------------------------------------------------- patch 1: master and roles
def test_p1_master_host_and_a_role_master_host_are_two_masters(tmp_path):
    """batsim.cpp: hosts_roles_map[--master-host (default master_host)] = "master"; machines.cpp: "There are two
    master hosts..." when another host has role=master as well (we made master_host a compute host)."""
    boss = host_xml("boss", props={"role": "master"})
    refused(tmp_path, platform_xml([boss, host_xml("a")]), "several master hosts", "master_host")


@pytest.mark.parametrize("role", ["master", "", "compute_node"])
def test_p1_a_role_on_master_host_is_refused(tmp_path, role):
    """machines.cpp: an existing role gets ",master" appended ("master,master", ",master"): no role, Batsim's
    permissions_from_role throws."""
    master = MASTER.replace("</host>", f'<prop id="role" value="{role}"/></host>')
    text = HEAD + f'<zone id="AS0" routing="Vivaldi">{master}{host_xml("a")}</zone></platform>'
    refused(tmp_path, text, "host 'master_host'.role")


@pytest.mark.parametrize("role", ["compute", "Compute_node", "master ", "compute_node,master"])
def test_p1_roles_batsim_does_not_know_are_refused(tmp_path, role):
    """permissions.cpp knows "", master, compute_node, storage; anything else throws (we took "compute")."""
    refused(tmp_path, platform_xml([host_xml("a", props={"role": role})]), "host 'a'.role", "unknown role")


def test_p1_compute_node_role_is_still_a_compute_node(tmp_path):
    (h,) = load(tmp_path, platform_xml([host_xml("a", props={"role": "compute_node"})])).hosts
    assert h.properties["role"] == "compute_node"


@pytest.mark.parametrize("master, field", [
    (MASTER.replace("100:100", "100"), "wattage_per_state"),               # host_energy.cpp: 2 or 3 values
    (MASTER.replace("100:100", "100:100, 1:1"), "wattage_per_state"),      # one entry per pstate
    (MASTER.replace('"100Mf"', '"fast"'), "speed"),                         # xbt_parse_get_all_speeds
    (MASTER.replace('speed="100Mf"', 'speed="100Mf" pstate="1"'), "pstate"),  # set_pstate: no pstate 1
    (MASTER.replace("</host>", '<prop id="sleep_pstates" value="3:4:5"/></host>'), "sleep_pstates"),  # machines.cpp
    (MASTER.replace("</host>", '<prop id="wattage_off" value="off"/></host>'), "wattage_off"),  # std::stod throws
])
def test_p1_the_master_host_is_read_as_any_host(tmp_path, master, field):
    text = HEAD + f'<zone id="AS0" routing="Vivaldi">{master}{host_xml("a")}</zone></platform>'
    refused(tmp_path, text, f"host 'master_host'.{field}")


def test_p1_a_role_master_host_is_read_as_any_host(tmp_path):
    boss = host_xml("boss", watts="1:2:3:4", sleep=None, props={"role": "master"})
    text = HEAD + f'<zone id="AS0" routing="Vivaldi">{boss}{host_xml("a")}</zone></platform>'
    refused(tmp_path, text, "host 'boss'.wattage_per_state")


# ----------------------------------------------------------------------------------------- patch 2: zones
@pytest.mark.parametrize("routing", ["ClusterTorus", "ClusterFatTree", "ClusterDragonfly"])
def test_p2_routings_simgrid_3_32_no_longer_knows(tmp_path, routing):
    """sg_platf_create_zone (3.32): Cluster, Dijkstra, DijkstraCache, Floyd, Full, None, Vivaldi, Wifi; else
    xbt_die("Not a valid model!")."""
    text = HEAD + f'<zone id="AS0" routing="{routing}">{MASTER}{host_xml("a")}</zone></platform>'
    refused(tmp_path, text, "zone 'AS0'.routing", "unknown routing")


@pytest.mark.parametrize("zone_open", ['<zone id="AS0">', '<zone routing="Full">', '<AS routing="Full">'])
def test_p2_zone_id_and_routing_are_required(tmp_path, zone_open):
    """simgrid.dtd: <!ATTLIST zone id CDATA #REQUIRED> and routing #REQUIRED (FleXML: "Required attribute")."""
    close = "</AS>" if zone_open.startswith("<AS") else "</zone>"
    text = HEAD + f'{zone_open}{MASTER}{host_xml("a")}{close}</platform>'
    refused(tmp_path, text, "missing")


def test_p2_master_in_a_none_zone(tmp_path):
    """README B36 / EmptyZone::get_local_route: "There can't be route in an Empty zone"."""
    text = (HEAD + '<zone id="AS0" routing="Full"><zone id="m" routing="None">' + MASTER + "</zone>"
            + cluster() + "</zone></platform>")
    refused(tmp_path, text, "zone 'm'.routing", "None")


@pytest.mark.parametrize("body", [
    MASTER_ZONE + '<zone id="m" routing="Full">' + host_xml("a") + "</zone>",   # two zones named m
    MASTER_ZONE + cluster(cid="m"),                                               # a cluster is a zone
    MASTER_ZONE + cluster(attrs='suffix="" bw="1Bps" lat="0s" router_id="m"'),  # a router named as a zone
    MASTER_ZONE + cluster(attrs='suffix="" bw="1Bps" lat="0s" router_id="n-1"'),  # a router named as a host
    MASTER_ZONE + cluster(cid="c") + cluster(cid="d", radical="5", attrs='suffix="" bw="1Bps" lat="0s" '
                                                                          'router_id="c_r"').replace(
        'router_id="c_r"', 'router_id="n-c_router"'),                          # default router name n-c_router
])
def test_p2_zone_and_router_names_are_unique_netpoints(tmp_path, body):
    """NetZoneImpl: "Refusing to create a second NetZone called ...", create_router: "Refusing to create a router
    named ...: this name already describes a node"."""
    refused(tmp_path, HEAD + f'<zone id="AS0" routing="Full">{body}</zone></platform>', "already the name")


# ------------------------------------------------------------------------------------ patch 3: cluster enums
@pytest.mark.parametrize("attrs, field", [
    ('topology="RING"', "topology"),
    ('topology="flat"', "topology"),
    ('topology="TORUS" topo_parameters="2,2"', "topology"),          # SimGrid: 4 hosts of 6 radicals, no zone props
    ('topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,2"', "topology"),
    ('topology="DRAGONFLY" topo_parameters="1,1;1,1;1,1;6"', "topology"),
    ('sharing_policy="SPLIT"', "sharing_policy"),
    ('bb_sharing_policy="SPLITDUPLEX"', "bb_sharing_policy"),
])
def test_p3_cluster_enumerated_attributes(tmp_path, attrs, field):
    body = MASTER_ZONE + cluster(radical="0-5", attrs=f'suffix="" bw="1Bps" lat="0s" {attrs}')
    refused(tmp_path, HEAD + f'<zone id="AS0" routing="Full">{body}</zone></platform>', f"cluster 'c'.{field}")


def test_p3_flat_cluster_still_loads(tmp_path):
    body = MASTER_ZONE + cluster(attrs='suffix="" bw="1Bps" lat="0s" topology="FLAT" sharing_policy="FATPIPE"')
    assert load(tmp_path, HEAD + f'<zone id="AS0" routing="Full">{body}</zone></platform>').nb_hosts == 2


# --------------------------------------------------------------------------------- patch 4: DTD content models
@pytest.mark.parametrize("text, where", [
    (HEAD + MASTER + '<zone id="AS0" routing="Full">' + host_xml("a") + "</zone></platform>", "platform.<host>"),
    (HEAD + f'<zone id="AS0" routing="Full">{MASTER}{cluster()}</zone></platform>', "zone 'AS0'.<cluster>"),
    (HEAD + f'<zone id="AS0" routing="Full">{MASTER}{MASTER_ZONE.replace(MASTER, host_xml("a"))}</zone></platform>',
     "zone 'AS0'.<zone>"),
    (HEAD + f'<zone id="AS0" routing="Full">{MASTER}{host_xml("a")}<prop id="k" value="v"/></zone></platform>',
     "zone 'AS0'.<prop>"),
    (HEAD + f'<zone id="AS0" routing="Full">{MASTER}{host_xml("a")}</zone><config id="c"/></platform>',
     "platform.<config>"),
    (HEAD + f'<zone id="AS0" routing="Full">{MASTER_ZONE}<zoneRoute src="m" dst="m" gw_src="master_host" '
     f'gw_dst="master_host"/>{cluster()}</zone></platform>', "zone 'AS0'.<cluster>"),
])
def test_p4_content_models_simgrid_enforces(tmp_path, text, where):
    """simgrid.dtd content models, enforced by FleXML (simgrid_dtd.c: "Starting tag <host> is not allowed here.";
    after a host a zone is in state S_surfxml_zone_14, where no <cluster> or <zone> starts)."""
    refused(tmp_path, text, where, "not allowed here")


def test_p4_a_second_top_level_zone_with_hosts(tmp_path):
    """Only the first zone is the root; a later top-level zone has no parent, hence no CPU model: create_host
    aborts ("Impossible to create host ... Invalid CPU model: nullptr")."""
    text = HEAD + f'<zone id="z1" routing="Full">{MASTER}</zone><zone id="z2" routing="Full">{host_xml("a")}</zone>' \
        + "</platform>"
    refused(tmp_path, text, "second top-level zone")


def test_p4_recording_layout_still_loads(tmp_path):
    body = (f'<zone id="AS0" routing="Full"><prop id="site" value="x"/>{MASTER_ZONE}{cluster()}'
            '<link id="l" bandwidth="1e300Bps" latency="0s"/>'
            '<zoneRoute src="m" dst="c" gw_src="master_host" gw_dst="n-c_router"><link_ctn id="l"/></zoneRoute>'
            '</zone>')
    assert load(tmp_path, HEAD + body + "</platform>").nb_hosts == 2


# ------------------------------------------------------------------------------ patch 5: cluster #REQUIRED
@pytest.mark.parametrize("missing", ["suffix", "bw", "lat"])
def test_p5_cluster_required_attributes(tmp_path, missing):
    """simgrid.dtd: suffix, bw and lat are #REQUIRED on <cluster> (we took suffix="" and ignored bw/lat)."""
    attrs = " ".join(f'{k}="{v}"' for k, v in (("suffix", ""), ("bw", "1Bps"), ("lat", "0s")) if k != missing)
    body = MASTER_ZONE + cluster(attrs=attrs)
    refused(tmp_path, HEAD + f'<zone id="AS0" routing="Full">{body}</zone></platform>', f"cluster 'c'.{missing}")


def test_an_xml_declaration_after_blank_lines_is_read_as_simgrid_reads_it(tmp_path) -> None:
    """Batsim 4.2.1's own ``platforms/energy_platform_homogeneous_no_net_*.xml`` (used by its test suite) start with a
    newline before ``<?xml ...?>``: SimGrid's lexer skips it, Python's XML parser refused the file. The lines of later
    errors are unchanged."""
    from wattsched.base.errors import InputError
    from wattsched.simulator.platform import parse_platform

    good = toy_platform(2)
    assert good.startswith("<?xml")
    assert len(parse_platform(("\n  \n" + good).encode(), "p.xml").hosts) == 2
    bad = "\n" + good.replace("</platform>", "<a></b></platform>", 1)
    with pytest.raises(InputError, match="malformed XML") as refused:
        parse_platform(bad.encode(), "p.xml")
    assert f"line {bad[:bad.index('</b>')].count(chr(10)) + 1}:" in str(refused.value)


def test_links_that_cost_time_are_named_in_a_warning(tmp_path, caplog) -> None:
    """Behaviour 36: Batsim's internal messages cross the links, which the embedded simulator does not model.
    A latency, or a bandwidth below 1e300 B/s, gives a warning naming the file and the attribute; the zero-cost
    values of the recordings and of ``wattsched platform`` give none."""
    zero = toy_platform(2)
    costly = zero.replace("</zone>", '<link id="l1" bandwidth="125MBps" latency="50us"/></zone>', 1)
    assert costly != zero
    for text, warned in ((zero, False), (costly, True)):
        path = tmp_path / "p.xml"
        path.write_text(text)
        caplog.clear()
        with caplog.at_level("WARNING"):
            load_platform(path)
        assert ("does not model the network" in caplog.text) is warned, caplog.text
    assert "link 'l1'.bandwidth '125MBps'" in caplog.text or "link 'l1'.latency '50us'" in caplog.text


def test_a_one_host_cluster_with_role_master_is_the_master(tmp_path) -> None:
    """sg_platf_new_cluster_flat gives each host of a flat cluster the cluster's properties: a cluster of one host
    with role=master is the master (Batsim's own cluster512.xml and cluster_energy_128.xml), its host is no
    compute host, and the compute hosts are sorted by name as machines.cpp sorts them."""
    master = cluster("boss", radical="0-0", props='<prop id="role" value="master"/>').replace('prefix="n-"',
                                                                                            'prefix="master_host"')
    text = HEAD + f'<zone id="AS0" routing="Full">{cluster(radical="0-11")}{master}</zone></platform>'
    platform = load(tmp_path, text)
    assert platform.master_name == "master_host0"
    assert [h.name for h in platform.hosts][:4] == ["n-0", "n-1", "n-10", "n-11"]
    assert len(platform.hosts) == 12


def test_a_cluster_of_several_masters_is_refused(tmp_path) -> None:
    """Each of its hosts is a master: Batsim aborts ("There are two master hosts...")."""
    masters = cluster("boss", radical="0-1", props='<prop id="role" value="master"/>').replace('prefix="n-"',
                                                                                             'prefix="m-"')
    text = HEAD + f'<zone id="AS0" routing="Full">{cluster(radical="0-3")}{masters}</zone></platform>'
    refused(tmp_path, text, "cluster 'boss'.role", "two master hosts")


def test_a_cluster_master_beside_master_host_is_two_masters(tmp_path) -> None:
    master = cluster("boss", radical="7", props='<prop id="role" value="master"/>').replace('prefix="n-"', 'prefix="m-"')
    text = HEAD + f'<zone id="AS0" routing="Full">{cluster()}{master}<zone id="m" routing="Full">{MASTER}</zone></zone></platform>'
    refused(tmp_path, text, "several master hosts")
