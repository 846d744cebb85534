"""Which annotation sources a dataset has, by name, and the spans each gave per output (for comparisons).

Names: `run:LABEL` (an evaluator run's answers), `external:LABEL` (another tool's file), `gold:LABEL` and
`import:LABEL` (spans from an item file), `human:CAMPAIGN_ID` (what a campaign's experts marked: the
errors they added plus machine spans a majority of them called an error, on finished items) and
`human-added:CAMPAIGN_ID` (added errors only). A bare LABEL works when only one source has it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analytics.compare.metrics import CatSpan, compare
from analytics.selectors.base import final_kinds
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import spans_experts_confirm
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, SourceKind
from corpus.spreadsheet import sheet_writer
from errors import UserError
from evaluation.selectors import own_runs


class UnknownSource(UserError):
    """A source name that names nothing (or more than one thing) in the dataset; the message lists the names."""


@dataclass(frozen=True)
class SourceRef:
    name: str
    kind: str  # run, external, gold, import, human, human-added
    source_id: int | None = None
    campaign_id: int | None = None


def available_sources(dataset: Dataset) -> list[SourceRef]:
    """Every source of spans on the dataset's items, named as `resolve_source` accepts them."""
    refs = [
        SourceRef(f"run:{label}", "run", pk)
        for pk, label in own_runs().filter(dataset=dataset).order_by("label").values_list("pk", "label")
    ]
    imported = (
        Annotation.objects.filter(item__dataset=dataset, source__kind__in=[SourceKind.EXTERNAL, SourceKind.IMPORT])
        .values_list("source_id", "source__label", "source__kind", "kind")
        .order_by("source__kind", "source__label")
        .distinct()
    )
    seen: set[int] = set()
    for pk, label, source_kind, kind in imported:
        if pk in seen:
            continue
        seen.add(pk)
        prefix = "gold" if kind == AnnotationKind.GOLD else "import"
        if source_kind == SourceKind.EXTERNAL:
            prefix = "external"
        refs.append(SourceRef(f"{prefix}:{label}", prefix, pk))
    for pk in Campaign.objects.filter(dataset=dataset).order_by("pk").values_list("pk", flat=True):
        refs.append(SourceRef(f"human:{pk}", "human", campaign_id=pk))
        refs.append(SourceRef(f"human-added:{pk}", "human-added", campaign_id=pk))
    return refs


def resolve_source(dataset: Dataset, name: str) -> SourceRef:
    """The source `name` denotes in `dataset`; UnknownSource (listing the dataset's sources) otherwise."""
    refs = available_sources(dataset)
    exact = [r for r in refs if r.name == name]
    if exact:
        return exact[0]
    bare = [r for r in refs if r.name.partition(":")[2] == name and r.kind not in ("human", "human-added")]
    if len(bare) == 1:
        return bare[0]
    names = ", ".join(r.name for r in refs) or "none"
    if len(bare) > 1:
        raise UnknownSource(f"{name!r} names {len(bare)} sources of dataset {dataset.name!r}; use one of: "
                            + ", ".join(r.name for r in bare))
    raise UnknownSource(f"no source {name!r} in dataset {dataset.name!r}; its sources: {names}")


def source_spans(dataset: Dataset, ref: SourceRef, *, aspect: str = "") -> dict[int, list[CatSpan]]:
    """Item id -> the source's spans on it, for every output it annotated (an empty list: no error found)."""
    if ref.kind in ("human", "human-added"):
        return _campaign_spans(ref.campaign_id, human_added_only=ref.kind == "human-added", aspect=aspect)
    annotations = Annotation.objects.filter(item__dataset=dataset, source_id=ref.source_id)
    if ref.kind == "run":
        kind = final_kinds([ref.source_id]).get(ref.source_id)
        annotations = annotations.filter(kind=kind) if kind else annotations.none()
    if aspect:
        annotations = annotations.filter(aspect__in=[aspect, ""])
    spans: dict[int, list[CatSpan]] = {item: [] for item in annotations.values_list("item_id", flat=True)}
    for item, start, end, category in ErrorSpan.objects.filter(annotation__in=annotations).values_list(
        "annotation__item_id", "start", "end", "category"
    ):
        spans[item].append(CatSpan(start, end, category))
    return spans


def _campaign_spans(campaign_id: int | None, *, human_added_only: bool, aspect: str) -> dict[int, list[CatSpan]]:
    # Planted copies and training items are checks, not outputs of the study.
    done = Assignment.objects.filter(campaign_id=campaign_id, status=Assignment.Status.DONE, is_training=False,
                                     item__derived_from__isnull=True)
    spans: dict[int, list[CatSpan]] = {item: [] for item in done.values_list("item_id", flat=True)}
    added = ErrorSpan.objects.filter(
        annotation__kind=AnnotationKind.HUMAN, annotation__source__added__campaign_id=campaign_id,
        annotation__item_id__in=done.values("item_id"),
    )
    if aspect:
        added = added.filter(annotation__aspect__in=[aspect, ""])
    rows = list(added.values_list("annotation__item_id", "start", "end", "category"))
    if not human_added_only:
        confirmed = spans_experts_confirm(campaign_id, done.values("item_id"))
        rows += list(confirmed.values_list("annotation__item_id", "start", "end", "category"))
    seen: set[tuple] = set()
    for item, start, end, category in rows:
        # the same error marked by two experts, or marked and confirmed, is one error
        if start is not None and (item, start, end) in seen:
            continue
        seen.add((item, start, end))
        spans[item].append(CatSpan(start, end, category))
    return spans


FIELDS = ("span_exact", "span_overlap", "char", "char_factgenie")


def sources_compare(
    dataset: Dataset, *, reference: str, sources: Sequence[str] = (), by_category: bool = False,
    gamma: bool = True, aspect: str = "",
) -> list[dict[str, Any]]:
    """Compare each source (default: every other source of the dataset) with `reference` (rows: docs, Interop)."""
    ref = resolve_source(dataset, reference)
    refs = [resolve_source(dataset, name) for name in sources] or [
        r for r in available_sources(dataset) if r != ref and r.kind != "human-added"
    ]
    ref_spans = source_spans(dataset, ref, aspect=aspect)
    rows = []
    for source in refs:
        result = compare(source_spans(dataset, source, aspect=aspect), ref_spans, by_category=by_category, gamma=gamma)
        rows.append({"source": source.name, "reference": ref.name, "mode": "categories" if by_category else "soft",
                     **result.as_dict()})
    return rows


def comparison_csv(rows: list[dict[str, Any]]) -> str:
    """One line per source: the figures flattened (span_exact_p, ...), per-category figures left to JSON."""
    out = io.StringIO()
    writer = sheet_writer(out)
    header = ["source", "reference", "mode", "outputs"] + [f"{f}_{m}" for f in FIELDS for m in ("p", "r", "f1")]
    writer.writerow([*header, "pearson_counts", "gamma"])
    for row in rows:
        cells = [row["source"], row["reference"], row["mode"], row["outputs"]]
        cells += [row[f][m] for f in FIELDS for m in ("p", "r", "f1")]
        writer.writerow(["" if c is None else c for c in [*cells, row["pearson_counts"], row["gamma"]]])
    return out.getvalue()
