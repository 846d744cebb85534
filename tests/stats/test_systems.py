"""The system-level core on hand-computed data: direction, counts, the pair's difference, agreement, rank text."""

from __future__ import annotations

import pytest

from stats.errors import StatsError
from stats.ranking import rank_range_text
from stats.systems import HIGHER, LOWER, Observation, Rated, rater_agreement, system_results


def _obs():
    # A: 1 and 3 on unit 1 (two raters), 2 on unit 2 -> mean 2 over 3 ratings, 2 units; B: 10 on both units
    return [Observation("A", 1, 1), Observation("A", 1, 3), Observation("A", 2, 2), Observation("B", 1, 10),
            Observation("B", 2, 10)]


def test_direction_orders_and_signs_the_difference():
    low = system_results(_obs(), better=LOWER, n_resamples=50, rank_resamples=50)
    high = system_results(_obs(), better=HIGHER, n_resamples=50, rank_resamples=50)
    assert [s.system for s in low.systems] == ["A", "B"] and [s.system for s in high.systems] == ["B", "A"]
    a = next(s for s in low.systems if s.system == "A")
    assert (a.score, a.ratings, a.segments) == (2, 3, 2)
    (pair,) = low.pairs
    assert (pair.a, pair.b, pair.segments) == ("A", "B", 2) and pair.difference == pytest.approx(2 - 10)
    (pair,) = high.pairs
    assert (pair.a, pair.b) == ("B", "A") and pair.difference == pytest.approx(10 - 2)
    with pytest.raises(StatsError):
        system_results(_obs(), better="sideways")  # type: ignore[arg-type]
    assert system_results([], better=LOWER).systems == []


def test_agreement_ignores_or_matches_labels():
    rated = [Rated("S", 1, "x", 5, ((0, 4, "major"),)), Rated("S", 1, "y", 5, ((2, 6, "minor"),)),
             Rated("S", 2, "x", 1, ()), Rated("S", 2, "y", 0, ()), Rated("S", 3, "x", 3, ()),
             Rated("S", 3, "y", 2, ())]
    (pair,) = rater_agreement(rated).pairs
    assert (pair.a, pair.b, pair.outputs) == ("x", "y", 3)
    assert (pair.char.matched, pair.char.n_predicted, pair.char.n_reference) == (2, 4, 4)
    assert pair.char_labelled.matched == 0  # the two shared characters differ in severity
    assert pair.scores.n == 3 and pair.scores.pearson == pytest.approx(10 / (8 * 114 / 9) ** 0.5)  # 5,1,3 against 5,0,2


def test_rank_range_text():
    assert [rank_range_text(b) for b in ((1, 1), (2, 4), None, [3, 3])] == ["1", "2-4", "", "3"]
