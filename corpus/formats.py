"""The item file format (JSON list or JSONL): streaming reader, validation and export record types.

No Django here: the import service stores what this module returns, and tests use it alone.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NotRequired, TypedDict

from corpus import cleaning
from corpus.protocol import EXPLANATION_VERDICT_VALUES as EXPLANATION_VERDICTS
from corpus.protocol import FLAG_VALUES as FLAGS
from corpus.protocol import SPAN_VERDICT_VALUES as SPAN_VERDICTS
from errors import UserError

KINDS = ("ensemble", "annotator", "supervisor", "human", "gold")
MATCHES = ("exact", "normalized", "fuzzy", "none")
_CHUNK = 1 << 20  # bytes read at a time by the JSON-list reader


class FormatError(UserError):
    """A problem in an item file, with the place (line/object) and field it concerns."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


MAX_LISTED_ERRORS = 50  # an import lists this many bad objects, then says how many more there are


class FormatErrors(FormatError):
    """Several bad objects of one file, each named by its place: the first MAX_LISTED_ERRORS, then a count."""

    def __init__(self, errors: list[FormatError]) -> None:
        listed = [str(e) for e in errors[:MAX_LISTED_ERRORS]]
        more = len(errors) - len(listed)
        lines = "\n".join(listed) + (f"\n... and {more} more" if more else "")
        super().__init__(f"{len(errors)} bad objects", f"fix them and import again:\n{lines}")
        self.errors = errors


def named(error: FormatError, name: str) -> str:
    """The message of `error` about the file called `name`, with the name once (never twice, never a temp path)."""
    text = str(error)
    return text if text.startswith(f"{name}:") else f"{name}: {text}"


class JudgmentRecord(TypedDict):
    annotator: str
    span_verdict: str | None
    explanation_verdict: str | None
    flags: list[str]
    comment: str


class ConsensusRecord(TypedDict):
    """A span's final label in exports (corpus.consensus.consensus_label)."""

    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None


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
    consensus: NotRequired[ConsensusRecord]  # written by export_items; absent in files other tools wrote


class LLMCallRecord(TypedDict):
    """One LLM call behind a machine annotation, with the server's prompt counts (`cached_tokens`: taken from its
    prompt cache, None when it did not say)."""

    attempt: int
    from_cache: bool
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None


class AnnotationRecord(TypedDict):
    source: str
    kind: str
    model: str
    score: float | None
    score_label: str
    score_explanation: str
    spans: list[SpanRecord]
    # Exported, not imported: how the LLM answer was read (ok, partial, failed, n/a) and why not whole.
    parse_status: NotRequired[str]
    problems: NotRequired[list[str]]
    llm_calls: NotRequired[list[LLMCallRecord]]  # exported only: the calls that answered it
    # Exported only when true: the annotation came from the simulated server, not a model.
    simulated: NotRequired[bool]


