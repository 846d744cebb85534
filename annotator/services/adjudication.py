"""Reviewers' decisions on disagreements: set final verdicts, an ambiguous span's place and a note, audited,
and undone newest first."""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from annotator.engine.occurrences import PICK_NONE, OccurrenceError, parse_pick, pick_text
from annotator.models import Adjudication, AdjudicationEvent, Campaign, SpanJudgment
from annotator.selectors.review import review_entry
from annotator.services.judgments import CHOICE_FIELDS, MAX_COMMENT
from annotator.services.occurrences import span_occurrences
from corpus import cleaning
from corpus.models import AnnotationKind, ErrorSpan
from corpus.protocols import opennlgauge as protocol
from errors import Conflict, UserError

DECISION_FIELDS = ("span_verdict", "explanation_verdict", "occurrence", "note")
Action = AdjudicationEvent.Action
ADDED_SPAN_VERDICTS = frozenset({protocol.SPAN_OK, protocol.SPAN_NOT_ERROR})


class AdjudicationError(UserError):
    """A decision that cannot be stored: unknown field or value, or a span that is not this campaign's."""


class DecisionConflict(Conflict, AdjudicationError):
    """A decision, undo or redo the current state refuses: the span is not in dispute, or another reviewer
    changed the field since."""


def _coerce_occurrence(text: str, span: ErrorSpan, *, added: bool) -> str:
    """'' (the judges' majority pick), 'none', or the 'start-end' of one of the span's candidate occurrences."""
    text = text.strip()
    if not text:
        return ""
    if added:
        raise AdjudicationError("occurrence: an added error has no machine location to place", field="occurrence")
    candidates = span_occurrences(span, span.annotation.item.output)
    if not candidates:
        raise AdjudicationError(f"occurrence: span {span.pk}'s location is not ambiguous; there is no occurrence "
                                "to decide", field="occurrence")
    allowed = [pick_text(c) for c in candidates]
    try:
        parse_pick(text)
    except OccurrenceError as exc:
        raise AdjudicationError(str(exc), field="occurrence") from exc
    if text != PICK_NONE and text not in allowed:
        raise AdjudicationError(f"occurrence: {text!r} is not one of the span's occurrences "
                                f"({', '.join(allowed)}) or 'none'", field="occurrence")
    return text


def _coerce(field: str, value: object, *, span: ErrorSpan, added: bool) -> str:
    text = "" if value is None else str(value)
    if field == "occurrence":
        return _coerce_occurrence(text, span, added=added)
    if field in CHOICE_FIELDS:
        if text and text not in CHOICE_FIELDS[field]:
            raise AdjudicationError(f"{field}: {text!r} is not one of {', '.join(sorted(CHOICE_FIELDS[field]))}",
                                    field=field)
        if added and field == "span_verdict" and text and text not in ADDED_SPAN_VERDICTS:
            raise AdjudicationError(f"span_verdict: an added error is kept ('error') or dropped ('not_error'), "
                                    f"not {text!r}", field="span_verdict")
        if added and field == "explanation_verdict" and text:
            raise AdjudicationError("explanation_verdict: an added error has no machine explanation to judge",
                                    field="explanation_verdict")
        return text
    if field == "note":
        return cleaning.check_field(text, "note", max_length=MAX_COMMENT, error=AdjudicationError)
    raise AdjudicationError(f"unknown field {field!r}; fields are {', '.join(DECISION_FIELDS)}", field="field")


def span_of_campaign(campaign: Campaign, span_id: int) -> tuple[ErrorSpan, bool]:
    """Return a span the campaign's judges judged (machine) or added, and whether it is an added error."""
    span = ErrorSpan.objects.select_related("annotation__item").filter(pk=span_id).first()
    if span is not None:
        if span.annotation.kind == AnnotationKind.HUMAN and span.annotation.source.kind == "campaign":
            if span.annotation.source.added.campaign_id == campaign.pk:
                return span, True
        elif SpanJudgment.objects.filter(assignment__campaign=campaign, span_id=span_id).exists():
            return span, False
    raise AdjudicationError(f"span {span_id} was not judged in campaign {campaign.name!r}", field="span_id")


def in_review(campaign: Campaign, span_id: int, decision: Adjudication | None) -> bool:
    """Whether the review screen shows the span: the judges disagree on it, or a reviewer overrode them."""
    return bool(decision is not None and decision.override) or review_entry(campaign, span_id) is not None


def _apply(decision: Adjudication, *, user: User, field: str, value: str, action: str,
           reverts: AdjudicationEvent | None = None) -> AdjudicationEvent:
    """Set one field of the (locked) decision, bump the field's version and write the audit row."""
    version = int(decision.versions.get(field, 0)) + 1
    event = AdjudicationEvent.objects.create(
        adjudication=decision, user=user, action=action, field=field, old_value=getattr(decision, field),
        new_value=value, version=version, reverts=reverts,
    )
    setattr(decision, field, value)
    decision.versions = {**decision.versions, field: version}
    return event


