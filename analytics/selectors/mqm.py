"""MQM figures of a dataset's rated translations: system scores with intervals and rank ranges, categories, agreement.

The ratings are the sources labelled `PREFIX:RATER` (an imported TSV's raters) read by corpus.selectors.mqm;
the numbers come from stats.mqm, the weights from the MQM protocol (corpus.protocols.mqm).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any, TypedDict

from corpus.interop.mqm import MqmRating
from corpus.models import Dataset
from corpus.protocols.mqm import DEFAULT, DEFAULT_TREE, Category, Weights, canonical_category, top_category
from corpus.selectors.mqm import mqm_ratings, mqm_sources
from stats.mqm import (
    Agreement,
    CategoryFigure,
    Error,
    Rating,
    category_breakdown,
    rater_agreement,
    system_scores,
)

RESAMPLES = 1000
SEED = 0
CSV_COLUMNS = ("system", "score", "segments", "ci_low", "ci_high", "rank_range")


class SystemRow(TypedDict):
    system: str
    score: float
    segments: int
    ci_low: float | None
    ci_high: float | None
    rank_range: list[int] | None


def stats_ratings(ratings: Iterable[MqmRating]) -> list[Rating]:
    """The ratings as the statistics take them: a segment is (doc, seg_id), shared by every system; a span
    counts as located only in the translation."""
    return [Rating(system=r.system, segment=r.segment, rater=r.rater, errors=tuple(
        Error(e.category, e.severity, *((e.start, e.end) if e.side == "target" else (None, None)))
        for e in r.errors)) for r in ratings]


def dataset_ratings(dataset: Dataset, prefix: str) -> list[MqmRating]:
    """The ratings by the dataset's sources `PREFIX:*`; NoMqmSources (a UserError) when it has none."""
    return mqm_ratings(dataset, mqm_sources(dataset, prefix))


def score_rows(ratings: list[Rating], *, weights: Weights = DEFAULT, n_resamples: int = RESAMPLES,
               seed: int = SEED) -> list[SystemRow]:
    """The `systems` of `mqm_scores` and the API: best (lowest) first."""
    return [SystemRow(system=s.system, score=s.score, segments=s.segments, ci_low=s.ci_low, ci_high=s.ci_high,
                      rank_range=list(s.rank_range) if s.rank_range else None)
            for s in system_scores(ratings, weights.weight, n_resamples=n_resamples, seed=seed)]


def dataset_scores(dataset: Dataset, *, prefix: str = "mqm", weights: Weights = DEFAULT,
                   n_resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """`{"systems": [...]}`: what `manage.py mqm_scores` prints and GET /api/analytics/datasets/ID/mqm returns."""
    ratings = stats_ratings(dataset_ratings(dataset, prefix))
    return {"systems": score_rows(ratings, weights=weights, n_resamples=n_resamples, seed=seed)}


def scores_csv(rows: list[SystemRow]) -> str:
    """The same columns as CSV; a rank range is written `lo-hi` (a single rank alone)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        ranks = row["rank_range"]
        text = "" if not ranks else str(ranks[0]) if ranks[0] == ranks[1] else f"{ranks[0]}-{ranks[1]}"
        writer.writerow([row["system"], repr(row["score"]), row["segments"],
                         "" if row["ci_low"] is None else repr(row["ci_low"]),
                         "" if row["ci_high"] is None else repr(row["ci_high"]), text])
    return out.getvalue()


def categories(ratings: list[Rating], *, weights: Weights = DEFAULT, tree: tuple[Category, ...] = DEFAULT_TREE,
               top: bool = True) -> dict[str, list[CategoryFigure]]:
    """Per system, its errors by top-level category (or by full category) in the tree's spelling."""
    if top:
        return category_breakdown(ratings, weights.weight, name=lambda c: top_category(canonical_category(c, tree)))
    return category_breakdown(ratings, weights.weight, name=lambda c: canonical_category(c, tree))


def agreement(ratings: list[Rating], *, weights: Weights = DEFAULT,
              tree: tuple[Category, ...] = DEFAULT_TREE) -> Agreement:
    return rater_agreement(ratings, weights.weight, name=lambda c: canonical_category(c, tree))
