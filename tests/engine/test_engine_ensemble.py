"""Hand-computed tests of the ensemble score, the outlier rules, the per-item ensemble and the fallback merge."""

from __future__ import annotations

import pytest

from evaluation.engine import EngineError
from evaluation.engine.alignment import align_location
from evaluation.engine.ensemble import (
    LABEL_SCORES,
    OUTLIER_RULES,
    cap_errors,
    ensemble_item,
    ensemble_score,
    fallback_merge,
    outliers_leave_one_out,
    outliers_literal,
    overlap_share,
)
from evaluation.engine.parsing import ParsedAnswer, ParsedError, parse_annotator_answer


def test_label_scores() -> None:
    assert LABEL_SCORES == {"Unacceptable": 1, "Poor": 2, "Fair": 3, "Good": 4, "Excellent": 5}


def test_ensemble_score_is_mean_of_available() -> None:
    assert ensemble_score([4, 2, None, 3]) == 3.0
    assert ensemble_score([5, 4]) == 4.5
    assert ensemble_score([None, None]) is None
    assert ensemble_score([]) is None


def test_four_equal_and_one_low() -> None:
    # leave-one-out, annotator 5: others [5,5,5,5] mean 5, pstdev 0; |1-5| = 4 >= 0 and >= 1 -> outlier.
    # annotator 1: others [5,5,5,1] mean 4, pstdev sqrt((1+1+1+9)/4) = sqrt(3) = 1.732; |5-4| = 1 < 3.46.
    assert outliers_leave_one_out([5, 5, 5, 5, 1]) == [False, False, False, False, True]
    # literal: mean 4.2, pstdev sqrt((4*0.64 + 10.24)/5) = sqrt(2.56) = 1.6; |1-4.2| = 3.2 = 2*1.6 exactly
    # (the boundary counts, float noise aside) and >= 1 -> outlier; |5-4.2| = 0.8 < 3.2.
    assert outliers_literal([5, 5, 5, 5, 1]) == [False, False, False, False, True]


def test_literal_boundary_needs_a_difference_of_one() -> None:
    # literal: mean 4.8, pstdev sqrt((4*0.04 + 0.64)/5) = 0.4; |4-4.8| = 0.8 = 2*0.4 but 0.8 < 1 -> not.
    assert outliers_literal([5, 5, 5, 5, 4]) == [False] * 5
    # leave-one-out: others [5,5,5,5] pstdev 0, |4-5| = 1 >= 1 -> outlier (exactly at the 1-point bound)
    assert outliers_leave_one_out([5, 5, 5, 5, 4]) == [False, False, False, False, True]


def test_leave_one_out_fires_where_literal_cannot() -> None:
    # [5,5,4,5,1]: annotator 5 -> others [5,5,4,5] mean 4.75, pstdev sqrt((3*0.0625 + 0.5625)/4) = 0.433;
    # |1-4.75| = 3.75 >= 0.866 and >= 1 -> outlier. Annotator 3 -> others [5,5,5,1] mean 4, pstdev 1.732,
    # |4-4| = 0 -> not.
    assert outliers_leave_one_out([5, 5, 4, 5, 1]) == [False, False, False, False, True]
    # literal: mean 4, pstdev sqrt((1+1+0+1+9)/5) = sqrt(2.4) = 1.549; |1-4| = 3 < 3.098 -> not.
    assert outliers_literal([5, 5, 4, 5, 1]) == [False] * 5


def test_difference_below_one_with_zero_spread_is_not_an_outlier() -> None:
    # annotator 4: others [4,4,4] pstdev 0; |3.1-4| = 0.9 >= 0 but < 1 -> not.
    # annotator 1: others [4,4,3.1] mean 3.7, pstdev sqrt((0.09+0.09+0.36)/3) = 0.424; |4-3.7| = 0.3 -> not.
    assert outliers_leave_one_out([4, 4, 4, 3.1]) == [False] * 4


def test_two_way_split_has_no_outlier() -> None:
    # [1,1,5,5,5]: annotator 1 -> others [1,5,5,5] mean 4, pstdev sqrt(3) = 1.732, |1-4| = 3 < 3.46;
    # annotator 3 -> others [1,1,5,5] mean 3, pstdev 2, |5-3| = 2 < 4. Literal: mean 3.4, pstdev 1.96,
    # largest distance 2.4 < 3.92.
    assert outliers_leave_one_out([1, 1, 5, 5, 5]) == [False] * 5
    assert outliers_literal([1, 1, 5, 5, 5]) == [False] * 5


