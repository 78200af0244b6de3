"""Generate SimGrid 4.1 platforms of Taurus nodes (energy-budget paper, table I), ESC five-state nodes
(ESC paper §3) or UPAS processors (UPAS paper, table 2 and eq. 3), docs/architecture.md §4.

Two forms, both accepted by real Batsim 4.2.1 (they copy the ``batsim-reference`` fixtures):

* **cluster** (default, the shipped ``taurus_*.xml``): a root zone ``AS0`` (routing ``Full``) holding a
  ``master_zone`` (``Vivaldi``) with the ``master_host`` (100 Mf, ``wattage_per_state="100:100"``), one
  SimGrid ``<cluster id="taurus">`` whose hosts are ``<prefix>0 .. <prefix>(n-1)``, and a backbone link with
  a ``zoneRoute`` from the master zone to the cluster. Every link has latency 0 and bandwidth 1e300 B/s
  so Batsim's internal messages take no simulated time (``cluster-platform`` scenario, behaviours 34-36).
  The file stays a few KB whatever the size (80,640 flat hosts would weigh 63 MB in this form).
* **flat** (``cluster=False``): one ``Vivaldi`` zone, the master host and one ``<host>`` element per node,
  all at coordinates ``0 0 0``, like ``dvfs-energy/platform.xml``.

Each compute host carries the 16 Taurus pstates of :data:`energy_models.taurus.TAURUS` (13 DVFS, sleep,
virtual switch-off, virtual switch-on), ``wattage_per_state`` ``idle:full`` per pstate, ``wattage_off``
and ``sleep_pstates="13:14:15"``, and ``speed_per_state``: the ``speed`` attribute again, as a property,
because Batsim sends schedulers the properties of each host but not its speeds (a DVFS policy needs them
to know how long a job runs at a pstate, and a power manager how long a transition takes;
:mod:`wattsched.energy_models.power`). Numbers are written with Python's shortest round-trip ``repr`` (exponent
without padding: ``1e-9Mf``), which reproduces the reference strings character for character.

Batsim numbers hosts in byte order of their names (behaviour 1): ``taurus-0, taurus-1, taurus-10, ...``.

:func:`platform_xml` writes any node kind (:class:`NodeKind`: the pstates and sleep pstates of
:data:`energy_models.taurus.TAURUS` or :data:`energy_models.esc.ESC`); :func:`taurus_platform_xml` and
:func:`esc_platform_xml` are its two kinds, the ESC one with hosts ``node0 .. node(n-1)`` in a cluster
``esc`` (the names of the ``esc-states`` recording, behaviour 45).

The UPAS paper's processor (:func:`upas_platform_xml`, :mod:`energy_models.upas`) adds a
``frequency_ghz_per_state`` property: the gear (GHz) of each computation pstate.

Command line: ``wattsched platform --hosts 1152 --output platforms/taurus_1152.xml [--flat] [--node esc|upas]``.
"""

from __future__ import annotations

import re
from typing import Mapping, Protocol, Sequence

from wattsched.energy_models.esc import ESC
from wattsched.energy_models.taurus import TAURUS
from wattsched.base.errors import OptionError
from wattsched.base.validate import check_count, check_memory, option_error

__all__ = [
    "EAMC_PARTITIONS",
    "NodeKind",
    "eamc_platform_xml",
    "format_number",
    "host_name_part_problem",
    "speed_attribute",
    "wattage_per_state_attribute",
    "platform_xml",
    "taurus_platform_xml",
    "esc_platform_xml",
    "upas_platform_xml",
]


class PstateText(Protocol):
    """What is written of a pstate: its speed (value and SimGrid unit) and ``idle:full`` watts."""

    @property
    def speed_value(self) -> float: ...
    @property
    def speed_unit(self) -> str: ...
    @property
    def idle_w(self) -> float: ...
    @property
    def full_w(self) -> float: ...


class NodeKind(Protocol):
    """A kind of compute host the generator writes (:class:`~wattsched.energy_models.taurus.TaurusNode`,
    :class:`~wattsched.energy_models.esc.EscNode`)."""

    @property
    def pstates(self) -> Sequence[PstateText]: ...
    @property
    def sleep_pstate(self) -> int: ...
    @property
    def switch_off_pstate(self) -> int: ...
    @property
    def switch_on_pstate(self) -> int: ...
    @property
    def off_w(self) -> float: ...

_HEADER = (
    "<?xml version='1.0'?>\n"
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1">\n'
)
_FOOTER = "</platform>\n"
_ZERO_COST = 'bw="1e300Bps" lat="0s"'


