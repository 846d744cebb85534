"""The item file format (JSON list or JSONL): streaming reader, validation and export record types.

No Django here: the import service stores what this module returns, and tests use it alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NotRequired, TypedDict

from corpus.protocol import EXPLANATION_VERDICT_VALUES as EXPLANATION_VERDICTS
from corpus.protocol import FLAG_VALUES as FLAGS
from corpus.protocol import SPAN_VERDICT_VALUES as SPAN_VERDICTS

KINDS = ("ensemble", "annotator", "supervisor", "human", "gold")
MATCHES = ("exact", "normalized", "fuzzy", "none")
_CHUNK = 1 << 16


class FormatError(Exception):
    """A problem in an item file, with the place (line/object) and field it concerns."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class JudgmentRecord(TypedDict):
    annotator: str
    span_verdict: str | None
    explanation_verdict: str | None
    flags: list[str]
    comment: str


class SpanRecord(TypedDict):
    start: int | None
    end: int | None
    text: str
    explanation: str
    severity: int | None
    category: str
    match: str
    ambiguous: NotRequired[bool]  # written only when true: the location occurs more than once, none was named
    judgments: list[JudgmentRecord]


class AnnotationRecord(TypedDict):
    source: str
    kind: str
    model: str
    score: float | None
    score_label: str
    score_explanation: str
    spans: list[SpanRecord]


class ExportRecord(TypedDict):
    dataset: str
    item_id: str
    system: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    aspect: str | None
    human_scores: dict[str, float]
    annotations: list[AnnotationRecord]


@dataclass
class ParsedItem:
    """One validated object of an item file."""

    where: str
    external_id: str
    system: str
    inputs: dict[str, str]
    output_header: str
    output: str
    reference: str
    human_scores: dict[str, float]
    aspect: str  # "" when the record names none
    spans: list[SpanRecord] | None  # the top-level `spans` shorthand (imported under --source)
    annotations: list[AnnotationRecord] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# --- reading -----------------------------------------------------------------------------------------


