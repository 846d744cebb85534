"""Set verdicts, flags, comments and severity corrections on machine spans, with an audit trail and undo."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from annotator.access import check_can_work, check_item_open
from annotator.models import FLAG_FIELDS, Assignment, JudgmentEvent, SpanJudgment, WorkAction
from annotator.services.actions import action_record, activity_record
from corpus import cleaning
from corpus.models import ErrorSpan
from corpus.protocols import opennlgauge as protocol
from errors import Conflict, UserError

CHOICE_FIELDS: dict[str, frozenset[str]] = {
    "span_verdict": frozenset(protocol.SPAN_VERDICT_VALUES),
    "explanation_verdict": frozenset(protocol.EXPLANATION_VERDICT_VALUES),
}
JUDGMENT_FIELDS = protocol.JUDGMENT_FIELDS
MAX_COMMENT = 4000
OCCURRENCE = "occurrence"
"""The pick among an ambiguous span's occurrences: a judgment field only services.occurrences and undo write,
since only they check it against the span's candidates. Stored in three columns (SpanJudgment.occurrence)."""
_COLUMNS: dict[str, list[str]] = {OCCURRENCE: ["picked_start", "picked_end", "picked_none"]}


class JudgmentError(UserError):
    """A judgment change that cannot be stored: unknown field, bad value, closed campaign, not your work."""


class StaleJudgment(Conflict, JudgmentError):
    """The change was typed against an older version of the judgment (another tab, an undo in between)."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(
            f"Not saved: this error changed since you typed (version {current}, you typed against {expected}). "
            "The card now shows the stored state; press the key again if it still applies.", field="version",
        )
        self.expected = expected
        self.current = current


def _coerce(field: str, value: object, *, occurrence_checked: bool = False) -> object:
    if field == OCCURRENCE and occurrence_checked:
        return "" if value is None else str(value)
    if field in CHOICE_FIELDS:
        text = "" if value is None else str(value)
        if text and text not in CHOICE_FIELDS[field]:
            raise JudgmentError(f"{field}: {text!r} is not one of {', '.join(sorted(CHOICE_FIELDS[field]))}",
                                field=field)
        return text
    if field in FLAG_FIELDS:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in {"1", "true", "on", "yes"}:
            return True
        if text in {"0", "false", "off", "no", ""}:
            return False
        raise JudgmentError(f"{field}: {value!r} is not a yes/no value", field=field)
    if field == "comment":
        text = "" if value is None else str(value)
        return cleaning.check_field(text, "comment", max_length=MAX_COMMENT, error=JudgmentError)
    if field == "corrected_severity":
        if value in (None, ""):
            return None
        try:
            number = int(str(value))
        except ValueError:
            raise JudgmentError(f"corrected_severity: {value!r} is not a number", field="corrected_severity") from None
        if number not in protocol.SEVERITIES:
            raise JudgmentError(f"corrected_severity: must be {min(protocol.SEVERITIES)} to {max(protocol.SEVERITIES)}",
                                field="corrected_severity")
        return number
    raise JudgmentError(f"unknown field {field!r}; fields are {', '.join(JUDGMENT_FIELDS)}", field="field")


def _as_text(value: object) -> str:
    """How a value is written in the audit trail: '' for blank/None, 'true'/'false' for flags."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def from_text(field: str, text: str) -> object:
    """The inverse of the audit trail's text form: what a field held, as the model stores it."""
    if field in FLAG_FIELDS:
        return text == "true"
    if field == "corrected_severity":
        return int(text) if text else None
    return text


def _is_replay(judgment: SpanJudgment | None, clean: Mapping[str, object], expected_version: int) -> bool:
    """True when this save was already applied: the stored version is the one it made and holds its values.

    A client whose answer was lost (a web host restarted, a proxy retried) sends the same save again; refusing it as
    stale would show a conflict with itself. A different value typed against the old version is still refused."""
    return (judgment is not None and judgment.version == expected_version + 1
            and all(getattr(judgment, field) == value for field, value in clean.items()))


@transaction.atomic
def judgment_set(
    *, assignment: Assignment, span: ErrorSpan, user: User, changes: Mapping[str, object], record: bool = True,
    expected_version: int | None = None, ms: int | None = None, occurrence_checked: bool = False,
) -> SpanJudgment:
    """Apply `changes` (field -> value) to the user's judgment of `span`, creating it on first use.

    Writes one audit event per field whose value really changed, and (unless `record` is off, as when undo
    itself applies a change) one action on the undo stack. Every real change bumps the judgment's version; with
    `expected_version` the change is refused (StaleJudgment) unless the stored version is that one. The caller
    has checked that `span` is judged on `assignment` (selectors.judged_span_by_handle); `occurrence_checked`
    says it has also checked an "occurrence" change against the span's candidates."""
    check_can_work(assignment, user)
    if record:
        check_item_open(assignment, "verdicts")
    clean = {field: _coerce(field, value, occurrence_checked=occurrence_checked) for field, value in changes.items()}
    judgment = SpanJudgment.objects.select_for_update().filter(assignment_id=assignment.pk, span_id=span.pk).first()
    current = judgment.version if judgment is not None else 0
    if expected_version is not None and expected_version != current:
        if _is_replay(judgment, clean, expected_version):
            return judgment
        raise StaleJudgment(expected_version, current)
    events: list[JudgmentEvent] = []
    if judgment is None:
        judgment = SpanJudgment(span_id=span.pk, annotator_id=user.pk, assignment_id=assignment.pk)
        olds = {field: getattr(judgment, field) for field in clean}
        for field, value in clean.items():
            setattr(judgment, field, value)
        judgment.version = 1
        try:
            with transaction.atomic():
                judgment.save(force_insert=True)
        except IntegrityError:
            # Another request created it a moment ago (double click): apply the change to that row instead.
            return judgment_set(assignment=assignment, span=span, user=user, changes=changes, record=record,
                                expected_version=expected_version, ms=ms, occurrence_checked=occurrence_checked)
        changed = [field for field, value in clean.items() if value != olds[field]]
    else:
        olds = {field: getattr(judgment, field) for field in clean}
        changed = [field for field, value in clean.items() if value != olds[field]]
        for field in changed:
            setattr(judgment, field, clean[field])
        # Every accepted save counts, even one that changes nothing: the page numbers its queued keys from it.
        judgment.version += 1
        columns = [column for field in changed for column in _COLUMNS.get(field, [field])]
        judgment.save(update_fields=[*columns, "version", "updated_at"])
    events = [
        JudgmentEvent(judgment=judgment, user_id=user.pk, field=field, old_value=_as_text(olds[field]),
                      new_value=_as_text(clean[field]), ms=ms)
        for field in changed
    ]
    if events:
        JudgmentEvent.objects.bulk_create(events)
    if record:
        action_record(assignment=assignment, user=user, kind=WorkAction.Kind.JUDGMENT, payloads=[
            {"span": span.pk, "field": e.field, "old": e.old_value, "new": e.new_value} for e in events
        ], ms=ms)
        activity_record(assignment=assignment)
    if assignment.status == Assignment.Status.TODO:
        _mark_started(assignment)
    return judgment


def _mark_started(assignment: Assignment) -> None:
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.TODO).update(
        status=Assignment.Status.IN_PROGRESS, started_at=Coalesce("started_at", Value(now))
    )
    assignment.status = Assignment.Status.IN_PROGRESS
    assignment.started_at = assignment.started_at or now
