"""A routed campaign's figures: where its spans went, the audited accuracy of the auto-resolved labels, the
design-weighted estimates for all spans, and the expert time the routing saved.

The estimates are the designed sample's (analytics.selectors.estimates; the routes are its strata, so each is
the Horvitz-Thompson estimate with its interval). The auto-resolved labels say Error; their audited accuracy is
the share of audited confident spans whose consensus span verdict is Error, with its Wilson interval. The time
saved is the auto-resolved spans times the campaign's own active seconds per judged span (annotator.selectors.
pilot), so it is known once experts have finished some work.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from analytics.selectors.estimates import EvaluatorEstimate, sample_estimates
from analytics.selectors.exclusion import exclusion_for
from annotator.models import AutoResolved, Campaign, SampleDesign, SampledSpan
from annotator.selectors.pilot import pilot_data
from annotator.selectors.review import campaign_votes
from corpus.protocol import SPAN_OK
from stats.intervals import Proportion, wilson
from stats.planning import times
from stats.routing import CONFIDENT, UNCERTAIN


@dataclass
class RoutedEvaluator:
    run_id: int
    evaluator: str
    spans: int
    confident: int
    uncertain: int
    audited: int
    auto: int
    audited_accuracy: Proportion  # of the auto label (Error), over audited spans with a consensus verdict
    estimate: EvaluatorEstimate

    @property
    def expert_share(self) -> float | None:
        """The share of the evaluator's spans experts judge (uncertain ones and the audit)."""
        return (self.uncertain + self.audited) / self.spans if self.spans else None


@dataclass
class RoutingReport:
    min_k: int
    audit_rate: float
    seconds_per_span: float | None
    evaluators: list[RoutedEvaluator]

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
            audited_accuracy=wilson(confirmed[estimate.run_id], audited[estimate.run_id]), estimate=estimate,
        ))
    return RoutingReport(min_k=design.min_k or 0, audit_rate=design.audit_rate or 0.0,
                         seconds_per_span=times(pilot.active_seconds, pilot.outputs, pilot.spans).seconds_per_span,
                         evaluators=rows)


def routing_card(campaign: Campaign, *, exclude_flagged: bool | None = None) -> dict[str, Any] | None:
    """What a labeled set's data card says of the routing: the design, and per evaluator how many labels are
    `auto` and how often the audit confirmed that label (shares 0-1, 95% Wilson interval)."""
    report = routing_report(campaign, exclude_flagged=exclude_flagged)
    if report is None:
        return None
    return {
        "min_k": report.min_k, "audit_rate": report.audit_rate, "auto_resolved": report.auto,
        "judged_by_experts": report.expert_spans,
        "evaluators": [{"evaluator": e.evaluator, "auto_resolved": e.auto, "audited": e.audited,
                        "audited_accuracy": e.audited_accuracy.rate, "ci_low": e.audited_accuracy.low,
                        "ci_high": e.audited_accuracy.high} for e in report.evaluators],
    }
