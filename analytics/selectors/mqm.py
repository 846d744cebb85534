"""MQM figures of a dataset's rated translations: system scores with intervals and rank ranges, categories, agreement.

The ratings are a dataset's sources labelled `PREFIX:RATER` (an imported TSV's raters) read by
corpus.selectors.mqm, or an MQM campaign's finished work read here; both come as the TSV's ratings, so the
export and the figures read one thing. The numbers come from stats.mqm, the weights from the MQM protocol
(corpus.protocols.mqm).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from accounts.models import User
from analytics.selectors.exclusion import exclusion_for, rated_assignments
from analytics.selectors.systems import SystemRow, system_rows
from annotator.models import Assignment, Campaign
from corpus.interop.mqm import MqmError, MqmRating, rating_sort_key
from corpus.models import Dataset, ErrorSpan, Item
from corpus.protocols.mqm import (
    DEFAULT,
    DEFAULT_TREE,
    Category,
    Weights,
    canonical_category,
    severity_of_code,
    top_category,
)
from corpus.selectors.mqm import ITEM_FIELDS, item_rating, mqm_ratings, mqm_sources
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
    return system_rows(system_scores(ratings, weights.weight, n_resamples=n_resamples, seed=seed))


def dataset_scores(dataset: Dataset, *, prefix: str = "mqm", weights: Weights = DEFAULT,
                   n_resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """`{"systems": [...]}`: what `manage.py mqm_scores` prints and GET /api/analytics/datasets/ID/mqm returns."""
    ratings = stats_ratings(dataset_ratings(dataset, prefix))
    return {"systems": score_rows(ratings, weights=weights, n_resamples=n_resamples, seed=seed)}


def categories(ratings: list[Rating], *, weights: Weights = DEFAULT, tree: tuple[Category, ...] = DEFAULT_TREE,
               top: bool = True) -> dict[str, list[CategoryFigure]]:
    """Per system, its errors by top-level category (or by full category) in the tree's spelling."""
    if top:
        return category_breakdown(ratings, weights.weight, name=lambda c: top_category(canonical_category(c, tree)))
    return category_breakdown(ratings, weights.weight, name=lambda c: canonical_category(c, tree))


def agreement(ratings: list[Rating], *, weights: Weights = DEFAULT,
              tree: tuple[Category, ...] = DEFAULT_TREE) -> Agreement:
    return rater_agreement(ratings, weights.weight, name=lambda c: canonical_category(c, tree))


RATER = "rater{}"


def rater_pseudonyms(campaign: Campaign) -> dict[int, str]:
    """user pk -> "rater1", "rater2", ... over the campaign's annotators and anyone else who worked on it, in the
    order their accounts were made: a person keeps their id whoever else is left out of an export. (The order
    in which annotators were added is no better key: a campaign's list is stored as a set.)"""
    listed = set(Campaign.annotators.through.objects.filter(campaign=campaign).values_list("user_id", flat=True))
    worked = set(Assignment.objects.filter(campaign=campaign).values_list("annotator_id", flat=True))
    return {user: RATER.format(n) for n, user in enumerate(sorted(listed | worked), 1)}


def campaign_mqm_ratings(campaign: Campaign, *, exclude_flagged: bool | None = None,
                         rater_names: bool = False) -> list[MqmRating]:
    """The ratings an MQM campaign's annotators gave, as the TSV writes them: one per real rating
    (analytics.selectors.exclusion.rated_assignments under `exclude_flagged`, None: the campaign's setting), its
    errors the annotator's own spans on the item in this campaign; raters pseudonymous (`rater_pseudonyms`)
    unless `rater_names`."""
    done = list(rated_assignments(exclusion_for(campaign, exclude_flagged)).values_list("item_id", "annotator_id"))
    items = {row["pk"]: row for row in Item.objects.filter(pk__in={i for i, _ in done}).values(*ITEM_FIELDS)}
    raters = (dict(User.objects.filter(pk__in={a for _, a in done}).values_list("pk", "username")) if rater_names
              else rater_pseudonyms(campaign))
    errors: dict[tuple[int, int], list[MqmError]] = defaultdict(list)
    rows = (ErrorSpan.objects.filter(annotation__source__added__campaign=campaign,
                                     annotation__item_id__in=list(items))
            .order_by("start", "pk")
            .values_list("annotation__item_id", "annotation__source__added__annotator_id", "start", "end",
                         "category", "severity", "explanation"))
    for item_id, annotator_id, start, end, category, severity, note in rows:
        errors[(item_id, annotator_id)].append(MqmError(category=category, severity=severity_of_code(severity),
                                                        start=start, end=end, comment=note))
    ratings = [item_rating(items[i], rater=raters[a], errors=errors.get((i, a), [])) for i, a in done]
    return sorted(ratings, key=rating_sort_key)


def campaign_ratings(campaign: Campaign, *, exclude_flagged: bool | None = None) -> list[Rating]:
    """The campaign's ratings as the statistics take them (`campaign_mqm_ratings`), raters by username."""
    return stats_ratings(campaign_mqm_ratings(campaign, exclude_flagged=exclude_flagged, rater_names=True))
