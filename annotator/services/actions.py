"""Record what an annotator did on an assignment, so that undo and redo can reverse and replay it."""

from __future__ import annotations

from typing import Any

from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from annotator.engine.telemetry import active_increment
from annotator.models import Assignment, WorkAction


def action_record(
    *, assignment: Assignment, user: User, kind: str, payloads: list[dict[str, Any]], ms: int | None = None
) -> None:
    """Push actions on the user's stack for this assignment (one insert: it is on the verdict-save path), with
    the milliseconds since focus the page measured.

    A new action ends what could be redone; undo.action_redo sees that from the timestamps."""
    if not payloads:
        return
    WorkAction.objects.bulk_create(
        WorkAction(assignment_id=assignment.pk, user_id=user.pk, kind=kind, payload=p, ms=ms) for p in payloads
    )


def activity_record(*, assignment: Assignment, opening: bool = False) -> None:
    """Count a signal of the annotator on this item toward its active time (annotator.selectors.worktime): the
    time since their previous signal, capped at 60 s (Pearmut's rule). Opening the item starts a new clock and
    adds nothing (the time before it is not work on this item); the first signal also starts the wall clock."""
    now = timezone.now()
    last = assignment.__dict__.get("last_active_at")
    if "last_active_at" not in assignment.__dict__:
        last = Assignment.objects.filter(pk=assignment.pk).values_list("last_active_at", flat=True).first()
    gap = (now - last).total_seconds() if last and not opening else None
    Assignment.objects.filter(pk=assignment.pk).update(
        active_seconds=F("active_seconds") + active_increment(gap), last_active_at=now,
        started_at=Coalesce("started_at", Value(now)),
    )
    assignment.last_active_at = now
    if "started_at" in assignment.__dict__:
        assignment.started_at = assignment.started_at or now
