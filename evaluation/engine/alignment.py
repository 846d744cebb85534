"""Find an LLM-quoted error location in the output text and return exact character offsets.

Three rules keep a span on the words the model meant: a normalized or fuzzy match must contain the
location's numbers, dates and names (`anchors`); notes written into a location are instructions, and their
ordinals pick the occurrence (`location_notes`); among several occurrences the explanation's cues are
looked for in each occurrence's clause, and a span the cues do not decide is marked ambiguous
(`occurrences`).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz

from evaluation.engine.anchors import Anchors, anchors_of, digits_for_words, missing_anchor
from evaluation.engine.location_notes import Pick, pick_in_explanation, read_location
from evaluation.engine.nlp import doc, nlp
from evaluation.engine.occurrences import choose_occurrence

Match = Literal["exact", "normalized", "fuzzy", "none"]
MultiPart = Literal["", "split", "cover"]
Join = Literal["split", "cover"]

DEFAULT_FUZZY_THRESHOLD = 85.0
# below this many normalized characters a location is too short for fuzzy matching to mean anything
_MIN_FUZZY_CHARS = 6
# a location of a few words is mostly its anchors: "Charlotte at" is not "to Charlotte", so short ones must
# be nearly verbatim to match fuzzily
_SHORT_TOKENS = 3
_SHORT_THRESHOLD = 92.0
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


# ---------------------------------------------------------------------------------------------
# normalization with an index map back into the original string

_QUOTES = set("\"'`´‘’‚‛′“”„‟″«»‹›")
_DASHES = set("‐‑‒–—―−")
_STRIP_EDGES = ".,;:!?…-" + "".join(_QUOTES)


def normalize_with_map(text: str, *, keep_spaces: bool) -> tuple[str, list[int]]:
    """Return (normalized text, index map): map[k] is the offset in `text` of normalized char k.

    Normalization: NFKC per character, lower case, quotes and apostrophes dropped, dashes unified to
    '-', the ellipsis character spelled '...', whitespace dropped (or collapsed to one space when
    keep_spaces). Dropping whitespace makes tokenized text ("do n't", "( x )", "non - binding") meet its
    ordinary spelling.
    """
    chars: list[str] = []
    index: list[int] = []
    previous_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if keep_spaces and not previous_space:
                chars.append(" ")
                index.append(i)
                previous_space = True
            continue
        if ch in _QUOTES:
            continue
        if ch in _DASHES:
            mapped = "-"
        elif ch == "…":
            mapped = "..."
        else:
            mapped = unicodedata.normalize("NFKC", ch).lower()
        for out in mapped:
            if out.isspace():
                continue
            chars.append(out)
            index.append(i)
        previous_space = False
    if keep_spaces and chars and chars[-1] == " ":
        chars.pop()
        index.pop()
    return "".join(chars), index


def _original_range(index: list[int], start: int, end: int, text: str) -> tuple[int, int]:
    """Map a normalized [start, end) to original offsets covering whole original characters."""
    first = index[start]
    last = index[end - 1]
    return first, last + 1 if last < len(text) else len(text)


def _at_word_boundary(text: str, start: int, end: int) -> bool:
    before_ok = start == 0 or not (text[start - 1].isalnum() and text[start].isalnum())
    after_ok = end >= len(text) or not (text[end - 1].isalnum() and text[end].isalnum())
    return before_ok and after_ok


def _occurrences(needle: str, haystack: str) -> list[int]:
    found = []
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


# ---------------------------------------------------------------------------------------------
# single-part alignment


def _find_exact(location: str, output: str) -> list[tuple[int, int]]:
    spans = [(s, s + len(location)) for s in _occurrences(location, output)]
    bounded = [sp for sp in spans if _at_word_boundary(output, *sp)]
    return bounded or spans


def _find_normalized(location: str, output: str, anchors: Anchors | None = None) -> list[tuple[int, int]]:
    """Return occurrences of the normalized location, first as it is, then without edge punctuation."""
    full, _ = normalize_with_map(location, keep_spaces=False)
    out_norm, index = normalize_with_map(output, keep_spaces=False)
    anchors = anchors if anchors is not None else anchors_of(location)
    for needle in (full, full.strip(_STRIP_EDGES)):
        if not needle:
            continue
        spans = [_original_range(index, s, s + len(needle), output) for s in _occurrences(needle, out_norm)]
        spans = [
            sp for sp in spans
            if _at_word_boundary(output, *sp) and missing_anchor(anchors, output[sp[0] : sp[1]]) is None
        ]
        if spans:
            return spans
    return []


def _token_bounds(output: str, index: list[int]) -> list[tuple[int, int, int, int]]:
    """Return (soft start, soft end, original start, original end) of each spaCy token of the output
    that has characters in the soft-normalized text; `index` is that text's map to original offsets."""
    bounds = []
    for token in doc(output):
        if token.is_space:
            continue
        o_start, o_end = token.idx, token.idx + len(token.text)
        s_start = bisect_left(index, o_start)
        s_end = bisect_left(index, o_end)
        if s_end > s_start:
            bounds.append((s_start, s_end, o_start, o_end))
    return bounds


