"""Aggregation queries behind the analytics and the reports they feed (numbers only, no presentation)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from django.db import connection, connections
from django.utils import timezone

from analytics.selectors.accuracy import AccuracyGroup, AccuracyReport, accuracy_report
from analytics.selectors.agreement import (
    AgreementReport,
    AlphaSummary,
    PairAgreement,
    agreement_report,
    calibration_report,
)
from analytics.selectors.alignment import AlignmentRow, alignment_report
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
    UnknownReference,
    imported_sources,
    overlap_report,
    parse_reference,
    reference_choices,
)
from analytics.selectors.progress import ProgressRow, progress_report
from analytics.selectors.scores import ScoreRow, score_report
from evaluation.selectors import runs_problems
from stats.calibration import SeverityCalibration

A = TypeVar("A")
B = TypeVar("B")

# --------------------------------------------------------------------------------------------- dashboards


@dataclass
class DashboardData:
    """Every number of a campaign or dataset dashboard, computed once."""

    scope: Scope
    runs: list[RunInfo]
    imported: list[RunInfo]
    accuracy: AccuracyReport
    agreement: AgreementReport
    calibration: dict[int | None, SeverityCalibration]
    calibration_pooled: SeverityCalibration
    overlap: list[OverlapRow]
    reference: Reference | None
    scores: list[ScoreRow]
    references: list[tuple[str, str]] = field(default_factory=list)
    reference_value: str = ""
    alignment: list[AlignmentRow] = field(default_factory=list)
    # run id -> (item, model) answers stopped by the context or answer budget (evaluation.selectors.run_problems)
    problems: dict[int, dict[str, int]] = field(default_factory=dict)
    computed_at: datetime = field(default_factory=timezone.now)  # the page says how fresh its numbers are
    progress: list[ProgressRow] = field(default_factory=list)  # items assigned and finished per annotator

    @property
    def simulated_runs(self) -> list[str]:
        """Labels of the runs in scope that the simulator answered (the page warns above every figure)."""
        return [r.label for r in self.runs if r.simulated]


def _side_by_side(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Run two independent groups of report queries at once, `second` in a thread with its own connection.

    A dashboard spends about half its time waiting for PostgreSQL and half in numpy; two groups overlap
    one's waiting with the other's arithmetic. Inside a transaction (tests, atomic requests) another
    connection could not see uncommitted rows, so the groups then run one after the other.
    """
    if connection.in_atomic_block:
        return first(), second()

    def in_thread() -> B:
        try:
            return second()
        finally:
            connections.close_all()  # this thread's connections only

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard") as pool:
        later = pool.submit(in_thread)
        return first(), later.result()


def dashboard_data(
    scope: Scope, *, reference: str = "", n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> DashboardData:
    """Compute a dashboard's numbers: a campaign's when scope names one, else a dataset's."""
    runs = runs_in_scope(scope)
    references = reference_choices(scope)
    if not reference and references:
        reference = references[0][0]
    ref = parse_reference(reference, scope, references) if reference else None
    imported = imported_sources(scope)
    if ref is not None and ref.kind == "external":  # the reference is not compared with itself
        imported = [r for r in imported if r.label != f"{ref.source} (imported)"]

    def accuracy_and_calibration():
        return accuracy_report(scope, n_resamples=n_resamples, seed=seed), calibration_report(scope)

    def agreement_overlap_scores():
        return (
            agreement_report(scope),
            overlap_report(runs=runs, reference=ref, scope=scope, imported=imported) if ref else [],
            score_report(runs=runs, scope=scope),
            alignment_report(runs=runs, scope=scope),
        )

    (accuracy, (per_run, pooled)), (agreement, overlap, scores, alignment) = _side_by_side(
        accuracy_and_calibration, agreement_overlap_scores
    )
    return DashboardData(
        scope=scope, runs=runs, imported=imported, accuracy=accuracy, agreement=agreement,
        calibration=per_run, calibration_pooled=pooled, overlap=overlap, reference=ref, scores=scores,
        references=references, reference_value=reference if ref else "", alignment=alignment,
        problems=runs_problems([r.run_id for r in runs]), progress=progress_report(scope),
    )


__all__ = [
    "DEFAULT_RESAMPLES", "AccuracyGroup", "AccuracyReport", "AgreementReport", "AlignmentRow", "AlphaSummary",
    "DashboardData", "OverlapRow", "PairAgreement", "ProgressRow", "Reference", "UnknownReference", "RunInfo",
    "ScoreRow", "Scope",
    "accuracy_report", "agreement_report", "alignment_report", "annotator_names", "calibration_report",
    "dashboard_data", "final_kinds",
    "judgments_in_scope", "overlap_report", "progress_report", "parse_reference", "reference_choices", "runs_in_scope",
    "score_report",
]
