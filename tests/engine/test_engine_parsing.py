"""Unit tests of the answer parsers beyond the corpus: value parsers, distilled answers, odd shapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.engine.alignment import align_location
from evaluation.engine.alignment.notes import read_location
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
     ("'don't stop'", "don't stop"), ("Sentence 2: \"the cat\"", "the cat (Sentence 2)"),
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


def test_more_than_one_score_keeps_the_last() -> None:
    # the final answer comes last: an earlier score is a draft or an example (issue 22)
    answer = parse_annotator_answer("No Error\nOverall score: Good\nOverall score: Poor")
    assert answer.score_label == "Poor" and any("the last is used" in p for p in answer.problems)


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


# ---------------------------------------------------------------------------------------------
# answers seen in the wild (issue 12): every shape is read, and what is not read is named

_WILD_TAIL = "Overall score: Fair\nExplanation of the score: Two slips."


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("**Error 1:**\n**Location:** \"12 threes\"\n**Explanation:** The box score says 15.\n**Severity:** 3/5\n"
         "**Error 2:**\n**Location:** on Friday\n**Explanation:** It was Sunday.\n**Severity:** high\n\n"
         "**Overall score:** Fair\n**Explanation of the score:** Two slips.",
         [("12 threes", 3), ("on Friday", 4)]),
        ("*Error 1*\n_Location_: 12 threes\n*Explanation*: The box score says 15.\n*Severity*: 3\n"
         "*Error 2*\n_Location_: on Friday\n*Explanation*: It was Sunday.\n*Severity*: Medium\n" + _WILD_TAIL,
         [("12 threes", 3), ("on Friday", 3)]),
        ("1. Location: 12 threes\n   Explanation: The box score says 15.\n   Severity: 3\n"
         "2. Location: on Friday\n   Explanation: It was Sunday.\n   Severity: 2\n" + _WILD_TAIL,
         [("12 threes", 3), ("on Friday", 2)]),
        ("- **Location**: 12 threes\n  - **Explanation**: The box score says 15.\n  - **Severity**: 3\n"
         "- **Location**: on Friday\n  - **Explanation**: It was Sunday.\n  - **Severity**: 2\n\n" + _WILD_TAIL,
         [("12 threes", 3), ("on Friday", 2)]),
        ("### Error 1\n**Location:** 12 threes\n**Explanation:** The box score says 15.\n**Severity:** 3 (moderate)\n"
         "### Error 2\n**Location:**\n\"on Friday\"\n**Explanation:** It was Sunday.\n**Severity:** 2\n\n"
         "### Overall score: Fair\n### Explanation of the score\nTwo slips.",
         [("12 threes", 3), ("on Friday", 2)]),
    ],
    ids=["bold", "italic", "numbered", "bulleted", "headings"],
)
def test_wild_markdown_shapes_are_read(answer: str, expected: list[tuple[str, int]]) -> None:
    parsed = parse_annotator_answer(answer)
    assert [(e.location, e.severity) for e in parsed.errors] == expected
    assert (parsed.score_label, parsed.score_explanation, parsed.status) == ("Fair", "Two slips.", "ok")
    assert all(e.explanation for e in parsed.errors)


def test_wild_json_answer_is_read_and_named() -> None:
    answer = ('```json\n{"errors": [{"location": "12 threes", "explanation": "The box score says 15.", '
              '"severity": "3/5", "category": "number"}, {"location": ["Lee Wong", "9 rebounds"], '
              '"explanation": "Wong had 7.", "severity": 2}], "overall_score": "Fair", '
              '"explanation": "Two slips."}\n```\nLet me know if you need more.')
    parsed = parse_annotator_answer(answer)
    assert [(e.location, e.severity) for e in parsed.errors] == [("12 threes", 3), ("Lee Wong ... 9 rebounds", 2)]
    assert (parsed.score_label, parsed.score_explanation, parsed.status) == ("Fair", "Two slips.", "ok")
    assert parsed.problems[0] == "answer given as JSON"
    assert "field 'category' not read" in parsed.problems  # the chatter after the JSON is read and ignored


def test_wild_json_list_and_broken_json() -> None:
    listed = parse_supervisor_answer('[{"error_location": "12 threes", "reason": "15 in the data", "severity": 3}]')
    assert [(e.location, e.explanation, e.severity) for e in listed.errors] == [("12 threes", "15 in the data", 3)]
    assert listed.status == "ok"
    broken = parse_annotator_answer(
        '{\n  "errors": [\n    {\n      "location": "12 threes",\n      "explanation": "15 in the data",\n'
        '      "severity": 3\n    },\n    {\n      "location": "on Friday",\n      "explanation": "Sunday",\n'
        '      "severity": 2\n    }\n  ],\n  "overall_score": "Good",\n  "score_explanation": "Close."\n'
    )  # cut off before the closing brace: read line by line
    assert [(e.location, e.severity) for e in broken.errors] == [("12 threes", 3), ("on Friday", 2)]
    assert (broken.score_label, broken.score_explanation) == ("Good", "Close.")


def test_json_cut_on_one_line_keeps_its_complete_errors() -> None:
    """A small model out of tokens mid-object, all on one line (nothing to read line by line): the complete
    errors are read and the one it was cut in is left out, so the answer parses in part instead of not at all."""
    cut = ('{ "errors": [ { "location" : "cheap", "severity" : 1, "explanation" : "The data says high." }, '
           '{"location" : "the riverside", "severity" : 2, "explanation" : "It is in the city centre." }, '
           '{"location" : "the more than £90 price range", "severity" : 1, "explanation" : "This sentence conta')
    parsed = parse_annotator_answer(cut)
    assert [(e.location, e.severity, e.explanation) for e in parsed.errors] == [
        ("cheap", 1, "The data says high."), ("the riverside", 2, "It is in the city centre.")]
    assert parsed.status == "partial"  # no overall score
    assert "JSON cut off before its end: its 2 complete error(s) read" in parsed.problems
    assert "the error it was cut in is left out" in parsed.problems
    # a cut inside the first object leaves nothing complete: read line by line, as before
    assert parse_annotator_answer(cut[:40]).errors == [] or parse_annotator_answer(cut[:40]).status != "ok"


def test_wild_missing_error_header_and_trailing_chatter() -> None:
    parsed = parse_annotator_answer(
        "Location: 12 threes\nExplanation: 15 in the data.\nSeverity: 3\nOverall score: Good\n"
        "Explanation of the score: Close.\n\nI hope this helps! Feel free to ask for more details."
    )
    assert [e.location for e in parsed.errors] == ["12 threes"]
    assert parsed.errors[0].problems == ["no 'Error N:' header"]
    assert parsed.score_explanation == "Close." and "text after the score explanation ignored" in parsed.problems
    assert parsed.status == "ok"


def test_wild_unreadable_answer_names_what_was_not_read() -> None:
    parsed = parse_annotator_answer("I am sorry, but I cannot evaluate this text.")
    assert parsed.status == "failed"
    assert parsed.problems[-1] == ("no error fields (Location, Explanation, Severity) and no score found; "
                                   "the answer begins 'I am sorry, but I cannot evaluate this text.'")
    partial = parse_annotator_answer("Error 1:\nLocation: 12 threes\nSeverity: 3\nOverall score: Good\n"
                                     "Explanation of the score: ok")
    assert partial.status == "partial" and "error 1: no Explanation field" in partial.problems


@pytest.mark.parametrize(
    ("location", "text", "nth", "unit"),
    [
        ("had 9 rebounds (second mention)", "had 9 rebounds", 2, "occurrence"),
        ("[2nd occurrence] 9 rebounds", "9 rebounds", 2, "occurrence"),
        ("9 rebounds in the second paragraph", "9 rebounds", 2, "paragraph"),
        ('The phrase "9 rebounds" (last)', "9 rebounds", -1, "occurrence"),
        ("Sentence 3: he scored", "he scored", 3, "sentence"),
        ("the word 'dominant'", "dominant", None, None),
        ("9 rebounds (repeated)", "9 rebounds", None, None),
        ("Love (18 points)", "Love (18 points)", None, None),  # text in brackets, not a note
        ("scored for the second time", "scored for the second time", None, None),
    ],
)
def test_location_notes_are_read(location: str, text: str, nth: int | None, unit: str | None) -> None:
    read = read_location(location)
    assert read.text == text
    assert (read.pick.nth, read.pick.unit) == (nth, unit) if read.pick else (nth, unit) == (None, None)


@pytest.mark.parametrize(
    ("raw", "nth"),
    [('"9 rebounds" (second mention)', 2), ('"9 rebounds" [2nd occurrence]', 2),
     ('In the third sentence: "9 rebounds"', 3), ('"9 rebounds" - the last occurrence', 3),
     ('"9 rebounds" (this is wrong)', None)],
)
def test_ordinal_remarks_around_a_quoted_location_survive_parsing(raw: str, nth: int | None) -> None:
    output = "Ana had 9 rebounds in the first half. Lee had 9 rebounds. Kim had 9 rebounds."
    answer = parse_annotator_answer(f"Error 1:\nLocation: {raw}\nExplanation: Wrong.\nSeverity: 2\n{_WILD_TAIL}")
    [span] = align_location(answer.errors[0].location, output, explanation=answer.errors[0].explanation)
    starts = [i for i in range(len(output)) if output.startswith("9 rebounds", i)]
    if nth is None:
        assert span.start == starts[0] and span.ambiguous
    else:
        assert span.start == starts[nth - 1] and not span.ambiguous


def test_extra_fields_of_an_error_are_named_or_kept_with_the_explanation() -> None:
    parsed = parse_annotator_answer(
        "Error 1:\nLocation: 12 threes\nCategory: Number\nExplanation: The box score says 15.\n"
        "Error type: factual\nCorrection: 15 threes\nSeverity: 3\n" + _WILD_TAIL
    )
    [error] = parsed.errors
    assert error.location == "12 threes" and error.severity == 3
    assert error.explanation == "The box score says 15.\nCorrection: 15 threes"
    assert parsed.problems == ["field 'Category' not read", "field 'Error type' not read"]
    assert parsed.status == "ok"


# What a tiny real model (SmolLM2-135M, tests/data/smollm2_answers.jsonl) copies from the answer format instead of
# filling it in: a slot, the severity scale, the list of labels. None of them is a value.
def test_a_placeholder_location_is_no_span():
    answer = parse_annotator_answer("Error 1:\nLocation: <the exact words>\nExplanation: wrong\nSeverity: 2\n"
                                    "Overall score: Fair\nExplanation of the score: so-so")
    error = answer.errors[0]
    assert error.location is None and "placeholder copied from the answer format" in error.problems[0]
    assert parse_annotator_answer("Error 1:\nLocation: <br>\nExplanation: a tag\nSeverity: 2\nOverall score: Fair"
                                  ).errors[0].location == "<br>"  # one word in brackets can be output text


def test_a_severity_that_is_the_whole_scale_is_no_severity():
    assert parse_severity("1-5") == (None, "severity '1-5' is the scale, not a value")
    assert parse_severity("(1 to 5)")[0] is None
    assert parse_severity("4-5")[0] == 4  # a narrow range is still a judgement


def test_an_overall_score_listing_the_scale_is_no_score():
    label, score, problem = parse_score_value("Unacceptable, Poor, Fair, Good or Excellent")
    assert label is None and score is None and "lists the scale" in problem
    assert parse_score_value("Good (not Excellent)")[:2] == ("Good", 4.0)
