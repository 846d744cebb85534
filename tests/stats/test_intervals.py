"""The Wilson interval comes from scipy now: it must give what the hand-written score formula gave."""

from __future__ import annotations

import math

import pytest

from stats.errors import StatsError
from stats.intervals import wilson

Z95 = 1.959963984540054


def _formula(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The score interval as the quality figures wrote it by hand before (Wilson 1927), ends clamped exactly."""
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 10, 20, 37, 100, 1000])
def test_wilson_from_scipy_equals_the_hand_written_formula(n):
    for k in range(n + 1):
        got = wilson(k, n)
        low, high = _formula(k, n)
        assert got.rate == k / n
        assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)


def test_wilson_ends_are_exact_and_nothing_seen_is_nothing_known():
    assert wilson(0, 4).low == 0.0 and wilson(4, 4).high == 1.0
    nothing = wilson(0, 0)
    assert (nothing.rate, nothing.low, nothing.high) == (None, 0.0, 1.0)


@pytest.mark.parametrize(("k", "n"), [(3, 2), (-1, 4), (0, -1)])
def test_wilson_refuses_impossible_counts_with_the_stats_error(k, n):
    with pytest.raises(StatsError, match="0 <= k <= n"):
        wilson(k, n)
