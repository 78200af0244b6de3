"""Scheduler options: declared by each piece, validated before the run, listed by ``wattsched schedulers``.

An :class:`Option` names one key of the JSON options (``-o '{"budget_fraction": 0.5}'``), its type,
default, allowed values or range and a one-line help. Validation turns a bad value into an
:class:`~wattsched.base.errors.OptionError` that says, on one line, what was expected and which options
are valid.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from wattsched.base.errors import OptionError
from wattsched.base.limits import limit, limit_hint
from wattsched.base.validate import MAX_DOUBLE

Options = Mapping[str, Any]

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "a JSON object"}


@dataclass(frozen=True)
class Option:
    """One scheduler option.

    Attributes:
        name: key in the JSON options.
        type: ``str``, ``int``, ``float``, ``bool`` or ``dict`` (a JSON object, checked by its piece); an
            ``int`` is accepted for ``float``; ``bool`` is never accepted for numbers; numbers must be finite.
        default: value when absent (``None``: absent means "not set").
        choices: allowed values.
        min, max: inclusive range for numbers.
        min_exclusive: ``min`` itself is refused (a weight or a share that must be > 0).
        help: one line for ``wattsched schedulers`` and the docs.
        nullable: JSON ``null`` is accepted and means "not set" (a rule the option enables is off).
    """

    name: str
    type: type
    default: Any
    choices: Sequence[Any] | None = None
    min: float | None = None
    max: float | None = None
    help: str = ""
    nullable: bool = False
    min_exclusive: bool = False

    def describe(self) -> str:
        """Short form for error messages: ``placement (first-fit|best-fit|non-contiguous, default first-fit)``,
        ``t_weight (float in (0, 1e+06], default 1.0)``."""
        if self.choices is not None:
            allowed = "|".join(_show(c) for c in self.choices)
        elif self.min is not None or self.max is not None:
            allowed = f"{self.type.__name__} in {self._accepted_range()}"
        else:
            allowed = "JSON object" if self.type is dict else self.type.__name__
        if self.nullable:
            allowed += " or null"
        return f"{self.name} ({allowed}, default {_show(self.default)})"

    def _kind(self) -> tuple[bool, bool, bool]:
        """What the option's name says its number is, for the bounds every such option has (checked by
        :meth:`_check_bounds`, shown by :meth:`_accepted_range`): a time in seconds (``*_s``), an instant of
        simulated time rather than a duration (``window_*``), a period (``*period_s``)."""
        return self.name.endswith("_s"), self.name.startswith("window_"), self.name.endswith("period_s")

    def _accepted_range(self) -> str:
        """``[0, 1]``, ``(0, 1e+06]``, ``[1, inf)``: the values :meth:`check` accepts, the bounds every number option
        has (:meth:`_check_bounds`) included; a parenthesis marks an end not accepted (an infinite one never is)."""
        low, low_open, high = self.min, self.min_exclusive, self.max
        is_time, instant, period = self._kind()
        if period and low is not None and (low > 0 or low_open) and low < limit("min_period_s"):
            low, low_open = limit("min_period_s"), False  # a period below min_period_s wakes the scheduler too often
        if is_time:  # none beyond time_s before 0, nor after it for an instant
            if low is None or low < -limit("time_s"):
                low, low_open = -limit("time_s"), False
            if instant and (high is None or high > limit("time_s")):
                high = limit("time_s")
        left = "(-inf" if low is None else f"{'(' if low_open else '['}{low:g}"
        right = "inf)" if high is None else f"{high:g}]"
        return f"{left}, {right}"

    def check(self, value: Any, owner: str, valid: str) -> Any:
        """``value`` converted to the option's type, or :class:`OptionError` naming ``owner`` (the
        scheduler) and listing ``valid`` options."""
        if value is None and self.nullable:
            return None
        value = _plain_number(value) if self.type in (int, float) else value
        if self.type is bool and is_numpy_bool(value):
            value = bool(value)  # a flag as the API's keywords take it
        ok = isinstance(value, self.type) and not (self.type is not bool and isinstance(value, bool))
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                value, ok = float(value), True
            except OverflowError:  # a number, beyond a double: "must be a number" said it was none
                raise OptionError(f"option '{self.name}' of {owner} must be a finite number, got {_got(value)}; "
                                  f"{self._expected(valid)}") from None
        if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
            self._check_bounds(value, owner, valid)
        if not ok:
            raise OptionError(
                f"option '{self.name}' of {owner} must be {_TYPE_NAMES.get(self.type, self.type.__name__)}, "
                f"got {_got(value)}; {self._expected(valid)}"
            )
        if self.choices is not None and value not in self.choices:
            raise OptionError(
                f"option '{self.name}' of {owner} must be one of {'|'.join(_show(c) for c in self.choices)}, "
                f"got {_got(value)}; {self._expected(valid)}"
            )
        if ((self.min is not None and (value < self.min or (self.min_exclusive and value == self.min)))
                or (self.max is not None and value > self.max)):
            raise OptionError(
                f"option '{self.name}' of {owner} is out of range, got {_got(value)}; {self._expected(valid)}"
            )
        return value


    def _expected(self, valid: str) -> str:
        """The end of an error about this option's value: every valid option (:func:`describe_all`), or this one's
        description when they are too many to describe on one line (named only)."""
        return f"expected {self.describe()}" if valid.endswith(NAMED_ONLY) else f"valid options: {valid}"

    def _check_bounds(self, value: float, owner: str, valid: str) -> None:
        """The bounds every number option has (:mod:`wattsched.base.limits`): finite; a time (a name ending
        in ``_s``) not below ``-time_s`` and, for an instant (``window_*_s``), not above ``time_s`` (a huge
        duration such as a half-life of 1e300 s means "never" and is fine); a period (``*period_s``) at
        least ``min_period_s``, so that no run wakes up a billion times."""
        if not -MAX_DOUBLE <= value <= MAX_DOUBLE:
            raise OptionError(f"option '{self.name}' of {owner} must be a finite number, got {_got(value)}; "
                              f"{self._expected(valid)}")
        is_time, instant, period = self._kind()
        if is_time and (value < -limit("time_s") or (instant and value > limit("time_s"))):
            raise OptionError(f"option '{self.name}' of {owner}: {_got(value)} s is beyond the times a simulation "
                              f"can reach; {limit_hint('time_s', 's')}")
        if period and 0 < value < limit("min_period_s"):
            raise OptionError(f"option '{self.name}' of {owner}: a period of {_got(value)} s would wake the "
                              f"scheduler up too often; at least {limit('min_period_s'):g} s (lower the bound "
                              "with WATTSCHED_LIMIT_MIN_PERIOD_S)")


def is_numpy_bool(value: Any) -> bool:
    """Whether ``value`` is numpy's bool (``bool`` since numpy 2, ``bool_`` before), told without importing numpy."""
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")


