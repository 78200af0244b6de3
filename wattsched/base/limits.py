"""The bounds every input is checked against before any work starts, and how to raise them.

A bound keeps a careless or generated input from exhausting memory or time before a check could refuse
it: a composed profile repeated 10^12 times, a platform of 10^11 hosts, JSON nested a million levels deep,
a monitoring period of a microsecond. Each bound has a name; the environment variable
``WATTSCHED_LIMIT_<NAME>`` (upper case) raises or lowers it, e.g. ``WATTSCHED_LIMIT_HOSTS=5000000``.
The error that refuses an input names the bound and its variable (:func:`limit_hint`).
A ``WATTSCHED_LIMIT_*`` variable that names no bound is refused, not ignored (:func:`check_limit_variables`, by
the command line and the API before any work).

======================  ===========  ==============================================================================
name                    default      what it bounds
======================  ===========  ==============================================================================
nesting                 64           nesting of JSON arrays and objects (workloads, options, messages), XML zones,
                                     YAML collections (grid files)
yaml_nodes              100000       nodes of a YAML document (a grid file) counted with every alias expanded: a
                                     "billion laughs" file of a few lines is refused before it is expanded
upload_bytes            52428800     a platform or workload uploaded through the web page (50 MiB)
profile_depth           64           composed profiles inside composed profiles
profile_parts           1000000      atomic parts one job runs (a composed profile's ``repeat`` × its parts)
hosts                   2000000      compute hosts of a platform (the embedded simulator holds them all)
jobs                    10000000     jobs of a workload, generated or read
days                    3660         days of a generated workload (``synth --days``)
time_s                  1e10         any time or duration in seconds (≈ 317 years of simulated time)
min_period_s            1            the shortest period of a periodic scheduler stage (an option ``*period_s``)
memory_fraction         0.8          share of the available memory an input's estimated footprint may take
messages_at_one_time    100000       Batsim messages in a row at one simulated time (a scheduler that answers
                                     every ANSWER with another QUERY)
download_min_rate       1024         bytes per second a trace download must bring on average over the window below
                                     (a stalled or trickling server)
download_rate_window_s  60           that window, in seconds
download_bytes          1073741824   a trace download whose size the catalogue does not give (1 GiB: a server
                                     streaming an endless body)
workers                 256          simulations at once in processes of this machine (``sweep``, ``reproduce``,
                                     ``web`` ``-j``; a typo of ``-j 10000`` would start ten thousand processes)
runs                    100000       runs of a sweep grid (the product of its platforms, workloads × seeds,
                                     schedulers and options), counted before any input is generated
======================  ===========  ==============================================================================
"""

from __future__ import annotations

import math
import os
from typing import Final

from wattsched.base.errors import OptionError

__all__ = ["DEFAULTS", "available_memory_bytes", "check_limit_variables", "format_count", "limit", "limit_hint"]

#: The default of every bound (module docstring).
DEFAULTS: Final[dict[str, float]] = {
    "nesting": 64,
    "profile_depth": 64,
    "profile_parts": 1_000_000,
    "hosts": 2_000_000,
    "jobs": 10_000_000,
    "days": 3660,
    "time_s": 1e10,
    "min_period_s": 1.0,
    "memory_fraction": 0.8,
    "yaml_nodes": 100_000,
    "upload_bytes": 50 * 1024 * 1024,
    "messages_at_one_time": 100_000,
    "download_min_rate": 1024,
    "download_rate_window_s": 60,
    "download_bytes": 1 << 30,
    "workers": 256,
    "runs": 100_000,
}

#: The bounds that count things (hosts, jobs, levels, bytes...): a whole number (``WATTSCHED_LIMIT_HOSTS=1.5``
#: bounded nothing a count can reach differently from 1, and the errors said "at most 1.5 hosts").
_COUNTS: Final[frozenset[str]] = frozenset({
    "nesting", "profile_depth", "profile_parts", "hosts", "jobs", "yaml_nodes", "upload_bytes",
    "messages_at_one_time", "download_bytes", "workers", "runs"})

_PREFIX: Final[str] = "WATTSCHED_LIMIT_"


def _variable(name: str) -> str:
    return f"{_PREFIX}{name.upper()}"


def limit(name: str) -> float:
    """The bound ``name``: ``$WATTSCHED_LIMIT_<NAME>`` if set, else :data:`DEFAULTS`.

    Raises:
        OptionError: the variable is not a positive finite number.
    """
    default = DEFAULTS[name]
    text = os.environ.get(_variable(name))
    if text is None or not text.strip():
        return default
    from wattsched.base.validate import plain_float  # (validate reads its bounds from here)

    try:
        value = plain_float(text.strip())  # ASCII digits, as every number of the command line
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise OptionError(f"environment variable {_variable(name)}: expected a positive number, got {text!r}")
    if name in _COUNTS and not value.is_integer():
        raise OptionError(f"environment variable {_variable(name)}: expected a whole number (it bounds a count), "
                          f"got {text!r}")
    return int(value) if isinstance(default, int) and value.is_integer() else value


def check_limit_variables() -> None:
    """Every ``WATTSCHED_LIMIT_*`` variable of the environment names a bound (in upper case, as :func:`limit`
    reads it) and holds a value :func:`limit` takes: a misspelt one (``WATTSCHED_LIMIT_HOST``) left the bound it
    meant at its default without a word, and a bad value went unnoticed until a check read that bound.

    Raises:
        OptionError: naming the variable (and the bounds there are).
    """
    for variable in sorted(os.environ):
        if not variable.startswith(_PREFIX):
            continue
        name = variable[len(_PREFIX):].lower()
        if name not in DEFAULTS or variable != _variable(name):
            import difflib

            close = difflib.get_close_matches(variable.upper(), [_variable(n) for n in DEFAULTS], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise OptionError(f"environment variable {variable}: no such bound{hint}; the bounds are {_PREFIX}NAME "
                              f"for NAME in {', '.join(n.upper() for n in DEFAULTS)}")
        limit(name)


def limit_hint(name: str, unit: str = "") -> str:
    """``"at most 64 levels (raise with WATTSCHED_LIMIT_NESTING)"``: the end of a message refusing an
    input (``unit``: ``"levels"``)."""
    return f"at most {format_count(limit(name))}{' ' + unit if unit else ''} (raise with {_variable(name)})"


def format_count(value: float) -> str:
    """A count as people read it (``2,000,000``, not ``2e+06``, which a count just over the bound would read as
    too); other values, and those of 10^9 or more (``1e+10`` seconds), as ``%g``."""
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e9 else f"{value:g}"


def available_memory_bytes() -> int | None:
    """Memory available to a new allocation (``MemAvailable`` of ``/proc/meminfo``), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
