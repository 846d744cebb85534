"""MQM statistics: scores as means over rated pairs, intervals, rank ranges, categories and rater agreement."""

from __future__ import annotations

import pytest

from corpus.protocols.mqm import DEFAULT
from stats.mqm import Error, Rating, category_breakdown, rater_agreement, segment_score, system_scores

MAJOR = Error("Accuracy/Mistranslation", "major")
MINOR_PUNCT = Error("Fluency/Punctuation", "minor")


def test_segment_score_sums_weights_and_system_score_averages_rated_pairs():
    assert segment_score([MAJOR, MINOR_PUNCT, Error("Style/Awkward", "minor")], DEFAULT.weight) == pytest.approx(6.1)
    ratings = [Rating("A", 1, "r1", (MAJOR,)), Rating("A", 1, "r2", ()), Rating("A", 2, "r1", (MINOR_PUNCT,)),
               Rating("B", 1, "r1", ()), Rating("B", 2, "r1", ())]
    scores = system_scores(ratings, DEFAULT.weight, n_resamples=200)
    # lower is better; A has three ratings (two raters on segment 1) on two segments
    assert [(s.system, s.ratings, s.segments) for s in scores] == [("B", 2, 2), ("A", 3, 2)]
    assert scores[1].score == pytest.approx(5.1 / 3)
    assert scores[0].score == 0 and scores[0].ci_low == 0 == scores[0].ci_high


def test_intervals_contain_the_score_and_rank_ranges_separate_only_clear_differences():
    ratings = []
    for seg in range(60):
        ratings.append(Rating("good", seg, "r", (MAJOR,) if seg % 10 == 0 else ()))
        ratings.append(Rating("also-good", seg, "r", (MAJOR,) if seg % 10 == 1 else ()))
        ratings.append(Rating("bad", seg, "r", (MAJOR, MAJOR) if seg % 2 else (MAJOR,)))
    scores = {s.system: s for s in system_scores(ratings, DEFAULT.weight)}
    for s in scores.values():
        assert s.ci_low <= s.score <= s.ci_high
    assert scores["bad"].rank_range == (3, 3)
    assert scores["good"].rank_range == scores["also-good"].rank_range == (1, 2)
    again = {s.system: s for s in system_scores(ratings, DEFAULT.weight)}
    assert again["bad"].ci_low == scores["bad"].ci_low  # seeded: the same intervals every time
    other = {s.system: s for s in system_scores(ratings, DEFAULT.weight, seed=1)}
    assert other["bad"].ci_low != scores["bad"].ci_low


def test_category_breakdown_adds_up_to_the_score():
    ratings = [Rating("A", 1, "r", (MAJOR, MINOR_PUNCT)), Rating("A", 2, "r", (Error("Fluency/Grammar", "minor"),))]
    figures = category_breakdown(ratings, DEFAULT.weight, name=lambda c: c.split("/")[0])["A"]
    assert [(f.category, f.errors, f.by_severity) for f in figures] == [
        ("Accuracy", 1, {"major": 1}), ("Fluency", 2, {"minor": 2})]
    assert sum(f.score for f in figures) == pytest.approx(system_scores(ratings, DEFAULT.weight)[0].score)
    assert figures[1].score == pytest.approx(1.1 / 2)


def test_rater_agreement_is_factgenies_character_f1_and_segment_score_correlation():
    a = [Rating("S", g, "ann", (Error("Other", "major" if g == 1 else "minor", 0, 4),)) for g in range(3)]
    b = [Rating("S", 0, "bob", (Error("Other", "major", 2, 6),)),
         Rating("S", 1, "bob", (Error("Style/Awkward", "minor", 0, 4),)), Rating("S", 2, "bob", ()),
         Rating("S", 3, "bob", (MAJOR,))]
    agreement = rater_agreement(a + b, DEFAULT.weight)
    (pair,) = agreement.pairs
    assert (pair.a, pair.b, pair.outputs) == ("ann", "bob", 3)
    # segment 2 has no span on bob's side: left out, as factgenie does; 2 + 4 characters shared of 8 and 8
    assert (pair.char.matched, pair.char.n_predicted, pair.char.n_reference) == (6, 8, 8)
    assert pair.char_labelled.matched == 2  # the categories match on segment 0 only
    # segment scores 1, 5, 1 against 5, 1, 0: r = -4 / sqrt(96/9 * 14)
    assert pair.scores.n == 3 and pair.scores.pearson == pytest.approx(-4 / (96 / 9 * 14) ** 0.5)
    assert agreement.char == pair.char and agreement.scores.pearson == pair.scores.pearson
