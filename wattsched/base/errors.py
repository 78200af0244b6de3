"""User-facing errors: one line that names the file and the field.

Every error a user can cause (bad XML, bad JSON, unknown scheduler, bad option, impossible job, unwritable
output, a peer breaking the protocol) is raised as a :class:`WattschedError`, one subclass per kind; each
edge (the CLI, the Python API) catches it once and the CLI prints ``str(error)`` on one line.
"""

from __future__ import annotations

__all__ = ["WattschedError", "InputError", "OptionError", "OutputError", "ProtocolError", "counted", "printable",
           "quoted_cut"]


def counted(count: float, noun: str, spec: str = "") -> str:
    """``count`` and ``noun`` as a message reads them: ``"1 job"``, ``"0 jobs"``, ``"3 jobs"`` (``noun`` singular,
    its plural made with an ``s``; ``spec`` formats the count: ``","`` writes ``"2,000 jobs"``)."""
    return f"{count:{spec}} {noun}{'' if count == 1 else 's'}"


def printable(text: str, keep: str = "") -> str:
    """``text`` as a terminal may show it: every character ``str.isprintable`` refuses (control characters such
    as ESC, NUL and the C1 ones, line and paragraph separators, format characters such as bidi overrides) written
    as ``repr`` writes it (``\\x1b``, ``\\u2028``), except those of ``keep`` (``"\\n"`` for a multi-line report).
    A job id, user name or file name read from a file can hold them (Batsim accepts them): printed raw, they
    would drive the terminal (colours, cursor moves, a title) or hide text."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def quoted_cut(text: str, max_chars: int = 60) -> str:
    """``text`` quoted for an error line (``repr``), cut when longer than ``max_chars``: ``'1Gf...'... (5000001
    characters)`` (a value of megabytes read from a file is no error line)."""
    return repr(text) if len(text) <= max_chars else f"{text[:max_chars * 2 // 3]!r}... ({len(text)} characters)"


class WattschedError(Exception):
    """Base of every error whose message is meant for the user as it is."""


class InputError(WattschedError):
    """Bad input file: the message names the file, the field (or element, job, profile) and the problem.

    Args:
        source: the file (or option set) the bad value comes from.
        field: where in it, e.g. ``"job 'w0!3'.walltime"`` or ``"host 'node-2'.speed"``.
        problem: what is wrong, in words a user understands.
    """

    def __init__(self, source: object, field: str, problem: str) -> None:
        self.source = str(source)
        self.field = field
        self.problem = problem
        where = f"{self.source}: {field}" if field else self.source
        super().__init__(f"{where}: {problem}")


class OptionError(WattschedError):
    """Bad scheduler option or command-line value."""


class OutputError(WattschedError):
    """An output location that cannot be written (a folder where a file goes, a read-only place); raised
    before the work that would fill it starts."""


class NoAnswer(BaseException):
    """An in-process scheduler's time to answer one message ran out (``wattsched run --timeout``: SIGALRM). Not an
    ``Exception``, as KeyboardInterrupt is not: the scheduler's own code, and the wrappers that report what it raises
    on one line, must let it through; the run reports it as a :class:`ProtocolError`."""


class ProtocolError(WattschedError):
    """A scheduler sent something Batsim would refuse (busy host, unknown event, ...)."""
