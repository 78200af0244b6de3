"""Load a SimGrid platform XML (format version 4.x) the way Batsim 4.2.1 sees it.

Only what the embedded simulator needs is read: compute hosts (``<host>`` and ``<cluster>``), their
pstate speeds, ``wattage_per_state`` / ``wattage_off`` / ``sleep_pstates`` properties, and the
``<prop>``s of the zones that enclose them. The network (links, routes, routers, backbones ...) is
ignored: the platforms we simulate have zero-cost networks (see docs/architecture.md §4 and behaviours 34-36 of
``tests/fixtures/batsim-reference/README.md``); a zone's ``routing`` must still be one SimGrid knows. What
the simulator does not model is refused, not ignored: ``<cabinet>``, ``<peer>``, and the ``speed_file``,
``availability_file`` and ``state_file`` attributes of a ``<host>`` (its speed or state changing over time), a
``<trace_connect>`` of kind ``SPEED`` or ``HOST_AVAIL``, ``<include>`` (removed in SimGrid 3.18), any element
outside SimGrid's DTD (a misspelt ``<hots>`` would otherwise leave a host out), and any attribute the DTD does not give
a ``<platform>``, zone, ``<host>``, ``<cluster>`` or ``<prop>`` (a misspelt ``pstate`` would leave the host at 0). The
elements ignored are checked as SimGrid's parser checks them (their attributes, required attributes, enumerated values
and children: :data:`_IGNORED_DTD`), so that a platform real Batsim cannot load is not run here.

Rules reproduced from real Batsim (behaviours 1, 2, 34, 35):

* compute host ids follow the byte-wise order of host names (not the XML order), over all compute
  hosts whatever their zone or cluster;
* the master host (the host named ``master_host``, Batsim's default ``--master-host``, or one with property
  ``role="master"``) gets no id; a platform without one, or with two (``master_host`` and a ``role="master"``
  host), is refused, as Batsim refuses it (``src/machines.cpp``: "Cannot find the \"master\" role in the
  platform file", "There are two master hosts..."); so is a ``role`` Batsim does not know, or any ``role`` on
  ``master_host`` (Batsim makes it ``"<role>,master"``); the master's speeds, wattages and pstates are checked
  as those of any host;
* ``properties`` = ``{"role": ""}`` then the host's own ``<prop>``s (a cluster's ``<prop>``s for its
  hosts); ``zone_properties`` = the union of the ``<prop>``s of every enclosing zone from the root down,
  inner values overriding outer ones, a ``<cluster>`` being a zone of its own.

Performance note: the hosts of one ``<cluster>`` share one
:class:`~wattsched.energy_models.power.NodeModel` and share the *same*
``properties`` and ``zone_properties`` dict objects. Treat ``Host.properties`` and
``Host.zone_properties`` as read-only: mutating one would change every host of its cluster.
"""

from __future__ import annotations

import logging
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field

from wattsched.base.errors import InputError, quoted_cut
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import NOT_PLAIN_DIGITS, check_count, check_memory, not_utf8_problem, plain_int
from wattsched.energy_models.power import ModelTextError, NodeModel, parse_speed_list
from wattsched.energy_models.upas import FREQUENCY_PROPERTY, parse_frequencies

