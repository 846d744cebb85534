"""Adjudication API: the twins of the reviewers' screen (queue, decide, undo)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Schema
from ninja.errors import HttpError

from annotator.access import campaign_for_reviewer
from annotator.review import ReviewEntry, review_entry, review_queue
from annotator.services.adjudication import (
    AdjudicationError,
    adjudication_redo,
    adjudication_set,
    adjudication_undo,
)

router = Router(tags=["adjudication"])


class JudgeVerdictOut(Schema):
    judge: str
    span_verdict: str
    explanation_verdict: str
    flags: list[str]
    comment: str


class ConsensusOut(Schema):
    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None


class DisputeOut(Schema):
    span_id: int
    kind: str  # "machine" or "added"
    item_id: str
    evaluator: str
    start: int | None
    end: int | None
    text: str
    explanation: str
    verdicts: list[JudgeVerdictOut]
    consensus: ConsensusOut
    decided: bool
    decision: dict[str, str] | None


class DecisionIn(Schema):
    """Only the fields given change; '' clears a field (the majority applies again)."""

    span_verdict: str | None = None
    explanation_verdict: str | None = None
    note: str | None = None


def _dispute_out(entry: ReviewEntry) -> DisputeOut:
    d = entry.decision
    return DisputeOut(
        span_id=entry.span.pk, kind=entry.kind, item_id=entry.item.external_id, evaluator=entry.evaluator,
        start=entry.span.start, end=entry.span.end, text=entry.span.text,
        explanation=entry.span.explanation,
        verdicts=[JudgeVerdictOut(judge=v.judge, span_verdict=v.span_verdict,
                                  explanation_verdict=v.explanation_verdict, flags=v.flags, comment=v.comment)
                  for v in entry.verdicts],
        consensus=ConsensusOut(**entry.consensus.as_record()), decided=entry.is_decided,
        decision=None if d is None else {"span_verdict": d.span_verdict,
                                         "explanation_verdict": d.explanation_verdict, "note": d.note,
                                         "reviewer": d.reviewer.username if d.reviewer else ""},
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
        raise HttpError(409, f"nothing to {step}")
    entry = review_entry(campaign, decision.span_id)
    return None if entry is None else _dispute_out(entry)


@router.put("/campaigns/{campaign_id}/disputes/{span_id}", response=DisputeOut | None,
            operation_id="update_dispute_decision")
def update_dispute_decision(request: HttpRequest, campaign_id: int, span_id: int, payload: DecisionIn):
    """Decide (or change the decision on) one disputed span; audited and undoable."""
    campaign = campaign_for_reviewer(request.user, campaign_id)
    changes = {k: v for k, v in payload.dict().items() if v is not None}
    if not changes:
        raise HttpError(422, "give at least one of span_verdict, explanation_verdict, note")
    try:
        adjudication_set(campaign=campaign, span_id=span_id, user=request.user, changes=changes)
    except AdjudicationError as exc:
        raise HttpError(422, str(exc)) from None
    entry = review_entry(campaign, span_id)
    return None if entry is None else _dispute_out(entry)
