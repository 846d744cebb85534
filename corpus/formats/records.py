"""The record types of item files: what an export writes and the import reads back (TypedDicts), and one parsed item.

The docs' export-format reference is generated from these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class OccurrenceRecord(TypedDict):
    """The place an expert picked among an ambiguous span's occurrences; both null: not in the output."""

    start: int | None
    end: int | None


class JudgmentRecord(TypedDict):
    annotator: str
    span_verdict: str | None
    explanation_verdict: str | None
    flags: list[str]
    comment: str
    occurrence: NotRequired[OccurrenceRecord]  # written only when the expert picked (the span's offsets stay)


class ConsensusRecord(TypedDict):
    """A span's final label in exports (corpus.consensus.consensus_label)."""

    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None
    occurrence: NotRequired[OccurrenceRecord]  # the majority's pick, when the judges picked and a majority agrees


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
