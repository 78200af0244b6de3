"""The one validation layer: every input kind is checked here before any work starts.

Readers (platform XML, workload JSON, options, command-line numbers, result folders, protocol messages)
call these checks and turn a bad value into one :class:`~wattsched.base.errors.WattschedError` whose
message names the file (or option, or message) and the field:

* :func:`load_json`: JSON text with bounded nesting (``nesting``) whose numbers are all finite doubles
  (NaN, ±Infinity, ``1e400`` and integers beyond ±1.8e308 refused by name, with their JSON path); for a file
  or an option a user wrote (``unique_keys=True``), no object giving one key twice;
* :func:`decode_utf8` (and :func:`load_json` given bytes): UTF-8 text, as Batsim reads its files (a UTF-8
  byte-order mark is skipped); UTF-16 and UTF-32, which Python would decode, are refused by name;
* :func:`load_yaml`: YAML text (safe tags only) whose aliases cannot expand beyond ``yaml_nodes`` nodes or
  ``nesting`` levels, nor refer to their own anchor, then the checks of :func:`load_json`, duplicate keys
  included when asked;
* :func:`check_number`: one number finite and within its declared range;
* :func:`plain_int`: an integer of a command line, written in ASCII digits (``int()`` takes ``'+16'``,
  ``'1_6'``, ``' 16 '`` and other scripts' digits too); :func:`integer`, :func:`positive_int` and
  :func:`non_negative_int` read options with it (argparse ``type`` functions);
* :func:`plain_float`: a decimal number of a command line or a form, written as JSON or C's ``strtod`` write one
  (``float()`` takes ``'1_6'``, ``' 16 '`` and other scripts' digits too); :func:`number` reads options with it;
* :func:`check_count`: a size (hosts, jobs, parts, depth) within a bound of :mod:`.limits`;
* :func:`check_memory`: an estimated footprint within the memory available;
* :func:`check_csv_name`: an id Batsim's CSV files can carry (Batsim writes ids unquoted);
* :func:`check_output_files`: output files that can be written, checked before a run starts;
* :class:`BatsimMessageChecker`, :func:`check_endpoint`, :func:`ipc_bind_path`: what Batsim sends
  ``wattsched serve``, and the endpoint it binds.

The bounds and how to raise them: :mod:`wattsched.base.limits`.
"""

from __future__ import annotations

import argparse

import json
import math
import os
import re
import stat
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, Callable, Sequence

from wattsched.base.errors import InputError, OptionError, OutputError, WattschedError, counted
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import available_memory_bytes, format_count, limit, limit_hint

__all__ = [
    "DUPLICATE_KEY", "ErrorFactory", "check_count", "check_csv_name", "check_memory", "check_number",
    "check_python_nesting",
    "check_output_files", "BatsimMessageChecker", "check_endpoint", "control_character_problem", "decode_utf8",
    "home_folder_problem",
    "NAME_MAX_BYTES", "PATH_MAX_BYTES", "file_name_problem", "input_error", "ipc_bind_path", "is_plain_decimal",
    "integer", "load_json", "load_yaml", "non_negative_int", "not_utf8_problem", "number_problem", "option_error",
    "number", "plain_float", "plain_int", "positive_int",
    "window_beyond_time",
]

#: Builds the error of one reader from (source, field, problem).
ErrorFactory = Callable[[str, str, str], WattschedError]

#: The largest finite double: JSON integers beyond it cannot become the floats the simulator computes with.
MAX_DOUBLE = 1.7976931348623157e308


def input_error(source: str, field: str, problem: str) -> WattschedError:
    """:class:`InputError` (a file)."""
    return InputError(source, field, problem)


def option_error(source: str, field: str, problem: str) -> WattschedError:
    """:class:`OptionError` (an option or command-line value)."""
    where = f"{source}: {field}" if field else source
    return OptionError(f"{where}: {problem}")


# ---------------------------------------------------------------------------------------------- JSON
class _Constant:
    """``NaN``, ``Infinity`` or ``-Infinity`` where JSON allows none: refused with its path."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _LongInteger:
    """A JSON integer with more digits than Python converts (``sys.get_int_max_str_digits()``, 4,300): far
    beyond the range of a double, refused with its path as the shorter ones are."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _int_or_long(text: str) -> int | _LongInteger:
    """``parse_int`` hook of a second parse, after Python refused to convert an integer: the JSON path of the
    value can then be named."""
    try:
        return int(text)
    except ValueError:
        return _LongInteger(len(text.lstrip("-")))


def _path(entry: tuple | None) -> str:
    """``jobs[3].subtime`` from a chain of (parent entry, container, item) built while walking."""
    keys: list[str] = []
    while entry is not None:
        entry, container, item = entry
        key = _key_of(container, item)
        keys.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(keys)).lstrip(".") or "(top level)"


