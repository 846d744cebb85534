"""How far a campaign's judging has come: items assigned and finished per annotator (training items apart)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from analytics.selectors.base import Scope, annotator_names
from annotator.models import Assignment


@dataclass(frozen=True)
class ProgressRow:
    annotator: str
    assigned: int
    judged: int  # finished assignments


def progress_report(scope: Scope) -> list[ProgressRow]:
    """Return assigned and finished study items per annotator of the scope's campaign(s), by name.

    Qualification (training) items are not study work and are left out. A dataset scope counts every
    campaign on the dataset; the aspect and system filters narrow nothing here (an assignment is a whole item).
    """
    assignments = Assignment.objects.filter(is_training=False)
    if scope.campaign_id is not None:
        assignments = assignments.filter(campaign_id=scope.campaign_id)
    if scope.dataset_id is not None:
        assignments = assignments.filter(item__dataset_id=scope.dataset_id)
    if scope.system:
        assignments = assignments.filter(item__system=scope.system)
    rows = list(
        assignments.values("annotator_id").order_by()
        .annotate(assigned=Count("id"), judged=Count("id", filter=Q(status=Assignment.Status.DONE)))
    )
    names = annotator_names(r["annotator_id"] for r in rows)
    out = [ProgressRow(names.get(r["annotator_id"], str(r["annotator_id"])), r["assigned"], r["judged"]) for r in rows]
    return sorted(out, key=lambda r: r.annotator)
