"""The one correlation function: hand-computed coefficients, and ties decided once for analytics and comparison."""

from __future__ import annotations

import math

import pytest

from stats.correlation import Correlation, correlations
from stats.errors import StatsError
from stats.metric_correlation import coefficients

approx = pytest.approx

# Two means of the same scores summed in another order: equal but for the last bits.
X = [1.0, 2.0, 3.6666666666666665, 3.666666666666667]
Y = [1.0, 2.0, 4.0, 3.0]


def test_near_equal_values_rank_as_a_tie_in_both_places() -> None:
    # Ranks of X with the tie: 1, 2, 3.5, 3.5; of Y: 1, 2, 4, 3. Deviations from 2.5: (-1.5, -0.5, 1, 1) and
    # (-1.5, -0.5, 1.5, 0.5); rho = 4.5 / sqrt(4.5 * 5) = sqrt(0.9). Without the tie it would be 0.8.
    found = correlations(X, Y)
    assert found.spearman == pytest.approx(math.sqrt(0.9))
    assert coefficients(X, Y)["spearman"] == found.spearman
    assert coefficients(X, Y)["kendall"] == found.kendall


def test_a_side_constant_but_for_noise_has_no_coefficient() -> None:
    flat = [3.6666666666666665, 3.666666666666667, 3.6666666666666665]
    assert correlations(flat, [1.0, 2.0, 3.0]).spearman is None
    assert coefficients(flat, [1.0, 2.0, 3.0]) == {"pearson": None, "spearman": None, "kendall": None}


# --------------------------------------------------------------------------------------------- correlations


def test_correlations_match_hand_computation():
    # x = [1, 2, 3, 4], y = [1, 3, 2, 4]: dx = dy-order deviations [-1.5, -.5, .5, 1.5] vs [-1.5, .5, -.5, 1.5]
    # sum dx dy = 2.25 - .25 - .25 + 2.25 = 4; sum dx^2 = sum dy^2 = 5 -> r = 0.8 (= rho, no ties)
    # with n - 2 = 2 degrees of freedom the two-sided p of r is exactly 1 - |r| = 0.2
    # Kendall: 5 concordant, 1 discordant pair of 6 -> tau = 4/6; exact p: permutations of 4 with <= 1
    # inversion are 1 + 3 = 4 of 24, two-sided 2 * 4/24 = 1/3
    c = correlations([1, 2, 3, 4], [1, 3, 2, 4])
    assert c.n == 4
    assert c.pearson == approx(0.8) and c.pearson_p == approx(0.2)
    assert c.spearman == approx(0.8) and c.spearman_p == approx(0.2)
    assert c.kendall == approx(2 / 3) and c.kendall_p == approx(1 / 3)


def test_correlations_kendall_tau_b_with_ties():
    # x = [1, 1, 2, 3], y = [1, 2, 2, 3]: pairs (1,2) tie in x only, (2,3) tie in y only, the other
    # four concordant -> tau_b = (4 - 0) / sqrt((4 + 1) * (4 + 1)) = 0.8
    assert correlations([1, 1, 2, 3], [1, 2, 2, 3]).kendall == approx(0.8)


def test_correlations_undefined_for_constant_or_short_input():
    assert correlations([1, 2], [2, 1]) == Correlation(n=2)
    assert correlations([3, 3, 3], [1, 2, 3]).pearson is None
    with pytest.raises(StatsError):
        correlations([1, 2, 3], [1, 2])
