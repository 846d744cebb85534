"""Reads of an ESA assignment's state: whether its spans are still open, what finishing it still needs.

ESA asks for the spans first and the score after them, one way: once the annotator says the spans are done,
no span changes (by the screen, the API or an undo), and the item finishes only with a score. The shared span,
undo and finish paths ask these through ESA's hooks (annotator.protocols.esa), so only ESA items reach them.
"""

from __future__ import annotations

from datetime import datetime

from annotator.models import Assignment, EsaScore

ESA_ARM, ESA_AI_ARM = "ESA", "ESA^AI"
SPANS_CLOSED = "The spans of this item are done and its score is asked; they can no longer change."


def esa_arm(assignment: Assignment, *, has_runs: bool | None = None) -> str:
    """ESA in the control arm and in a campaign without runs; ESA^AI otherwise (pre-filled, even with nothing
    to pre-fill on this output: the annotator then sees that the machine found nothing). `has_runs` spares the
    query when the caller reads a whole campaign."""
    if has_runs is None:
        has_runs = assignment.campaign.runs.exists()
    return ESA_ARM if assignment.in_control_arm or not has_runs else ESA_AI_ARM


def esa_spans_done_at(assignment: Assignment) -> datetime | None:
    return EsaScore.objects.filter(assignment_id=assignment.pk).values_list("spans_done_at", flat=True).first()


def esa_spans_closed(assignment: Assignment) -> str | None:
    """Why the assignment's spans may not change (None while they may)."""
    return SPANS_CLOSED if esa_spans_done_at(assignment) is not None else None


def esa_unfinished(assignment: Assignment) -> str | None:
    """What an ESA item still needs before it can finish (None when nothing)."""
    state = EsaScore.objects.filter(assignment_id=assignment.pk).values_list("spans_done_at", "score").first()
    if state is None or state[0] is None:
        return "mark the spans, then say they are done (d) and give the score"
    if state[1] is None:
        return "give the segment a score from 0 to 100 first"
    return None
