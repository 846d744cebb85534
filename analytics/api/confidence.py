"""The confidence calibration of a campaign's evaluators as JSON (researchers and admins)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from accounts.access import require_researcher
from analytics.selectors.confidence import EvaluatorConfidence, campaign_confidence
from annotator.models import Campaign
from stats.confidence import Calibration

router = Router(tags=["analytics"])


class LevelOut(Schema):
    k: int
    n: int
    spans: int
    confirmed: int
    share: float | None
    ci_low: float
    ci_high: float


class CategoryConfidenceOut(Schema):
    category: str
    spans: int
    levels: list[LevelOut]
    ece: float | None


class EvaluatorConfidenceOut(Schema):
    evaluator: str
    run_id: int
    neutral_label: str
    simulated: bool
    spans: int
    levels: list[LevelOut]
    ece: float | None
    by_category: list[CategoryConfidenceOut]
    supervisor: dict[str, int]


class ConfidenceOut(Schema):
    campaign_id: int
    aspect: str
    evaluators: list[EvaluatorConfidenceOut]


def _levels(calibration: Calibration) -> list[dict[str, Any]]:
    return [{"k": lv.k, "n": lv.n, "spans": lv.spans, "confirmed": lv.confirmed, "share": lv.share,
             "ci_low": lv.ci_low, "ci_high": lv.ci_high} for lv in calibration.levels]


def confidence_out(row: EvaluatorConfidence) -> dict[str, Any]:
    return {
        "evaluator": row.evaluator, "run_id": row.run_id, "neutral_label": row.neutral_label,
        "simulated": row.simulated, "spans": row.calibration.spans, "levels": _levels(row.calibration),
        "ece": row.calibration.ece,
        "by_category": [{"category": c.category, "spans": c.calibration.spans, "levels": _levels(c.calibration),
                         "ece": c.calibration.ece} for c in row.by_category],
        "supervisor": row.supervisor,
    }


@router.get("/campaigns/{campaign_id}/confidence", response=ConfidenceOut, operation_id="retrieve_campaign_confidence")
def retrieve_campaign_confidence(request: HttpRequest, campaign_id: int, aspect: str = ""):
    """The confidence calibration per evaluator: for each level k of n annotator models that flagged an
    overlapping stretch, the spans experts labelled, how many they confirmed as errors, the share with its 95%
    Wilson interval, and the expected calibration error (forecast k/n against the share, weighted by spans);
    the same per error category. Shares are on the 0-1 scale."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    rows = campaign_confidence(campaign, aspect=aspect)
    return {"campaign_id": campaign.pk, "aspect": aspect, "evaluators": [confidence_out(r) for r in rows]}
