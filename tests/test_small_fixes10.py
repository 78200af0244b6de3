"""Small known defects, fixed (tenth list).

* The command line's integers (``--hosts``, ``--seed``, ``--jobs``, ``-j``, ``--port``, ``--limit``,
  ``--job-numbers``...) went through Python's ``int()``, which reads ``١٦`` (Arabic-Indic digits), ``+16``,
  ``1_6`` and `` 16 `` as 16; only ASCII digits (after at most a ``-``) are now read.
* ``wattsched replay`` of a recording whose ``messages.jsonl`` is empty (0 bytes, or blank lines only) said the
  simulation differs ("the recording ends but the simulation goes on") instead of refusing the recording.
* ESC: a threshold given both at top level and in ``groups.default`` with two values: ``groups.default``
  silently won.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_inputs_checks import REFERENCE, refused, usage_error
from wattsched.analysis.metrics import main as metrics_main
from wattsched.base.errors import OptionError
from wattsched.base.validate import plain_int
from wattsched.cli import build_parser, main
from wattsched.cli.common import non_negative_int, positive_int, scheduler_options
from wattsched.cli.inputs import job_range
from wattsched.schedulers.esc import EnergySavingCluster
from wattsched.schedulers.presets import build

#: Spellings of 16 that Python's int() reads and a command line must not.
ODD_SIXTEENS = ["١٦", "１６", "+16", "1_6", " 16 ", "16\n", "\t16"]


# ------------------------------------------------------------------------------- 1. command-line integers
@pytest.mark.parametrize("text", ODD_SIXTEENS)
def test_plain_int_reads_ascii_digits_only(text: str) -> None:
    assert int(text) == 16  # what the options used to take
    with pytest.raises(ValueError, match="write it with the ASCII digits 0-9 alone"):
        plain_int(text)


@pytest.mark.parametrize(("text", "value"), [("16", 16), ("007", 7), ("0", 0), ("-3", -3)])
def test_plain_int_reads_plain_integers(text: str, value: int) -> None:
    assert plain_int(text) == value


@pytest.mark.parametrize("text", ["", "-", "x", "1.5", "1e3", "0x10"])
def test_plain_int_refuses_non_numbers_without_the_digits_hint(text: str) -> None:
    with pytest.raises(ValueError, match="^not an integer$"):
        plain_int(text)


@pytest.mark.parametrize("text", ODD_SIXTEENS)
def test_integer_option_types_refuse_odd_spellings(text: str) -> None:
    for parse, expected in ((positive_int, "a positive integer"), (non_negative_int, "an integer ≥ 0")):
        with pytest.raises(Exception, match=f"expected {expected}, got .*digits 0-9 alone") as error:
            parse(text)
        assert type(error.value).__name__ == "ArgumentTypeError"
    with pytest.raises(Exception, match="expected FIRST,LAST job numbers, got '1,.*digits 0-9 alone"):
        job_range(f"1,{text}")


def test_integer_option_types_keep_their_messages_and_values() -> None:
    assert (positive_int("16"), non_negative_int("0"), job_range("-2,5")) == (16, 0, (-2, 5))
    with pytest.raises(Exception, match=r"^expected a positive integer, got 'x'$"):
        positive_int("x")
    with pytest.raises(Exception, match=r"^expected a positive integer, got -3$"):
        positive_int("-3")
    with pytest.raises(Exception, match=r"^expected an integer ≥ 0, got -1$"):
        non_negative_int("-1")


def _commands(tmp_path: Path, value: str) -> list[tuple[list[str], str]]:
    out = str(tmp_path / "out.json")
    return [
        (["synth", "--hosts", value, "--seed", "1", "--output", out], "argument --hosts: expected a positive integer"),
        (["synth", "--hosts", "16", "--seed", value, "--output", out], "argument --seed: expected an integer ≥ 0"),
        (["eamc-workload", "--jobs", value, "--output", out], "argument --jobs: expected a positive integer"),
        (["lightesp", "--copies", value, "--output", out], "argument --copies: expected a positive integer"),
        (["swf", "trace.swf", "--job-numbers", f"1,{value}", "--output", out], "argument --job-numbers"),
        (["reproduce", "esc", "-j", value, "--out", str(tmp_path / "r")], "argument -j/--workers"),
        (["replay", "folder", "--limit", value], "argument --limit: expected an integer ≥ 0"),
        (["web", "--port", value], "argument --port: expected a positive integer"),
    ]


@pytest.mark.parametrize("text", ["١٦", "+16", "1_6", " 16 "])
@pytest.mark.parametrize("which", range(8))
def test_command_line_integers_refuse_odd_spellings(text: str, which: int, tmp_path, capsys) -> None:
    """Parsed only (``reproduce`` or ``web`` would run for long if a value were taken)."""
    argv, needle = _commands(tmp_path, text)[which]
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1, err
    assert needle in err and f"{text}' (write it with the ASCII digits 0-9 alone)" in err, err


def test_an_integer_refused_stops_the_command_before_any_work(tmp_path, capsys) -> None:
    out = tmp_path / "out.json"
    usage_error(capsys, ["synth", "--hosts", "+16", "--seed", "1", "--output", str(out)],
                "wattsched synth: error: argument --hosts: expected a positive integer, got '+16' "
                "(write it with the ASCII digits 0-9 alone)")
    assert not out.exists()
    assert main(["synth", "--hosts", "16", "--seed", "1", "--days", "0.1", "--output", str(out)]) == 0
    assert out.is_file()


def test_metrics_module_nb_hosts_is_read_as_the_command_line_reads_integers(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        metrics_main([str(REFERENCE / "fcfs-compute" / "out"), "--nb-hosts", "+16"])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2
    assert err.endswith("argument --nb-hosts: expected a positive integer, got '+16' "
                        "(write it with the ASCII digits 0-9 alone)"), err
    assert metrics_main([str(REFERENCE / "fcfs-compute" / "out"), "--nb-hosts", "16", "--json"]) == 0
    assert '"nb_hosts": 16' in capsys.readouterr().out


def test_integers_of_json_options_are_unchanged() -> None:
    assert scheduler_options('{"min_on": 16, "max_queued": -0, "idle_s": 1e3}') == \
        {"min_on": 16, "max_queued": 0, "idle_s": 1000.0}
    for text in ('{"min_on": +16}', '{"min_on": 1_6}', '{"min_on": ١٦}'):  # never JSON numbers
        with pytest.raises(OptionError, match="scheduler options are not valid JSON"):
            scheduler_options(text)


# --------------------------------------------------------------------- 2. a recording without messages
@pytest.mark.parametrize("content", [b"", b"\n", b"\n  \r\n\t\n"])
def test_replay_refuses_a_recording_without_messages(content: bytes, tmp_path, capsys) -> None:
    folder = tmp_path / "fcfs-compute"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    (folder / "messages.jsonl").write_bytes(content)
    err = refused(capsys, ["replay", str(folder)], f"{folder / 'messages.jsonl'}: empty (no message recorded)")
    assert "differ" not in err
    assert capsys.readouterr().out == ""  # refused before any replay: no report


def test_replay_refuses_an_empty_recording_before_replaying_the_others(tmp_path, capsys) -> None:
    good, empty = tmp_path / "good", tmp_path / "empty"
    shutil.copytree(REFERENCE / "fcfs-compute", good)
    shutil.copytree(REFERENCE / "fcfs-compute", empty)
    (empty / "messages.jsonl").write_bytes(b"")
    refused(capsys, ["replay", str(good), str(empty)], f"{empty / 'messages.jsonl'}: empty")


def test_replay_of_a_whole_recording_and_of_a_missing_messages_file_are_unchanged(tmp_path, capsys) -> None:
    folder = tmp_path / "fcfs-compute"
    shutil.copytree(REFERENCE / "fcfs-compute", folder)
    assert main(["replay", str(folder)]) == 0
    assert "identical" in capsys.readouterr().out
    (folder / "messages.jsonl").unlink()
    refused(capsys, ["replay", str(folder)], "messages.jsonl: missing from the recording folder")


# -------------------------------------------------------------- 3. ESC: groups.default against top level
@pytest.mark.parametrize(("options", "key"), [
    ({"upper_wait_s": 600, "groups": {"default": {"upper_wait_s": 100}}}, "upper_wait_s"),
    # given explicitly at its default value: still given (told apart where the options are validated)
    ({"upper_wait_s": 3600, "groups": {"default": {"upper_wait_s": 100}}}, "upper_wait_s"),
    ({"lower_wait_s": 5, "groups": {"default": {"lower_wait_s": 7}}}, "lower_wait_s"),
    ({"max_queued": 2, "groups": {"default": {"max_queued": 3}}}, "max_queued"),
    ({"max_queued": None, "groups": {"default": {"max_queued": 3}}}, "max_queued"),  # null: the rule off
    ({"upper_wait_s": 600, "groups": {"default": {"upper_wait_s": None}}}, "upper_wait_s"),
])
@pytest.mark.parametrize("preset", ["esc", "compose"])
def test_esc_threshold_given_twice_with_two_values_is_refused(options: dict, key: str, preset: str) -> None:
    if preset == "compose":
        options = {"power": "esc", **options}
    with pytest.raises(OptionError) as error:
        build(preset, options)
    message = str(error.value)
    assert message.startswith(f"option 'groups.default.{key}' and top-level '{key}' both given: "), message
    assert "\n" not in message


@pytest.mark.parametrize("options", [
    {"groups": {"default": {"upper_wait_s": 100}}},  # the defaults filled in are not given
    {"groups": {"default": {"upper_wait_s": 100, "lower_wait_s": 10, "max_queued": 4}}},
    {"upper_wait_s": 100, "groups": {"default": {"upper_wait_s": 100.0}}},  # the same value twice
    {"upper_wait_s": 600, "groups": {"default": {"lower_wait_s": 10}}},  # two keys, one place each
])
def test_esc_default_group_given_once_per_threshold_is_accepted(options: dict) -> None:
    power = build("esc", options).power
    assert isinstance(power, EnergySavingCluster)
    spec = options["groups"]["default"]
    thresholds = power.groups["default"]
    for key, value in spec.items():
        assert getattr(thresholds, key) == value
    if "upper_wait_s" not in spec:
        assert thresholds.upper_wait_s == options.get("upper_wait_s", 3600.0)


def test_esc_built_directly_refuses_a_threshold_given_twice() -> None:
    with pytest.raises(OptionError, match="option 'groups.default.upper_wait_s' and top-level 'upper_wait_s' both "
                                          "given: 100 and 600"):
        EnergySavingCluster(upper_wait_s=600.0, groups={"default": {"upper_wait_s": 100}})
    assert EnergySavingCluster(groups={"default": {"upper_wait_s": 100}}).groups["default"].upper_wait_s == 100.0


def test_esc_bad_default_group_value_keeps_its_own_message() -> None:
    with pytest.raises(OptionError, match="group 'default': 'upper_wait_s' must be a finite number or null"):
        build("esc", {"upper_wait_s": 600, "groups": {"default": {"upper_wait_s": "x"}}})