def _live_reviewer(decision: Adjudication) -> User | None:
    """Who made the newest change that is still in force (the person the decision's values answer to)."""
    newest: tuple[int, User] | None = None
    for field in DECISION_FIELDS:
        last = decision.events.filter(field=field).exclude(action=Action.OVERRIDE).order_by("-version", "-id").first()
        if last is None:
            continue
        live = last if last.action != Action.UNDO else (
            decision.events.filter(field=field, action=Action.CHANGE, undone=False).order_by("-id").first())
        if live is not None and (newest is None or last.pk > newest[0]):
            newest = (last.pk, live.user)
    return None if newest is None else newest[1]


def _save(decision: Adjudication) -> None:
    decision.reviewer = _live_reviewer(decision)
    decision.save()


def _others_since(decision: Adjudication, field: str, version: int, user: User) -> str:
    """Who else changed, undid or redid `field` of the decision after it reached `version` ('' when nobody):
    the reviewer's own later rows are all undone by then (undo is last in, first out), so only another
    reviewer's row can mean the field no longer holds what the reviewer set."""
    later = (decision.events.filter(field=field, version__gt=version).exclude(user=user).select_related("user")
             .order_by("version"))
    return ", ".join(f"{e.user.username} ({e.get_action_display().lower()}, version {e.version})" for e in later)


@transaction.atomic
def adjudication_set(*, campaign: Campaign, span_id: int, user: User, changes: Mapping[str, object],
                     override: bool = False) -> Adjudication:
    """Apply `changes` to the decision on a span, creating it on first use; one audit row per changed field.

    A span the judges do not dispute is refused (409) unless `override` is set: the override is audited
    and the review screen lists the span from then on, so no decision is invisible. The caller has checked
    that `user` reviews `campaign` (annotator.access.campaign_for_reviewer)."""
    span, added = span_of_campaign(campaign, span_id)
    clean = {f: _coerce(f, v, span=span, added=added) for f, v in changes.items()}
    decision, _ = Adjudication.objects.select_for_update().get_or_create(campaign=campaign, span=span)
    if not in_review(campaign, span.pk, decision):
        if not override:
            raise DecisionConflict(
                f"span {span.pk} is not in dispute in campaign {campaign.name!r} (its judges agree, or only one "
                "judged it): nothing was decided; send override=true to overrule the judges, which is audited "
                "and listed on the review screen")
        decision.override = True
        AdjudicationEvent.objects.create(adjudication=decision, user=user, action=Action.OVERRIDE,
                                         field="override", old_value="", new_value="true")
    for field, value in clean.items():
        if getattr(decision, field) != value:
            _apply(decision, user=user, field=field, value=value, action=Action.CHANGE)
    _save(decision)
    return decision


def _stack(campaign: Campaign, user: User):
    return AdjudicationEvent.objects.select_for_update().filter(
        adjudication__campaign=campaign, user=user, action=Action.CHANGE)


def _locked(event: AdjudicationEvent) -> Adjudication:
    return Adjudication.objects.select_for_update().get(pk=event.adjudication_id)


@transaction.atomic
def adjudication_undo(*, campaign: Campaign, user: User) -> Adjudication | None:
    """Put back the reviewer's newest change in this campaign that is not undone; None when there is none.

    Only while the field still holds that change: when another reviewer changed the field since, the undo is
    refused (409, naming them) and nothing changes, so an undo never reverts someone else's decision."""
    event = _stack(campaign, user).filter(undone=False).order_by("-id").first()
    if event is None:
        return None
    decision = _locked(event)
    redone = event.steps.filter(action=Action.REDO).order_by("-version").first()
    made = redone.version if redone is not None else event.version  # the version the change last set
    if others := _others_since(decision, event.field, made, user):
        raise DecisionConflict(
            f"undo refused: {event.field} of span {decision.span_id} was changed since your change by {others}; "
            "nothing was undone (decide it again instead)")
    _apply(decision, user=user, field=event.field, value=event.old_value, action=Action.UNDO, reverts=event)
    event.undone, event.undone_at = True, timezone.now()
    event.save(update_fields=["undone", "undone_at"])
    _save(decision)
    return decision


@transaction.atomic
def adjudication_redo(*, campaign: Campaign, user: User) -> Adjudication | None:
    """Replay the most recently undone change, unless the reviewer has changed something since (as in any
    editor, and as on the item screen); None when there is nothing to redo. Refused (409) when another
    reviewer changed the field after the undo."""
    event = _stack(campaign, user).filter(undone=True).order_by("-undone_at", "-id").first()
    if event is None or _stack(campaign, user).filter(undone=False, at__gt=event.undone_at).exists():
        return None
    decision = _locked(event)
    undo = event.steps.filter(action=Action.UNDO).order_by("-id").first()
    if undo is not None and (others := _others_since(decision, event.field, undo.version, user)):
        raise DecisionConflict(
            f"redo refused: {event.field} of span {decision.span_id} was changed since your undo by {others}; "
            "nothing was redone")
    _apply(decision, user=user, field=event.field, value=event.new_value, action=Action.REDO, reverts=event)
    event.undone, event.undone_at = False, None
    event.save(update_fields=["undone", "undone_at"])
    _save(decision)
    return decision


def adjudication_history(decision: Adjudication) -> list[AdjudicationEvent]:
    """The decision's audit trail, oldest first: every change, undo, redo and override, with who and when."""
    return list(decision.events.select_related("user").order_by("id"))
