"""The validation layer (``wattsched/base/validate.py``) and its bounds (``wattsched/base/limits.py``)."""

from __future__ import annotations

import json

import pytest

from wattsched.base.errors import InputError, OptionError, OutputError, ProtocolError
from wattsched.base.limits import DEFAULTS, limit, limit_hint
from wattsched.base.validate import (
    BatsimMessageChecker,
    check_count,
    check_csv_name,
    check_endpoint,
    check_number,
    check_output_files,
    check_yaml_graph,
    load_json,
    load_yaml,
)


@pytest.mark.parametrize(("text", "field", "problem"), [
    ('{"jobs": [{"a": 1}, {"subtime": 1e400}]}', "jobs[1].subtime", "beyond the range of a double"),
    ('{"x": {"y": [1, 2, NaN]}}', "x.y[2]", "NaN is not a number JSON allows"),
    ('{"x": -Infinity}', "x", "-Infinity"),
    ('{"x": -1' + "0" * 320 + "}", "x", "321 digits"),
    ("[" * 65 + "]" * 65, "[0]" * 64, "nested too deeply"),
    ('{"a": [1, 2', "line 1, column 12", "malformed JSON"),
])
def test_load_json_names_the_path(text, field, problem):
    with pytest.raises(InputError) as info:
        load_json(text, "f.json")
    assert info.value.field == field and problem in info.value.problem, str(info.value)


def test_load_json_accepts_what_is_fine_and_keeps_types():
    doc = load_json('{"a": [1, 2.5, "x,y", null, true, 1e308, -1' + "0" * 300 + "]}", "f.json")
    assert doc["a"][:5] == [1, 2.5, "x,y", None, True] and isinstance(doc["a"][0], int)
    assert load_json("[" * 64 + "]" * 64, "f.json") is not None


def test_nesting_bound_from_the_environment(monkeypatch):
    monkeypatch.setenv("WATTSCHED_LIMIT_NESTING", "3")
    with pytest.raises(InputError, match="WATTSCHED_LIMIT_NESTING"):
        load_json("[[[[1]]]]", "f.json")
    monkeypatch.setenv("WATTSCHED_LIMIT_NESTING", "5")
    assert load_json("[[[[1]]]]", "f.json") == [[[[1]]]]


@pytest.mark.parametrize("text", ["0", "-3", "nan", "inf", "x", ""])
def test_bad_bound_values_are_refused_by_variable(monkeypatch, text):
    monkeypatch.setenv("WATTSCHED_LIMIT_HOSTS", text)
    if text == "":
        assert limit("hosts") == DEFAULTS["hosts"]
        return
    with pytest.raises(OptionError, match="WATTSCHED_LIMIT_HOSTS"):
        limit("hosts")


def test_limit_hint_names_the_variable():
    assert limit_hint("profile_parts", "parts") == "at most 1,000,000 parts (raise with WATTSCHED_LIMIT_PROFILE_PARTS)"


@pytest.mark.parametrize(("value", "kwargs", "problem"), [
    (float("nan"), {}, "NaN"), (float("inf"), {}, "not finite"), (10**400, {}, "not finite"),
    (-1, {"min": 0.0}, "non-negative"), (0, {"min": 0.0, "min_open": True}, "> 0"), (5, {"max": 4}, "≤ 4"),
    ("3", {}, "not a number"), (True, {}, "not a number"), (1.5, {"integer": True}, "not an integer"),
])
def test_check_number(value, kwargs, problem):
    with pytest.raises(InputError) as info:
        check_number(value, "f", "x.y", **kwargs)
    assert info.value.field == "x.y" and problem in info.value.problem


def test_check_number_returns_the_value():
    assert check_number(3, "f", "x", min=0.0) == 3.0 and check_number(3, "f", "x", integer=True) == 3


def test_check_count():
    check_count(64, "nesting", "f", "x", "levels")
    with pytest.raises(InputError, match=r"65 levels; at most 64"):
        check_count(65, "nesting", "f", "x", "levels")


@pytest.mark.parametrize("name", ["a,b", 'a"b', "a\nb", "a\rb"])
def test_csv_names(name):
    with pytest.raises(InputError, match="unquoted"):
        check_csv_name(name, "f", "jobs[0].id")
    assert check_csv_name("é; 'x' y!z", "f", "id") == "é; 'x' y!z"


