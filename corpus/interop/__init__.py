"""Other tools' annotation files: readers and writers for our JSONL, factgenie campaigns and Label Studio tasks.

No Django here. Each reader yields one `RawAnnotation` per (output, annotator) in a common shape; the
import service matches it to an item and resolves its spans with `resolve_span`, which either returns
a span record or raises a FormatError saying what is wrong with it. The writers produce what the real
tools open as it is (tests/interop runs factgenie 1.2.1 and Label Studio 1.23 on it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from corpus.formats import FormatError
from corpus.interop.factgenie import FactgenieCampaignWriter, read_factgenie, slug
from corpus.interop.jsonl import read_jsonl, to_jsonl
from corpus.interop.labelstudio import labelstudio_config, labelstudio_task, read_labelstudio
from corpus.interop.records import OutputAnnotation, RawAnnotation, unwritten_spans
from corpus.interop.spans import resolve_span

ANNOTATION_FILE_FORMATS: tuple[str, ...] = ("jsonl", "factgenie", "labelstudio")
"""The annotation file formats read and written: the import's and the export's --format, the forms' choices."""

__all__ = [
    "ANNOTATION_FILE_FORMATS", "FactgenieCampaignWriter", "OutputAnnotation", "RawAnnotation", "labelstudio_config",
    "labelstudio_task", "read_annotations", "resolve_span", "slug", "to_jsonl", "unwritten_spans",
]


def read_annotations(
    path: Path, fmt: str, *, name: str = "", annotators: dict[str, str] | None = None
) -> Iterator[RawAnnotation]:
    """Yield the annotations of a file (or of a factgenie campaign folder) in format `fmt`; `annotators`
    maps Label Studio user ids to our annotators' names."""
    if fmt not in ANNOTATION_FILE_FORMATS:
        raise FormatError("--format", f"unknown format {fmt!r} (known: {', '.join(ANNOTATION_FILE_FORMATS)})",
                          field="format")
    if fmt == "factgenie":
        yield from read_factgenie(path, name)
    elif fmt == "labelstudio":
        yield from read_labelstudio(path, name, annotators or {})
    else:
        yield from read_jsonl(path, name)
