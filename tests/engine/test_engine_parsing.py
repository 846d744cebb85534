"""Unit tests of the answer parsers beyond the corpus: value parsers, distilled answers, odd shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.engine.parsing import (
    LABELS,
    ParsedAnswer,
    clean_location,
    label_to_score,
    parse_annotator_answer,
    parse_distilled_answer,
    parse_score_value,
    parse_severity,
    parse_supervisor_answer,
    score_to_label,
)


def test_labels_and_scores_round_trip() -> None:
    assert LABELS == ("Unacceptable", "Poor", "Fair", "Good", "Excellent")
    assert [label_to_score(label) for label in LABELS] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert label_to_score(" good ") == 4.0
    with pytest.raises(ValueError):
        label_to_score("Great")


@pytest.mark.parametrize(
    ("score", "label"),
    [(1.0, "Unacceptable"), (1.49, "Unacceptable"), (1.5, "Poor"), (3.4, "Fair"), (3.5, "Good"),
     (4.6, "Excellent"), (0.2, "Unacceptable"), (7.0, "Excellent")],
)
def test_score_to_label_rounds_half_up_and_clamps(score: float, label: str) -> None:
    assert score_to_label(score) == label


@pytest.mark.parametrize(
    ("raw", "severity"),
    [("4", 4), ("4/5", 4), ("3 (moderate)", 3), ("High", 4), ("**5**", 5), ("Critical", 5), ("very high", 5),
     ("major", 4), ("Medium", 3), ("moderate", 3), ("low", 2), ("Minor", 2), ("very low", 1),
     ("Negligible", 1), ("trivial", 1), ("8/10", 4), ("Moderate (3)", 3), ("0", None), ("7", None),
     ("", None), ("unclear", None)],
)
def test_parse_severity(raw: str, severity: int | None) -> None:
    assert parse_severity(raw)[0] == severity


@pytest.mark.parametrize(
    ("raw", "label", "score"),
    [("Good", "Good", 4.0), ("**Fair**", "Fair", 3.0), ("Poor (2/5)", "Poor", 2.0), ("EXCELLENT", "Excellent", 5.0),
     ("3", "Fair", 3.0), ("3/5", "Fair", 3.0), ("4 out of 5", "Good", 4.0), ("3.5", "Good", 3.5),
     ("75/100", "Good", 4.0), ("Good (2/5)", "Good", 4.0), ("great", None, None), ("9", None, None)],
)
def test_parse_score_value(raw: str, label: str | None, score: float | None) -> None:
    got_label, got_score, _ = parse_score_value(raw)
    assert (got_label, got_score) == (label, score)


def test_conflicting_label_and_number_is_noted() -> None:
    assert "disagree" in (parse_score_value("Good (2/5)")[2] or "")


@pytest.mark.parametrize(
    ("raw", "location"),
    [('"foo bar"', "foo bar"), ("“foo bar”", "foo bar"), ("‘foo’", "foo"), ("`foo`", "foo"),
     ('"foo" (this is wrong because the data says bar)', "foo"), ('"foo" - the number', "foo"),
     ('"foo" — invented', "foo"), ('"foo": not in the source', "foo"), ('"a" ... "b"', "a ... b"),
     ('"a", "b"', "a ... b"), ("foo ... bar", "foo ... bar"), ("None", None), ("N/A", None),
     ("(omission)", None), ("Missing information", None), ("None (the date is omitted)", None),
     ("Omission of the final score", None), ("The entire summary", None), ("not applicable", None),
     ("None of the players scored", "None of the players scored"),
     ("'don't stop'", "don't stop"), ("Sentence 2: \"the cat\"", "the cat"),
     ('"Hi," he said', '"Hi," he said'), ('the "best" pizza', 'the "best" pizza'),
     ("the big cat (which is not in the data)", "the big cat"), ("New York (NY)", "New York (NY)"),
     ("**foo**", "foo"), ("", None)],
)
def test_clean_location(raw: str, location: str | None) -> None:
    assert clean_location(raw)[0] == location


def test_comment_removal_is_noted() -> None:
    location, notes = clean_location('"foo" (wrong)')
    assert location == "foo" and any("comment" in n for n in notes)


def test_none_location_is_kept_as_none_with_a_note() -> None:
    answer = parse_annotator_answer("Error 1:\nLocation: None\nExplanation: x\nSeverity: 2\nOverall score: Good")
    assert answer.status == "ok"
    assert answer.errors[0].location is None and answer.errors[0].location_raw == "None"
    assert any("no span" in p for p in answer.errors[0].problems)


def test_error_with_no_error_content_is_a_declaration() -> None:
    answer = parse_annotator_answer(
        "Error 1:\nLocation: None\nExplanation: No errors found.\nSeverity: N/A\n\nOverall score: Excellent"
    )
    assert answer.errors == [] and answer.no_errors_declared and answer.status == "ok"


def test_errors_none_line_is_a_declaration() -> None:
    answer = parse_annotator_answer("Errors: None\nOverall score: Excellent\nExplanation of the score: ok")
    assert answer.no_errors_declared and answer.errors == [] and answer.score == 5.0


def test_explanation_after_score_is_the_score_explanation() -> None:
    answer = parse_annotator_answer("No Error\nOverall score: Excellent\nExplanation: All facts are right.")
    assert answer.score_explanation == "All facts are right."


def test_numbered_lines_inside_an_explanation_are_not_headers() -> None:
    answer = parse_annotator_answer(
        "Error 1:\nLocation: foo\nExplanation: Two reasons:\n1. it is wrong\n2. it is vague\nSeverity: 3\n"
        "Overall score: Fair"
    )
    assert len(answer.errors) == 1
    assert answer.errors[0].explanation == "Two reasons:\n1. it is wrong\n2. it is vague"


def test_error_titles_are_not_kept_as_locations() -> None:
    answer = parse_annotator_answer(
        "Error 1: Wrong number\nLocation: 29 points\nExplanation: 27.\nSeverity: 4\nOverall score: Poor"
    )
    assert [(e.number, e.location) for e in answer.errors] == [(1, "29 points")]


def test_fields_on_one_line_after_the_header() -> None:
    answer = parse_annotator_answer("Error 1: Location: \"x y\"\nExplanation: e\nSeverity: 2\nOverall score: Good")
    assert answer.errors[0].location == "x y" and answer.errors[0].number == 1


def test_more_than_one_score_keeps_the_first() -> None:
    answer = parse_annotator_answer("No Error\nOverall score: Good\nOverall score: Poor")
    assert answer.score_label == "Good" and any("more than one" in p for p in answer.problems)


def test_unknown_score_makes_the_answer_partial() -> None:
    answer = parse_annotator_answer("Error 1:\nLocation: x\nExplanation: y\nSeverity: 2\nOverall score: Great")
    assert answer.score is None and answer.status == "partial"


def test_non_string_input_never_raises() -> None:
    answer = parse_annotator_answer(None)  # type: ignore[arg-type]
    assert answer.status == "failed" and answer.problems


def test_supervisor_answer_without_score_is_ok() -> None:
    answer = parse_supervisor_answer("Error 1:\nLocation: x\nExplanation: y\nSeverity: 5")
    assert answer.status == "ok" and answer.score is None and answer.errors[0].severity == 5


@pytest.mark.parametrize(
    ("text", "score100"),
    [("Score: 85\nError 1:\nLocation: x\nExplanation: y\nSeverity: 2", 85.0),
     ("Overall score: 70/100", 70.0), ("**Score:** 40", 40.0), ("65\n\nError 1:\nLocation: a\n", 65.0),
     ("Score: 4/5", 80.0), ("Score: 90%", 90.0)],
)
def test_distilled_scores(text: str, score100: float) -> None:
    answer = parse_distilled_answer(text)
    assert answer.score100 == score100
    assert answer.status in ("ok", "partial")


def test_distilled_without_score_is_partial_or_failed() -> None:
    assert parse_distilled_answer("Error 1:\nLocation: x\nExplanation: y\nSeverity: 2").status == "partial"
    assert parse_distilled_answer("Score: 150").score100 is None
    assert parse_distilled_answer("no idea").status == "failed"


# ---------------------------------------------------------------------------------------------
# properties: the parsers never raise and always return a consistent answer

_FRAGMENTS = [
    "Error 1:", "**Error 2:**", "### Error #3", "1.", "2)", "Error", "Errors: None", "Location:", "**Location:**",
    "location -", "Explanation:", "Explanation of the score:", "Severity:", "Severity: 4/5", "Severity: High",
    "Overall score:", "Overall Score: Poor (2/5)", "Score: 85", "No Error", "There are no errors", "```", "```text",
    '"quoted', "“curly”", "‘single’", "`tick`", "(omission)", "None", "N/A", "...", "…", " - ", "(", ")", "\n",
    "\n\n", "Good", "Excellent", "5", "0", "-1", "100/100", "*", "_", "#", ">", "$", "{", "}", "\\", "\x00", "\r\n",
]
_ANSWERISH = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=40).map("".join)


def _consistent(answer: ParsedAnswer) -> None:
    assert answer.status in ("ok", "partial", "failed")
    assert answer.score_label in (None, *LABELS)
    if answer.score is not None:
        assert 1.0 <= answer.score <= 5.0
    if answer.score100 is not None:
        assert 0.0 <= answer.score100 <= 100.0
    for error in answer.errors:
        assert error.severity is None or 1 <= error.severity <= 5
        assert error.location is None or error.location.strip()
    if answer.status == "failed":
        assert not answer.errors and answer.score is None and not answer.no_errors_declared


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(max_size=300), _ANSWERISH))
def test_property_parsers_never_raise(text: str) -> None:
    for parser in (parse_annotator_answer, parse_supervisor_answer, parse_distilled_answer):
        _consistent(parser(text))


def test_error_mentioned_in_score_explanation_is_not_a_header() -> None:
    answer = parse_annotator_answer(
        "Error 1:\nLocation: foo\nExplanation: bar\nSeverity: 4\nOverall score: Poor\n"
        "Explanation of the score:\nError 1 is the most severe problem here.\nIt drives the grade."
    )
    assert len(answer.errors) == 1 and answer.status == "ok"
    assert answer.score_explanation == "Error 1 is the most severe problem here.\nIt drives the grade."
