"""Placement rules of schedulers/placement.py on hand-built free sets."""

import pytest
from procset import ProcSet

import wattsched.schedulers.presets  # noqa: F401  (registers every piece, as the CLI does: EAMC's partitions last)
from wattsched.schedulers.pieces import REGISTRY
from wattsched.schedulers.placement import (
    BestFit,
    FirstFit,
    NonContiguous,
    best_fit_contiguous,
    first_fit,
    first_fit_contiguous,
)
from wattsched.schedulers.state import ClusterView, QueuedJob

FIRST_FIT, BEST_FIT, NON_CONTIGUOUS = FirstFit(), BestFit(), NonContiguous()
VIEW = ClusterView.idle_machine(16)


def job(n: int) -> QueuedJob:
    return QueuedJob("j", res=n, walltime_s=10.0, subtime_s=0.0)


def ps(text: str) -> ProcSet:
    return ProcSet.from_str(text)


def test_first_fit_takes_lowest_long_enough_interval():
    assert first_fit_contiguous(ps("0-1 4-9 12-15"), 3) == ps("4-6")
    assert first_fit_contiguous(ps("0-1 4-9 12-15"), 2) == ps("0-1")
    assert first_fit_contiguous(ps("0-15"), 16) == ps("0-15")


def test_best_fit_takes_smallest_long_enough_interval():
    assert best_fit_contiguous(ps("0-5 8-10 12-15"), 3) == ps("8-10")
    assert best_fit_contiguous(ps("0-5 8-11 13-16"), 4) == ps("8-11")  # lowest among equals
    assert best_fit_contiguous(ps("0-5 8-10"), 5) == ps("0-4")


def test_non_contiguous_takes_lowest_ids():
    assert first_fit(ps("0-1 4-5 9"), 4) == ps("0-1 4-5")
    assert first_fit(ps("0-1 4-5 9"), 5) == ps("0-1 4-5 9")
    assert first_fit(ps("3"), 1) == ps("3")


def test_contiguous_may_not_fit_with_enough_free_hosts():
    free = ps("0-1 4-5")
    assert first_fit_contiguous(free, 3) is None
    assert best_fit_contiguous(free, 3) is None
    assert first_fit(free, 3) == ps("0-1 4")


@pytest.mark.parametrize("allocate", [first_fit_contiguous, best_fit_contiguous, first_fit])
def test_too_wide_or_empty(allocate):
    assert allocate(ps("0-3"), 5) is None
    assert allocate(ProcSet(), 1) is None
    with pytest.raises(ValueError):
        allocate(ps("0-3"), 0)


def test_placements_by_name_default_first():
    assert list(REGISTRY["placement"]) == ["first-fit", "best-fit", "non-contiguous", "partitions"]  # EAMC's last
    assert FIRST_FIT.contiguous and BEST_FIT.contiguous and not NON_CONTIGUOUS.contiguous
    assert FIRST_FIT.allocate(job(2), ps("2-5"), VIEW) == ps("2-3")


def test_contiguous_reservation_is_the_placements_choice_at_that_time():
    assert FIRST_FIT.reserve(job(4), ps("0-1"), ps("0-5"), VIEW) == ps("0-3")
    assert BEST_FIT.reserve(job(4), ps("0-1"), ps("0-5 8-11"), VIEW) == ps("8-11")
    assert FIRST_FIT.reserve(job(3), ps("0-1"), ps("0-1 4-5"), VIEW) is None


def test_non_contiguous_reservation_prefers_hosts_not_free_now():
    # free now 0-3, hosts 8-9 free later: the reservation of 3 takes 8-9 first, then 0
    assert NON_CONTIGUOUS.reserve(job(3), ps("0-3"), ps("0-3 8-9"), VIEW) == ps("0 8-9")
    # leaves |free_then| - n = 3 hosts free now outside the reservation (EASY's "extra" count)
    assert len(ps("0-3") - NON_CONTIGUOUS.reserve(job(3), ps("0-3"), ps("0-3 8-9"), VIEW)) == 3
    assert NON_CONTIGUOUS.reserve(job(2), ps("0-3"), ps("0-3 8-15"), VIEW) == ps("8-9")
    assert NON_CONTIGUOUS.reserve(job(5), ps("0-3"), ps("0-3"), VIEW) is None
