"""Ensemble arithmetic: final score, outlier rules for the supervisor's input, a fallback merge, and the
per-item step that applies them."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from evaluation.engine.alignment import AlignedSpan, align_location
from evaluation.engine.errors import EngineError
from evaluation.engine.parsing import LABELS, ParsedAnswer, ParsedError
from stats.overlap import shared_chars

LABEL_SCORES: dict[str, int] = {label: i for i, label in enumerate(LABELS, start=1)}
MAX_ERRORS = 8
# float noise must not decide a boundary case such as |diff| == 2 * std exactly
_EPS = 1e-9
# below this many scores nobody is an outlier: with two scores, "the others" of each annotator is the
# single other score (std 0), so any disagreement of >= 1 would flag both annotators at once, and the
# literal rule cannot fire at all (each score is exactly one std from the mean of two)
MIN_SCORES_FOR_OUTLIERS = 3


def ensemble_score(scores: Sequence[float | None]) -> float | None:
    """Return the mean of the available 1..5 scores (None when there is none)."""
    present = [float(s) for s in scores if s is not None]
    return sum(present) / len(present) if present else None


def outliers_leave_one_out(scores: Sequence[float]) -> list[bool]:
    """Flag annotator i when |s_i - mean(others)| >= 2 * pstdev(others) and >= 1.

    "Others" are the remaining n-1 scores. When they all agree (pstdev 0) the first condition always
    holds, so any annotator at least 1 point away from a unanimous rest is an outlier. This is the
    project's default reading (docs: the method; `--outlier-rule`): the literal one can hardly fire for n = 5.
    """
    values = [float(s) for s in scores]
    if len(values) < MIN_SCORES_FOR_OUTLIERS:
        return [False] * len(values)
    flags = []
    for i, value in enumerate(values):
        others = values[:i] + values[i + 1 :]
        mean = statistics.fmean(others)
        spread = statistics.pstdev(others)
        diff = abs(value - mean)
        flags.append(diff >= 2 * spread - _EPS and diff >= 1 - _EPS)
    return flags


def outliers_literal(scores: Sequence[float]) -> list[bool]:
    """Flag annotator i when |s_i - mean(all)| >= 2 * pstdev(all) and >= 1 (the paper's words read
    literally). With n = 5 this fires only at the extreme "four equal, one different" pattern, where the
    distance is exactly two population standard deviations."""
    values = [float(s) for s in scores]
    if len(values) < MIN_SCORES_FOR_OUTLIERS:
        return [False] * len(values)
    mean = statistics.fmean(values)
    spread = statistics.pstdev(values)
    return [abs(v - mean) >= 2 * spread - _EPS and abs(v - mean) >= 1 - _EPS for v in values]


OutlierRule = Callable[[Sequence[float]], list[bool]]
OUTLIER_RULES: dict[str, OutlierRule] = {
    "leave_one_out": outliers_leave_one_out,
    "literal": outliers_literal,
}
DEFAULT_OUTLIER_RULE = "leave_one_out"


def get_outlier_rule(name: str) -> OutlierRule:
    try:
        return OUTLIER_RULES[name]
    except KeyError:
        raise EngineError(f"unknown outlier rule {name!r}; known: {', '.join(OUTLIER_RULES)}") from None


class _HasSeverity(Protocol):
    severity: int | None


T = TypeVar("T", bound=_HasSeverity)


def cap_errors(errors: Sequence[T], limit: int = MAX_ERRORS) -> list[T]:
    """Return at most `limit` errors: the most severe ones (unknown severity counts lowest; ties keep the
    earlier error), in their original order."""
    if len(errors) <= limit:
        return list(errors)
    ranked = sorted(range(len(errors)), key=lambda i: (-(errors[i].severity or 0), i))
    keep = sorted(ranked[:limit])
    return [errors[i] for i in keep]


@dataclass
class MergedError:
    location: str | None
    start: int | None
    end: int | None
    explanation: str
    severity: int | None
    match: str  # how the kept span was aligned: exact, normalized, fuzzy or none
    members: list[int] = field(default_factory=list)  # indices into the fallback_merge input
    ambiguous: bool = False  # the kept span's location occurs more than once and nothing said which


# spans whose overlap covers at least this share of the shorter one are about the same place
OVERLAP_SHARE = 0.5


def overlap_share(a: tuple[int, int], b: tuple[int, int]) -> float:
    """Return the overlap of two [start, end) spans as a share of the shorter span's length."""
    overlap = shared_chars(a, b)
    shorter = min(a[1] - a[0], b[1] - b[0])
    if overlap <= 0 or shorter <= 0:
        return 0.0
    return overlap / shorter


def _norm_text(text: str) -> str:
    return " ".join(text.lower().strip(" \"'“”‘’`.,;:").split())


@dataclass
class _Unit:
    index: int
    error: ParsedError
    span: AlignedSpan