def format_number(value: float) -> str:
    """Shortest round-trip decimal of ``value``, exponent unpadded (``1e-09`` → ``1e-9``)."""
    text = repr(float(value))
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), text)


def speed_attribute(node: NodeKind = TAURUS) -> str:
    """The ``speed`` attribute of a compute host: every pstate speed with its unit, comma-separated."""
    return ", ".join(f"{format_number(p.speed_value)}{p.speed_unit}" for p in node.pstates)


def wattage_per_state_attribute(node: NodeKind = TAURUS) -> str:
    """The ``wattage_per_state`` property: ``idle:full`` per pstate, comma-separated."""
    return ", ".join(f"{format_number(p.idle_w)}:{format_number(p.full_w)}" for p in node.pstates)


def _energy_props(node: NodeKind, indent: str, extra: Sequence[tuple[str, str]] = ()) -> str:
    sleep = f"{node.sleep_pstate}:{node.switch_off_pstate}:{node.switch_on_pstate}"
    node_extra: Mapping[str, str] = getattr(node, "extra_properties", {})  # e.g. the UPAS node's frequencies
    return (
        f'{indent}<prop id="speed_per_state" value="{speed_attribute(node)}" />\n'
        f'{indent}<prop id="wattage_per_state" value="{wattage_per_state_attribute(node)}" />\n'
        f'{indent}<prop id="wattage_off" value="{format_number(node.off_w)}" />\n'
        f'{indent}<prop id="sleep_pstates" value="{sleep}" />\n'
        + "".join(f'{indent}<prop id="{key}" value="{value}" />\n' for key, value in (*node_extra.items(), *extra))
    )


def _cluster(cluster_id: str, prefix: str, suffix: str, nb_hosts: int, node: NodeKind,
             extra: Sequence[tuple[str, str]] = ()) -> str:
    """A ``<cluster>`` of ``nb_hosts`` hosts of kind ``node`` with zero-cost links (and ``extra`` props)."""
    return (
        f'  <cluster id="{cluster_id}" prefix="{prefix}" suffix="{suffix}" radical="0-{nb_hosts - 1}" '
        f'router_id="{cluster_id}_router"\n'
        f'           {_ZERO_COST} speed="{speed_attribute(node)}">\n'
        + _energy_props(node, "    ", extra)
        + "  </cluster>\n"
    )


def _zone_route(src: str, dst: str, gw_src: str, gw_dst: str) -> str:
    return (f'  <zoneRoute src="{src}" dst="{dst}" gw_src="{gw_src}" gw_dst="{gw_dst}">'
            '<link_ctn id="backbone" /></zoneRoute>\n')


def _master_host(indent: str) -> str:
    return (
        f'{indent}<host id="master_host" coordinates="0 0 0" speed="100Mf">\n'
        f'{indent}  <prop id="wattage_per_state" value="100:100" />\n'
        f"{indent}</host>\n"
    )


def taurus_platform_xml(
    nb_hosts: int,
    *,
    prefix: str = "taurus-",
    suffix: str = "",
    cluster: bool = True,
    node: NodeKind = TAURUS,
) -> str:
    """SimGrid 4.1 XML of ``nb_hosts`` Taurus nodes plus Batsim's ``master_host`` (:func:`platform_xml`)."""
    return platform_xml(nb_hosts, node, prefix=prefix, suffix=suffix, cluster=cluster, cluster_id="taurus",
                        what="Taurus-calibrated hosts", source="energy-budget paper table I + Batsim's DVFS pstates")


def esc_platform_xml(nb_hosts: int, *, prefix: str = "node", suffix: str = "", cluster: bool = True,
                     node: NodeKind = ESC) -> str:
    """SimGrid 4.1 XML of ``nb_hosts`` ESC five-state nodes (ESC paper §3; :mod:`energy_models.esc`) plus
    Batsim's ``master_host``, hosts ``node0 .. node(n-1)`` (:func:`platform_xml`): 128 for the paper's NASA
    iPSC/860, 57 for its OSC cluster."""
    return platform_xml(nb_hosts, node, prefix=prefix, suffix=suffix, cluster=cluster, cluster_id="esc",
                        what="ESC five-state nodes",
                        source="ESC paper §3: standby 2 W, off 480 s 10.79 Wh, on 555 s 13.71 Wh, idle 150 W, loaded 230 W")


