"""The expert's pick among the occurrences of an ambiguous span: saved at once like a verdict, versioned, undoable."""

from __future__ import annotations

from accounts.models import User
from annotator.engine.occurrences import Occurrence, OccurrenceError, occurrences, pick_text
from annotator.models import Assignment, SpanJudgment
from annotator.services.judgments import OCCURRENCE, judgment_set
from corpus.models import ErrorSpan


def span_occurrences(span: ErrorSpan, output: str) -> list[Occurrence]:
    """The candidates an expert picks from: every occurrence of an ambiguous span's located text; none otherwise."""
    if not span.ambiguous or span.start is None or span.end is None:
        return []
    return occurrences(output, span.start, span.end)


def occurrence_pick(
    *, assignment: Assignment, span: ErrorSpan, user: User, index: int | None = None, none: bool = False,
    reset: bool = False, expected_version: int | None = None, ms: int | None = None,
) -> SpanJudgment:
    """Pick occurrence `index` (0-based into span_occurrences), say none of them is meant, or `reset` to the
    machine's offsets. Exactly one of the three; the span must be ambiguous. Written through judgment_set, so
    the pick is versioned, audited (JudgmentEvent field "occurrence") and on the undo stack like a verdict."""
    given = [name for name, on in (("index", index is not None), ("none", none), ("reset", reset)) if on]
    if len(given) != 1:
        raise OccurrenceError(f"give exactly one of index, none, reset (got {', '.join(given) or 'none of them'})",
                              field=("index", "none", "reset"))
    candidates = span_occurrences(span, assignment.item.output)
    if not candidates:
        raise OccurrenceError("span_id: this error's location is not ambiguous; there is no occurrence to pick",
                              field="span_id")
    if index is not None:
        if not 0 <= index < len(candidates):
            raise OccurrenceError(f"index: must be 0 to {len(candidates) - 1} (this error has {len(candidates)} "
                                  f"occurrences), not {index}", field="index")
        text = pick_text(candidates[index])
    else:
        text = pick_text(None, none=none)
    return judgment_set(assignment=assignment, span=span, user=user, changes={OCCURRENCE: text},
                        expected_version=expected_version, ms=ms, occurrence_checked=True)
