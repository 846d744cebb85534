"""Undo and redo on the item screen: the annotator's own actions of every kind, reversed newest first.

Each `WorkAction` row carries both sides of its change, so reversing one never guesses: a judgment field
goes back to its old value, an added error is deleted or recreated from its snapshot, an edit is put back.
Undo never reopens a finished item silently: the result says so, and the screen tells the annotator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from annotator.access import check_can_work
from annotator.engine.phases import Phase
from annotator.models import AddedSource, Assignment, ComparisonUnit, JudgmentEvent, SpanJudgment, WorkAction
from annotator.protocols import hooks_for
from annotator.services.added_spans import added_span_create, added_span_delete, added_span_update
from annotator.services.item_scores import item_score_write
from annotator.services.judgments import OCCURRENCE, JudgmentError, from_text, judgment_set
from annotator.services.phases import assignments_move
from annotator.services.units import choice_write, unit_reopen, unit_unfinished
from corpus.models import ErrorSpan
from corpus.protocols import opennlgauge as protocol
from corpus.protocols import pairwise

_FIELD_NAMES: dict[str, str] = {
    **{g.field: g.name.lower() + " verdict" for g in protocol.GROUPS if g.field},
    **{t.value: f"flag “{t.label}”" for t in protocol.FLAGS},
    "comment": "comment", "corrected_severity": "severity correction", OCCURRENCE: "occurrence pick",
}


@dataclass(frozen=True)
class StepResult:
    """What an undo or redo did: the action, a sentence for the annotator, and whether a done item reopened."""

    action: WorkAction
    message: str
    reopened: bool
    span_id: int | None  # the machine span whose card changed (None for added errors)
    judgment: SpanJudgment | None


def _stack(assignment: Assignment, user: User):
    rows = WorkAction.objects.select_for_update().filter(assignment_id=assignment.pk, user_id=user.pk)
    if assignment.boundary_at is not None:
        # Undo and redo never reach back across the last closing phase move: the unprimed marks before the reveal,
        # ESA's spans once they are done (the score was given on them), are what they were.
        rows = rows.filter(at__gt=assignment.boundary_at)
    return rows


@transaction.atomic
def action_undo(*, assignment: Assignment, user: User) -> StepResult | None:
    """Reverse the user's newest action on this assignment that is not undone; None when there is none."""
    check_can_work(assignment, user)
    action = _stack(assignment, user).filter(undone=False).order_by("-id").first()
    if action is None:
        return None
    result = _apply(assignment, user, action, backwards=True)
    action.undone, action.undone_at = True, timezone.now()
    action.save(update_fields=["undone", "undone_at", "payload"])
    return result


@transaction.atomic
def action_redo(*, assignment: Assignment, user: User) -> StepResult | None:
    """Replay the most recently undone action, unless the user has done something new since."""
    check_can_work(assignment, user)
    action = _stack(assignment, user).filter(undone=True).order_by("-undone_at", "-id").first()
    if action is None or _stack(assignment, user).filter(undone=False, at__gt=action.undone_at).exists():
        return None  # nothing undone, or something new was done since: the undone branch is gone
    result = _apply(assignment, user, action, backwards=False)
    action.undone, action.undone_at = False, None
    action.save(update_fields=["undone", "undone_at", "payload"])
    return result


def _apply(assignment: Assignment, user: User, action: WorkAction, *, backwards: bool) -> StepResult:
    verb = "Undone" if backwards else "Redone"
    if action.kind == WorkAction.Kind.JUDGMENT:
        return _apply_judgment(assignment, user, action, backwards, verb)
    if action.kind == WorkAction.Kind.SCORE:
        return _apply_score(assignment, action, backwards, verb)
    if action.kind == WorkAction.Kind.PREFERENCE:
        return _apply_choice(action, backwards, verb)
    if "output" in action.payload:  # a span on another output of the screen whose first output keeps the stack
        output = Assignment.objects.select_related("campaign", "item").get(pk=action.payload["output"])
        return _apply_added(output, user, action, backwards, verb)
    return _apply_added(assignment, user, action, backwards, verb)


def _apply_judgment(assignment: Assignment, user: User, action: WorkAction, backwards: bool,
                    verb: str) -> StepResult:
    payload: dict[str, Any] = action.payload
    field, target = payload["field"], payload["old" if backwards else "new"]
    span = ErrorSpan.objects.filter(pk=payload["span"]).first()
    if span is None:
        raise JudgmentError("the error this change was about no longer exists")
    was_done = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.DONE).exists()
    # an occurrence pick on the stack was checked against the span's candidates when it was made
    judgment = judgment_set(assignment=assignment, span=span, user=user, changes={field: from_text(field, target)},
                            record=False, occurrence_checked=field == OCCURRENCE)
    if backwards:
        # Audit trail: the reverted change and its revert are both marked, so neither reads as a live choice.
        original = (JudgmentEvent.objects.filter(judgment=judgment, field=field, new_value=payload["new"],
                                                 undone=False).exclude(old_value=payload["new"])
                    .order_by("-id").first())
        revert = JudgmentEvent.objects.filter(judgment=judgment, field=field).order_by("-id").first()
        JudgmentEvent.objects.filter(pk__in=[e.pk for e in (original, revert) if e]).update(undone=True)
    reopened = False
    if was_done and not judgment.is_complete():
        phase = assignment.reopened_phase()
        reopened = bool(assignments_move(Assignment.objects.filter(pk=assignment.pk), Phase.DONE, phase))
        assignment.refresh_from_db(fields=["status", "finished_at", "phase"])
    message = f"{verb}: {_FIELD_NAMES.get(field, field)}."
    if reopened:
        message += " This item had been finished; it is open again until every error has both verdicts."
    return StepResult(action=action, message=message, reopened=reopened, span_id=span.pk, judgment=judgment)


