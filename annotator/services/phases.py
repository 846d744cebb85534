"""The one writer of an assignment's phase and of the fields that follow from it.

Every move goes through `assignment_move` (one row, locked by the caller) or `assignments_move` (a conditional
update of many): they check the move against the phase model (annotator.engine.phases.TRANSITIONS) and write
the phase together with what it implies - the status that says "finished", the finishing time, the moment a
control-arm output was revealed, the moment of the last closing move (undo's boundary). A move into a phase the
campaign's protocol does not declare (corpus.protocols: ESA's scoring) is refused. The database keeps the rest
consistent (constraints on Assignment), so a phase and a status that disagree cannot be stored.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from annotator.engine.phases import Phase, can_move, closes
from annotator.models import Assignment
from corpus import protocols
from errors import Conflict


class PhaseError(Conflict):
    """A move the phase model does not allow (409): the item is not where the move starts."""


def move_fields(current: Phase | str, target: Phase | str, now: datetime) -> dict[str, object]:
    """The fields a move writes; PhaseError for a move the phase model does not allow."""
    current, target = Phase(current), Phase(target)
    if not can_move(current, target):
        raise PhaseError(f"an item in the {current.value} phase cannot move to {target.value}")
    fields: dict[str, object]
    if target is Phase.DONE:
        fields = {"phase": target.value, "status": Assignment.Status.DONE, "finished_at": now}
    elif current is Phase.MARKING:  # the reveal: the machine's spans appear
        fields = {"phase": target.value, "status": Assignment.Status.IN_PROGRESS, "revealed_at": now}
    else:
        fields = {"phase": target.value, "status": Assignment.Status.IN_PROGRESS, "finished_at": None}  # reopened
    if closes(current, target):
        fields["boundary_at"] = now
    return fields


def assignment_move(assignment: Assignment, target: Phase, *, now: datetime | None = None) -> list[str]:
    """Move one assignment (a row the caller has locked) and save the moved fields; return their names."""
    declared = protocols.get(assignment.campaign.protocol)
    if not declared.allows_phase(Phase(target).value):
        raise PhaseError(f"an item of the {declared.name} protocol has no {Phase(target).value} phase")
    fields = move_fields(assignment.phase, target, now or timezone.now())
    for name, value in fields.items():
        setattr(assignment, name, value)
    assignment.save(update_fields=list(fields))
    return list(fields)


def assignments_move(assignments: QuerySet[Assignment], current: Phase, target: Phase) -> int:
    """Move every assignment of `assignments` that is in `current` (a conditional update: a concurrent move
    of the same row happens once); return how many moved."""
    fields = move_fields(current, target, timezone.now())
    return assignments.filter(phase=Phase(current).value).update(**fields)
