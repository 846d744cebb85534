"""Adjudication API: the twins of the reviewers' screen (queue, decide, undo)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from annotator.access import campaign_for_reviewer
from annotator.models import Adjudication
from annotator.selectors.review import ADDED, ReviewEntry, review_entry, review_queue
from annotator.services.adjudication import (
    DECISION_FIELDS,
    adjudication_history,
    adjudication_redo,
    adjudication_set,
    adjudication_undo,
)
from annotator.services.occurrences import span_occurrences
from errors import Conflict, UserError

router = Router(tags=["adjudication"])


class PlaceOut(Schema):
    start: int | None  # None (both): the location is not in the output
    end: int | None


class JudgeVerdictOut(Schema):
    judge: str
    span_verdict: str
    explanation_verdict: str
    flags: list[str]
    comment: str
    occurrence: PlaceOut | None = None  # the judge's pick of an ambiguous span's place; None = not picked


class ConsensusOut(Schema):
    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None
    occurrence: PlaceOut | None = None  # the decided or majority place of an ambiguous span


class DisputeOut(Schema):
    span_id: int
    kind: str  # "machine" or "added"
    item_id: str
    evaluator: str
    start: int | None
    end: int | None
    text: str
    explanation: str
    occurrences: list[PlaceOut]  # an ambiguous span's candidates (what `occurrence` may name); [] otherwise
    verdicts: list[JudgeVerdictOut]
    consensus: ConsensusOut
    decided: bool
    decision: dict[str, str] | None
    override: bool  # listed because a reviewer overrode judges who agree, not because they disagree
    versions: dict[str, int]  # field -> its version (audit rows so far)


class DecisionIn(Schema):
    """Only the fields given change; '' clears a field (the majority applies again). `override` is needed to
    decide a span the judges agree on (audited; the review screen lists it from then on)."""

    span_verdict: str | None = None
    explanation_verdict: str | None = None
    occurrence: str | None = None  # "none" or "start-end" of one of the dispute's `occurrences`
    note: str | None = None
    override: bool = False


class AuditOut(Schema):
    id: int
    user: str
    action: str  # "change", "undo", "redo" or "override"
    field: str
    old_value: str
    new_value: str
    version: int
    undone: bool
    at: str


def _place(place: tuple[int | None, int | None] | None) -> PlaceOut | None:
    return None if place is None else PlaceOut(start=place[0], end=place[1])


def _dispute_out(entry: ReviewEntry) -> DisputeOut:
    d = entry.decision
    candidates = [] if entry.kind == ADDED else span_occurrences(entry.span, entry.item.output)
    return DisputeOut(
        span_id=entry.span.pk, kind=entry.kind, item_id=entry.item.external_id, evaluator=entry.evaluator,
        start=entry.span.start, end=entry.span.end, text=entry.span.text,
        explanation=entry.span.explanation,
        occurrences=[PlaceOut(start=c.start, end=c.end) for c in candidates],
        verdicts=[JudgeVerdictOut(judge=v.judge, span_verdict=v.span_verdict,
                                  explanation_verdict=v.explanation_verdict, flags=v.flags, comment=v.comment,
                                  occurrence=_place(v.occurrence))
                  for v in entry.verdicts],
        consensus=ConsensusOut(**entry.consensus.as_record()), decided=entry.is_decided,
        decision=None if d is None else {"span_verdict": d.span_verdict,
                                         "explanation_verdict": d.explanation_verdict,
                                         "occurrence": d.occurrence, "note": d.note,
                                         "reviewer": d.reviewer.username if d.reviewer else ""},
        override=entry.is_override, versions={} if d is None else {k: int(v) for k, v in d.versions.items()},
    )


@router.get("/campaigns/{campaign_id}/disputes", response=list[DisputeOut], operation_id="list_disputes")
def list_disputes(request: HttpRequest, campaign_id: int):
    """The review queue: spans the judges disagree on, with every judge's verdicts by name (reviewers only)."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    return [_dispute_out(e) for e in review_queue(campaign)]


# Undo and redo are declared before the /disputes/{span_id} route, which would otherwise take "undo" for a span id.
@router.post("/campaigns/{campaign_id}/disputes/undo", response=DisputeOut | None,
             operation_id="undo_dispute_decision")
def undo_dispute_decision(request: HttpRequest, campaign_id: int):
    """Reverse the reviewer's newest decision change in this campaign; 409 when there is none."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    return _stepped(campaign, adjudication_undo(campaign=campaign, user=request.user), "undo")


@router.post("/campaigns/{campaign_id}/disputes/redo", response=DisputeOut | None,
             operation_id="redo_dispute_decision")
def redo_dispute_decision(request: HttpRequest, campaign_id: int):
    """Replay the reviewer's most recently undone change; 409 when there is none (or a change came since)."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    return _stepped(campaign, adjudication_redo(campaign=campaign, user=request.user), "redo")


def _stepped(campaign, decision, step: str):
    """The dispute an undo or redo changed, as it stands now (None once it is no longer disputed); 409 when
    there was nothing to `step`."""
    if decision is None:
        raise Conflict(f"nothing to {step}")
    entry = review_entry(campaign, decision.span_id)
    return None if entry is None else _dispute_out(entry)


@router.put("/campaigns/{campaign_id}/disputes/{span_id}", response=DisputeOut | None,
            operation_id="update_dispute_decision")
def update_dispute_decision(request: HttpRequest, campaign_id: int, span_id: int, payload: DecisionIn):
    """Decide (or change the decision on) one disputed span; audited and undoable."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    override = payload.override
    changes = {k: v for k, v in payload.dict(exclude={"override"}).items() if v is not None}
    if not changes:
        raise UserError(f"give at least one of {', '.join(DECISION_FIELDS)}", field=tuple(DECISION_FIELDS))
    adjudication_set(campaign=campaign, span_id=span_id, user=request.user, changes=changes, override=override)
    entry = review_entry(campaign, span_id)
    return None if entry is None else _dispute_out(entry)


@router.get("/campaigns/{campaign_id}/disputes/{span_id}/history", response=list[AuditOut],
            operation_id="list_dispute_history")
def list_dispute_history(request: HttpRequest, campaign_id: int, span_id: int):
    """The decision's audit trail, oldest first: who changed, undid, redid or overrode what, and when."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    decision = get_object_or_404(Adjudication, campaign=campaign, span_id=span_id)
    return [AuditOut(id=e.pk, user=e.user.username, action=e.action, field=e.field, old_value=e.old_value,
                     new_value=e.new_value, version=e.version, undone=e.undone, at=e.at.isoformat())
            for e in adjudication_history(decision)]