def fallback_merge(
    annotated: Sequence[tuple[ParsedError, Sequence[AlignedSpan]]],
    output: str,
    max_errors: int = MAX_ERRORS,
) -> list[MergedError]:
    """Merge annotators' errors without the supervisor (when its answer is unusable).

    Each (error, aligned span) pair is a unit; an error whose location was split into several parts
    contributes one unit per part. Units with offsets are grouped (transitively) when their spans overlap
    by at least OVERLAP_SHARE of the shorter span. A group keeps the highest severity of its members and
    the explanation and span of its most severe member (ties: the longer span, then the earlier one), so
    that span and explanation always belong together - one contiguous span, never a union. Units without
    offsets are grouped by their normalized location text; those with no location at all by their
    normalized explanation. The result is ranked by severity (highest first), then by position in the
    output (unaligned last), and cut to max_errors.
    """
    units: list[_Unit] = []
    for index, (error, spans) in enumerate(annotated):
        for span in spans or [AlignedSpan(None, None, error.location or "", "none")]:
            units.append(_Unit(index, error, span))

    aligned = [u for u in units if u.span.start is not None and u.span.end is not None]
    parent = list(range(len(aligned)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(aligned)):
        for j in range(i + 1, len(aligned)):
            a, b = aligned[i].span, aligned[j].span
            if overlap_share((a.start, a.end), (b.start, b.end)) >= OVERLAP_SHARE:  # type: ignore[arg-type]
                parent[find(j)] = find(i)

    groups: dict[object, list[_Unit]] = {}
    for i, unit in enumerate(aligned):
        groups.setdefault(("span", find(i)), []).append(unit)
    for unit in units:
        if unit.span.start is not None:
            continue
        if unit.error.location:
            key: object = ("text", _norm_text(unit.error.location if not unit.span.text else unit.span.text))
        else:
            key = ("omission", _norm_text(unit.error.explanation))
        groups.setdefault(key, []).append(unit)

    merged: list[MergedError] = []
    for members in groups.values():
        def rank(u: _Unit) -> tuple[int, int, int]:
            length = (u.span.end or 0) - (u.span.start or 0)
            return (-(u.error.severity or 0), -length, u.index)

        best = min(members, key=rank)
        severities = [u.error.severity for u in members if u.error.severity is not None]
        start, end = best.span.start, best.span.end
        if start is not None and end is not None:
            location: str | None = output[start:end]
        else:
            location = best.span.text or best.error.location
        merged.append(
            MergedError(
                location=location,
                start=start,
                end=end,
                explanation=best.error.explanation,
                severity=max(severities) if severities else None,
                match=best.span.match,
                members=sorted({u.index for u in members}),
                ambiguous=best.span.ambiguous,
            )
        )
    merged.sort(key=lambda m: (-(m.severity or 0), m.start if m.start is not None else len(output) + 1))
    return merged[:max_errors]


@dataclass(frozen=True)
class EnsembleItem:
    """One item's annotator answers after the ensemble's rules: what the supervisor sees and the score.

    Indices refer to `answers`, which are in annotator order, so callers can map them back to their rows.
    """

    answers: tuple[ParsedAnswer, ...]
    kept: tuple[int, ...]  # answers the supervisor sees: neither failed nor score outliers
    outliers: tuple[int, ...]  # answers the outlier rule left out
    score: float | None  # mean of every available 1..5 score, outliers included

    @property
    def kept_answers(self) -> list[ParsedAnswer]:
        return [self.answers[i] for i in self.kept]

    def fallback(self, output: str, max_errors: int = MAX_ERRORS) -> list[MergedError]:
        """Merge the kept answers' errors by span overlap, for when the supervisor's answer is unusable."""
        annotated = [
            (error, align_location(error.location, output, explanation=error.explanation))
            for answer in self.kept_answers
            for error in answer.errors
        ]
        return fallback_merge(annotated, output, max_errors=max_errors)


def ensemble_item(answers: Sequence[ParsedAnswer], rule: str = DEFAULT_OUTLIER_RULE) -> EnsembleItem:
    """Apply the ensemble's rules to one item's annotator answers.

    Failed answers are not shown to the supervisor. The outlier rule runs over the answers that have a
    score; an answer with errors but no score cannot be judged an outlier and is kept. The score is the
    mean over every answer, outliers included (they are left out of the merge, not of the score).
    """
    judge = get_outlier_rule(rule)
    usable = [i for i, a in enumerate(answers) if a.status != "failed"]
    scored = [i for i in usable if answers[i].score is not None]
    flags = judge([answers[i].score for i in scored]) if scored else []  # type: ignore[misc]
    outliers = tuple(i for i, flag in zip(scored, flags, strict=True) if flag)
    return EnsembleItem(
        answers=tuple(answers),
        kept=tuple(i for i in usable if i not in outliers),
        outliers=outliers,
        score=ensemble_score([a.score for a in answers]),
    )
