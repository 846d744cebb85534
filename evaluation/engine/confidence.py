"""What an ensemble said about each of its machine spans: k of n annotator models flagged it, the supervisor's
decision, and how far the flagging models agree on severity and category.

Django-free. A model *flags* a machine span when one of its own spans marks an overlapping stretch of the
output (at least one character in common; for locations not found in the text, the same location text once
normalized, or for errors with no location at all the same explanation, as the fallback merge groups them).
`n` counts the annotator models that gave a usable answer on the item (an unparseable answer could flag
nothing); score outliers count, since they did read the output and flag what they flagged, even though the
supervisor did not see their list. Agreement is measured over the flagging models only, each represented by
its span that overlaps the machine span most (ties: its earlier span): the share of them that gave the machine
span's severity (resp. category), among those that gave one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluation.engine.ensemble import _norm_text
from stats.overlap import shared_chars

# What the supervisor did with a machine span of the run's answer.
KEPT = "kept"  # the supervisor returned it, and at least one annotator model had flagged that stretch
ADDED = "added"  # the supervisor returned it although no annotator model flagged an overlapping stretch
FALLBACK = "fallback"  # the supervisor's answer was unusable; the span comes from the merge by overlap
NO_SUPERVISOR = "none"  # a single model's answer: no supervisor took part
SUPERVISOR_DECISIONS: tuple[tuple[str, str], ...] = (
    (KEPT, "Kept by the supervisor"),
    (ADDED, "Added by the supervisor"),
    (FALLBACK, "Merged without the supervisor"),
    (NO_SUPERVISOR, "No supervisor"),
)


@dataclass(frozen=True)
class Mark:
    """One span as the confidence needs it: where it is, and what its author said about it."""

    start: int | None
    end: int | None
    text: str = ""
    severity: int | None = None
    category: str = ""
    explanation: str = ""


@dataclass(frozen=True)
class Confidence:
    k: int  # models that flagged an overlapping stretch
    n: int  # models with a usable answer on the item
    flagged_by: tuple[str, ...]
    supervisor: str
    severity_agreement: float | None
    category_agreement: float | None


def overlap(a: Mark, b: Mark) -> int:
    """Return how strongly two marks coincide: characters in common when both have offsets; 1 when neither has
    offsets and both quote the same location, or both quote none and give the same explanation (normalized);
    else 0."""
    if a.start is not None and a.end is not None and b.start is not None and b.end is not None:
        return shared_chars((a.start, a.end), (b.start, b.end))
    if a.start is None and b.start is None:
        if a.text.strip() or b.text.strip():
            left, right = _norm_text(a.text), _norm_text(b.text)
        else:
            left, right = _norm_text(a.explanation), _norm_text(b.explanation)
        return int(bool(left) and left == right)
    return 0


def _agreement(values: Sequence[object], target: object) -> float | None:
    given = [v for v in values if v not in (None, "")]
    if target in (None, "") or not given:
        return None
    return sum(1 for v in given if v == target) / len(given)


def span_confidence(span: Mark, answers: Mapping[str, Sequence[Mark]], *, supervisor: str) -> Confidence:
    """Return the confidence of one machine span from the usable answers of the annotator models (model ->
    its spans on the same item and aspect). `supervisor` is how the run's answer was made: KEPT for a
    supervised merge (turned into ADDED here when nobody flagged the span), FALLBACK or NO_SUPERVISOR."""
    flagged: list[str] = []
    best: list[Mark] = []
    for model in sorted(answers):
        scored = [(overlap(span, mark), -i, mark) for i, mark in enumerate(answers[model])]
        top = max(scored, default=None, key=lambda t: (t[0], t[1]))
        if top is not None and top[0] > 0:
            flagged.append(model)
            best.append(top[2])
    decision = ADDED if supervisor == KEPT and not flagged else supervisor
    return Confidence(
        k=len(flagged), n=len(answers), flagged_by=tuple(flagged), supervisor=decision,
        severity_agreement=_agreement([m.severity for m in best], span.severity),
        category_agreement=_agreement([m.category for m in best], span.category),
    )
