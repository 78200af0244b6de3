"""wattsched.simulator.rows.Rows reads like the list of tuples it replaces (the energy and machine-state rows)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from wattsched.simulator.rows import Rows

FLOATS = st.floats(allow_nan=False)
ROWS = st.lists(st.tuples(FLOATS, FLOATS, st.sampled_from("sep"), st.integers(-2**63, 2**63 - 1)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(rows=ROWS, data=st.data())
def test_rows_read_like_a_list_of_tuples(rows, data) -> None:
    kept = Rows("ddOq")
    for row in rows:
        kept.append(row)
    assert len(kept) == len(rows)
    assert list(kept) == rows and kept == rows
    if rows:
        i = data.draw(st.integers(-len(rows), len(rows) - 1))
        assert kept[i] == rows[i]
    start, stop = data.draw(st.integers(-40, 40)), data.draw(st.integers(-40, 40))
    assert kept[start:stop] == rows[start:stop]
    other = Rows("ddOq")
    for row in rows:
        other.append(row)
    assert kept == other
    if rows:
        assert kept != rows[:-1] and kept != rows[:-1] + [(1.5, 2.5, "x", 3)]


def test_a_row_must_have_one_value_per_column() -> None:
    with pytest.raises(ValueError):
        Rows("dd").append((1.0,))
    with pytest.raises(OverflowError):
        Rows("q").append((2**63,))
