"""The human study's statistics: every expected value below is worked out by hand in the comments (no database)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from corpus.protocols import opennlgauge as protocol
from stats.accuracy import EXPLANATION_ROWS, FLAGS, SPAN_COLUMNS, AccuracyMatrix
from stats.agreement import krippendorff_alpha_nominal, observed_agreement
from stats.bootstrap import Interval, bootstrap_ratio_cis_grouped
from stats.calibration import severity_calibration
from stats.errors import StatsError
from stats.overlap import PRF, char_prf, match_spans, overlap_prf, overlap_prf_arrays, span_prf

approx = pytest.approx


# --------------------------------------------------------------------------------------------- Table 4


def _paper_matrix(rows: dict[str, tuple[int, int, int, int]]) -> AccuracyMatrix:
    # the paper prints the columns as Error, No span given, Not an error, Hallucination
    matrix = AccuracyMatrix()
    for e, counts in rows.items():
        matrix.counts[e] = dict(zip(SPAN_COLUMNS, counts, strict=True))
    return matrix


def test_accuracy_matrix_reproduces_paper_table4_ensemble():
    # OpeNLGauge_ens block of Table 4.
    m = _paper_matrix({
        "correct": (218, 9, 3, 0), "partially_correct": (41, 0, 0, 1), "incomplete": (20, 0, 1, 0),
        "vague": (4, 2, 1, 0), "incorrect": (20, 3, 32, 1), "not_error": (0, 0, 10, 0),
    })
    # column totals 303, 14, 47, 2 -> 366
    assert [m.column_total(s) for s in SPAN_COLUMNS] == [303, 14, 47, 2]
    assert m.total == 366
    assert m.row_total("correct") == 230
    # Span OK = 303 / 366 = 0.8279 (paper: 83); Exp. correct = 230 / 366 = 0.6284 (paper: 63)
    assert m.span_ok == approx(303 / 366)
    assert round(100 * m.span_ok) == 83
    assert round(100 * m.exp_correct) == 63


def test_accuracy_matrix_reproduces_paper_table4_tigerscore():
    m = _paper_matrix({
        "correct": (8, 17, 0, 0), "partially_correct": (5, 2, 0, 0), "incomplete": (2, 2, 0, 0),
        "vague": (0, 3, 0, 0), "incorrect": (5, 16, 2, 0), "not_error": (1, 2, 0, 0),
    })
    # 21 / 65 = 32.3 % and 25 / 65 = 38.5 % (paper: 32 and 38)
    assert m.total == 65
    assert round(100 * m.span_ok) == 32
    assert round(100 * m.exp_correct) == 38


def test_accuracy_matrix_empty_has_no_rates():
    m = AccuracyMatrix()
    assert m.total == 0
    assert m.span_ok is None and m.exp_correct is None


def test_vocabulary_is_the_protocol_in_table4_order():
    # The paper's columns, which _paper_cells above relies on; every protocol verdict has a cell.
    assert SPAN_COLUMNS == ("error", "no_span", "not_error", "hallucination")
    assert sorted(SPAN_COLUMNS) == sorted(protocol.SPAN_VERDICT_VALUES)
    assert EXPLANATION_ROWS == protocol.EXPLANATION_VERDICT_VALUES
    assert FLAGS == protocol.FLAG_VALUES
    m = AccuracyMatrix()
    for e in protocol.EXPLANATION_VERDICT_VALUES:
        for s in protocol.SPAN_VERDICT_VALUES:
            m.counts[e][s] = 1
    assert m.total == len(protocol.EXPLANATION_VERDICT_VALUES) * len(protocol.SPAN_VERDICT_VALUES)
    # Span OK and Exp. correct count the protocol's headline verdicts: one column and one row of the grid.
    assert m.span_ok == approx(1 / len(protocol.SPAN_VERDICT_VALUES))
    assert m.exp_correct == approx(1 / len(protocol.EXPLANATION_VERDICT_VALUES))


# --------------------------------------------------------------------------------------------- bootstrap


def _one_group(counts, ratios, **options):
    """The intervals of one group: item count vectors as the (items, 1 group, columns) table."""
    table = np.asarray(counts, dtype=float)[:, None, :]
    return bootstrap_ratio_cis_grouped(table, ratios, **options)[0]


def test_bootstrap_ratio_cis_is_reproducible_with_a_seed():
    counts = [[4, 3, 2], [4, 2, 1], [1, 0, 0], [3, 3, 3]]
    ratios = {"ok": (1, 0), "correct": (2, 0)}
    first = _one_group(counts, ratios, seed=7)
    again = _one_group(counts, ratios, seed=7)
    other = _one_group(counts, ratios, seed=8)
    assert first == again
    assert first != other


def test_bootstrap_ratio_cis_degenerate_when_items_are_alike():
    # every item is 1 Error out of 2 judged spans: any resample gives 2k/4k... = 0.5 exactly
    cis = _one_group([[2, 1], [2, 1], [2, 1]], {"ok": (1, 0)}, seed=0)
    assert cis["ok"] == Interval(0.5, 0.5)


def test_bootstrap_ratio_cis_two_items_span_the_extremes():
    # items A = (1 judged, 1 ok), B = (1 judged, 0 ok). A resample of two items is AA (ratio 1, p = 1/4),
    # AB/BA (0.5, p = 1/2) or BB (0, p = 1/4): 25 % of the mass sits on each end, so the 2.5th and 97.5th
    # percentiles are exactly 0 and 1.
    cis = _one_group([[1, 1], [1, 0]], {"ok": (1, 0)}, n_resamples=2000, seed=3)
    assert cis["ok"] == Interval(0.0, 1.0)


def test_bootstrap_ratio_cis_none_without_items_or_denominators():
    assert bootstrap_ratio_cis_grouped(np.zeros((0, 1, 2)), {"ok": (1, 0)}) == [{"ok": None}]
    assert _one_group([[0, 0], [0, 0]], {"ok": (1, 0)}) == {"ok": None}


# --------------------------------------------------------------------------------------------- agreement


# Units x (Error, Not an error) value counts:
#   u1 (2, 0)  two coders, both Error
#   u2 (1, 1)  two coders disagree
#   u3 (0, 2)  two coders, both Not an error
#   u4 (2, 1)  three coders: Error, Error, Not an error
#   u5 (1, 0)  one coder only: no pairs, ignored
ALPHA_UNITS = [[2, 0], [1, 1], [0, 2], [2, 1], [1, 0]]


def test_krippendorff_alpha_nominal_matches_hand_computation():
    # Coincidences o_ck = sum_u n_uc n_uk / (m_u - 1), o_cc = sum_u n_uc (n_uc - 1) / (m_u - 1):
    #   o_EE = 2 (u1) + 2*1/2 (u4) = 3;  o_EN = o_NE = 1 (u2) + 2*1/2 (u4) = 2;  o_NN = 2 (u3)
    #   n = 9, n_E = 5, n_N = 4
    #   D_o = (o_EN + o_NE) / n = 4/9;  D_e = 2 n_E n_N / (n (n - 1)) = 40/72 = 5/9
    #   alpha = 1 - (4/9) / (5/9) = 1 - 4/5 = 0.2
    assert krippendorff_alpha_nominal(ALPHA_UNITS) == approx(0.2)


def test_krippendorff_alpha_nominal_perfect_and_undefined():
    assert krippendorff_alpha_nominal([[2, 0], [0, 2]]) == approx(1.0)
    # one category only: expected disagreement 0, alpha is 0/0
    assert krippendorff_alpha_nominal([[2, 0], [3, 0]]) is None
    # no unit with two coders
    assert krippendorff_alpha_nominal([[1, 0], [0, 1]]) is None
    assert krippendorff_alpha_nominal([]) is None


def test_observed_agreement_counts_coder_pairs_within_units():
    # pairs: u1 1 (agree), u2 1 (disagree), u3 1 (agree), u4 3 (E-E agrees, two E-N disagree), u5 0
    # agreeing 1 + 0 + 1 + 1 = 3 of 6 pairs = 0.5
    assert observed_agreement(ALPHA_UNITS) == approx(0.5)
    assert observed_agreement([[1, 0]]) is None


# --------------------------------------------------------------------------------------------- span overlap


def test_match_spans_exact_and_overlap_skip_unlocated():
    predicted = [(0, 5), (10, 15), None]
    reference = [(0, 5), (10, 14)]
    assert match_spans(predicted, reference, mode="exact") == [(0, 0)]
    assert sorted(match_spans(predicted, reference, mode="overlap")) == [(0, 0), (1, 1)]


def test_match_spans_overlap_is_optimal_where_greedy_fails():
    # P1 = (0, 10) overlaps R1 = (4, 12) by 6 and R2 = (0, 2) by 2; P2 = (8, 12) overlaps only R1 (by 4).
    # Greedy by largest overlap takes P1-R1 and leaves P2 alone (1 match); the maximum matching is
    # P1-R2 + P2-R1 (2 matches).
    pairs = match_spans([(0, 10), (8, 12)], [(4, 12), (0, 2)], mode="overlap")
    assert sorted(pairs) == [(0, 1), (1, 0)]


def test_match_spans_ties_are_one_to_one():
    # two identical predictions for one reference error: one match only
    assert len(match_spans([(0, 5), (0, 5)], [(0, 5)], mode="exact")) == 1
    prf = span_prf([([(0, 5), (0, 5)], [(0, 5)])], mode="exact")
    # P = 1/2, R = 1/1, F1 = 2*1 / (2 + 1) = 2/3
    assert (prf.precision, prf.recall, prf.f1) == (0.5, 1.0, approx(2 / 3))


def test_match_spans_prefers_the_larger_overlap_among_equal_sized_matchings():
    # (0, 10) overlaps (0, 2) by 2 and (3, 10) by 7: one match either way, the larger overlap wins
    assert match_spans([(0, 10)], [(0, 2), (3, 10)], mode="overlap") == [(0, 1)]


OVERLAP_ITEMS = [
    ([(0, 5), (10, 15), None], [(0, 5), (10, 14)]),  # one exact, two overlapping, one prediction unlocated
    ([], [(3, 8)]),  # the evaluator missed an error
    ([(20, 25)], []),  # a false positive
]


def test_span_prf_exact_and_overlap_micro_averaged():
    exact = span_prf(OVERLAP_ITEMS, mode="exact")
    # matched 1, predicted 3 + 0 + 1 = 4, reference 2 + 1 + 0 = 3
    assert (exact.matched, exact.n_predicted, exact.n_reference) == (1, 4, 3)
    # P = 1/4, R = 1/3, F1 = 2/7
    assert exact.precision == 0.25 and exact.recall == approx(1 / 3) and exact.f1 == approx(2 / 7)
    overlap = span_prf(OVERLAP_ITEMS, mode="overlap")
    # matched 2: P = 2/4, R = 2/3, F1 = 4/7; one reference error missed
    assert overlap.precision == 0.5 and overlap.recall == approx(2 / 3) and overlap.f1 == approx(4 / 7)
    assert overlap.missed == 1


def test_char_prf_counts_covered_characters():
    # item 1: predicted {0..4, 10..14} = 10 chars, reference {0..4, 10..13} = 9, both 5 + 4 = 9
    # item 2: predicted 0, reference 5;  item 3: predicted 5, reference 0
    # totals: both 9, predicted 15, reference 14 -> P = 9/15, R = 9/14, F1 = 18/29
    prf = char_prf(OVERLAP_ITEMS)
    assert (prf.matched, prf.n_predicted, prf.n_reference) == (9, 15, 14)
    assert prf.precision == approx(0.6) and prf.recall == approx(9 / 14) and prf.f1 == approx(18 / 29)


def test_char_prf_merges_overlapping_predictions():
    # (0, 6) and (4, 10) cover 10 characters, not 12; reference (5, 8) = 3, all covered
    prf = char_prf([([(0, 6), (4, 10)], [(5, 8)])])
    assert (prf.matched, prf.n_predicted, prf.n_reference) == (3, 10, 3)


def test_span_prf_evaluator_without_spans():
    prf = span_prf([([], [(0, 3)]), ([], [])], mode="overlap")
    # nothing predicted: precision undefined, recall 0/1, F1 = 0 / (0 + 1) = 0
    assert prf.precision is None and prf.recall == 0.0 and prf.f1 == 0.0
    assert span_prf([([], [])], mode="exact").f1 is None


def test_match_spans_rejects_unknown_mode():
    with pytest.raises(StatsError):
        match_spans([(0, 1)], [(0, 1)], mode="fuzzy")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- calibration


def test_severity_calibration_matches_hand_computation():
    # (machine, human, count): differences machine - human are 0, 0, +1, +2, -1
    cal = severity_calibration([(3, 3, 2), (5, 4, 1), (4, 2, 1), (2, 3, 1)])
    assert cal.n == 5
    # mean signed difference 2/5 = 0.4; MAE (0 + 0 + 1 + 2 + 1) / 5 = 0.8; same severity 2/5
    assert cal.mean_signed_difference == approx(0.4)
    assert cal.mean_absolute_error == approx(0.8)
    assert cal.exact_share == approx(0.4)
    # Spearman with ties: machine [3, 3, 5, 4, 2] -> ranks [2.5, 2.5, 5, 4, 1];
    # human [3, 3, 4, 2, 3] -> ranks [3, 3, 5, 1, 3]. Deviations from mean 3: dx = [-.5, -.5, 2, 1, -2],
    # dy = [0, 0, 2, -2, 0]; sum dx dy = 4 - 2 = 2; sum dx^2 = 9.5; sum dy^2 = 8; rho = 2 / sqrt(76)
    assert cal.spearman == approx(2 / math.sqrt(76))
    assert cal.confusion[2][2] == 2 and cal.confusion[4][3] == 1 and cal.confusion[3][1] == 1
    assert cal.confusion[1][2] == 1
    assert sum(map(sum, cal.confusion)) == 5


def test_severity_calibration_empty_and_out_of_range():
    cal = severity_calibration([])
    assert cal.n == 0 and cal.mean_absolute_error is None and cal.spearman is None
    with pytest.raises(StatsError):
        severity_calibration([(0, 3, 1)])


def test_overlap_prf_arrays_agrees_with_the_item_by_item_count():
    import random

    rng = random.Random(5)
    items = []
    for _ in range(300):
        def spans(k):
            out = []
            for _ in range(k):
                if rng.random() < 0.1:
                    out.append(None)
                else:
                    start = rng.randrange(0, 60)
                    out.append((start, start + rng.randint(1, 12)))
            return out

        items.append((spans(rng.randint(0, 4)), spans(rng.randint(0, 4))))
    expected = overlap_prf(items)
    assert expected.exact == span_prf(items, mode="exact")
    assert expected.overlap == span_prf(items, mode="overlap")
    assert expected.chars == char_prf(items)

    def table(side):
        rows = [(i, *(s if s is not None else (-1, -1))) for i, pair in enumerate(items) for s in pair[side]]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    assert overlap_prf_arrays(table(0), table(1)) == expected


def test_overlap_prf_arrays_hand_computed_and_empty_sides():
    # OVERLAP_ITEMS as rows (item, start, end); the unlocated prediction has start -1
    pred = np.array([[0, 0, 5], [0, 10, 15], [0, -1, -1], [2, 20, 25]])
    ref = np.array([[0, 0, 5], [0, 10, 14], [1, 3, 8]])
    counts = overlap_prf_arrays(pred, ref)
    assert (counts.exact.matched, counts.overlap.matched, counts.chars.matched) == (1, 2, 9)
    assert (counts.exact.n_predicted, counts.exact.n_reference) == (4, 3)
    none = overlap_prf_arrays(np.zeros((0, 3)), ref)
    assert none.overlap == PRF(0, 0, 3) and none.chars == PRF(0, 0, 5 + 4 + 5)
