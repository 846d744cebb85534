"""Ranking evaluators: the randomization test against scipy and an exact enumeration, Holm, rank ranges."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from stats.errors import StatsError
from stats.ranking import PairTest, holm, paired_randomization, rank, rank_ranges

RESAMPLES = 10_000


def _table(oks: list[int], judged: int = 4) -> dict[object, tuple[float, float]]:
    return {output: (ok, judged) for output, ok in enumerate(oks)}


def _pairs(table: dict[object, tuple[float, float]]) -> np.ndarray:
    return np.array([table[k] for k in sorted(table)], dtype=float)


def _counts(*tables: dict[object, tuple[float, float]]) -> np.ndarray:
    """The engine's (outputs, evaluators, 2) array, zeros where an evaluator has no count on an output."""
    outputs = sorted(set().union(*tables))
    return np.array([[table.get(o, (0, 0)) for table in tables] for o in outputs], dtype=float).reshape(
        len(outputs), len(tables), 2
    )


def _exact_p(a: np.ndarray, b: np.ndarray) -> float:
    """The p-value over all 2**n swap patterns, outputs either side did not judge left out."""
    keep = (a[:, 1] > 0) & (b[:, 1] > 0)
    a, b = a[keep], b[keep]
    observed = abs(a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum())
    extreme = 0
    for swaps in itertools.product((False, True), repeat=len(a)):
        mask = np.array(swaps)[:, None]
        x, y = np.where(mask, b, a), np.where(mask, a, b)
        extreme += abs(x[:, 0].sum() / x[:, 1].sum() - y[:, 0].sum() / y[:, 1].sum()) >= observed - 1e-12
    return extreme / 2 ** len(a)


# a ~ b, b ~ c, a > c at alpha 0.05 after Holm (worked out below); 30 outputs of 4 judged spans each
CHAIN_A = [4] * 26 + [3] * 4
CHAIN_B = [4] * 22 + [3] * 8
CHAIN_C = [4] * 18 + [3] * 12


def _mc_tolerance(p: float) -> float:
    """Four standard errors of the difference of two independent Monte Carlo estimates of p."""
    return 4 * math.sqrt(2 * p * (1 - p) / RESAMPLES) + 2 / RESAMPLES


def test_paired_randomization_p_equals_scipy_permutation_test():
    a, b = _pairs(_table(CHAIN_A)), _pairs(_table(CHAIN_B))
    # b has uneven denominators too, so the statistic is a ratio of sums and not a mean of ratios
    b[::3] += [2, 2]
    rows = np.concatenate([a, b])
    n = len(a)

    def statistic(x, y, axis=-1):
        x, y = x.astype(int), y.astype(int)
        ratio_x = rows[x, 0].sum(axis=axis) / rows[x, 1].sum(axis=axis)
        ratio_y = rows[y, 0].sum(axis=axis) / rows[y, 1].sum(axis=axis)
        return np.abs(ratio_x - ratio_y)

    # x holds a's row numbers, y b's: a "samples" permutation swaps x[i] and y[i], i.e. a's and b's output i
    reference = sps.permutation_test(
        (np.arange(n), np.arange(n) + n), statistic, permutation_type="samples", vectorized=True,
        n_resamples=RESAMPLES, alternative="greater", random_state=np.random.default_rng(7),
    )
    [ours] = paired_randomization([(a, b)], n_resamples=RESAMPLES, seed=0)
    assert ours.n_outputs == 30
    assert ours.difference == pytest.approx(a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum())
    assert 0.02 < reference.pvalue < 0.5  # a p-value in the range where a wrong test would show
    assert ours.p == pytest.approx(reference.pvalue, abs=_mc_tolerance(reference.pvalue))


def test_paired_randomization_p_equals_exact_enumeration_of_all_swaps():
    a = np.array([[3, 4], [2, 3], [4, 4], [1, 2], [3, 5], [2, 2], [4, 6], [0, 1], [3, 3], [2, 4]], dtype=float)
    b = np.array([[2, 4], [2, 3], [3, 4], [0, 2], [3, 5], [1, 2], [2, 6], [0, 1], [1, 3], [2, 4]], dtype=float)
    exact = _exact_p(a, b)
    [ours] = paired_randomization([(a, b)], n_resamples=RESAMPLES, seed=3)
    assert ours.p == pytest.approx(exact, abs=_mc_tolerance(exact))


def test_paired_randomization_of_many_pairs_at_once_gives_each_its_exact_p():
    # Four evaluators over 12 outputs, as the ranking tests them: every pair in one call, on one draw of swaps.
    rng = np.random.default_rng(11)
    judged = rng.integers(1, 6, size=(12, 4))
    ok = rng.binomial(judged, [0.9, 0.7, 0.5, 0.5])
    judged[[0, 5], 3] = 0  # the fourth was not judged on two outputs: its pairs leave them out
    ok[:, 3] = np.minimum(ok[:, 3], judged[:, 3])
    counts = np.stack([ok, judged], axis=2).astype(float)
    pairs = [(counts[:, i], counts[:, j]) for i, j in itertools.combinations(range(4), 2)]
    # a pair with the same counts everywhere, a shorter one, and one sharing no output ride along
    pairs += [(counts[:, 2], counts[:, 2]), (counts[:7, 0], counts[:7, 2]), (counts[:1, 3], counts[:1, 0])]
    results = paired_randomization(pairs, n_resamples=RESAMPLES, seed=4)
    assert len(results) == len(pairs)
    exacts = []
    for (a, b), ours in zip(pairs[:-1], results[:-1], strict=True):
        exact = _exact_p(a, b)
        exacts.append(exact)
        shared = (a[:, 1] > 0) & (b[:, 1] > 0)
        assert ours.n_outputs == np.count_nonzero(shared)
        assert ours.difference == pytest.approx(
            a[shared, 0].sum() / a[shared, 1].sum() - b[shared, 0].sum() / b[shared, 1].sum()
        )
        assert ours.p == pytest.approx(exact, abs=_mc_tolerance(exact))
    assert results[-4].n_outputs == 10  # the fourth evaluator's pairs drop its two unjudged outputs
    assert results[6].p == 1.0 and results[6].difference == 0  # nothing to swap
    assert results[-1] == PairTest(None, None, 0)
    assert min(exacts[:6]) < 0.01 and max(exacts[:6]) > 0.1  # p-values where a wrong test would show


