"""Output rows kept column by column: the simulator's energy and machine-state rows (``_consumed_energy.csv``,
``_machine_states.csv``).

A whole log writes millions of them (a row per job start and end, and per host switch). As a list of tuples
each row costs about 150 bytes (the tuple and its boxed floats and ints); in typed arrays (:mod:`array`) it
costs 8 bytes a value. A :class:`Rows` reads like the list of tuples it replaces: ``len``, iteration, indexing
and slicing give tuples, and it compares equal to a list of the same tuples.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload


class Rows(Sequence[tuple]):
    """Rows of a fixed number of columns, one :class:`array.array` per column of typecode ``d`` (float) or
    ``q`` (int), or a plain list for typecode ``O`` (any object, e.g. a one-letter row kind)."""

    __slots__ = ("_cols",)

    def __init__(self, typecodes: str) -> None:
        self._cols: tuple[Any, ...] = tuple([] if code == "O" else array(code) for code in typecodes)

    def append(self, row: tuple) -> None:
        """Add a row (one value per column, in order)."""
        if len(row) != len(self._cols):
            raise ValueError(f"a row of {len(row)} values for {len(self._cols)} columns")
        for col, value in zip(self._cols, row):
            col.append(value)

    def __len__(self) -> int:
        return len(self._cols[0])

    def __iter__(self) -> Iterator[tuple]:
        return zip(*self._cols)

    @overload
    def __getitem__(self, index: int) -> tuple: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple]: ...

    def __getitem__(self, index: int | slice) -> tuple | list[tuple]:
        if isinstance(index, slice):
            return list(zip(*(col[index] for col in self._cols)))
        return tuple(col[index] for col in self._cols)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rows):
            return self._cols == other._cols
        if isinstance(other, list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it replaces

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"