def _apply_score(assignment: Assignment, action: WorkAction, backwards: bool, verb: str) -> StepResult:
    """Put the item's score back; an undo that takes the score of a finished item away reopens it."""
    target = action.payload["old" if backwards else "new"]
    item_score_write(assignment=assignment, value=target)
    reopened = False
    if target is None and Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.DONE).exists():
        phase = assignment.reopened_phase()
        reopened = bool(assignments_move(Assignment.objects.filter(pk=assignment.pk), Phase.DONE, phase))
        assignment.refresh_from_db(fields=["status", "finished_at", "phase"])
    message = f"{verb}: the score is {'not set' if target is None else target}."
    if reopened:
        message += " This item had been finished; it is open again until it has a score."
    return StepResult(action=action, message=message, reopened=reopened, span_id=None, judgment=None)


def _apply_choice(action: WorkAction, backwards: bool, verb: str) -> StepResult:
    """Put a comparison's choice and reason back; an undo that takes a finished screen's choice away reopens it."""
    unit = ComparisonUnit.objects.select_for_update().filter(pk=action.payload["unit"]).first()
    if unit is None:
        raise JudgmentError("the screen this change was about no longer exists")
    choice, reason = action.payload["old" if backwards else "new"]
    unit.choice, unit.reason = choice, reason
    # a finished screen that would lack what finishing needs opens again first (a finished screen has a choice)
    reopened = unit.finished_at is not None and unit_unfinished(unit) is not None and unit_reopen(unit)
    choice_write(unit, choice, reason, None)
    said = "not chosen" if choice is None else "a tie" if choice == pairwise.TIE else f"output {choice} is better"
    message = f"{verb}: {said}."
    if reopened:
        message += " This screen had been finished; it is open again until it has what finishing needs."
    return StepResult(action=action, message=message, reopened=reopened, span_id=None, judgment=None)


def _apply_added(assignment: Assignment, user: User, action: WorkAction, backwards: bool, verb: str) -> StepResult:
    payload: dict[str, Any] = action.payload
    target = payload["before" if backwards else "after"]
    current = _added_span(assignment, user, payload["span"])
    if target is None:
        if current is None:
            raise JudgmentError("the added error to remove is already gone")
        text = current.text
        added_span_delete(span=current, assignment=assignment, user=user, record=False)
        message = f"{verb}: removed the added error “{text[:60]}”."
    elif current is None:
        span = added_span_create(assignment=assignment, user=user, start=target["start"], end=target["end"],
                                 aspect=target["aspect"] or None, category=target["category"],
                                 severity=target["severity"], note=target["note"], side=target.get("side"),
                                 record=False)
        _renumber(assignment, user, old=payload["span"], new=span.pk, action=action)
        message = f"{verb}: the added error “{span.text[:60]}” is back."
    else:
        added_span_update(span=current, assignment=assignment, user=user, start=target["start"], end=target["end"],
                          category=target["category"], severity=target["severity"], note=target["note"],
                          record=False)
        message = f"{verb}: the edit of the added error “{current.text[:60]}”."
    return StepResult(action=action, message=message, reopened=False, span_id=None, judgment=None)


def _added_span(assignment: Assignment, user: User, pk: int) -> ErrorSpan | None:
    source = AddedSource.objects.filter(campaign_id=assignment.campaign_id, annotator=user).first()
    if source is None:
        return None
    return (ErrorSpan.objects.select_related("annotation")
            .filter(pk=pk, annotation__source_id=source.pk, annotation__item_id=assignment.item_id).first())


def _renumber(assignment: Assignment, user: User, *, old: int, new: int, action: WorkAction) -> None:
    """A recreated error has a new id: every action on the stack that named the old one names the new one."""
    action.payload["span"] = new
    hooks_for(assignment.campaign).span_renumbered(assignment, old, new)
    for other in WorkAction.objects.filter(assignment_id=action.assignment_id, user_id=user.pk,
                                           kind=WorkAction.Kind.ADDED).exclude(pk=action.pk):
        if other.payload.get("span") == old:
            other.payload["span"] = new
            other.save(update_fields=["payload"])
