"""stats.pairwise on hand-computed cases: comparisons within and across screens, sign tests, Bradley-Terry against
choix, position bias and marking consistency."""

from __future__ import annotations

import choix
import numpy as np
import pytest

from stats.errors import StatsError
from stats.pairwise import (
    Judged,
    bradley_terry,
    check_counts,
    comparisons,
    consistency,
    pairwise_results,
    position_bias,
    sign_test,
)


def _j(system, segment, score, unit=None, position=None, text="", spans=(), rater="r1"):
    return Judged(system=system, segment=segment, rater=rater, score=score, unit=unit, position=position, text=text,
                  spans=spans)


def test_pairs_shown_together_compare_on_their_screens_only_and_the_others_on_the_means_of_a_segment():
    judged = [
        _j("X", 1, 1.0, unit="u1", position=1), _j("Y", 1, 0.0, unit="u1", position=2),
        _j("X", 1, 3.0, unit="u2", position=1), _j("Z", 1, 2.0, unit="u2", position=2),  # X rated twice
        _j("Y", 2, 0.0, unit="u3"), _j("Z", 2, 0.0, unit="u3"),
    ]
    found, together = comparisons(judged)
    assert together == {("X", "Y"), ("X", "Z"), ("Y", "Z")}
    assert sorted(found) == [("X", "Y", 1, 1.0, 0.0), ("X", "Z", 1, 3.0, 2.0), ("Y", "Z", 2, 0.0, 0.0)]
    apart = [_j("X", 1, 1.0, unit="u1"), _j("Y", 1, 2.0, unit="u1"), _j("X", 1, 3.0, unit="u2"),
             _j("Z", 1, 1.0, unit="u2"), _j("W", 1, 0.5, unit="u3"), _j("V", 1, 0.0, unit="u3")]
    found, _ = comparisons(apart)
    assert ("W", "X", 1, 0.5, 2.0) in found  # X's two outputs on segment 1 count as their mean, (1 + 3) / 2


def test_sign_test_is_the_exact_binomial_and_none_without_a_decision():
    assert sign_test(4, 0) == pytest.approx(0.125)  # 2 * 0.5**4
    assert sign_test(2, 1) == pytest.approx(1.0)
    assert sign_test(0, 0) is None


def test_bradley_terry_agrees_with_choix_on_the_same_objective():
    wins = np.array([[0, 7, 3, 5], [2, 0, 6, 1], [4, 1, 0, 8], [0, 3, 2, 0]], dtype=float)
    data = [(i, j) for i in range(4) for j in range(4) for _ in range(int(wins[i, j]))]
    ours = bradley_terry(wins, prior=0.01)
    theirs = choix.opt_pairwise(4, data, alpha=0.01, tol=1e-10)
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours.sum() == pytest.approx(0.0, abs=1e-8)  # the prior centres the strengths
    assert ours[0] > ours[3]  # system 0 beat 3 five times to none


def test_bradley_terry_of_two_systems_is_the_log_odds_when_the_prior_is_tiny():
    s = bradley_terry(np.array([[0, 3], [1, 0]], dtype=float), prior=1e-9)
    assert s[0] - s[1] == pytest.approx(np.log(3), abs=1e-4)
    with pytest.raises(StatsError):
        bradley_terry(np.zeros((2, 2)), prior=0)


def test_position_bias_counts_decided_screens_with_both_columns_known():
    judged = [
        _j("A", 1, 1.0, unit="u1", position=1), _j("B", 1, 2.0, unit="u1", position=2),  # first wins
        _j("A", 2, 3.0, unit="u2", position=1), _j("B", 2, 2.0, unit="u2", position=2),  # second wins
        _j("A", 3, 1.0, unit="u3", position=1), _j("B", 3, 1.0, unit="u3", position=2),  # a tie
        _j("A", 4, 1.0, unit="u4", position=None), _j("B", 4, 0.0, unit="u4", position=None),  # columns unknown
        _j("A", 5, 0.0, unit="u5", position=2), _j("B", 5, 5.0, unit="u5", position=1),  # second wins
    ]
    bias = position_bias(judged)
    assert (bias.hits, bias.n) == (1, 3) and bias.share == pytest.approx(1 / 3)
    assert 0 < bias.ci_low < 1 / 3 < bias.ci_high < 1


