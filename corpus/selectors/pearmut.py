"""ESA ratings as stored: the sources `PREFIX:USER` of a dataset read back as Pearmut ratings (for its log)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from corpus.formats import FormatError
from corpus.interop.pearmut import PearmutRating, PearmutSpan
from corpus.models import Annotation, Dataset, ErrorSpan, Item, Source
from corpus.protocols import esa

EXTRA = "pearmut"


class NoPearmutSources(FormatError):
    """No source of the dataset is labelled PREFIX:*; the message lists the dataset's sources."""


def pearmut_sources(dataset: Dataset, prefix: str) -> dict[int, str]:
    """source pk -> user, for the sources labelled `PREFIX:USER` with annotations in `dataset`."""
    head = f"{prefix}:"
    found = dict(Source.objects.filter(label__startswith=head, annotations__item__dataset=dataset)
                 .distinct().values_list("pk", "label"))
    if not found:
        names = sorted(set(Source.objects.filter(annotations__item__dataset=dataset).values_list("label", flat=True)))
        listed = ", ".join(repr(n) for n in names[:30]) or "none yet"
        raise NoPearmutSources("source", f"dataset {dataset.name!r} has no source labelled {head}* (its sources: "
                                         f"{listed})")
    return {pk: label[len(head):] for pk, label in found.items()}


def category_out(category: str) -> str | None:
    """ESA spans carry no category in Pearmut (null); missing content is told by its place, not its name."""
    return None if category in ("", esa.MISSING) else category


def stored_span(start: int | None, end: int | None, severity: int | None, category: str) -> PearmutSpan:
    return PearmutSpan(start, end, esa.severity_of_code(severity), category_out(category))


def item_fields(item: dict[str, Any]) -> dict[str, Any]:
    """What a Pearmut item of this output says besides the output: its item_id, source and reference."""
    kept = ((item["extra"] or {}).get(EXTRA) or {}) if isinstance(item["extra"], dict) else {}
    inputs = item["inputs"] or {}
    source = inputs.get("Source", next(iter(inputs.values()), None)) if isinstance(inputs, dict) else None
    return {
        "item_id": item["external_id"] if kept.get("has_item_id", True) else None,
        "source": None if source is None else str(source),
        "reference": item["reference"] if item["reference"] or kept.get("has_ref") else None,
    }


def pearmut_ratings(dataset: Dataset, users: dict[int, str]) -> list[PearmutRating]:
    """The ratings of the sources `users` (source pk -> user) in `dataset`, as Pearmut ratings."""
    annotations = list(Annotation.objects.filter(item__dataset=dataset, source_id__in=list(users))
                       .order_by("pk").values_list("pk", "item_id", "source_id", "score", "score_explanation",
                                                   "raw_answer"))
    items = {row["pk"]: row for row in Item.objects.filter(pk__in={a[1] for a in annotations})
             .values("pk", "system", "external_id", "position", "output", "inputs", "reference", "extra")}
    spans: dict[int, list[PearmutSpan]] = defaultdict(list)
    for annotation_id, start, end, severity, category in (
        ErrorSpan.objects.filter(annotation_id__in=[a[0] for a in annotations]).order_by("annotation_id", "position",
                                                                                         "pk")
        .values_list("annotation_id", "start", "end", "severity", "category")
    ):
        spans[annotation_id].append(stored_span(start, end, severity, category))
    ratings = []
    for pk, item_id, source_id, score, comment, raw in annotations:
        item = items[item_id]
        try:
            kept = (json.loads(raw) if raw else {}).get(EXTRA) or {}
        except (json.JSONDecodeError, AttributeError):
            kept = {}
        fields = item_fields(item)
        ratings.append(PearmutRating(
            user_id=users[source_id], item_i=kept.get("item_i", item["position"]), k=kept.get("k", 0),
            m=kept.get("m", 0), system=item["system"], output=item["output"], score=score, spans=spans.get(pk, []),
            rating_extra=kept.get("rating") or {}, line_extra=kept.get("line") or {},
            item_extra=kept.get("item") or {},
            prefill=None if kept.get("prefill") is None else [PearmutSpan(*s) for s in kept["prefill"]],
            comment=comment if kept.get("comment", bool(comment)) else None, **fields,
        ))
    return ratings
