"""Read side of routed judging: the spans a routed campaign resolved without an expert, per output."""

from __future__ import annotations

from annotator.models import AutoResolved, Campaign, CampaignRun
from corpus.models import ErrorSpan


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