def test_paired_randomization_is_seeded_and_never_zero():
    a, b = _pairs(_table([4] * 30)), _pairs(_table([0] * 30))
    first = paired_randomization([(a, b), (b, a)], n_resamples=500, seed=5)
    assert first == paired_randomization([(a, b), (b, a)], n_resamples=500, seed=5)
    # no swap pattern reaches a difference of 1 except the observed one
    assert [t.p for t in first] == pytest.approx([1 / 501, 1 / 501])
    assert [t.difference for t in first] == [1.0, -1.0]


def test_paired_randomization_drops_outputs_one_side_did_not_judge():
    a = np.array([[1, 2], [3, 3], [0, 0]], dtype=float)
    b = np.array([[2, 2], [0, 0], [1, 1]], dtype=float)
    [result] = paired_randomization([(a, b)], n_resamples=100)
    assert result.n_outputs == 1 and result.difference == pytest.approx(0.5 - 1.0)
    assert paired_randomization([(a[1:2], b[1:2])])[0].p is None


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3*0.01 = 0.03, 2*0.03 = 0.06, max(0.06, 1*0.04) = 0.06; None is not a test
    assert holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]


def test_rank_ranges_by_hand():
    assert rank_ranges(3, set()) == ["1-3", "1-3", "1-3"]
    assert rank_ranges(3, {(0, 1), (0, 2)}) == ["1", "2-3", "2-3"]
    assert rank_ranges(3, {(0, 2)}) == ["1-2", "1-3", "2-3"]
    assert rank_ranges(3, {(0, 2), (1, 2)}) == ["1-2", "1-2", "3"]


def test_rank_all_equal_evaluators_share_one_range():
    same = _table([3, 2, 4, 1] * 5)
    result = rank([0.5, 0.5, 0.5], _counts(same, same, same), n_resamples=2000)
    assert [result.ranks[k] for k in range(3)] == ["1-3", "1-3", "1-3"]
    assert all(p.test.p == 1.0 and p.p_holm == 1.0 and p.test.difference == 0 for p in result.pairs)


def test_rank_one_clearly_better_evaluator_stands_alone():
    best, mid, low = _table([4] * 30), _table([2] * 30), _table([2] * 16 + [1, 3] * 7)
    values = [0.5, 1.0, 0.5]
    result = rank(values, _counts(mid, best, low), n_resamples=2000)  # given out of order on purpose
    assert result.order == [1, 0, 2]  # a tie keeps the order given
    assert result.ranks == {1: "1", 0: "2-3", 2: "2-3"}


def test_rank_chain_a_like_b_like_c_but_a_above_c():
    tables = [_table(CHAIN_A), _table(CHAIN_B), _table(CHAIN_C)]
    values = [sum(CHAIN_A) / 120, sum(CHAIN_B) / 120, sum(CHAIN_C) / 120]
    result = rank(values, _counts(*tables))
    by_pair = {(p.a, p.b): p for p in result.pairs}
    assert by_pair[(0, 2)].p_holm < 0.05  # a > c: about 0.0075 raw, x3
    assert by_pair[(0, 1)].p_holm > 0.05 and by_pair[(1, 2)].p_holm > 0.05
    assert result.ranks == {0: "1-2", 1: "1-3", 2: "2-3"}


def test_rank_evaluator_without_a_figure_has_no_rank_and_no_test():
    result = rank([0.5, None], _counts(_table([2] * 5), {}), n_resamples=100)
    assert result.order == [0, 1] and result.ranks == {0: "1", 1: None} and result.pairs == []


def test_rank_tests_only_shared_outputs_and_refuses_counts_of_another_shape():
    # a judged outputs 0-9, b outputs 5-14: their one pair compares the five outputs both were judged on
    a = {o: (4.0, 4.0) for o in range(10)}
    b = {o: (1.0, 4.0) for o in range(5, 15)}
    result = rank([1.0, 0.25], _counts(a, b))
    [pair] = result.pairs
    assert pair.test.n_outputs == 5 and pair.test.difference == pytest.approx(0.75)
    # swapping k of the five moves the difference to (15 - 6k) / 20: only k = 0 and k = 5 reach 0.75
    assert pair.test.p == pytest.approx(2 / 2**5, abs=_mc_tolerance(2 / 2**5))
    with pytest.raises(StatsError):
        rank([1.0, 0.25, 0.5], _counts(a, b))
