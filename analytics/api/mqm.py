"""MQM system scores of a dataset or of an MQM campaign over HTTP: the JSON `manage.py mqm_scores` prints."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.api.systems import SystemScoreOut
from analytics.selectors.exclusion import exclude_flagged_param
from analytics.selectors.mqm import RESAMPLES, SEED, campaign_scores, check_mqm_request, dataset_scores
from annotator.models import Campaign
from corpus.models import Dataset

router = Router(tags=["analytics"])


class MqmScoresOut(Schema):
    systems: list[SystemScoreOut]


@router.get("/datasets/{dataset_id}/mqm", response=MqmScoresOut, operation_id="retrieve_dataset_mqm_scores")
def retrieve_dataset_mqm_scores(request: HttpRequest, dataset_id: int, source: str = "mqm"):
    """Each system's MQM score (lower is better) over the ratings of the sources labelled SOURCE:*, with a 95%
    bootstrap interval over segments (1,000 resamples, seed 0) and its rank range; default weights."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return dataset_scores(dataset, prefix=source)


class MqmCampaignScoresOut(MqmScoresOut):
    campaign: int
    exclude_flagged: bool = Field(description="Whether flagged annotators were left out of these scores.")
    excluded: list[str] = Field(description="The annotators left out (empty unless exclude_flagged).")


@router.get("/campaigns/{campaign_id}/mqm", response=MqmCampaignScoresOut, operation_id="retrieve_campaign_mqm_scores")
def retrieve_campaign_mqm_scores(request: HttpRequest, campaign_id: int, resamples: int = RESAMPLES, seed: int = SEED,
                                 exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """An MQM campaign's system scores (lower is better) over its finished ratings, in the dataset answer's shape:
    a 95% bootstrap interval over segments and a rank range per system, with the campaign's own weights. The
    flagged annotators are left out or counted as `exclude_flagged` says (absent: the campaign's setting). A
    campaign of a protocol without MQM scores is a 422."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    choice = exclude_flagged_param(exclude_flagged)
    check_mqm_request(campaign, resamples=resamples, seed=seed)
    return campaign_scores(campaign, n_resamples=resamples, seed=seed, exclude_flagged=choice)
