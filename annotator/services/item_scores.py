"""The generic per-item score: set, cleared by undo, checked against the protocol's declared range.

One writer for every protocol whose declaration has a `score_range`, so a scoring protocol's screen posts here
and its hooks ask `item_score_unfinished`. Each change is a WorkAction (old and new score) with the milliseconds
the page measured, so undo and redo work on the score as on spans. A protocol with a scoring phase (spans first,
then the score) takes the score only in that phase.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from annotator.access import check_can_work, check_item_open
from annotator.engine.phases import Phase
from annotator.models import Assignment, ItemScore, WorkAction
from annotator.services.actions import action_record, activity_record
from corpus import protocols
from corpus.protocols import ProtocolError
from errors import Conflict


class NoItemScore(Conflict):
    """A score sent for an item whose protocol gives none (409)."""


def score_range(assignment: Assignment) -> tuple[int, int]:
    declared = protocols.get(assignment.campaign.protocol)
    if declared.score_range is None:
        raise NoItemScore(f"Item {assignment.order}'s screen gives no score of this kind.")
    return declared.score_range


def check_item_score(value: object, bounds: tuple[int, int]) -> int:
    """A whole number within the declared bounds; a ProtocolError (422) naming the field otherwise."""
    low, high = bounds
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ProtocolError(f"score: a whole number from {low} to {high}, not {value!r}", field="score") from None
    if not low <= number <= high:
        raise ProtocolError(f"score: a whole number from {low} to {high}, not {number}", field="score")
    return number


def item_score_write(*, assignment: Assignment, value: int | None,
                     ms: int | None = None) -> tuple[int | None, int | None]:
    """Store `value` (None clears it) and return (old, new); the caller holds the transaction and checked it."""
    state, _ = ItemScore.objects.select_for_update().get_or_create(assignment_id=assignment.pk)
    old = state.score
    changes: dict = {"score": value, "scored_at": timezone.now(), "score_ms": ms,
                     "score_changes": F("score_changes") + 1}
    if state.first_ms is None and value is not None:
        changes["first_ms"] = ms
    ItemScore.objects.filter(pk=state.pk).update(**changes)
    return old, value


@transaction.atomic
def item_score_set(*, assignment: Assignment, user: User, score: object, ms: int | None = None) -> ItemScore:
    """Set the item's score (on the undo stack); never once the item is finished (409), and under a protocol with
    a scoring phase only in it (409)."""
    check_can_work(assignment, user)
    check_item_open(assignment, "score")
    value = check_item_score(score, score_range(assignment))
    declared = protocols.get(assignment.campaign.protocol)
    phase = Assignment.objects.filter(pk=assignment.pk).values_list("phase", flat=True).first()
    if Phase.SCORING.value in declared.phases and phase != Phase.SCORING:
        raise Conflict("The score is asked once the spans are done.")
    old, new = item_score_write(assignment=assignment, value=value, ms=ms)
    if old != new:
        action_record(assignment=assignment, user=user, kind=WorkAction.Kind.SCORE,
                      payloads=[{"old": old, "new": new}], ms=ms)
    activity_record(assignment=assignment)
    return ItemScore.objects.get(pk=assignment.pk)
