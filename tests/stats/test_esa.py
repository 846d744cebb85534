"""ESA statistics on hand-computed data: means, intervals and ranks, severities, agreement, pre-fill outcomes
and the two arms."""

from __future__ import annotations

import pytest

from stats.esa import (
    ESA,
    ESA_AI,
    Prefilled,
    Rating,
    Span,
    arm_comparison,
    prefill_outcomes,
    rater_agreement,
    severity_counts,
    system_ranking,
)


def _r(system, segment, rater, score, spans=(), arm=ESA, seconds=0.0, spans_ms=None):
    return Rating(system=system, segment=segment, rater=rater, score=score, spans=tuple(spans), arm=arm,
                  seconds=seconds, spans_ms=spans_ms)


def test_system_means_intervals_and_a_clear_ranking():
    # A scores 90 on every one of 12 segments; B 42 and 40 on alternate segments, C 45 and 39 (C - B: +3, -1,
    # a mean of 1 whose sign a coin flips often enough): A is first beyond doubt, B and C cannot be told apart.
    ratings = [_r("A", g, "r1", 90) for g in range(12)]
    ratings += [_r("B", g, "r1", 40 if g % 2 else 42) for g in range(12)]
    ratings += [_r("C", g, "r1", 39 if g % 2 else 45) for g in range(12)]
    ranking = system_ranking(ratings, n_resamples=200, rank_resamples=2000)
    by = {s.system: s for s in ranking.systems}
    assert [s.system for s in ranking.systems] == ["A", "C", "B"]
    assert by["A"].score == 90 and by["B"].score == 41 and by["C"].score == 42
    assert by["A"].ci_low == by["A"].ci_high == 90
    assert 40 <= by["B"].ci_low <= 41 <= by["B"].ci_high <= 42
    assert by["A"].rank_range == (1, 1)
    assert by["B"].rank_range == by["C"].rank_range == (2, 3)
    assert by["A"].ratings == 12 and by["A"].segments == 12
    pair = next(p for p in ranking.pairs if {p.a, p.b} == {"A", "B"})
    assert pair.a == "A" and pair.difference == pytest.approx(49) and pair.p_holm < 0.05 and pair.segments == 12


def test_a_system_compared_only_over_the_segments_both_have():
    ratings = [_r("A", 1, "r", 80), _r("A", 2, "r", 20), _r("B", 1, "r", 70)]
    ranking = system_ranking(ratings, n_resamples=50, rank_resamples=100)
    assert {s.system: s.score for s in ranking.systems} == {"A": 50, "B": 70}
    (pair,) = ranking.pairs
    assert (pair.a, pair.b, pair.segments, pair.difference) == ("B", "A", 1, pytest.approx(-10))


def test_spans_by_severity_with_missing_content():
    ratings = [
        _r("A", 1, "r", 60, [Span(0, 3, "minor"), Span(5, 9, "major"), Span(None, None, "major")]),
        _r("A", 2, "r", 90),
        _r("B", 1, "r", 50, [Span(0, 3, "minor")]),
    ]
    rows = {c.system: c for c in severity_counts(ratings)}
    assert (rows["A"].ratings, rows["A"].minor, rows["A"].major, rows["A"].missing) == (2, 1, 2, 1)
    assert rows["A"].per_rating == 1.5 and rows["all"].spans == 4 and rows["all"].ratings == 3


def test_agreement_on_scores_and_on_characters():
    # r1 and r2 on three outputs: scores 10/20, 50/40, 90/100 (Pearson 3200 / sqrt(3200 x 3466.7) = 0.9608,
    # Kendall 1); spans on output 1: r1 [0, 10) minor, r2 [5, 15) major: 5 shared characters of 10 + 10 -> F1 0.5,
    # with severity 0; missing content (B1) has no characters.
    ratings = [
        _r("A", 1, "r1", 10, [Span(0, 10, "minor")]), _r("A", 1, "r2", 20, [Span(5, 15, "major")]),
        _r("A", 2, "r1", 50), _r("A", 2, "r2", 40),
        _r("B", 1, "r1", 90, [Span(None, None, "minor")]), _r("B", 1, "r2", 100),
    ]
    agreed = rater_agreement(ratings)
    (pair,) = agreed.pairs
    assert (pair.a, pair.b, pair.outputs) == ("r1", "r2", 3)
    assert pair.scores.pearson == pytest.approx(0.96077, abs=1e-4) and pair.scores.kendall == pytest.approx(1.0)
    assert pair.char.f1 == pytest.approx(0.5) and pair.char_labelled.f1 == 0
    assert agreed.scores.n == 3


