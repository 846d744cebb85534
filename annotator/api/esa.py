"""ESA's steps in the API: the item's spans and score state, spans marked, re-graded, resized and deleted, missing
content, spans done, and the score (the ESA screen's twins; undo, finish and time are the shared operations)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from accounts.access import AccessError
from annotator.access import added_span_for_user, assignment_for_user, assignment_to_edit
from annotator.engine.telemetry import clamp_ms
from annotator.models import Assignment, EsaPrefill, EsaScore
from annotator.schemas import EsaDoneIn, EsaMissingIn, EsaScoreIn, EsaSpanIn, EsaSpanOut, EsaSpanPatchIn, EsaStateOut
from annotator.selectors.esa import esa_arm, esa_spans_closed
from annotator.selectors.spans import added_spans
from annotator.services.added_spans import KEEP
from annotator.services.esa import (
    esa_missing_add,
    esa_score_set,
    esa_span_add,
    esa_span_change,
    esa_span_delete,
    esa_spans_done,
)
from corpus import protocols
from corpus.models import ErrorSpan
from corpus.protocols import esa
from errors import BadRequest

router = Router(tags=["annotation"])


def esa_span_out(span: ErrorSpan, prefilled: bool) -> EsaSpanOut:
    return EsaSpanOut(id=span.pk, start=span.start, end=span.end, text=span.text,
                      severity=esa.severity_of_code(span.severity), missing=span.start is None, prefilled=prefilled)


def _prefilled(assignment: Assignment) -> set[int]:
    return set(EsaPrefill.objects.filter(assignment_id=assignment.pk).values_list("span_id", flat=True))


def esa_state_out(assignment: Assignment) -> EsaStateOut:
    state = EsaScore.objects.filter(assignment_id=assignment.pk).first()  # None before the first open
    prefilled = _prefilled(assignment)
    return EsaStateOut(
        assignment_id=assignment.pk, arm=esa_arm(assignment), prefilled=bool(state and state.prefilled),
        spans_done=esa_spans_closed(assignment) is not None, score=state.score if state else None,
        spans=[esa_span_out(s, s.pk in prefilled) for s in added_spans(assignment)])


@router.get("/assignments/{assignment_id}/esa", response=EsaStateOut, operation_id="retrieve_esa_state")
def retrieve_esa_state(request: HttpRequest, assignment_id: int):
    """The item's spans (pre-filled ones marked), whether they are done, and the score; open the item first
    (POST /assignments/ID/open) so that an ESA^AI item is pre-filled. 404 for an item of another protocol: it has
    no ESA state."""
    assignment = assignment_for_user(request.user, assignment_id)
    if not protocols.step_applies(assignment.campaign.protocol, protocols.ESA):
        raise AccessError.not_found(f"Item {assignment.order} is not judged under ESA: it has no ESA state.")
    return esa_state_out(assignment)


@router.post("/assignments/{assignment_id}/esa-spans", response={201: EsaSpanOut}, operation_id="create_esa_span")
def create_esa_span(request: HttpRequest, assignment_id: int, payload: EsaSpanIn):
    """Mark one error span (offsets into the output, end exclusive) as minor or major; 409 once the spans are
    done; 422 names the field."""
    assignment = assignment_to_edit(request.user, assignment_id)
    span = esa_span_add(assignment=assignment, user=request.user, start=payload.start, end=payload.end,
                        severity=payload.severity, ms=clamp_ms(payload.ms))
    return Status(201, esa_span_out(span, False))


@router.post("/assignments/{assignment_id}/esa-missing", response={201: EsaSpanOut},
             operation_id="create_esa_missing")
def create_esa_missing(request: HttpRequest, assignment_id: int, payload: EsaMissingIn):
    """Mark content missing at the end of the output (one per item: 409 for a second)."""
    assignment = assignment_to_edit(request.user, assignment_id)
    span = esa_missing_add(assignment=assignment, user=request.user, severity=payload.severity,
                           ms=clamp_ms(payload.ms))
    return Status(201, esa_span_out(span, False))


@router.patch("/esa-spans/{span_id}", response=EsaSpanOut, operation_id="update_esa_span")
def update_esa_span(request: HttpRequest, span_id: int, payload: EsaSpanPatchIn):
    """Re-grade (severity) and/or resize (start and end together) one of the caller's spans, a pre-filled one
    included."""
    span, assignment = added_span_for_user(request.user, span_id)
    fields = payload.dict(exclude_unset=True)
    resize = "start" in fields or "end" in fields
    if resize and not ("start" in fields and "end" in fields):
        raise BadRequest("a resize sends both start and end", field=("start", "end"))
    changed = esa_span_change(span=span, assignment=assignment, user=request.user,
                              severity=fields.get("severity", KEEP), start=fields["start"] if resize else KEEP,
                              end=fields["end"] if resize else KEEP, ms=clamp_ms(fields.get("ms")))
    return esa_span_out(changed, changed.pk in _prefilled(assignment))


@router.delete("/esa-spans/{span_id}", response={204: None}, operation_id="delete_esa_span")
def delete_esa_span(request: HttpRequest, span_id: int, ms: float | None = None):
    span, assignment = added_span_for_user(request.user, span_id)
    esa_span_delete(span=span, assignment=assignment, user=request.user, ms=clamp_ms(ms))
    return Status(204, None)


@router.post("/assignments/{assignment_id}/esa-done", response=EsaStateOut, operation_id="create_esa_spans_done")
def create_esa_spans_done(request: HttpRequest, assignment_id: int, payload: EsaDoneIn | None = None):
    """Say the spans are done (the screen's d): they are fixed from now on and the score opens; 409 a second time.
    On a control-arm item this also ends its marking phase."""
    assignment = assignment_to_edit(request.user, assignment_id)
    esa_spans_done(assignment=assignment, user=request.user, ms=clamp_ms(payload.ms if payload else None),
                   seconds=payload.seconds if payload else 0)
    assignment.refresh_from_db()
    return esa_state_out(assignment)


@router.put("/assignments/{assignment_id}/esa-score", response=EsaStateOut, operation_id="update_esa_score")
def update_esa_score(request: HttpRequest, assignment_id: int, payload: EsaScoreIn):
    """Set the 0-100 score; 409 before the spans are done or once the item is finished, 422 out of range."""
    assignment = assignment_to_edit(request.user, assignment_id)
    esa_score_set(assignment=assignment, user=request.user, score=payload.score, ms=clamp_ms(payload.ms))
    return esa_state_out(assignment)
