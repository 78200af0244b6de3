"""What every subcommand shares: one convention per concept.

=========================  =============================================================================
concept                    option
=========================  =============================================================================
scheduler                  ``-s/--scheduler NAME`` (preset, pybatsim entry point, ``module:Class``, ``file.py``)
scheduler options          ``-o/--options JSON`` or ``-o @file.json``
simulation outputs         ``-e/--export PREFIX`` (Batsim's five ``PREFIX_*.csv``)
a generated file           ``--output FILE`` (standard output when absent)
generated files' folder    ``-d/--output-dir DIR`` (next to the outputs read when absent; ``--out-dir`` too)
a time window              ``--window START,END`` in seconds
machine size, seed         ``--hosts N``, ``--seed S``
parallel runs              ``-j/--workers N``; ``--force`` runs again what is already done
progress bar               shown on a terminal; ``-q/--quiet`` hides it, ``--progress`` forces it (as lines)
machine-readable output    ``--json``
=========================  =============================================================================
"""

from __future__ import annotations

import argparse
import json
import math
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from wattsched.base.errors import OptionError, WattschedError, quoted_cut
from wattsched.base.fileio import require_regular_file
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import (DUPLICATE_KEY, control_character_problem, decode_utf8,  # noqa: F401
                                     home_folder_problem, integer, load_json, non_negative_int, number, positive_int,
                                     shown_integer, window_beyond_time)


def scheduler_options(text: str) -> dict[str, Any]:
    """``-o`` value: a JSON object, or ``@file`` holding one.

    Raises:
        OptionError: the file cannot be read, or the text is not a JSON object.
    """
    source = "option -o"
    if text.startswith("@"):
        source = text[1:]
        if not source.strip():
            raise OptionError("-o @: give the options file's name after @ (-o @options.json)")
        try:
            require_regular_file(source)
            data = Path(source).read_bytes()
        except OSError as exc:
            raise OptionError(f"-o {text}: cannot read {source}: {exc.strerror or exc}") from None
        given = text  # UTF-8, as the workload; a BOM read as the workload's is
        text = decode_utf8(data, source,
                           lambda _source, _field, problem: OptionError(f"-o {given}: {source}: {problem}"))
    if not text.strip():  # `-o "$OPTIONS"` with the variable unset must not run with the defaults unnoticed
        raise OptionError(f"{source}: scheduler options are empty: give a JSON object such as '{{}}', or leave -o out")
    value = load_json(text, source, _options_json_error, unique_keys=True)
    if not isinstance(value, dict):
        raise OptionError(f"{source}: scheduler options must be a JSON object like '{{\"placement\": \"best-fit\"}}'")
    return value


@contextmanager
def naming_options_file(text: str | None) -> Iterator[None]:
    """Inside, an :class:`OptionError` (a bad value, an option the platform cannot serve) of options given as
    ``-o @file`` names the file first, as every error of a file does: ``FILE: option 'x' of ...``."""
    try:
        yield
    except OptionError as exc:
        source = text[1:] if text is not None and text.startswith("@") else None
        if source is None or str(exc).startswith(f"{source}: "):
            raise
        raise OptionError(f"{source}: {exc}") from None


def _options_json_error(source: str, field: str, problem: str) -> OptionError:
    where = f" at {field}" if field else ""
    what = "scheduler options" if problem.startswith(DUPLICATE_KEY) else "scheduler options are not valid JSON"
    return OptionError(f"{source}: {what}{where}: {problem}")


def window(text: str) -> tuple[float, float]:
    """``--window START,END``: two finite times in seconds (ASCII numbers, :func:`~wattsched.base.validate.number`),
    END after START."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected START,END in seconds, got {text[:40]!r}")
    a, b = (number(part, "START,END in seconds", text) for part in parts)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise argparse.ArgumentTypeError(f"window bounds must be finite numbers of seconds, got {text!r}")
    if b <= a:
        raise argparse.ArgumentTypeError(f"window end {b:g} is not after its start {a:g}")
    try:
        beyond = window_beyond_time(a, b)
    except WattschedError as exc:  # a malformed WATTSCHED_LIMIT_TIME_S, said as a usage error
        raise argparse.ArgumentTypeError(str(exc)) from None
    if beyond:
        raise argparse.ArgumentTypeError(f"window {beyond}")
    return a, b


def named(what: str, written: bool = False) -> Callable[[str], str]:
    """The ``type`` of an argument naming a file, folder or scheduler: its text, unless empty (or blank), which
    names nothing: ``-d ''`` wrote next to the outputs, ``sweep --out ''`` into the current folder and
    ``run '' W`` said ': cannot read platform file'. ``what`` says what to give; ``written``: the text names files
    we write, which must not hold a control character (``run -e $'o/out\\n'`` wrote ``o/out\\n_jobs.csv``...)."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"empty: give {what}")
        problem = (control_character_problem(text) or home_folder_problem(text)) if written else None
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{quoted_cut(text, 200)} {problem}")
        return text

    return check


