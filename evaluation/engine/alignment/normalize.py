"""Normalization with an index map back into the original string, so a loose match maps to exact offsets."""

from __future__ import annotations

import unicodedata

_QUOTES = set("\"'`´‘’‚‛′“”„‟″«»‹›")
_DASHES = set("‐‑‒–—―−")
STRIP_EDGES = ".,;:!?…-" + "".join(_QUOTES)


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


def original_range(index: list[int], start: int, end: int, text: str) -> tuple[int, int]:
    """Map a normalized [start, end) to original offsets covering whole original characters."""
    first = index[start]
    last = index[end - 1]
    return first, last + 1 if last < len(text) else len(text)