def iter_objects(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield (place, decoded value) for each object of a JSON list or a JSONL file, streaming.

    The place names the line (JSONL) or the object's index and starting line (JSON list), so every
    later error message can point at it.
    """
    with path.open("r", encoding="utf-8") as handle:
        try:
            first = _first_significant_char(handle)
        except UnicodeDecodeError as exc:
            raise FormatError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        handle.seek(0)
        if first == "":
            raise FormatError(str(path), "the file is empty")
        if first == "[":
            yield from _iter_json_list(handle)
        else:
            yield from _iter_jsonl(handle)


def _first_significant_char(handle: IO[str]) -> str:
    while True:
        chunk = handle.read(4096)
        if not chunk:
            return ""
        stripped = chunk.lstrip("\ufeff \t\r\n")
        if stripped:
            return stripped[0]


def _iter_jsonl(handle: IO[str]) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(_lines_with_errors(handle), start=1):
        text = line.strip().lstrip("\ufeff")
        if not text:
            continue
        where = f"line {number}"
        try:
            yield where, json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def _lines_with_errors(handle: IO[str]) -> Iterator[str]:
    number = 0
    while True:
        try:
            line = handle.readline()
        except UnicodeDecodeError as exc:
            raise FormatError(f"line {number + 1}", f"not UTF-8 text ({exc.reason})") from None
        if not line:
            return
        number += 1
        yield line


def _iter_json_list(handle: IO[str]) -> Iterator[tuple[str, Any]]:
    """Decode a top-level JSON array one element at a time, holding at most one element in memory."""
    decoder = json.JSONDecoder()
    buffer = ""
    line = 1  # line number of buffer[0]
    eof = False

    def fill() -> bool:
        nonlocal buffer, eof
        if eof:
            return False
        try:
            chunk = handle.read(_CHUNK)
        except UnicodeDecodeError as exc:
            raise FormatError(f"near line {line}", f"not UTF-8 text ({exc.reason})") from None
        if not chunk:
            eof = True
            return False
        buffer += chunk
        return True

    def skip_ws() -> None:
        nonlocal buffer, line
        while True:
            stripped = buffer.lstrip("\ufeff \t\r\n")
            line += buffer.count("\n", 0, len(buffer) - len(stripped))
            buffer = stripped
            if buffer or not fill():
                return

    skip_ws()
    buffer = buffer[1:]  # the opening "["
    index = 0
    expect_value = True
    while True:
        skip_ws()
        if not buffer:
            raise FormatError(f"line {line}", "invalid JSON: the list is not closed with ']'")
        if buffer[0] == "]":
            if expect_value and index > 0:
                raise FormatError(f"line {line}", "invalid JSON: trailing comma before ']'")
            break
        if not expect_value:
            if buffer[0] != ",":
                raise FormatError(f"line {line}", "invalid JSON: expected ',' or ']' between objects")
            buffer = buffer[1:]
            expect_value = True
            continue
        where = f"object #{index + 1} (line {line})"
        while True:
            try:
                value, end = decoder.raw_decode(buffer)
                break
            except json.JSONDecodeError as exc:
                if not fill():
                    raise FormatError(
                        f"object #{index + 1} (line {line + exc.lineno - 1})",
                        f"invalid JSON: {exc.msg} (column {exc.colno})",
                    ) from None
        line += buffer.count("\n", 0, end)
        buffer = buffer[end:]
        yield where, value
        index += 1
        expect_value = False
    rest = buffer[1:].strip()
    while not rest and fill():
        rest = buffer[1:].strip()
    if rest:
        raise FormatError(f"line {line}", "invalid JSON: text after the closing ']'")


# --- validation --------------------------------------------------------------------------------------


def _text(value: Any, where: str, name: str, *, required: bool = False) -> str:
    if value is None:
        if required:
            raise FormatError(where, f"field '{name}' is missing")
        return ""
    if not isinstance(value, str):
        raise FormatError(where, f"field '{name}' must be a string, not {type(value).__name__}")
    return value


def _number(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FormatError(where, f"field '{name}' must be a finite number, not {value!r}")
    return float(value)


def _str_dict(value: Any, where: str, name: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise FormatError(where, f"field '{name}' must be an object of header -> text")
    for key, text in value.items():
        if not isinstance(text, str):
            raise FormatError(where, f"field '{name}.{key}' must be a string, not {type(text).__name__}")
    return dict(value)


def parse_item(obj: Any, where: str) -> ParsedItem:
    """Validate one object of an item file; raise FormatError naming the field that is wrong."""
    if not isinstance(obj, dict):
        raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
    raw_id = obj.get("id", obj.get("item_id"))
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise FormatError(where, "field 'id' is missing or not a string/integer")
    external_id = str(raw_id)
    where = f"{where}, id {external_id!r}"
    system = _text(obj.get("system"), where, "system")
    inputs = _str_dict(obj.get("inputs", {}), where, "inputs")
    if "outputs" not in obj:
        raise FormatError(where, "field 'outputs' is missing (expected {header: text} with one output)")
    outputs = _str_dict(obj["outputs"], where, "outputs")
    if len(outputs) != 1:
        raise FormatError(where, f"field 'outputs' must hold exactly one output text, found {len(outputs)}")
    ((output_header, output),) = outputs.items()
    if output == "":
        raise FormatError(where, f"field 'outputs.{output_header}' is empty")
    scores_raw = obj.get("score", obj.get("human_scores")) or {}
    if not isinstance(scores_raw, dict):
        raise FormatError(where, "field 'score' must be an object of aspect -> number")
    scores = {str(k): _number(v, where, f"score.{k}") for k, v in scores_raw.items()}
    aspect = obj.get("aspect")
    aspect = "" if aspect is None else _text(aspect, where, "aspect")
    spans = None
    if obj.get("spans") is not None:
        spans = [
            _parse_span(s, output, f"{where}, spans[{i}]") for i, s in enumerate(_list(obj["spans"], where, "spans"))
        ]
    annotations = [
        _parse_annotation(a, output, f"{where}, annotations[{i}]")
        for i, a in enumerate(_list(obj.get("annotations") or [], where, "annotations"))
    ]
    known = {"id", "item_id", "system", "inputs", "outputs", "score", "human_scores", "aspect", "spans",
             "annotations", "dataset", "reference"}
    extra = {k: v for k, v in obj.items() if k not in known}
    return ParsedItem(
        where=where, external_id=external_id, system=system, inputs=inputs, output_header=output_header,
        output=output, reference=_text(obj.get("reference"), where, "reference"), human_scores=scores,
        aspect=aspect, spans=spans, annotations=annotations, extra=extra,
    )


def _list(value: Any, where: str, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(where, f"field '{name}' must be a list")
    return value


def _parse_span(obj: Any, output: str, where: str) -> SpanRecord:
    if not isinstance(obj, dict):
        raise FormatError(where, "a span must be an object with start, end, text")
    start, end = obj.get("start"), obj.get("end")
    text = _text(obj.get("text"), where, "text")
    if (start is None) != (end is None):
        raise FormatError(where, "fields 'start' and 'end' must both be given or both be null")
    if start is not None:
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise FormatError(where, f"field '{name}' must be an integer character offset, not {value!r}")
        if not 0 <= start < end <= len(output):
            raise FormatError(
                where, f"offsets {start}-{end} are outside the output (length {len(output)}) or empty"
            )
        if "text" not in obj:
            text = output[start:end]
    match = obj.get("match")
    if match is None:
        match = "exact" if start is not None else "none"
    if match not in MATCHES:
        raise FormatError(where, f"field 'match' must be one of {', '.join(MATCHES)}, not {match!r}")
    if match == "none" and start is not None:
        raise FormatError(where, "a span with match 'none' cannot have offsets")
    if start is not None and match == "exact" and output[start:end] != text:
        raise FormatError(
            where,
            f"offsets {start}-{end} select {output[start:end]!r} but field 'text' is {text!r}",
        )
    if start is None and not text:
        raise FormatError(where, "a span needs offsets or a 'text'")
    ambiguous = obj.get("ambiguous", False)
    if not isinstance(ambiguous, bool):
        raise FormatError(where, f"field 'ambiguous' must be true or false, not {ambiguous!r}")
    if ambiguous and start is None:
        raise FormatError(where, "an ambiguous span needs offsets (it marks which of several occurrences was taken)")
    severity = obj.get("severity")
    if severity is not None and (isinstance(severity, bool) or severity not in (1, 2, 3, 4, 5)):
        raise FormatError(where, f"field 'severity' must be an integer 1-5 or null, not {severity!r}")
    judgments = [
        _parse_judgment(j, f"{where}, judgments[{i}]")
        for i, j in enumerate(_list(obj.get("judgments") or [], where, "judgments"))
    ]
    record = SpanRecord(
        start=start, end=end, text=text, explanation=_text(obj.get("explanation"), where, "explanation"),
        severity=severity, category=_text(obj.get("category"), where, "category"), match=match,
        judgments=judgments,
    )
    if ambiguous:
        record["ambiguous"] = True
    return record


def _parse_judgment(obj: Any, where: str) -> JudgmentRecord:
    if not isinstance(obj, dict):
        raise FormatError(where, "a judgment must be an object")
    annotator = _text(obj.get("annotator"), where, "annotator", required=True)
    span_verdict = obj.get("span_verdict") or None
    if span_verdict is not None and span_verdict not in SPAN_VERDICTS:
        raise FormatError(where, f"field 'span_verdict' must be one of {', '.join(SPAN_VERDICTS)}")
    explanation_verdict = obj.get("explanation_verdict") or None
    if explanation_verdict is not None and explanation_verdict not in EXPLANATION_VERDICTS:
        raise FormatError(where, f"field 'explanation_verdict' must be one of {', '.join(EXPLANATION_VERDICTS)}")
    flags = _list(obj.get("flags") or [], where, "flags")
    for flag in flags:
        if flag not in FLAGS:
            raise FormatError(where, f"unknown flag {flag!r} (known: {', '.join(FLAGS)})")
    return JudgmentRecord(
        annotator=annotator, span_verdict=span_verdict, explanation_verdict=explanation_verdict,
        flags=[f for f in FLAGS if f in flags], comment=_text(obj.get("comment"), where, "comment"),
    )


def _parse_annotation(obj: Any, output: str, where: str) -> AnnotationRecord:
    if not isinstance(obj, dict):
        raise FormatError(where, "an annotation must be an object")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise FormatError(where, f"field 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    score = obj.get("score")
    return AnnotationRecord(
        source=_text(obj.get("source"), where, "source", required=True),
        kind=kind,
        model=_text(obj.get("model"), where, "model"),
        score=None if score is None else _number(score, where, "score"),
        score_label=_text(obj.get("score_label"), where, "score_label"),
        score_explanation=_text(obj.get("score_explanation"), where, "score_explanation"),
        spans=[
            _parse_span(s, output, f"{where}, spans[{i}]")
            for i, s in enumerate(_list(obj.get("spans") or [], where, "spans"))
        ],
    )
