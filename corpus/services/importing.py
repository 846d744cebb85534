"""Import an item file into a dataset in one transaction: all of it, or nothing.

Judgments in a file (an export re-imported) belong to the annotator layer above: it passes a writer for
them (`on_judgments`); without one, a file that carries judgments is refused rather than half-imported.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from corpus.formats import (
    AnnotationRecord,
    FormatError,
    FormatErrors,
    JudgmentRecord,
    ParsedItem,
    SpanRecord,
    check_text,
    iter_objects,
    parse_item,
)
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, Source, SourceKind, TaskType

BATCH = 500

JudgedSpan = tuple[ErrorSpan, int, list[JudgmentRecord]]
"""A stored span, the pk of its item, and the judgments the file gives for it."""
JudgmentWriter = Callable[[Dataset, list[JudgedSpan]], int]
"""Stores the judgments of a batch of spans and returns how many it wrote."""


@dataclass
class ImportReport:
    dataset: str
    created_items: int = 0
    reused_items: int = 0
    annotations: int = 0
    spans: int = 0
    judgments: int = 0
    warnings: list[str] = field(default_factory=list)


def _fingerprint(inputs: dict[str, str], output: str) -> str:
    blob = json.dumps([sorted(inputs.items()), output], ensure_ascii=False)
    return hashlib.sha1(blob.encode()).hexdigest()


@dataclass
class _Known:
    pk: int | None
    fingerprint: str
    where: str
    scores: dict[str, float]


class _Importer:
    """Streams parsed objects into the database in batches; any FormatError aborts the transaction."""

    def __init__(
        self, dataset: Dataset, *, source: str, aspect: str, new_dataset: bool, on_judgments: JudgmentWriter | None
    ) -> None:
        self.dataset = dataset
        self.on_judgments = on_judgments
        self.sources: dict[str, int] = {}
        self.source = source
        self.aspect = aspect
        self.report = ImportReport(dataset=dataset.name)
        self.known: dict[tuple[str, str], _Known] = {}
        self.annotation_keys: set[tuple[int | tuple[str, str], str, str, str, str]] = set()
        self.pending_items: list[Item] = []
        self.pending_annotations: list[tuple[tuple[str, str], str, AnnotationRecord, str]] = []
        self.input_headers: list[str] = list(dataset.input_headers)
        self.score_aspects: list[str] = list(dataset.score_aspects)
        self.output_header = "" if new_dataset else dataset.output_header
        self.next_position = (dataset.items.aggregate(m=Max("position"))["m"] or -1) + 1
        if not new_dataset:
            for pk, ext, system, inputs, output, scores in dataset.items.values_list(
                "pk", "external_id", "system", "inputs", "output", "human_scores"
            ):
                self.known[(ext, system)] = _Known(pk, _fingerprint(inputs, output), "the database", scores)

    def add(self, parsed: ParsedItem) -> None:
        if self.output_header and parsed.output_header != self.output_header:
            raise FormatError(
                parsed.where,
                f"field 'outputs' has header {parsed.output_header!r}, but this dataset's output header is "
                f"{self.output_header!r}",
            )
        self.output_header = parsed.output_header
        for header in parsed.inputs:
            if header not in self.input_headers:
                self.input_headers.append(header)
        for aspect in parsed.human_scores:
            if aspect not in self.score_aspects:
                self.score_aspects.append(aspect)
        key = (parsed.external_id, parsed.system)
        fingerprint = _fingerprint(parsed.inputs, parsed.output)
        known = self.known.get(key)
        if known is None:
            self.known[key] = _Known(None, fingerprint, parsed.where, dict(parsed.human_scores))
            self.pending_items.append(
                Item(
                    dataset=self.dataset, position=self.next_position, external_id=parsed.external_id,
                    system=parsed.system, inputs=parsed.inputs, output=parsed.output,
                    reference=parsed.reference, human_scores=parsed.human_scores, extra=parsed.extra,
                )
            )
            self.next_position += 1
            self.report.created_items += 1
        else:
            if known.fingerprint != fingerprint:
                raise FormatError(
                    parsed.where,
                    f"item (id {parsed.external_id!r}, system {parsed.system!r}) was already given at "
                    f"{known.where} with different inputs or output",
                )
            for aspect, value in parsed.human_scores.items():
                if aspect in known.scores and known.scores[aspect] != value:
                    raise FormatError(
                        parsed.where,
                        f"field 'score.{aspect}' is {value} here but {known.scores[aspect]} at {known.where}",
                    )
            if known.pk is not None and any(a not in known.scores for a in parsed.human_scores):
                known.scores.update(parsed.human_scores)
                Item.objects.filter(pk=known.pk).update(human_scores=known.scores)
            else:
                known.scores.update(parsed.human_scores)
                for item in self.pending_items:
                    if (item.external_id, item.system) == key:
                        item.human_scores = dict(known.scores)
            if known.pk is not None and known.where == "the database":
                self.report.reused_items += 1
        aspect = parsed.aspect
        if parsed.spans is not None:
            record = AnnotationRecord(
                source=self.source, kind=AnnotationKind.GOLD if self.source == "gold" else AnnotationKind.HUMAN,
                model="", score=None, score_label="", score_explanation="", spans=parsed.spans,
            )
            self._queue_annotation(key, aspect or self.aspect, record, parsed.where)
        for record in parsed.annotations:
            self._queue_annotation(key, aspect, record, parsed.where)
        if len(self.pending_items) >= BATCH or len(self.pending_annotations) >= BATCH:
            self.flush()

    def _queue_annotation(self, key: tuple[str, str], aspect: str, record: AnnotationRecord, where: str) -> None:
        ident = (key, aspect, record["source"], record["kind"], record["model"])
        if ident in self.annotation_keys:
            raise FormatError(
                where,
                f"a second annotation by source {record['source']!r} (kind {record['kind']}, model "
                f"{record['model']!r}) for aspect {aspect or '(none)'!r} of this item",
            )
        self.annotation_keys.add(ident)
        self.pending_annotations.append((key, aspect, record, where))

    def flush(self) -> None:
        if self.pending_items:
            created = Item.objects.bulk_create(self.pending_items)
            for item in created:
                self.known[(item.external_id, item.system)].pk = item.pk
            self.pending_items = []
        if not self.pending_annotations:
            return
        item_ids = {self.known[key].pk for key, *_ in self.pending_annotations}
        existing = set(
            Annotation.objects.filter(item_id__in=item_ids).values_list(
                "item_id", "aspect", "source_id", "kind", "model"
            )
        )
        annotations: list[Annotation] = []
        records: list[tuple[AnnotationRecord, int]] = []
        for key, aspect, record, where in self.pending_annotations:
            item_pk = self.known[key].pk
            assert item_pk is not None  # flushed above
            source_pk = self._source(record["source"])
            if (item_pk, aspect, source_pk, record["kind"], record["model"]) in existing:
                raise FormatError(
                    where,
                    f"this item already has an annotation by source {record['source']!r} for aspect "
                    f"{aspect or '(none)'!r}; import it under another --source",
                )
            annotations.append(
                Annotation(
                    item_id=item_pk, aspect=aspect, source_id=source_pk, kind=record["kind"],
                    model=record["model"], score=record["score"], score_label=record["score_label"],
                    score_explanation=record["score_explanation"],
                )
            )
            records.append((record, item_pk))
        annotations = Annotation.objects.bulk_create(annotations)
        spans: list[ErrorSpan] = []
        span_records: list[tuple[SpanRecord, int]] = []
        for annotation, (record, item_pk) in zip(annotations, records, strict=True):
            for position, span in enumerate(record["spans"]):
                spans.append(
                    ErrorSpan(
                        annotation=annotation, position=position, text=span["text"], start=span["start"],
                        end=span["end"], match=span["match"], ambiguous=span.get("ambiguous", False),
                        explanation=span["explanation"],
                        severity=span["severity"], category=span["category"],
                    )
                )
                span_records.append((span, item_pk))
        spans = ErrorSpan.objects.bulk_create(spans)
        judged = [
            (span, item_pk, span_record["judgments"])
            for span, (span_record, item_pk) in zip(spans, span_records, strict=True)
            if span_record["judgments"]
        ]
        if judged:
            if self.on_judgments is None:
                raise FormatError("the file", "carries judgments; import it with `manage.py import_items`")
            self.report.judgments += self.on_judgments(self.dataset, judged)
        self.report.annotations += len(annotations)
        self.report.spans += len(spans)
        self.pending_annotations = []

    def _source(self, label: str) -> int:
        """The imported source named `label` (created on first use); runs and campaigns have sources of their own."""
        if label not in self.sources:
            source, _ = Source.objects.get_or_create(kind=SourceKind.IMPORT, label=label)
            self.sources[label] = source.pk
        return self.sources[label]

    def finish(self) -> ImportReport:
        self.flush()
        if self.report.created_items == 0 and self.report.reused_items == 0 and not self.known:
            raise FormatError("the file", "holds no items")
        self.dataset.input_headers = self.input_headers
        self.dataset.output_header = self.output_header
        self.dataset.score_aspects = self.score_aspects
        self.dataset.save(update_fields=["input_headers", "output_header", "score_aspects"])
        return self.report


@transaction.atomic
def items_import(
    *, path: Path, dataset_name: str, task_slug: str, source: str = "gold", aspect: str = "", user=None,
    on_judgments: JudgmentWriter | None = None, file_name: str = "",
) -> ImportReport:
    """Import `path` into dataset `dataset_name` (created if new); raise FormatError and keep nothing on bad input."""
    name = file_name or path.name
    check_text(dataset_name, "--dataset", "dataset")
    check_text(source, "--source", "source")
    check_text(aspect, "--aspect", "aspect")
    check_text(task_slug, "--task", "task")
    task = TaskType.objects.filter(slug=task_slug).first()
    if task is None:
        known = ", ".join(TaskType.objects.values_list("slug", flat=True))
        raise FormatError("--task", f"unknown task {task_slug!r} (known: {known})", field="task")
    if not path.exists():
        raise FormatError(name, "no such file")
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    new_dataset = dataset is None
    if dataset is None:
        dataset = Dataset.objects.create(name=dataset_name, task=task, source_file=name[:500], created_by=user)
    elif dataset.task_id != task.pk:
        raise FormatError(
            "--task", f"dataset {dataset_name!r} exists with task {dataset.task.slug!r}, not {task_slug!r}"
        )
    importer = _Importer(
        dataset, source=source, aspect=aspect, new_dataset=new_dataset, on_judgments=on_judgments
    )
    # Every bad object is reported, not just the first. Once one is found nothing will be kept, so the rest
    # are only checked on their own (the database sees no more rows).
    errors: list[FormatError] = []
    for where, obj in iter_objects(path, name=name, errors=errors):
        try:
            parsed = parse_item(obj, where)
            if not errors:
                importer.add(parsed)
        except FormatError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FormatErrors(errors)  # nothing is kept: the transaction rolls back
    return importer.finish()
