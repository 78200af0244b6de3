"""Fuzzing the contract of issue 18 with hypothesis: mutated platforms, workloads, options and protocol
messages (types, ranges, nesting, duplicates, missing fields, huge and non-finite numbers, odd characters).

Every input either runs and its outputs parse, or is refused with exit status 2 and exactly one line
``wattsched: error: ...``; never a traceback (any other exception fails the test), a hang (each example has
a deadline) or a file left in the output folder.

In ``make test`` each test draws ``WATTSCHED_FUZZ_EXAMPLES`` examples (default 15, a few seconds each test);
``make fuzz`` draws many more, for as long as ``FUZZ_SECONDS`` says.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "taurus_16.xml"

EXAMPLES = int(os.environ.get("WATTSCHED_FUZZ_EXAMPLES", "15"))
FUZZ = settings(max_examples=EXAMPLES, deadline=20_000, derandomize="WATTSCHED_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

# ------------------------------------------------------------------------------------ values
#: Numbers as JSON text: huge, tiny, negative, non-finite (JSON has no NaN: Python writes it), long.
NUMBER_TEXTS = st.sampled_from([
    "0", "-1", "1", "0.5", "1e-300", "1e308", "1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1" + "0" * 400,
    "1" + "0" * 5000, "-0", "3.5e9", "123456789012345678901234567890", "1e-7",
])
ODD_STRINGS = st.sampled_from(["", " ", "a,b", 'a"b', "a\nb", "é", "\u0000", "w0!1", "!", "x" * 1000, "-1", "NaN"])
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), ODD_STRINGS,
                   st.floats(allow_nan=False, allow_infinity=False), st.builds(lambda t: _Raw(t), NUMBER_TEXTS))


class _Raw:
    """A number written as its text (``NaN``, ``1e400``, 5,000 digits): what a careless generator emits."""

    def __init__(self, text: str) -> None:
        self.text = text


def values(depth: int = 3) -> st.SearchStrategy:
    return st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(ODD_STRINGS, inner, max_size=3)),
                        max_leaves=6)


def dumps(value) -> str:
    """JSON text, with :class:`_Raw` numbers written as they are."""
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


def valid_workload() -> dict:
    return {
        "nb_res": 16,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 2, "profile": "c", "walltime": 500, "user": 1},
            {"id": "b", "subtime": 10.5, "res": 16, "profile": "d", "walltime": -1},
            {"id": 3, "subtime": 20, "res": 1, "profile": "m"},
            {"id": 4, "subtime": 30, "res": 3, "profile": "par", "walltime": 100},
        ],
        "profiles": {
            "c": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
            "d": {"type": "delay", "delay": 50},
            "m": {"type": "composed", "seq": ["c", "d"], "repeat": 2},
            "par": {"type": "parallel", "cpu": [1e9, 2e9, 3e9], "com": [0] * 9},
        },
    }


@st.composite
def mutated_workloads(draw) -> str:
    """A valid workload with one to three mutations: a field set to any value, removed, a job duplicated,
    a profile or job added with any content, or a value nested deeply."""
    doc = valid_workload()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["set-job", "set-profile", "delete", "duplicate", "deep", "top"]))
        jobs = [j for j in doc["jobs"] if isinstance(j, dict)] if isinstance(doc["jobs"], list) else []
        profiles = doc["profiles"] if isinstance(doc["profiles"], dict) else {}
        if kind == "set-job" and jobs:
            job = draw(st.sampled_from(jobs))
            job[draw(st.sampled_from(["id", "subtime", "res", "profile", "walltime", "user", "extra"]))] = draw(values())
        elif kind == "set-profile" and profiles and all(isinstance(p, dict) for p in profiles.values()):
            profile = profiles[draw(st.sampled_from(sorted(profiles)))]
            profile[draw(st.sampled_from(["type", "cpu", "com", "delay", "seq", "repeat", "ret"]))] = draw(values())
        elif kind == "delete" and jobs:
            job = draw(st.sampled_from(jobs))
            if job:
                job.pop(draw(st.sampled_from(sorted(job))))
        elif kind == "duplicate" and jobs:
            doc["jobs"].append(dict(draw(st.sampled_from(jobs))))
        elif kind == "deep" and jobs:
            jobs[0]["extra"] = _nested(draw(st.integers(50, 3000)))
        elif kind == "top":
            doc[draw(st.sampled_from(["jobs", "profiles", "nb_res"]))] = draw(values())
    return dumps(doc)


def _nested(depth: int) -> _Raw:
    return _Raw("[" * depth + "]" * depth)


# ----------------------------------------------------------------------------------- contract
def assert_contract(code: int, err: str, out_dir: Path) -> bool:
    """Exit 0, or exit 2 with exactly one ``wattsched: error:`` line and nothing in ``out_dir``. True if it ran."""
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("WARNING", "INFO"))]
    assert "Traceback" not in err, err
    if code == 0:
        return True
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("wattsched"), err
    assert not out_dir.exists() or list(out_dir.iterdir()) == [], list(out_dir.iterdir())
    return False


def call(capsys, *args: str) -> tuple[int, str]:
    from wattsched.cli import main

    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def outputs_parse(prefix: Path) -> None:
    from wattsched.analysis.metrics import compute_metrics

    metrics = compute_metrics(prefix)
    assert metrics["nb_jobs"] >= 0


# ---------------------------------------------------------------------------------------- tests
@FUZZ
@given(text=mutated_workloads())
def test_fuzz_workloads(tmp_path_factory, capsys, text):
    folder = tmp_path_factory.mktemp("w")
    (folder / "w.json").write_text(text)
    out = folder / "out"
    code, err = call(capsys, "run", str(PLATFORM), str(folder / "w.json"), "-e", str(out / "r"), "-q")
    if assert_contract(code, err, out):
        outputs_parse(out / "r")


PLATFORM_TEMPLATE = """<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="{version}">
  <zone id="AS0" routing="Full">
    <cluster id="c" prefix="{prefix}" suffix="" radical="{radical}" speed="{speed}" bw="1GBps" lat="0" core="{core}">
      <prop id="wattage_per_state" value="{wattage}"/>
      <prop id="sleep_pstates" value="{sleep}"/>
    </cluster>
    <host id="master_host" speed="{master_speed}"><prop id="role" value="{role}"/></host>
  </zone>
