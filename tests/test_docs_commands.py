"""The command lines a user reads in README.md, docs/architecture.md and docker/README.md exist as written.

(tests/test_help_texts.py checks the ``--help`` epilogs; these are the documents' own lines.)

* Every ``wattsched ...`` line of a code block (indented or fenced, ``.venv/bin/wattsched`` and the
  ``make X  # = wattsched ...`` comments included) parses with the CLI's parser.
* Every inline ```wattsched ...``` names a command that exists, and only options of that command; a synopsis
  (``wattsched web [--port 8000]``) parses once its brackets are dropped.
* Every ``make TARGET`` the documents name is a target of the Makefile.
* Every ``from wattsched... import NAME`` they show imports. docker/README.md showed
  ``from wattsched.plots import plot_all``, a module that does not exist (``wattsched plot -d DIR`` does it).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from wattsched.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/architecture.md", "docker/README.md"]


def _code_lines(text: str) -> list[str]:
    """Lines of the code blocks: indented by 4 spaces or more outside a list, or inside ``` fences."""
    lines, fenced, previous_blank = [], False, True
    in_block = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            lines.append(line)
            continue
        if not line.strip():
            previous_blank = True
            continue
        if line.startswith("    ") and (previous_blank or in_block):
            in_block = True
            lines.append(line.strip())
        else:
            in_block = False
        previous_blank = False
    return lines


def _commands(lines: list[str]) -> list[str]:
    """The ``wattsched`` command lines among code lines: continuations (a trailing backslash, an open quote)
    joined, shell comments and environment assignments removed."""
    found, pending = [], ""
    for line in lines:
        line = (pending + " " + line.strip()) if pending else line.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1].strip()
            continue
        match = re.search(r"(?:^|# = |\s)(?:\.venv/bin/)?(wattsched (?:[a-z][\w-]*).*)$", line)
        if not match or not (line.startswith(("wattsched ", ".venv/bin/wattsched ")) or "# = wattsched" in line
                             or re.match(r"^([A-Z_]+=\S+\s+)+(\.venv/bin/)?wattsched ", line)):
            continue
        command = match.group(1)
        if "# = wattsched" in line:  # `make X  # = wattsched ...: a remark` or `...   (a remark)`
            command = re.split(r":\s|\s{2,}\(", command)[0]
        try:
            words = shlex.split(command, comments=True)
        except ValueError:  # an open quote: the JSON goes on on the next line
            pending = line
            continue
        found.append(shlex.join(words))
    assert not pending, f"a command never ends: {pending!r}"
    return found


CODE_COMMANDS = sorted({(doc, command) for doc in DOCS
                        for command in _commands(_code_lines((ROOT / doc).read_text(encoding="utf-8")))})


def test_the_documents_show_commands():
    docs = {doc for doc, _ in CODE_COMMANDS}
    assert docs == {"README.md", "docker/README.md"}  # docs/architecture.md shows Python, and commands inline
    assert len(CODE_COMMANDS) >= 20


@pytest.mark.parametrize("doc,command", CODE_COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in CODE_COMMANDS])
def test_every_command_of_a_code_block_parses(doc, command, capsys):
    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit as exc:
        pytest.fail(f"{doc}: {command!r} does not parse: {capsys.readouterr().err.strip()} ({exc.code})")


def _inline_spans(text: str) -> list[str]:
    joined = re.sub(r"\s+", " ", text)
    return sorted({m.group(1).strip() for m in re.finditer(r"`((?:\S+=\S+ )*wattsched [^`]*)`", joined)})


INLINE = sorted({(doc, span) for doc in DOCS for span in _inline_spans((ROOT / doc).read_text(encoding="utf-8"))})


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("doc,span", INLINE, ids=[f"{d}:{s[:60]}" for d, s in INLINE])
def test_every_inline_command_names_a_command_and_its_options(doc, span, capsys):
    words = span[span.index("wattsched "):].split()[1:]
    parser = build_parser()
    path = ["wattsched"]
    while words and words[0] in _subparsers(parser):
        path.append(words[0])
        parser = _subparsers(parser)[words.pop(0)]
    assert len(path) > 1, f"{doc}: `{span}` names no wattsched command"
    options = {option for action in parser._actions for option in action.option_strings}
    named = [word.split("=")[0] for word in words if re.match(r"^\[?-", word)]
    unknown = [word.lstrip("[").rstrip("]") for word in named if word.lstrip("[").rstrip("]") not in options]
    assert not unknown, f"{doc}: `{span}`: {' '.join(path)} has no option {unknown}"
    if "[" in span and "..." not in span and "…" not in span:  # a synopsis: it parses without its brackets
        argv = shlex.split(re.sub(r"[\[\]]", "", span[span.index("wattsched "):]))[1:]
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{doc}: `{span}` does not parse: {capsys.readouterr().err.strip()} ({exc.code})")


def test_every_make_target_named_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.MULTILINE))
    named = {target for doc in DOCS for target in  # in `make X` and in code blocks
             re.findall(r"(?:`|^ {4,})make ([a-z][\w-]*)", (ROOT / doc).read_text(encoding="utf-8"), re.MULTILINE)}
    assert {"demo", "test", "reproduce-energy-budget"} <= named
    assert not named - targets, f"make targets the documents name but the Makefile lacks: {named - targets}"


def test_every_import_the_documents_show_works():
    shown = {(module, names) for doc in DOCS for module, names in
             re.findall(r"from (wattsched[\w.]*) import ([\w, ]+)", (ROOT / doc).read_text(encoding="utf-8"))}
    assert ("wattsched", "api") in shown
    for module, names in sorted(shown):
        imported = importlib.import_module(module)
        for name in (n.strip() for n in names.split(",")):
            assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), f"{module}.{name}"
