"""Align one LLM-quoted location: read its notes, split '...'-joined parts, match each, choose the occurrence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from evaluation.engine.alignment.anchors import anchors_of, missing_anchor
from evaluation.engine.alignment.matches import find_exact, find_fuzzy, find_normalized
from evaluation.engine.alignment.normalize import STRIP_EDGES
from evaluation.engine.alignment.notes import Pick, pick_in_explanation, read_location
from evaluation.engine.alignment.occurrences import choose_occurrence

Match = Literal["exact", "normalized", "fuzzy", "none"]
MultiPart = Literal["", "split", "cover"]
Join = Literal["split", "cover"]

DEFAULT_FUZZY_THRESHOLD = 85.0
_MATCH_RANK = {"exact": 0, "normalized": 1, "fuzzy": 2, "none": 3}


@dataclass(frozen=True)
class AlignedSpan:
    start: int | None
    end: int | None  # exclusive
    text: str  # the location as written (or the part of it, for '...'-joined locations)
    match: Match
    multi_part: MultiPart = ""
    ambiguous: bool = False
    note: str = ""
    matched_text: str = ""  # output[start:end], "" when not found


def _align_one(
    location: str,
    output: str,
    *,
    explanation: str,
    threshold: float,
    after: int = 0,
    multi_part: MultiPart = "",
    pick: Pick | None = None,
    written: str | None = None,
) -> AlignedSpan:
    """Align one phrase; `written` is the location as its author wrote it (notes and all), kept as the text."""
    text = written if written is not None else location

    def found(spans: list[tuple[int, int]], match: Match, note: str = "") -> AlignedSpan:
        choice = choose_occurrence(spans, output, explanation=explanation, location=location, after=after, pick=pick)
        start, end = choice.span
        notes = "; ".join(n for n in (note, choice.note) if n)
        return AlignedSpan(start, end, text, match, multi_part, choice.ambiguous, notes, output[start:end])

    if location.strip():
        exact = find_exact(location.strip(), output)
        if exact:
            return found(exact, "exact")
        normalized = find_normalized(location, output)
        if normalized:
            return found(normalized, "normalized")
        fuzzy = find_fuzzy(location, output, threshold)
        if fuzzy is not None:
            span, score = fuzzy
            return found([span], "fuzzy", f"fuzzy score {score:.0f}")
    return AlignedSpan(None, None, text, "none", multi_part, False, _absent_note(location, output, threshold), "")


def _absent_note(location: str, output: str, threshold: float) -> str:
    """Say why nothing was found; a near miss that changes a number or name is named, since it is the
    typical hallucinated location (the model misread "12 threes" as "15 threes")."""
    anchors = anchors_of(location)
    near = find_fuzzy(location, output, threshold, anchored=False) if anchors else None
    if near is not None:
        (start, end), _ = near
        missing = missing_anchor(anchors, output[start:end])
        return f"not found in the output; the nearest text {output[start:end]!r} lacks {missing!r}"
    return "not found in the output"


_PART_SPLIT = re.compile(r"\s*(?:\.\s?\.\s?\.|…)\s*")


def split_location(location: str) -> list[str]:
    """Return the non-empty parts of a location joined with '...' or '…' (leading/trailing ones are
    truncation marks, not joins)."""
    return [part for part in _PART_SPLIT.split(location) if part.strip(STRIP_EDGES + " ")]


def _first_part_pick(parts: list[str], output: str) -> tuple[Pick | None, int]:
    """Return the occurrence of the first part that the second part follows most closely, or (when several
    are as close) where the closest ones begin: the parts of one '...'-joined location quote one stretch of
    text, so of a first part that occurs twice the nearer one is meant."""
    firsts = sorted(find_exact(parts[0].strip(), output) or find_normalized(parts[0], output))
    seconds = find_exact(parts[1].strip(), output) or find_normalized(parts[1], output)
    if len(firsts) < 2 or not seconds:
        return None, 0
    gaps = [min((s - end for s, _ in seconds if s >= end), default=len(output) + 1) for _, end in firsts]
    best = min(gaps)
    if best > len(output):
        return None, 0
    if gaps.count(best) > 1:
        return None, firsts[gaps.index(best)][0]
    return Pick(gaps.index(best) + 1, "occurrence", "nearest before the next part"), 0


def align_location(
    location: str | None,
    output: str,
    *,
    explanation: str = "",
    join: Join = "split",
    threshold: float = DEFAULT_FUZZY_THRESHOLD,
) -> list[AlignedSpan]:
    """Return the spans of `output` that `location` points at (one per part for '...'-joined locations).

    A location found verbatim (or normalized) is taken as it is; otherwise its notes are read off first
    ("(second mention)", "in the first sentence", quotes, "The phrase"). Order of attempts: exact
    substring, normalized match, fuzzy match (rapidfuzz, >= threshold, window snapped to spaCy tokens);
    the last two must keep the location's numbers, dates and names. A location that cannot be found gets
    one span with no offsets.
    Offsets always satisfy output[start:end] == matched_text.
    """
    if location is None or not location.strip():
        return [AlignedSpan(None, None, location or "", "none", "", False, "no location given", "")]
    if not output:
        return [AlignedSpan(None, None, location, "none", "", False, "the output is empty", "")]
    written = location
    pick = pick_in_explanation(explanation, location)
    if not (find_exact(location.strip(), output) or find_normalized(location, output)):
        read = read_location(location)
        location = read.text or location
        pick = read.pick or pick_in_explanation(explanation, location)
    parts = split_location(location)
    if len(parts) <= 1:
        single = parts[0] if parts else location
        return [_align_one(single, output, explanation=explanation, threshold=threshold, pick=pick, written=written)]
    # the whole location may occur verbatim (the output itself contains '...')
    whole = find_exact(location.strip(), output) or find_normalized(location, output)
    if whole:
        match: Match = "exact" if location.strip() in output else "normalized"
        choice = choose_occurrence(whole, output, explanation=explanation, location=location, pick=pick)
        start, end = choice.span
        return [AlignedSpan(start, end, written, match, "", choice.ambiguous, choice.note, output[start:end])]
    aligned: list[AlignedSpan] = []
    first_pick, after = _first_part_pick(parts, output)
    for n, part in enumerate(parts):
        span = _align_one(part, output, explanation=explanation, threshold=threshold, after=after,
                          multi_part="split", pick=first_pick if n == 0 else None)
        if span.end is not None:
            after = span.end
        aligned.append(span)
    if join == "cover" and all(s.start is not None for s in aligned):
        first, last = aligned[0], aligned[-1]
        if first.start is not None and last.end is not None and last.end > first.start:
            worst = max((s.match for s in aligned), key=lambda m: _MATCH_RANK[m])
            notes = "; ".join(s.note for s in aligned if s.note)
            return [
                AlignedSpan(first.start, last.end, written, worst, "cover",
                            any(s.ambiguous for s in aligned), notes, output[first.start : last.end])
            ]
    return aligned
