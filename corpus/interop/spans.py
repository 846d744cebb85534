"""Placing a span another tool wrote in the output it annotates: offsets, text, and how they match.

No Django here. The import service calls `resolve_span` on every span a reader yields.
"""

from __future__ import annotations

from typing import Any

from corpus.formats import FormatError, SpanRecord, check_depth, check_text
from corpus.protocols.opennlgauge import SEVERITIES

# how far past `start + len(text)` a whitespace-normalized match may end (the text may have lost spaces)
_SLACK = 64


def normalize(text: str) -> str:
    """Case and whitespace folded: the comparison behind `match: normalized`."""
    return " ".join(text.split()).casefold()


def _int(value: Any, where: str, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(where, f"field '{name}' must be an integer character offset, not {value!r}")
    return value


def resolve_span(raw: Any, output: str, where: str) -> SpanRecord:
    """Place one span in `output`: `end` defaults to start + len(text); case/whitespace differences match
    as 'normalized'. Raise FormatError for an empty or impossible span."""
    if not isinstance(raw, dict):
        raise FormatError(where, "a span must be an object with start and text")
    check_depth(raw, where)
    start, end = _int(raw.get("start"), where, "start"), _int(raw.get("end"), where, "end")
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise FormatError(where, f"field 'text' must be a string, not {type(text).__name__}")
    if text is not None:
        check_text(text, where, "text")
    severity = raw.get("severity")
    if severity is not None and (isinstance(severity, bool) or severity not in SEVERITIES):
        raise FormatError(where, f"field 'severity' must be an integer 1-5 or null, not {severity!r}")
    category = raw.get("category")
    category = "" if category is None else check_text(str(category), where, "category")
    explanation = raw.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise FormatError(where, f"field 'explanation' must be a string, not {type(explanation).__name__}")
    explanation = check_text(explanation or "", where, "explanation")
    base = SpanRecord(
        start=None, end=None, text=text or "", explanation=explanation, severity=severity, category=category,
        match="none", judgments=[],
    )
    if start is None:
        if end is not None:
            raise FormatError(where, "field 'end' is given without 'start'")
        if not (text or "").strip():
            raise FormatError(where, "empty span: no offsets and no text")
        return base  # a location not in the text
    if not 0 <= start < len(output):
        raise FormatError(where, f"impossible span: start {start} is outside the output (length {len(output)})")
    derived = end is None
    if derived:
        if not text:
            raise FormatError(where, "empty span: no 'end' and an empty 'text'")
        end = start + len(text)
    if end <= start:
        raise FormatError(where, f"empty span: start {start}, end {end}")
    if text is None or (text == "" and not derived):
        text = output[start:end]
    if end > len(output) and not derived:
        raise FormatError(where, f"impossible span: end {end} is past the end of the output (length {len(output)})")
    selected = output[start:end]
    if selected == text:
        return {**base, "start": start, "end": end, "text": text, "match": "exact"}
    wanted = normalize(text)
    if wanted and normalize(selected) == wanted:
        return {**base, "start": start, "end": end, "text": text, "match": "normalized"}
    if wanted and derived:
        # whitespace may differ in length: find the end whose text folds to the same string
        for candidate in range(start + 1, min(len(output), end + _SLACK) + 1):
            if normalize(output[start:candidate]) == wanted and not output[candidate - 1].isspace():
                return {**base, "start": start, "end": candidate, "text": text, "match": "normalized"}
    if end > len(output):
        raise FormatError(
            where, f"impossible span: start {start} + len(text) {len(text)} runs past the output (length {len(output)})"
        )
    raise FormatError(where, f"offsets {start}-{end} select {selected[:80]!r} but field 'text' is {text[:80]!r}")