def test_exactly_two_std_of_the_others_counts() -> None:
    # [2,4,5]: annotator 3 (5) -> others [2,4] mean 3, pstdev 1; |5-3| = 2 = 2*1 exactly -> outlier.
    # annotator 1 (2) -> others [4,5] mean 4.5, pstdev 0.5; |2-4.5| = 2.5 >= 1 and >= 1 -> outlier.
    # annotator 2 (4) -> others [2,5] mean 3.5, pstdev 1.5; |4-3.5| = 0.5 < 3 -> not.
    assert outliers_leave_one_out([2, 4, 5]) == [True, False, True]
    # [1,3,5]: the ends -> others [3,5] (or [1,3]) mean 4 (2), pstdev 1; distance 3 >= 2 -> outliers;
    # the middle -> others [1,5] mean 3, distance 0 -> not. With three annotators the rule is harsh.
    assert outliers_leave_one_out([1, 3, 5]) == [True, False, True]


def test_fewer_than_three_scores_have_no_outliers() -> None:
    assert outliers_leave_one_out([1, 5]) == [False, False]
    assert outliers_literal([1, 5]) == [False, False]
    assert outliers_leave_one_out([]) == []


def test_rules_registry() -> None:
    assert OUTLIER_RULES["leave_one_out"] is outliers_leave_one_out
    assert OUTLIER_RULES["literal"] is outliers_literal


def _answer(label: str, location: str = "x") -> ParsedAnswer:
    return parse_annotator_answer(
        f"Error 1:\nLocation: {location}\nExplanation: e\nSeverity: 2\nOverall score: {label}"
    )


def test_ensemble_item_leaves_outliers_and_failed_answers_out_of_the_supervisor_input() -> None:
    answers = [_answer("Excellent"), _answer("Excellent"), _answer("Excellent"), _answer("Excellent"),
               _answer("Unacceptable"), parse_annotator_answer("gibberish")]
    item = ensemble_item(answers)
    assert item.kept == (0, 1, 2, 3) and item.kept_answers == answers[:4]
    assert item.outliers == (4,)  # the failed answer (5) is not an outlier: it has no score to judge
    # the score keeps the outlier: (4 * 5 + 1) / 5; the failed answer has no score
    assert item.score == pytest.approx(4.2)
    assert ensemble_item(answers, rule="literal").kept_answers == answers[:4]
    split = [_answer("Poor"), _answer("Poor"), _answer("Excellent"), _answer("Excellent"), _answer("Excellent")]
    assert ensemble_item(split).kept_answers == split and ensemble_item(split).outliers == ()
    with pytest.raises(EngineError, match="unknown outlier rule"):
        ensemble_item(answers, rule="zscore")


def test_ensemble_item_keeps_unscored_answers() -> None:
    unscored = parse_annotator_answer("Error 1:\nLocation: a\nExplanation: b\nSeverity: 3")
    answers = [_answer("Good"), _answer("Good"), _answer("Good"), unscored]
    item = ensemble_item(answers)
    assert item.kept_answers == answers and item.outliers == ()
    assert item.score == 4.0


def test_ensemble_item_with_no_usable_answer_keeps_nothing() -> None:
    item = ensemble_item([parse_annotator_answer("gibberish"), parse_annotator_answer("")])
    assert item.kept == () and item.outliers == () and item.score is None
    assert ensemble_item([]).kept == () and ensemble_item([]).score is None


def _err(location: str | None, severity: int | None, explanation: str = "e") -> ParsedError:
    return ParsedError(1, location, location or "", explanation, severity, str(severity or ""))


def test_cap_errors_keeps_the_most_severe_in_original_order() -> None:
    errors = [_err(str(i), sev) for i, sev in enumerate([1, 5, 2, 4, None, 3, 5, 1, 2, 4])]
    kept = cap_errors(errors, 4)
    assert [e.location for e in kept] == ["1", "3", "6", "9"]
    assert cap_errors(errors[:3], 8) == errors[:3]


