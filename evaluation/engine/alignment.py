"""Find an LLM-quoted error location in the output text and return exact character offsets."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from rapidfuzz import fuzz

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

Match = Literal["exact", "normalized", "fuzzy", "none"]
MultiPart = Literal["", "split", "cover"]
Join = Literal["split", "cover"]

DEFAULT_FUZZY_THRESHOLD = 85.0
# below this many normalized characters a location is too short for fuzzy matching to mean anything
_MIN_FUZZY_CHARS = 6
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
# spaCy, built once

_NLP: Language | None = None


def _nlp() -> Language:
    global _NLP
    if _NLP is None:
        import spacy

        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        _NLP = nlp
    return _NLP


@lru_cache(maxsize=128)
def _doc(text: str) -> Doc:
    return _nlp()(text)


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
# choosing among several occurrences

_CUE_QUOTED = re.compile(r"[\"“”‘’`']([^\"“”‘’`']{1,80})[\"“”‘’`']")
_CUE_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


_CUE_NAME = re.compile(r"\b[A-Z][\w'-]+")


def _explanation_cues(explanation: str, location: str) -> list[str]:
    """Return normalized cue words of the explanation, minus those of the location itself.

    Cues are the words inside quotes, numbers and capitalised non-stop words (names): the things an
    explanation mentions to say which occurrence it means ("Love scored 18, not 30").
    """
    from spacy.lang.en.stop_words import STOP_WORDS

    loc_norm, _ = normalize_with_map(location, keep_spaces=False)
    cues: set[str] = set()
    for quoted in _CUE_QUOTED.findall(explanation):
        cues.update(w for w in re.findall(r"\w+", quoted) if w.lower() not in STOP_WORDS)
    cues.update(_CUE_NUMBER.findall(explanation))
    cues.update(w for w in _CUE_NAME.findall(explanation) if w.lower() not in STOP_WORDS)
    result = []
    for cue in cues:
        norm, _ = normalize_with_map(cue, keep_spaces=False)
        if len(norm) >= 2 and norm not in loc_norm:
            result.append(norm)
    return sorted(result)


def _sentence_window(output: str, start: int, end: int) -> tuple[int, int]:
    doc = _doc(output)
    w_start, w_end = start, end
    for sent in doc.sents:
        if sent.start_char < end and start < sent.end_char:
            w_start = min(w_start, sent.start_char)
            w_end = max(w_end, sent.end_char)
    return w_start, w_end


# a cue this many normalized characters away from an occurrence counts half as much as an adjacent one
_CUE_HALF_DISTANCE = 20.0
# the best occurrence must beat the runner-up by this factor to count as chosen by context
_CUE_MARGIN = 1.1


def _context_score(output: str, span: tuple[int, int], cues: list[str]) -> float:
    """Return how strongly the explanation's cues surround an occurrence: each cue found in the
    occurrence's sentence adds 1 / (1 + gap / _CUE_HALF_DISTANCE), gap measured to its nearest instance."""
    w_start, w_end = _sentence_window(output, *span)
    before, _ = normalize_with_map(output[w_start : span[0]], keep_spaces=False)
    inside, _ = normalize_with_map(output[span[0] : span[1]], keep_spaces=False)
    window, _ = normalize_with_map(output[w_start:w_end], keep_spaces=False)
    o_start, o_end = len(before), len(before) + len(inside)
    total = 0.0
    for cue in cues:
        gaps = []
        for pos in _occurrences(cue, window):
            cue_end = pos + len(cue)
            gaps.append(max(0, o_start - cue_end, pos - o_end))
        if gaps:
            total += 1.0 / (1.0 + min(gaps) / _CUE_HALF_DISTANCE)
    return total


def _choose(
    candidates: list[tuple[int, int]], output: str, explanation: str, location: str, after: int
) -> tuple[tuple[int, int], bool, str]:
    """Pick one of several (start, end) occurrences; returns (span, ambiguous, note)."""
    if len(candidates) == 1:
        return candidates[0], False, ""
    pool = [c for c in candidates if c[0] >= after] or candidates
    if len(pool) == 1:
        return pool[0], False, f"{len(candidates)} occurrences; took the one after the previous part"
    cues = _explanation_cues(explanation, location)
    if cues:
        scored = sorted(((_context_score(output, c, cues), c) for c in pool), key=lambda sc: -sc[0])
        best, runner_up = scored[0][0], scored[1][0]
        if best > 0 and best >= runner_up * _CUE_MARGIN:
            position = candidates.index(scored[0][1]) + 1
            return (
                scored[0][1],
                False,
                f"{len(candidates)} occurrences; occurrence {position} chosen by the explanation's context",
            )
    return pool[0], True, f"{len(candidates)} occurrences; the first was taken"


# ---------------------------------------------------------------------------------------------
# single-part alignment


def _find_exact(location: str, output: str) -> list[tuple[int, int]]:
    spans = [(s, s + len(location)) for s in _occurrences(location, output)]
    bounded = [sp for sp in spans if _at_word_boundary(output, *sp)]
    return bounded or spans


def _find_normalized(location: str, output: str) -> list[tuple[int, int]]:
    """Return occurrences of the normalized location, first as it is, then without edge punctuation."""
    full, _ = normalize_with_map(location, keep_spaces=False)
    out_norm, index = normalize_with_map(output, keep_spaces=False)
    for needle in (full, full.strip(_STRIP_EDGES)):
        if not needle:
            continue
        spans = [_original_range(index, s, s + len(needle), output) for s in _occurrences(needle, out_norm)]
        spans = [sp for sp in spans if _at_word_boundary(output, *sp)]
        if spans:
            return spans
    return []


