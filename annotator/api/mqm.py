"""MQM's steps in the API: an error marked on the caller's item and an error removed (the MQM screen's twins)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from annotator.access import added_span_for_user, assignment_to_edit
from annotator.engine.telemetry import clamp_ms
from annotator.schemas import MqmErrorIn, MqmErrorOut
from annotator.services.mqm import mqm_error_create, mqm_error_delete
from corpus import protocols
from corpus.models import ErrorSpan
from corpus.protocols import mqm

router = Router(tags=["annotation"])


def mqm_error_out(span: ErrorSpan) -> MqmErrorOut:
    if span.in_source:
        start, end, side = span.source_start, span.source_end, protocols.SOURCE
    else:
        start, end, side = span.start, span.end, protocols.OUTPUT
    return MqmErrorOut(id=span.pk, start=start, end=end, side=side, text=span.text, category=span.category,
                       severity=mqm.severity_of_code(span.severity))


@router.post("/assignments/{assignment_id}/mqm-errors", response={201: MqmErrorOut},
             operation_id="create_mqm_error")
def create_mqm_error(request: HttpRequest, assignment_id: int, payload: MqmErrorIn):
    """Mark one error: offsets into the output, or into the source with side "source" (end exclusive), a category
    of the campaign's tree, a severity by name. 422 names the field (offsets, side, category, severity); 409 on
    another protocol's item, a finished item or a closed campaign."""
    assignment = assignment_to_edit(request.user, assignment_id)
    span = mqm_error_create(assignment=assignment, user=request.user, start=payload.start, end=payload.end,
                            side=payload.side, category=payload.category, severity=payload.severity,
                            note=payload.note, ms=clamp_ms(payload.ms))
    return Status(201, mqm_error_out(span))


@router.delete("/mqm-errors/{span_id}", response={204: None}, operation_id="delete_mqm_error")
def delete_mqm_error(request: HttpRequest, span_id: int):
    """Remove one of the caller's errors (undo brings it back)."""
    span, assignment = added_span_for_user(request.user, span_id)
    mqm_error_delete(span=span, assignment=assignment, user=request.user)
    return Status(204, None)
