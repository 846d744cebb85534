"""What one object of an item file may hold: pydantic models of an item, its annotations, spans and judgments.

No Django here. Each model says what its fields may hold (types, the protocol's vocabularies, the columns'
widths, text PostgreSQL can store); `parse_item` runs them and turns the first problem into a FormatError
naming the place (line/object, then annotation, span, judgment) and the field, in the importer's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from corpus import cleaning
from corpus.formats.errors import FormatError
from corpus.formats.records import AnnotationRecord, JudgmentRecord, ParsedItem, SpanRecord
from corpus.protocols.opennlgauge import (
    ANNOTATION_KIND_VALUES,
    EXPLANATION_VERDICT_VALUES,
    FLAG_VALUES,
    MATCH_KIND_VALUES,
    SEVERITIES,
    SPAN_VERDICT_VALUES,
)

# Column widths of the fields stored in a CharField (corpus.models); longer values are refused by name.
FIELD_LIMITS = {
    "id": 200, "system": 200, "outputs (header)": 200, "aspect": 200, "category": 100, "score_label": 32,
    "source": 200, "model": 200, "dataset": 200, "annotator": 150,
}


# The fields that name something (not dataset text): bidirectional controls are refused in them.
IDENTIFIER_FIELDS = frozenset({"system", "source", "model", "dataset"})


def text_problem(value: str, name: str) -> str | None:
    """Why the column of field `name` cannot hold `value` (a NUL, a lone surrogate, too wide, a bidirectional
    control in a name), or None."""
    key = name.split(".")[0]
    problem = cleaning.identifier_problem(value) if key in IDENTIFIER_FIELDS else cleaning.text_problem(value)
    if problem:
        return problem
    limit = FIELD_LIMITS.get(key)
    if limit is not None and len(value) > limit:
        return f"is {len(value)} characters long; at most {limit} are allowed"
    return None


def check_text(value: str, where: str, name: str) -> str:
    """Return `value`, or raise FormatError at `where` naming field `name` when its column cannot hold it."""
    problem = text_problem(value, name)
    if problem:
        raise FormatError(where, f"field '{name}' {problem}")
    return value


# --- field types ----------------------------------------------------------------------------------------


def _field_error(problem: str, field: str | None = None) -> PydanticCustomError:
    """An error worded after "field 'NAME'"; `field` names it when its place in the object does not."""
    context = {"problem": problem} if field is None else {"problem": problem, "field": field}
    return PydanticCustomError("field", "{problem}", context)


def _place_error(message: str) -> PydanticCustomError:
    """An error about a span as a whole (its offsets against the output), worded in full."""
    return PydanticCustomError("place", "{message}", {"message": message})


def _storable(name: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        problem = text_problem(value, name)
        if problem:
            raise _field_error(problem)
        return value

    return check


def _blank_if_null(value: Any) -> Any:
    return "" if value is None else value


def _empty_if_falsy(empty: Callable[[], Any]) -> BeforeValidator:
    """A missing or falsy value (null, "", 0, []) reads as empty, as the format always allowed."""
    return BeforeValidator(lambda value: value or empty())


def Text(name: str, *, nullable: bool = True) -> Any:  # noqa: N802 - used as a type
    """A string the column of field `name` can hold; null reads as "" unless the field must be given."""
    checks: tuple[Any, ...] = (AfterValidator(_storable(name)),)
    return Annotated[str, BeforeValidator(_blank_if_null), *checks] if nullable else Annotated[str, *checks]


def OneOf(values: tuple[str, ...]) -> Any:  # noqa: N802 - used as a type
    """A string from a closed vocabulary of the protocol."""

    def check(value: str) -> str:
        if value not in values:
            raise _field_error(f"must be one of {', '.join(values)}, not {value!r}")
        return value

    return Annotated[str, AfterValidator(check)]


def _finite(value: Any) -> Any:
    try:
        return cleaning.check_number(value, "")
    except cleaning.CleaningError:
        # str() of an integer of more than 4,300 digits raises: describe a huge one by its size
        big = isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64
        shown = f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits" if big else repr(value)[:40]
        raise _field_error(f"must be a finite number no larger than {cleaning.MAX_NUMBER:g} in size, "
                           f"not {shown}") from None


Number = Annotated[float, BeforeValidator(_finite)]


def _item_id(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _field_error("is missing or not a string/integer")
    return value


class _Strict(BaseModel):
    """No coercion: a number is not a string, true is not 1, "3" is not an offset."""

    model_config = ConfigDict(strict=True)


# --- the models -----------------------------------------------------------------------------------------


class OccurrenceIn(_Strict):
    """An expert's pick among an ambiguous span's occurrences; both null: the location is not in the output."""

    start: int | None = None
    end: int | None = None

    @model_validator(mode="after")
    def _ordered(self) -> OccurrenceIn:
        if (self.start is None) != (self.end is None):
            raise _place_error("occurrence: fields 'start' and 'end' must both be given or both be null")
        if self.start is not None and self.end is not None and not 0 <= self.start < self.end:
            raise _place_error(f"occurrence: offsets {self.start}-{self.end} are empty or negative")
        return self


class JudgmentIn(_Strict):
    annotator: Text("annotator", nullable=False)
    span_verdict: Annotated[OneOf(SPAN_VERDICT_VALUES) | None, BeforeValidator(lambda v: v or None)] = None
    explanation_verdict: Annotated[
        OneOf(EXPLANATION_VERDICT_VALUES) | None, BeforeValidator(lambda v: v or None)
    ] = None
    flags: Annotated[list[OneOf(FLAG_VALUES)], _empty_if_falsy(list)] = []
    comment: Text("comment") = ""
    occurrence: OccurrenceIn | None = None

    def record(self) -> JudgmentRecord:
        record = JudgmentRecord(
            annotator=self.annotator, span_verdict=self.span_verdict, explanation_verdict=self.explanation_verdict,
            flags=[f for f in FLAG_VALUES if f in self.flags], comment=self.comment,
        )
        if self.occurrence is not None:
            record["occurrence"] = {"start": self.occurrence.start, "end": self.occurrence.end}
        return record


class SpanIn(_Strict):
    """A span of an item's output. Checked against that output (the validation context's `output`): offsets
    inside it, `text` what they select when the match is exact, `text` taken from it when left out."""

    start: int | None = None
    end: int | None = None
    text: Text("text") = ""
    explanation: Text("explanation") = ""
    severity: Annotated[int, Field(ge=min(SEVERITIES), le=max(SEVERITIES))] | None = None
    category: Text("category") = ""
    match: OneOf(MATCH_KIND_VALUES) | None = None
    ambiguous: bool = False
    judgments: Annotated[list[JudgmentIn], _empty_if_falsy(list)] = []

    @model_validator(mode="after")
    def _placed(self, info: ValidationInfo) -> SpanIn:
        start, end = self.start, self.end
        if (start is None) != (end is None):
            raise _place_error("fields 'start' and 'end' must both be given or both be null")
        output = (info.context or {}).get("output")
        if output is None:
            return self  # the item's outputs are wrong, and that error is the one reported
        if start is not None and end is not None:
            if not 0 <= start < end <= len(output):
                raise _place_error(f"offsets {start}-{end} are outside the output (length {len(output)}) or empty")
            if "text" not in self.model_fields_set:
                self.text = output[start:end]
        if self.match is None:
            self.match = "exact" if start is not None else "none"
        if self.match == "none" and start is not None:
            raise _place_error("a span with match 'none' cannot have offsets")
        if start is not None and self.match == "exact" and output[start:end] != self.text:
            raise _place_error(f"offsets {start}-{end} select {output[start:end]!r} but field 'text' is {self.text!r}")
        if start is None and not self.text:
            raise _place_error("a span needs offsets or a 'text'")
        if self.ambiguous and start is None:
            raise _place_error("an ambiguous span needs offsets (it marks which of several occurrences was taken)")
        for j in self.judgments:
            picked = j.occurrence
            if picked is None:
                continue
            if not self.ambiguous or start is None or end is None:
                raise _place_error("judgments: an occurrence is picked only on an ambiguous span")
            if picked.start is not None and picked.end is not None and (
                    picked.end > len(output) or output[picked.start:picked.end] != output[start:end]):
                raise _place_error(f"judgments: occurrence {picked.start}-{picked.end} is not an occurrence of "
                                   f"{output[start:end]!r}")
        return self

    def record(self) -> SpanRecord:
        assert self.match is not None  # set by _placed
        record = SpanRecord(
            start=self.start, end=self.end, text=self.text, explanation=self.explanation, severity=self.severity,
            category=self.category, match=self.match, judgments=[j.record() for j in self.judgments],
        )
        if self.ambiguous:
            record["ambiguous"] = True
        return record


class AnnotationIn(_Strict):
    source: Text("source", nullable=False)
    kind: OneOf(ANNOTATION_KIND_VALUES)
    model: Text("model") = ""
    score: Number | None = None
    score_label: Text("score_label") = ""
    score_explanation: Text("score_explanation") = ""
    spans: Annotated[list[SpanIn], _empty_if_falsy(list)] = []

    def record(self) -> AnnotationRecord:
        return AnnotationRecord(
            source=self.source, kind=self.kind, model=self.model, score=self.score, score_label=self.score_label,
            score_explanation=self.score_explanation, spans=[s.record() for s in self.spans],
        )


KNOWN_FIELDS = frozenset({"id", "item_id", "system", "inputs", "outputs", "score", "human_scores", "aspect",
                          "spans", "annotations", "dataset", "reference"})
"""The fields an item's model reads (`dataset` is the import's choice, not the file's); others are kept as extra."""


