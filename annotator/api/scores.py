"""The generic per-item score in the API (annotator.services.item_scores): the twin of the score screens' slider,
for every protocol whose declaration has a score range (undo, finish and time are the shared operations)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Field, Router, Schema

from accounts.access import AccessError
from annotator.access import assignment_for_user, assignment_to_edit
from annotator.engine.telemetry import clamp_ms
from annotator.models import Assignment
from annotator.selectors.scores import item_score_of
from annotator.services.item_scores import item_score_set
from corpus import protocols

router = Router(tags=["annotation"])


class ItemScoreIn(Schema):
    score: int | str = Field(..., description="a whole number within the protocol's score range")
    ms: float | None = None


class ItemScoreOut(Schema):
    assignment_id: int
    score: int | None = Field(..., description="None until given (or after an undo took it away)")
    min: int
    max: int


def _out(assignment: Assignment) -> ItemScoreOut:
    bounds = protocols.get(assignment.campaign.protocol).score_range
    if bounds is None:
        raise AccessError.not_found(f"Item {assignment.order}'s protocol gives no item score.")
    return ItemScoreOut(assignment_id=assignment.pk, score=item_score_of(assignment), min=bounds[0], max=bounds[1])


@router.get("/assignments/{assignment_id}/score", response=ItemScoreOut, operation_id="retrieve_item_score")
def retrieve_item_score(request: HttpRequest, assignment_id: int):
    """The item's score and the protocol's range; 404 for an item whose protocol gives no item score."""
    return _out(assignment_for_user(request.user, assignment_id))


@router.put("/assignments/{assignment_id}/score", response=ItemScoreOut, operation_id="update_item_score")
def update_item_score(request: HttpRequest, assignment_id: int, payload: ItemScoreIn):
    """Set the item's score (on the undo stack); 409 once the item is finished or for a protocol without one,
    422 out of range."""
    assignment = assignment_to_edit(request.user, assignment_id)
    _out(assignment)
    item_score_set(assignment=assignment, user=request.user, score=payload.score, ms=clamp_ms(payload.ms))
    return _out(assignment)
