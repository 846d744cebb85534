"""Record what an annotator did on an assignment, so that undo and redo can reverse and replay it."""

from __future__ import annotations

from typing import Any

from accounts.models import User
from annotator.models import Assignment, WorkAction


def action_record(*, assignment: Assignment, user: User, kind: str, payloads: list[dict[str, Any]]) -> None:
    """Push actions on the user's stack for this assignment (one insert: it is on the verdict-save path).

    A new action ends what could be redone; undo.action_redo sees that from the timestamps."""
    if not payloads:
        return
    WorkAction.objects.bulk_create(
        WorkAction(assignment_id=assignment.pk, user_id=user.pk, kind=kind, payload=p) for p in payloads
    )