def test_consistency_asks_whether_an_error_marked_in_one_output_is_marked_where_its_text_recurs():
    a = _j("A", 1, 1, unit="u1", text="Die Katze saß.", spans=((4, 9),))
    b = _j("B", 1, 1, unit="u1", text="Eine Katze saß.", spans=((5, 10),))  # the same word marked: consistent
    c = _j("C", 1, 0, unit="u2", text="Die Katze lag.", spans=())  # "Katze" there, unmarked: not consistent
    d = _j("D", 1, 0, unit="u2", text="Der Hund lag.", spans=((12, 13),))  # "." has no letter: not a candidate
    together, others = consistency([a, b, c, d])
    assert (together.hits, together.n) == (2, 2)  # A's Katze in B, B's Katze in A
    assert (others.hits, others.n) == (0, 2)  # A's and B's Katze in C


def test_pairwise_results_orders_pairs_by_strength_and_adjusts_with_holm():
    judged = []
    for seg in range(8):  # A beats B on every screen; C and D tie on every screen
        judged += [_j("A", seg, 0.0, unit=("ab", seg), position=1), _j("B", seg, 1.0, unit=("ab", seg), position=2),
                   _j("C", seg, 1.0, unit=("cd", seg), position=1), _j("D", seg, 1.0, unit=("cd", seg), position=2)]
    result = pairwise_results(judged, n_resamples=50, seed=1)
    ab = next(p for p in result.pairs if {p.a, p.b} == {"A", "B"})
    assert (ab.a, ab.b, ab.a_better, ab.b_better, ab.ties, ab.shown_together) == ("A", "B", 8, 0, 0, True)
    assert ab.a_win_rate == 1.0 and ab.p_value == pytest.approx(2 * 0.5**8)
    cd = next(p for p in result.pairs if {p.a, p.b} == {"C", "D"})
    assert (cd.ties, cd.a_win_rate, cd.p_value) == (8, None, None)
    assert result.pairs[0].shown_together and not result.pairs[-1].shown_together
    decided = sorted(p.p_value for p in result.pairs if p.p_value is not None)
    assert min(p.p_holm for p in result.pairs if p.p_holm is not None) == pytest.approx(
        min(1.0, len(decided) * decided[0]))
    top = result.systems[0]
    assert top.system == "A" and top.rank_range == (1, 1) and top.ci_low <= top.strength <= top.ci_high
    assert (result.position_bias.hits, result.position_bias.n) == (8, 8)


def test_checks_are_counted_per_rater_in_natural_order():
    counts = check_counts([("rater10", True), ("rater2", False), ("rater2", True), ("rater10", True)])
    assert [(c.rater, c.found, c.missed) for c in counts] == [("rater2", 1, 1), ("rater10", 2, 0)]


def test_preferences_compare_only_the_outputs_their_screen_showed():
    """A rater saw A beside B and B beside C on one segment: scores infer A against C from the rater's means, a
    preference (apart=False) does not."""
    judged = [Judged("A", "s1", "r", 0.0, unit="u1", position=1), Judged("B", "s1", "r", 1.0, unit="u1", position=2),
              Judged("B", "s1", "r", 0.0, unit="u2", position=1), Judged("C", "s1", "r", 1.0, unit="u2", position=2)]
    inferred, _ = comparisons(judged)
    shown, together = comparisons(judged, apart=False)
    assert sorted((a, b) for a, b, *_ in inferred) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert sorted((a, b) for a, b, *_ in shown) == [("A", "B"), ("B", "C")] and together == {("A", "B"), ("B", "C")}
    pairs = pairwise_results(judged, n_resamples=5, apart=False).pairs
    assert {(p.a, p.b) for p in pairs} == {("A", "B"), ("B", "C")} and all(p.shown_together for p in pairs)
