"""Every command's ``--help`` reads like documentation (README: "every command's --help is its documentation").

Fast checks over the whole argparse tree: every option says what it is, every command shows examples and every
example parses, every default a help states is argparse's default, an option the text names exists, and the
options the commands share are spelled (metavar) and described the same way.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from collections import defaultdict

import pytest

from wattsched.cli import build_parser


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """(program name, parser) of the top level and of every (sub)command, each once."""
    found: list[tuple[str, argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser) -> None:
        found.append((parser.prog, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in dict.fromkeys(action.choices.values()):
                    walk(sub)

    walk(build_parser())
    return found


PARSERS = _parsers()
#: The commands a user runs (no subcommand below them).
LEAVES = [(prog, parser) for prog, parser in PARSERS
          if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)]


def _documented(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
            and not isinstance(a, argparse._SubParsersAction)]


def test_the_tree_is_the_one_expected():
    progs = {prog for prog, _ in LEAVES}
    assert {"wattsched run", "wattsched sweep", "wattsched reproduce esc", "wattsched web"} <= progs
    assert len(LEAVES) == 23


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[prog for prog, _ in PARSERS])
def test_every_argument_has_a_help_string(prog, parser):
    missing = [a.option_strings or a.dest for a in _documented(parser) if not (a.help or "").strip()]
    assert not missing, f"{prog}: no help for {missing}"
    assert (parser.description or "").strip() or prog == "wattsched", f"{prog}: no description"


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[prog for prog, _ in PARSERS])
def test_every_command_shows_examples(prog, parser):
    assert "examples:\n  wattsched " in (parser.epilog or ""), f"{prog}: no 'examples:' epilog"


def _examples(epilog: str) -> list[str]:
    """The command lines of an epilog: each 'wattsched ...' of a line (chains split at &&), without its trailing
    comment in parentheses or a redirection; one whose quotes are still open (a JSON object going on) is joined
    with the next lines until they close."""
    lines = []
    pending = ""
    for line in epilog.splitlines():
        if pending:
            line, pending = pending + " " + line.strip(), ""
        for part in line.split("&&"):
            part = part.strip()
            if part.startswith("wattsched "):
                part = re.sub(r"\s{2,}\(.*$", "", part)  # "   (a comment)"
                try:
                    shlex.split(part)
                except ValueError:  # an open quote: the command goes on on the next line
                    pending = part
                    continue
                lines.append(part.split(" > ")[0])
    assert not pending, f"an example never closes its quotes: {pending!r}"
    return lines


EXAMPLES = sorted({(prog, line) for prog, parser in PARSERS for line in _examples(parser.epilog or "")})


@pytest.mark.parametrize("prog,line", EXAMPLES, ids=[line[:70] for _, line in EXAMPLES])
def test_every_example_parses(prog, line, capsys):
    """An example names commands and options that exist, with values of the right form."""
    argv = [os.path.expanduser(word) for word in shlex.split(line)[1:]]  # as the shell expands ~
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{prog}: example {line!r} does not parse: {capsys.readouterr().err.strip()} ({exc.code})")


#: Words that follow "default" in a help without being a value ("default: the number of CPUs").
_NOT_A_VALUE = {"the", "a", "all", "both", "none", "every", "next", "standard", "its", "their", "when", "as"}


def _stated_defaults(text: str) -> list[str]:
    """Values a help text gives as the default: "(default 10)", "(default: out/out; ...)", "...; default 13"."""
    return [m.group(1).rstrip(".:") for m in re.finditer(r"\bdefault:?\s+([^\s;,)]+)", text)]


def _same(stated: str, default: object) -> bool:
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        try:
            return float(stated) == float(default)
        except ValueError:
            return False
    return stated.removeprefix("./") == str(default).removeprefix("./")


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[prog for prog, _ in PARSERS])
def test_a_default_stated_in_a_help_is_the_real_default(prog, parser):
    """Only where a help states a value and argparse holds one (a default computed at run time, None here, is
    described in words)."""
    wrong = []
    for action in _documented(parser):
        if action.default is None or isinstance(action.default, bool) or action.default == []:
            continue
        for stated in _stated_defaults(" ".join((action.help or "").split())):
            if stated.lower() in _NOT_A_VALUE or stated.startswith("-"):
                continue
            if not _same(stated, action.default):
                wrong.append(f"{'/'.join(action.option_strings) or action.dest}: help says {stated!r}, "
                             f"default is {action.default!r}")
    assert not wrong, f"{prog}: " + "; ".join(wrong)


def test_the_default_parser_reads_defaults_as_expected():
    """The parsing of stated defaults itself (a regex that matched nothing would pass every help)."""
    assert _stated_defaults("threshold in seconds, > 0 (default 10)") == ["10"]
    assert _stated_defaults("prefix (default: out/out; not a folder)") == ["out/out"]
    assert _stated_defaults("or 50; default 13") == ["13"]
    assert _stated_defaults("runtime (default, a perfect estimate)") == []
    assert _stated_defaults("(default 127.0.0.1: this machine only)") == ["127.0.0.1"]
    assert _same("100e6", 100e6) and _same("./wattsched-web", "wattsched-web") and not _same("600", 60.0)


def _own_options(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[prog for prog, _ in PARSERS])
def test_an_option_a_help_names_is_an_option_of_that_command(prog, parser):
    """The description and the option helps name only the command's own options (another command's are quoted:
    'wattsched platform --node eamc')."""
    texts = [parser.description or ""] + [a.help or "" for a in _documented(parser)]
    named = set()
    for text in texts:
        unquoted = re.sub(r"(?<!\w)'[^']*'(?!\w)", "", text)  # not the apostrophe of "paper's"
        named |= set(re.findall(r"(?<![\w$-])--[a-z][a-z0-9-]*", unquoted))
    stale = sorted(named - _own_options(parser) - {"--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"})
    assert not stale, f"{prog}: help names {stale}, which {prog} does not take"


def test_shared_options_have_one_metavar_and_one_meaning():
    """-j, --output, --window, --timeout, --seed, --out, --tau... are spelled the same everywhere."""
    metavars: dict[str, set[str]] = defaultdict(set)
    helps: dict[str, set[str]] = defaultdict(set)
    for prog, parser in LEAVES:
        for action in _documented(parser):
            if action.option_strings and action.nargs != 0:
                metavars[action.option_strings[-1]].add(str(action.metavar))
            if action.option_strings:
                helps[action.option_strings[-1]].add(action.help)
    for flag in ("--workers", "--output", "--window", "--timeout", "--seed", "--out", "--tau", "--export",
                 "--options", "--report-dir", "--pwa", "--mirror", "--speed", "--rel-tol", "--limit", "--hosts",
                 "--machines", "--scale", "--output-dir"):
        assert len(metavars[flag]) == 1, f"{flag}: metavars {metavars[flag]}"
    for flag in ("--force", "--options", "--report-dir"):
        assert len(helps[flag]) == 1, f"{flag}: described {len(helps[flag])} ways: {helps[flag]}"
    assert all(text.startswith("no progress") for text in helps["--quiet"])
    assert all(text.startswith("folder to write ") for text in helps["--output-dir"])
    # the archive's folder is looked for in one order, said one way (it was "../shared/data/pwa beside ...")
    assert all("$WATTSCHED_PWA, else shared/data/pwa beside the repository" in text
               for text in helps["--pwa"] | helps["--mirror"])
    assert all(text.startswith("file to write ") and "(default: standard output" in text
               for text in helps["--output"])


def test_the_help_is_wrapped_and_the_examples_kept(capsys, monkeypatch):
    """A description is wrapped to the terminal (RawDescriptionHelpFormatter printed it on one line of hundreds of
    characters); the examples keep their lines."""
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["traces", "--help"])
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "\nexamples:\n  wattsched traces\n  wattsched traces --sha256\n" in out