def upas_platform_xml(nb_hosts: int, *, top_power_w: float = 100.0, prefix: str = "cpu", suffix: str = "",
                      cluster: bool = True, node: NodeKind | None = None) -> str:
    """SimGrid 4.1 XML of ``nb_hosts`` processors of the UPAS paper (:mod:`energy_models.upas`: table 2's six
    gears as pstates 0-5 at 2300 … 800 Mflop/s, eq. 3's powers for ``top_power_w`` of running power at the top
    gear, a 0 W sleep pstate and 1 s transitions, and the ``frequency_ghz_per_state`` property) plus Batsim's
    ``master_host``, hosts ``cpu0 .. cpu(n-1)`` (:func:`platform_xml`). The paper's machines have 430, 128,
    1,152, 4,008 and 9,216 processors (table 1); :func:`~wattsched.energy_models.upas.enlarged_size` gives
    them 10-75 % larger.

    Raises:
        OptionError: ``nb_hosts`` < 1 or a non-positive ``top_power_w``.
    """
    from wattsched.energy_models.upas import upas_node

    if node is None:
        try:
            node = upas_node(top_power_w)
        except ValueError as exc:
            raise OptionError(f"--top-power: {exc}") from None
    return platform_xml(nb_hosts, node, prefix=prefix, suffix=suffix, cluster=cluster, cluster_id="upas",
                        what="UPAS processors",
                        source=f"UPAS paper table 2 gears, eq. 3 powers, {format_number(top_power_w)} W running at "
                               "2.3 GHz")


def host_name_part_problem(text: str) -> str | None:
    """Why ``text`` cannot be the prefix or suffix of generated host names, or None when it can be.

    A control character (or a byte of the command line that is not UTF-8) cannot be written in XML at all,
    quotes and ``<>&`` would end or break the attribute, and a space would split the name wherever names are
    listed. A comma or a colon can be written, and SimGrid takes the name, but then the host cannot be named to
    Batsim: its ``--add-role-to-hosts`` reads ``host1,host2:role`` (``batsim --help``).
    """
    if any(c in text for c in "<>&\"' \t\n") or not text.isprintable():
        return "must not contain spaces, quotes, <>&, control characters or bytes that are not UTF-8"
    if "," in text or ":" in text:
        return ("must not contain a comma or a colon: Batsim's --add-role-to-hosts reads host names as "
                "'host1,host2:role'")
    return None


#: Memory a flat platform takes per host while it is written and checked (measured: 223 MB at 20,000 hosts).
_FLAT_BYTES_PER_HOST = 10_000


def platform_xml(
    nb_hosts: int,
    node: NodeKind,
    *,
    prefix: str,
    suffix: str = "",
    cluster: bool = True,
    cluster_id: str = "cluster",
    what: str = "hosts",
    source: str = "",
) -> str:
    """SimGrid 4.1 XML of ``nb_hosts`` hosts of kind ``node`` plus Batsim's ``master_host``.

    Args:
        nb_hosts: number of compute hosts (≥ 1).
        node: the node kind whose pstates are written.
        prefix: host names are ``f"{prefix}{i}{suffix}"`` for i in 0..nb_hosts-1.
        suffix: see ``prefix`` (cluster and flat forms alike).
        cluster: write one SimGrid ``<cluster>`` (a few KB) rather than one ``<host>`` per node.
        cluster_id: the ``<cluster>``'s id (its router is ``<cluster_id>_router``).
        what, source: the header comment: what the hosts are and where their numbers come from.

    Raises:
        OptionError: ``nb_hosts`` < 1 or a prefix/suffix that cannot appear in an XML attribute or in Batsim's
            lists of host names (:func:`host_name_part_problem`).
    """
    if isinstance(nb_hosts, bool) or not isinstance(nb_hosts, int) or nb_hosts < 1:
        raise OptionError(f"number of hosts must be a positive integer, got {nb_hosts!r}")
    check_count(nb_hosts, "hosts", "platform", "hosts", "hosts", option_error)
    for name, text in (("prefix", prefix), ("suffix", suffix)):
        problem = host_name_part_problem(text)
        if problem is not None:
            raise OptionError(f"host name {name} {text!r} {problem}")
    if f"{prefix}0{suffix}" == "master_host":
        raise OptionError("host names must differ from 'master_host'")

    speed = speed_attribute(node)
    form = "SimGrid <cluster>" if cluster else "flat hosts"
    comment = f"<!-- {nb_hosts} {what} ({form}, {source}) + master_host; generated by platforms/generate.py -->\n"
    if not cluster:  # (2,000,000 flat hosts, within the hosts bound, got the system's out-of-memory kill)
        check_memory(nb_hosts * _FLAT_BYTES_PER_HOST, "platform", "hosts",
                     f"a platform of {nb_hosts} flat hosts (--flat; the SimGrid <cluster> form takes a few KB)",
                     option_error)
        hosts = "".join(
            f'  <host id="{prefix}{i}{suffix}" coordinates="0 0 0" speed="{speed}" pstate="0">\n'
            + _energy_props(node, "    ")
            + "  </host>\n"
            for i in range(nb_hosts)
        )
        body = '<zone id="AS0" routing="Vivaldi">\n' + _master_host("  ") + hosts + "</zone>\n"
        return _HEADER + comment + body + _FOOTER

    body = (
        '<zone id="AS0" routing="Full">\n'
        '  <zone id="master_zone" routing="Vivaldi">\n'
        + _master_host("    ")
        + "  </zone>\n"
        + _cluster(cluster_id, prefix, suffix, nb_hosts, node)
        + '  <link id="backbone" bandwidth="1e300Bps" latency="0s" sharing_policy="FATPIPE" />\n'
        + _zone_route("master_zone", cluster_id, "master_host", f"{cluster_id}_router")
        + "</zone>\n"
    )
    return _HEADER + comment + body + _FOOTER


