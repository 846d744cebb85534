"""The item file's pydantic models refuse what the format refuses, each time naming the place and the field."""

from __future__ import annotations

import pytest

from corpus.formats import FormatError, parse_item

OUT = {"T": "Output"}


def _item(**fields) -> dict:
    return {"id": "a", "outputs": OUT} | fields


def _span(**fields) -> dict:
    return _item(spans=[fields])


def _judgment(**fields) -> dict:
    span = {"text": "x", "judgments": [{"annotator": "e"} | fields]}
    return _item(annotations=[{"source": "s", "kind": "human", "spans": [span]}])


ANNOTATION = "line 2, id 'a', annotations[0]"
JUDGMENT = f"{ANNOTATION}, spans[0], judgments[0]"

BAD = [
    # the item
    ([1], "line 2: expected a JSON object, found list"),
    ({"outputs": OUT}, "line 2: field 'id' is missing or not a string/integer"),
    ({"id": True, "outputs": OUT}, "line 2: field 'id' is missing or not a string/integer"),
    ({"id": "i" * 201, "outputs": OUT}, "line 2: field 'id' is 201 characters long; at most 200 are allowed"),
    ({"id": "a"}, "line 2, id 'a': field 'outputs' is missing (expected {header: text} with one output)"),
    (_item(outputs={"T": "x", "U": "y"}), "line 2, id 'a': field 'outputs' must hold exactly one output text, found 2"),
    (_item(outputs={"T": ""}), "line 2, id 'a': field 'outputs.T' is empty"),
    (_item(outputs={"T": 5}), "line 2, id 'a': field 'outputs.T' must be a string, not int"),
    (_item(outputs=["x"]), "line 2, id 'a': field 'outputs' must be an object of header -> text"),
    (_item(inputs={"Da\x00ta": "x"}), "line 2, id 'a': field 'inputs (header)' contains a NUL character"),
    (_item(inputs={"D": "\ud800"}), "line 2, id 'a': field 'inputs.D' contains a lone UTF-16 surrogate"),
    (_item(system=3), "line 2, id 'a': field 'system' must be a string, not int"),
    (_item(aspect="a" * 201), "line 2, id 'a': field 'aspect' is 201 characters long; at most 200 are allowed"),
    (_item(score=[1]), "line 2, id 'a': field 'score' must be an object of aspect -> number"),
    (_item(score={"f": float("nan")}), "line 2, id 'a': field 'score.f' must be a finite number"),
    (_item(score={"f": 10**400}), "line 2, id 'a': field 'score.f' must be a finite number no larger than 1e+15 in "
                                  "size, not an integer of about 401 digits"),
    (_item(score={"f": "3"}), "line 2, id 'a': field 'score.f' must be a finite number"),
    (_item(notes={"a": ["x\x00"]}), "line 2, id 'a': field 'notes.a[0]' contains a NUL character"),
    (_item(spans={}), "line 2, id 'a': field 'spans' must be a list"),
    (_item(annotations="x"), "line 2, id 'a': field 'annotations' must be a list"),
    # a span, checked against the output
    (_item(spans=[5]), "line 2, id 'a', spans[0]: a span must be an object with start, end, text"),
    (_span(start=0), "line 2, id 'a', spans[0]: fields 'start' and 'end' must both be given or both be null"),
    (_span(start="0", end=3), "line 2, id 'a', spans[0]: field 'start' must be an integer character offset, not '0'"),
    (_span(start=True, end=3), "line 2, id 'a', spans[0]: field 'start' must be an integer character offset"),
    (_span(start=0, end=9), "line 2, id 'a', spans[0]: offsets 0-9 are outside the output (length 6) or empty"),
    (_span(start=3, end=3), "line 2, id 'a', spans[0]: offsets 3-3 are outside the output"),
    (_span(start=0, end=3, text="abc"), "line 2, id 'a', spans[0]: offsets 0-3 select 'Out' but field 'text' is 'abc'"),
    (_span(text=""), "line 2, id 'a', spans[0]: a span needs offsets or a 'text'"),
    (_span(text="x", match="weird"), "line 2, id 'a', spans[0]: field 'match' must be one of exact, normalized, "
                                     "fuzzy, none, not 'weird'"),
    (_span(start=0, end=2, match="none"), "line 2, id 'a', spans[0]: a span with match 'none' cannot have offsets"),
    (_span(text="x", severity=True), "line 2, id 'a', spans[0]: field 'severity' must be an integer 1-5 or null"),
    (_span(text="x", severity=6), "line 2, id 'a', spans[0]: field 'severity' must be an integer 1-5 or null, not 6"),
    (_span(text="x", severity=2.0), "line 2, id 'a', spans[0]: field 'severity' must be an integer 1-5 or null"),
    (_span(text="x", ambiguous="yes"), "line 2, id 'a', spans[0]: field 'ambiguous' must be true or false"),
    (_span(text="x", ambiguous=True), "line 2, id 'a', spans[0]: an ambiguous span needs offsets"),
    (_span(text="x", category="c" * 101), "line 2, id 'a', spans[0]: field 'category' is 101 characters long"),
    (_span(text="x", explanation="bad\x00"), "line 2, id 'a', spans[0]: field 'explanation' contains a NUL"),
    # an annotation
    (_item(annotations=[3]), f"{ANNOTATION}: an annotation must be an object"),
    (_item(annotations=[{"kind": "human"}]), f"{ANNOTATION}: field 'source' is missing"),
    (_item(annotations=[{"source": "s", "kind": "robot"}]), f"{ANNOTATION}: field 'kind' must be one of ensemble, "
                                                           "annotator, supervisor, human, gold, not 'robot'"),
    (_item(annotations=[{"source": "s", "kind": "human", "score_label": "L" * 33}]),
     f"{ANNOTATION}: field 'score_label' is 33 characters long; at most 32 are allowed"),
    (_item(annotations=[{"source": "s", "kind": "human", "score": True}]), f"{ANNOTATION}: field 'score' must be a "
                                                                          "finite number"),
    # a judgment
    (_item(annotations=[{"source": "s", "kind": "human", "spans": [{"text": "x", "judgments": [1]}]}]),
     f"{JUDGMENT}: a judgment must be an object"),
    (_judgment(annotator=None) | {}, f"{JUDGMENT}: field 'annotator' must be a string"),
    (_judgment(span_verdict="maybe"), f"{JUDGMENT}: field 'span_verdict' must be one of error, not_error, no_span, "
                                      "hallucination, not 'maybe'"),
    (_judgment(explanation_verdict="meh"), f"{JUDGMENT}: field 'explanation_verdict' must be one of correct"),
    (_judgment(flags=["bogus"]), f"{JUDGMENT}: field 'flags[0]' must be one of too_strict"),
    (_judgment(flags="too_strict"), f"{JUDGMENT}: field 'flags' must be a list"),
    (_judgment(annotator="a" * 151), f"{JUDGMENT}: field 'annotator' is 151 characters long; at most 150"),
]


