"""Analytics API: evaluators ranked with significance, and the study report as a zip of files."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from accounts.access import require_researcher
from analytics.report.build import REPORT_FORMATS, report_zip
from analytics.selectors.ranking import campaign_ranking
from annotator.models import Campaign
from errors import UserError

router = Router(tags=["analytics"])


class RankedEvaluatorOut(Schema):
    label: str
    run_id: int
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    rank: str | None


class RankedPairOut(Schema):
    a: str
    b: str
    difference: float | None
    p: float | None
    p_holm: float | None
    n_outputs: int


class RankingOut(Schema):
    method: str
    resamples: int
    alpha: float
    evaluators: list[RankedEvaluatorOut]
    pairs: list[RankedPairOut]


@router.get("/campaigns/{campaign_id}/ranking", response=RankingOut, operation_id="retrieve_campaign_ranking")
def retrieve_campaign_ranking(request: HttpRequest, campaign_id: int, aspect: str = "", by: str = "span"):
    """The campaign's evaluators of one aspect ranked by Span OK % (by=span) or Exp. correct % (by=explanation).

    Values are percentages with Table 4's 95% intervals; pairs are tested over the outputs both evaluators
    were judged on (approximate randomization, 10,000 seeded resamples, Holm-corrected); evaluators no test
    separates at alpha share a rank range such as "1-2". Without `aspect`, the campaign's only aspect.
    """
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return campaign_ranking(campaign, aspect=aspect, by=by).as_dict()


@router.get("/campaigns/{campaign_id}/report.zip", operation_id="download_campaign_report")
def download_campaign_report(request: HttpRequest, campaign_id: int, format: str = "latex"):
    """The study report (`manage.py export_report`) as a zip: tables, figures (PDF and SVG), the main file."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if format not in REPORT_FORMATS:
        raise UserError(f"format: {format!r} is not a report format; give {', '.join(REPORT_FORMATS)}")
    response = HttpResponse(report_zip(campaign, format), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-report-{format}.zip"'
    return response
