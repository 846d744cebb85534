"""The item file format (JSON list or JSONL): the streaming reader, the models validating an object, the records.

No Django here: the import service stores what `parse_item` returns, and tests use it alone.
"""

from __future__ import annotations

from corpus.formats.errors import MAX_LISTED_ERRORS, FormatError, FormatErrors, named
from corpus.formats.items import FIELD_LIMITS, check_text, parse_item
from corpus.formats.reader import MAX_DEPTH, check_depth, iter_objects
from corpus.formats.records import (
    AnnotationRecord,
    ConsensusRecord,
    ExportRecord,
    JudgmentRecord,
    LLMCallRecord,
    OccurrenceRecord,
    ParsedItem,
    SpanRecord,
)

__all__ = [
    "FIELD_LIMITS", "MAX_DEPTH", "MAX_LISTED_ERRORS", "AnnotationRecord", "ConsensusRecord", "ExportRecord",
    "FormatError", "FormatErrors", "JudgmentRecord", "LLMCallRecord", "OccurrenceRecord", "ParsedItem", "SpanRecord",
    "check_depth", "check_text", "iter_objects", "named", "parse_item",
]