def test_what_became_of_the_prefilled_spans():
    items = [
        ([Prefilled(0, 4, "minor", Span(0, 4, "minor")),      # kept
          Prefilled(5, 9, "minor", Span(5, 9, "major")),      # re-graded
          Prefilled(10, 14, "major", None)], 1),              # deleted; one span added
        ([Prefilled(0, 4, "major", Span(0, 9, "minor"))], 2),  # resized and re-graded; two added
        ([], 0),
    ]
    out = prefill_outcomes(items)
    assert (out.outputs, out.prefilled, out.kept, out.deleted, out.resized, out.regraded, out.added) == \
        (3, 4, 1, 1, 1, 2, 3)
    assert out.kept_share == 0.25


def test_the_arms_side_by_side_and_paired_over_the_outputs_seen_both_ways():
    a1, a2, b1 = ("A", 1), ("A", 2), ("B", 1)
    ratings = [
        # output A1 seen both ways: ESA 60 with 2 spans, ESA^AI 70 with 1 span
        _r(*a1, "u", 60, [Span(0, 4, "minor"), Span(20, 24, "major")], ESA, seconds=40, spans_ms=30000),
        _r(*a1, "p", 70, [Span(0, 4, "minor")], ESA_AI, seconds=20, spans_ms=12000),
        # output A2 both ways: ESA 30 (1 span), ESA^AI 50 (3 spans)
        _r(*a2, "u", 30, [Span(0, 4, "major")], ESA, seconds=20, spans_ms=10000),
        _r(*a2, "p", 50, [Span(0, 4, "major"), Span(5, 9, "minor"), Span(None, None, "minor")], ESA_AI,
           seconds=30, spans_ms=None),
        # output B1 only in ESA^AI
        _r(*b1, "p", 90, [], ESA_AI, seconds=10, spans_ms=4000),
    ]
    machine = {a1: [(0, 4), (10, 14)], a2: [(0, 4)], b1: [(3, 5)]}
    kept = {a1: [(0, 4)], a2: [(0, 4)]}
    out = arm_comparison(ratings, machine=machine, kept=kept, n_resamples=200)
    esa, ai = out.arms
    assert (esa.arm, esa.ratings, esa.score, esa.spans, esa.minor, esa.major) == (ESA, 2, 45, 3, 1, 2)
    assert (ai.arm, ai.ratings, ai.outputs, ai.score, ai.spans) == (ESA_AI, 3, 3, 70, 4)
    assert esa.seconds_per_span == 20 and ai.seconds_per_span == 15 and esa.seconds_per_item == 30
    # the span phase counts only ratings the page timed: ESA 40 s / 3 spans; ESA^AI 16 s / 1 span
    assert esa.span_phase_seconds_per_span == pytest.approx(40 / 3) and ai.span_phase_seconds_per_span == 16
    # paired: A1 70-60 = 10, A2 50-30 = 20 -> 15; spans 1-2 = -1, 3-1 = 2 -> 0.5
    assert (out.score.difference, out.score.outputs) == (15, 2)
    assert out.score.ci_low == 10 and out.score.ci_high == 20
    assert out.spans.difference == 0.5
    # machine spans on A1 and A2: 3; ESA found (0,4) on A1 and (0,4) on A2 -> 2 of 3; ESA^AI kept 2 of 3
    assert out.machine.machine_spans == 3
    assert out.machine.found_unprimed == pytest.approx(2 / 3) and out.machine.kept_primed == pytest.approx(2 / 3)