def is_number(value: Any, *, integral: bool = False) -> bool:
    """A real number (an integer with ``integral``) of Python's or numpy's types; never a bool (numpy's
    ``bool_`` included), a string or None."""
    return (isinstance(value, numbers.Integral if integral else numbers.Real) and not isinstance(value, bool)
            and type(value).__name__ != "bool_")


def _plain_number(value: Any) -> Any:
    """A number of another type than Python's (numpy's ``int64``, ``float32``...) as a Python ``int`` or
    ``float``; anything else (a bool, numpy's too, a string) as it is."""
    if isinstance(value, (int, float)) or not is_number(value):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _got(value: Any) -> str:
    """A user's value as JSON (``"5"`` is a string, ``5`` a number), shortened when long."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def validate(options: Options | None, declared: Sequence[Option], owner: str) -> dict[str, Any]:
    """Every declared option with its value (defaults filled in).

    Raises:
        OptionError: ``options`` is not an object, names an unknown option, or holds a bad value.
    """
    if options is None:
        options = {}
    valid = describe_all(declared)
    if not isinstance(options, Mapping):
        raise OptionError(f"options of {owner} must be a JSON object, got {_got(options)}; valid options: {valid}")
    known = {o.name: o for o in declared}
    for key in options:
        if key not in known:
            raise OptionError(f"{unknown_option(key, known)} for {owner}; valid options: {valid}")
    return {name: opt.check(options[name], owner, valid) if name in options else opt.default
            for name, opt in known.items()}


#: a description of options longer than this names them only (``compose`` has about fifty: every type, range and
#: default made an error line of 2,000 characters)
DESCRIBE_MAX_CHARS = 400
#: the end of such a list (after the command that describes them)
NAMED_ONLY = " gives each one's values and default)"


def describe_all(declared: Sequence[Option], described_by: str = "wattsched schedulers") -> str:
    """``placement (first-fit|best-fit|non-contiguous, default first-fit), ...`` or ``none``; the names alone, and the
    command that describes them (``described_by``), when that is longer than :data:`DESCRIBE_MAX_CHARS`."""
    full = ", ".join(o.describe() for o in declared) or "none"
    if len(full) <= DESCRIBE_MAX_CHARS:
        return full
    return ", ".join(o.name for o in declared) + f" (`{described_by}`" + NAMED_ONLY


def unknown_option(key: str, known: Iterable[str]) -> str:
    """``unknown option 'KEY'``, with the closest known name as a suggestion when one is close (a typo)."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f"unknown option '{key}'" + (f" (did you mean '{close[0]}'?)" if close else "")
