"""How each evaluator's spans were placed in the text: match kinds, spans without offsets, ambiguous ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import Count, Q

from analytics.selectors.base import RunInfo, Scope, _final_q, final_kinds
from annotator.models import Assignment
from corpus.models import ErrorSpan, MatchKind


@dataclass(frozen=True)
class AlignmentRow:
    """One run's final spans: how many, by match kind, and how many the aligner could not place for sure.

    An ambiguous span stands on the first of several occurrences that neither the location's notes nor the
    explanation told apart: the expert is shown so, and a researcher should know how many such spans a run
    has before trusting its span accuracy.
    """

    run_id: int
    spans: int
    by_match: dict[str, int] = field(default_factory=dict)
    ambiguous: int = 0

    @property
    def ambiguous_share(self) -> float | None:
        placed = self.spans - self.by_match.get(MatchKind.NONE, 0)
        return self.ambiguous / placed if placed else None


def alignment_report(*, runs: Sequence[RunInfo], scope: Scope) -> list[AlignmentRow]:
    """Return each run's span counts over its final answers (the ones experts judge), in one query."""
    kinds = final_kinds([r.run_id for r in runs])
    counts: dict[int, dict[str, int]] = {}
    if kinds:
        spans = ErrorSpan.objects.filter(_final_q(kinds, "annotation__"))
        if scope.dataset_id is not None:
            spans = spans.filter(annotation__item__dataset_id=scope.dataset_id)
        if scope.system:
            spans = spans.filter(annotation__item__system=scope.system)
        if scope.campaign_id is not None:
            items = Assignment.objects.filter(campaign_id=scope.campaign_id).values("item_id")
            spans = spans.filter(annotation__item_id__in=items)
        rows = (
            spans.values("annotation__source_id")
            .annotate(
                n=Count("id"), ambiguous=Count("id", filter=Q(ambiguous=True)),
                **{f"m_{kind}": Count("id", filter=Q(match=kind)) for kind in MatchKind.values},
            )
            .order_by()
        )
        counts = {row["annotation__source_id"]: row for row in rows}
    out = []
    for run in runs:
        row = counts.get(run.run_id, {})
        out.append(
            AlignmentRow(
                run_id=run.run_id, spans=row.get("n", 0), ambiguous=row.get("ambiguous", 0),
                by_match={kind: row.get(f"m_{kind}", 0) for kind in MatchKind.values},
            )
        )
    return out
