"""Correlation of each run's scores with the dataset's human scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Avg
from django.db.models.fields.json import KeyTransform

from analytics.selectors.base import (
    RunInfo,
    Scope,
    final_kinds,
)
from annotator.models import Assignment
from corpus.models import Annotation, Dataset
from stats.correlation import Correlation, correlations

# --------------------------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class ScoreRow:
    run_id: int
    human_key: str
    kind: str
    correlation: Correlation
    pairs: tuple[tuple[float, float], ...] = ()


def _human_key(dataset: Dataset, aspect: str) -> str:
    for key in dataset.score_aspects or []:
        if key == aspect:
            return key
    for key in dataset.score_aspects or []:
        if key.lower() == aspect.lower():
            return key
    return aspect


def score_report(*, runs: Sequence[RunInfo], scope: Scope) -> list[ScoreRow]:
    """Return each run's correlation with the dataset's human scores for the run's aspect.

    The machine score of an item is the mean score of the run's final annotations of it (one, unless a
    run holds several models of the same kind); items without a numeric human score are left out.
    """
    kinds = final_kinds([r.run_id for r in runs])
    datasets = Dataset.objects.in_bulk({r.dataset_id for r in runs})
    out = []
    for run in runs:
        if run.run_id not in kinds:
            out.append(ScoreRow(run.run_id, run.aspect, "", Correlation(n=0)))
            continue
        key = _human_key(datasets[run.dataset_id], run.aspect)
        qs = Annotation.objects.filter(
            source_id=run.run_id, kind=kinds[run.run_id], score__isnull=False, item__derived_from__isnull=True
        )
        if scope.system:
            qs = qs.filter(item__system=scope.system)
        if scope.campaign_id is not None:
            qs = qs.filter(item__in=Assignment.objects.filter(campaign_id=scope.campaign_id).values("item_id"))
        rows = (
            qs.values("item_id")
            .annotate(machine=Avg("score"), human=KeyTransform(key, "item__human_scores"))
            .order_by("item_id")
            .values_list("machine", "human")
        )
        pairs = tuple(
            (float(m), float(h)) for m, h in rows if isinstance(h, int | float) and not isinstance(h, bool)
        )
        corr = correlations([p[0] for p in pairs], [p[1] for p in pairs])
        out.append(ScoreRow(run.run_id, key, kinds[run.run_id], corr, pairs))
    return out


