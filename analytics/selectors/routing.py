"""A routed campaign's figures: where its spans went, the audited accuracy of the auto-resolved labels, the
design-weighted estimates for all spans, and the expert time the routing saved.

The estimates are the designed sample's (analytics.selectors.estimates; the routes are its strata, so each is
the Horvitz-Thompson estimate with its interval). The auto-resolved labels say Error; their audited accuracy is
the share of audited confident spans whose consensus span verdict is Error, with its Wilson interval. The time
saved is the auto-resolved spans times the campaign's own active seconds per judged span (annotator.selectors.
pilot), so it is known once experts have finished some work.

An active design's figures are prediction-powered (stats.ppi.active_estimate over its batches): Span OK for all
spans as the PPI++ estimate with the human-sample-only (inverse-probability-weighted) one beside it, the one
reported named by `estimator` with the reason; the labeled set's error rate (the share of spans whose label is
the model's and wrong) likewise; Exp. correct human-only, since the predictor predicts span verdicts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from analytics.selectors.estimates import EvaluatorEstimate, sample_estimates
from analytics.selectors.exclusion import exclusion_for
from annotator.models import AutoResolved, Campaign, SampleDesign, SampledSpan
from annotator.selectors.pilot import pilot_data
from annotator.selectors.review import campaign_votes
from annotator.selectors.routing import active_design_data
from corpus.protocols.opennlgauge import SPAN_OK
from stats.intervals import Proportion, wilson
from stats.planning import times
from stats.ppi import HT, PPI, Interval, PPIEstimate, active_estimate
from stats.routing import ACTIVE, CONFIDENT, THRESHOLD, UNCERTAIN
from stats.sampling import Estimate


@dataclass
class RoutedEvaluator:
    run_id: int
    evaluator: str
    spans: int
    confident: int
    uncertain: int
    audited: int  # the active design: every span drawn so far
    auto: int
    audited_accuracy: Proportion  # of the auto label (Error), over audited spans with a consensus verdict
    span_ok: Estimate  # the reported one, by `estimator`
    exp_correct: Estimate
    estimator: str = HT
    reason: str = "threshold design: stratified Horvitz-Thompson over its two routes"
    human_only: Estimate | None = None  # the active design: the human-sample-only estimate beside PPI++
    ppi: Estimate | None = None
    labeled_error: Estimate | None = None  # the active design: the labeled set's error rate
    labeled_error_estimator: str = HT
    estimate: EvaluatorEstimate | None = None  # the threshold design's designed-sample estimates

    @property
    def expert_share(self) -> float | None:
        """The share of the evaluator's spans experts judge (uncertain ones and the audit)."""
        return (self.uncertain + self.audited) / self.spans if self.spans else None


@dataclass
class RoutingReport:
    min_k: int | None
    audit_rate: float | None
    seconds_per_span: float | None
    evaluators: list[RoutedEvaluator]
    design: str = THRESHOLD
    min_probability: float | None = None
    target_ci_width: float | None = None
    budget_spans: int | None = None
    batches: int = 0

    @property
    def auto(self) -> int:
        return sum(e.auto for e in self.evaluators)

    @property
    def spans(self) -> int:
        return sum(e.spans for e in self.evaluators)

    @property
    def expert_spans(self) -> int:
        return sum(e.uncertain + e.audited for e in self.evaluators)

    @property
    def expert_seconds_saved(self) -> float | None:
        return None if self.seconds_per_span is None else self.auto * self.seconds_per_span


def routed_design(campaign: Campaign) -> SampleDesign | None:
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    return design if design is not None and design.is_routing else None


def routing_report(campaign: Campaign, *, exclude_flagged: bool | None = None) -> RoutingReport | None:
    """The routed campaign's figures per evaluator; None for a campaign that does not route. `exclude_flagged`
    as in Scope (None: the campaign's setting)."""
    design = routed_design(campaign)
    if design is None:
        return None
    exclusion = exclusion_for(campaign, exclude_flagged)
    if design.is_active:
        return _active_report(campaign, design, exclusion.excluded_ids)
    votes = campaign_votes(campaign, excluded=exclusion.excluded_ids)
    audited: Counter[int] = Counter()
    confirmed: Counter[int] = Counter()
    for span_id, run_id in SampledSpan.objects.filter(design=design, stratum=CONFIDENT).values_list("span_id",
                                                                                                   "run_id"):
        verdict = votes.machine_consensus(span_id).span_verdict
        if verdict is not None:
            audited[run_id] += 1
            confirmed[run_id] += verdict == SPAN_OK
    drawn = Counter(SampledSpan.objects.filter(design=design, stratum=CONFIDENT).values_list("run_id", flat=True))
    auto = Counter(AutoResolved.objects.filter(design=design).values_list("run_id", flat=True))
    pilot = pilot_data(campaign)
    rows = []
    for estimate in sample_estimates(campaign, exclude_flagged=exclusion.exclude):
        population = design.population.get(str(estimate.run_id), {})
        rows.append(RoutedEvaluator(
            run_id=estimate.run_id, evaluator=estimate.label, spans=estimate.spans,
            confident=population.get(CONFIDENT, 0), uncertain=population.get(UNCERTAIN, 0),
            audited=drawn[estimate.run_id], auto=auto[estimate.run_id],
            audited_accuracy=wilson(confirmed[estimate.run_id], audited[estimate.run_id]),
            span_ok=estimate.span_ok.estimate, exp_correct=estimate.exp_correct.estimate, estimate=estimate,
        ))
    return RoutingReport(min_k=design.min_k or 0, audit_rate=design.audit_rate or 0.0,
                         seconds_per_span=times(pilot.active_seconds, pilot.outputs, pilot.spans).seconds_per_span,
                         evaluators=rows)


