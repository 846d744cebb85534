"""Judgments in the API: verdicts on machine errors, errors the annotator added, undo and redo of both."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from annotator.access import added_span_for_user, assignment_to_edit
from annotator.api.assignments import added_span_out, judgment_out
from annotator.engine.telemetry import clamp_ms
from annotator.schemas import (
    AddedSpanIn,
    AddedSpanOut,
    AddedSpanPatchIn,
    JudgmentFieldsIn,
    JudgmentIn,
    JudgmentOut,
    OccurrenceIn,
    UndoOut,
)
from annotator.selectors.spans import judged_span_by_handle
from annotator.services.added_spans import added_span_create, added_span_delete, added_span_update
from annotator.services.judgments import judgment_set
from annotator.services.occurrences import occurrence_pick
from annotator.services.undo import StepResult, action_redo, action_undo
from errors import UserError

router = Router(tags=["annotation"])


def _set_fields(request: HttpRequest, assignment_id: int, span_id: int, changes: dict) -> JudgmentOut:
    assignment = assignment_to_edit(request.user, assignment_id)
    span, _ = judged_span_by_handle(assignment, span_id)
    expected = changes.pop("version", None)
    ms = clamp_ms(changes.pop("ms", None))
    if not changes:
        raise UserError("give at least one field to set")
    # a refusal is a UserError: 409 for a stale version (StaleJudgment), 422 for a bad value (config.api)
    judgment = judgment_set(assignment=assignment, span=span, user=request.user, changes=changes,
                            expected_version=expected, ms=ms)
    return judgment_out(judgment)


@router.post("/assignments/{assignment_id}/judgments", response=JudgmentOut, operation_id="create_judgment")
def create_judgment(request: HttpRequest, assignment_id: int, payload: JudgmentIn):
    """Set verdicts, flags, comment or severity of one machine error (creates the judgment on first use)."""
    changes = payload.dict(exclude_unset=True)
    changes.pop("span_id")
    return _set_fields(request, assignment_id, payload.span_id, changes)


@router.patch("/assignments/{assignment_id}/judgments/{span_id}", response=JudgmentOut,
              operation_id="update_judgment")
def update_judgment(request: HttpRequest, assignment_id: int, span_id: int, payload: JudgmentFieldsIn):
    return _set_fields(request, assignment_id, span_id, payload.dict(exclude_unset=True))


@router.patch("/assignments/{assignment_id}/judgments/{span_id}/occurrence", response=JudgmentOut,
              operation_id="update_judgment_occurrence")
def update_judgment_occurrence(request: HttpRequest, assignment_id: int, span_id: int, payload: OccurrenceIn):
    """Pick which occurrence of an ambiguous error's location is meant: {"index": k} into the card's
    `occurrences`, {"none": true} (not in the output) or {"reset": true} (the machine's offsets again)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    span, _ = judged_span_by_handle(assignment, span_id)
    judgment = occurrence_pick(assignment=assignment, span=span, user=request.user, index=payload.index,
                               none=payload.none, reset=payload.reset, expected_version=payload.version,
                               ms=clamp_ms(payload.ms))
    return judgment_out(judgment)


def _step_out(result: StepResult | None) -> UndoOut:
    if result is None:
        return UndoOut(undone=False)
    field = result.action.payload.get("field", "added_span")
    judgment = judgment_out(result.judgment) if result.judgment is not None else None
    return UndoOut(undone=True, field=field, judgment=judgment, message=result.message, reopened=result.reopened)


@router.post("/assignments/{assignment_id}/undo", response=UndoOut, operation_id="undo_judgment")
def undo_judgment(request: HttpRequest, assignment_id: int):
    """Reverse the caller's newest action on this assignment of any kind (like pressing u on the screen)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    return _step_out(action_undo(assignment=assignment, user=request.user))


@router.post("/assignments/{assignment_id}/redo", response=UndoOut, operation_id="redo_judgment")
def redo_judgment(request: HttpRequest, assignment_id: int):
    """Replay the caller's most recently undone action (like Shift+U on the screen)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    return _step_out(action_redo(assignment=assignment, user=request.user))


@router.post("/assignments/{assignment_id}/added-spans", response={201: AddedSpanOut},
             operation_id="create_added_span")
def create_added_span(request: HttpRequest, assignment_id: int, payload: AddedSpanIn):
    """Add a missed error by character offsets into the output (end exclusive); the text is taken from them."""
    assignment = assignment_to_edit(request.user, assignment_id)
    fields = payload.dict()
    ms = clamp_ms(fields.pop("ms", None))
    span = added_span_create(assignment=assignment, user=request.user, **fields, ms=ms)
    return Status(201, added_span_out(span))


@router.patch("/added-spans/{span_id}", response=AddedSpanOut, operation_id="update_added_span")
def update_added_span(request: HttpRequest, span_id: int, payload: AddedSpanPatchIn):
    span, assignment = added_span_for_user(request.user, span_id)
    fields = payload.dict(exclude_unset=True)
    ms = clamp_ms(fields.pop("ms", None))
    added_span_update(span=span, assignment=assignment, user=request.user, **fields, ms=ms)
    return added_span_out(span)


@router.delete("/added-spans/{span_id}", response={204: None}, operation_id="delete_added_span")
def delete_added_span(request: HttpRequest, span_id: int):
    span, assignment = added_span_for_user(request.user, span_id)
    added_span_delete(span=span, assignment=assignment, user=request.user)
    return Status(204, None)
