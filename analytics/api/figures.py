"""A protocol's registered figure set as JSON (analytics.protocols): one endpoint for every set that has no
endpoint of its own, so a new protocol's numbers reach the API without a router of its own."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.protocols import FIGURE_SETS
from analytics.selectors.esa import MAX_RESAMPLES, SEED_MAX, SEED_MIN
from analytics.selectors.exclusion import exclude_flagged_param
from annotator.models import Campaign
from corpus import protocols
from errors import UserError

router = Router(tags=["analytics"])


class NoSuchFigures(UserError):
    """Figures the campaign's protocol does not declare, or that have an endpoint of their own (422)."""


@router.get("/campaigns/{campaign_id}/figures/{key}", response=dict[str, Any],
            operation_id="retrieve_campaign_figures")
def retrieve_campaign_figures(request: HttpRequest, campaign_id: int, key: str, resamples: int = 1000, seed: int = 0,
                              exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """The figure set `key` of a campaign whose protocol declares it (e.g. DA's `da_scores`), computed with
    `resamples` bootstrap resamples from `seed`; the flagged annotators left out or counted as `exclude_flagged`
    says (absent: the campaign's setting). A key the protocol does not declare is a 422 at key."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    choice = exclude_flagged_param(exclude_flagged)
    figures = FIGURE_SETS.get(key)
    if key not in protocols.get(campaign.protocol).figures or figures is None or figures.data is None:
        raise NoSuchFigures(f"key: the {campaign.protocol} protocol has no figure set {key[:40]!r} at this endpoint",
                            field="key")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise NoSuchFigures(f"resamples: from 1 to {MAX_RESAMPLES}, not {resamples}", field="resamples")
    if not SEED_MIN <= seed <= SEED_MAX:
        raise NoSuchFigures(f"seed: from {SEED_MIN} to {SEED_MAX}, not {seed}", field="seed")
    return figures.data(campaign, n_resamples=resamples, seed=seed, exclude_flagged=choice)