#: The EAMC paper's p1/p2 system (§5): partition → (EAR module, CPU), 512 nodes each at full size.
EAMC_PARTITIONS: dict[str, tuple[str, str]] = {
    "p1": ("normal", "2x Platinum 8168, 1.2-2.7 GHz"),
    "p2": ("normal2", "2x Gold 6254, 1.2-3.1 GHz"),
}


def eamc_platform_xml(hosts: Sequence[int] = (512, 512), *, ear_model: str | None = None) -> str:
    """SimGrid 4.1 XML of the EAMC paper's two-partition system (§5: p1 512 Platinum 8168 nodes at 1.2-2.7 GHz,
    p2 512 Gold 6254 nodes at 1.2-3.1 GHz), at any size, plus Batsim's ``master_host``.

    One ``<cluster>`` per partition, ids ``p1`` and ``p2``, hosts ``p1-0 …`` and ``p2-0 …`` (so p1 gets the
    ids 0 … n1-1 and p2 the next ones, Batsim behaviour 1), each with the props ``partition`` (its name) and
    ``ear_model`` (its EAR module: ``normal``, ``normal2``) that the EAMC scheduler reads
    (:mod:`wattsched.schedulers.eamc`), and the node of :func:`wattsched.energy_models.ear.ear_node`: pstate 0 the
    top frequency, 1-3 sleep and transitions (the same on both partitions), then one pstate per lower 0.1 GHz
    step, speed = frequency, ``full`` wattage the mean of the model's powers at that frequency.

    Args:
        hosts: the number of hosts of p1 and p2 (each ≥ 1).
        ear_model: folder of the EAR data (default: the shipped one).

    Raises:
        OptionError: not two positive host counts.
        InputError: malformed EAR data.
    """
    from wattsched.energy_models.ear import ear_node, load_ear_model

    sizes = tuple(hosts)
    if len(sizes) != 2 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
        raise OptionError(f"the EAMC platform needs two positive host counts (p1, p2), got {hosts!r}")
    check_count(sum(sizes), "hosts", "EAMC platform", "hosts", "hosts (p1 and p2)", option_error)
    model = load_ear_model(ear_model)
    clusters = []
    for (name, (module, cpu)), n in zip(EAMC_PARTITIONS.items(), sizes):
        node = ear_node(model, module)
        clusters.append(_cluster(name, f"{name}-", "", n, node, (("partition", name), ("ear_model", module))))
    names = list(EAMC_PARTITIONS)
    comment = (f"<!-- EAMC p1/p2 system: {sizes[0]} {EAMC_PARTITIONS['p1'][1]} hosts (partition p1) + {sizes[1]} "
               f"{EAMC_PARTITIONS['p2'][1]} hosts (partition p2), SimGrid <cluster>s, EAR model powers "
               "(energy_models/ear.py) + master_host; generated by platforms/generate.py -->\n")
    body = (
        '<zone id="AS0" routing="Full">\n'
        '  <zone id="master_zone" routing="Vivaldi">\n'
        + _master_host("    ")
        + "  </zone>\n"
        + "".join(clusters)
        + '  <link id="backbone" bandwidth="1e300Bps" latency="0s" sharing_policy="FATPIPE" />\n'
        + "".join(_zone_route("master_zone", c, "master_host", f"{c}_router") for c in names)
        + _zone_route(names[0], names[1], f"{names[0]}_router", f"{names[1]}_router")
        + "</zone>\n"
    )
    return _HEADER + comment + body + _FOOTER
