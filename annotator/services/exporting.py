"""Export a dataset as JSONL (one record per item and aspect) or CSV (one row per span judgment), streaming."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator

from django.db.models import Prefetch, Value
from django.db.models.functions import Coalesce, NullIf

from annotator.models import SpanJudgment
from corpus.formats import FLAGS, AnnotationRecord, ExportRecord, JudgmentRecord, SpanRecord
from corpus.models import Annotation, Dataset, ErrorSpan, Item
from corpus.spreadsheet import csv_row

CHUNK = 200
KIND_ORDER = {"gold": 0, "human": 1, "ensemble": 2, "supervisor": 3, "annotator": 4}
CSV_COLUMNS = [
    "dataset", "item_id", "system", "aspect", "source", "kind", "model", "score", "score_label",
    "span_index", "start", "end", "text", "explanation", "severity", "category", "match",
    "annotator", "span_verdict", "explanation_verdict", *FLAGS, "comment",
]


def _ordered(mapping: dict, order: list[str]) -> dict:
    """Return `mapping` with keys in `order` first (PostgreSQL's jsonb does not keep key order)."""
    result = {key: mapping[key] for key in order if key in mapping}
    result.update((key, value) for key, value in mapping.items() if key not in result)
    return result


def _items(dataset: Dataset) -> Iterator[Item]:
    # By the name written in the export (an import identity's original name, else the username).
    export_name = Coalesce(NullIf("annotator__imported_name", Value("")), "annotator__username")
    judgments = SpanJudgment.objects.select_related("annotator").order_by(export_name, "pk")
    spans = ErrorSpan.objects.order_by("position", "pk").prefetch_related(Prefetch("judgments", queryset=judgments))
    annotations = (
        Annotation.objects.select_related("source").order_by("pk").prefetch_related(Prefetch("spans", queryset=spans))
    )
    return (
        Item.objects.filter(dataset=dataset)
        .order_by("position")
        .prefetch_related(Prefetch("annotations", queryset=annotations))
        .iterator(chunk_size=CHUNK)
    )


def _judgment_record(judgment: SpanJudgment) -> JudgmentRecord:
    return JudgmentRecord(
        annotator=judgment.annotator.export_name,
        span_verdict=judgment.span_verdict or None,
        explanation_verdict=judgment.explanation_verdict or None,
        flags=judgment.flags(),
        comment=judgment.comment,
    )


def _span_record(span: ErrorSpan) -> SpanRecord:
    return SpanRecord(
        start=span.start, end=span.end, text=span.text, explanation=span.explanation, severity=span.severity,
        category=span.category, match=span.match,
        judgments=[_judgment_record(j) for j in span.judgments.all()],
    )


def annotation_record(annotation: Annotation) -> AnnotationRecord:
    return AnnotationRecord(
        source=annotation.source.label, kind=annotation.kind, model=annotation.model, score=annotation.score,
        score_label=annotation.score_label, score_explanation=annotation.score_explanation,
        spans=[_span_record(s) for s in annotation.spans.all()],
    )


def _aspects_of(item: Item, annotations: list[Annotation], score_order: list[str]) -> list[str | None]:
    named = {a.aspect for a in annotations if a.aspect} | set(item.human_scores)
    ordered: list[str | None] = [a for a in score_order if a in named]
    ordered += sorted(named - set(ordered))
    if any(not a.aspect for a in annotations) or not ordered:
        ordered.insert(0, None)
    return ordered


def dataset_records(dataset: Dataset) -> Iterator[ExportRecord]:
    """Yield one export record per (item, aspect), items in file order, annotations in a stable order."""
    for item in _items(dataset):
        annotations = sorted(item.annotations.all(), key=lambda a: (KIND_ORDER[a.kind], a.source.label, a.model))
        inputs = _ordered(item.inputs, dataset.input_headers)
        scores = _ordered(item.human_scores, dataset.score_aspects)
        for aspect in _aspects_of(item, annotations, dataset.score_aspects):
            yield ExportRecord(
                dataset=dataset.name, item_id=item.external_id, system=item.system, inputs=inputs,
                outputs={dataset.output_header: item.output}, aspect=aspect, human_scores=scores,
                annotations=[annotation_record(a) for a in annotations if (a.aspect or None) == aspect],
            )


def export_jsonl(dataset: Dataset) -> Iterator[str]:
    for record in dataset_records(dataset):
        yield json.dumps(record, ensure_ascii=False) + "\n"


def _csv_rows(dataset: Dataset) -> Iterator[list[object]]:
    for record in dataset_records(dataset):
        base = [record["dataset"], record["item_id"], record["system"], record["aspect"] or ""]
        for annotation in record["annotations"]:
            head = [*base, annotation["source"], annotation["kind"], annotation["model"],
                    "" if annotation["score"] is None else annotation["score"], annotation["score_label"]]
            for index, span in enumerate(annotation["spans"]):
                span_cells = [
                    index, _blank(span["start"]), _blank(span["end"]), span["text"], span["explanation"],
                    _blank(span["severity"]), span["category"], span["match"],
                ]
                # A span nobody judged yet still gets its row, so the sheet loses nothing.
                for judgment in span["judgments"] or [None]:
                    if judgment is None:
                        yield [*head, *span_cells, "", "", "", *([""] * len(FLAGS)), ""]
                    else:
                        yield [
                            *head, *span_cells, judgment["annotator"], judgment["span_verdict"] or "",
                            judgment["explanation_verdict"] or "",
                            *[int(flag in judgment["flags"]) for flag in FLAGS], judgment["comment"],
                        ]


def _blank(value: object) -> object:
    return "" if value is None else value


def export_csv(dataset: Dataset) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def emit(rows: Iterable[list[object]]) -> Iterator[str]:
        for row in rows:
            writer.writerow(csv_row(row))
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate(0)

    yield from emit([CSV_COLUMNS])
    yield from emit(_csv_rows(dataset))
