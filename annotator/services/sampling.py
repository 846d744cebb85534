"""Draw the stratified random sample of machine spans a sampled campaign judges (stats.sampling)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.models import Assignment, Campaign, SampleDesign, SampledSpan
from annotator.selectors.campaigns import campaign_run_labels
from annotator.selectors.spans import judged_spans
from corpus.cleaning import INT32_MAX
from corpus.models import ErrorSpan
from stats.sampling import SamplingError, draw_stratified

NO_VALUE = "(none)"
WHOLE = "all"


@dataclass(frozen=True)
class SampleSpec:
    """What to draw: strata (SampleDesign.Strata), a size per stratum or a total per evaluator, a seed."""

    strata: str = SampleDesign.Strata.EVALUATOR
    per_stratum: int | None = None
    total: int | None = None
    seed: int = 0

    def check(self) -> None:
        if self.strata not in SampleDesign.Strata.values:
            raise SamplingError(f"strata: {self.strata!r} is not one of {', '.join(SampleDesign.Strata.values)}",
                                field="sample.strata")
        if (self.per_stratum is None) == (self.total is None):
            raise SamplingError("sample: give exactly one of a size per stratum or a total per evaluator",
                                field="sample")
        # The design's columns are 32-bit integers; a larger value would reach the database as a DataError.
        for name, value, low in (("per_stratum", self.per_stratum, 1), ("total", self.total, 1),
                                 ("seed", self.seed, 0)):
            if value is not None and not low <= value <= INT32_MAX:
                raise SamplingError(f"sample.{name}: {value} must be from {low} to {INT32_MAX}", field=f"sample.{name}")


def stratum_of(span: ErrorSpan, strata: str) -> str:
    """The stratum of a span within its evaluator."""
    if strata == SampleDesign.Strata.CATEGORY:
        return span.category or NO_VALUE
    if strata == SampleDesign.Strata.SEVERITY:
        return str(span.severity) if span.severity is not None else NO_VALUE
    return WHOLE


def campaign_sample_draw(*, campaign: Campaign, item_ids: Sequence[int], spec: SampleSpec) -> list[int]:
    """Draw the sample over the machine spans the campaign would show on `item_ids`, store it, mark the
    campaign sampled, and return the items that hold a drawn span. Each evaluator is sampled on its own:
    `total` is per evaluator, split over its strata in proportion to their sizes."""
    spec.check()
    labels = campaign_run_labels(campaign.pk)
    units: dict[int, list[tuple[int, str]]] = {}
    item_of: dict[int, int] = {}
    for item_id in sorted(set(item_ids)):  # the caller's list may repeat an item
        for span, _ in judged_spans(Assignment(campaign=campaign, item_id=item_id), labels, with_checks=False):
            run_id = span.annotation.source_id
            units.setdefault(run_id, []).append((span.pk, stratum_of(span, spec.strata)))
            item_of[span.pk] = item_id
    design = SampleDesign.objects.create(
        campaign=campaign, strata=spec.strata, seed=spec.seed, per_stratum=spec.per_stratum, total=spec.total,
        population={str(run): dict(Counter(h for _, h in run_units)) for run, run_units in units.items()},
    )
    rows = []
    for run_id, run_units in sorted(units.items()):
        stratum = dict(run_units)
        for span_id in draw_stratified(run_units, per_stratum=spec.per_stratum, total=spec.total,
                                       seed=spec.seed + run_id):
            rows.append(SampledSpan(design=design, span_id=span_id, run_id=run_id, stratum=stratum[span_id]))
    SampledSpan.objects.bulk_create(rows)
    Campaign.objects.filter(pk=campaign.pk).update(is_sampled=True)
    campaign.is_sampled = True
    return sorted({item_of[r.span_id] for r in rows})