def test_overlap_share() -> None:
    assert overlap_share((0, 10), (5, 30)) == 0.5  # overlap 5, shorter 10
    assert overlap_share((0, 10), (10, 20)) == 0.0
    assert overlap_share((0, 4), (0, 100)) == 1.0


OUTPUT = "The Celtics beat the Lakers 113 - 107 on Friday. Isaiah Thomas scored 29 points and six assists."


def _aligned(error: ParsedError) -> tuple[ParsedError, list]:
    return error, align_location(error.location, OUTPUT, explanation=error.explanation)


def test_fallback_merge_groups_overlapping_spans() -> None:
    annotated = [
        _aligned(_err("Isaiah Thomas scored 29 points", 3, "Thomas scored 27.")),
        _aligned(_err("29 points", 4, "27 points, not 29.")),  # inside the first: overlap share 1.0
        _aligned(_err("113 - 107", 2, "Final score was 113-105.")),
        _aligned(_err("six assists", 1, "He had eight.")),
    ]
    merged = fallback_merge(annotated, OUTPUT)
    assert [(m.location, m.severity, m.members) for m in merged] == [
        ("29 points", 4, [0, 1]),  # highest severity kept with that member's span and explanation
        ("113 - 107", 2, [2]),
        ("six assists", 1, [3]),
    ]
    assert merged[0].explanation == "27 points, not 29."
    assert OUTPUT[merged[0].start : merged[0].end] == "29 points"


def test_fallback_merge_keeps_small_overlaps_apart() -> None:
    # "the Lakers 113" vs "113 - 107 on Friday": overlap "113" = 3 chars, shorter span 14 -> 0.21 < 0.5
    annotated = [_aligned(_err("the Lakers 113", 2)), _aligned(_err("113 - 107 on Friday", 2))]
    assert len(fallback_merge(annotated, OUTPUT)) == 2


def test_fallback_merge_dedupes_unaligned_and_ranks() -> None:
    annotated = [
        _aligned(_err("Kevin Durant", 5, "Not in the data.")),
        _aligned(_err("kevin  durant.", 3, "Invented player.")),
        _aligned(_err(None, 2, "The venue is not mentioned.")),
        _aligned(_err(None, 2, "the venue is not mentioned")),
        _aligned(_err("on Friday", 3, "Wednesday.")),
    ]
    merged = fallback_merge(annotated, OUTPUT)
    assert [(m.location, m.severity, m.start is None) for m in merged] == [
        ("Kevin Durant", 5, True),
        ("on Friday", 3, False),
        (None, 2, True),
    ]


def test_fallback_merge_caps_at_max_errors() -> None:
    words = OUTPUT.replace(".", "").split()
    annotated = [_aligned(_err(w, (i % 5) + 1)) for i, w in enumerate(dict.fromkeys(words))]
    merged = fallback_merge(annotated, OUTPUT, max_errors=8)
    assert len(merged) == 8
    assert [m.severity for m in merged] == sorted((m.severity for m in merged), reverse=True)


def test_fallback_merge_split_parts_are_separate_units() -> None:
    error = _err("The Celtics ... six assists", 3)
    merged = fallback_merge([_aligned(error)], OUTPUT)
    assert [m.location for m in merged] == ["The Celtics", "six assists"]


def test_ensemble_item_fallback_merges_only_the_kept_answers() -> None:
    def answer(label: str, location: str, severity: int) -> ParsedAnswer:
        return parse_annotator_answer(
            f"Error 1:\nLocation: {location}\nExplanation: e\nSeverity: {severity}\nOverall score: {label}"
        )

    answers = [answer("Good", "29 points", 3), answer("Good", "Isaiah Thomas scored 29 points", 4),
               answer("Good", "on Friday", 2), answer("Unacceptable", "six assists", 5)]
    item = ensemble_item(answers)
    assert item.outliers == (3,)
    merged = item.fallback(OUTPUT)
    # the outlier's "six assists" is left out; the two overlapping spans become one (severity 4 kept)
    assert [(m.location, m.severity, m.members) for m in merged] == [
        ("Isaiah Thomas scored 29 points", 4, [0, 1]),
        ("on Friday", 2, [2]),
    ]
