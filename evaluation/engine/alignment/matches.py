"""Where a phrase occurs in the output: verbatim, normalized, or as the most similar token window (fuzzy).

A normalized or fuzzy candidate must keep the phrase's numbers, dates and names (`anchors`).
"""

from __future__ import annotations

from bisect import bisect_left

from rapidfuzz import fuzz

from evaluation.engine.alignment.anchors import Anchors, anchors_of, digits_for_words, missing_anchor
from evaluation.engine.alignment.nlp import doc, nlp
from evaluation.engine.alignment.normalize import STRIP_EDGES, normalize_with_map, original_range

# below this many normalized characters a location is too short for fuzzy matching to mean anything
_MIN_FUZZY_CHARS = 6
# a location of a few words is mostly its anchors: "Charlotte at" is not "to Charlotte", so short ones must
# be nearly verbatim to match fuzzily
_SHORT_TOKENS = 3
_SHORT_THRESHOLD = 92.0


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


def find_exact(location: str, output: str) -> list[tuple[int, int]]:
    spans = [(s, s + len(location)) for s in _occurrences(location, output)]
    bounded = [sp for sp in spans if _at_word_boundary(output, *sp)]
    return bounded or spans


def find_normalized(location: str, output: str, anchors: Anchors | None = None) -> list[tuple[int, int]]:
    """Return occurrences of the normalized location, first as it is, then without edge punctuation."""
    full, _ = normalize_with_map(location, keep_spaces=False)
    out_norm, index = normalize_with_map(output, keep_spaces=False)
    anchors = anchors if anchors is not None else anchors_of(location)
    for needle in (full, full.strip(STRIP_EDGES)):
        if not needle:
            continue
        spans = [original_range(index, s, s + len(needle), output) for s in _occurrences(needle, out_norm)]
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


def find_fuzzy(
    location: str, output: str, threshold: float, *, anchored: bool = True
) -> tuple[tuple[int, int], float] | None:
    """Return the token window of the output most similar to the location (fuzz.ratio on soft-normalized
    text, written numbers as digits) when it scores at least `threshold` and keeps the location's anchors;
    windows span the location's token count +- a third."""
    loc_soft, _ = normalize_with_map(location, keep_spaces=True)
    loc_soft = digits_for_words(loc_soft.strip(STRIP_EDGES + " "))
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
