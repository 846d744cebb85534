"""Analytics API: evaluators ranked with significance, and the study report as a zip of files."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.report.build import REPORT_FORMATS, report_zip
from analytics.selectors.exclusion import exclude_flagged_param, exclusion_for
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
    simulated: bool = Field(description="The run was answered by the simulated server: its figure is no result.")


class RankedPairOut(Schema):
    a: str
    b: str
    difference: float | None
    p: float | None
    p_holm: float | None
    n_outputs: int
    simulated: bool = Field(description="a or b was answered by the simulated server.")


class RankingOut(Schema):
    method: str
    resamples: int
    alpha: float
    evaluators: list[RankedEvaluatorOut]
    pairs: list[RankedPairOut]
    exclude_flagged: bool = Field(description="Whether flagged annotators were left out of these figures.")
    excluded: list[str] = Field(description="The annotators left out (empty unless exclude_flagged).")


@router.get("/campaigns/{campaign_id}/ranking", response=RankingOut, operation_id="retrieve_campaign_ranking")
def retrieve_campaign_ranking(request: HttpRequest, campaign_id: int, aspect: str = "", by: str = "span",
                              exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """The campaign's evaluators of one aspect ranked by Span OK % (by=span) or Exp. correct % (by=explanation).

    Values are percentages with Table 4's 95% intervals; pairs are tested over the outputs both evaluators
    were judged on (approximate randomization, 10,000 seeded resamples, Holm-corrected); evaluators no test
    separates at alpha share a rank range such as "1-2". Without `aspect`, the campaign's only aspect.
    """
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    exclusion = exclusion_for(campaign, exclude_flagged_param(exclude_flagged))
    ranking = campaign_ranking(campaign, aspect=aspect, by=by, exclude_flagged=exclusion.exclude)
    return ranking.as_dict() | {"exclude_flagged": exclusion.exclude, "excluded": list(exclusion.excluded)}


@router.get("/campaigns/{campaign_id}/report.zip", operation_id="download_campaign_report")
def download_campaign_report(request: HttpRequest, campaign_id: int, format: str = "latex",
                             exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """The study report (`manage.py export_report`) as a zip: tables, figures (PDF and SVG), the main file."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if format not in REPORT_FORMATS:
        raise UserError(f"format: {format!r} is not a report format; give {', '.join(REPORT_FORMATS)}", field="format")
    choice = exclude_flagged_param(exclude_flagged)
    response = HttpResponse(report_zip(campaign, format, exclude_flagged=choice), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-report-{format}.zip"'
    return response
