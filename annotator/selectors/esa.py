"""Reads of an ESA assignment's state: whether its spans are still open, what finishing it still needs.

ESA asks for the spans first and the score after them, one way: once the annotator says the spans are done,
no span changes (by the screen, the API or an undo), and the item finishes only with a score. The shared span,
undo and finish paths ask these through ESA's hooks (annotator.protocols.esa), so only ESA items reach them.
"""

from __future__ import annotations

from annotator.engine.phases import Phase
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


SPANS_DONE = (Phase.SCORING.value, Phase.DONE.value)
"""The phases in which an ESA item's spans are done (the move into scoring closed them)."""


def _phase(assignment: Assignment) -> str | None:
    """The stored phase: the caller's row may predate a move made in this request."""
    return Assignment.objects.filter(pk=assignment.pk).values_list("phase", flat=True).first()


def esa_spans_closed(assignment: Assignment) -> str | None:
    """Why the assignment's spans may not change (None while they may)."""
    return SPANS_CLOSED if _phase(assignment) in SPANS_DONE else None


def esa_unfinished(assignment: Assignment) -> str | None:
    """What an ESA item still needs before it can finish (None when nothing)."""
    if _phase(assignment) not in SPANS_DONE:
        return "mark the spans, then say they are done (d) and give the score"
    if EsaScore.objects.filter(assignment_id=assignment.pk, score__isnull=False).first() is None:
        return "give the segment a score from 0 to 100 first"
    return None
