"""Source comparison figures against values worked out by hand on small cases (no database)."""

from __future__ import annotations

import math

import pytest

from analytics.compare.metrics import CatSpan as S
from analytics.compare.metrics import compare, factgenie_chars

PREDICTED = {
    "A": [S(0, 5, "x"), S(10, 14, "y")],
    "C": [S(3, 7, "x")],
    "D": [S(0, 2, "x")],  # the reference never annotated D: left out
}
REFERENCE = {
    "A": [S(0, 5, "x"), S(12, 18, "x")],
    "B": [S(2, 6, "y")],  # PREDICTED_WITH_B says B has no error
    "C": [],
}
PREDICTED_WITH_B = {**PREDICTED, "B": []}


def _close(scores, p, r, f1):
    assert scores.precision == pytest.approx(p) and scores.recall == pytest.approx(r) and scores.f1 == pytest.approx(f1)


def test_compare_soft_mode_by_hand():
    result = compare(PREDICTED_WITH_B, REFERENCE)
    assert result.outputs == 3  # A, B, C: D has no reference annotation
    _close(result.span_exact, 1 / 3, 1 / 3, 1 / 3)
    _close(result.span_overlap, 2 / 3, 2 / 3, 2 / 3)
    # characters: predicted 5+4 (A) + 4 (C) = 13, reference 5+6 (A) + 4 (B) = 15, both 5 + 2 = 7
    _close(result.char, 7 / 13, 7 / 15, 0.5)
    # factgenie keeps only A (B and C have spans on one side): 7 of 9 and 7 of 11
    _close(result.char_factgenie, 7 / 9, 7 / 11, 0.7)
    # error counts per output: (2, 2), (0, 1), (1, 0)
    assert result.pearson_counts == pytest.approx(0.5)


def test_compare_category_mode_by_hand():
    result = compare(PREDICTED_WITH_B, REFERENCE, by_category=True)
    _close(result.span_exact, 1 / 3, 1 / 3, 1 / 3)
    _close(result.span_overlap, 1 / 3, 1 / 3, 1 / 3)  # 10-14 (y) no longer pairs with 12-18 (x)
    _close(result.char, 5 / 13, 5 / 15, 10 / 28)
    _close(result.char_factgenie, 5 / 9, 5 / 11, 0.5)
    # counts per (output, category): x: (1,2) (0,0) (1,0); y: (1,0) (0,1) (0,0)
    assert result.pearson_counts == pytest.approx(0.5 / math.sqrt(1.5 * 3.5))
    assert set(result.per_category) == {"x", "y"}
    _close(result.per_category["x"].span_exact, 1 / 2, 1 / 2, 1 / 2)
    assert result.per_category["y"].span_exact.precision == 0


def test_factgenie_chars_sum_span_lengths_where_ours_take_the_union():
    predicted = {"E": [S(0, 4), S(2, 6)]}
    reference = {"E": [S(0, 6)]}
    ours = compare(predicted, reference)
    _close(ours.char, 1, 1, 1)
    # factgenie: 8 predicted characters (2-3 counted twice), 6 of them matched once each
    _close(factgenie_chars(predicted, reference, ["E"], by_category=False), 6 / 8, 1, 2 * 0.75 / 1.75)


def test_compare_unlocated_spans_count_but_never_match_and_empty_sides_are_defined():
    result = compare({"A": [S(None, None), S(0, 3)]}, {"A": [S(0, 3)]})
    _close(result.span_exact, 1 / 2, 1, 2 / 3)
    none = compare({"A": []}, {"A": []})
    assert none.outputs == 1 and none.span_exact.precision is None and none.span_exact.f1 is None
    assert none.pearson_counts is None  # constant counts: no correlation
