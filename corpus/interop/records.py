"""The shapes every format shares: an annotation as a file gives it, one as the writers take it, and its fields.

No Django here. Each reader yields `RawAnnotation`s; the writers take `OutputAnnotation`s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from corpus.formats import FormatError, SpanRecord

BLANK_CATEGORY = "Error"  # the name a span without a category is listed under (read back as no category)


@dataclass
class RawAnnotation:
    """One output's spans by one annotator or model, as a file gives them."""

    where: str
    item_id: str
    system: str
    aspect: str
    model: str
    spans: list[Any]  # dicts with start, end?, text, category?, explanation?, severity?
    output: str | None = None  # the output text the file carries, checked against the item's
    machine: bool = False  # `model` names a model (else a person or nothing)
    dataset: str | None = None  # the dataset and split a factgenie line names (None: the file does not say)
    split: str | None = None


@dataclass
class OutputAnnotation:
    """One stored annotation with what the writers need of its item."""

    item_id: str
    system: str
    output: str
    aspect: str
    model: str
    source: str
    machine: bool
    spans: list[SpanRecord]
    example_idx: int | None = None  # the item's place in its dataset (factgenie's integer example ids)


def unwritten_spans(annotation: OutputAnnotation) -> int:
    """Spans the factgenie and Label Studio formats cannot hold (no place in the text)."""
    return sum(1 for s in annotation.spans if s["start"] is None)


def category_names(categories: list[str]) -> list[str]:
    """The category list of a campaign or project: our categories in order, a blank one under BLANK_CATEGORY."""
    return list(dict.fromkeys(c or BLANK_CATEGORY for c in categories))


def item_id(obj: dict[str, Any], where: str, *keys: str) -> str:
    """The first of `keys` that holds a string or an integer, as text."""
    for key in keys:
        value = obj.get(key)
        if value is not None and not isinstance(value, bool) and isinstance(value, str | int):
            return str(value)
    raise FormatError(where, f"field '{keys[0]}' is missing or not a string/integer")


def text_field(obj: dict[str, Any], key: str, where: str, name: str | None = None) -> str:
    """A string field ('' when absent); lengths and NULs are checked per record by the importer, so that all
    problems are listed."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(where, f"field '{name or key}' must be a string, not {type(value).__name__}")
    return value
