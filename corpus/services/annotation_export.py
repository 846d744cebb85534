"""Export annotations in other tools' formats (our JSONL, factgenie, Label Studio), streaming."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby

from django.db.models import Prefetch, QuerySet

from corpus.annotation_files import (
    OutputAnnotation,
    factgenie_metadata,
    labelstudio_config,
    labelstudio_task,
    to_factgenie,
    to_jsonl,
)
from corpus.formats import SpanRecord
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Source, SourceKind

CHUNK = 500
MACHINE_KINDS = {AnnotationKind.ANNOTATOR, AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR}


def source_for_export(label: str) -> Source | None:
    """The source named `label`: an external one first, then an imported file's (runs and experts have their own)."""
    for kind in (SourceKind.EXTERNAL, SourceKind.IMPORT, SourceKind.RUN):
        source = Source.objects.filter(kind=kind, label=label).first()
        if source is not None:
            return source
    return None


def output_annotations(annotations: QuerySet[Annotation]) -> Iterator[OutputAnnotation]:
    """Stream annotations (ordered by item, aspect, model) with their spans, CHUNK at a time."""
    spans = ErrorSpan.objects.order_by("position", "pk")
    rows = (
        annotations.select_related("item", "source")
        .order_by("item__position", "aspect", "model", "pk")
        .prefetch_related(Prefetch("spans", queryset=spans))
        .iterator(chunk_size=CHUNK)
    )
    for annotation in rows:
        yield OutputAnnotation(
            item_id=annotation.item.external_id, system=annotation.item.system, output=annotation.item.output,
            aspect=annotation.aspect, model=annotation.model, source=annotation.source.label,
            machine=annotation.kind in MACHINE_KINDS,
            spans=[
                SpanRecord(start=s.start, end=s.end, text=s.text, explanation=s.explanation, severity=s.severity,
                           category=s.category, match=s.match, judgments=[])
                for s in annotation.spans.all()
            ],
        )


def categories_of(annotations: QuerySet[Annotation]) -> list[str]:
    return sorted(set(ErrorSpan.objects.filter(annotation__in=annotations).values_list("category", flat=True)))


def export_annotation_lines(annotations: QuerySet[Annotation], fmt: str, *, dataset: str) -> Iterator[str]:
    """The annotations as text in `fmt`: JSONL lines (ours, factgenie) or one streamed Label Studio JSON list."""
    if fmt == "jsonl":
        for annotation in output_annotations(annotations):
            yield to_jsonl(annotation)
    elif fmt == "factgenie":
        categories = categories_of(annotations)
        for annotation in output_annotations(annotations):
            yield to_factgenie(annotation, dataset=dataset, categories=categories)
    elif fmt == "labelstudio":
        yield "["
        tasks = groupby(output_annotations(annotations), key=lambda a: (a.item_id, a.system, a.aspect))
        for number, (_, group) in enumerate(tasks, start=1):
            task = json.dumps(labelstudio_task(number, list(group)), ensure_ascii=False)
            yield ("\n" if number == 1 else ",\n") + task
        yield "\n]\n"
    else:
        raise ValueError(f"unknown format {fmt!r}")


def source_annotations(dataset: Dataset, source: Source) -> QuerySet[Annotation]:
    annotations = Annotation.objects.filter(item__dataset=dataset, source=source)
    if source.kind == SourceKind.RUN:
        kinds = set(annotations.values_list("kind", flat=True).distinct())
        final = next((k for k in (AnnotationKind.ENSEMBLE, AnnotationKind.ANNOTATOR) if k in kinds), None)
        annotations = annotations.filter(kind=final) if final else annotations.none()
    return annotations


__all__ = [
    "categories_of", "export_annotation_lines", "factgenie_metadata", "labelstudio_config", "output_annotations",
    "source_annotations", "source_for_export",
]
