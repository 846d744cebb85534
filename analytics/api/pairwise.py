"""Side-by-side MQM figures of a dataset or a campaign over HTTP: the JSON `manage.py pairwise_scores` prints."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.selectors.mqm import RESAMPLES, SEED
from analytics.selectors.pairwise import campaign_pairwise, dataset_pairwise
from annotator.models import Campaign
from corpus.models import Dataset

router = Router(tags=["analytics"])


class StrengthOut(Schema):
    system: str
    strength: float = Field(description="The Bradley-Terry log-strength (the strengths sum to zero).")
    ci_low: float | None
    ci_high: float | None
    rank_range: list[int] | None = Field(description="[best, worst], 1-based, from the pairs' Holm-adjusted tests.")


class PairOut(Schema):
    a: str
    b: str
    units: int = Field(description="Comparisons: shared screens, or (rater, segment) pairs when never shown together.")
    a_better: int = Field(description="Comparisons where a's MQM score was lower.")
    b_better: int
    ties: int
    a_win_rate: float | None = Field(description="a_better / (a_better + b_better); ties left out.")
    ci_low: float | None
    ci_high: float | None
    p_value: float | None = Field(description="The exact two-sided sign test.")
    p_holm: float | None = Field(description="Holm's adjustment over the pairs.")
    shown_together: bool


class PositionBiasOut(Schema):
    first_wins: int
    decided_units: int
    share: float | None
    ci_low: float | None
    ci_high: float | None


class ConsistencyOut(Schema):
    shown_together: float | None
    others: float | None


class CheckOut(Schema):
    rater: str
    found: int
    missed: int


class PairwiseOut(Schema):
    systems: list[StrengthOut]
    pairs: list[PairOut]
    position_bias: PositionBiasOut
    consistency: ConsistencyOut
    checks: list[CheckOut]


@router.get("/datasets/{dataset_id}/pairwise", response=PairwiseOut, operation_id="retrieve_dataset_pairwise")
def retrieve_dataset_pairwise(request: HttpRequest, dataset_id: int, source: str = "mqm",
                              resamples: int = RESAMPLES, seed: int = SEED):
    """The side-by-side figures of the sources labelled SOURCE:* (default weights); a 422 when they rated outputs
    one at a time."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return dataset_pairwise(dataset, prefix=source, n_resamples=resamples, seed=seed)


@router.get("/campaigns/{campaign_id}/pairwise", response=PairwiseOut, operation_id="retrieve_campaign_pairwise")
def retrieve_campaign_pairwise(request: HttpRequest, campaign_id: int, resamples: int = RESAMPLES, seed: int = SEED):
    """A campaign's side-by-side figures: a 422 naming why while its screens show one output at a time (and for a
    campaign of a protocol without MQM scores)."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return campaign_pairwise(campaign, n_resamples=resamples, seed=seed)
