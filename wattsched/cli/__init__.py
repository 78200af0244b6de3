"""``wattsched``: one command, one argparse tree, one convention per concept (:mod:`.common`).

Every subcommand's ``--help`` is its documentation. Errors a user can cause are printed as one line
(``wattsched: error: <file>: <field>: <problem>``) with exit status 2; nothing is written when a run fails.

=============  ===============================================================================
subcommand     module
=============  ===============================================================================
run, replay,   :mod:`.simulate`: simulate; replay recordings of real Batsim; serve real Batsim
serve
schedulers     :mod:`.describe`: presets and pieces with their options and papers
metrics, plot, :mod:`.analyse`: any Batsim output folder
paraver,
node-stats,
regress
synth, swf,    :mod:`.inputs`: workloads and platforms
lightesp,
eamc-workload,
platform
sweep,         :mod:`.studies`: many runs; the papers' experiments
reproduce
web            :mod:`.web`: the local web page (:mod:`wattsched.web`)
=============  ===============================================================================
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from typing import Any, NoReturn, Sequence

from wattsched.base.errors import WattschedError, printable, quoted_cut
from wattsched.base.limits import check_limit_variables
from wattsched.base.signals import terminate_as_interrupt
from wattsched.cli import analyse, describe, inputs, simulate, studies, web
from wattsched.cli.common import HelpFormatter

__all__ = ["build_parser", "main"]


class Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line (the usage itself is in ``--help``), and that takes
    no abbreviated option: ``run --time 5`` is refused rather than read as ``--timeout 5``, and ``plot
    --budget 500`` rather than read as ``--budget-power 500`` (a typo must not be a silent choice)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)  # descriptions wrapped, examples as written
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # the message quotes the command line's own words: a control character there is shown escaped
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = Parser(
        prog="wattsched",
        description="Energy-aware HPC job schedulers for Batsim 4, with an embedded Batsim-compatible simulator.",
        epilog="Run 'wattsched COMMAND --help' for the documentation of a command (its options, units, defaults "
               "and examples).\n\n"
               "examples:\n"
               "  wattsched run platforms/taurus_16.xml workloads/demo_taurus16.json -s easy-backfill -e results/easy\n"
               "  wattsched -v reproduce esc --out results/esc -j 2\n\n"
               "From Python (notebooks):\n"
               "  from wattsched import api\n"
               "  result = api.simulate(platform, workload, scheduler, options)   # outputs as DataFrames, metrics\n"
               "  table = api.sweep(grid, out)                                    # as 'wattsched sweep'\n"
               "an example notebook: docs/api.ipynb.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output on standard error: -v info, -vv debug; before COMMAND "
                             "(wattsched -v reproduce esc)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for module in (simulate, describe, analyse, inputs, studies, web):
        module.add_parsers(sub)
    return parser


def _one_line(text: str) -> str:
    """An error message on one line, whatever a file name or a value in it holds: line breaks as spaces, and any
    other character a terminal would act on (ESC, NUL, ``\\r``, ``\\u2028``...) escaped (:func:`printable`)."""
    return printable(" ".join(text.split("\n")) if "\n" in text else text)


class _PrintableFormatter(logging.Formatter):
    """Log lines (warnings naming a job, a user, a file) with a file's control characters escaped; the line
    breaks of a multi-line record (a traceback at -vv) kept."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), keep="\n\t")


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` were parsed for: ``wattsched reproduce esc``'s for
    ``reproduce esc ...``."""
    current = parser
    while True:
        action = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, action.dest, None) if action is not None else None
        if action is None or name not in action.choices:
            return current
        current = action.choices[name]


def _late_positionals(command: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]) -> list[str]:
    """``unknown`` without the words that belong to the command's ``NAME ...`` positional (``nargs="*"``) but
    came after an option: argparse fills such a positional, empty, with the words before the first option
    (``traces fetch -q sdsc-blue`` left ``sdsc-blue`` unrecognized); they are added to it here."""
    lists = [a for a in command._actions
             if not a.option_strings and a.nargs == "*" and getattr(args, a.dest, None) == []]
    words = [w for w in unknown if not w.startswith("-")]
    if len(lists) != 1 or not words or any(w.startswith("-") for w in unknown):
        return unknown
    setattr(args, lists[0].dest, words)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if unknown:
        unknown = _late_positionals(_command_parser(parser, args), args, unknown)
    if unknown:  # named by the command that does not know them, with a pointer to that command's --help
        _command_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    handler = logging.StreamHandler()
    handler.setFormatter(_PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])  # as before, nothing when the root logger has handlers
    try:
        with terminate_as_interrupt():  # SIGTERM (timeout, docker stop) cleans up as Ctrl-C does
            check_limit_variables()  # a misspelt WATTSCHED_LIMIT_* bounds nothing
            return int(args.func(args))
    except WattschedError as exc:
        print(f"wattsched: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except (MemoryError, RecursionError) as exc:  # an input beyond the bounds checked (README "Errors and limits")
        what = "out of memory" if isinstance(exc, MemoryError) else "input nested too deeply"
        print(f"wattsched: error: {what} while running '{args.command}'; see the README's 'Errors and limits' "
              "for the bounds and how to lower them", file=sys.stderr)
        return 2
    except BrokenPipeError:  # before OSError, of which it is one: that clause re-raised it (a traceback for '| head')
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # a path the system refuses whatever the disk holds, met by a check (Path.exists...)
        if exc.errno != errno.ENAMETOOLONG:
            raise
        from wattsched.base.validate import NAME_MAX_BYTES, PATH_MAX_BYTES

        name = quoted_cut(os.fsdecode(exc.filename), 80) if exc.filename is not None else "a file name"
        print(f"wattsched: error: {_one_line(name)}: {exc.strerror} (at most {NAME_MAX_BYTES} bytes a name, "
              f"{PATH_MAX_BYTES} a path)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wattsched: interrupted", file=sys.stderr)
        return 130