@pytest.mark.parametrize(("obj", "message"), BAD, ids=[m.split(": ", 1)[1][:50] for _, m in BAD])
def test_parse_item_refuses_a_bad_object_naming_place_and_field(obj, message):
    with pytest.raises(FormatError) as excinfo:
        parse_item(obj, "line 2")
    assert str(excinfo.value).startswith(message), str(excinfo.value)


def test_parse_item_reads_a_good_object_with_the_formats_defaults():
    obj = _item(id=7, score={"f": 3}, spans=[{"start": 0, "end": 3}], notes=[1], dataset="ignored",
                annotations=[{"source": "s", "kind": "human", "spans": [
                    {"text": "nowhere", "judgments": [{"annotator": "e", "span_verdict": "", "flags": [
                        "repeated", "too_strict", "repeated"]}]}]}])
    parsed = parse_item(obj, "line 1")
    assert parsed.where == "line 1, id '7'" and parsed.external_id == "7"
    assert parsed.human_scores == {"f": 3.0} and parsed.extra == {"notes": [1]}
    assert parsed.spans == [{"start": 0, "end": 3, "text": "Out", "explanation": "", "severity": None,
                             "category": "", "match": "exact", "judgments": []}]
    span = parsed.annotations[0]["spans"][0]
    assert span["match"] == "none" and span["start"] is None
    assert span["judgments"] == [{"annotator": "e", "span_verdict": None, "explanation_verdict": None,
                                  "flags": ["too_strict", "repeated"], "comment": ""}]
