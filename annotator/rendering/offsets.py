"""Offsets as the page counts them: CR LF folded into one character (the HTML parser does so); code points
otherwise, the browser converts its UTF-16 units at its own edge (static/js/annotate/codepoints.js)."""

from __future__ import annotations


def to_browser_offset(text: str, offset: int) -> int:
    """Return the page's offset of stored offset `offset` (CR LF pairs before it count once)."""
    if "\r" not in text:
        return offset
    inside_pair = 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n"
    return offset - text.count("\r\n", 0, offset) - inside_pair


def from_browser_offset(text: str, offset: int) -> int:
    """Return the stored offset of page offset `offset`: the inverse of to_browser_offset at every boundary
    the page can show (never between the CR and LF of a pair)."""
    if "\r" not in text:
        return offset
    seen = 0
    i = 0
    while i < len(text) and seen < offset:
        i += 2 if text.startswith("\r\n", i) else 1
        seen += 1
    return i
