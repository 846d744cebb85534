"""Agreement between annotators (Krippendorff's alpha, pairwise) and severity calibration."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, F, Q

from analytics.selectors.base import (
    RUN,
    Scope,
    _raw_rows,
    annotator_names,
    judgments_in_scope,
)
from quality.selectors.vigilance import excluded_annotator_ids
from stats.accuracy import EXPLANATION_ROWS, SPAN_COLUMNS
from stats.agreement import krippendorff_alpha_nominal, observed_agreement
from stats.calibration import SeverityCalibration, severity_calibration
from stats.shares import ratio

# --------------------------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AlphaSummary:
    n_units: int
    alpha_span: float | None
    alpha_explanation: float | None
    observed_span: float | None
    observed_explanation: float | None


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: int
    annotator_b: int
    n: int
    span_agree: int
    explanation_agree: int

    @property
    def span_share(self) -> float | None:
        return ratio(self.span_agree, self.n)

    @property
    def explanation_share(self) -> float | None:
        return ratio(self.explanation_agree, self.n)


@dataclass
class AgreementReport:
    pooled: AlphaSummary
    by_run: dict[int | None, AlphaSummary]
    pairs: list[PairAgreement]
    annotators: dict[int, str]


def _alpha_summary(table: np.ndarray) -> AlphaSummary:
    span_counts, exp_counts = table[:, : len(SPAN_COLUMNS)], table[:, len(SPAN_COLUMNS) :]
    return AlphaSummary(
        n_units=int(table.shape[0]),
        alpha_span=krippendorff_alpha_nominal(span_counts),
        alpha_explanation=krippendorff_alpha_nominal(exp_counts),
        observed_span=observed_agreement(span_counts),
        observed_explanation=observed_agreement(exp_counts),
    )


def agreement_report(scope: Scope) -> AgreementReport:
    """Return Krippendorff's alpha (nominal) and pairwise agreement over spans judged by >= 2 annotators.

    A unit is one machine span; its value counts (how many annotators chose each verdict) come from one
    GROUP BY span query, the per-annotator-pair counts from one self-join of judgments on the span.
    """
    # A unit is a span within one campaign: each campaign is its own study, and one expert may judge the
    # same span in two of them. A campaign dashboard needs no extra join for that.
    unit = ("span_id",) if scope.campaign_id is not None else ("assignment__campaign_id", "span_id")
    per_span = _raw_rows(
        judgments_in_scope(scope)
        .values(RUN, *unit)
        .annotate(
            k=Count("id"),
            **{f"s_{v}": Count("id", filter=Q(span_verdict=v)) for v in SPAN_COLUMNS},
            **{f"e_{v}": Count("id", filter=Q(explanation_verdict=v)) for v in EXPLANATION_ROWS},
        )
        .filter(k__gte=2)
        .order_by(*unit)
    )
    width = 2 + len(unit) + len(SPAN_COLUMNS) + len(EXPLANATION_ROWS)
    # columns: run, the unit's keys, k, span-verdict counts, explanation-verdict counts; keep run + counts
    table = np.array(per_span, dtype=float).reshape(-1, width)
    table = np.concatenate((table[:, :1], table[:, 2 + len(unit) :]), axis=1)
    run_col = np.nan_to_num(table[:, 0], nan=-1)
    by_run = {
        (None if run_id == -1 else int(run_id)): _alpha_summary(table[run_col == run_id, 1:])
        for run_id in np.unique(run_col)
    }

    other = "span__judgments__"
    pair_filter = Q(
        **{
            f"{other}annotator_id__gt": F("annotator_id"),
            f"{other}span_verdict__in": SPAN_COLUMNS,
            f"{other}explanation_verdict__in": EXPLANATION_ROWS,
        }
    )
    if scope.campaign_id is not None:
        pair_filter &= Q(**{f"{other}assignment__campaign_id": scope.campaign_id})
        pair_filter &= ~Q(**{f"{other}annotator_id__in": excluded_annotator_ids(
            scope.campaign_id, exclude_flagged=scope.exclude_flagged)})
    else:
        pair_filter &= Q(**{f"{other}assignment__campaign_id": F("assignment__campaign_id")})
    pair_rows = (
        judgments_in_scope(scope)
        .filter(pair_filter)
        .values("annotator_id", other_annotator=F(f"{other}annotator_id"))
        .annotate(
            n=Count("id"),
            span_agree=Count("id", filter=Q(span_verdict=F(f"{other}span_verdict"))),
            exp_agree=Count("id", filter=Q(explanation_verdict=F(f"{other}explanation_verdict"))),
        )
        .order_by("annotator_id", "other_annotator")
    )
    pairs = [
        PairAgreement(r["annotator_id"], r["other_annotator"], r["n"], r["span_agree"], r["exp_agree"])
        for r in pair_rows
    ]
    names = annotator_names([p.annotator_a for p in pairs] + [p.annotator_b for p in pairs])
    return AgreementReport(pooled=_alpha_summary(table[:, 1:]), by_run=by_run, pairs=pairs, annotators=names)


# --------------------------------------------------------------------------------------------- calibration


def calibration_report(scope: Scope) -> tuple[dict[int | None, SeverityCalibration], SeverityCalibration]:
    """Return machine vs human-corrected severity per run and pooled (judgments with a corrected severity)."""
    rows = list(
        judgments_in_scope(scope)
        .filter(corrected_severity__isnull=False, span__severity__isnull=False)
        .values_list(RUN, "span__severity", "corrected_severity")
        .annotate(n=Count("id"))
        .order_by()
    )
    cells: dict[int | None, list[tuple[int, int, int]]] = defaultdict(list)
    for run_id, machine, human, n in rows:
        cells[run_id].append((machine, human, n))
    per_run = {run_id: severity_calibration(c) for run_id, c in cells.items()}
    return per_run, severity_calibration((m, h, n) for _, m, h, n in rows)