</platform>
"""
ATTRIBUTE = st.one_of(st.sampled_from(["", "nan", "inf", "-1", "0", "1e400", "1" + "0" * 5000, "a,b", '"', "<", "&",
                                       "0-", "3-1", "0-99999999999", "1Gf", "1e9f", "100Mf, 50Mf", "95:190",
                                       "95:190, 9:9, 100:100, 125:125", "1:2:3", "4.1", "3", "master", "é"]),
                      st.text(max_size=12))


@FUZZ
@given(fields=st.fixed_dictionaries({
    "version": st.sampled_from(["4.1", "4.1", "3", "x"]), "prefix": st.sampled_from(["h", "taurus-", ""]),
    "radical": st.one_of(st.sampled_from(["0-15", "0-3", "0-15"]), ATTRIBUTE),
    "speed": st.one_of(st.sampled_from(["100Mf", "100Mf, 50Mf, 1f, 1f, 1f"]), ATTRIBUTE),
    "core": st.sampled_from(["1", "1", "2", "x"]),
    "wattage": st.one_of(st.sampled_from(["95:190", "95:190, 80:150, 9:9, 100:100, 125:125"]), ATTRIBUTE),
    "sleep": st.one_of(st.sampled_from(["2:3:4", ""]), ATTRIBUTE),
    "master_speed": st.one_of(st.just("100Mf"), ATTRIBUTE), "role": st.sampled_from(["master", "", "storage", "x"]),
}))
def test_fuzz_platforms(tmp_path_factory, capsys, fields):
    from xml.sax.saxutils import quoteattr

    folder = tmp_path_factory.mktemp("p")
    text = PLATFORM_TEMPLATE.format(**{k: quoteattr(v)[1:-1] for k, v in fields.items()})
    (folder / "p.xml").write_text(text)
    workload = folder / "w.json"
    workload.write_text(json.dumps(valid_workload()))
    out = folder / "out"
    code, err = call(capsys, "run", str(folder / "p.xml"), str(workload), "-e", str(out / "r"), "-q")
    if assert_contract(code, err, out):
        outputs_parse(out / "r")


OPTION_NAMES = ["placement", "shutdown", "budget_j", "budget_fraction", "window_start_s", "window_end_s",
                "monitoring_period_s", "estimated_idle_w", "estimated_comp_w", "sleep_pstate", "order", "admission",
                "power", "frequency", "backfill", "period_s", "idle_s", "min_on", "groups", "half_life_s", "shares",
                "unknown"]
OPTION_VALUES = st.one_of(values(), st.sampled_from(["best-fit", "energy-bud", "shutdown", "esc", "efs", True]),
                          st.floats(-1e12, 1e12), st.integers(-5, 20))


@FUZZ
@given(scheduler=st.sampled_from(["easy-backfill", "energy-bud", "reduce-pc", "powercap", "esc", "efs", "compose"]),
       options=st.dictionaries(st.sampled_from(OPTION_NAMES), OPTION_VALUES, max_size=4),
       raw=st.one_of(st.none(), st.sampled_from(["{", "[]", "1", '{"a": NaN}', "[" * 3000, '{"budget_j": 1e999}'])))
def test_fuzz_options(tmp_path_factory, capsys, scheduler, options, raw):
    folder = tmp_path_factory.mktemp("o")
    workload = folder / "w.json"
    workload.write_text(json.dumps(valid_workload()))
    out = folder / "out"
    text = raw if raw is not None else dumps(options)
    code, err = call(capsys, "run", str(PLATFORM), str(workload), "-e", str(out / "r"), "-q", "-s", scheduler,
                     "-o", text)
    if assert_contract(code, err, out):
        outputs_parse(out / "r")


# ------------------------------------------------------------------------------- protocol
EVENT_TYPES = ["EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "SET_RESOURCE_STATE", "QUERY", "NOTIFY",
               "SET_JOB_METADATA", "REGISTER_JOB", "REGISTER_PROFILE", "CHANGE_JOB_STATE", "DANCE"]
DATA_VALUES = st.one_of(values(), st.sampled_from(["w0!1", "w0!b", "w0!3", "w0!nope", "0", "0-15", "0-99", "3 5",
                                                   "13", "1", "-1", "registration_finished", "a\"b"]),
                        st.floats(allow_nan=True, allow_infinity=True))


@st.composite
def replies(draw) -> list[dict]:
    """A scheduler's replies: each a list of events of any type with any data (and sometimes a bad 'now')."""
    script = []
    for _ in range(draw(st.integers(1, 6))):
        events = []
        for _ in range(draw(st.integers(0, 3))):
            data = draw(st.dictionaries(st.sampled_from(["job_id", "alloc", "job_ids", "timestamp", "resources",
                                                         "state", "requests", "type", "metadata", "job", "profile",
                                                         "profile_name", "job_state"]), DATA_VALUES, max_size=3))
            events.append({"type": draw(st.sampled_from(EVENT_TYPES)), "data": data,
                           "timestamp": draw(st.one_of(st.just(None), DATA_VALUES))})
        script.append({"now": draw(st.one_of(st.just(None), DATA_VALUES)), "events": events})
    return script


