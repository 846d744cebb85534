"""The control arm's one workflow step: end the marking of an unprimed output and reveal its machine spans."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from accounts.access import AccessError
from accounts.models import User
from annotator.access import check_can_work
from annotator.engine.phases import Phase
from annotator.models import Assignment, MarkingTime, UnprimedMark
from annotator.selectors.spans import added_spans
from annotator.services.actions import activity_record
from annotator.services.assignments import MAX_SECONDS_PER_PING
from annotator.services.phases import assignment_move

NOT_IN_ARM = "This output is not in the control arm: its machine errors are shown from the start."
ALREADY_REVEALED = "Marking has already ended on this output: its machine errors are shown."


def work_seconds(assignment: Assignment) -> int:
    """The working time the priming figures compare between the arms: the assignment's active time
    (annotator.selectors.worktime), whole seconds. The item screen's heartbeat is one of its signals, so the long
    first read of an unprimed output counts while the page is in use."""
    return round(assignment.active_seconds)


@transaction.atomic
def assignment_reveal(*, assignment: Assignment, user: User, seconds: int = 0) -> Assignment:
    """End marking: the expert's marks so far become their unprimed marks (fixed from now on), the time taken
    is kept as the unprimed arm's, and the assignment moves to judging.

    404 (AccessError) for an output not in the control arm, so nothing is said about other outputs; 409 once
    marking has ended."""
    check_can_work(assignment, user)
    locked = Assignment.objects.select_for_update(of=("self",)).select_related("campaign", "item").get(pk=assignment.pk)
    if not locked.in_control_arm:
        raise AccessError.not_found(NOT_IN_ARM)
    if locked.phase != Phase.MARKING:
        raise AccessError.conflict(ALREADY_REVEALED)
    now = timezone.now()
    locked.seconds_spent += max(0, min(int(seconds), MAX_SECONDS_PER_PING))
    locked.started_at = locked.started_at or now
    locked.save(update_fields=["seconds_spent", "started_at"])
    fields = ["seconds_spent", "started_at", *assignment_move(locked, Phase.JUDGING, now=now)]
    UnprimedMark.objects.bulk_create(UnprimedMark(assignment=locked, span=span) for span in added_spans(locked))
    activity_record(assignment=locked)  # the reveal is a signal: the marking time runs up to it
    locked.refresh_from_db(fields=["active_seconds"])
    MarkingTime.objects.create(assignment=locked, seconds=work_seconds(locked))
    for field in fields:
        setattr(assignment, field, getattr(locked, field))
    return locked
