"""The fast host-set operations equal procset's own."""

from hypothesis import given, strategies as st
from procset import ProcSet

import numpy as np

from wattsched.base.hostsets import (contains_many, copy, disjoint, from_intervals, from_sorted_ids, ids_array, inter,
                                     longest, minus, parse_canonical, plus, size, union_if_disjoint)


def parse(text: str) -> ProcSet:
    return parse_canonical(text)[0]

intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 8)), max_size=12)


def as_procset(pairs) -> ProcSet:
    return ProcSet(*[(a, a + d) for a, d in pairs])


@given(intervals, intervals)
def test_minus_plus_and_size_equal_procset(x, y) -> None:
    a, b = as_procset(x), as_procset(y)
    assert minus(a, b) == a - b
    assert plus(a, b) == a | b
    assert size(a) == len(a)
    assert list(minus(a, b).intervals()) == list((a - b).intervals())
    assert list(plus(a, b).intervals()) == list((a | b).intervals())


@given(intervals, intervals)
def test_results_are_procsets_of_valid_intervals(x, y) -> None:
    """The intervals the operations build without procset's checks are ProcInts with ``0 <= inf <= sup``, sorted,
    disjoint and not adjacent, and ``longest`` is the widest of them (what first-fit could place in one)."""
    from procset import ProcInt

    a, b = as_procset(x), as_procset(y)
    for result in (minus(a, b), plus(a, b), inter(a, b), from_intervals(sorted((i, i + d) for i, d in x))):
        itvs = list(result.intervals())
        assert all(type(i) is ProcInt and 0 <= i.inf <= i.sup for i in itvs)
        assert all(p.sup + 1 < q.inf for p, q in zip(itvs, itvs[1:]))
        assert longest(result) == max((len(i) for i in itvs), default=0)
        assert (longest(result) == 0) == (len(result) == 0)


@given(intervals, st.lists(st.tuples(st.integers(0, 60), st.integers(0, 3)), max_size=40))
def test_minus_walking_the_hosts_equals_procset(x, y) -> None:
    """The difference taken interval by interval of ``hosts`` (used when ``removed`` has many more intervals)."""
    from wattsched.base.hostsets import _minus_walking_hosts

    a, b = as_procset(x), as_procset(y)
    assert list(_minus_walking_hosts(a, b).intervals()) == list((a - b).intervals())
    assert list(minus(a, b).intervals()) == list((a - b).intervals())


@given(intervals, intervals)
def test_inter_disjoint_and_copy_equal_procset(x, y) -> None:
    a, b = as_procset(x), as_procset(y)
    assert list(inter(a, b).intervals()) == list((a & b).intervals())
    assert disjoint(a, b) == a.isdisjoint(b)
    c = copy(a)
    assert c == a and c is not a and c._itvs is not a._itvs


def test_examples() -> None:
    free = ProcSet((0, 9), (20, 29))
    assert minus(free, ProcSet((3, 5))) == ProcSet((0, 2), (6, 9), (20, 29))
    assert plus(free, ProcSet((10, 19))) == ProcSet((0, 29))
    assert str(plus(ProcSet(), ProcSet(4))) == "4"


@given(intervals)
def test_parse_equals_procset_parser(x) -> None:
    a = as_procset(x)
    assert list(parse(str(a)).intervals()) == list(a.intervals())


def test_parse_non_canonical_and_bad_strings() -> None:
    assert parse("5 3-4 0") == ProcSet((0, 0), (3, 5))
    assert parse_canonical("0-3 7") == (ProcSet((0, 3), 7), "0-3 7")
    assert parse_canonical("2-2 04-5")[1] == "2 4-5"
    assert parse_canonical("3-4 5")[1] == "3-5"
    assert parse("2-3 3-6") == ProcSet((2, 6))
    import pytest
    with pytest.raises(ValueError):
        parse("1-x")


@given(st.sets(st.integers(0, 80)))
def test_from_sorted_ids(ids) -> None:
    assert from_sorted_ids(sorted(ids)) == ProcSet(*ids)


