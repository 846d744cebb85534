"""MQM figures of a dataset's rated translations: system scores with intervals and rank ranges, categories, agreement.

The ratings are a dataset's sources labelled `PREFIX:RATER` (an imported TSV's raters) read by
corpus.selectors.mqm, or an MQM campaign's finished work read here; both come as the TSV's ratings, so the
export and the figures read one thing. The numbers come from stats.mqm, the weights from the MQM protocol
(corpus.protocols.mqm).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from accounts.models import User
from analytics.selectors.exclusion import exclusion_for, rated_assignments
from analytics.selectors.systems import SystemRow, system_rows
from annotator.models import Assignment, Campaign
from corpus import protocols
from corpus.interop.mqm import MqmError, MqmRating, rating_sort_key
from corpus.interop.mqm_sxs import system_of
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
from corpus.selectors.mqm import ITEM_FIELDS, has_units, item_rating, mqm_ratings, mqm_sources
from errors import UserError
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
MAX_RESAMPLES = 100_000
SEED = 0
SEED_MIN, SEED_MAX = 0, 2**32 - 1  # numpy's seeds
FIGURE = "mqm_scores"  # the declared figure (corpus.protocols) a campaign must have for these scores


def stats_ratings(ratings: Iterable[MqmRating]) -> list[Rating]:
    """The ratings as the statistics take them: a segment is (doc, seg_id), shared by every system; a span
    counts as located only in the translation."""
    return [Rating(system=r.system, segment=r.segment, rater=r.rater, errors=tuple(
        Error(e.category, e.severity, *((e.start, e.end) if e.side == "target" else (None, None)))
        for e in r.errors)) for r in ratings]


def dataset_ratings(dataset: Dataset, prefix: str) -> list[MqmRating]:
    """The ratings by the dataset's sources `PREFIX:*`; NoMqmSources (a UserError) when it has none. Of ratings
    made side by side, `X_with_Y` is system X (shown with Y): one system, however many pairs it was shown in."""
    raters = mqm_sources(dataset, prefix)
    ratings = mqm_ratings(dataset, raters)
    if not has_units(dataset, raters):
        return ratings
    labels = {r.system for r in ratings}
    return [replace(r, system=system_of(r.system, labels)[0]) for r in ratings]


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


def campaign_mqm_errors(campaign: Campaign, *,
                        item_ids: list[int] | None = None) -> dict[tuple[int, int], list[MqmError]]:
    """(item, annotator) -> the annotator's own errors on the item in this campaign, as the TSVs write them (an
    omission marked in the source on the source side), in text order; `item_ids` limits the items."""
    spans = ErrorSpan.objects.filter(annotation__source__added__campaign=campaign)
    if item_ids is not None:
        spans = spans.filter(annotation__item_id__in=item_ids)
    errors: dict[tuple[int, int], list[MqmError]] = defaultdict(list)
    for item_id, annotator_id, start, end, source_start, source_end, category, severity, note in (
            spans.order_by("start", "source_start", "pk")
            .values_list("annotation__item_id", "annotation__source__added__annotator_id", "start", "end",
                         "source_start", "source_end", "category", "severity", "explanation")):
        side = "target" if source_start is None else "source"  # an omission is marked in the source
        errors[(item_id, annotator_id)].append(MqmError(
            category=category, severity=severity_of_code(severity), side=side, comment=note,
            start=start if side == "target" else source_start, end=end if side == "target" else source_end))
    return errors


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
    errors = campaign_mqm_errors(campaign, item_ids=list(items))
    ratings = [item_rating(items[i], rater=raters[a], errors=errors.get((i, a), [])) for i, a in done]
    return sorted(ratings, key=rating_sort_key)


def campaign_ratings(campaign: Campaign, *, exclude_flagged: bool | None = None) -> list[Rating]:
    """The campaign's ratings as the statistics take them (`campaign_mqm_ratings`), raters by username."""
    return stats_ratings(campaign_mqm_ratings(campaign, exclude_flagged=exclude_flagged, rater_names=True))


class NotMqm(UserError):
    """MQM scores asked of a campaign whose protocol has none, or with settings out of range (422)."""


def has_mqm_scores(campaign: Campaign) -> bool:
    """Whether the campaign's protocol declares MQM scores among its figures."""
    return FIGURE in protocols.get(campaign.protocol).figures


def check_mqm_request(campaign: Campaign, *, resamples: int = RESAMPLES, seed: int = SEED) -> None:
    """Refuse, naming the field, what campaign_scores cannot answer."""
    if not has_mqm_scores(campaign):
        raise NotMqm(f"campaign: {campaign.name!r} runs the {campaign.protocol} protocol, which has no MQM scores "
                     f"(its figures: {', '.join(protocols.get(campaign.protocol).figures)})", field="campaign")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise NotMqm(f"resamples: from 1 to {MAX_RESAMPLES}, not {resamples}", field="resamples")
    if not SEED_MIN <= seed <= SEED_MAX:
        raise NotMqm(f"seed: from {SEED_MIN} to {SEED_MAX}, not {seed}", field="seed")


def campaign_scores(campaign: Campaign, *, weights: Weights | None = None, n_resamples: int = RESAMPLES,
                    seed: int = SEED, exclude_flagged: bool | None = None) -> dict[str, Any]:
    """An MQM campaign's `{"systems": [...]}` as `dataset_scores` gives an imported source's, scored with the
    campaign's own weights unless `weights` says otherwise, plus the campaign and whom the quality checks left
    out (`exclude_flagged` None: the campaign's setting): what `mqm_scores --campaign` prints and GET
    /api/analytics/campaigns/ID/mqm returns. The report's MQM section reads the same ratings."""
    check_mqm_request(campaign, resamples=n_resamples, seed=seed)
    exclusion = exclusion_for(campaign, exclude_flagged)
    ratings = campaign_ratings(campaign, exclude_flagged=exclusion.exclude)
    chosen = weights if weights is not None else protocols.mqm_weights(campaign.protocol_options)
    return {"campaign": campaign.pk, "exclude_flagged": exclusion.exclude, "excluded": list(exclusion.excluded),
            "systems": score_rows(ratings, weights=chosen, n_resamples=n_resamples, seed=seed)}