class ItemIn(_Strict):
    """One object of an item file. Fields are validated in the order written here, so `outputs` has put the
    output text in the validation context before the spans are checked against it."""

    model_config = ConfigDict(strict=True, extra="allow")

    id: Annotated[Text("id", nullable=False), BeforeValidator(_item_id)] = Field(
        validation_alias=AliasChoices("id", "item_id"))
    system: Text("system") = ""
    inputs: dict[Text("inputs (header)", nullable=False), Text("inputs", nullable=False)] = {}
    outputs: dict[Text("outputs (header)", nullable=False), Text("outputs", nullable=False)]
    score: Annotated[dict[Text("aspect", nullable=False), Number], _empty_if_falsy(dict)] = Field(
        {}, validation_alias=AliasChoices("score", "human_scores"))
    aspect: Text("aspect") = ""
    reference: Text("reference") = ""
    spans: list[SpanIn] | None = None
    annotations: Annotated[list[AnnotationIn], _empty_if_falsy(list)] = []

    @field_validator("outputs")
    @classmethod
    def _one_output(cls, outputs: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        if len(outputs) != 1:
            raise _field_error(f"must hold exactly one output text, found {len(outputs)}")
        ((header, output),) = outputs.items()
        if output == "":
            raise _field_error("is empty", field=f"outputs.{header}")
        if info.context is not None:
            info.context["output"] = output
        return outputs

    @model_validator(mode="after")
    def _storable_extra(self) -> ItemIn:
        """Unknown fields are kept (jsonb): no text in them, keys included, may hold a NUL or a lone surrogate."""
        stack: list[tuple[str, Any]] = [(k, v) for k, v in (self.model_extra or {}).items() if k not in KNOWN_FIELDS]
        while stack:
            name, value = stack.pop()
            if isinstance(value, str):
                if problem := text_problem(value, name):
                    raise _field_error(problem, field=name)
            elif isinstance(value, dict):
                for key, inner in value.items():
                    if problem := text_problem(str(key), f"{name} (key)"):
                        raise _field_error(problem, field=f"{name} (key)")
                    stack.append((f"{name}.{key}", inner))
            elif isinstance(value, list):
                stack.extend((f"{name}[{i}]", inner) for i, inner in enumerate(value))
        return self

    def extra(self) -> dict[str, Any]:
        return {k: v for k, v in (self.model_extra or {}).items() if k not in KNOWN_FIELDS}


# --- pydantic's errors in the importer's words ----------------------------------------------------------

_PLACES = frozenset({"spans", "annotations", "judgments"})  # lists whose elements are places of their own
_NOT_AN_OBJECT = {
    "ItemIn": "expected a JSON object, found {type}",
    "AnnotationIn": "an annotation must be an object",
    "SpanIn": "a span must be an object with start, end, text",
    "JudgmentIn": "a judgment must be an object",
}
_MISSING = {"id": "is missing or not a string/integer",
            "outputs": "is missing (expected {header: text} with one output)"}
_KEY_NAMES = {"inputs": "inputs (header)", "outputs": "outputs (header)", "score": "aspect", "human_scores": "aspect"}
_SHOULD_BE = {
    "inputs": "an object of header -> text", "outputs": "an object of header -> text",
    "score": "an object of aspect -> number", "human_scores": "an object of aspect -> number",
    "start": "an integer character offset", "end": "an integer character offset",
    "severity": "an integer 1-5 or null", "ambiguous": "true or false", "flags": "a list",
    "spans": "a list", "annotations": "a list", "judgments": "a list",
}
_SCALARS = frozenset({"start", "end", "severity", "ambiguous"})  # shown by value in messages, others by type


def _split(loc: tuple[int | str, ...]) -> tuple[list[str], str, str]:
    """(places within the object, the field's name as the file writes it, the field's own key) of a location."""
    places: list[str] = []
    rest = list(loc)
    while len(rest) > 2 and rest[0] in _PLACES and isinstance(rest[1], int):
        places.append(f"{rest[0]}[{rest[1]}]")
        rest = rest[2:]
    if len(rest) == 2 and rest[0] in _PLACES and isinstance(rest[1], int):
        places.append(f"{rest[0]}[{rest[1]}]")  # the element itself
        return places, "", ""
    if rest and rest[-1] == "[key]":
        owner = str(rest[0])
        return places, _KEY_NAMES.get(owner, f"{owner} (key)"), owner
    name = ""
    for part in rest:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    leaf = next((str(p) for p in reversed(rest) if isinstance(p, str)), "")
    return places, name, leaf


def _message(error: ErrorDetails) -> tuple[list[str], str]:
    """The places and the message of one pydantic error."""
    places, name, leaf = _split(error["loc"])
    kind, value, context = error["type"], error["input"], error.get("ctx") or {}
    if kind == "place":
        return places, context["message"]
    if kind == "field":
        return places, f"field '{context.get('field', name)}' {context['problem']}"
    if kind in ("model_type", "model_attributes_type"):
        wording = _NOT_AN_OBJECT.get(context.get("class_name", ""), "expected a JSON object, found {type}")
        return places, wording.format(type=type(value).__name__)
    if kind == "missing":
        return places, f"field '{name}' {_MISSING.get(name, 'is missing')}"
    if kind == "string_type":
        return places, f"field '{name}' must be a string, not {type(value).__name__}"
    if kind == "string_too_long":
        return places, f"field '{name}' is {len(value)} characters long; at most {context['max_length']} are allowed"
    wording = _SHOULD_BE.get(leaf, "of another type")
    shown = repr(value)[:40] if leaf in _SCALARS else type(value).__name__
    return places, f"field '{name}' must be {wording}, not {shown}"


def parse_item(obj: Any, where: str) -> ParsedItem:
    """Validate one object of an item file; raise FormatError naming the place and the field that is wrong."""
    context: dict[str, Any] = {}
    try:
        item = ItemIn.model_validate(obj, context=context)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        places, message = _message(errors[0])
        raw_id = obj.get("id", obj.get("item_id")) if isinstance(obj, dict) else None
        named = isinstance(raw_id, str | int) and not isinstance(raw_id, bool) and not any(
            e["loc"][:1] in (("id",), ("item_id",)) for e in errors)
        if named:
            where = f"{where}, id {str(raw_id)[:60]!r}"
        raise FormatError(", ".join([where, *places]), message) from None
    ((output_header, output),) = item.outputs.items()
    return ParsedItem(
        where=f"{where}, id {item.id[:60]!r}", external_id=item.id, system=item.system, inputs=item.inputs,
        output_header=output_header, output=output, reference=item.reference, human_scores=item.score,
        aspect=item.aspect, spans=None if item.spans is None else [s.record() for s in item.spans],
        annotations=[a.record() for a in item.annotations], extra=item.extra(),
    )