def test_output_files(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir.csv").mkdir()
    check_output_files([tmp_path / "new" / "deeper" / "a.csv"], "-e x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.csv", "file"]  # nothing created by the check
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output_files([tmp_path / "file" / "a.csv"], "-e x")
    with pytest.raises(OutputError, match="is a folder"):
        check_output_files([tmp_path / "dir.csv"], "-e x")
    with pytest.raises(OutputError, match="cannot write"):
        check_output_files(["/proc/wattsched/a.csv"], "-e x")


@pytest.mark.parametrize(("endpoint", "ok"), [
    ("tcp://127.0.0.1:28000", True), ("tcp://*:28000", True), ("ipc:///tmp/x", True), ("tcp://h:0", False),
    ("tcp://h:65536", False), ("tcp://h", False), ("tcp://:5", False), ("udp://h:5", False), ("h:5", False),
])
def test_endpoints(endpoint, ok):
    if ok:
        assert check_endpoint(endpoint, "--bind") == endpoint
    else:
        with pytest.raises(OptionError, match="--bind"):
            check_endpoint(endpoint, "--bind")


def begins(nb: int = 2) -> dict:
    return {"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": nb, "nb_compute_resources": nb, "nb_storage_resources": 0, "compute_resources": [],
        "storage_resources": [], "config": {"profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
                                            "dynamic-jobs-acknowledged": False, "forward-unknown-events": False},
        "allow_compute_sharing": False, "allow_storage_sharing": False, "profiles": {}, "workloads": {}}}


def submitted(jid: str) -> dict:
    return {"timestamp": 1, "type": "JOB_SUBMITTED",
            "data": {"job_id": jid, "job": {"id": jid, "res": 1, "subtime": 1, "walltime": -1, "profile": "p"}}}


def test_message_checker_follows_jobs_and_hosts():
    checker = BatsimMessageChecker()
    checker.check({"now": 0, "events": [begins()]})
    checker.check({"now": 1, "events": [submitted("w0!1")]})
    checker.check({"now": 2, "events": [{"timestamp": 2, "type": "JOB_COMPLETED",
                                         "data": {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY",
                                                  "alloc": "0-1"}}]})
    bad = [
        ({"now": 3, "events": [submitted("w0!1")]}, "already submitted"),
        ({"now": 3, "events": [{"timestamp": 3, "type": "JOB_KILLED", "data": {"job_ids": ["w0!9"]}}]},
         "unknown job 'w0!9'"),
        ({"now": 3, "events": [{"timestamp": 3, "type": "RESOURCE_STATE_CHANGED",
                                "data": {"resources": "0-2", "state": "1"}}]}, "unknown host 2"),
        ({"now": -1, "events": []}, "'now'"),
        ({"now": 3, "events": [{"type": "HELLO"}]}, "unknown event type 'HELLO'"),
        ({"now": 3}, "'now' and 'events'"),
    ]
    for msg, needle in bad:
        with pytest.raises(ProtocolError) as info:
            checker.check(json.loads(json.dumps(msg)))
        assert needle in str(info.value) and "Batsim message" in str(info.value)


def test_message_checker_needs_what_schedulers_read():
    event = begins()
    del event["data"]["config"]["dynamic-jobs-enabled"]
    with pytest.raises(ProtocolError, match="config.dynamic-jobs-enabled"):
        BatsimMessageChecker().check({"now": 0, "events": [event]})


