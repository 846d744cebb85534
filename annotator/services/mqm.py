"""MQM's steps on one item: an error marked (a span of the output, a category of the campaign's tree, a severity by
name) and an error removed. The screen and the API both take them here, so both refuse the same way."""

from __future__ import annotations

from accounts.models import User
from annotator.access import check_protocol
from annotator.models import Assignment
from annotator.services.added_spans import AddedSpanError, added_span_create, added_span_delete
from corpus import protocols
from corpus.models import ErrorSpan
from corpus.protocols import mqm


def mqm_error_create(*, assignment: Assignment, user: User, start: object, end: object, category: object,
                  severity: object, note: object = "", side: object = None, ms: int | None = None) -> ErrorSpan:
    """Store one error; offsets are code points into the output, or into the source when `side` is SOURCE (an
    omission), end exclusive; the severity a name of corpus.protocols.mqm.SEVERITIES. A refusal is an
    AddedSpanError naming its field."""
    check_protocol(assignment, protocols.MQM)
    name = mqm.severity_value("" if severity is None else str(severity))
    if name not in mqm.SEVERITY_CODES:
        raise AddedSpanError(f"severity must be one of {', '.join(mqm.SEVERITY_VALUES)}", field="severity")
    return added_span_create(assignment=assignment, user=user, start=start, end=end, category=category,
                             severity=mqm.SEVERITY_CODES[name], note=note, side=side, ms=ms)


def mqm_error_delete(*, span: ErrorSpan, assignment: Assignment, user: User) -> None:
    check_protocol(assignment, protocols.MQM)
    added_span_delete(span=span, assignment=assignment, user=user)
