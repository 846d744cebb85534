"""Store the ensemble confidence of the machine spans of runs (evaluation.engine.confidence), once per span.

The rows are derived from what a run already stores (its per-model annotations and the merged answer), so they
are computed when first needed - the confidence calibration, a routed campaign - for every answer span that has
none yet, and never change afterwards (a run's spans are written once).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db import transaction

from corpus.models import Annotation, AnnotationKind, ErrorSpan, ParseStatus
from evaluation.answers import answer_annotation_ids
from evaluation.engine.confidence import FALLBACK, KEPT, NO_SUPERVISOR, Mark, span_confidence
from evaluation.models import SpanConfidence
from evaluation.runs.writes import SUPERVISOR_UNUSABLE

_CHUNK = 2000


def _mark(span: ErrorSpan) -> Mark:
    return Mark(span.start, span.end, span.text, span.severity, span.category, span.explanation)


def _decision(answer: Annotation) -> str:
    if answer.kind == AnnotationKind.ANNOTATOR:
        return NO_SUPERVISOR
    return FALLBACK if SUPERVISOR_UNUSABLE in (answer.parse_problems or []) else KEPT


@transaction.atomic
def confidence_store(*, run_ids: Iterable[int]) -> int:
    """Compute and store the confidence of every answer span of these runs that has none yet; return how many
    rows were written. Cheap when all are there (one query)."""
    run_ids = sorted(set(run_ids))
    answers = answer_annotation_ids(source_ids=run_ids)
    missing = list(
        ErrorSpan.objects.filter(annotation_id__in=sorted(answers), confidence__isnull=True)
        .select_related("annotation").order_by("annotation_id", "position", "pk")
    )
    if not missing:
        return 0
    keys = {(s.annotation.source_id, s.annotation.item_id, s.annotation.aspect) for s in missing}
    items = sorted({item for _, item, _ in keys})
    # (run, item, aspect) -> model -> its marks; a single model's answer is its own per-model annotation
    per_model: dict[tuple[int, int, str], dict[str, list[Mark]]] = defaultdict(dict)
    for start in range(0, len(items), _CHUNK):
        chunk = items[start:start + _CHUNK]
        usable = Annotation.objects.filter(source_id__in=run_ids, item_id__in=chunk, kind=AnnotationKind.ANNOTATOR
                                           ).exclude(parse_status=ParseStatus.FAILED)
        for annotation in usable.only("pk", "source_id", "item_id", "aspect", "model"):
            per_model[(annotation.source_id, annotation.item_id, annotation.aspect)][annotation.model] = []
        spans = ErrorSpan.objects.filter(annotation__in=usable).select_related("annotation").order_by(
            "annotation_id", "position", "pk")
        for span in spans:
            a = span.annotation
            per_model[(a.source_id, a.item_id, a.aspect)][a.model].append(_mark(span))
    rows = []
    for span in missing:
        a = span.annotation
        found = span_confidence(_mark(span), per_model.get((a.source_id, a.item_id, a.aspect), {}),
                                supervisor=_decision(a))
        rows.append(SpanConfidence(
            span=span, run_id=a.source_id, k=found.k, n=found.n, flagged_by=list(found.flagged_by),
            supervisor=found.supervisor, severity_agreement=found.severity_agreement,
            category_agreement=found.category_agreement,
        ))
    SpanConfidence.objects.bulk_create(rows, ignore_conflicts=True, batch_size=_CHUNK)
    return len(rows)