class ExportRecord(TypedDict):
    dataset: str
    item_id: str
    system: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    aspect: str | None
    human_scores: dict[str, float]
    annotations: list[AnnotationRecord]
    simulated: NotRequired[bool]  # only when true: an annotation of the record came from the simulated server


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

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted; real item files need a handful of levels."""

# Column widths of the fields stored in a CharField (corpus.models); longer values are refused by name.
FIELD_LIMITS = {
    "id": 200, "system": 200, "outputs (header)": 200, "aspect": 200, "category": 100, "score_label": 32,
    "source": 200, "model": 200, "dataset": 200, "annotator": 150,
}


MAX_OBJECT_MB = 512
"""Largest single object (one JSONL line, one element of a JSON list) read; refused while reading beyond it."""

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = cleaning.json_decoder("the object")  # refuses NaN/Infinity and integers too long to read
_TAIL = 64  # an error this close to the end of the buffer may be a token cut short
_DEEP = f"invalid JSON: nested deeper than {MAX_DEPTH} levels"


def _too_large(where: str) -> FormatError:
    return FormatError(where, f"the object is larger than {MAX_OBJECT_MB} MB")


def iter_objects(path: Path, *, name: str = "", errors: list[FormatError] | None = None) -> Iterator[tuple[str, Any]]:
    """Yield (place, decoded value) for each object of a JSON list or a JSONL file, streaming.

    The place names the line (JSONL) or the object's index and starting line (JSON list), so every
    later error message can point at it. `name` is how the file is called in messages about the whole
    file (an upload's own name, never the temporary path it was spooled to). Depth and size are bounded
    while reading: a deeply nested or huge object is refused before it is held in memory whole. With
    `errors`, a JSONL line that is not a readable object is appended there and reading goes on (a JSON list
    cannot be resynchronised after a syntax error, so it still stops at the first).
    """
    with path.open("rb") as handle:
        first = _first_significant_byte(handle)
        handle.seek(0)
        if first == b"":
            raise FormatError(name or "the file", "the file is empty")
        if first == b"[":
            yield from _ListReader(handle).objects()
        else:
            yield from _iter_jsonl(handle, errors)


def _first_significant_byte(handle: IO[bytes]) -> bytes:
    while True:
        chunk = handle.read(4096)
        if not chunk:
            return b""
        stripped = chunk.lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        if stripped:
            return stripped[:1]


def _decode_line(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)"
        raise FormatError(f"line {number}", reason) from None


def _iter_jsonl(handle: IO[bytes], errors: list[FormatError] | None = None) -> Iterator[tuple[str, Any]]:
    # Binary lines decoded one at a time: an encoding error is reported on the line it is on.
    limit = MAX_OBJECT_MB << 20
    number = 0
    for raw in iter(lambda: handle.readline(limit + 1), b""):
        number += 1
        if len(raw) > limit:
            raise _too_large(f"line {number}")
        try:
            read = _read_line(raw, number)
        except FormatError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        if read is not None:
            yield read


def _read_line(raw: bytes, number: int) -> tuple[str, Any] | None:
    """One JSONL line as (place, value); None for a blank line; FormatError naming the line otherwise."""
    text = _decode_line(raw, number).strip().lstrip("\ufeff")
    if not text:
        return None
    where = f"line {number}"
    try:
        value = cleaning.loads(text, "the object", texts=False)
    except cleaning.CleaningError as exc:
        raise FormatError(where, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise FormatError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise FormatError(where, f"invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    check_depth(value, where)
    return where, value


def check_depth(value: Any, where: str) -> None:
    """Refuse values nested deeper than MAX_DEPTH (they break recursive code further on)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FormatError(where, _DEEP)
        if isinstance(current, dict):
            stack.extend((v, depth + 1) for v in current.values() if isinstance(v, dict | list))
        elif isinstance(current, list):
            stack.extend((v, depth + 1) for v in current if isinstance(v, dict | list))


class _ListReader:
    """A top-level JSON array decoded one element at a time by the C decoder (one parser over the file).

    Text is decoded into a buffer _CHUNK bytes at a time and each element is decoded in place. An
    element that runs past the buffer is decoded again once more text is read, each read at least
    doubling what the buffer holds of it, so the work stays linear in the element's size. Bounds hold
    while reading: the C decoder recurses and stops at the recursion limit (a deeply nested element
    fails within a few kilobytes, whatever its length), and no element may grow past MAX_OBJECT_MB.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.line = 1  # line number at self.pos
        self.lines_read = 1  # line number at the end of the buffer (for encoding errors)
        self.eof = False
        self.first = True

    def _read(self, at_least: int = 0) -> bool:
        """Append more text to the buffer (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        raw = self.handle.read(max(_CHUNK, at_least))
        final = not raw
        if self.first:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
            self.first = False
        try:
            text = self.decoder.decode(raw, final=final)
        except UnicodeDecodeError as exc:
            line = self.lines_read + raw[: exc.start].count(b"\n")
            raise FormatError(f"line {line}", f"not UTF-8 text ({exc.reason})") from None
        self.lines_read += text.count("\n")
        self.buf += text
        self.eof = final
        if len(self.buf) > MAX_OBJECT_MB << 20:
            raise _too_large(f"line {self.line}")
        return True

    def _advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def _next_char(self) -> str:
        """The next significant character ('' at the end of the file), reading as needed."""
        while True:
            self._advance(_WS.match(self.buf, self.pos).end())
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._read():
                return ""

    def objects(self) -> Iterator[tuple[str, Any]]:
        self._next_char()
        self._advance(self.pos + 1)  # the '['
        index = 0
        following = ","
        if self._next_char() == "]":  # an empty list
            self._advance(self.pos + 1)
            following = "]"
        while following == ",":
            index += 1
            where = f"object #{index} (line {self.line})"
            yield where, self._element(where)
            following = self._next_char()
            if following not in (",", "]"):
                found = "the end of the file" if following == "" else repr(following)
                raise FormatError(f"object #{index + 1} (line {self.line})",
                                  f"invalid JSON: expected ',' or ']' after object #{index}, found {found}")
            self._advance(self.pos + 1)
            if following == ",":
                self._next_char()
        if self._next_char() != "":
            raise FormatError(f"line {self.line}", "invalid JSON: text after the closing ']'")

    def _element(self, where: str) -> Any:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise FormatError(where, _DEEP) from None
            except cleaning.CleaningError as exc:
                raise FormatError(where, str(exc)) from None
            except json.JSONDecodeError as exc:
                if self._cut(exc) and self._read(len(self.buf) - self.pos):
                    continue  # the element runs past the buffer: decode again with (at least twice) more of it
                line = self.line + self.buf.count("\n", self.pos, exc.pos)
                raise FormatError(f"{where.split(' (')[0]} (line {line})", f"invalid JSON: {exc.msg}") from None
            if end == len(self.buf) and self._read(len(self.buf) - self.pos):
                continue  # a number may go on in the next piece
            break
        check_depth(value, where)
        try:
            cleaning.check_tree(value, "the object", texts=False)
        except cleaning.CleaningError as exc:
            raise FormatError(where, str(exc)) from None
        self._advance(end)
        return value

    def _cut(self, exc: json.JSONDecodeError) -> bool:
        """Whether a decoding error may only mean that the buffer ends inside the element (a string runs
        on, or the error lies in the last few characters: a number, literal or escape cut short)."""
        return exc.msg.startswith("Unterminated string") or len(self.buf) - exc.pos <= _TAIL


def check_text(value: str, where: str, name: str) -> str:
    """Refuse NUL characters and lone surrogates (PostgreSQL text cannot hold them) and values wider than their
    column."""
    problem = cleaning.text_problem(value)
    if problem:
        raise FormatError(where, f"field '{name}' {problem}")
    limit = FIELD_LIMITS.get(name.split(".")[0])
    if limit is not None and len(value) > limit:
        raise FormatError(where, f"field '{name}' is {len(value)} characters long; at most {limit} are allowed")
    return value


# --- validation --------------------------------------------------------------------------------------


def _text(value: Any, where: str, name: str, *, required: bool = False) -> str:
    if value is None:
        if required:
            raise FormatError(where, f"field '{name}' is missing")
        return ""
    if not isinstance(value, str):
        raise FormatError(where, f"field '{name}' must be a string, not {type(value).__name__}")
    return check_text(value, where, name)


def _number(value: Any, where: str, name: str) -> float:
    try:
        return float(cleaning.check_number(value, name))
    except cleaning.CleaningError:
        # str() of an integer of more than 4,300 digits raises: describe a huge one by its size
        big = isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64
        shown = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits" if big else repr(value)[:40]
        raise FormatError(where, f"field '{name}' must be a finite number no larger than "
                                 f"{cleaning.MAX_NUMBER:g} in size, not {shown}") from None


def _str_dict(value: Any, where: str, name: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise FormatError(where, f"field '{name}' must be an object of header -> text")
    for key, text in value.items():
        if not isinstance(text, str):
            raise FormatError(where, f"field '{name}.{key}' must be a string, not {type(text).__name__}")
        check_text(key, where, f"{name} (header)")
        check_text(text, where, f"{name}.{key}")
    return dict(value)


def parse_item(obj: Any, where: str) -> ParsedItem:
    """Validate one object of an item file; raise FormatError naming the field that is wrong."""
    if not isinstance(obj, dict):
        raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
    raw_id = obj.get("id", obj.get("item_id"))
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise FormatError(where, "field 'id' is missing or not a string/integer")
    external_id = check_text(str(raw_id), where, "id")
    where = f"{where}, id {external_id[:60]!r}"
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
    scores = {check_text(str(k), where, "aspect"): _number(v, where, f"score.{k}") for k, v in scores_raw.items()}
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
    _no_nul(extra, where)
    return ParsedItem(
        where=where, external_id=external_id, system=system, inputs=inputs, output_header=output_header,
        output=output, reference=_text(obj.get("reference"), where, "reference"), human_scores=scores,
        aspect=aspect, spans=spans, annotations=annotations, extra=extra,
    )


def _no_nul(extra: dict[str, Any], where: str) -> None:
    """Refuse NUL characters anywhere in the kept unknown fields (PostgreSQL's jsonb cannot hold them)."""
    stack: list[tuple[str, Any]] = list(extra.items())
    while stack:
        name, value = stack.pop()
        if isinstance(value, str):
            check_text(value, where, name)
        elif isinstance(value, dict):
            for key, inner in value.items():
                check_text(str(key), where, f"{name} (key)")
                stack.append((f"{name}.{key}", inner))
        elif isinstance(value, list):
            stack.extend((f"{name}[{i}]", inner) for i, inner in enumerate(value))


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
