"""One correlation function, with ties decided once: the analytics' and the metric comparison's agree."""

from __future__ import annotations

import math

import pytest

from comparison.engine.correlation import coefficients
from evaluation.engine.stats import correlations

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
