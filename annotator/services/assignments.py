"""Assignment workflow: count working time, finish an item once every machine error has both verdicts."""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from annotator import checks
from annotator.access import check_can_work
from annotator.engine.phases import Phase
from annotator.models import Assignment
from annotator.protocols import hooks_for
from annotator.selectors.spans import error_rows
from annotator.services.actions import activity_record
from annotator.services.phases import assignment_move
from annotator.services.routing import top_up_when_ready
from errors import UserError

MAX_SECONDS_PER_PING = 300


class AssignmentError(UserError):
    """The assignment cannot change this way (incomplete, closed, someone else's)."""


def assignment_add_time(*, assignment: Assignment, user: User, seconds: int) -> None:
    """The item screen's heartbeat: a signal toward the item's active time (annotator.selectors.worktime), sent
    while the page is visible and in use. The seconds the page counted are kept as reported (capped per report,
    so a forgotten tab cannot count hours) but measure nothing the study reports; the first heartbeat also marks
    the item as started."""
    check_can_work(assignment, user)
    seconds = max(0, min(int(seconds), MAX_SECONDS_PER_PING))
    updates: dict[str, object] = {"seconds_spent": F("seconds_spent") + seconds}
    if assignment.status == Assignment.Status.TODO:
        updates.update(status=Assignment.Status.IN_PROGRESS)
    Assignment.objects.filter(pk=assignment.pk).update(**updates)
    activity_record(assignment=assignment)


@transaction.atomic
def assignment_finish(*, assignment: Assignment, user: User, seconds: int = 0) -> Assignment:
    """Mark the item done; raise AssignmentError naming how many errors still lack a verdict."""
    check_can_work(assignment, user)
    locked = Assignment.objects.select_for_update(of=("self",)).select_related("campaign", "item").get(pk=assignment.pk)
    rows = error_rows(locked)
    missing = [row.number or i for i, row in enumerate(rows, start=1) if not row.is_complete]
    if missing:
        raise AssignmentError(
            f"{len(missing)} of {len(rows)} errors still need both a span and an explanation verdict"
        )
    if (needs := hooks_for(locked.campaign).unfinished(locked)) is not None:  # e.g. a score still to give
        raise AssignmentError(needs)
    now = timezone.now()
    if locked.phase == Phase.MARKING:
        raise AssignmentError("the machine's errors have not been shown yet: press Done marking first")
    locked.started_at = locked.started_at or now
    locked.seconds_spent += max(0, min(int(seconds), MAX_SECONDS_PER_PING))
    locked.save(update_fields=["started_at", "seconds_spent"])
    fields = ["started_at", "seconds_spent", *assignment_move(locked, Phase.DONE, now=now)]
    for field in fields:
        setattr(assignment, field, getattr(locked, field))
    activity_record(assignment=locked)
    checks.installed().item_finished(locked)
    if locked.campaign.is_sampled:  # an active routed campaign draws its next batch once its labels are in
        transaction.on_commit(partial(top_up_when_ready, campaign_id=locked.campaign_id))
    return locked


@transaction.atomic
def assignment_open(*, assignment: Assignment, user: User) -> bool:
    """Claim the item's first open and run its protocol's first-open hook (pre-fill); return whether this call
    claimed it. A conditional update decides: of two opens at once one claims and the other waits for its
    commit, so pre-fill runs once."""
    claimed = Assignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(opened_at=timezone.now()) == 1
    if claimed:
        hooks_for(assignment.campaign).first_open(assignment, user)
    return claimed
