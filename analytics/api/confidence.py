"""The ensemble's confidence as JSON (researchers and admins): its calibration against the experts, and the
figures of a routed campaign."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from accounts.access import require_researcher
from analytics.api.dashboards import EXCLUDE_FLAGGED
from analytics.selectors.confidence import EvaluatorConfidence, campaign_confidence
from analytics.selectors.exclusion import exclude_flagged_param
from analytics.selectors.routing import RoutingReport, routing_report
from annotator.models import Campaign
from errors import Conflict
from stats.confidence import Calibration
from stats.ppi import HT, PPI
from stats.sampling import Estimate

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


class ReliabilityBinOut(Schema):
    low: float
    high: float
    spans: int
    mean_prediction: float
    share: float


class PredictorOut(Schema):
    spans: int
    ece: float | None
    bins: list[ReliabilityBinOut]


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
    predictor: PredictorOut | None = Field(
        description="The calibrated predictor (stats.ppi) checked on the labelled spans: each span's out-of-fold "
                    "prediction against its verdict, in ten bins, with the ECE; null below 20 labelled spans or "
                    "with one verdict only.")


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
        "predictor": None if row.predictor is None else {
            "spans": row.predictor.spans, "ece": row.predictor.ece,
            "bins": [{"low": b.low, "high": b.high, "spans": b.spans, "mean_prediction": b.mean_prediction,
                      "share": b.share} for b in row.predictor.bins]},
    }


@router.get("/campaigns/{campaign_id}/confidence", response=ConfidenceOut, operation_id="retrieve_campaign_confidence")
def retrieve_campaign_confidence(request: HttpRequest, campaign_id: int, aspect: str = "",
                                 exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """The confidence calibration per evaluator: for each level k of n annotator models that flagged an
    overlapping stretch, the spans experts labelled, how many they confirmed as errors, the share with its 95%
    Wilson interval, and the expected calibration error (forecast k/n against the share, weighted by spans);
    the same per error category. Shares are on the 0-1 scale."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    rows = campaign_confidence(campaign, aspect=aspect, exclude_flagged=exclude_flagged_param(exclude_flagged))
    return {"campaign_id": campaign.pk, "aspect": aspect, "evaluators": [confidence_out(r) for r in rows]}


class ShareOut(Schema):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class EstimateOut(Schema):
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str = Field(description='The interval: "normal", "bootstrap" or "none".')
    estimator: str = Field(description='The point estimator: "ht" (design-weighted Horvitz-Thompson) or "ppi++" '
                                       '(prediction-powered).')
    judged: int


class RoutedEvaluatorOut(Schema):
    evaluator: str
    run_id: int
    spans: int
    confident: int
    uncertain: int
    audited: int = Field(description="The threshold design: confident spans audited; active: every span drawn.")
    auto: int
    expert_share: float | None
    audited_accuracy: ShareOut
    span_accuracy: EstimateOut = Field(description="The reported Span OK for all spans; `estimator` says which.")
    estimator_reason: str = Field(description="Why `span_accuracy` is the estimator it is.")
    span_accuracy_ppi: EstimateOut | None = Field(description="The active design: the PPI++ estimate.")
    span_accuracy_human_only: EstimateOut | None = Field(
        description="The active design: the experts' sample alone (inverse-probability weighted).")
    labeled_error: EstimateOut | None = Field(
        description="The active design: the share of all spans whose label is the model's and wrong.")
    exp_correct: EstimateOut


class RoutingOut(Schema):
    campaign_id: int
    design: str = Field(description='"threshold" or "active".')
    min_k: int | None
    audit_rate: float | None
    min_probability: float | None
    target_ci_width: float | None
    budget_spans: int | None
    batches: int = Field(description="The active design: batches drawn so far (0 for threshold).")
    spans: int
    expert_spans: int
    auto: int
    seconds_per_span: float | None
    expert_seconds_saved: float | None
    expert_hours_saved: float | None
    evaluators: list[RoutedEvaluatorOut]


def _estimate(e: Estimate | None, estimator: str = HT) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"estimate": e.point, "ci_low": e.low, "ci_high": e.high, "method": e.method, "estimator": estimator,
            "judged": e.judged}


def routing_out(campaign_id: int, report: RoutingReport) -> dict[str, Any]:
    saved = report.expert_seconds_saved
    return {
        "campaign_id": campaign_id, "design": report.design, "min_k": report.min_k,
        "audit_rate": report.audit_rate, "min_probability": report.min_probability,
        "target_ci_width": report.target_ci_width, "budget_spans": report.budget_spans, "batches": report.batches,
        "spans": report.spans,
        "expert_spans": report.expert_spans, "auto": report.auto, "seconds_per_span": report.seconds_per_span,
        "expert_seconds_saved": saved, "expert_hours_saved": None if saved is None else saved / 3600,
        "evaluators": [{
            "evaluator": e.evaluator, "run_id": e.run_id, "spans": e.spans, "confident": e.confident,
            "uncertain": e.uncertain, "audited": e.audited, "auto": e.auto, "expert_share": e.expert_share,
            "audited_accuracy": {"value": e.audited_accuracy.rate, "ci_low": e.audited_accuracy.low,
                                 "ci_high": e.audited_accuracy.high, "n": e.audited_accuracy.n},
            "span_accuracy": _estimate(e.span_ok, e.estimator), "estimator_reason": e.reason,
            "span_accuracy_ppi": _estimate(e.ppi, PPI), "span_accuracy_human_only": _estimate(e.human_only),
            "labeled_error": _estimate(e.labeled_error, e.labeled_error_estimator),
            "exp_correct": _estimate(e.exp_correct),
        } for e in report.evaluators],
    }


@router.get("/campaigns/{campaign_id}/routing", response=RoutingOut, operation_id="retrieve_campaign_routing")
def retrieve_campaign_routing(request: HttpRequest, campaign_id: int, exclude_flagged: str | None = EXCLUDE_FLAGGED):
    """A routed campaign per evaluator: its spans by route (uncertain: all to experts; confident: an audit to
    experts, the rest resolved as Error), the audited accuracy of the auto-resolved label with its Wilson
    interval, span accuracy and Exp. correct for all spans (design-weighted, 95% interval), and the expert time
    saved (auto-resolved spans x the campaign's active seconds per judged span). Under the active design: the
    spans drawn so far and those the model labels, Span OK as the PPI++ estimate (or the human-only one where the
    predictor does not narrow it; `estimator` and `estimator_reason` say), both beside each other, and the
    labeled set's error rate. 409 for a campaign that does not route."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    report = routing_report(campaign, exclude_flagged=exclude_flagged_param(exclude_flagged))
    if report is None:
        raise Conflict(f"campaign {campaign.name!r} does not route its spans: it has no routing figures")
    return routing_out(campaign.pk, report)