def _token_bounds(output: str, index: list[int]) -> list[tuple[int, int, int, int]]:
    """Return (soft start, soft end, original start, original end) of each spaCy token of the output
    that has characters in the soft-normalized text; `index` is that text's map to original offsets."""
    bounds = []
    for token in _doc(output):
        if token.is_space:
            continue
        o_start, o_end = token.idx, token.idx + len(token.text)
        s_start = bisect_left(index, o_start)
        s_end = bisect_left(index, o_end)
        if s_end > s_start:
            bounds.append((s_start, s_end, o_start, o_end))
    return bounds


def _find_fuzzy(location: str, output: str, threshold: float) -> tuple[tuple[int, int], float] | None:
    """Return the token window of the output most similar to the location (fuzz.ratio on soft-normalized
    text) when it scores at least `threshold`; windows span the location's token count +- a third."""
    loc_soft, _ = normalize_with_map(location, keep_spaces=True)
    loc_soft = loc_soft.strip(_STRIP_EDGES + " ")
    if len(loc_soft.replace(" ", "")) < _MIN_FUZZY_CHARS:
        return None
    out_soft, index = normalize_with_map(output, keep_spaces=True)
    bounds = _token_bounds(output, index)
    if not bounds:
        return None
    n_tokens = sum(1 for token in _nlp().make_doc(location) if not token.is_space)
    delta = max(2, n_tokens // 3)
    best_score = threshold
    best: tuple[int, int] | None = None
    for i in range(len(bounds)):
        for length in range(max(1, n_tokens - delta), n_tokens + delta + 1):
            j = i + length - 1
            if j >= len(bounds):
                break
            candidate = out_soft[bounds[i][0] : bounds[j][1]]
            score = fuzz.ratio(loc_soft, candidate, score_cutoff=best_score)
            if score > best_score or (best is None and score >= best_score):
                best_score, best = score, (bounds[i][2], bounds[j][3])
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
) -> AlignedSpan:
    def found(span: tuple[int, int], match: Match, ambiguous: bool = False, note: str = "") -> AlignedSpan:
        start, end = span
        return AlignedSpan(start, end, location, match, multi_part, ambiguous, note, output[start:end])

    if location.strip():
        exact = _find_exact(location.strip(), output)
        if exact:
            return found(*_choose_with_match(exact, "exact", output, explanation, location, after))
        normalized = _find_normalized(location, output)
        if normalized:
            return found(*_choose_with_match(normalized, "normalized", output, explanation, location, after))
        fuzzy = _find_fuzzy(location, output, threshold)
        if fuzzy is not None:
            span, score = fuzzy
            return found(span, "fuzzy", False, f"fuzzy score {score:.0f}")
    return AlignedSpan(None, None, location, "none", multi_part, False, "not found in the output", "")


def _choose_with_match(
    spans: list[tuple[int, int]], match: Match, output: str, explanation: str, location: str, after: int
) -> tuple[tuple[int, int], Match, bool, str]:
    span, ambiguous, note = _choose(spans, output, explanation, location, after)
    return span, match, ambiguous, note


# ---------------------------------------------------------------------------------------------
# public entry point

_PART_SPLIT = re.compile(r"\s*(?:\.\s?\.\s?\.|…)\s*")


def split_location(location: str) -> list[str]:
    """Return the non-empty parts of a location joined with '...' or '…' (leading/trailing ones are
    truncation marks, not joins)."""
    return [part for part in _PART_SPLIT.split(location) if part.strip(_STRIP_EDGES + " ")]


def align_location(
    location: str | None,
    output: str,
    *,
    explanation: str = "",
    join: Join = "split",
    threshold: float = DEFAULT_FUZZY_THRESHOLD,
) -> list[AlignedSpan]:
    """Return the spans of `output` that `location` points at (one per part for '...'-joined locations).

    Order of attempts: exact substring, normalized match, fuzzy match (rapidfuzz, >= threshold, window
    snapped to spaCy tokens). A location that cannot be found gets one span with no offsets. Offsets always
    satisfy output[start:end] == matched_text.
    """
    if location is None or not location.strip():
        return [AlignedSpan(None, None, location or "", "none", "", False, "no location given", "")]
    if not output:
        return [AlignedSpan(None, None, location, "none", "", False, "the output is empty", "")]
    parts = split_location(location)
    if len(parts) <= 1:
        single = parts[0] if parts else location
        return [_align_one(single, output, explanation=explanation, threshold=threshold)]
    # the whole location may occur verbatim (the output itself contains '...')
    whole = _find_exact(location.strip(), output) or _find_normalized(location, output)
    if whole:
        match: Match = "exact" if location.strip() in output else "normalized"
        span, ambiguous, note = _choose(whole, output, explanation, location, 0)
        start, end = span
        return [AlignedSpan(start, end, location, match, "", ambiguous, note, output[start:end])]
    aligned: list[AlignedSpan] = []
    after = 0
    for part in parts:
        span = _align_one(part, output, explanation=explanation, threshold=threshold, after=after,
                          multi_part="split")
        if span.end is not None:
            after = span.end
        aligned.append(span)
    if join == "cover" and all(s.start is not None for s in aligned):
        first, last = aligned[0], aligned[-1]
        if first.start is not None and last.end is not None and last.end > first.start:
            worst = max((s.match for s in aligned), key=lambda m: _MATCH_RANK[m])
            notes = "; ".join(s.note for s in aligned if s.note)
            return [
                AlignedSpan(first.start, last.end, location, worst, "cover",
                            any(s.ambiguous for s in aligned), notes, output[first.start : last.end])
            ]
    return aligned