@given(intervals)
def test_from_intervals(pairs) -> None:
    """Intervals sorted by their start, adjacent, overlapping or apart: the same set as procset's union, in its
    canonical form (no two intervals touching)."""
    itvs = sorted((a, a + d) for a, d in pairs)
    got = from_intervals(itvs)
    assert got == ProcSet(*itvs)
    assert [(a, b) for a, b in got.intervals()] == [(a, b) for a, b in ProcSet(*itvs).intervals()]


@given(intervals, st.lists(intervals, max_size=6))
def test_accumulator_grows_into_the_union(start, added) -> None:
    """Accumulator (a union grown in place) holds the union of what was added, and never changes the sets
    it was given."""
    from wattsched.base.hostsets import Accumulator

    first = as_procset(start)
    acc = Accumulator(first)
    expected = ProcSet(first)
    for pairs in added:
        hosts = as_procset(pairs)
        before = ProcSet(hosts)
        acc.add(hosts)
        expected |= hosts
        assert list(acc.hosts.intervals()) == list(expected.intervals())
        assert hosts == before
    assert first == as_procset(start)


@given(st.lists(intervals, max_size=8))
def test_union_if_disjoint_is_the_union_exactly_when_no_two_sets_meet(sets) -> None:
    """union_if_disjoint: the union of the sets, a valid set, when no two share a host; None as soon as two do."""
    procsets = [as_procset(pairs) for pairs in sets]
    union = union_if_disjoint(procsets)
    meet = any(len(a & b) for i, a in enumerate(procsets) for b in procsets[i + 1:])
    if meet:
        assert union is None
    else:
        expected = ProcSet()
        for hosts in procsets:
            expected |= hosts
        assert union is not None and list(union.intervals()) == list(expected.intervals())
        assert all(b + 1 < c for (_, b), (c, _) in zip(union.intervals(), list(union.intervals())[1:]))


@given(intervals, st.lists(st.integers(-3, 75), max_size=30))
def test_ids_array_and_contains_many_equal_procset(x, probes) -> None:
    a = as_procset(x)
    assert ids_array(a).tolist() == list(a)
    assert contains_many(a, np.array(probes, dtype=np.int64)).tolist() == [h in a for h in probes]


many_intervals = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 6)), max_size=60)


@given(many_intervals, many_intervals)
def test_plus_of_fragmented_sets_equals_procset(x, y) -> None:
    """Past ``MERGE_MIN_INTERVALS`` intervals on both sides, ``plus`` and ``Accumulator.add`` merge the two
    lists in one pass: the same intervals as procset's union, and the operands unchanged."""
    from wattsched.base.hostsets import Accumulator

    a, b = as_procset(x), as_procset(y)
    a0, b0 = ProcSet(a), ProcSet(b)
    assert list(plus(a, b).intervals()) == list((a | b).intervals())
    acc = Accumulator(a)
    acc.add(b)
    assert list(acc.hosts.intervals()) == list((a | b).intervals())
    assert a == a0 and b == b0


def test_the_merge_path_is_taken_on_fragmented_sets(monkeypatch) -> None:
    from wattsched.base import hostsets

    odd = ProcSet(*[(i, i) for i in range(1, 200, 2)])
    even = ProcSet(*[(i, i) for i in range(0, 200, 4)])
    calls = []
    original = hostsets.from_intervals
    monkeypatch.setattr(hostsets, "from_intervals", lambda itvs: calls.append(1) or original(itvs))
    assert list(plus(odd, even).intervals()) == list((odd | even).intervals())
    assert calls


@given(intervals, st.integers(0, 70), st.integers(0, 12))
def test_longest_within_is_the_widest_range_first_fit_within_places(x, lo, width) -> None:
    """``longest_within`` bounds ``first_fit_within`` exactly: it places ``n`` hosts inside ``[lo, hi]`` if and only
    if ``n`` is at most the longest run of free hosts there (what EAMC's placement answers backfilling with)."""
    from wattsched.base.hostsets import first_fit_within, intervals as itvs_of, longest_within

    free = as_procset(x)
    hi = lo + width
    expected = longest(inter(free, ProcSet((lo, hi)))) if free else 0
    items = itvs_of(free)
    assert longest_within(items, lo, hi) == expected
    for n in range(1, expected + 2):
        assert (first_fit_within(items, lo, hi, n) is not None) == (n <= expected)
