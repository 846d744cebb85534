"""Aggregation queries behind the analytics and the reports they feed (numbers only, no presentation)."""

from __future__ import annotations

from dataclasses import dataclass, field

from analytics.selectors.accuracy import AccuracyGroup, AccuracyReport, accuracy_report
from analytics.selectors.agreement import (
    AgreementReport,
    AlphaSummary,
    PairAgreement,
    agreement_report,
    calibration_report,
)
from analytics.selectors.base import (
    DEFAULT_RESAMPLES,
    RunInfo,
    Scope,
    annotator_names,
    final_kinds,
    judgments_in_scope,
    runs_in_scope,
)
from analytics.selectors.overlap import (
    OverlapRow,
    Reference,
    overlap_report,
    parse_reference,
    reference_choices,
)
from analytics.selectors.scores import ScoreRow, score_report
from evaluation.engine.stats import SeverityCalibration

# --------------------------------------------------------------------------------------------- dashboards


@dataclass
class DashboardData:
    """Every number of a campaign or dataset dashboard, computed once."""

    scope: Scope
    runs: list[RunInfo]
    accuracy: AccuracyReport
    agreement: AgreementReport
    calibration: dict[int | None, SeverityCalibration]
    calibration_pooled: SeverityCalibration
    overlap: list[OverlapRow]
    reference: Reference | None
    scores: list[ScoreRow]
    references: list[tuple[str, str]] = field(default_factory=list)
    reference_value: str = ""


def dashboard_data(
    scope: Scope, *, reference: str = "", n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> DashboardData:
    """Compute a dashboard's numbers: a campaign's when scope names one, else a dataset's."""
    runs = runs_in_scope(scope)
    references = reference_choices(scope)
    if not reference and references:
        reference = references[0][0]
    ref = parse_reference(reference, scope) if reference else None
    per_run, pooled = calibration_report(scope)
    return DashboardData(
        scope=scope, runs=runs,
        accuracy=accuracy_report(scope, n_resamples=n_resamples, seed=seed),
        agreement=agreement_report(scope),
        calibration=per_run, calibration_pooled=pooled,
        overlap=overlap_report(runs=runs, reference=ref, scope=scope) if ref else [],
        reference=ref, scores=score_report(runs=runs, scope=scope),
        references=references, reference_value=reference if ref else "",
    )


__all__ = [
    "DEFAULT_RESAMPLES", "AccuracyGroup", "AccuracyReport", "AgreementReport", "AlphaSummary", "DashboardData",
    "OverlapRow", "PairAgreement", "Reference", "RunInfo", "ScoreRow", "Scope", "accuracy_report",
    "agreement_report", "annotator_names", "calibration_report", "dashboard_data", "final_kinds",
    "judgments_in_scope", "overlap_report", "parse_reference", "reference_choices", "runs_in_scope",
    "score_report",
]
