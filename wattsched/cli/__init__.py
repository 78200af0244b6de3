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
import io
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


class _StandardOutputError(Exception):
    """Standard output cannot be written (not a broken pipe): the message says why."""


class _StandardOutput:
    """``sys.stdout`` while :func:`main` runs: a write or flush that fails (``> FILE`` on a full disk or beyond a
    file size limit, ``ulimit -f``; an I/O error) raises :class:`_StandardOutputError`, which :func:`main` prints
    as one line naming standard output (it was a traceback, or Python's "Exception ignored" and status 120 at
    exit); a broken pipe (``| head``) stays a :class:`BrokenPipeError`, ended quietly; text the stream's encoding
    cannot write is written escaped. Anything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def write(self, text: str) -> int:
        try:
            try:
                return int(self._stream.write(text))
            except UnicodeEncodeError:  # a file name that is no UTF-8 (printed: its path), a character the
                # terminal's encoding lacks: written escaped, as standard error writes them (it was a traceback, in a
                # UTF-8 locale other than C, once a run's outputs were written)
                encoding = getattr(self._stream, "encoding", None) or "utf-8"
                return int(self._stream.write(text.encode(encoding, "backslashreplace").decode(encoding)))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StandardOutputError(exc.strerror or str(exc)) from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StandardOutputError(exc.strerror or str(exc)) from None


def _reopen_closed_standard_streams() -> set[int]:
    """Open ``/dev/null`` on the standard file descriptors the command was started without (``<&-``, ``>&-``,
    ``2>&-``), and return them: else the first file opened takes the number, and what is written to the stream
    (a library's warning on descriptor 2) lands in an output file. Without standard error, the messages go to
    ``/dev/null`` (Python's ``print`` sent them to standard output when ``sys.stderr`` was None, a progress bar's
    ``sys.stderr.isatty()`` raised: exit 1 and no word)."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
    for fd in sorted(closed):
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 2 in closed and sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")
    return closed


def _buffered(stream: Any) -> Any:
    """``stream``, or when it writes straight to its file descriptor (``PYTHONUNBUFFERED=1`` or ``python -u``, as in
    the Docker image) a stream of the same descriptor behind a buffer flushed at every line: Python's unbuffered
    text stream ignores what a short write leaves (``synth > w.json`` on a full disk exited 0, the file cut short), a
    buffered one writes the rest and so meets the error."""
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        return stream
    try:
        fd = stream.fileno()
        stream.flush()
    except (OSError, ValueError):
        return stream
    return io.TextIOWrapper(open(fd, "wb", closefd=False), encoding=stream.encoding, errors=stream.errors,
                            line_buffering=True)


def _discard_standard_output() -> None:
    """Standard output sent to ``/dev/null`` from now on: what is still buffered is not written again at exit
    (a second error, or a "BrokenPipeError ignored")."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # a stream without a descriptor (io.StringIO): nothing to discard
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    closed = _reopen_closed_standard_streams()
    stream = sys.stdout
    if stream is None or 1 in closed:
        print("wattsched: error: standard output is closed (>&-): send it to a file or to /dev/null instead",
              file=sys.stderr)
        return 2
    buffered = _buffered(stream)
    sys.stdout = _StandardOutput(buffered)
    try:
        try:
            status = _main(argv)
        except SystemExit:  # --help: what argparse printed is written now, its failure said
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except _StandardOutputError as exc:
        _discard_standard_output()
        print(f"wattsched: error: standard output: cannot write: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the last lines, flushed at the end
        _discard_standard_output()
        return 1
    finally:
        sys.stdout = stream
        if buffered is not stream:  # (its file descriptor stays open)
            try:
                buffered.close()
            except (OSError, ValueError):
                pass


def _memory_short(error: BaseException) -> bool:
    """Whether an :class:`ImportError` (or one it was raised from) says that a shared library could not be mapped
    into memory: numpy under a low ``ulimit -v`` raised one ("failed to map segment from shared object"), a
    traceback, where a :class:`MemoryError` is one line."""
    seen: BaseException | None = error
    for _ in range(8):  # the chain of causes, not for ever
        if seen is None:
            return False
        text = str(seen).lower()
        if "failed to map segment" in text or "cannot allocate memory" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _main(argv: Sequence[str] | None) -> int:
    """:func:`main` once standard output is guarded."""
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
    except (MemoryError, RecursionError, ImportError) as exc:  # an input beyond the bounds checked (README "Errors
        # and limits"), or a library that cannot be loaded for want of memory (ulimit -v)
        if isinstance(exc, ImportError) and not _memory_short(exc):
            raise
        what = "input nested too deeply" if isinstance(exc, RecursionError) else "out of memory"
        print(f"wattsched: error: {what} while running '{args.command}'; see the README's 'Errors and limits' "
              "for the bounds and how to lower them", file=sys.stderr)
        return 2
    except BrokenPipeError:  # before OSError, of which it is one: that clause re-raised it (a traceback for '| head')
        _discard_standard_output()
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