def positive_float(text: str) -> float:
    """A positive finite number written in ASCII (:func:`~wattsched.base.validate.number`: ``float()`` would read
    ``١٦``, ``1_6`` and `` 16 `` too): the ``type`` of every option giving a quantity (``--tau``, ``--load``...)."""
    value = number(text, "a positive number")
    if not 0.0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text[:40]!r}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number ≥ 0 written in ASCII, as :func:`positive_float` reads it (``--rel-tol 0``: no relative
    tolerance)."""
    value = number(text, "a number ≥ 0")
    if not 0.0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number ≥ 0, got {text[:40]!r}")
    return value + 0.0  # (-0.0 read as 0)


def _bound(name: str) -> float:
    """The bound ``name`` (:mod:`wattsched.base.limits`) for an option's type: a malformed
    ``WATTSCHED_LIMIT_<NAME>`` is said as a usage error."""
    try:
        return limit(name)
    except WattschedError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workers(text: str) -> int:
    """``-j N``: simulations at once in local processes, from 1 to the ``workers`` bound (``-j 10000`` would start
    ten thousand processes)."""
    value = positive_int(text)
    if value > _bound("workers"):
        raise argparse.ArgumentTypeError(f"{shown_integer(value)}: {limit_hint('workers', 'processes at once')}")
    return value


def days(text: str) -> float:
    """``--days D`` of a generated workload: a positive number of days within the ``days`` bound (the generators'
    own; ``--days 1e308`` is an infinite time)."""
    value = positive_float(text)
    if value > _bound("days"):
        raise argparse.ArgumentTypeError(f"{value:g} days; {limit_hint('days', 'days')}")
    return value


def time_in(unit_s: float, unit: str) -> Callable[[str], float]:
    """The ``type`` of an option giving a duration in ``unit`` (``unit_s`` seconds each, e.g. hours): a positive
    number whose duration stays within the ``time_s`` bound (``1e308`` hours would be an infinite time)."""

    def duration(text: str) -> float:
        value = positive_float(text)
        bound = _bound("time_s")
        if value * unit_s > bound:
            raise argparse.ArgumentTypeError(f"{value:g} {unit} is more than {bound / unit_s:g} {unit}, beyond any "
                                             f"simulated time; {limit_hint('time_s', 's')}")
        return value

    return duration


def timeout_seconds(text: str) -> float:
    """``--timeout S``: a positive number of seconds within the ``time_s`` bound (a wait of 1e308 s cannot be
    counted in the milliseconds ZeroMQ waits by)."""
    value = positive_float(text)
    if value > _bound("time_s"):
        raise argparse.ArgumentTypeError(f"{value:g} s is longer than any wait; {limit_hint('time_s', 's')}")
    return value


class _Once(argparse.Action):
    """A value option that may be given once: a second ``-o`` would silently replace the first."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            raise argparse.ArgumentError(self, "given twice: put every scheduler option in one JSON object")
        setattr(namespace, self.dest, values)


def add_options_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--options", metavar="JSON", action=_Once,
                        help="scheduler options: a JSON object such as '{\"placement\": \"best-fit\"}', or @FILE to "
                             "read it from a JSON file; 'wattsched schedulers NAME' lists a preset's options, their "
                             "defaults and valid values (default: the preset's defaults; give -o once)")


def add_progress_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()  # both: --progress won, -q silently ignored
    group.add_argument("-q", "--quiet", action="store_true",
                       help="no progress bar (by default one is shown when standard error is a terminal)")
    group.add_argument("--progress", action="store_true",
                       help="show progress even when not on a terminal: then a plain line a minute (jobs done, "
                            "simulated time, and the time left at the pace of the last 10 minutes: a whole trace "
                            "slows down as its backlog grows), for a log file")


def output_file(text: str) -> Path | None:
    """An ``--output FILE`` value: a file's path (``Path`` drops a trailing slash, which names a folder), named as
    :func:`named` wants a written file (an empty name was read as the current folder, "cannot write .", a blank one
    wrote a file named " "); ``-`` is standard output, as the option's default (it wrote a file named ``-``)."""
    if text == "-":
        return None
    text = named("a file name, or leave --output out to write to standard output", written=True)(text)
    if text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text!r} names a folder: give a file name")
    return Path(text)


def add_output_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--output", type=output_file, metavar="FILE",
                        help=f"file to write {what} to (default: standard output, as with -)")


def add_output_dir_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """``-d/--output-dir DIR`` (``args.output_dir``, None when absent), and ``--out-dir`` as an alias kept out of
    the help: ``plot`` spelled it so, ``paraver`` the other way."""
    folder = named("a folder, or leave the option out to write next to the outputs", written=True)
    parser.add_argument("-d", "--output-dir", metavar="DIR", type=folder,
                        help=f"folder to write {what} into (default: the folder of the outputs read)")
    parser.add_argument("--out-dir", dest="output_dir", type=folder, help=argparse.SUPPRESS)


class HelpFormatter(argparse.HelpFormatter):
    """The ``--help`` layout of every command: a description's paragraphs (separated by a blank line) wrapped to
    the terminal, and a block holding indented lines (an ``examples:`` epilog) printed as written. argparse's
    RawDescriptionHelpFormatter printed long descriptions as one line of several hundred characters."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if any(line.startswith(" ") for line in lines):
                blocks.append("\n".join(indent + line for line in lines))
            else:
                blocks.append(super()._fill_text(block, width, indent))
        return "\n\n".join(blocks)


def progress_enabled(args: argparse.Namespace) -> bool:
    import sys

    return bool(args.progress or (not args.quiet and sys.stderr.isatty()))
