"""Read side of the researcher's item browser: a dataset's items with span counts per source, and one item
with every annotation of every source (gold, runs, imported files, experts in campaigns)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Exists, OuterRef, QuerySet

from annotator.models import AddedSource, SpanJudgment
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, SourceKind
from evaluation.answers import answer_kind
from evaluation.selectors import job_runs

# Gold and imported files first, then the machines, then the experts.
SOURCE_ORDER = {SourceKind.IMPORT: 0, SourceKind.RUN: 1, SourceKind.CAMPAIGN: 2}


@dataclass(frozen=True)
class SourceColumn:
    """One annotation source of a dataset, as a column of the item list."""

    id: int
    label: str
    kind: str  # corpus.models.SourceKind

    @property
    def kind_label(self) -> str:
        return SourceKind(self.kind).label

    @property
    def short_kind(self) -> str:
        return {SourceKind.IMPORT: "file", SourceKind.RUN: "run", SourceKind.CAMPAIGN: "expert"}.get(self.kind, "")


def _source_label(source_id: int, label: str, kind: str, campaigns: dict[int, str]) -> str:
    if kind == SourceKind.CAMPAIGN and source_id in campaigns:
        return f"{label} @ {campaigns[source_id]}"
    return label


def dataset_sources(dataset: Dataset) -> list[SourceColumn]:
    """Every source with an annotation on the dataset: gold and imports first, then runs, then experts. Runs a
    DHP run made for itself are shown under that DHP run, not here."""
    rows = (Annotation.objects.filter(item__dataset=dataset).exclude(source_id__in=job_runs().values("pk"))
            .exclude(source__kind=SourceKind.CHECK)
            .order_by().values_list("source_id", "source__label", "source__kind").distinct())
    campaigns = dict(AddedSource.objects.filter(campaign__dataset=dataset).values_list("pk", "campaign__name"))
    columns = [SourceColumn(pk, _source_label(pk, label, kind, campaigns), kind) for pk, label, kind in rows]
    return sorted(columns, key=lambda c: (SOURCE_ORDER.get(c.kind, 9), c.label))


def dataset_items(dataset: Dataset, *, system: str = "", has_gold: str = "", has_runs: str = "") -> QuerySet[Item]:
    """The dataset's items in file order, filtered by system and by whether gold spans or run answers exist
    ("yes" / "no"; anything else means either)."""
    items = Item.objects.filter(dataset=dataset, derived_from__isnull=True).order_by("position").only(
        "pk", "external_id", "system", "output", "position", "dataset_id")
    if system:
        items = items.filter(system=system)
    gold = Annotation.objects.filter(item=OuterRef("pk"), kind=AnnotationKind.GOLD)
    runs = Annotation.objects.filter(item=OuterRef("pk"), source__kind=SourceKind.RUN)
    for flag, sub in ((has_gold, gold), (has_runs, runs)):
        if flag == "yes":
            items = items.filter(Exists(sub))
        elif flag == "no":
            items = items.exclude(Exists(sub))
    return items


def dataset_systems(dataset: Dataset) -> list[str]:
    """Each system once (the item list's filter)."""
    return list(Item.objects.filter(dataset=dataset, derived_from__isnull=True).exclude(system="").order_by("system")
                .values_list("system", flat=True).distinct())


def span_counts(item_ids: Iterable[int]) -> dict[int, dict[int, int]]:
    """item id -> source id -> number of spans in the source's answer for the item.

    A run's answer is the annotation of its first kind present (evaluation.answers), so an ensemble's spans are
    not counted again through its annotators' and supervisor's lists; other sources count all their spans."""
    rows = (ErrorSpan.objects.filter(annotation__item_id__in=list(item_ids))
            .order_by().values_list("annotation__item_id", "annotation__source_id", "annotation__kind")
            .annotate(n=Count("id")))
    by_kind: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for item_id, source_id, kind, n in rows:
        by_kind[(item_id, source_id)][kind] = by_kind[(item_id, source_id)].get(kind, 0) + n
    counts: dict[int, dict[int, int]] = defaultdict(dict)
    for (item_id, source_id), kinds in by_kind.items():
        answer = answer_kind(kinds)
        counts[item_id][source_id] = kinds[answer] if answer else sum(kinds.values())
    return counts


@dataclass
class AnnotationView:
    """One annotation of the item, as a column of the item page."""

    annotation: Annotation
    title: str
    source_kind: str
    is_answer: bool  # shown by default: gold, imports, experts, and each run's answer
    spans: list[ErrorSpan] = field(default_factory=list)


def item_annotations(item: Item) -> list[AnnotationView]:
    """Every annotation of the item with its spans (and, per span, the experts' verdict counts)."""
    annotations = sorted(
        Annotation.objects.filter(item=item).exclude(source__kind=SourceKind.CHECK).select_related("source"),
        key=lambda a: (SOURCE_ORDER.get(a.source.kind, 9), a.source.label, a.kind, a.model, a.aspect),
    )
    spans: dict[int, list[ErrorSpan]] = defaultdict(list)
    for span in ErrorSpan.objects.filter(annotation__item=item).order_by("annotation_id", "position", "pk"):
        spans[span.annotation_id].append(span)
    verdicts: dict[int, dict[str, int]] = defaultdict(dict)
    for span_id, verdict, n in (SpanJudgment.objects.filter(span__annotation__item=item).exclude(span_verdict="")
                                .order_by().values_list("span_id", "span_verdict").annotate(n=Count("id"))):
        verdicts[span_id][verdict] = n
    campaigns = dict(AddedSource.objects.filter(pk__in={a.source_id for a in annotations})
                     .values_list("pk", "campaign__name"))
    kinds_by_source: dict[int, set[str]] = defaultdict(set)
    for a in annotations:
        kinds_by_source[a.source_id].add(a.kind)
    views = []
    for a in annotations:
        source = a.source
        label = _source_label(source.pk, source.label, source.kind, campaigns)
        chosen = answer_kind(kinds_by_source[a.source_id])
        is_answer = source.kind != SourceKind.RUN or a.kind == chosen
        parts = [label, a.get_kind_display()]
        if a.model:
            parts.append(a.model)
        if a.aspect:
            parts.append(a.aspect)
        for span in spans[a.pk]:
            span.verdict_counts = sorted(verdicts.get(span.pk, {}).items())
        views.append(AnnotationView(annotation=a, title=" · ".join(parts), source_kind=source.kind,
                                    is_answer=is_answer, spans=spans[a.pk]))
    return views