def _as_estimate(part: Interval, *, judged: int, population: int) -> Estimate:
    known = part.point is not None
    return Estimate(part.point, part.low, part.high, part.se, "normal" if known else "none", judged, population,
                    population if known else 0)


def choose(estimate: PPIEstimate) -> tuple[str, str]:
    """Return which of a prediction-powered estimate and its human-only twin a figure reports, and why: the one
    with the smaller standard error (power tuning makes that PPI++ unless the batches disagree)."""
    ppi, human = estimate.estimate, estimate.classical
    if ppi.point is None or ppi.se is None:
        return HT, "no span of an estimable batch is labelled yet: no estimate"
    if human.se is None or ppi.se <= human.se:
        return PPI, (f"the calibrated predictor narrows the interval: standard error {ppi.se:.4f} against "
                     f"{human.se if human.se is not None else float('nan'):.4f} from the experts' sample alone")
    return HT, (f"the predictor does not narrow the interval here (standard error {ppi.se:.4f} against "
                f"{human.se:.4f} from the experts' sample alone), so the human-only estimate is reported")


def _active_report(campaign: Campaign, design: SampleDesign, excluded: Collection[int]) -> RoutingReport:
    data = active_design_data(campaign, excluded=excluded)
    labels = dict(campaign.runs.values_list("pk", "label"))
    rows = []
    for run in data.runs if data else []:
        share, error = active_estimate(run.batches, labeled=run.labeled, outcome=run.outcome, decision=run.decision)
        explained, _ = active_estimate(run.batches, labeled=run.explained, outcome=run.explanation_ok,
                                       decision=run.decision)
        size, judged = len(run.span_ids), int(run.labeled.sum())
        estimator, reason = choose(share)
        error_estimator, _ = choose(error)
        rows.append(RoutedEvaluator(
            run_id=run.run_id, evaluator=labels.get(run.run_id, f"run {run.run_id}"), spans=size, confident=0,
            uncertain=0, audited=int(run.drawn.sum()), auto=int((~run.drawn).sum()),
            audited_accuracy=wilson(int((run.labeled & (run.decision == run.outcome)).sum()), judged),
            span_ok=_as_estimate(share.estimate if estimator == PPI else share.classical, judged=judged,
                                 population=size),
            exp_correct=_as_estimate(explained.classical, judged=int(run.explained.sum()), population=size),
            estimator=estimator, reason=reason,
            human_only=_as_estimate(share.classical, judged=judged, population=size),
            ppi=_as_estimate(share.estimate, judged=judged, population=size),
            labeled_error=_as_estimate(error.estimate if error_estimator == PPI else error.classical,
                                       judged=judged, population=size),
            labeled_error_estimator=error_estimator,
        ))
    pilot = pilot_data(campaign)
    return RoutingReport(min_k=None, audit_rate=None,
                         seconds_per_span=times(pilot.active_seconds, pilot.outputs, pilot.spans).seconds_per_span,
                         evaluators=rows, design=ACTIVE, min_probability=design.min_probability,
                         target_ci_width=design.target_ci_width, budget_spans=design.budget_spans,
                         batches=data.batches if data else 0)


def routing_card(campaign: Campaign, *, exclude_flagged: bool | None = None) -> dict[str, Any] | None:
    """What a labeled set's data card says of the routing: the design, and per evaluator how many labels are
    `auto` (the model's) and how often experts confirmed that label where they judged (shares 0-1, 95% Wilson
    interval); under the active design also the labeled set's error rate with the estimator that gave it."""
    report = routing_report(campaign, exclude_flagged=exclude_flagged)
    if report is None:
        return None
    card: dict[str, Any] = {
        "design": report.design, "min_k": report.min_k, "audit_rate": report.audit_rate,
        "auto_resolved": report.auto, "judged_by_experts": report.expert_spans,
        "evaluators": [{"evaluator": e.evaluator, "auto_resolved": e.auto, "audited": e.audited,
                        "audited_accuracy": e.audited_accuracy.rate, "ci_low": e.audited_accuracy.low,
                        "ci_high": e.audited_accuracy.high} for e in report.evaluators],
    }
    if report.design == ACTIVE:
        card |= {"min_probability": report.min_probability, "target_ci_width": report.target_ci_width,
                 "budget_spans": report.budget_spans, "batches": report.batches}
        for row, e in zip(card["evaluators"], report.evaluators, strict=True):
            error = e.labeled_error
            row |= {"labeled_error": None if error is None else error.point,
                    "labeled_error_ci_low": None if error is None else error.low,
                    "labeled_error_ci_high": None if error is None else error.high,
                    "labeled_error_estimator": e.labeled_error_estimator}
    return card
