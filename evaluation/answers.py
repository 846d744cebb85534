"""Which of a run's annotations is its answer, defined once for the judging screen, Finish and the analytics."""

from __future__ import annotations

from collections.abc import Iterable

from corpus.models import Annotation, AnnotationKind

RUN_ANSWER_KINDS: tuple[str, ...] = (AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR, AnnotationKind.ANNOTATOR)
"""Per run, item and aspect, the annotations of the first kind present are the run's answer: the merged ensemble
one when the run has one, else the supervisor's, else the lone model's. The per-model answers inside an ensemble
are inputs to the merge; they are neither judged again nor scored as the run's answer. The decision is made on
the annotations, never on their spans: a merged answer with no spans is still the answer (nothing to judge)."""


def answer_kind(kinds: Iterable[str]) -> str | None:
    """Return the kind that is the answer among the kinds present (None when none is a run answer kind)."""
    present = set(kinds)
    return next((k for k in RUN_ANSWER_KINDS if k in present), None)


def answer_annotation_ids(*, source_ids: Iterable[int], item_ids: Iterable[int] | None = None) -> set[int]:
    """Return the ids of the annotations that are their run's answer, per (run, item, aspect)."""
    rows = Annotation.objects.filter(source_id__in=list(source_ids), kind__in=RUN_ANSWER_KINDS)
    if item_ids is not None:
        rows = rows.filter(item_id__in=list(item_ids))
    by_key: dict[tuple[int, int, str], list[tuple[int, str]]] = {}
    for pk, source_id, item_id, aspect, kind in rows.values_list("pk", "source_id", "item_id", "aspect", "kind"):
        by_key.setdefault((source_id, item_id, aspect), []).append((pk, kind))
    chosen: set[int] = set()
    for members in by_key.values():
        kind = answer_kind(k for _, k in members)
        chosen.update(pk for pk, k in members if k == kind)
    return chosen
