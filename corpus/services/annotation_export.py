"""Export annotations in other tools' formats (our JSONL, factgenie, Label Studio), streaming."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from corpus.formats import FormatError, SpanRecord
from corpus.interop import (
    FactgenieCampaignWriter,
    OutputAnnotation,
    labelstudio_config,
    labelstudio_task,
    slug,
    to_jsonl,
    unwritten_spans,
)
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Source, SourceKind

CHUNK = 500
MACHINE_KINDS = {AnnotationKind.ANNOTATOR, AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR}
# where a source name is looked up, in this order: another tool's file, an imported item file, a run, a campaign
_LOOKUP = (SourceKind.EXTERNAL, SourceKind.IMPORT, SourceKind.RUN, SourceKind.CAMPAIGN)


class UnknownSource(FormatError):
    """A source name that no annotation of the dataset carries; the message lists the dataset's sources."""


def dataset_sources(dataset: Dataset) -> list[str]:
    """The labels of the sources with annotations in `dataset`, sorted."""
    return sorted(set(Source.objects.filter(annotations__item__dataset=dataset).values_list("label", flat=True)))


def source_for_export(dataset: Dataset, label: str) -> list[Source]:
    """The sources named `label` among those with annotations in `dataset` (never another dataset's): an
    external one first, then an imported file's, a run, a campaign's expert. Raise UnknownSource when none."""
    found = Source.objects.filter(label=label, annotations__item__dataset=dataset).distinct()
    for kind in _LOOKUP:
        sources = [s for s in found if s.kind == kind]
        if sources:
            return sources
    names = ", ".join(repr(n) for n in dataset_sources(dataset)) or "none yet"
    raise UnknownSource("--source", f"dataset {dataset.name!r} has no source named {label!r} (its sources: {names})",
                        field="source")


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
            machine=annotation.kind in MACHINE_KINDS, example_idx=annotation.item.position,
            spans=[
                SpanRecord(start=s.start, end=s.end, text=s.text, explanation=s.explanation, severity=s.severity,
                           category=s.category, match=s.match, judgments=[])
                for s in annotation.spans.all()
            ],
        )


def dataset_categories(dataset: Dataset) -> list[str]:
    """Every span category of the dataset, sorted: the one list all exports of the dataset share, so that
    factgenie numbers categories alike in each campaign and each export (it refuses to compare otherwise)."""
    return sorted(set(ErrorSpan.objects.filter(annotation__item__dataset=dataset).values_list("category", flat=True)))


def categories_of(annotations: QuerySet[Annotation]) -> list[str]:
    return sorted(set(ErrorSpan.objects.filter(annotation__in=annotations).values_list("category", flat=True)))


@dataclass
class ExportReport:
    """What an export wrote and, per source, how many spans it could not write (no place in the text)."""

    annotations: int = 0
    spans_without_position: dict[str, int] = field(default_factory=dict)
    labelstudio_users: dict[str, str] = field(default_factory=dict)  # person -> the Label Studio email written

    def count(self, annotation: OutputAnnotation, *, placed_only: bool) -> None:
        self.annotations += 1
        missing = unwritten_spans(annotation) if placed_only else 0
        if missing:
            self.spans_without_position[annotation.source] = self.spans_without_position.get(annotation.source, 0) + \
                missing

    def lines(self) -> list[str]:
        out = [f"Left out {n} span{'s' if n != 1 else ''} without a position in the text from source {s!r} "
               "(the format has no place for them)" for s, n in sorted(self.spans_without_position.items())]
        if self.labelstudio_users:
            pairs = ", ".join(f"{who} as {email}" for who, email in self.labelstudio_users.items())
            out.append(f"Annotations by people are written as by these Label Studio users (create them before "
                       f"importing; map their ids back with --map-annotator ID=NAME): {pairs}")
        return out


def export_annotation_lines(
    annotations: QuerySet[Annotation], fmt: str, report: ExportReport | None = None
) -> Iterator[str]:
    """The annotations as text in `fmt` (our JSONL or one streamed Label Studio JSON list); `report`
    counts what was written and what was left out."""
    report = report if report is not None else ExportReport()
    if fmt == "jsonl":
        for annotation in output_annotations(annotations):
            report.count(annotation, placed_only=False)
            yield to_jsonl(annotation)
    elif fmt == "labelstudio":
        yield "["
        tasks = groupby(output_annotations(annotations), key=lambda a: (a.item_id, a.system, a.aspect))
        for number, (_, group) in enumerate(tasks, start=1):
            members = list(group)
            for annotation in members:
                report.count(annotation, placed_only=True)
            task = json.dumps(labelstudio_task(number, members, report.labelstudio_users), ensure_ascii=False)
            yield ("\n" if number == 1 else ",\n") + task
        yield "\n]\n"
    else:
        raise ValueError(f"unknown format {fmt!r} (factgenie campaigns are folders: write_factgenie_campaign)")


def campaign_id(dataset: Dataset, source: str) -> str:
    """The factgenie campaign id of one source's annotations of a dataset (also its folder's name)."""
    return slug(f"{dataset.name}-{source}") or "campaign"


def write_factgenie_campaign(
    annotations: QuerySet[Annotation], folder: Path, *, dataset: Dataset, source: str, categories: list[str],
    report: ExportReport, created: str | None = None,
) -> Path:
    """Write one factgenie campaign folder (its name is the campaign id) holding `annotations`."""
    writer = FactgenieCampaignWriter(
        folder, campaign=folder.name, dataset=dataset.name, source=source, categories=categories,
        created=created or timezone.localtime().strftime("%Y-%m-%d %H:%M:%S"),
    )
    try:
        for annotation in output_annotations(annotations):
            report.count(annotation, placed_only=True)
            writer.add(annotation)
    finally:
        writer.close()
    return folder


def source_annotations(dataset: Dataset, sources: Source | list[Source]) -> QuerySet[Annotation]:
    """The annotations of `sources` in `dataset`; of a run, only its final answers (ensemble, else annotator)."""
    sources = sources if isinstance(sources, list) else [sources]
    annotations = Annotation.objects.filter(item__dataset=dataset, source__in=sources)
    if any(s.kind == SourceKind.RUN for s in sources):
        kinds = set(annotations.values_list("kind", flat=True).distinct())
        final = next((k for k in (AnnotationKind.ENSEMBLE, AnnotationKind.ANNOTATOR) if k in kinds), None)
        annotations = annotations.filter(kind=final) if final else annotations.none()
    return annotations


__all__ = [
    "ExportReport", "UnknownSource", "campaign_id", "categories_of", "dataset_categories", "dataset_sources",
    "export_annotation_lines", "labelstudio_config", "output_annotations", "source_annotations", "source_for_export",
    "write_factgenie_campaign",
]
