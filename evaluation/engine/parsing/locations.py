"""A Location value cleaned: quotes, descriptions and comments removed, "no span" recognised."""

from __future__ import annotations

import re

from evaluation.engine.alignment.notes import pick_in
from evaluation.engine.parsing.lines import strip_emphasis as _strip_emphasis

# a Location value that gives no span; the keyword must stand alone or be followed by a remark
_NO_LOCATION = re.compile(
    r"^[\s(\[]*(?:"
    r"(?:omission|omitted|missing|not\s+present)\b.*"
    r"|(?:none|n/?a|null|nil|-+|—|not\s+applicable|no\s+(?:specific\s+)?(?:location|span)"
    r"|(?:the\s+)?(?:entire|whole|overall)\s+(?:text|summary|response|story|answer|output|translation"
    r"|simplified\s+text|passage))"
    r"[\s)\].]*(?:[(:\-–—,;].*)?"
    r")$",
    re.IGNORECASE | re.DOTALL,
)
# what may follow a quoted location and count as a comment about it (rather than more output text)
_COMMENT_AFTER_QUOTE = re.compile(r"^(?:[(\[:;,\-–—]|(?:is|was|are|which|this|that|because|since)\b)")
_QUOTE_PAIRS = {'"': '"', "“": "”", "”": "”", "„": "“", "‘": "’", "'": "'", "`": "`", "«": "»", "‹": "›"}
_ELLIPSIS_JOIN = re.compile(r"^\s*(?:\.{3}|…|,|;|and|\+|/)\s*$", re.IGNORECASE)
_LOCATION_PREFIX = re.compile(
    r"^(?:(?:in|at)\s+)?(?:the\s+)?(?:(?:first|second|third|fourth|fifth|last|final|opening|closing)\s+)?"
    r"(?:phrase|word|words|sentence|span|term|clause|part|text|line|segment|passage|ending|beginning|"
    r"expression|response|summary|story|answer|paragraph)\b[^\"“”‘’`']*$|"
    r"^(?:sentence|line|paragraph|turn)\s*\d+\s*[:,\-–]?\s*$",
    re.IGNORECASE,
)
# a slot of the answer format copied as it stands ("<the exact words>"): a description of a location, not one
_PLACEHOLDER = re.compile(r"^<\s*[^<>\s]+(?:\s+[^<>\s]+)+\s*>$")
_COMMENT_START = re.compile(
    r"^(?:this|which|that|the|it|its|should|incorrect|wrong|not|missing|error|implies|refers|"
    r"inconsistent|unsupported|repeated|redundant|omitted|i\.e\.|e\.g\.|see|as|because|since|"
    r"contradicts|hallucinated|unclear|here|where)\b",
    re.IGNORECASE,
)




def clean_location(raw: str) -> tuple[str | None, list[str]]:
    """Return (location or None, notes) from a Location value: quotes and comments removed."""
    notes: list[str] = []
    text = _strip_emphasis(raw).strip()
    if not text:
        return None, ["location is empty"]
    segments, rest_start = _quoted_segments(text)
    prefix = text[: segments[0][0]].strip() if segments else ""
    if prefix and not _LOCATION_PREFIX.match(prefix.rstrip(":").strip()):
        # quotes are part of the text itself ("the "best" pizza"): keep the value as it is
        segments = []
    rest = text[rest_start:].strip() if segments else ""
    if segments and rest and not _COMMENT_AFTER_QUOTE.match(rest):
        # text goes on after the closing quote: the quotes belong to the output ("Hi," he said)
        segments = []
    if segments:
        parts = [seg for _, seg in segments]
        if prefix:
            notes.append(f"description {prefix!r} removed from location")
        if rest:
            notes.append(f"comment {rest!r} removed from location")
        location = " ... ".join(p for p in parts if p)
        if not location.strip():
            return None, [*notes, "location is empty"]
        if len(parts) > 1:
            notes.append("several quoted spans joined with '...'")
        # an ordinal in a removed remark ("(second mention)", "In the first sentence:") says which
        # occurrence is meant: it stays, in brackets, for the aligner to read
        cues = [pick.cue for removed in (prefix, rest) if removed and (pick := pick_in(removed)) is not None]
        if cues:
            location = f"{location} ({cues[0]})"
        return location, notes
    if _NO_LOCATION.match(text):
        return None, [f"no span given (location {text!r})"]
    if _PLACEHOLDER.match(text):
        return None, [f"no span given: a placeholder copied from the answer format ({text!r})"]
    # unquoted: strip a trailing parenthetical remark that reads like a comment
    paren = re.match(r"^(?P<loc>.+?)\s+\((?P<comment>[^()]+)\)\s*[.]?$", text)
    if paren and _COMMENT_START.match(paren.group("comment").strip()):
        notes.append(f"comment {paren.group('comment')!r} removed from location")
        text = paren.group("loc").strip()
    return text, notes


def _quoted_segments(text: str) -> tuple[list[tuple[int, str]], int]:
    """Return the leading run of quoted segments [(start, inner)] and where the rest begins.

    Segments may be joined by '...', '…', commas or 'and'; a single-quote run that is followed by more
    text with apostrophes is resolved by taking the last closing quote of the run.
    """
    segments: list[tuple[int, str]] = []
    start = _first_quote(text)
    if start is None:
        return [], 0
    pos = start
    while True:
        opening = text[pos]
        closing = _QUOTE_PAIRS[opening]
        end = _closing_quote(text, pos, opening, closing)
        if end is None:
            # no closing quote: take everything after the opening one
            segments.append((pos, text[pos + 1 :].strip()))
            return segments, len(text)
        segments.append((pos, text[pos + 1 : end]))
        after = end + 1
        nxt = _first_quote(text, after)
        if nxt is None or not _ELLIPSIS_JOIN.match(text[after:nxt] or " "):
            if nxt is not None and text[after:nxt].strip() == "":
                # two adjacent quoted parts without a joiner: treat as separate too
                pos = nxt
                continue
            return segments, after
        pos = nxt


def _first_quote(text: str, start: int = 0) -> int | None:
    for i in range(start, len(text)):
        ch = text[i]
        if ch in _QUOTE_PAIRS and ch not in "”’»›":
            if ch == "'" and i > 0 and text[i - 1].isalnum():
                continue  # an apostrophe, not a quote
            return i
    return None


def _inside_word(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def _closing_quote(text: str, pos: int, opening: str, closing: str) -> int | None:
    candidates = [i for i in range(pos + 1, len(text)) if text[i] == closing or text[i] == opening]
    if closing in "'’":
        # apostrophes inside words are not closing quotes
        candidates = [i for i in candidates if not _inside_word(text, i)]
    if opening in "“„" and closing not in text[pos + 1 :]:
        candidates = [i for i in range(pos + 1, len(text)) if text[i] in "\"”“"]
    return candidates[0] if candidates else None

