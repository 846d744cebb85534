"""Read side of routed judging: the spans a routed campaign resolved without an expert, per output, and the
probability the design gave each span of reaching an expert."""

from __future__ import annotations

from collections import Counter

from annotator.models import AutoResolved, Campaign, CampaignRun, SampledSpan
from corpus.models import ErrorSpan
from stats.routing import CONFIDENT


def inclusion_probabilities(campaign: Campaign) -> dict[int, float] | None:
    """Span id -> the probability the campaign's design gave it of being judged by an expert (drawn / spans in
    its stratum), for the spans drawn and those resolved without an expert; None for a campaign that judges
    every span (each has probability 1)."""
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    if design is None:
        return None
    rows = list(SampledSpan.objects.filter(design=design).values_list("span_id", "run_id", "stratum"))
    drawn = Counter((run_id, stratum) for _, run_id, stratum in rows)

    def probability(run_id: int, stratum: str) -> float:
        size = design.population.get(str(run_id), {}).get(stratum, 0)
        return drawn[(run_id, stratum)] / size if size else 1.0

    out = {span_id: probability(run_id, stratum) for span_id, run_id, stratum in rows}
    for span_id, run_id in AutoResolved.objects.filter(design=design).values_list("span_id", "run_id"):
        out[span_id] = probability(run_id, CONFIDENT)
    return out


def auto_resolved_by_item(campaign: Campaign) -> dict[int, list[tuple[ErrorSpan, str, str]]]:
    """Item id -> (span, the run's real label, the ensemble's verdict) for each auto-resolved span, in the
    evaluator's own order; {} for a campaign that does not route."""
    rows = (AutoResolved.objects.filter(design__campaign=campaign).select_related("span__annotation")
            .order_by("span__annotation__item_id", "span__annotation_id", "span__position", "span_id"))
    labels = dict(CampaignRun.objects.filter(campaign=campaign).values_list("run_id", "run__label"))
    out: dict[int, list[tuple[ErrorSpan, str, str]]] = {}
    for row in rows:
        out.setdefault(row.span.annotation.item_id, []).append((row.span, labels.get(row.run_id, "?"),
                                                                 row.span_verdict))
    return out
