"""SimGrid platform generation (platforms/generate.py) against the batsim-reference XML conventions."""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from wattsched.cli import main
from wattsched.platforms.generate import format_number, speed_attribute, taurus_platform_xml, wattage_per_state_attribute
from wattsched.base.errors import OptionError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "fixtures" / "batsim-reference"
SHIPPED = {16: "taurus_16.xml", 1152: "taurus_1152.xml", 3356: "taurus_3356.xml", 80640: "taurus_80640.xml"}


def _tree(element: ET.Element) -> tuple:
    """Comparable form of an element: tag, attributes, children (comments and whitespace ignored)."""
    return (element.tag, dict(element.attrib), [_tree(child) for child in element])


def _props(element: ET.Element) -> dict[str, str]:
    return {p.get("id"): p.get("value") for p in element.findall("prop")}


def _without_speed_props(root: ET.Element) -> ET.Element:
    """``root`` without the ``speed_per_state`` props we add for schedulers (checked to repeat ``speed``)."""
    for element in root.iter():
        for prop in element.findall("prop[@id='speed_per_state']"):
            assert prop.get("value") == element.get("speed")
            element.remove(prop)
    return root


def test_format_number_reproduces_reference_spelling() -> None:
    assert format_number(1e-9) == "1e-9"
    assert format_number(100.0) == "100.0"
    assert format_number(0.1639344262295082) == "0.1639344262295082"
    assert format_number(1e300) == "1e300"


def test_flat_variant_equals_reference_dvfs_energy_platform() -> None:
    reference = ET.parse(REFERENCE / "dvfs-energy" / "platform.xml").getroot()
    generated = _without_speed_props(ET.fromstring(taurus_platform_xml(4, prefix="host", cluster=False)))
    assert _tree(generated) == _tree(reference)


def test_flat_16_hosts_strings_equal_reference() -> None:
    reference = ET.parse(REFERENCE / "long-shutdown-fcfs" / "platform.xml").getroot()
    ref_host = reference.find(".//host[@id='host0']")
    generated = _without_speed_props(ET.fromstring(taurus_platform_xml(16, cluster=False)))
    hosts = [h for h in generated.iter("host") if h.get("id") != "master_host"]
    assert len(hosts) == 16
    for host in hosts:
        assert host.get("speed") == ref_host.get("speed") == speed_attribute()
        assert _props(host) == _props(ref_host)
    assert _props(hosts[0])["wattage_per_state"] == wattage_per_state_attribute()


def test_cluster_variant_matches_reference_taurus_cluster() -> None:
    reference = ET.parse(REFERENCE / "cluster-platform" / "platform.xml").getroot()
    ref_cluster = reference.find(".//cluster[@id='taurus']")
    root = ET.fromstring(taurus_platform_xml(12, suffix=".lyon"))
    zone = root.find("zone")
    assert zone.get("routing") == "Full"
    master_zone = zone.find("zone[@id='master_zone']")
    assert _tree(master_zone) == _tree(reference.find(".//zone[@id='master_zone']"))
    cluster = zone.find("cluster")
    for attribute in ("id", "prefix", "suffix", "radical", "router_id", "bw", "lat", "speed"):
        assert cluster.get(attribute) == ref_cluster.get(attribute), attribute
    ref_props = _props(ref_cluster)
    ours = _props(cluster)
    assert ours.pop("speed_per_state") == cluster.get("speed")  # for schedulers: Batsim does not send speeds
    assert {k: ref_props[k] for k in ("wattage_per_state", "wattage_off", "sleep_pstates")} == ours
    assert _tree(zone.find("link")) == _tree(reference.find(".//link[@id='backbone']"))
    route = zone.find("zoneRoute")
    assert route.attrib == {"src": "master_zone", "dst": "taurus", "gw_src": "master_host", "gw_dst": "taurus_router"}
    assert [c.get("id") for c in route] == ["backbone"]


@pytest.mark.parametrize("nb_hosts", sorted(SHIPPED))
def test_shipped_platforms_are_generated_and_small(nb_hosts: int) -> None:
    path = ROOT / "platforms" / SHIPPED[nb_hosts]
    text = path.read_text(encoding="utf-8")
    assert text == taurus_platform_xml(nb_hosts)
    assert len(text) < 4096
    cluster = ET.fromstring(text).find(".//cluster")
    first, last = (int(x) for x in cluster.get("radical").split("-"))
    assert (first, last) == (0, nb_hosts - 1)
    assert last - first + 1 == nb_hosts


def test_flat_variant_has_requested_host_count() -> None:
    root = ET.fromstring(taurus_platform_xml(7, cluster=False))
    names = [h.get("id") for h in root.iter("host")]
    assert names == ["master_host"] + [f"taurus-{i}" for i in range(7)]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_invalid_host_count(bad: object) -> None:
    with pytest.raises(OptionError):
        taurus_platform_xml(bad)  # type: ignore[arg-type]


def test_invalid_prefix() -> None:
    with pytest.raises(OptionError, match="prefix"):
        taurus_platform_xml(4, prefix='a"b')


def test_cli_writes_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.xml"
    assert main(["platform", "--hosts", "5", "--output", str(out), "--flat"]) == 0
    assert out.read_text() == taurus_platform_xml(5, cluster=False)
    with pytest.raises(SystemExit) as exit_:
        main(["platform", "--hosts", "0"])
    assert exit_.value.code == 2
    assert "positive integer" in capsys.readouterr().err


def test_generated_platform_loads_in_simulator(tmp_path: Path) -> None:
    if importlib.util.find_spec("wattsched.simulator.platform") is None:
        pytest.skip("simulator/platform.py not written yet")
    from wattsched.simulator.platform import load_platform

    for cluster in (True, False):
        path = tmp_path / f"taurus16_{cluster}.xml"
        path.write_text(taurus_platform_xml(16, cluster=cluster), encoding="utf-8")
        platform = load_platform(path)
        assert len(platform.hosts) == 16
    assert len(load_platform(ROOT / "platforms" / "taurus_16.xml").hosts) == 16
