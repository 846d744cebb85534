"""Our own annotation JSONL: one line per (output, annotator) with its spans; the writer's lines re-import as they are.

No Django here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpus.formats import FormatError, iter_objects
from corpus.interop.records import OutputAnnotation, RawAnnotation, item_id, text_field


def _spans(obj: dict[str, Any], where: str) -> list[Any]:
    spans = obj.get("spans")
    if not isinstance(spans, list):
        raise FormatError(where, "field 'spans' is missing or not a list ([] records that no error was found)")
    return spans


def read_jsonl(path: Path, name: str) -> Iterator[RawAnnotation]:
    for where, obj in iter_objects(path, name=name):
        if not isinstance(obj, dict):
            raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
        yield RawAnnotation(
            where=where, item_id=item_id(obj, where, "item_id", "id"), system=text_field(obj, "system", where),
            aspect=text_field(obj, "aspect", where), model=text_field(obj, "model", where), spans=_spans(obj, where),
            machine=bool(obj.get("model")),
        )


def to_jsonl(annotation: OutputAnnotation) -> str:
    """Our JSONL: the import format exactly, so an export re-imports to the same annotations."""
    record: dict[str, Any] = {"item_id": annotation.item_id, "system": annotation.system}
    if annotation.aspect:
        record["aspect"] = annotation.aspect
    if annotation.model:
        record["model"] = annotation.model
    record["spans"] = [
        {key: span[key] for key in ("start", "end", "text", "category", "explanation", "severity")}
        for span in annotation.spans
    ]
    return json.dumps(record, ensure_ascii=False) + "\n"
