"""Reviewers' decisions on disagreements: set final verdicts and a note, audited, and undone newest first."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from annotator.models import Adjudication, AdjudicationEvent, Campaign, SpanJudgment
from annotator.services.judgments import CHOICE_FIELDS, MAX_COMMENT
from corpus.models import AnnotationKind, ErrorSpan
from errors import UserError

DECISION_FIELDS = ("span_verdict", "explanation_verdict", "note")
ADDED_SPAN_VERDICTS = frozenset({"error", "not_error"})


class AdjudicationError(UserError, ValueError):
    """A decision that cannot be stored: unknown field or value, or a span that is not this campaign's."""


def _coerce(field: str, value: object, *, added: bool) -> str:
    text = "" if value is None else str(value)
    if field in CHOICE_FIELDS:
        if text and text not in CHOICE_FIELDS[field]:
            raise AdjudicationError(f"{field}: {text!r} is not one of {', '.join(sorted(CHOICE_FIELDS[field]))}")
        if added and field == "span_verdict" and text and text not in ADDED_SPAN_VERDICTS:
            raise AdjudicationError(f"span_verdict: an added error is kept ('error') or dropped ('not_error'), "
                                    f"not {text!r}")
        if added and field == "explanation_verdict" and text:
            raise AdjudicationError("explanation_verdict: an added error has no machine explanation to judge")
        return text
    if field == "note":
        if len(text) > MAX_COMMENT:
            raise AdjudicationError(f"note: longer than {MAX_COMMENT} characters")
        if "\x00" in text:
            raise AdjudicationError("note: contains a NUL character (\\x00), which cannot be stored")
        return text
    raise AdjudicationError(f"unknown field {field!r}; fields are {', '.join(DECISION_FIELDS)}")


def span_of_campaign(campaign: Campaign, span_id: int) -> tuple[ErrorSpan, bool]:
    """Return a span the campaign's judges judged (machine) or added, and whether it is an added error."""
    span = ErrorSpan.objects.select_related("annotation").filter(pk=span_id).first()
    if span is not None:
        if span.annotation.kind == AnnotationKind.HUMAN and span.annotation.source.kind == "campaign":
            if span.annotation.source.added.campaign_id == campaign.pk:
                return span, True
        elif SpanJudgment.objects.filter(assignment__campaign=campaign, span_id=span_id).exists():
            return span, False
    raise AdjudicationError(f"span {span_id} was not judged in campaign {campaign.name!r}")


@transaction.atomic
def adjudication_set(*, campaign: Campaign, span_id: int, user: User, changes: Mapping[str, object],
                     record: bool = True) -> Adjudication:
    """Apply `changes` to the decision on a span, creating it on first use; one audit event per changed field.

    The caller has checked that `user` reviews `campaign` (annotator.access.campaign_for_reviewer)."""
    span, added = span_of_campaign(campaign, span_id)
    clean = {f: _coerce(f, v, added=added) for f, v in changes.items()}
    decision, _ = Adjudication.objects.select_for_update().get_or_create(campaign=campaign, span=span)
    changed = [f for f, v in clean.items() if getattr(decision, f) != v]
    events = [AdjudicationEvent(adjudication=decision, user=user, field=f, old_value=getattr(decision, f),
                                new_value=clean[f]) for f in changed]
    for f in changed:
        setattr(decision, f, clean[f])
    if changed:
        decision.reviewer = user
        decision.save()
        if record:
            AdjudicationEvent.objects.bulk_create(events)
    return decision


def _events(campaign: Campaign, user: User):
    return AdjudicationEvent.objects.select_for_update().filter(adjudication__campaign=campaign, user=user)


@transaction.atomic
def adjudication_undo(*, campaign: Campaign, user: User) -> Adjudication | None:
    """Put back the reviewer's newest change in this campaign that is not undone; None when there is none."""
    event = _events(campaign, user).filter(undone=False).order_by("-id").first()
    if event is None:
        return None
    decision = adjudication_set(campaign=campaign, span_id=event.adjudication.span_id, user=user,
                                changes={event.field: event.old_value}, record=False)
    event.undone, event.undone_at = True, timezone.now()
    event.save(update_fields=["undone", "undone_at"])
    return decision


@transaction.atomic
def adjudication_redo(*, campaign: Campaign, user: User) -> Adjudication | None:
    """Replay the most recently undone change, unless the reviewer has changed something since (as in any
    editor, and as on the item screen); None when there is nothing to redo."""
    event = _events(campaign, user).filter(undone=True).order_by("-undone_at", "-id").first()
    if event is None or _events(campaign, user).filter(undone=False, at__gt=event.undone_at).exists():
        return None
    decision = adjudication_set(campaign=campaign, span_id=event.adjudication.span_id, user=user,
                                changes={event.field: event.new_value}, record=False)
    event.undone, event.undone_at = False, None
    event.save(update_fields=["undone", "undone_at"])
    return decision