def number_problem(value: Any) -> str | None:
    """Why ``value`` (a number read from JSON or a CSV file) is not a finite double, or None when it is one:
    NaN, ±Infinity, an integer beyond ±1.8e308."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN is not a number"
        if not math.isfinite(value):
            return "a number beyond the range of a double (±1.8e308)"
        return None
    if isinstance(value, int) and not isinstance(value, bool) and not -MAX_DOUBLE <= value <= MAX_DOUBLE:
        return f"an integer of {len(str(abs(value)))} digits, beyond the range of a double (±1.8e308)"
    if isinstance(value, _Constant):
        return f"{value.name} is not a number JSON allows"
    if isinstance(value, _LongInteger):
        return f"an integer of {value.digits} digits, beyond the range of a double (±1.8e308)"
    return None


def check_json_tree(doc: Any, source: str, error: ErrorFactory = input_error, *, max_depth: int | None = None) -> None:
    """Nesting within ``nesting`` (or ``max_depth``, the bound a caller read already) and every number a finite
    double, without recursion.

    Raises:
        the ``error`` of the reader, naming the JSON path of the first bad value.
    """
    if max_depth is None:
        max_depth = int(limit("nesting"))
    lo, hi = -MAX_DOUBLE, MAX_DOUBLE
    stack: list[tuple[Any, int, tuple | None]] = [(doc, 0, None)]
    while stack:
        value, depth, where = stack.pop()
        kind = type(value)
        if kind is dict:
            values = value.values()
        elif kind is list:
            values = value
        else:
            problem = number_problem(value)
            if problem is not None:
                raise error(source, _path(where), problem)
            continue
        if depth >= max_depth:
            raise error(source, _path(where), f"JSON nested too deeply; {limit_hint('nesting', 'levels')}")
        for item in values:
            kind = type(item)
            if kind is str:
                continue
            if kind is float or kind is int:
                if lo <= item <= hi:  # NaN fails too
                    continue
            elif kind is dict or kind is list:
                if depth + 1 >= max_depth:
                    raise error(source, _path((where, value, item)),
                                f"JSON nested too deeply; {limit_hint('nesting', 'levels')}")
                if item:
                    stack.append((item, depth + 1, (where, value, item)))
                continue
            elif kind is not _Constant and kind is not _LongInteger:
                continue
            raise error(source, _path((where, value, item)), number_problem(item) or "not a finite number")


def check_python_nesting(value: Any, source: str, error: ErrorFactory = input_error) -> None:
    """Mappings, lists and tuples of ``value`` (a workload dict, options or a grid given to the Python API) nested
    within the ``nesting`` bound, without recursion: the recursive walks that follow (numpy numbers made
    Python's, ``json.dumps``) ended in a RecursionError traceback on an object nested thousands of levels deep or
    holding itself.

    Raises:
        the ``error`` of the reader naming ``source`` and the path of the first container too deep.
    """
    from collections.abc import Mapping

    max_depth = int(limit("nesting"))
    containers = (Mapping, list, tuple)
    # (container, depth, (parent chain, key)): the path is spelled only for an error
    stack: list[tuple[Any, int, tuple | None]] = [(value, 0, None)] if isinstance(value, containers) else []
    while stack:
        item, depth, chain = stack.pop()
        if depth >= max_depth:
            keys: list[str] = []
            while chain is not None:
                chain, key = chain
                keys.append(f".{key}" if isinstance(key, str) else f"[{key!r}]")
            shown = "".join(reversed(keys)).lstrip(".") or "(top level)"
            raise error(source, shown if len(shown) <= 80 else f"{shown[:40]}...{shown[-37:]}",
                        f"nested too deeply (or holding itself); {limit_hint('nesting', 'levels')}")
        pairs = item.items() if isinstance(item, Mapping) else enumerate(item)
        stack.extend((child, depth + 1, (chain, key)) for key, child in pairs if isinstance(child, containers))


def _key_of(container: dict | list, item: Any) -> str | int:
    """The key or index of ``item`` (the very object) in ``container``, for an error's JSON path."""
    pairs = container.items() if isinstance(container, dict) else enumerate(container)
    return next(key for key, value in pairs if value is item)


# ------------------------------------------------------------------------------------------ encodings
def _wide_encoding(data: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``data`` starts as text in one of them (a byte-order mark, or the zero
    bytes of ASCII characters: the test of :func:`json.detect_encoding`, with which ``json.loads`` would have
    decoded it), else None."""
    encoding = json.detect_encoding(data[:4])
    return None if encoding.startswith("utf-8") else encoding[:6].upper()


def not_utf8_problem(data: bytes) -> str | None:
    """None when ``data`` is UTF-8 text (after an optional UTF-8 byte-order mark), else why not, for an error
    message: ``not UTF-8 text (it looks like UTF-16): ...``. Batsim 4.2.1 reads its workload as UTF-8 (rapidjson's
    ``Document::Parse`` of the file's bytes as a C string, ``src/workload.cpp``): a UTF-16 file stops at its first
    zero byte and is refused as JSON that "could not be parsed". SimGrid reads its platform as bytes too (a
    flex-generated lexer), refusing the XML of a UTF-16 file that Python's parser would decode."""
    wide = _wide_encoding(data)
    if wide is not None:
        return f"not UTF-8 text (it looks like {wide}): save it as UTF-8, the encoding Batsim reads"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    return None


def decode_utf8(data: bytes, source: str, error: ErrorFactory = input_error) -> str:
    """``data`` as text: UTF-8, a leading UTF-8 byte-order mark skipped.

    Raises:
        the ``error`` of the reader naming ``source``: :func:`not_utf8_problem`.
    """
    problem = not_utf8_problem(data)
    if problem is not None:
        raise error(source, "", problem)
    return data.decode("utf-8-sig")


def load_json(data: str | bytes, source: str, error: ErrorFactory = input_error, *,
              unique_keys: bool = False, max_depth: int | None = None) -> Any:
    """Parse JSON ``data`` read from ``source`` and check it with :func:`check_json_tree`.

    Text with fewer brackets than the nesting bound is parsed with hooks that give up at the first number that may
    not be a finite double (:func:`_finite_float`, :func:`_short_int`, NaN and ±Infinity): when none does, the
    document holds only finite numbers and is not nested too deeply, so the tree is not walked (protocol
    messages: a few hundred characters, plain numbers). Any other text is parsed and walked as a whole.

    Args:
        unique_keys: refuse an object that gives a key twice (Python keeps the last value, Batsim's rapidjson
            ``FindMember`` the first: the two would read different files). For the files and options a user
            writes; off for protocol messages, whose parsing it would slow down (a hook per object).
        max_depth: the ``nesting`` bound, when the caller read it already (once per run, not per message).

    Raises:
        the ``error`` of the reader: malformed JSON (line and column), not UTF-8, nested too deep, an
        integer of more than 4,300 digits, a number that is not a finite double, a duplicate key (when
        ``unique_keys``; naming its JSON path).
    """
    if isinstance(data, bytes) and _wide_encoding(data) is not None:  # json.loads would decode it
        raise error(source, "", not_utf8_problem(data) or "not UTF-8 text")
    if max_depth is None:
        max_depth = int(limit("nesting"))
    if unique_keys:
        return _parse_and_walk(data, source, error, _FirstDuplicate(), max_depth)
    if isinstance(data, str) and data.count("[") + data.count("{") < max_depth:
        try:
            doc = _CHECKING_DECODER.decode(data)
            if _SURROGATE_ESCAPE.search(data):
                _check_text(doc, source, error)
            return doc
        except _MaybeNotFinite:
            pass  # parsed again below, and walked: the error names the value's path
        except json.JSONDecodeError as exc:
            raise error(source, f"line {exc.lineno}, column {exc.colno}", f"malformed JSON ({exc.msg})") from None
        except RecursionError:  # pragma: no cover - fewer brackets than the bound
            raise error(source, "", f"JSON nested too deeply; {limit_hint('nesting', 'levels')}") from None
    return _parse_and_walk(data, source, error, None, max_depth)


def _parse_and_walk(data: str | bytes, source: str, error: ErrorFactory, duplicates: _FirstDuplicate | None,
                    max_depth: int) -> Any:
    """:func:`load_json`'s parse of any text, walked by :func:`check_json_tree`; with ``duplicates``, its hook
    built every object and the first one giving a key twice is refused."""
    try:
        doc = json.loads(data, parse_constant=_Constant, object_pairs_hook=duplicates)
    except json.JSONDecodeError as exc:
        raise error(source, f"line {exc.lineno}, column {exc.colno}", f"malformed JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise error(source, "", f"not UTF-8 text ({exc.reason})") from None
    except RecursionError:
        raise error(source, "", f"JSON nested too deeply; {limit_hint('nesting', 'levels')}") from None
    except ValueError:  # an integer of more than sys.get_int_max_str_digits() digits: parsed again to name it
        if duplicates is not None:
            duplicates = _FirstDuplicate()
        doc = json.loads(data, parse_constant=_Constant, parse_int=_int_or_long, object_pairs_hook=duplicates)
    check_json_tree(doc, source, error, max_depth=max_depth)
    if _SURROGATE_ESCAPE.search(data) if isinstance(data, str) else _SURROGATE_ESCAPE_BYTES.search(data):
        _check_text(doc, source, error)
    if duplicates is not None and duplicates.found is not None:
        duplicates.report(doc, source, error)
    return doc


#: How the problem of a key given twice starts (a reader's error factory may word it apart from malformed JSON).
DUPLICATE_KEY = "duplicate key"


class _FirstDuplicate:
    """``object_pairs_hook`` of :func:`load_json` with ``unique_keys``: builds each object as ``json`` does and
    remembers the first one (in parsing order: inner objects first) that gives a key twice."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: tuple[dict, str] | None = None

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs) and self.found is None:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.found = (obj, key)
                    break
                seen.add(key)
        return obj

    def report(self, doc: Any, source: str, error: ErrorFactory) -> None:
        """Raise the reader's error naming the duplicate key by its JSON path (``jobs[3].walltime``) and, for a
        job, its id."""
        assert self.found is not None
        obj, key = self.found
        where = _where_is(doc, obj)
        place = _path(where)
        field = key if place == "(top level)" else f"{place}.{key}"
        job_id = obj.get("id")
        of_job = (f" of job {json.dumps(job_id)}" if place.startswith("jobs[") and place.count("[") == 1
                  and type(job_id) in (str, int) else "")
        raise error(source, field, f"{DUPLICATE_KEY}{of_job}: give it once (JSON readers differ on which value "
                                   "counts: Batsim's takes the first, Python's the last)")


def _where_is(doc: Any, target: dict) -> tuple | None:
    """The chain of :func:`_path` leading to the very object ``target`` inside ``doc`` (None: ``doc`` itself)."""
    stack: list[tuple[Any, tuple | None]] = [(doc, None)]
    while stack:
        value, where = stack.pop()
        if value is target:
            return where
        items = value.values() if type(value) is dict else value if type(value) is list else ()
        for item in items:
            if type(item) is dict or type(item) is list:
                stack.append((item, (where, value, item)))
    return None  # pragma: no cover - the hook built it inside doc


#: a ``\uD800``-``\uDFFF`` escape: JSON text may spell half of a UTF-16 pair, which Python keeps as a lone
#: surrogate (no UTF-8 for it: the output files could not be written)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_text(doc: Any, source: str, error: ErrorFactory) -> None:
    """Every string of ``doc`` (keys included) is text: no unpaired surrogate (``"\\ud800"`` alone)."""
    stack: list[tuple[Any, tuple | None]] = [(doc, None)]
    while stack:
        value, where = stack.pop()
        items = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
        for key, item in items:
            for text, what in ((key, "key"), (item, "string")):
                if type(text) is str and not text.isascii():
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError:
                        place = _path(where if what == "key" else (where, value, item))
                        raise error(source, place, f"a {what} holds half of a UTF-16 surrogate pair "
                                                   f"({text!r}): not text") from None
            if type(item) is dict or type(item) is list:
                stack.append((item, (where, value, item)))


class _MaybeNotFinite(Exception):
    """Raised by the hooks of :data:`_CHECKING_DECODER` at a number that may not be a finite double."""


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0:  # ±inf (NaN is no JSON number: it comes as a constant)
        raise _MaybeNotFinite
    return value


def _short_int(text: str) -> int:
    if len(text) >= 300:  # beyond ±1e299 only from 300 characters on: the walk decides
        raise _MaybeNotFinite
    return int(text)


def _no_constant(name: str) -> Any:
    raise _MaybeNotFinite


#: The decoder of :func:`load_json`'s fast path (one for all calls: it keeps no state between them).
_CHECKING_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_int=_short_int, parse_constant=_no_constant)


# ---------------------------------------------------------------------------------------------- YAML
def _yaml_children(node: Any) -> list[Any] | None:
    """The nodes inside a YAML collection node (keys and values of a mapping); None for a scalar."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return None


def check_yaml_graph(root: Any, source: str, error: ErrorFactory = input_error) -> int:
    """The number of nodes of a composed YAML document with every alias expanded, counted without expanding
    it (each anchored node is measured once), and without recursion; returns that number.

    An alias is a reference: PyYAML builds one object per anchor, but whatever walks the result (``json.dumps``
    of a grid's options, a hash, a copy) visits it once per alias, so nine lines of nine aliases each (the
    "billion laughs") are 10^9 nodes to walk. Nesting counts collections along a path, aliases expanded, as
    :func:`check_json_tree` does.

    Raises:
        the ``error`` of the reader, at the line of the node that crosses ``yaml_nodes`` or ``nesting``, or
        of an alias inside its own anchor (a structure that contains itself).
    """
    max_nodes = limit("yaml_nodes")
    max_depth = limit("nesting")
    too_deep = f"YAML nested too deeply; {limit_hint('nesting', 'levels')}"
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes expanded, collections along its deepest path)
    on_path: set[int] = set()
    # one frame per open collection: [node, its children, next child, nodes so far, deepest child path]
    stack: list[list[Any]] = []

    def open_collection(node: Any) -> None:
        if len(stack) + 1 > max_depth:
            raise error(source, f"line {node.start_mark.line + 1}", too_deep)
        stack.append([node, _yaml_children(node), 0, 1, 0])
        on_path.add(id(node))

    if _yaml_children(root) is None:
        return 1
    open_collection(root)
    while True:
        frame = stack[-1]
        node, children, index = frame[0], frame[1], frame[2]
        if index < len(children):
            frame[2] += 1
            child = children[index]
            if id(child) in on_path:
                raise error(source, f"line {child.start_mark.line + 1}",
                            "an alias inside its own anchor (a structure that contains itself)")
            if id(child) in measured:
                size, height = measured[id(child)]
                if len(stack) + height > max_depth:
                    raise error(source, f"line {child.start_mark.line + 1}", too_deep)
            elif _yaml_children(child) is not None:
                open_collection(child)
                continue
            else:
                size, height = 1, 0
        else:
            stack.pop()
            on_path.discard(id(node))
            size, height = frame[3], frame[4] + 1
            measured[id(node)] = (size, height)
            if not stack:
                return size
            frame = stack[-1]
        frame[3] += size
        frame[4] = max(frame[4], height)
        if frame[3] > max_nodes:
            raise error(source, f"line {frame[0].start_mark.line + 1}",
                        f"YAML aliases expand to more than {max_nodes:g} nodes; {limit_hint('yaml_nodes', 'nodes')}")


def _check_yaml_keys(root: Any, source: str, error: ErrorFactory) -> None:
    """No mapping of a composed YAML document gives one scalar key twice; each node visited once (aliases are
    the same node objects), without recursion.

    Raises:
        the ``error`` of the reader, at the line of the second occurrence of the key.
    """
    import yaml

    stack, visited = [root], {id(root)}
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in seen:
                        raise error(source, f"line {key.start_mark.line + 1}",
                                    f"{DUPLICATE_KEY} {key.value!r}: give it once (YAML readers differ on which "
                                    "value counts: PyYAML's takes the last)")
                    seen.add((key.tag, key.value))
        for child in _yaml_children(node) or ():
            if id(child) not in visited:
                visited.add(id(child))
                stack.append(child)


#: YAML 1.2's floats that YAML 1.1 (PyYAML) reads as strings: an exponent without a decimal point or without a sign
#: (``1e3``, ``-2E-5``, ``.5e3``, ``5.e3``). A grid's ``tau_s: 1e3`` was refused as "got '1e3'".
_YAML12_EXPONENT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_yaml_loader: Any = None


def _yaml_loader_class() -> Any:
    """PyYAML's safe loader (the C one when built) that also reads :data:`_YAML12_EXPONENT` as floats."""
    global _yaml_loader
    if _yaml_loader is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader: Any = type("Yaml12ExponentLoader", (base,), {})  # (a subclass: PyYAML's own loaders stay as they are)
        loader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_EXPONENT, list("-+.0123456789"))
        _yaml_loader = loader
    return _yaml_loader


def load_yaml(text: str, source: str, error: ErrorFactory = input_error, *, unique_keys: bool = False) -> Any:
    """Parse one YAML document read from ``source`` with the safe tags only; aliases bounded by
    :func:`check_yaml_graph` before anything is built from them; then :func:`check_json_tree` (nesting,
    NaN and ±inf refused with their path). Numbers with an exponent are numbers as in YAML 1.2 and JSON (``1e3``:
    PyYAML follows YAML 1.1, where it is the string '1e3').

    Args:
        unique_keys: refuse a mapping that gives a key twice (PyYAML keeps the last value silently), as
            :func:`load_json` does.

    Raises:
        the ``error`` of the reader: malformed YAML (line), too many nodes once aliases are expanded, nested
        too deeply, an alias inside its own anchor, a number that is not finite, a duplicate key (when
        ``unique_keys``; naming its line).
    """
    import yaml

    try:
        loader = _yaml_loader_class()(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            check_yaml_graph(node, source, error)
            if unique_keys:
                _check_yaml_keys(node, source, error)
            doc = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise error(source, where, f"not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except RecursionError:
        raise error(source, "", f"YAML nested too deeply; {limit_hint('nesting', 'levels')}") from None
    check_json_tree(doc, source, error)
    return doc


# -------------------------------------------------------------------------------------------- numbers
def check_number(value: Any, source: str, field: str, *, min: float | None = None, max: float | None = None,
                 min_open: bool = False, integer: bool = False, error: ErrorFactory = input_error) -> float:
    """``value`` as a float (an int when ``integer``), finite and within ``[min, max]`` (``(min, max]`` when
    ``min_open``); NaN and ±inf refused by name.

    Raises:
        the ``error`` of the reader naming ``source`` and ``field``.
    """
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(source, field, f"{_show(value)} is not {kind}")
    if integer and not isinstance(value, int):
        raise error(source, field, f"{_show(value)} is not {kind}")
    if isinstance(value, float) and math.isnan(value):
        raise error(source, field, "NaN is not a number")
    if not -MAX_DOUBLE <= value <= MAX_DOUBLE:
        raise error(source, field, f"{_show(value)} is not finite (beyond ±1.8e308)")
    if min is not None and (value <= min if min_open else value < min):
        if min == 0 and not min_open:
            raise error(source, field, f"{_show(value)} must be non-negative")
        raise error(source, field, f"{_show(value)} must be {'>' if min_open else '≥'} {min:g}")
    if max is not None and value > max:
        raise error(source, field, f"{_show(value)} must be ≤ {max:g}")
    return value if integer else float(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


#: An integer as a command line writes it: ASCII digits, at most a leading minus sign.
_PLAIN_INT = re.compile(r"-?[0-9]+")
#: Why :func:`plain_int` refused a text :func:`int` would have read (a sign, a space, ``_``, other digits).
NOT_PLAIN_DIGITS = "write it with the ASCII digits 0-9 alone"


def plain_int(text: str) -> int:
    """``text`` as an integer when written plainly: ASCII digits 0-9 after at most a leading ``-`` (a reader
    refuses a negative value itself when it makes no sense, with its own words).

    :func:`int` also reads ``'+16'``, ``'1_6'``, ``' 16 '``, ``'16\\n'`` and other scripts' digits (``'١٦'``,
    ``'１６'``): on a command line or in a form these are typos or pastes from elsewhere, not numbers a user meant
    to give. Integers of JSON files need no such check: JSON's grammar has only ASCII digits.

    Raises:
        ValueError: not so written (its message is :data:`NOT_PLAIN_DIGITS` when :func:`int` would have read the
            text, so that ``'+16'`` is not called "not an integer"), or more digits than Python converts.
    """
    return _plain(text, _PLAIN_INT.fullmatch(text) is not None, int, "not an integer", NOT_PLAIN_DIGITS)


class TooManyDigits(ValueError):
    """An integer written plainly with more digits than :func:`int` converts (:func:`plain_int`)."""


def _plain(text: str, plain: bool, convert: Callable[[str], Any], what: str, how: str) -> Any:
    """``convert(text)`` when ``text`` is ``plain``ly written, else ValueError: ``how`` when ``convert`` would have
    read it anyway, ``what`` when it would not (:func:`plain_int`, :func:`plain_float`)."""
    if plain:
        try:
            return convert(text)
        except ValueError:  # int: beyond sys.get_int_max_str_digits() digits ("not an integer" of one would be false)
            raise TooManyDigits(f"{len(text.lstrip('-'))} digits: more than the {sys.get_int_max_str_digits()} Python "
                                "reads") from None
    try:
        convert(text)
    except ValueError:
        raise ValueError(what) from None
    raise ValueError(how)


def integer(text: str, expected: str, whole: str | None = None) -> int:
    """``text`` as an integer for an option's ``type``: ASCII digits, at most a leading ``-``
    (:func:`~wattsched.base.validate.plain_int`; Python's ``int()`` would take ``+16``, ``1_6``, `` 16 `` and
    ``١٦``), else the usage error ``expected EXPECTED, got 'TEXT'`` (``whole``, the option's value, when ``text``
    is a part of it), with how to write it when ``int()`` would have read it. Every integer of the command line is read by
    it (:func:`positive_int`, :func:`non_negative_int`, the ``--job-numbers`` range)."""
    return _option_value(plain_int, NOT_PLAIN_DIGITS, text, expected, whole)


def _option_value(read: Callable[[str], Any], how: str, text: str, expected: str, whole: str | None) -> Any:
    """``read(text)`` for an option's ``type`` (:func:`integer`, :func:`number`), else the usage error ``expected
    EXPECTED, got 'TEXT'``, with ``how`` to write it when that is why ``read`` refused it."""
    try:
        return read(text)
    except ValueError as error:
        hint = f" ({error})" if str(error) == how or isinstance(error, TooManyDigits) else ""
        shown = text if whole is None else whole
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown[:40]!r}{hint}") from None


#: A decimal number as a command line writes it: ASCII digits with an optional sign, decimal point and exponent
#: (``1e3``, ``0.5``, ``-1``, ``.5``, ``+2.``).
_PLAIN_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: The words :func:`float` reads for the non-finite values, kept so that the readers refusing them say why.
_FLOAT_WORDS = re.compile(r"[-+]?(?:inf|infinity|nan)", re.IGNORECASE)
#: Why :func:`plain_float` refused a text :func:`float` would have read (a space, ``_``, other scripts' digits).
NOT_PLAIN_NUMBER = "write it with the ASCII digits 0-9, a sign, a '.' and an exponent such as 1e3 alone"


def plain_float(text: str) -> float:
    """``text`` as a float when written plainly: ASCII digits 0-9 with an optional sign, decimal point and
    exponent (what JSON and C's ``strtod`` read), or the words ``inf``, ``infinity`` and ``nan`` :func:`float`
    reads (each reader refuses a non-finite value itself, with its own words).

    :func:`float` also reads ``'1_6'``, ``' 16 '``, ``'16\\n'`` and other scripts' digits (``'١٦'``, ``'１６'``):
    on a command line or in a form these are typos or pastes from elsewhere, not numbers a user meant to give.

    Raises:
        ValueError: not so written (its message is :data:`NOT_PLAIN_NUMBER` when :func:`float` would have read
            the text, so that ``'1_6'`` is not called "not a number").
    """
    plain = is_plain_decimal(text) or _FLOAT_WORDS.fullmatch(text) is not None
    return _plain(text, plain, float, "not a number", NOT_PLAIN_NUMBER)


def is_plain_decimal(text: str) -> bool:
    """Whether ``text`` is a finite decimal number written plainly: ASCII digits 0-9 with an optional sign, decimal
    point and exponent (``1e3``, ``0.5``, ``-1``, ``.5``, ``+2.``), as JSON and C's ``strtod`` write one."""
    return _PLAIN_FLOAT.fullmatch(text) is not None


def number(text: str, expected: str, whole: str | None = None) -> float:
    """``text`` as a float for an option's ``type`` (:func:`plain_float`), else the usage error ``expected
    EXPECTED, got 'TEXT'`` (``whole``, the option's value, when ``text`` is a part of it), with how to write it
    when :func:`float` would have read it. Every decimal number of the command line and of the web forms is read
    by it (``--tau``, ``--window``, ``--days``...), as :func:`integer` reads their integers."""
    return _option_value(plain_float, NOT_PLAIN_NUMBER, text, expected, whole)


def shown_integer(value: int) -> str:
    """``value`` for an error line: as it is, or cut with its number of digits when long (``-j`` of 401 digits printed
    them all)."""
    text = str(value)
    digits = len(text.lstrip("-"))
    return text if digits <= 20 else f"{text[:12]}... (an integer of {digits} digits)"


def positive_int(text: str) -> int:
    value = integer(text, "a positive integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {shown_integer(value)}")
    return value


def non_negative_int(text: str) -> int:
    value = integer(text, "an integer ≥ 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer ≥ 0, got {shown_integer(value)}")
    return value


def window_beyond_time(start_s: float, end_s: float) -> str | None:
    """Why the window ``start_s,end_s`` (finite seconds) cannot be measured, or None: no run or trace reaches beyond
    the ``time_s`` bound (README "Errors and limits"), and a window's energy up to 1e308 s would be inf, a plot's
    axis overflow matplotlib's transforms. Every reader of a window (``--window``, a grid's or a runs file's
    ``window``, :func:`wattsched.api.simulate`, :func:`wattsched.analysis.metrics.compute_metrics`) asks it."""
    if max(abs(start_s), abs(end_s)) > limit("time_s"):
        return f"{start_s:g},{end_s:g} is beyond any simulated time; {limit_hint('time_s', 's')}"
    return None


def check_count(count: float, bound: str, source: str, field: str, what: str,
                error: ErrorFactory = input_error) -> None:
    """``count`` (of ``what``, e.g. "hosts") within the bound ``bound`` of :mod:`.limits`.

    Raises:
        the ``error`` of the reader, naming the bound and the variable that raises it.
    """
    if count > limit(bound):
        if isinstance(count, int) and count > MAX_DOUBLE:  # (``:.3g`` would convert it to a float: OverflowError)
            raise error(source, field, f"{shown_integer(count)} {what}; {limit_hint(bound)}")
        shown = f"{count:.3g}" if count >= 1e6 else f"{count:g}"
        if float(shown) <= limit(bound):  # rounded down to the bound's own digits: "2e+06 hosts; at most 2e+06"
            shown = format_count(count) if float(count).is_integer() else f"{count:.12g}"
        raise error(source, field, f"{shown} {what}; {limit_hint(bound)}")


def check_memory(estimate_bytes: float, source: str, field: str, what: str,
                 error: ErrorFactory = input_error) -> None:
    """An input whose estimated footprint exceeds ``memory_fraction`` of the available memory is refused
    before anything is allocated (nothing is checked where the available memory is unknown).

    Raises:
        the ``error`` of the reader, with the estimate and the memory available.
    """
    available = available_memory_bytes()
    if available is None:
        return
    allowed = limit("memory_fraction") * available
    if estimate_bytes > allowed:
        raise error(source, field, f"{what} would need about {estimate_bytes / 2**30:.3g} GiB of memory, "
                                   f"{allowed / 2**30:.3g} GiB available "
                                   f"(share raised with WATTSCHED_LIMIT_MEMORY_FRACTION)")


# ---------------------------------------------------------------------------------------------- names
#: Characters Batsim's CSV files cannot carry in an id: it writes ``job_id``, ``workload_name`` and
#: ``profile`` unquoted (behaviour 28: the recordings' ``out_jobs.csv``), so a comma or a line break splits
#: the row and a double quote opens a quoted field. And NUL, which Batsim cannot read in one: it takes job ids
#: and profile names with rapidjson's ``GetString()`` into a ``std::string`` (``Job::from_json`` in
#: ``src/jobs.cpp``, ``Profiles::load_from_json`` in ``src/profiles.cpp``), which ends at the first NUL: ``"a\u0000b"``
#: would be job ``a``. Other control characters (ESC, U+001C, U+2028) are accepted as Batsim does; whatever
#: prints them escapes them (:func:`wattsched.base.errors.printable`).
CSV_UNSAFE = frozenset(',"\n\r\0')

_UNSAFE_NAMES = {",": "comma", '"': "double quote", "\n": "line break", "\r": "carriage return", "\0": "NUL"}


def check_csv_name(name: str, source: str, field: str, what: str = "id",
                   error: ErrorFactory = input_error) -> str:
    """``name`` if Batsim's CSV files can carry it (no comma, double quote or line break: Batsim writes ids
    unquoted) and Batsim reads it whole (no NUL), else the ``error`` of the reader."""
    if not CSV_UNSAFE.isdisjoint(name):
        if "\0" in name:
            cut = name.split("\0")[0]
            raise error(source, field, f"{_show(name)}: a {what} cannot contain a NUL character (Batsim reads "
                                       f"{what}s as C strings: it would cut this one to {_show(cut)})")
        bad = sorted({c for c in name if c in CSV_UNSAFE})
        shown = " ".join(_UNSAFE_NAMES[c] for c in bad)
        raise error(source, field, f"{_show(name)}: a {what} cannot contain a {shown} (Batsim writes {what}s "
                                   "unquoted in its CSV files)")
    return name


# -------------------------------------------------------------------------------------------- outputs
def control_character_problem(name: str) -> str | None:
    """Why ``name`` cannot name a file we write: the first control character it holds (C0 such as a line break or
    ESC, DEL, C1, or a line or paragraph separator), None when it holds none. The system takes such a name (all but
    NUL and '/'), but ``-e $'o/out\\n'`` wrote files whose names end in a line break: they split every listing,
    log line and shell loop that reads them, and a terminal acts on an ESC."""
    for char in name:
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return (f"holds the control character {repr(char)[1:-1]} (U+{ord(char):04X}); a file name must not "
                    "hold control characters")
    return None


def home_folder_problem(name: str | os.PathLike) -> str | None:
    """Why ``name`` cannot name a file we write when its first folder is ``~`` (or ``~user``), None otherwise. Only a
    shell reads it as the home folder: ``out="~/runs/a"`` (the Python API, a quoted ``-e '~/runs/a'``) made a folder
    named ``~`` in the current one, whose outputs the readers (pandas, which expands ``~``) then looked for in the
    home folder (``file not found``, or the files of another run there)."""
    path = Path(name)  # ./~/x is ~/x to pathlib, so to pandas
    first = path.parts[0] if path.parts else ""
    if not first.startswith("~") or os.path.expanduser(first) == first:
        return None
    return (f"starts with {first!r}, which only a shell reads as a home folder (a folder named {first!r} would be "
            f"made here); give the full path, {os.path.expanduser(str(path))!r}")


#: The longest path (Linux's PATH_MAX) and file name (most file systems) the system takes, in bytes: a longer string
#: is no file path, refused without a look at the disk.
PATH_MAX_BYTES = 4096
NAME_MAX_BYTES = 255


def file_name_problem(path: str | os.PathLike) -> str | None:
    """Why the system would refuse ``path`` itself whatever the disk holds (a NUL, a name or a path too long, a
    string with no bytes for it), None when it would not: ``Path.is_dir`` raises (``File name too long``) or
    answers False (a NUL) where a write fails later."""
    text = os.fspath(path)
    if "\0" in str(text):
        return "a file name cannot hold a NUL character"
    try:
        data = os.fsencode(text)
    except UnicodeError:
        return "not a name the file system can encode"
    if len(data) >= PATH_MAX_BYTES:
        return f"a path of {len(data)} bytes, longer than the {PATH_MAX_BYTES} the system takes"
    longest = max(data.split(b"/"), key=len)
    if len(longest) > NAME_MAX_BYTES:
        shown = repr(os.fsdecode(longest[:40]))[:-1] + "...'"
        return (f"the name {shown} is {len(longest)} bytes long, longer than the {NAME_MAX_BYTES} a file system "
                "takes")
    return None


def check_output_files(paths: Sequence[str | os.PathLike], option: str) -> None:
    """Refuse, before any work, output files that could not be written: a name the system refuses (too long, a
    NUL), a target that is a folder or no regular file (a FIFO, a device, a socket: the atomic rename would replace
    it, so it is refused, but only once the work was done), a parent that is a file, a folder that cannot be
    created or written (read-only, no permission).

    Raises:
        OutputError: naming ``option`` (e.g. ``"-e results/out"``) and the first such path.
    """
    probed: set[Path] = set()
    for raw in paths:
        problem = file_name_problem(raw)
        if problem is not None:  # Path.is_dir() would raise (too long) or say False (a NUL) without a word
            raise OutputError(f"{option}: cannot write there: {problem}")
        target = Path(raw)
        try:
            require_regular_file(target)  # (absent, or a parent that is a file: named below)
        except IsADirectoryError:
            raise OutputError(f"{option}: {target} is a folder, not a file") from None
        except OSError as exc:  # a FIFO, a device, a socket
            raise OutputError(f"{option}: cannot write {target}: {exc.strerror}") from None
        ancestor = target.parent
        while not ancestor.exists():
            if ancestor.is_symlink():
                raise OutputError(f"{option}: {ancestor} is a broken link")
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise OutputError(f"{option}: cannot write {target}: {ancestor} is a file, not a folder")
        if ancestor in probed:
            continue
        probed.add(ancestor)
        try:
            fd, name = tempfile.mkstemp(prefix=".wattsched-probe.", dir=ancestor)
        except OSError as exc:
            raise OutputError(f"{option}: cannot write {target} ({exc.strerror or exc} in {ancestor})") from None
        os.close(fd)
        os.unlink(name)


# ------------------------------------------------------------------------------------------ protocol
#: Event types a Batsim 4.2.1 message may carry (``docs/architecture.md`` §5; Batsim's protocol documentation).
#: Not QUERY: Batsim 4.2.1 can write one (``append_query_estimate_waiting_time``) but never calls it.
BATSIM_EVENTS = frozenset({
    "SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED",
    "RESOURCE_STATE_CHANGED", "REQUESTED_CALL", "ANSWER", "NOTIFY", "FROM_JOB_MSG",
})
#: What SIMULATION_BEGINS always holds (Batsim 4.2.1, ``tests/fixtures/batsim-reference/*/messages.jsonl``)
#: and schedulers read without checking (pybatsim does).
_BEGINS_FIELDS: dict[str, type] = {
    "nb_resources": int, "nb_storage_resources": int, "compute_resources": list, "storage_resources": list,
    "config": dict, "allow_compute_sharing": bool, "allow_storage_sharing": bool, "profiles": dict,
    "workloads": dict,
}
_BEGINS_CONFIG = ("profiles-forwarded-on-submission", "dynamic-jobs-enabled", "dynamic-jobs-acknowledged",
                  "forward-unknown-events")
_KIND_NAMES = {int: "an integer", list: "a list", dict: "an object", bool: "true or false"}
#: The NOTIFY types Batsim 4.2.1 sends (the machine events hold 'resources'); others only when it forwards unknown
#: external events (pybatsim raises on them otherwise)
_NOTIFY_TYPES = frozenset({"no_more_static_job_to_submit", "no_more_external_event_to_occur"})
_MACHINE_NOTIFY = frozenset({"event_machine_unavailable", "event_machine_available"})
_JOB_STATES = frozenset({"COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                         "COMPLETED_KILLED", "REJECTED"})


class BatsimMessageChecker:
    """Checks each message Batsim sends a scheduler before the scheduler sees it (``wattsched serve``):
    its shape, its event types, its times, and that every job and host an event names exists, as Batsim 4.2.1
    sends them:

    * the first message holds SIMULATION_BEGINS, once, and nothing follows SIMULATION_ENDS;
    * ``now`` never goes back, and no event of a message is later than its ``now``;
    * jobs were submitted before; a job completes once; hosts are those of SIMULATION_BEGINS (whose
      ``compute_resources`` list ids 0 to ``nb_compute_resources`` - 1), a pstate is an integer string and,
      when SIMULATION_BEGINS gives every host's ``wattage_per_state``, one of the host's pstates;
    * with ``sees_replies``, a completed or killed job is one the scheduler started, and a REQUESTED_CALL, a
      RESOURCE_STATE_CHANGED and an ANSWER each answer one of its CALL_ME_LATERs, SET_RESOURCE_STATEs and QUERYs,
      and a JOB_KILLED one of its KILL_JOBs that names every job it lists: the replies are shown to :meth:`replied`
      (jobs started and registered, calls, switches, queries and kills asked);
    * a JOB_SUBMITTED's ``job.id`` is its ``job_id`` (Batsim writes the one id in both), and it gives ``job.profile``;
    * the fields Batsim always writes and pybatsim reads unchecked: a JOB_KILLED's ``job_progress``, a FROM_JOB_MSG's
      ``msg``; a NOTIFY is of a type Batsim sends (any with ``config.forward-unknown-events``), a machine event's
      ``resources`` are hosts.

    Every check is a few set or dict lookups per event (SIMULATION_BEGINS: one pass over the hosts).

    Args:
        sees_replies: :meth:`replied` is called with every reply, so the jobs started are known.
        pybatsim: the scheduler is pybatsim's client, which reads a JOB_SUBMITTED's ``job.subtime`` and a
            JOB_COMPLETED's ``return_code`` without checking them (a KeyError in pybatsim, reported as the scheduler's
            error); our translator names what it lacks itself.

    Raises:
        ProtocolError: naming the message (its number and time) and the event at fault.
    """

    def __init__(self, *, sees_replies: bool = False, pybatsim: bool = False) -> None:
        self.pybatsim = pybatsim
        self.number = 0
        self.now: float = 0.0
        self.nb_hosts: int | None = None
        self.jobs: set[str] = set()
        self.done: set[str] = set()
        #: jobs the scheduler started (EXECUTE_JOB in its replies); None when the replies are not shown
        self.started: set[str] | None = set() if sees_replies else None
        #: jobs the scheduler registered whose acknowledgement (a JOB_SUBMITTED) may still come
        self.registered: set[str] = set()
        #: CALL_ME_LATERs of the scheduler not answered yet by a REQUESTED_CALL (counted when the replies are shown)
        self.calls = 0
        #: SET_RESOURCE_STATEs and QUERYs not answered yet by a RESOURCE_STATE_CHANGED, an ANSWER (B23, B26)
        self.switches = 0
        self.queries = 0
        #: the job ids of each KILL_JOB not answered yet by a JOB_KILLED (Batsim sends at most one per KILL_JOB, with
        #: ids of that kill only, and none when every job it names was already killed or had ended: B-c)
        self.kills: list[set[str]] = []
        #: SIMULATION_BEGINS's 'config.forward-unknown-events': NOTIFYs of other types may come
        self.forwards_unknown = False
        #: pstates of each host (from ``wattage_per_state``), None when SIMULATION_BEGINS does not give them all
        self.pstates: list[int] | None = None
        self.min_pstates = 0
        self.ended = False

    def check(self, msg: Any) -> None:
        self.number += 1
        if not isinstance(msg, dict) or "now" not in msg or not isinstance(msg.get("events"), list):
            raise self._error(None, "a Batsim message must be an object with 'now' and 'events'")
        now: Any = msg["now"]
        kind_of_now = type(now)
        if not (kind_of_now is float or kind_of_now is int) or not 0 <= now <= MAX_DOUBLE:
            raise self._error(None, f"field 'now' must be a time ≥ 0, got {_show(now)}")
        if self.ended:
            raise self._error(now, "a message after SIMULATION_ENDS (Batsim sends none)")
        if now < self.now:
            raise self._error(now, f"field 'now' goes back in time: {now:g} after {self.now:g} in message "
                                   f"{self.number - 1}")
        self.now = now
        for index, ev in enumerate(msg["events"]):
            if type(ev) is not dict or type(ev.get("type")) is not str:
                raise self._error(now, f"events[{index}] must be an object with a 'type'")
            kind = ev["type"]
            if kind not in BATSIM_EVENTS:
                if kind == "QUERY":
                    raise self._error(now, f"events[{index}]: QUERY: Batsim 4.2.1 sends no query to the "
                                           "scheduler (its estimate_waiting_time query is never sent); "
                                           "refused, not answered")
                raise self._error(now, f"events[{index}]: unknown event type {_show(kind)}")
            if self.ended:
                raise self._error(now, f"events[{index}]: {kind} after SIMULATION_ENDS (Batsim sends nothing after it)")
            if self.nb_hosts is None and kind != "SIMULATION_BEGINS":
                raise self._error(now, f"events[{index}]: {kind} before SIMULATION_BEGINS (Batsim's first event)")
            data = ev.get("data", {})
            if type(data) is not dict:
                raise self._error(now, f"{kind}: field 'data' must be an object")
            ts: Any = ev.get("timestamp", now)
            kind_of_ts = type(ts)
            if not (kind_of_ts is float or kind_of_ts is int) or not 0 <= ts <= MAX_DOUBLE:
                raise self._error(now, f"{kind}: field 'timestamp' must be a time ≥ 0, got {_show(ts)}")
            if ts > now:
                raise self._error(now, f"{kind}: field 'timestamp' {ts:g} is later than the message's 'now' {now:g}")
            try:
                self._event(kind, data)
            except ValueError as exc:
                raise self._error(now, f"{kind}: {exc}") from None
        if self.nb_hosts is None:
            raise self._error(now, "no SIMULATION_BEGINS (Batsim's first message starts with it)")

    def replied(self, reply: Any) -> None:
        """Learn from the scheduler's ``reply`` the jobs it started (EXECUTE_JOB) and registered (REGISTER_JOB:
        known from now on, B44), and the calls, switches, queries and kills it asked. One look at each event's type."""
        events = reply.get("events") if type(reply) is dict else None
        if type(events) is not list:
            return
        started = self.started
        for ev in events:
            if type(ev) is not dict:
                continue
            kind = ev.get("type")
            if kind == "EXECUTE_JOB":
                if started is not None and type(ev.get("data")) is dict:
                    started.add(str(ev["data"].get("job_id")))
            elif kind == "CALL_ME_LATER":
                self.calls += 1
            elif kind == "SET_RESOURCE_STATE":
                self.switches += 1
            elif kind == "QUERY":
                self.queries += 1
            elif kind == "KILL_JOB" and type(ev.get("data")) is dict and type(ev["data"].get("job_ids")) is list:
                self.kills.append({str(jid) for jid in ev["data"]["job_ids"]})
            elif kind == "REGISTER_JOB" and type(ev.get("data")) is dict:
                jid = str(ev["data"].get("job_id"))
                if jid not in self.jobs:
                    self.jobs.add(jid)
                    self.registered.add(jid)

    def _error(self, now: Any, problem: str) -> Exception:
        """The error naming the message being checked (built only when there is one)."""
        from wattsched.base.errors import ProtocolError

        where = f"Batsim message {self.number}" if now is None else f"Batsim message {self.number} (t={now:g})"
        return ProtocolError(f"{where}: {problem}")

    def _job(self, data: dict, key: str = "job_id") -> str:
        jid = data.get(key)
        if not isinstance(jid, str):
            raise ValueError(f"field '{key}' must be a job id string, got {_show(jid)}")
        if jid not in self.jobs:
            raise ValueError(f"field '{key}': unknown job {jid!r}")
        return jid

    def _started(self, jid: str, key: str) -> None:
        if self.started is not None and jid not in self.started:
            raise ValueError(f"field '{key}': job {jid!r} was never started (no EXECUTE_JOB from the scheduler)")

    def _hosts(self, text: Any, key: str) -> list[tuple[int, int]]:
        """The intervals of an interval set as Batsim writes it (``"0-3 7"``: one space between intervals, as
        ``ProcSet.from_str`` reads it), each within the hosts of SIMULATION_BEGINS."""
        if not isinstance(text, str):
            raise ValueError(f"field '{key}' must be an interval set like '0-3 7', got {_show(text)}")
        intervals = []
        for part in text.split(" ") if text else ():
            lo, _, hi = part.partition("-")
            hi = hi or lo
            if not (lo.isdigit() and hi.isdigit() and lo.isascii() and hi.isascii()) or int(lo) > int(hi):
                raise ValueError(f"field '{key}' {_show(text)} is not an interval set like '0-3 7'")
            last = int(hi)
            if self.nb_hosts is not None and last >= self.nb_hosts:
                raise ValueError(f"field '{key}': unknown host {last} (hosts 0-{self.nb_hosts - 1})")
            intervals.append((int(lo), last))
        return intervals

    def _begins(self, data: dict) -> None:
        if self.nb_hosts is not None:
            raise ValueError("a second SIMULATION_BEGINS (Batsim sends it once)")
        nb = data.get("nb_compute_resources")
        if isinstance(nb, bool) or not isinstance(nb, int) or nb < 0:
            raise ValueError(f"field 'nb_compute_resources' must be a host count, got {_show(nb)}")
        if nb > limit("hosts"):
            raise ValueError(f"{nb} hosts; {limit_hint('hosts')}")
        for key, expected in _BEGINS_FIELDS.items():
            if not isinstance(data.get(key), expected):
                raise ValueError(f"field '{key}' is missing or not {_KIND_NAMES[expected]}")
        for key in _BEGINS_CONFIG:
            if key not in data["config"]:
                raise ValueError(f"field 'config.{key}' is missing")
        resources = data["compute_resources"]
        pstates: list[int] | None = None
        if resources:  # none: the schedulers take every host for a Taurus node (PolicyScheduler.start)
            if len(resources) != nb:
                raise ValueError(f"field 'compute_resources' lists {counted(len(resources), 'host')}, "
                                 f"'nb_compute_resources' says {nb}")
            pstates = [0] * nb
            seen = [False] * nb
            for index, res in enumerate(resources):
                rid = res.get("id") if type(res) is dict else None
                if type(rid) is not int or not 0 <= rid < nb:
                    raise ValueError(f"field 'compute_resources[{index}].id' must be a host id 0-{nb - 1}, "
                                     f"got {_show(rid)}")
                if seen[rid]:
                    raise ValueError(f"field 'compute_resources[{index}].id': host {rid} is listed twice")
                seen[rid] = True
                props = res.get("properties", {})
                if type(props) is not dict:
                    raise ValueError(f"field 'compute_resources[{index}].properties' must be an object")
                wattages = props.get("wattage_per_state")
                if pstates is not None:
                    if type(wattages) is str and wattages.strip():
                        pstates[rid] = wattages.count(",") + 1
                    else:
                        pstates = None  # a host without them: pstates are not checked
        self.nb_hosts = nb
        self.forwards_unknown = data["config"].get("forward-unknown-events") is True
        self.pstates = pstates
        self.min_pstates = min(pstates, default=0) if pstates else 0

    def _event(self, kind: str, data: dict) -> None:
        if kind == "SIMULATION_BEGINS":
            self._begins(data)
        elif kind == "SIMULATION_ENDS":
            self.ended = True
        elif kind == "JOB_SUBMITTED":
            jid = data.get("job_id")
            if not isinstance(jid, str) or not jid:
                raise ValueError(f"field 'job_id' must be a job id string, got {_show(jid)}")
            if jid in self.jobs:
                if jid not in self.registered:
                    raise ValueError(f"job {jid!r} was already submitted")
                self.registered.discard(jid)  # Batsim acknowledges a registration once (dynamic-jobs-acknowledged)
            job = data.get("job")
            if not isinstance(job, dict):
                raise ValueError(f"job {jid!r}: field 'job' must be an object")
            if job.get("id") != jid:  # the scheduler would run one job under the other's id
                raise ValueError(f"job {jid!r}: field 'job.id' {_show(job.get('id'))} is not the event's 'job_id' "
                                 "(Batsim writes the same id in both)")
            for key in ("profile", "subtime") if self.pybatsim else ("profile",):  # Batsim writes them (B6)
                if key not in job:
                    raise ValueError(f"job {jid!r}: field 'job.{key}' is missing")
            res = job.get("res")
            if isinstance(res, bool) or not isinstance(res, int) or res < 1:
                raise ValueError(f"job {jid!r}: field 'job.res' must be a host count ≥ 1, got {_show(res)}")
            for key in ("subtime", "walltime"):
                value = job.get(key, 0)
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"job {jid!r}: field 'job.{key}' must be a number, got {_show(value)}")
            beta = job.get("beta")
            if beta is not None and (isinstance(beta, bool) or not isinstance(beta, (int, float))):
                raise ValueError(f"job {jid!r}: field 'job.beta' must be a number, got {_show(beta)}")
            self.jobs.add(jid)
        elif kind == "JOB_COMPLETED":
            jid = self._job(data)
            if jid in self.done:
                raise ValueError(f"job {jid!r} already completed")
            self._started(jid, "job_id")
            if data.get("job_state") not in _JOB_STATES:
                raise ValueError(f"field 'job_state': unknown state {_show(data.get('job_state'))}")
            code = data.get("return_code")
            if self.pybatsim and (isinstance(code, bool) or not isinstance(code, int)):  # Batsim writes it (B13)
                raise ValueError(f"field 'return_code' must be an integer, got {_show(code)}")
            if "alloc" in data:
                self._hosts(data["alloc"], "alloc")
            self.done.add(jid)
        elif kind == "JOB_KILLED":
            ids = data.get("job_ids")
            if not isinstance(ids, list):
                raise ValueError("field 'job_ids' must be a list of job ids")
            for jid in ids:
                self._started(self._job({"job_id": jid}), "job_ids")
            if not isinstance(data.get("job_progress"), dict):  # Batsim writes it (B15); pybatsim reads it
                raise ValueError("field 'job_progress' must be an object")
            if self.started is not None:
                kill = next((k for k, asked in enumerate(self.kills) if asked.issuperset(ids)), None)
                if kill is None:
                    raise ValueError(f"no KILL_JOB of the scheduler naming {_show(ids)} waits for it (Batsim sends a "
                                     "JOB_KILLED only for a KILL_JOB, with ids of that kill)")
                del self.kills[kill]
        elif kind == "RESOURCE_STATE_CHANGED":
            intervals = self._hosts(data.get("resources"), "resources")
            state = data.get("state")
            if type(state) is not str or not (state.isdigit() and state.isascii()):
                raise ValueError(f"field 'state' must be a pstate number in a string (e.g. \"0\"), got {_show(state)}")
            if self.started is not None:
                if self.switches == 0:
                    raise ValueError("no SET_RESOURCE_STATE of the scheduler waits for it (Batsim sends one per "
                                     "SET_RESOURCE_STATE)")
                self.switches -= 1
            pstates = self.pstates
            if pstates is not None and int(state) >= self.min_pstates:
                pstate = int(state)
                for lo, hi in intervals:
                    for host in range(lo, hi + 1):
                        if pstate >= pstates[host]:
                            raise ValueError(f"field 'state': host {host} has no pstate {pstate} (pstates "
                                             f"0-{pstates[host] - 1}: its 'wattage_per_state')")
        elif kind == "REQUESTED_CALL":
            if self.started is not None:
                if self.calls == 0:
                    raise ValueError("no CALL_ME_LATER of the scheduler waits for it (Batsim sends one per "
                                     "CALL_ME_LATER)")
                self.calls -= 1
        elif kind == "ANSWER":
            energy = data.get("consumed_energy", 0.0)
            if "consumed_energy" not in data or isinstance(energy, bool) or not isinstance(energy, (int, float)):
                raise ValueError(f"field 'consumed_energy' must be a number, got {_show(energy)}")
            if self.started is not None:
                if self.queries == 0:
                    raise ValueError("no QUERY of the scheduler waits for it (Batsim sends one ANSWER per QUERY)")
                self.queries -= 1
        elif kind == "FROM_JOB_MSG":
            self._job(data)
            if "msg" not in data:
                raise ValueError("field 'msg' is missing")
        elif kind == "NOTIFY":
            notify = data.get("type")
            if not isinstance(notify, str):
                raise ValueError(f"field 'type' must be a string, got {_show(notify)}")
            if notify in _MACHINE_NOTIFY:
                self._hosts(data.get("resources"), "resources")
            elif notify not in _NOTIFY_TYPES and not self.forwards_unknown:
                raise ValueError(f"field 'type': unknown type {_show(notify)} (Batsim sends "
                                 "no_more_static_job_to_submit, no_more_external_event_to_occur and the machine "
                                 "events; others only with 'config.forward-unknown-events')")


def check_endpoint(endpoint: str, option: str) -> str:
    """A ZeroMQ endpoint another process can reach: ``tcp://HOST:PORT`` (PORT 1-65535, or ``*`` to bind any)
    or ``ipc://PATH``. Not ``inproc://NAME``: only sockets of this process reach it, so a server bound there
    (or a run connecting there) would wait its whole ``--timeout`` for a peer that cannot come.

    Raises:
        OptionError: naming ``option`` (``--bind`` or ``--connect``) and what is wrong.
    """
    scheme, sep, rest = endpoint.partition("://")
    if scheme == "inproc" and sep:
        raise OptionError(f"{option} {endpoint}: an inproc:// endpoint is reachable only inside this process, "
                          "never by Batsim or a scheduler process; use tcp://HOST:PORT (e.g. tcp://127.0.0.1:28000) "
                          "or ipc://PATH")
    if not sep or scheme not in ("tcp", "ipc") or not rest:
        raise OptionError(f"{option} {endpoint}: not a ZeroMQ endpoint (expected tcp://HOST:PORT, e.g. "
                          "tcp://127.0.0.1:28000)")
    if scheme == "tcp":
        host, colon, port = rest.rpartition(":")
        if not colon or not host:
            raise OptionError(f"{option} {endpoint}: no port (expected tcp://HOST:PORT, e.g. tcp://127.0.0.1:28000)")
        if port != "*" and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise OptionError(f"{option} {endpoint}: port {port!r} is not a TCP port (1-65535)")
    return endpoint


def ipc_bind_path(endpoint: str, option: str) -> Path | None:
    """The file a ZeroMQ ``ipc://PATH`` endpoint binds (None for another scheme, ``ipc://*`` and an abstract
    ``ipc://@NAME``), refused when binding would destroy or steal what is there: ZeroMQ removes whatever
    file PATH names before it binds, so a regular file or a folder there is refused, and so is a socket
    another process still listens on. A socket nobody listens on (left by a server that died) is replaced.

    Raises:
        OptionError: naming ``option`` and the path.
    """
    scheme, _, rest = endpoint.partition("://")
    if scheme != "ipc" or rest == "*" or rest.startswith("@"):
        return None
    path = Path(rest)
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise OptionError(f"{option} {endpoint}: cannot look at {path} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise OptionError(f"{option} {endpoint}: {path} is a folder, not a socket; give the path of a new file")
    if not stat.S_ISSOCK(mode):
        raise OptionError(f"{option} {endpoint}: {path} exists and is not a socket (binding would replace it); "
                          "give the path of a new file")
    import socket

    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except OSError:
        return path  # nobody listens: a socket left behind, replaced by the bind
    finally:
        probe.close()
    raise OptionError(f"{option} {endpoint}: another process listens on {path}")
