"""API twins of the labeled-set export and the designed sample's estimates (researchers and admins)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.exports.labeled import LABELED_FORMATS, labeled_card, labeled_response
from analytics.selectors.estimates import DEFAULT_HALF_WIDTH, MetricEstimate, sample_estimates
from analytics.selectors.exclusion import exclude_flagged_param
from annotator.models import Campaign
from errors import Conflict, UserError
from stats.ppi import HT
from stats.sampling import check_half_width

router = Router(tags=["labeled sets and estimates"])


class MetricOut(Schema):
    plain: float | None  # share over judged spans (0..1)
    estimate: float | None  # stratified estimate for all spans (0..1)
    low: float | None
    high: float | None
    se: float | None
    interval: str  # "normal", "bootstrap" or "none"
    estimator: str = Field(description='The point estimator: "ht" (design-weighted Horvitz-Thompson) or "ppi++" '
                                       '(prediction-powered).')
    judged: int
    covered: int  # spans in strata with at least one judgment
    needed: int  # judged spans in all for the asked half-width
    more: int  # judgments still to make
    more_per_stratum: dict[str, int]
    strata: list[dict[str, Any]]


class EstimateOut(Schema):
    run_id: int
    run: str
    simulated: bool  # the simulated server answered this run: its estimate is no result
    spans: int
    sampled: int
    span_ok: MetricOut
    exp_correct: MetricOut


def _campaign(request: HttpRequest, campaign_id: int) -> Campaign:
    require_researcher(request)
    return get_object_or_404(Campaign.objects.select_related("dataset"), pk=campaign_id)


def _metric_out(m: MetricEstimate) -> MetricOut:
    e = m.estimate
    return MetricOut(plain=m.plain, estimate=e.point, low=e.low, high=e.high, se=e.se, interval=e.method,
                     estimator=HT, judged=e.judged, covered=e.covered, needed=m.plan.needed, more=m.plan.more,
                     more_per_stratum=m.plan.per_stratum,
                     strata=[{"name": s.name, "spans": s.population, "judged": s.judged, "ok": s.successes}
                             for s in m.strata])


@router.get("/campaigns/{campaign_id}/labeled", operation_id="export_labeled_set")
def export_labeled_set(request: HttpRequest, campaign_id: int, format: str = "jsonl",
                       exclude_flagged: str | None = EXCLUDE_FLAGGED) -> HttpResponse:
    """The labeled set, exactly as `manage.py export_labeled` writes it (jsonl streams; parquet)."""
    campaign = _campaign(request, campaign_id)
    if format not in LABELED_FORMATS:
        raise UserError(f"format: {format!r} is not one of {', '.join(LABELED_FORMATS)}", field="format")
    return labeled_response(campaign, format, exclude_flagged=exclude_flagged_param(exclude_flagged))


@router.get("/campaigns/{campaign_id}/labeled/card", response=dict[str, Any], operation_id="retrieve_labeled_card")
def retrieve_labeled_card(request: HttpRequest, campaign_id: int, format: str = "jsonl",
                          exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """The labeled set's data card (`format` is written into it: the file it describes)."""
    campaign = _campaign(request, campaign_id)
    if format not in LABELED_FORMATS:
        raise UserError(f"format: {format!r} is not one of {', '.join(LABELED_FORMATS)}", field="format")
    return labeled_card(campaign, fmt=format, exclude_flagged=exclude_flagged_param(exclude_flagged))


@router.get("/campaigns/{campaign_id}/estimates", response=list[EstimateOut], operation_id="list_sample_estimates")
def list_sample_estimates(request: HttpRequest, campaign_id: int, half_width: float = DEFAULT_HALF_WIDTH,
                          exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """Per evaluator of a sampled campaign: Span OK and Exp. correct for all its spans with 95% intervals,
    the plain shares over judged spans, and how many more judgments a ±half_width interval needs."""
    campaign = _campaign(request, campaign_id)
    check_half_width(half_width)
    choice = exclude_flagged_param(exclude_flagged)
    if not campaign.is_sampled:
        raise Conflict(f"campaign {campaign.name!r} judges every span: it has no designed sample to "
                             "estimate from (Table 4's figures are its exact ones)")
    return [EstimateOut(run_id=r.run_id, run=r.label, simulated=r.simulated, spans=r.spans, sampled=r.sampled,
                        span_ok=_metric_out(r.span_ok), exp_correct=_metric_out(r.exp_correct))
            for r in sample_estimates(campaign, half_width=half_width, exclude_flagged=choice)]
