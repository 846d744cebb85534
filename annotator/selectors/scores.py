"""Reads of the generic per-item score (annotator.score_models): an item's score, and what finishing still needs."""

from __future__ import annotations

from annotator.models import Assignment, ItemScore
from corpus import protocols


def item_score_of(assignment: Assignment) -> int | None:
    return ItemScore.objects.filter(assignment_id=assignment.pk).values_list("score", flat=True).first()


def item_score_unfinished(assignment: Assignment) -> str | None:
    """What the item still needs (a score within the declared range), None when it has one."""
    bounds = protocols.get(assignment.campaign.protocol).score_range
    if bounds is None or item_score_of(assignment) is not None:
        return None
    return f"give the item a score from {bounds[0]} to {bounds[1]} first"
