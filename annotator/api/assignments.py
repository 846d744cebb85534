"""Annotation work in the API: the caller's assignments, one item with its errors, reveal, finish, time and settings
(the twins of the annotation screen)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status
from ninja.pagination import paginate

from accounts.access import AccessError
from accounts.services.settings import user_set_auto_advance
from annotator import checks
from annotator.access import assignment_for_user, assignment_to_edit
from annotator.engine.phases import shows_machine_spans
from annotator.models import Assignment, SpanJudgment
from annotator.schemas import (
    AddedSpanOut,
    AssignmentDetailOut,
    AssignmentOut,
    ErrorOut,
    FinishIn,
    JudgmentOut,
    OccurrenceOut,
    SettingsIn,
    SettingsOut,
    TimeIn,
    WorkItemOut,
)
from annotator.selectors.spans import ErrorRow, added_spans, item_errors, span_handle
from annotator.services.assignments import assignment_add_time, assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.occurrences import span_occurrences
from annotator.services.opening import item_open
from corpus.models import ErrorSpan

router = Router(tags=["annotation"])


def judgment_out(judgment: SpanJudgment | None) -> JudgmentOut | None:
    if judgment is None:
        return None
    return JudgmentOut(
        span_id=span_handle(judgment.assignment_id, judgment.span_id), span_verdict=judgment.span_verdict,
        explanation_verdict=judgment.explanation_verdict, flags=judgment.flags(), comment=judgment.comment,
        corrected_severity=judgment.corrected_severity, complete=judgment.is_complete(), version=judgment.version,
        picked=judgment.is_picked(), picked_start=judgment.picked_start, picked_end=judgment.picked_end,
    )


def error_out(row: ErrorRow, output: str) -> ErrorOut:
    """One card: an ambiguous span lists its candidates; once picked, start/end are the pick (machine's kept)."""
    span, judgment = row.span, row.judgment
    picked = judgment is not None and judgment.is_picked()
    start, end = judgment.offsets((span.start, span.end)) if judgment is not None else (span.start, span.end)
    return ErrorOut(
        span_id=row.handle, number=row.number, label=row.label, text=span.text, start=start, end=end,
        match=span.match, ambiguous=span.ambiguous, explanation=span.explanation, severity=span.severity,
        category=span.category, judgment=judgment_out(judgment),
        occurrences=[OccurrenceOut(start=o.start, end=o.end) for o in span_occurrences(span, output)],
        picked=picked, machine_start=span.start, machine_end=span.end,
    )


def assignment_out(a: Assignment) -> AssignmentOut:
    return AssignmentOut(id=a.pk, campaign_id=a.campaign_id, campaign=a.campaign.name, order=a.order,
                         status=a.status, seconds_spent=a.seconds_spent, active_seconds=round(a.active_seconds, 1),
                         wall_seconds=round(a.wall_seconds, 1))


def added_span_out(span: ErrorSpan) -> AddedSpanOut:
    return AddedSpanOut(id=span.pk, start=span.start, end=span.end, text=span.text, aspect=span.annotation.aspect,
                        category=span.category, severity=span.severity, note=span.explanation)


@router.get("/assignments", response=list[AssignmentOut], operation_id="list_assignments")
@paginate
def list_assignments(request: HttpRequest, campaign_id: int | None = None, status: str | None = None):
    """The caller's own assignments in their order (researchers too: this is a work list, not an overview)."""
    rows = Assignment.objects.filter(annotator=request.user).select_related("campaign")
    if campaign_id is not None:
        rows = rows.filter(campaign_id=campaign_id)
    if status:
        rows = rows.filter(status=status)
    return [assignment_out(a) for a in rows.order_by("campaign_id", "order")]


@router.get("/assignments/{assignment_id}", response=AssignmentDetailOut, operation_id="retrieve_assignment")
def retrieve_assignment(request: HttpRequest, assignment_id: int):
    """The item (inputs and output), its machine errors under neutral labels with the assignee's judgments,
    and the errors the assignee added."""
    assignment = assignment_for_user(request.user, assignment_id)
    rows, _ = item_errors(assignment)
    item = assignment.item
    errors = [error_out(r, item.output) for r in rows]
    marking = not shows_machine_spans(assignment.phase)  # no machine span, and no count of them either
    return AssignmentDetailOut(
        **assignment_out(assignment).dict(), phase=assignment.phase, aspects=list(assignment.campaign.aspects or []),
        item=WorkItemOut(inputs={k: str(v) for k, v in item.inputs.items()}, output=item.output),
        errors=errors, added_spans=[added_span_out(s) for s in added_spans(assignment)],
        n_complete=None if marking else sum(r.is_complete for r in rows), n_total=None if marking else len(rows),
    )


@router.post("/assignments/{assignment_id}/open", response=AssignmentDetailOut, operation_id="open_assignment")
def open_assignment(request: HttpRequest, assignment_id: int):
    """Open the item as its screen does: the first opening pre-fills an MQM or ESA^AI item with the machine's spans,
    and each opening starts a new active-time clock. 403 while the campaign's training is not passed."""
    assignment = assignment_to_edit(request.user, assignment_id)
    if (gate := checks.installed().gate(assignment)) is not None:
        raise AccessError.forbidden(gate)
    item_open(assignment=assignment, user=request.user)
    return retrieve_assignment(request, assignment_id)


@router.post("/assignments/{assignment_id}/reveal", response=AssignmentDetailOut, operation_id="reveal_assignment")
def reveal_assignment(request: HttpRequest, assignment_id: int, payload: FinishIn | None = None):
    """End the marking phase of a control-arm output (the screen's Done marking): the errors marked so far
    stay fixed, and the machine errors appear. 409 once marking has ended; 404 on an output not in the arm."""
    assignment = assignment_to_edit(request.user, assignment_id)
    assignment_reveal(assignment=assignment, user=request.user, seconds=payload.seconds if payload else 0)
    return retrieve_assignment(request, assignment_id)


@router.post("/assignments/{assignment_id}/finish", response=AssignmentOut, operation_id="finish_assignment")
def finish_assignment(request: HttpRequest, assignment_id: int, payload: FinishIn | None = None):
    """Mark the item done; 422 while a machine error lacks a span or an explanation verdict."""
    assignment = assignment_to_edit(request.user, assignment_id)
    done = assignment_finish(assignment=assignment, user=request.user, seconds=payload.seconds if payload else 0)
    return assignment_out(done)


@router.post("/assignments/{assignment_id}/time", response={204: None}, operation_id="add_assignment_time")
def add_assignment_time(request: HttpRequest, assignment_id: int, payload: TimeIn):
    """Report active working seconds on an item (the screen's timer); 409 once the campaign is closed."""
    assignment = assignment_to_edit(request.user, assignment_id)
    assignment_add_time(assignment=assignment, user=request.user, seconds=payload.seconds)
    return Status(204, None)


@router.patch("/me/settings", response=SettingsOut, operation_id="update_settings")
def update_settings(request: HttpRequest, payload: SettingsIn):
    """The twin of the item screen's auto-advance switch."""
    if payload.auto_advance is not None:
        user_set_auto_advance(user=request.user, on=payload.auto_advance)
    return SettingsOut(auto_advance=request.user.auto_advance)