@pytest.fixture(scope="module")
def small_workload(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replies") / "w.json"
    path.write_text(json.dumps(valid_workload()))
    return path


@FUZZ
@given(script=replies())
def test_fuzz_scheduler_replies(small_workload, script):
    """The embedded simulator against a scheduler sending anything: a :class:`ProtocolError` (one line, the
    message and event named) or a finished run; never another exception, never a hang."""
    from wattsched.base.errors import ProtocolError
    from wattsched.simulator.drivers import run_inprocess
    from wattsched.simulator.engine import Simulation
    from wattsched.simulator.platform import load_platform
    from wattsched.simulator.workload import load_workload

    sim = Simulation(load_platform(PLATFORM), load_workload(small_workload))
    replies_left = list(script)

    def handler(msg: dict) -> dict:
        if not replies_left:
            return {"now": msg["now"], "events": []}
        reply = replies_left.pop(0)
        now = msg["now"] if reply["now"] is None else reply["now"]
        events = [{**ev, "timestamp": now if ev["timestamp"] is None else ev["timestamp"]} for ev in reply["events"]]
        return {"now": now, "events": events}

    try:
        run_inprocess(sim, handler, max_messages=2000)
    except ProtocolError as exc:
        assert "\n" not in str(exc)
        return
    assert sim.nb_messages < 2000  # four jobs take a few dozen messages: more is a run that never ends


@FUZZ
@given(messages=st.lists(st.fixed_dictionaries({
    "now": DATA_VALUES,
    "events": st.lists(st.fixed_dictionaries({
        "timestamp": DATA_VALUES,
        "type": st.sampled_from(["SIMULATION_BEGINS", "JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED",
                                 "RESOURCE_STATE_CHANGED", "REQUESTED_CALL", "ANSWER", "NOTIFY", "DANCE"]),
        "data": st.dictionaries(st.sampled_from(["job_id", "job", "job_ids", "resources", "state", "job_state",
                                                 "alloc", "consumed_energy", "type", "nb_resources",
                                                 "nb_compute_resources"]), DATA_VALUES, max_size=4)}), max_size=3)}),
    min_size=1, max_size=4))
def test_fuzz_batsim_messages(messages):
    """What ``wattsched serve`` checks before pybatsim sees a message: anything is accepted or refused with
    one :class:`ProtocolError` line, never another exception."""
    from wattsched.base.errors import ProtocolError
    from wattsched.base.validate import BatsimMessageChecker

    checker = BatsimMessageChecker()
    for msg in messages:
        try:
            checker.check(msg)
        except ProtocolError as exc:
            assert "\n" not in str(exc) and "Batsim message" in str(exc)
            break


def test_fuzz_examples_setting_is_read():
    assert FUZZ.max_examples == EXAMPLES >= 1 and not math.isnan(EXAMPLES)