# ---------------------------------------------------------------------------------------------- YAML
def laughs(levels: int, width: int = 9) -> str:
    """The "billion laughs": ``width`` ** ``levels`` strings written in ``levels`` + 1 lines."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def expanded_nodes(value) -> int:
    """Nodes of a loaded YAML document, every alias walked again (as json.dumps would)."""
    if isinstance(value, dict):
        return 1 + sum(1 + expanded_nodes(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(expanded_nodes(v) for v in value)
    return 1


def test_yaml_aliases_are_counted_expanded_without_expanding_them():
    import yaml

    for levels in range(4):  # small enough to walk: the count is the walk's
        text = laughs(levels, width=3)
        assert check_yaml_graph(yaml.compose(text), "g.yaml") == expanded_nodes(yaml.safe_load(text))
    with pytest.raises(InputError) as info:  # 9**9 strings: refused at once, nothing expanded
        load_yaml(laughs(9), "g.yaml")
    assert info.value.source == "g.yaml" and info.value.field.startswith("line ")
    assert "more than 100000 nodes" in info.value.problem and "WATTSCHED_LIMIT_YAML_NODES" in info.value.problem
    # below the bound the document loads as PyYAML loads it, aliases as shared objects
    doc = load_yaml(laughs(4), "g.yaml")
    assert doc == yaml.safe_load(laughs(4)) and doc["l4"][0] is doc["l3"]


def test_yaml_bounds_follow_the_environment(monkeypatch):
    import yaml

    text = laughs(2, width=4)  # the mapping, 3 keys, then 1 + 4, 1 + 4 * 5, 1 + 4 * 21: 115 nodes
    nodes = expanded_nodes(yaml.safe_load(text))
    assert nodes == 115
    monkeypatch.setenv("WATTSCHED_LIMIT_YAML_NODES", str(nodes - 1))
    with pytest.raises(InputError, match=f"more than {nodes - 1} nodes"):
        load_yaml(text, "g.yaml")
    monkeypatch.setenv("WATTSCHED_LIMIT_YAML_NODES", str(nodes))
    assert load_yaml(text, "g.yaml")["l2"][3][3][3] == "lol"
    # nesting counts collections through aliases too: l2 is 3 levels below the top mapping
    monkeypatch.setenv("WATTSCHED_LIMIT_NESTING", "3")
    with pytest.raises(InputError, match="nested too deeply"):
        load_yaml(text, "g.yaml")
    monkeypatch.setenv("WATTSCHED_LIMIT_NESTING", "4")
    assert load_yaml(text, "g.yaml") is not None


@pytest.mark.parametrize(("text", "field", "problem"), [
    ("a: &a [1, *a]\n", "line 1", "an alias inside its own anchor"),
    ("a: &a {b: {c: *a}}\n", "line 1", "an alias inside its own anchor"),
    ("[" * 65 + "]" * 65, "line 1", "nested too deeply"),
    ("a: [1, .nan]\n", "a[1]", "NaN is not a number"),
    ("a: -.inf\n", "a", "beyond the range of a double"),
    ("a: *nowhere\n", "line 1", "not valid YAML"),
    ("a: [1\nb: 2\n", "line 2", "not valid YAML"),
    ("--- 1\n--- 2\n", "line 2", "not valid YAML"),
    ("a: !!python/object:os.system x\n", "line 1", "not valid YAML"),
])
def test_load_yaml_names_the_line_or_path(text, field, problem):
    with pytest.raises(InputError) as info:
        load_yaml(text, "g.yaml")
    assert info.value.field == field and problem in info.value.problem, str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("text", "value"), [
    ("1e3", 1000.0), ("-2E-5", -2e-05), ("+1e3", 1000.0), (".5e3", 500.0), ("5.e3", 5000.0), ("1.0e+3", 1000.0),
    ("10", 10), ("1.5", 1.5), ('"1e3"', "1e3"), ("'1e3'", "1e3"), ("1e", "1e"), ("e3", "e3"), ("1e3.5", "1e3.5"),
])
def test_load_yaml_reads_exponents_as_yaml_1_2_does(text, value):
    """``tau_s: 1e3`` in a grid was refused as "got '1e3'": PyYAML follows YAML 1.1, where a number with an
    exponent needs a decimal point and a signed exponent. Such numbers are numbers now, as in YAML 1.2 and JSON; a
    quoted one stays a string, and what is no number stays one too."""
    got = load_yaml(f"x: {text}\n", "g.yaml")["x"]
    assert got == value and type(got) is type(value)


def test_load_yaml_accepts_ordinary_anchors():
    text = "base: &base {budget_fraction: 0.6, shutdown: true}\nruns: [*base, {<<: *base, placement: best-fit}]\n"
    doc = load_yaml(text, "g.yaml")
    assert doc["runs"] == [{"budget_fraction": 0.6, "shutdown": True},
                           {"budget_fraction": 0.6, "shutdown": True, "placement": "best-fit"}]
    assert load_yaml("", "g.yaml") is None and load_yaml("# nothing\n", "g.yaml") is None


@pytest.mark.parametrize(("text", "walked"), [
    ('{"now": 13.0, "events": [{"timestamp": 13.0, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1", '
     '"job": {"id": "w0!1", "subtime": 13, "res": 32, "walltime": 1800, "user": 1}}}]}', False),
    ('{"now": 1e300, "events": []}', False),
    ('{"a": 1' + "0" * 299 + "}", True),
    ('{"a": 1e309}', True),
    ('{"a": NaN}', True),
    ("[" * 64 + "]" * 64, True),
])
def test_load_json_walks_only_what_the_parse_could_not_clear(monkeypatch, text, walked):
    """Protocol messages are parsed once, with hooks, and not walked; a number that may not be a finite double, a
    constant or as many brackets as the nesting bound send the text through the parse and the walk of before."""
    import wattsched.base.validate as validate

    calls = []
    walk = validate.check_json_tree
    monkeypatch.setattr(validate, "check_json_tree", lambda *a, **k: (calls.append(1), walk(*a, **k))[1])
    try:
        doc = load_json(text, "m")
    except InputError:
        doc = None
    assert bool(calls) == walked
    if doc is not None:
        assert doc == json.loads(text)


def test_a_count_just_over_its_bound_does_not_read_as_equal_to_it():
    """``2e+06 hosts; at most 2e+06`` was the line for 2,000,001 hosts."""
    from wattsched.base.errors import InputError
    from wattsched.base.validate import check_count

    with pytest.raises(InputError, match=r"2,000,001 hosts; at most 2,000,000 \(raise with WATTSCHED_LIMIT_HOSTS\)"):
        check_count(2_000_001, "hosts", "p.xml", "cluster 'c'.radical", "hosts")
    with pytest.raises(InputError, match=r"1e\+11 hosts; at most 2,000,000"):  # far beyond: short
        check_count(1e11, "hosts", "p.xml", "cluster 'c'.radical", "hosts")
