"""The confidence calibration of a campaign's evaluators: per level k of n, the share of spans experts confirm.

A span counts once its consensus label (corpus.consensus: a reviewer's decision, else the judges' majority)
has a span verdict; it is confirmed when that verdict is Error. Spans nobody judged, unresolved ties, spans a
routed campaign resolved without an expert, known answers (decoys, planted outputs) and the verdicts of
annotators the campaign excludes never count; nor do spans of answers without per-model answers behind them
(n = 0: an imported or hand-made merged answer), whose confidence is unknown. The arithmetic is stats.confidence's.

Beside k/n, the calibrated predictor of stats.ppi (everything the ensemble says about a span, fitted on the
campaign's expert-labelled spans with cross-fitting, pooled over its evaluators) is checked the same way: each
labelled span's out-of-fold prediction against its verdict, as a reliability curve with its ECE.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from analytics.selectors.base import Scope, runs_in_scope
from analytics.selectors.exclusion import exclusion_for
from annotator.models import Campaign
from annotator.selectors.review import campaign_votes
from corpus.protocols.opennlgauge import SPAN_OK
from evaluation.models import SpanConfidence
from evaluation.services.confidence import confidence_store
from stats.confidence import Calibration, calibration
from stats.ppi import Reliability, SpanSignals, cross_fit, design_matrix, reliability

NO_CATEGORY = "(none)"
MIN_PREDICTOR_SPANS = 20  # fewer expert-labelled spans than this give no predictor to check


@dataclass
class CategoryConfidence:
    category: str
    calibration: Calibration


@dataclass
class EvaluatorConfidence:
    run_id: int
    evaluator: str  # the run's label
    neutral_label: str
    simulated: bool
    calibration: Calibration
    by_category: list[CategoryConfidence] = field(default_factory=list)
    supervisor: dict[str, int] = field(default_factory=dict)  # decision -> expert-labelled spans
    predictor: Reliability | None = None  # the calibrated predictor's out-of-fold reliability on these spans


def _predictor(signals: list[SpanSignals], owners: list[int], verdicts: list[bool]) -> dict[int, Reliability]:
    """Run id -> the reliability of the cross-fitted predictor on its labelled spans; {} when too few spans or
    only one verdict leave nothing to fit."""
    if len(signals) < MIN_PREDICTOR_SPANS or len(set(verdicts)) < 2:
        return {}
    predicted = cross_fit(design_matrix(signals), dict(enumerate(verdicts)))
    if predicted is None:
        return {}
    runs = np.array(owners)
    outcomes = np.array(verdicts, dtype=float)
    return {run_id: reliability(predicted[runs == run_id], outcomes[runs == run_id]) for run_id in sorted(set(owners))}


def campaign_confidence(campaign: Campaign, *, aspect: str = "",
                        exclude_flagged: bool | None = None) -> list[EvaluatorConfidence]:
    """One row per evaluator run of the campaign (of `aspect`, when given), in neutral-label order;
    `exclude_flagged` as in Scope (None: the campaign's setting).

    The per-span confidence is derived data: spans that have none yet get it here (evaluation.services.
    confidence), once."""
    runs = runs_in_scope(Scope(campaign_id=campaign.pk, aspect=aspect))
    run_ids = [r.run_id for r in runs]
    confidence_store(run_ids=run_ids)
    labels: dict[int, bool] = {}
    # Runs without per-model answers have no level to calibrate: the campaign's votes are not even read.
    known = SpanConfidence.objects.filter(run_id__in=run_ids, n__gte=1).exists()
    if known:
        votes = campaign_votes(campaign, excluded=exclusion_for(campaign, exclude_flagged).excluded_ids)
        for span_id in votes.machine:
            verdict = votes.machine_consensus(span_id).span_verdict
            if verdict is not None:
                labels[span_id] = verdict == SPAN_OK
    per_run: dict[int, list[tuple[int, int, bool]]] = defaultdict(list)
    per_category: dict[int, dict[str, list[tuple[int, int, bool]]]] = defaultdict(lambda: defaultdict(list))
    decisions: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = SpanConfidence.objects.filter(run_id__in=run_ids, span_id__in=sorted(labels), n__gte=1)
    signals: list[SpanSignals] = []
    owners: list[int] = []
    verdicts: list[bool] = []
    for span_id, run_id, k, n, category, supervisor, severity_agreement, category_agreement, text in rows.values_list(
            "span_id", "run_id", "k", "n", "span__category", "supervisor", "severity_agreement",
            "category_agreement", "span__text").order_by("span_id"):
        outcome = (k, n, labels[span_id])
        per_run[run_id].append(outcome)
        per_category[run_id][category or NO_CATEGORY].append(outcome)
        decisions[run_id][supervisor] += 1
        signals.append(SpanSignals(k, n, supervisor, severity_agreement, category_agreement, str(run_id), len(text),
                                   category or NO_CATEGORY))
        owners.append(run_id)
        verdicts.append(labels[span_id])
    predictor = _predictor(signals, owners, verdicts)
    return [
        EvaluatorConfidence(
            run_id=r.run_id, evaluator=r.label, neutral_label=r.neutral_label, simulated=r.simulated,
            calibration=calibration(per_run[r.run_id]),
            by_category=[CategoryConfidence(name, calibration(outcomes))
                         for name, outcomes in sorted(per_category[r.run_id].items())],
            supervisor=dict(sorted(decisions[r.run_id].items())), predictor=predictor.get(r.run_id),
        )
        for r in runs
    ]
