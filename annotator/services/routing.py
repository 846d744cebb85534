"""Route a campaign's machine spans (stats.routing): experts judge the uncertain ones and an audit of the rest.

A routed campaign is a designed sample (SampleDesign, strata `evaluator+confidence`): the spans experts judge
are its SampledSpan rows, so the judging screen, Finish and the designed-sample estimates need nothing new;
the confident spans left to the ensemble are AutoResolved rows with its verdict. Only the evaluator runs'
machine spans are routed: decoys and planted outputs are added to the work afterwards and always reach an
expert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from annotator.models import AutoResolved, Campaign, SampleDesign, SampledSpan
from annotator.selectors.campaigns import campaign_run_labels
from annotator.selectors.spans import judged_spans_by_item
from evaluation.models import SpanConfidence
from evaluation.services.confidence import confidence_store
from stats.routing import CONFIDENT, UNCERTAIN, check_routing, route


@dataclass(frozen=True)
class RoutingSpec:
    """Spans at least `min_k` models flagged are resolved by the ensemble, but for an audit at `audit_rate`."""

    min_k: int
    audit_rate: float
    seed: int = 0

    def check(self) -> None:
        check_routing(self.min_k, self.audit_rate)


def campaign_route_draw(*, campaign: Campaign, item_ids: Sequence[int], spec: RoutingSpec) -> list[int]:
    """Route the machine spans the campaign would show on `item_ids`, store the design, its judged spans and the
    auto-resolved ones, mark the campaign sampled, and return the items that hold a span for experts."""
    spec.check()
    labels = campaign_run_labels(campaign.pk)
    confidence_store(run_ids=list(labels))
    by_item = judged_spans_by_item(campaign, sorted(set(item_ids)), labels)
    item_of = {span.pk: item_id for item_id, pairs in by_item.items() for span, _ in pairs}
    k_of = dict(SpanConfidence.objects.filter(span_id__in=sorted(item_of)).values_list("span_id", "k"))
    units: dict[int, list[tuple[int, int]]] = {}
    for pairs in by_item.values():
        for span, _ in pairs:
            units.setdefault(span.annotation.source_id, []).append((span.pk, k_of.get(span.pk, 0)))
    routes = {run_id: route(run_units, min_k=spec.min_k, audit_rate=spec.audit_rate, seed=spec.seed + run_id)
              for run_id, run_units in sorted(units.items())}
    design = SampleDesign.objects.create(
        campaign=campaign, strata=SampleDesign.Strata.ROUTING, seed=spec.seed, min_k=spec.min_k,
        audit_rate=spec.audit_rate, population={str(run_id): r.population for run_id, r in routes.items()},
    )
    judged, auto = [], []
    for run_id, r in routes.items():
        judged += [SampledSpan(design=design, span_id=pk, run_id=run_id, stratum=UNCERTAIN) for pk in r.expert]
        judged += [SampledSpan(design=design, span_id=pk, run_id=run_id, stratum=CONFIDENT) for pk in r.audit]
        auto += [AutoResolved(design=design, span_id=pk, run_id=run_id) for pk in r.auto]
    SampledSpan.objects.bulk_create(judged)
    AutoResolved.objects.bulk_create(auto)
    Campaign.objects.filter(pk=campaign.pk).update(is_sampled=True)
    campaign.is_sampled = True
    return sorted({item_of[row.span_id] for row in judged})