def _find_fuzzy(
    location: str, output: str, threshold: float, *, anchored: bool = True
) -> tuple[tuple[int, int], float] | None:
    """Return the token window of the output most similar to the location (fuzz.ratio on soft-normalized
    text, written numbers as digits) when it scores at least `threshold` and keeps the location's anchors;
    windows span the location's token count +- a third."""
    loc_soft, _ = normalize_with_map(location, keep_spaces=True)
    loc_soft = digits_for_words(loc_soft.strip(_STRIP_EDGES + " "))
    if len(loc_soft.replace(" ", "")) < _MIN_FUZZY_CHARS:
        return None
    out_soft, index = normalize_with_map(output, keep_spaces=True)
    bounds = _token_bounds(output, index)
    if not bounds:
        return None
    anchors = anchors_of(location) if anchored else Anchors((), frozenset(), ())
    n_tokens = sum(1 for token in nlp().make_doc(location) if not token.is_space)
    delta = max(2, n_tokens // 3)
    best_score = max(threshold, _SHORT_THRESHOLD) if n_tokens <= _SHORT_TOKENS and anchored else threshold
    best: tuple[int, int] | None = None
    for i in range(len(bounds)):
        for length in range(max(1, n_tokens - delta), n_tokens + delta + 1):
            j = i + length - 1
            if j >= len(bounds):
                break
            candidate = digits_for_words(out_soft[bounds[i][0] : bounds[j][1]])
            score = fuzz.ratio(loc_soft, candidate, score_cutoff=best_score)
            if not (score > best_score or (best is None and score >= best_score)):
                continue
            window = (bounds[i][2], bounds[j][3])
            if missing_anchor(anchors, output[window[0] : window[1]]) is None:
                best_score, best = score, window
    if best is None:
        return None
    return best, best_score


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
        exact = _find_exact(location.strip(), output)
        if exact:
            return found(exact, "exact")
        normalized = _find_normalized(location, output)
        if normalized:
            return found(normalized, "normalized")
        fuzzy = _find_fuzzy(location, output, threshold)
        if fuzzy is not None:
            span, score = fuzzy
            return found([span], "fuzzy", f"fuzzy score {score:.0f}")
    return AlignedSpan(None, None, text, "none", multi_part, False, _absent_note(location, output, threshold), "")


def _absent_note(location: str, output: str, threshold: float) -> str:
    """Say why nothing was found; a near miss that changes a number or name is named, since it is the
    typical hallucinated location (the model misread "12 threes" as "15 threes")."""
    anchors = anchors_of(location)
    near = _find_fuzzy(location, output, threshold, anchored=False) if anchors else None
    if near is not None:
        (start, end), _ = near
        missing = missing_anchor(anchors, output[start:end])
        return f"not found in the output; the nearest text {output[start:end]!r} lacks {missing!r}"
    return "not found in the output"


# ---------------------------------------------------------------------------------------------
# public entry point

_PART_SPLIT = re.compile(r"\s*(?:\.\s?\.\s?\.|…)\s*")


def split_location(location: str) -> list[str]:
    """Return the non-empty parts of a location joined with '...' or '…' (leading/trailing ones are
    truncation marks, not joins)."""
    return [part for part in _PART_SPLIT.split(location) if part.strip(_STRIP_EDGES + " ")]


def _first_part_pick(parts: list[str], output: str) -> tuple[Pick | None, int]:
    """Return the occurrence of the first part that the second part follows most closely, or (when several
    are as close) where the closest ones begin: the parts of one '...'-joined location quote one stretch of
    text, so of a first part that occurs twice the nearer one is meant."""
    firsts = sorted(_find_exact(parts[0].strip(), output) or _find_normalized(parts[0], output))
    seconds = _find_exact(parts[1].strip(), output) or _find_normalized(parts[1], output)
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
    if not (_find_exact(location.strip(), output) or _find_normalized(location, output)):
        read = read_location(location)
        location = read.text or location
        pick = read.pick or pick_in_explanation(explanation, location)
    parts = split_location(location)
    if len(parts) <= 1:
        single = parts[0] if parts else location
        return [_align_one(single, output, explanation=explanation, threshold=threshold, pick=pick, written=written)]
    # the whole location may occur verbatim (the output itself contains '...')
    whole = _find_exact(location.strip(), output) or _find_normalized(location, output)
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
