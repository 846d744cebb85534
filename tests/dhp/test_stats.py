"""DHP statistics against values computed here independently (scipy called directly, formulas by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from dhp.engine.errors import DhpError
from dhp.engine.stats import (
    KindInput,
    KindResult,
    analyse_kind,
    discernment,
    hmp,
    hmp_asymptotic,
    level_weighted_average,
    normalize_weights,
    summarize,
    wilcoxon_greater,
)


def test_wilcoxon_greater_without_ties_uses_exact_distribution():
    original = [5.0, 4.6, 4.9, 3.8, 4.4, 4.7, 5.0, 4.1]
    perturbed = [3.1, 4.5, 2.7, 3.95, 1.2, 4.0, 2.2, 3.65]
    result = wilcoxon_greater(original, perturbed)
    d = np.array(original) - np.array(perturbed)
    expected = sps.wilcoxon(d, alternative="greater", method="exact")
    assert result.method == "exact"
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p == pytest.approx(expected.pvalue)
    # W+ by hand: the sum of the ranks of |d| over the positive differences.
    ranks = sps.rankdata(np.abs(d))
    assert result.statistic == pytest.approx(ranks[d > 0].sum())


def test_wilcoxon_greater_with_ties_and_zeros_drops_zeros_and_goes_asymptotic():
    original = [5, 4, 5, 3, 4, 5, 4, 4]
    perturbed = [3, 4, 2, 3, 1, 4, 2, 4]
    result = wilcoxon_greater(original, perturbed)
    nonzero = [2, 3, 3, 1, 2]  # zero differences dropped
    expected = sps.wilcoxon(nonzero, alternative="greater", method="asymptotic", correction=True)
    assert result.method == "asymptotic"
    assert result.n_pairs == 8 and result.n_nonzero == 5
    assert result.p == pytest.approx(expected.pvalue)
    # The normal approximation by hand: W+ = 15 (all positive), mean n(n+1)/4 = 7.5, tie-corrected variance.
    ranks = sps.rankdata(nonzero)
    _, counts = np.unique(nonzero, return_counts=True)
    var = 5 * 6 * 11 / 24 - sum(t**3 - t for t in counts) / 48
    z = (ranks.sum() - 7.5 - 0.5) / math.sqrt(var)
    assert result.p == pytest.approx(sps.norm.sf(z))


def test_wilcoxon_all_equal_is_p_one_and_flagged():
    result = wilcoxon_greater([3, 4, 5], [3, 4, 5])
    assert result.p == 1.0 and result.statistic is None and result.all_zero
    assert discernment(result.p) == 0.0


def test_wilcoxon_rejects_unpaired_scores():
    with pytest.raises(DhpError, match="pair up"):
        wilcoxon_greater([1, 2, 3], [1, 2])


def test_hmp_equal_weights_is_the_harmonic_mean():
    p = {"a": 0.01, "b": 0.2, "c": 0.5}
    assert hmp(p) == pytest.approx(3 / (1 / 0.01 + 1 / 0.2 + 1 / 0.5))
    assert hmp({"a": 0.03}) == pytest.approx(0.03)  # one metric only


def test_weighted_hmp_normalizes_raw_votes_and_ignores_zero_weights():
    p = {"coherence": 0.01, "consistency": 0.2, "fluency": 0.5}
    votes = {"coherence": 4, "consistency": 1, "fluency": 5}  # the paper's example: EW = [0.4, 0.1, 0.5]
    assert normalize_weights(votes, list(p)) == pytest.approx({"coherence": 0.4, "consistency": 0.1, "fluency": 0.5})
    assert hmp(p, votes) == pytest.approx(1 / (0.4 / 0.01 + 0.1 / 0.2 + 0.5 / 0.5))
    zero = {"coherence": 0, "consistency": 1, "fluency": 1}
    assert hmp(p, zero) == pytest.approx(1 / (0.5 / 0.2 + 0.5 / 0.5))
    with pytest.raises(DhpError):
        hmp(p, {"coherence": 0})


def test_hmp_asymptotic_matches_simulated_null_distribution():
    """Under the null (independent uniform p-values) P(HMP <= h) is the asymptotic p of h; check by simulation."""
    rng = np.random.default_rng(7)
    n_tests = 40
    sims = rng.random((40000, n_tests))
    hmps = n_tests / (1 / sims).sum(axis=1)
    for h in (0.01, 0.05):
        empirical = float((hmps <= h).mean())
        p = hmp_asymptotic({f"m{i}": h for i in range(n_tests)})
        assert p == pytest.approx(empirical, rel=0.15), (h, p, empirical)
        assert p > h  # the plain HMP is anti-conservative for moderate values


def test_hmp_asymptotic_one_test_is_its_own_p():
    assert hmp_asymptotic({"a": 0.2, "b": 0.001}, {"a": 1, "b": 0}) == pytest.approx(0.2)


def test_discernment_is_log_base_005():
    assert discernment(0.05) == pytest.approx(1.0)
    assert discernment(0.0025) == pytest.approx(2.0)
    assert discernment(1.0) == 0.0


def test_level_weighted_average_gives_each_level_equal_weight():
    values = [("character", 2.0), ("character", 4.0), ("word", 1.0), ("sentence", 0.0), ("sentence", 0.0),
              ("sentence", 3.0)]
    assert level_weighted_average(values) == pytest.approx((3.0 + 1.0 + 1.0) / 3)


def test_analyse_kind_and_summary_with_weights():
    data = KindInput(
        "typo:minor", "character",
        original={"fluency": [5, 5, 4, 5, 4, 5], "relevance": [4, 4, 4, 4, 4, 4]},
        perturbed={"fluency": [3, 2, 2, 4, 1, 3], "relevance": [4, 4, 4, 4, 4, 4]},
    )
    result = analyse_kind(data, {"fluency": 3, "relevance": 1})
    p_fluency = sps.wilcoxon([2, 3, 2, 1, 3, 2], alternative="greater", method="asymptotic", correction=True).pvalue
    assert result.tests["fluency"].p == pytest.approx(p_fluency)
    assert result.tests["relevance"].p == 1.0 and result.n_zero == 1
    assert result.p_hmp == pytest.approx(2 / (1 / p_fluency + 1))
    assert result.p_hmp_ew == pytest.approx(1 / (0.75 / p_fluency + 0.25))
    assert pytest.approx(math.log(result.p_hmp) / math.log(0.05)) == result.D
    other = KindResult("sentence-reorder:minor", "sentence", 6, 0, {}, 0.5, 0.5, None, None, 0.3, None)
    summary = summarize([result, other])
    assert summary.D_avg == pytest.approx((result.D + 0.3) / 2)
    assert summary.D_min == pytest.approx(0.3)
    assert summary.D_avg_ew == pytest.approx(result.D_ew)  # the kind without weights is left out of *_ew
