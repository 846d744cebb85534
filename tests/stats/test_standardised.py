"""Per-rater z-scores (stats.systems.standardised), against hand-computed values."""

from __future__ import annotations

import pytest

from stats.systems import Rated, standardised


def test_standardised_removes_each_raters_offset_and_spread():
    rated = [Rated("A", 1, "ann", 40.0), Rated("B", 1, "ann", 60.0),  # mean 50, sd 10
             Rated("A", 1, "bob", 90.0), Rated("B", 1, "bob", 100.0), Rated("C", 1, "bob", 95.0)]
    z = {(r.system, r.rater): r.value for r in standardised(rated)}
    assert z[("A", "ann")] == pytest.approx(-1.0) and z[("B", "ann")] == pytest.approx(1.0)
    sd = (50 / 3) ** 0.5  # bob: mean 95, deviations -5, 5, 0
    assert z[("A", "bob")] == pytest.approx(-5 / sd) and z[("C", "bob")] == pytest.approx(0.0)


def test_standardised_gives_a_constant_rater_zeros():
    assert [r.value for r in standardised([Rated("A", 1, "c", 70.0), Rated("B", 2, "c", 70.0)])] == [0.0, 0.0]
