"""Tolerant parsers for annotator, supervisor and distilled LLM answers (never raise on any text).

The package is split by concern: `model` (the result), `traces` and `prepass` (what real models write
around and instead of our format), `fields` (the field vocabulary), `lines`/`blocks` (the block parser),
`json_answer` (JSON answers read as field text), `values`, `locations`, `answer`.
"""

from __future__ import annotations

from evaluation.engine.parsing.answer import parse_annotator_answer, parse_distilled_answer, parse_supervisor_answer
from evaluation.engine.parsing.locations import clean_location
from evaluation.engine.parsing.model import LABELS, ParsedAnswer, ParsedError, Status, label_to_score, score_to_label
from evaluation.engine.parsing.values import parse_score_value, parse_severity

__all__ = [
    "LABELS",
    "ParsedAnswer",
    "ParsedError",
    "Status",
    "clean_location",
    "label_to_score",
    "parse_annotator_answer",
    "parse_distilled_answer",
    "parse_score_value",
    "parse_severity",
    "parse_supervisor_answer",
    "score_to_label",
]
