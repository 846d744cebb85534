"""The answer shapes real evaluator models write: the corpus report's targets, and the rules behind them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.parsing_accuracy import DEFAULT_CORPUS, measure, meets_targets, recovered_errors, totals
from evaluation.engine.parsing import parse_annotator_answer, parse_supervisor_answer
from evaluation.engine.parsing.no_errors import declares_no_errors
from evaluation.engine.parsing.traces import strip_traces

RECORDS = [json.loads(line) for line in Path(DEFAULT_CORPUS).read_text(encoding="utf-8").splitlines() if line]
_RANK = {"failed": 0, "partial": 1, "ok": 2}


def test_corpus_is_large_and_varied_enough() -> None:
    shapes = {r["shape"] for r in RECORDS}
    assert len(RECORDS) >= 150 and len(shapes) >= 12
    assert {"thinking_trace", "truncated", "no_errors"} <= shapes
    assert all(r["errors"] or r["no_errors"] for r in RECORDS)


def test_corpus_report_meets_its_targets() -> None:
    tallies = measure(RECORDS)
    total = totals(tallies)
    assert total.recovered / total.expected >= 0.97
    assert total.no_error_recognised == total.no_error_answers
    assert total.scores_from_trace == 0
    assert meets_targets(total)
    # every shape is read, not only the total: a shape at zero would hide behind the others
    assert all(t.recovered / t.expected >= 0.9 for t in tallies.values() if t.expected)


def _reading(text: str, record: dict) -> tuple[int, int]:
    answer = parse_annotator_answer(text)
    return recovered_errors(record, answer)[0], _RANK[answer.status]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RECORDS), st.floats(min_value=0.0, max_value=1.0))
def test_a_complete_answer_never_reads_worse_than_its_prefix(record: dict, fraction: float) -> None:
    text = record["text"]
    prefix = text[: int(len(text) * fraction)]
    full_found, full_rank = _reading(text, record)
    prefix_found, prefix_rank = _reading(prefix, record)
    assert full_found >= prefix_found
    assert full_rank >= prefix_rank


def test_a_decoy_score_in_a_trace_never_gives_the_score() -> None:
    answer = parse_annotator_answer(
        "<think>\nDraft:\nError 1:\nLocation: \"decoy span\"\nExplanation: x\nSeverity: 5\nOverall score: Poor\n"
        "</think>\nError 1:\nLocation: \"real span\"\nExplanation: wrong.\nSeverity: 2\n"
        "Overall score: Good\nExplanation of the score: One slip."
    )
    assert [e.location for e in answer.errors] == ["real span"]
    assert (answer.score_label, answer.status) == ("Good", "ok")
    assert "thinking trace removed" in answer.problems


def test_a_trace_without_its_opening_tag_is_cut_too() -> None:
    # DeepSeek-R1's chat template puts <think> in the prompt: content holds only the closing tag
    final, notes = strip_traces("Overall score: Poor\nhmm\n</think>\nOverall score: Excellent")
    assert final.strip() == "Overall score: Excellent" and notes == ["thinking trace removed"]


def test_an_answer_cut_inside_its_trace_gives_nothing_from_the_trace() -> None:
    answer = parse_annotator_answer("<think>\nLet me see.\nOverall score: Fair\nError 1:\nLocation: \"a\"")
    assert answer.score is None and answer.errors == [] and answer.status == "failed"
    assert any("never closed" in p for p in answer.problems)


def test_numbered_labels_grouped_by_field_are_gathered_per_error() -> None:
    answer = parse_annotator_answer(
        "Your output contains 2 errors.\nError location 1: \"31 points\"\nError location 2: \"on Friday\"\n"
        "Explanation for error 1: 27 points.\nExplanation for error 2: Saturday.\nSeverity 1: Major\n"
        "Severity 2: 2\nOverall score: Fair\nExplanation of the score: Two slips."
    )
    assert [(e.number, e.location, e.explanation, e.severity) for e in answer.errors] == [
        (1, "31 points", "27 points.", 4), (2, "on Friday", "Saturday.", 2)]
    assert answer.status == "ok"


def test_a_numbered_label_with_its_value_on_the_next_line() -> None:
    answer = parse_supervisor_answer("Error location 1:\n\"the third quarter\"\nExplanation for error 1:\n"
                                     "It was the fourth.\nSeverity 1:\nminor")
    assert [(e.location, e.explanation, e.severity) for e in answer.errors] == [
        ("the third quarter", "It was the fourth.", 2)]


def test_one_location_listed_twice_keeps_both_errors() -> None:
    text = ("Error 1:\nLocation: \"8-of-10\"\nExplanation: 4-of-10.\nSeverity: 4\n"
            "Error 2:\nLocation: \"8-of-10\"\nExplanation: also wrong in the recap.\nSeverity: 3\nOverall score: Poor\n"
            "Explanation of the score: x")
    for answer in (parse_annotator_answer(text),
                   parse_annotator_answer('{"errors": {"error_1": {"location": "8-of-10", "severity": 4}, '
                                          '"error_2": {"location": "8-of-10", "severity": 3}}}')):
        assert [(e.location, e.severity) for e in answer.errors] == [("8-of-10", 4), ("8-of-10", 3)]


@pytest.mark.parametrize("text", [
    "The output contains 0 errors.", "No errors found.", "The output is error-free.", "Errors: none",
    "I did not find any errors.", "The summary is free of errors.", "There were no factual inaccuracies.",
    "No issues were detected in the response.", "I found zero mistakes.",
])
def test_every_no_error_phrasing_is_an_explicit_answer(text: str) -> None:
    answer = parse_annotator_answer(f"{text}\nOverall score: Excellent\nExplanation of the score: Fine.")
    assert answer.errors == [] and answer.no_errors_declared and answer.status == "ok"


@pytest.mark.parametrize("text", [
    "The output contains 2 errors.", "Errors are everywhere.", "Nothing here is free.", "No, the score is low.",
])
def test_phrases_that_are_not_no_error_answers(text: str) -> None:
    assert not declares_no_errors(text)


def test_an_empty_json_list_is_a_no_error_answer_and_a_score_alone_is_not() -> None:
    empty = parse_annotator_answer('{"errors": [], "overall_score": "Excellent", "explanation": "ok"}')
    assert empty.no_errors_declared and empty.status == "ok" and empty.score == 5.0
    score_only = parse_annotator_answer('{"overall_score": "Good"}')
    assert not score_only.no_errors_declared and score_only.score == 4.0


def test_factgenie_annotations_read_their_text_as_the_location() -> None:
    answer = parse_supervisor_answer('Here you go:\n{"annotations": [{"reason": "Not in the data.", '
                                     '"text": "a sold-out crowd", "type": 1}]}')
    assert [(e.location, e.explanation) for e in answer.errors] == [("a sold-out crowd", "Not in the data.")]


def test_a_markdown_table_of_errors() -> None:
    answer = parse_annotator_answer(
        "| # | **Location** | Explanation | Severity |\n|---|---|---|---|\n| 1 | \"12 threes\" | 15. | 3 |\n"
        "| 2 | on Friday | Sunday. | minor |\n\nOverall score: Fair\nExplanation of the score: x"
    )
    assert [(e.location, e.severity) for e in answer.errors] == [("12 threes", 3), ("on Friday", 2)]


def test_severity_groups_give_each_bullet_its_level() -> None:
    answer = parse_annotator_answer(
        "Major errors:\n- \"won by 20\" - they lost.\nMinor errors:\n1. \"Kim's 12 rebounds\": Kim had 9.\n"
        "2. \"on Friday\" — Saturday.\n\nOverall score: Poor\nExplanation of the score: x"
    )
    assert [(e.location, e.severity, e.explanation) for e in answer.errors] == [
        ("won by 20", 4, "they lost."), ("Kim's 12 rebounds", 2, "Kim had 9."), ("on Friday", 2, "Saturday.")]


def test_a_severity_title_above_an_errors_fields_is_a_header_not_an_error() -> None:
    answer = parse_annotator_answer(
        "- **Major error:** wrong result\n  Location: \"won 102-99\"\n  Explanation: They lost.\n"
        "- **Minor error:** a date\n  Location: \"on Friday\"\n  Explanation: Saturday.\n\n"
        "Overall score: Poor\nExplanation of the score: x"
    )
    assert [(e.location, e.severity, e.explanation) for e in answer.errors] == [
        ("won 102-99", 4, "They lost."), ("on Friday", 2, "Saturday.")]