__all__ = ["Host", "Platform", "load_platform", "parse_radical"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------------
# Data model (a host kind's speeds and powers: wattsched.energy_models.power.NodeModel)
# --------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Host:
    """A compute host. ``properties``/``zone_properties`` may be shared between hosts: do not mutate."""

    id: int
    name: str
    model: NodeModel
    initial_pstate: int
    properties: dict[str, str] = field(default_factory=dict)
    zone_properties: dict[str, str] = field(default_factory=dict)


@dataclass
class Platform:
    path: str
    hosts: list[Host]
    master_name: str
    models: list[NodeModel]
    #: The loader's warnings not logged yet (``load_platform(..., hold_warnings=True)``): a run says them once its
    #: scheduler took the platform (:meth:`release_warnings`), so that a run refused before is one line.
    held_warnings: list[str] = field(default_factory=list, compare=False, repr=False)

    @property
    def nb_hosts(self) -> int:
        return len(self.hosts)

    def release_warnings(self) -> None:
        """Log the warnings held by the loader (each once; nothing when none is held)."""
        if not self.held_warnings:
            return
        held, self.held_warnings = self.held_warnings, []
        for message in held:
            log.warning("%s", message)

    def host_by_name(self, name: str) -> Host:
        index = getattr(self, "_by_name", None)
        if index is None:
            index = {h.name: h for h in self.hosts}
            object.__setattr__(self, "_by_name", index)
        return index[name]


# --------------------------------------------------------------------------------------------------
# Small parsers (public: handy for tests and other loaders)
# --------------------------------------------------------------------------------------------------
#: ``re.ASCII``: ``\d`` alone would take other scripts' digits (``'٠-٣'``), which SimGrid's ``std::stoi`` refuses.
_RADICAL_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$", re.ASCII)


def _cut(name: str) -> str:
    """A host's or cluster's id as an error names it: cut when long (an id of megabytes is no error line)."""
    return name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"


def _radical_ranges(text: str) -> Iterator[tuple[str, int, int]]:
    """The items of a radical as (item, first, last), in the order written. Raises ValueError."""
    for part in text.split(","):
        m = _RADICAL_ITEM.match(part.strip())
        if m is None:
            raise ValueError(f"bad item {quoted_cut(part.strip())} in radical {quoted_cut(text)} (expected N or N-M)")
        lo = int(m.group(1))
        yield part.strip(), lo, int(m.group(2)) if m.group(2) is not None else lo


def radical_size(text: str) -> int:
    """How many values ``parse_radical(text)`` gives, without building them. Raises ValueError."""
    return sum(max(0, hi - lo + 1) for _, lo, hi in _radical_ranges(text))


def parse_radical(text: str) -> list[int]:
    """``"0-11"`` or ``"0,2-3,9"`` -> the list of values, in the order written. Raises ValueError."""
    values: list[int] = []
    for item, lo, hi in _radical_ranges(text):
        if hi < lo:
            raise ValueError(f"empty range {quoted_cut(item)} in radical {quoted_cut(text)}")
        values.extend(range(lo, hi + 1))
    return values


# --------------------------------------------------------------------------------------------------
# Loader
# --------------------------------------------------------------------------------------------------
_ZONE_TAGS = ("zone", "AS")
_UNSUPPORTED_HOST_TAGS = {
    "cabinet": "<cabinet> is not supported: write its hosts as a <cluster> or <host>s",
    "peer": "<peer> is not supported: write it as a <host> in a Vivaldi zone",
}
#: The roles Batsim knows (``src/permissions.cpp``): any other value (``"compute"``, ``"master "``) makes
#: ``permissions_from_role`` throw, and Batsim abort.
_ALLOWED_ROLES = ("", "compute_node")
#: Batsim's default ``--master-host``: ``batsim.cpp`` adds the role ``master`` to it, after any ``role`` it has.
_MASTER_HOST = "master_host"
#: The ``routing`` of a ``<zone>`` (or ``<AS>``) SimGrid 3.32 knows, compared ignoring case as SimGrid does
#: (``sg_platf_create_zone``, which dies on any other: "Not a valid model!"; ``ClusterTorus``,
#: ``ClusterFatTree`` and ``ClusterDragonfly`` are gone, write a ``<cluster topology=...>``). The routing itself
#: is ignored (a zero-cost network), but a name SimGrid refuses is refused.
_ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache", "None", "Vivaldi", "Cluster", "Wifi")
_ROUTINGS_LOWER = frozenset(r.lower() for r in _ROUTINGS)
#: The other elements of SimGrid's platform DTD (``simgrid.dtd``, version 4.1) that may appear among a zone's
#: children: the network, configuration and deployment, ignored. A name outside the DTD (``<hots>``, ``<Host>``,
#: a namespaced ``<x:host>``) is refused, as SimGrid's validating parser refuses it: ignored, a misspelt host
#: would silently leave the platform smaller.
_IGNORED_TAGS = frozenset((
    "link", "backbone", "router", "route", "zoneRoute", "ASroute", "bypassRoute", "bypassZoneRoute",
    "bypassASroute", "link_ctn", "host_link", "config", "prop", "model_prop", "random", "trace", "trace_connect",
    "storage_type", "storage", "mount", "disk", "actor", "process", "argument"))
#: The content models of ``<platform>`` and ``<zone>`` in SimGrid's DTD, which its (FleXML) parser enforces
#: ("Starting tag <host> is not allowed here."): each a choice of sequences of starred sets. A zone holds either
#: zones, clusters and links then zoneRoutes, or hosts, routers and links then routes, its <prop>s first; a
#: <platform> holds its <config>s first, then zones and clusters, then actors (no <host>).
_ZONE_BRANCHES = (
    ({"prop"}, {"AS", "zone", "include", "link", "backbone", "cluster", "peer", "trace", "trace_connect"},
     {"zoneRoute", "ASroute", "trace", "trace_connect", "bypassASroute", "bypassZoneRoute"}, {"trace", "trace_connect"}),
    ({"prop"}, {"include", "storage_type", "storage", "host", "cabinet", "router", "link", "backbone", "trace",
                "trace_connect", "host_link"}, {"route", "trace", "trace_connect", "bypassRoute"}),
)
_PLATFORM_BRANCHES = (
    ({"config", "random"}, {"include", "cluster", "cabinet", "peer", "AS", "zone", "trace", "trace_connect"},
     {"process", "actor"}),
)

_DTD_TAGS = frozenset().union(*(phase for branch in (*_ZONE_BRANCHES, *_PLATFORM_BRANCHES) for phase in branch))


def _misplaced_child(elem: ET.Element, branches: tuple[tuple[set[str], ...], ...]) -> str | None:
    """The first child tag of ``elem`` that no branch of its content model allows where it stands (None: valid).
    Tags outside the model are left to the caller, which names them as unknown."""
    # <peer>, <cabinet> and <include> are refused with their own message wherever they stand
    tags = [child.tag for child in elem if child.tag in _DTD_TAGS and child.tag not in ("peer", "cabinet", "include")]
    worst: tuple[int, str] | None = None
    for branch in branches:
        phase = 0
        for i, tag in enumerate(tags):
            while phase < len(branch) and tag not in branch[phase]:
                phase += 1
            if phase == len(branch):
                if worst is None or i > worst[0]:
                    worst = (i, tag)
                break
        else:
            return None
    assert worst is not None
    return worst[1]


#: The children a ``<host>`` may have in the DTD (a ``<cluster>``: ``<prop>`` only).
_HOST_CHILD_TAGS = frozenset(("prop", "disk", "mount"))
#: ``<host>`` attributes naming a SimGrid profile file that changes the host over time (its speed, or it fails
#: and comes back): the embedded simulator keeps every host as the platform describes it.
_UNSUPPORTED_HOST_ATTRIBUTES = ("speed_file", "availability_file", "state_file")
#: The enumerated attributes of a ``<cluster>`` in SimGrid's DTD, with their default: its parser refuses any other
#: value. ``topology``: only ``FLAT`` is read here; SimGrid builds a TORUS, FAT_TREE or DRAGONFLY cluster with as
#: many hosts as its ``topo_parameters`` give (the first radicals; too few: it aborts) and without the cluster's
#: ``<prop>``s as zone properties (``sg_platf_new_cluster_hierarchical``), which is not modelled.
_CLUSTER_ENUMS = {"topology": (("FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"), "FLAT"),
                  "sharing_policy": (("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"), "SPLITDUPLEX"),
                  "bb_sharing_policy": (("SHARED", "FATPIPE"), "SHARED")}
#: The attributes SimGrid's DTD (version 4.1, SimGrid 3.32) gives the elements read here: its parser refuses any other
#: ("Bad attribute `pstat' in `host' element start tag."), while ignored, a misspelt ``pstate`` or ``core`` would
#: silently leave the host at its default.
_ATTRIBUTES = {
    "platform": frozenset(("version",)),
    "zone": frozenset(("id", "routing")),
    "AS": frozenset(("id", "routing")),
    "host": frozenset(("id", "speed", "core", "speed_file", "availability_file", "state_file", "coordinates", "pstate")),
    "cluster": frozenset(("id", "prefix", "suffix", "radical", "speed", "core", "bw", "lat", "sharing_policy", "topology",
                          "topo_parameters", "bb_bw", "bb_lat", "bb_sharing_policy", "router_id", "limiter_link",
                          "loopback_bw", "loopback_lat")),
    "prop": frozenset(("id", "value")),
}


#: The elements of SimGrid's DTD that the embedded simulator ignores (the network, configuration, deployment, storage):
#: ``tag: (attributes, required attributes, enumerated attributes' values, children)``, as SimGrid's DTD gives them (the
#: same in SimGrid 3.32 and since). Its parser refuses what breaks them ("Bad attribute `bandwith' in `link' element
#: start tag.", "Required attribute `src' not set for `route' element.", a ``sharing_policy`` outside its list): they
#: are checked, so that a platform real Batsim cannot load is not run here.
_DtdElement = tuple[frozenset[str], tuple[str, ...], dict[str, tuple[str, ...]], tuple[str, ...]]
_LINKS: tuple[str, ...] = ("link_ctn",)
_ROUTE_ENDS: tuple[str, ...] = ("src", "dst")
_GATEWAYS: tuple[str, ...] = ("src", "dst", "gw_src", "gw_dst")
_SYMMETRICAL: dict[str, tuple[str, ...]] = {"symmetrical": ("YES", "NO", "yes", "no")}
_ACTOR: _DtdElement = (frozenset(("host", "function", "start_time", "kill_time", "on_failure")), ("host", "function"),
                       {"on_failure": ("DIE", "RESTART")}, ("argument", "prop"))
_IGNORED_DTD: dict[str, _DtdElement] = {
    "link": (frozenset(("id", "bandwidth", "bandwidth_file", "latency", "latency_file", "state_file", "sharing_policy")),
             ("id", "bandwidth"), {"sharing_policy": ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE", "WIFI")},
             ("prop",)),
    "backbone": (frozenset(("id", "bandwidth", "latency")), ("id", "bandwidth", "latency"), {}, ()),
    "router": (frozenset(("id", "coordinates")), ("id",), {}, ()),
    "host_link": (frozenset(("id", "up", "down")), ("id", "up", "down"), {}, ()),
    "route": (frozenset((*_ROUTE_ENDS, "symmetrical")), _ROUTE_ENDS, _SYMMETRICAL, _LINKS),
    "bypassRoute": (frozenset(_ROUTE_ENDS), _ROUTE_ENDS, {}, _LINKS),
    "ASroute": (frozenset((*_GATEWAYS, "symmetrical")), _GATEWAYS, _SYMMETRICAL, _LINKS),
    "zoneRoute": (frozenset((*_GATEWAYS, "symmetrical")), _GATEWAYS, _SYMMETRICAL, _LINKS),
    "bypassASroute": (frozenset(_GATEWAYS), _GATEWAYS, {}, _LINKS),
    "bypassZoneRoute": (frozenset(_GATEWAYS), _GATEWAYS, {}, _LINKS),
    "link_ctn": (frozenset(("id", "direction")), ("id",), {"direction": ("UP", "DOWN", "NONE")}, ()),
    "config": (frozenset(("id",)), (), {}, ("prop",)),
    "prop": (frozenset(("id", "value")), ("id", "value"), {}, ()),
    "model_prop": (frozenset(("id", "value")), ("id", "value"), {}, ()),
    "random": (frozenset(("id", "min", "max", "mean", "std_deviation", "seed", "radical", "generator")),
               ("id", "min", "max", "mean", "std_deviation"), {"generator": ("DRAND48", "RAND", "RNGSTREAM", "NONE")}, ()),
    "trace": (frozenset(("id", "file", "periodicity")), ("id", "periodicity"), {}, ()),
    "trace_connect": (frozenset(("kind", "trace", "element")), ("trace", "element"),
                      {"kind": ("HOST_AVAIL", "SPEED", "LINK_AVAIL", "BANDWIDTH", "LATENCY")}, ()),
    "storage_type": (frozenset(("id", "model", "size", "content")), ("id", "size"), {}, ("model_prop", "prop")),
    "storage": (frozenset(("id", "typeId", "content", "attach")), ("id", "typeId", "attach"), {}, ("prop",)),
    "mount": (frozenset(("storageId", "name")), ("storageId", "name"), {}, ()),
    "disk": (frozenset(("id", "read_bw", "write_bw")), ("read_bw", "write_bw"), {}, ("prop",)),
    "actor": _ACTOR,
    "process": _ACTOR,
    "argument": (frozenset(("value",)), ("value",), {}, ()),
}


def _check_ignored(path: str, elem: ET.Element, where: str) -> None:
    """An element the embedded simulator ignores (:data:`_IGNORED_DTD`) and its children have the attributes and
    children SimGrid's DTD gives them. Raises :class:`InputError`."""
    allowed, required, enums, children = _IGNORED_DTD[elem.tag]
    named = elem.get("id") or elem.get("src") or elem.get("host")
    where = f"{where}.<{elem.tag}{'' if named is None else f' {_cut(named)!r}'}>"
    for name in elem.keys():
        if name not in allowed:
            raise InputError(path, f"{where}.{_cut(name)}", f"unknown attribute of <{elem.tag}> (SimGrid's DTD gives it "
                                                            f"{', '.join(sorted(allowed))}, and SimGrid refuses any other)")
    for name in required:
        if elem.get(name) is None:
            raise InputError(path, f"{where}.{name}", f"missing '{name}' attribute (SimGrid requires it)")
    for name, values in enums.items():
        value = elem.get(name)
        if value is not None and value not in values:
            raise InputError(path, f"{where}.{name}", f"{quoted_cut(value)} is not one of {', '.join(values)} (SimGrid "
                                                      "refuses any other value)")
    for child in elem:
        if child.tag not in children:
            allows = ", ".join(f"<{t}>" for t in children) if children else "nothing"
            raise InputError(path, f"{where}.<{child.tag}>", f"<{child.tag}> inside a <{elem.tag}> (SimGrid's DTD: "
                                                             f"a <{elem.tag}> holds {allows})")
        _check_ignored(path, child, where)


def _check_attributes(path: str, elem: ET.Element, where: str) -> None:
    """``elem``'s attributes are those SimGrid's DTD gives it (:data:`_ATTRIBUTES`). Raises :class:`InputError`."""
    allowed = _ATTRIBUTES[elem.tag]
    for name in elem.keys():
        if name not in allowed:
            raise InputError(path, f"{where}.{_cut(name)}", f"unknown attribute of <{elem.tag}> (SimGrid's DTD gives it "
                                                            f"{', '.join(sorted(allowed))}, and SimGrid refuses any other)")


#: Memory one compute host takes while loading and simulating (its name, tuple, Host and engine state).
_BYTES_PER_HOST = 1500


class _Loader:
    def __init__(self, path: str, held: list[str] | None = None) -> None:
        self.path = path
        #: where warnings go instead of the log (None: logged at once)
        self.held = held
        # (name, properties, zone_properties, model, initial pstate) of each compute host
        self.compute: list[tuple[str, dict, dict, NodeModel, int]] = []
        #: (name, field) of each host with role 'master'
        self.masters_by_role: list[tuple[str, str]] = []
        self.master_host_seen = False
        self.names: set[str] = set()
        #: the names of SimGrid's netpoints that are not hosts: zones (a ``<cluster>`` is one) and routers. SimGrid
        #: refuses a zone or router named as any earlier netpoint, host included ("Refusing to create a second
        #: NetZone called ...", "Refusing to create a router named ...", NetZoneImpl.cpp)
        self.netpoints: set[str] = set()
        self._model_cache: dict[tuple, NodeModel] = {}
        self._models_by_value: dict[NodeModel, NodeModel] = {}
        self.depth = 0  # zones enclosing the element being read

    # -- errors ------------------------------------------------------------------------------------
    def error(self, where: str, problem: str) -> InputError:
        return InputError(self.path, where, problem)

    def warn(self, message: str) -> None:
        _warn(message, self.held)

    # -- helpers -----------------------------------------------------------------------------------
    def check_children(self, elem: ET.Element, where: str, allowed: frozenset[str]) -> None:
        """A ``<host>``'s or ``<cluster>``'s children are those of the DTD (a misspelt ``<porp>`` is no wattage)."""
        for child in elem:
            if child.tag not in allowed:
                raise self.error(f"{where}.<{child.tag}>", f"unknown element inside <{elem.tag}> (SimGrid's DTD "
                                                           f"allows {', '.join(f'<{t}>' for t in sorted(allowed))})")

    def own_props(self, elem: ET.Element, where: str) -> dict[str, str]:
        props: dict[str, str] = {}
        for child in elem:
            if child.tag == "prop":
                key = child.get("id")
                value = child.get("value")
                _check_attributes(self.path, child, f"{where}.prop" + ("" if key is None else f" '{key}'"))
                if key is None:
                    raise self.error(f"{where}.prop", "<prop> has no 'id' attribute")
                if value is None:
                    raise self.error(f"{where}.prop '{key}'", "<prop> has no 'value' attribute")
                if len(child):  # EMPTY in SimGrid's DTD
                    raise self.error(f"{where}.prop '{key}'", f"<{child[0].tag}> inside a <prop> (SimGrid's DTD: a "
                                                              "<prop> holds nothing)")
                if key in props:  # SimGrid keeps the first value (try_emplace, surfxml_sax_cb.cpp), as Batsim reads it
                    self.warn(f"{self.path}: {where}.prop '{key}' given twice: the first value, "
                              f"{quoted_cut(props[key])}, is used (as SimGrid does), not {quoted_cut(value)}")
                    continue
                if key == FREQUENCY_PROPERTY:
                    try:
                        parse_frequencies(value)
                    except ValueError as exc:
                        raise self.error(f"{where}.{key}", str(exc)) from None
                props[key] = value
        return props

    def model_for(self, where: str, speed: str | None, props: dict[str, str]) -> NodeModel:
        """The model of a host (or cluster) ``where``; its ``speed_per_state`` property, the pstate speeds the
        schedulers read (Batsim sends them no ``speed``), must give one speed per pstate of ``speed``."""
        wattage = props.get("wattage_per_state")
        off = props.get("wattage_off")
        sleep = props.get("sleep_pstates")
        speeds = props.get("speed_per_state")
        key = (speed, wattage, off, sleep, speeds)
        cached = self._model_cache.get(key)
        if cached is not None:
            return cached
        if speed is None:
            raise self.error(f"{where}.speed", "missing 'speed' attribute")
        try:
            model = NodeModel.from_text(speed, wattage, off, sleep)
        except ModelTextError as exc:
            raise self.error(f"{where}.{exc.field}", exc.problem) from None
        if speeds is not None:
            try:
                nb_speeds = len(parse_speed_list(speeds))
            except ValueError as exc:
                raise self.error(f"{where}.speed_per_state", str(exc)) from None
            if nb_speeds != model.nb_pstates:
                raise self.error(f"{where}.speed_per_state", f"{nb_speeds} speeds for the {model.nb_pstates} pstates "
                                                             "of its 'speed' attribute (one per pstate)")
        if wattage is None:
            self.warn(f"{self.path}: {where} has no wattage_per_state property: counted as 0 W")
        model = self._models_by_value.setdefault(model, model)
        self._model_cache[key] = model
        return model

    def integer(self, text: str, where: str) -> int:
        """An integer attribute (``core``, ``pstate``) in ASCII digits: :func:`int` would read ``'1_0'`` as 10 where
        SimGrid's ``std::stoi`` reads 1, and other scripts' digits that ``std::stoi`` refuses."""
        stripped = text.strip()
        try:  # std::stoi reads a leading '+' and white space
            return plain_int(stripped[1:] if stripped.startswith("+") else stripped)
        except ValueError as exc:
            hint = f" ({NOT_PLAIN_DIGITS})" if str(exc) == NOT_PLAIN_DIGITS else ""
            raise self.error(where, f"{quoted_cut(text)} is not an integer{hint}") from None

    def check_core(self, elem: ET.Element, where: str) -> None:
        core = elem.get("core")
        if core is None:
            return
        n = self.integer(core, f"{where}.core")
        if n != 1:
            raise self.error(f"{where}.core", f"core={n}: multi-core hosts are not supported (use core=1)")

    def check_initial_pstate(self, elem: ET.Element, where: str, model: NodeModel) -> int:
        p = self.integer(elem.get("pstate", "0"), f"{where}.pstate")
        if not 0 <= p < model.nb_pstates:
            raise self.error(f"{where}.pstate", f"initial pstate {p} does not exist ({model.nb_pstates} pstates)")
        if not model.is_computation(p):
            raise self.error(f"{where}.pstate", f"initial pstate {p} is a sleep or transition pstate")
        return p

    def add_name(self, name: str, where: str) -> None:
        if name in self.names:
            raise self.error(where, f"duplicate host name {quoted_cut(name)}")
        self.names.add(name)

    def role_of(self, props: dict[str, str], where: str) -> str:
        role = props.get("role", "")
        if role == "storage":
            raise self.error(f"{where}.role", "storage hosts are not supported")
        if role != "master" and role not in _ALLOWED_ROLES:
            raise self.error(f"{where}.role", f"unknown role {role!r} (Batsim knows master, compute_node and "
                                              "storage, and aborts on any other)")
        return role

    # -- elements ----------------------------------------------------------------------------------
    def host(self, elem: ET.Element, zone_props: dict[str, str]) -> None:
        name = elem.get("id")
        if name is None:
            raise self.error("<host>", "missing 'id' attribute")
        where = f"host '{_cut(name)}'"
        _check_attributes(self.path, elem, where)
        for attribute in _UNSUPPORTED_HOST_ATTRIBUTES:
            if elem.get(attribute):
                raise self.error(f"{where}.{attribute}", f"not supported: the embedded simulator does not change "
                                                         f"hosts over time (remove the {attribute} attribute)")
        self.add_name(name, where)
        self.check_children(elem, where, _HOST_CHILD_TAGS)
        for child in elem:
            if child.tag != "prop":  # its <disk>s and <mount>s
                _check_ignored(self.path, child, where)
        own = self.own_props(elem, where)
        if name == _MASTER_HOST and "role" in own:
            # batsim.cpp gives --master-host the role "master" after its own: role="X" becomes "X,master" (even
            # role="master" or role=""), which is no role (permissions_from_role throws)
            raise self.error(f"{where}.role", f"Batsim makes the role of '{_MASTER_HOST}' {own['role'] + ',master'!r},"
                                              " which is no role: remove its 'role' property")
        role = self.role_of(own, where)
        if role == "master" or name == _MASTER_HOST:
            # SimGrid reads the master as any host (speed, wattage_per_state, wattage_off, pstate) and Batsim reads
            # its sleep_pstates (machines.cpp parses them for every host before looking at its role)
            self.check_master(elem, where, own)
            if role == "master":
                self.masters_by_role.append((name, f"{where}.role"))
            else:
                self.master_host_seen = True
            return
        self.add_compute(elem, name, where, own, zone_props)

    def check_master(self, elem: ET.Element, where: str, own: dict[str, str]) -> None:
        speed = elem.get("speed")
        if speed is None:
            raise self.error(f"{where}.speed", "missing 'speed' attribute")
        try:
            model = NodeModel.from_text(speed, own.get("wattage_per_state"), own.get("wattage_off"),
                                        own.get("sleep_pstates"))
        except ModelTextError as exc:
            raise self.error(f"{where}.{exc.field}", exc.problem) from None
        p = self.integer(elem.get("pstate", "0"), f"{where}.pstate")
        if not 0 <= p < model.nb_pstates:
            raise self.error(f"{where}.pstate", f"initial pstate {p} does not exist ({model.nb_pstates} pstates)")

    def add_compute(self, elem, name, where, own, zone_props) -> None:
        check_count(len(self.compute) + 1, "hosts", self.path, where, "compute hosts")
        self.check_core(elem, where)
        model = self.model_for(where, elem.get("speed"), own)
        pstate = self.check_initial_pstate(elem, where, model)
        properties = {"role": ""}
        properties.update(own)
        self.compute.append((name, properties, zone_props, model, pstate))

    def cluster(self, elem: ET.Element, zone_props: dict[str, str]) -> None:
        cid = elem.get("id")
        where = f"cluster '{_cut(cid)}'" if cid is not None else "<cluster>"
        if cid is None:
            raise self.error(where, "missing 'id' attribute")
        _check_attributes(self.path, elem, where)
        for attr in ("prefix", "radical", "speed"):
            if elem.get(attr) is None:
                raise self.error(f"{where}.{attr}", f"missing '{attr}' attribute")
        for attr, (values, default) in _CLUSTER_ENUMS.items():
            value = elem.get(attr, default)
            if value not in values:
                raise self.error(f"{where}.{attr}", f"{quoted_cut(value)} is not one of {', '.join(values)} (SimGrid's "
                                                    "DTD)")
        if elem.get("topology", "FLAT") != "FLAT":
            raise self.error(f"{where}.topology", f"topology {elem.get('topology')} is not supported (SimGrid gives "
                                                  "such a cluster as many hosts as its topo_parameters say and no "
                                                  "zone properties): use a FLAT cluster")
        prefix, suffix = elem.get("prefix"), elem.get("suffix", "")
        try:
            size = radical_size(elem.get("radical") or "")
        except ValueError as e:
            raise self.error(f"{where}.radical", str(e)) from None
        check_count(len(self.compute) + size, "hosts", self.path, f"{where}.radical", "compute hosts")
        check_memory((len(self.compute) + size) * _BYTES_PER_HOST, self.path, f"{where}.radical",
                     f"a platform of {len(self.compute) + size} hosts")
        try:
            radical = parse_radical(elem.get("radical") or "")
        except ValueError as e:
            raise self.error(f"{where}.radical", str(e)) from None
        self.check_children(elem, where, frozenset(("prop",)))
        self.new_netpoint(cid, where, "cluster (zone)")
        own = self.own_props(elem, where)
        role = self.role_of(own, where)
        if role == "master" and size != 1:
            # SimGrid gives each host of a flat cluster the cluster's properties (sg_platf_new_cluster_flat), so
            # every one of them is a master
            raise self.error(f"{where}.role", f"the {size} hosts of a cluster with role 'master' are all master "
                                              "hosts: Batsim aborts (\"There are two master hosts\"); give the "
                                              "role to a cluster of one host, or to one <host>")
        if role == "master":  # (Batsim's tutorial platforms, e.g. cluster512.xml: a one-host cluster 'master_host0')
            self.check_master(elem, where, own)
        else:
            self.check_core(elem, where)
            model = self.model_for(where, elem.get("speed"), own)
            pstate = self.check_initial_pstate(elem, where, model)
        properties = {"role": ""}
        properties.update(own)
        inner_zone = dict(zone_props)
        inner_zone.update(own)
        new_names = [f"{prefix}{v}{suffix}" for v in radical]
        new_set = set(new_names)
        if len(new_set) != len(new_names):
            seen: set[str] = set()
            dup = ""
            for dup in new_names:
                if dup in seen:
                    break
                seen.add(dup)
            raise self.error(f"{where}.radical", f"duplicate host name {quoted_cut(dup)}")
        clash = self.names.intersection(new_set)
        if clash:
            raise self.error(where, f"duplicate host name {quoted_cut(min(clash))}")
        for attr in ("suffix", "bw", "lat"):
            # #REQUIRED in SimGrid's DTD ("Required attribute `suffix' not set for `cluster' element."); checked
            # last, so that an error of the cluster's own values comes first. The network (bw, lat) is not modelled
            if elem.get(attr) is None:
                raise self.error(f"{where}.{attr}", f"missing '{attr}' attribute (SimGrid's DTD requires it)")
        self.names.update(new_set)
        # its router, made after its hosts (sg_platf_new_cluster_flat): router_id, else prefix + id + "_router" + suffix
        self.new_netpoint(elem.get("router_id") or f"{prefix}{cid}_router{suffix}", f"{where}.router_id", "router")
        if role == "master":
            self.masters_by_role.append((new_names[0], f"{where}.role"))
            return
        append = self.compute.append
        for n in new_names:
            append((n, properties, inner_zone, model, pstate))

    def new_netpoint(self, name: str, where: str, kind: str) -> None:
        """A zone's (or cluster's) or router's name: SimGrid refuses one already given to a host, zone or router."""
        if name in self.netpoints or name in self.names:
            raise self.error(where, f"{kind} name {quoted_cut(name)} is already the name of a host, zone or router "
                                    "(SimGrid refuses it)")
        self.netpoints.add(name)

    def zone(self, elem: ET.Element, zone_props: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > limit("nesting"):
            raise self.error(f"zone '{elem.get('id')}'", f"zones nested too deeply; {limit_hint('nesting', 'levels')}")
        zid, routing = elem.get("id"), elem.get("routing")
        _check_attributes(self.path, elem, f"<{elem.tag} id='{_cut(zid or '')}'>")
        for attr, value in (("id", zid), ("routing", routing)):
            if value is None:  # #REQUIRED in SimGrid's DTD: "Required attribute `routing' not set for `zone' element."
                raise self.error(f"<{elem.tag} id='{zid}'>.{attr}", f"missing '{attr}' attribute (SimGrid requires it)")
        assert zid is not None and routing is not None
        if routing.lower() not in _ROUTINGS_LOWER:
            raise self.error(f"zone '{elem.get('id')}'.routing",
                             f"unknown routing {routing!r} (SimGrid 3.32 knows {', '.join(_ROUTINGS)})")
        if routing.lower() == "none" and any(child.tag == "host" for child in elem):
            # EmptyZone::get_local_route: "There can't be route in an Empty zone", as soon as a host of it sends
            # Batsim a message (the master's actors, a job's or a switch's end)
            raise self.error(f"zone '{_cut(zid)}'.routing", "a routing=\"None\" zone holding hosts: Batsim aborts "
                                                            "(\"There can't be route in an Empty zone\"); use Full")
        self.new_netpoint(zid, f"zone '{_cut(zid)}'", "zone")
        own = self.own_props(elem, f"zone '{elem.get('id')}'")
        if own:
            merged = dict(zone_props)
            merged.update(own)
        else:
            merged = zone_props
        self.children(elem, merged)
        misplaced = _misplaced_child(elem, _ZONE_BRANCHES)  # after its children: their own errors come first
        if misplaced is not None:
            raise self.error(f"zone '{_cut(elem.get('id') or '')}'.<{misplaced}>",
                             f"<{misplaced}> is not allowed here (SimGrid's DTD: a zone holds its <prop>s first, then "
                             "either zones, clusters and links then zoneRoutes, or hosts, routers and links then "
                             "routes, never both)")
        self.depth -= 1

    def children(self, elem: ET.Element, zone_props: dict[str, str]) -> None:
        for child in elem:
            tag = child.tag
            if tag == "host":
                self.host(child, zone_props)
            elif tag == "cluster":
                self.cluster(child, zone_props)
            elif tag in _ZONE_TAGS:
                self.zone(child, zone_props)
            elif tag in _UNSUPPORTED_HOST_TAGS:
                raise self.error(f"<{tag} id='{child.get('id')}'>", _UNSUPPORTED_HOST_TAGS[tag])
            elif tag == "router":
                _check_ignored(self.path, child, self.zone_name(elem))
                self.new_netpoint(child.get("id") or "", f"router '{_cut(child.get('id') or '')}'", "router")
            elif tag == "include":
                raise self.error(f"<include file='{child.get('file')}'>", "<include> was removed in SimGrid 3.18: "
                                                                          "write the included elements here")
            elif tag == "trace_connect" and child.get("kind", "HOST_AVAIL") in ("HOST_AVAIL", "SPEED"):
                raise self.error(f"<trace_connect element='{child.get('element')}'>",
                                 f"kind {child.get('kind', 'HOST_AVAIL')} is not supported: the embedded simulator "
                                 "does not change hosts over time (remove the <trace_connect>)")
            elif tag not in _IGNORED_TAGS:
                raise self.error(f"<{tag}>", f"unknown element inside <{elem.tag}> (not in SimGrid's platform DTD; "
                                             "a misspelt <host>, <cluster> or <zone>?)")
            elif tag != "prop":  # (a zone's <prop>s: own_props)
                # the rest of the DTD (link, route, backbone, zoneRoute, config, actor, ...) is ignored, once checked
                _check_ignored(self.path, child, self.zone_name(elem))

    @staticmethod
    def zone_name(elem: ET.Element) -> str:
        """How errors name a zone (or the platform) whose children are read."""
        return "platform" if elem.tag == "platform" else f"zone '{_cut(elem.get('id') or '')}'"


_VERSION = re.compile(r"\s*[0-9]+(?:\.[0-9]*)?\s*")


def _check_version(path: str, root: ET.Element) -> None:
    if root.tag != "platform":
        raise InputError(path, f"<{root.tag}>", "root element must be <platform version=\"4.1\">")
    _check_attributes(path, root, "platform")
    version = root.get("version")
    if version is None:
        raise InputError(path, "platform.version", "missing 'version' attribute (expected 4.1)")
    # SimGrid reads the version as a double (std::stod) and refuses one below 4.0 ("THIS FILE IS TOO OLD") or above
    # 4.1 ("THIS FILE COMES FROM THE FUTURE")
    if _VERSION.fullmatch(version) is None:
        raise InputError(path, "platform.version", f"{quoted_cut(version)} is not a version number (expected 4.1)")
    if not 4.0 <= float(version) <= 4.1:
        raise InputError(path, "platform.version", f"version {quoted_cut(version)} is not supported (expected 4.1; "
                                                    "SimGrid reads 4.0 to 4.1)")


def _warn(message: str, held: list[str] | None) -> None:
    """A warning of the loader: logged, or kept in ``held`` (:attr:`Platform.held_warnings`)."""
    if held is None:
        log.warning("%s", message)
    else:
        held.append(message)


def load_platform(path: str | os.PathLike, *, hold_warnings: bool = False) -> Platform:
    """Read a SimGrid platform file; raise :class:`InputError` on anything Batsim would refuse.

    ``hold_warnings``: keep the loader's warnings in :attr:`Platform.held_warnings` instead of logging them (a run
    logs them once its scheduler took the platform: :meth:`Platform.release_warnings`)."""
    path = os.fspath(path)
    try:
        require_regular_file(path)
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as e:
        raise InputError(path, "", f"cannot read platform file ({e.strerror or e})") from None
    return parse_platform(data, path, hold_warnings=hold_warnings)


#: An XML declaration after blank lines (Batsim 4.2.1's own platforms/energy_platform_homogeneous_no_net_*.xml
#: start with a newline: SimGrid's lexer skips white space before it, Python's XML parser refuses it).
_LATE_DECLARATION = re.compile(r"\s+(<\?xml[^>]*\?>)")


def _declaration_blanked(text: str) -> str:
    """``text`` with an XML declaration that follows white space written as spaces (lines and columns of errors
    unchanged): the text is decoded already, so the declaration says nothing the parser needs."""
    m = _LATE_DECLARATION.match(text)
    if m is None:
        return text
    return text[:m.start(1)] + " " * len(m.group(1)) + text[m.end(1):]


#: Link attributes that delay Batsim's internal messages (job and switch ends, sent to the server on the master):
#: a latency, or a bandwidth (1 byte takes 1/bandwidth s) below the zero-cost 1e300 B/s of behaviour 36.
_LATENCIES = ("latency", "lat", "bb_lat", "loopback_lat", "limiter_lat")
_BANDWIDTHS = ("bandwidth", "bw", "bb_bw", "loopback_bw", "limiter_link")
_LEADING_NUMBER = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)", re.ASCII)


def _warn_network(path: str, root: ET.Element, held: list[str] | None = None) -> None:
    """Warn (once) when a link or cluster has a latency, or a bandwidth below 1e300 B/s: the network is not
    modelled, while Batsim's internal messages cross it (behaviour 36), so under real Batsim the ends of jobs and
    switches reach its server a little later, and the times and energies of a run differ by that much."""
    for elem in root.iter():
        if elem.tag not in ("link", "cluster", "backbone"):
            continue
        for attr in (*_LATENCIES, *_BANDWIDTHS):
            m = _LEADING_NUMBER.match(elem.get(attr) or "")
            if m is None:
                continue
            value = float(m.group(1))
            if (attr in _LATENCIES and value != 0.0) or (attr in _BANDWIDTHS and value < 1e300):
                value_text = quoted_cut(elem.get(attr) or "", 30)
                _warn(f"{path}: {elem.tag} '{_cut(elem.get('id') or '')}'.{attr} {value_text}: the embedded "
                      "simulator does not model the network (links cost nothing); under real Batsim its internal "
                      "messages cross these links, and job and switch ends come later (behaviour 36: use latency 0 "
                      "and bandwidth 1e300Bps for the same times)", held)
                return


def parse_platform(data: bytes, path: str, *, hold_warnings: bool = False) -> Platform:
    """A SimGrid platform from the bytes of its file (``path`` names it in errors: a file, or what wrote the
    text, e.g. ``wattsched platform``); raise :class:`InputError` on anything Batsim would refuse
    (``hold_warnings``: see :func:`load_platform`)."""
    # SimGrid's platform parser is a flex lexer over the file's bytes: UTF-8 (or ASCII) only, while Python's
    # XML parser would decode a UTF-16 file by its byte-order mark
    problem = not_utf8_problem(data)
    if problem is not None:
        raise InputError(path, "", problem)
    try:
        # parsed as text: SimGrid reads the bytes as UTF-8 whatever the declaration says (encoding="ISO-8859-1" would
        # make Python read a UTF-8 'é' as 'Ã©')
        root = ET.fromstring(_declaration_blanked(data.decode("utf-8")))
    except ET.ParseError as e:
        line, col = e.position
        raise InputError(path, f"line {line}", f"malformed XML ({e})") from None
    _check_version(path, root)

    held: list[str] | None = [] if hold_warnings else None
    loader = _Loader(path, held)
    loader.children(root, {})
    misplaced = _misplaced_child(root, _PLATFORM_BRANCHES)
    if misplaced is not None:
        raise InputError(path, f"platform.<{misplaced}>", f"<{misplaced}> is not allowed here (SimGrid's DTD: a "
                                                          "<platform> holds its <config>s first, then zones and "
                                                          "clusters, then actors; hosts go in a zone)")
    tops = [child for child in root if child.tag in (*_ZONE_TAGS, "cluster")]
    for later in tops[1:]:
        if later.tag == "cluster" or next(later.iter("host"), None) is not None \
                or next(later.iter("cluster"), None) is not None:
            # only the first becomes SimGrid's root zone; a later one has no parent, hence no CPU model, and
            # SimGrid aborts on its first host ("Impossible to create host ... Invalid CPU model")
            raise InputError(path, f"<{later.tag} id='{_cut(later.get('id') or '')}'>",
                             "a second top-level zone or cluster holding hosts: SimGrid aborts (only the first one is "
                             "the platform's root zone); put it inside the first")

    _warn_network(path, root, held)
    master: str
    # 'master_host' is a master (Batsim's --master-host) even when another host has role="master": Batsim then
    # aborts ("There are two master hosts...", machines.cpp)
    masters = [name for name, _ in loader.masters_by_role] + ([_MASTER_HOST] if loader.master_host_seen else [])
    if len(masters) > 1:
        raise InputError(path, loader.masters_by_role[-1][1],
                         f"several master hosts ({', '.join(masters)}; '{_MASTER_HOST}' is always one, Batsim's "
                         "default --master-host): Batsim aborts (\"There are two master hosts\")")
    if masters:
        master = masters[0]
    else:
        raise InputError(path, "platform", "no master host: Batsim needs a host named 'master_host' or with "
                                           "role=\"master\" (<prop id=\"role\" value=\"master\"/>)")

    compute = loader.compute
    if not compute:
        raise InputError(path, "platform", "no compute host (every host is the master or missing)")
    # Python compares str by code point, which is the byte order of their UTF-8 encoding.
    compute.sort(key=lambda entry: entry[0])
    hosts = [Host(i, name, model, pstate, props, zprops)
             for i, (name, props, zprops, model, pstate) in enumerate(compute)]
    # models are deduplicated by value while loading, so equal models are the same object
    models = list(dict.fromkeys(h.model for h in hosts))
    _check_energy_fits(path, hosts)
    return Platform(path=path, hosts=hosts, master_name=master, models=models, held_warnings=held or [])


def _check_energy_fits(path: str, hosts: list[Host]) -> None:
    """The platform's energy over the longest simulated time (the ``time_s`` bound) is a finite double: a
    ``wattage_per_state`` of 1e308 W would otherwise run the whole simulation and end in energies of ``inf``.

    Raises:
        InputError: naming the file and the property.
    """
    counts: dict[NodeModel, int] = {}
    for host in hosts:
        counts[host.model] = counts.get(host.model, 0) + 1
    peak_w = sum(n * max(model.idle_w + model.full_w + (model.wattage_off_w or 0.0,)) for model, n in counts.items())
    if not math.isfinite(peak_w * limit("time_s")):
        raise InputError(path, "wattage_per_state", f"the hosts' highest powers add up to {peak_w:g} W: their "
                                                    f"energy over {limit('time_s'):g} s of simulated time (the "
                                                    "WATTSCHED_LIMIT_TIME_S bound) is beyond the largest number a "
                                                    "double holds")
