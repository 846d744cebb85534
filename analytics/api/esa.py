"""ESA figures of a campaign over HTTP: the JSON `manage.py esa_scores` prints."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.api.systems import SystemScoreOut
from analytics.selectors.esa import campaign_esa, check_esa_request
from analytics.selectors.exclusion import exclude_flagged_param
from annotator.models import Campaign

router = Router(tags=["analytics"])


class EsaPairOut(Schema):
    a: str
    b: str
    difference: float | None
    p: float | None
    p_holm: float | None
    segments: int


class EsaSeverityOut(Schema):
    system: str
    ratings: int
    minor: int
    major: int
    missing: int
    spans: int
    per_rating: float | None


class EsaCorrelationOut(Schema):
    n: int
    pearson: float | None
    pearson_p: float | None
    kendall: float | None
    kendall_p: float | None


class EsaRaterPairOut(Schema):
    a: str
    b: str
    outputs: int
    pearson: float | None
    pearson_p: float | None
    kendall: float | None
    kendall_p: float | None
    char_f1: float | None
    char_f1_severity: float | None


class EsaAgreementOut(Schema):
    scores: EsaCorrelationOut
    char_f1: float | None
    char_f1_severity: float | None
    pairs: list[EsaRaterPairOut]


class EsaPrefillOut(Schema):
    outputs: int
    prefilled: int
    kept: int
    deleted: int
    resized: int
    regraded: int
    added: int
    major_from: int


class EsaArmOut(Schema):
    arm: str
    ratings: int
    outputs: int
    score: float | None
    spans: int
    minor: int
    major: int
    seconds: float
    seconds_per_item: float | None
    seconds_per_span: float | None
    span_phase_seconds_per_span: float | None


class EsaPairedOut(Schema):
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    outputs: int


class EsaMachineOut(Schema):
    machine_spans: int
    found_unprimed: float | None
    kept_primed: float | None


class EsaArmsOut(Schema):
    arms: list[EsaArmOut]
    score_difference: EsaPairedOut
    spans_difference: EsaPairedOut
    machine: EsaMachineOut


class EsaOut(Schema):
    campaign: int
    ratings: int
    resamples: int
    seed: int
    exclude_flagged: bool = Field(description="Whether flagged annotators were left out of these figures.")
    excluded: list[str] = Field(description="The annotators left out (empty unless exclude_flagged).")
    systems: list[SystemScoreOut]
    pairs: list[EsaPairOut]
    severities: list[EsaSeverityOut]
    agreement: EsaAgreementOut
    prefill: EsaPrefillOut
    arms: EsaArmsOut


@router.get("/campaigns/{campaign_id}/esa", response=EsaOut, operation_id="retrieve_campaign_esa")
def retrieve_campaign_esa(request: HttpRequest, campaign_id: int, resamples: int = 1000, seed: int = 0,
                          exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """An ESA campaign's figures: each system's mean score (higher is better) with a 95% bootstrap interval over
    segments and its rank range, the pairwise tests, spans by severity, agreement between raters on scores and
    spans, ESA^AI's pre-filled spans kept, deleted, resized and re-graded, and the two arms side by side. The
    flagged annotators are left out or counted as `exclude_flagged` says (absent: the campaign's setting). A
    campaign of another protocol is a 422."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    choice = exclude_flagged_param(exclude_flagged)
    check_esa_request(campaign, resamples=resamples, seed=seed)
    return campaign_esa(campaign, n_resamples=resamples, seed=seed, exclude_flagged=choice)
