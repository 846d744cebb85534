"""Read the remarks LLMs write into a location: they are instructions ("(second mention)"), not output text.

`read_location` strips parenthesised or bracketed notes, a trailing "in the second paragraph", a leading
"The phrase" and quotes around the phrase, and returns the ordinal cue they carry ("second", "last",
"2nd", "sentence 3") as a `Pick` that chooses among several occurrences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Unit = Literal["occurrence", "sentence", "paragraph", "line"]

_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "last": -1, "final": -1,
}
_ORD = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|\d{1,2}(?:st|nd|rd|th))"
_OCC_UNIT = r"(?:occurrences?|mentions?|instances?|appearances?|times?|uses?|usages?|ones?)"
_TEXT_UNIT = r"(?:sentences?|paragraphs?|paras?|lines?)"
_UNIT = rf"(?:{_OCC_UNIT}|{_TEXT_UNIT})"
# "second mention", "the 2nd occurrence", "sentence 3", "occurrence #2", "paragraph two"
_CUE = re.compile(
    rf"\b(?:the\s+)?(?P<ord>{_ORD})\s+(?:(?:\w+\s+)?(?:of\s+)?)?(?P<unit>{_UNIT})\b"
    rf"|\b(?P<unit2>{_UNIT})\s*(?:no\.?\s*|#\s*)?(?P<num>\d{{1,2}}|{_ORD})\b",
    re.IGNORECASE,
)
# what an explanation may use to point at an occurrence; "the second time he scored" is not such a pointer
_EXPLANATION_CUE = re.compile(
    rf"\b(?P<ord>{_ORD})\s+(?P<unit>occurrences?|mentions?|instances?|sentences?|paragraphs?)\b",
    re.IGNORECASE,
)
_ORDINAL_QUOTE = re.compile(
    rf"\b(?P<ord>{_ORD})\s+(?:(?:occurrence|mention|instance|use)\s+of\s+)?[\"“‘'`](?P<quote>[^\"”’'`]{{1,120}})",
    re.IGNORECASE,
)
_BARE_ORDINAL = re.compile(rf"^\s*(?P<ord>{_ORD})(?:\s+(?:one|time|use))?\s*$", re.IGNORECASE)
# words that make a bracketed remark a note about the location rather than quoted text
_NOTE_WORDS = re.compile(
    r"\b(?:occurrences?|mentions?|instances?|appearances?|repeated|repeats?|again|twice|thrice|sentences?|"
    r"paragraphs?|lines?|see|cf|i\.e|e\.g|note|this|that|which|here|where|refers?|referring|should|"
    r"incorrect|wrong|error|not|missing|implies|implied|hallucinated|unsupported|verbatim|quoted|"
    r"approx(?:imately)?|roughly|partial|paraphrased?|near|around|towards?|beginning|end|middle|start)\b",
    re.IGNORECASE,
)
_QUOTES = {'"': '"', "“": "”", "„": "“", "‘": "’", "'": "'", "`": "`", "«": "»", "‹": "›", "”": "”"}
_TRAILING_BRACKET = re.compile(r"\s*[(\[](?P<note>[^()\[\]]*)[)\]]\s*[.,;:]?\s*$")
_LEADING_BRACKET = re.compile(r"^\s*[(\[](?P<note>[^()\[\]]*)[)\]]\s*[:,\-–—]?\s*")
# outside brackets only unmistakable units count: "scored for the second time" is output text
_PLACE_UNIT = rf"(?:occurrences?|mentions?|instances?|appearances?|{_TEXT_UNIT})"
_PLACE = rf"(?:(?:the\s+)?{_ORD}\s+{_PLACE_UNIT}|{_PLACE_UNIT}\s*(?:no\.?\s*|#\s*)?(?:\d{{1,2}}|{_ORD}))"
_TRAILING_PLACE = re.compile(
    rf"(?:\s*[,;:–—-]\s*|\s+)(?:(?:in|from|of|at|on)\s+)?(?P<note>{_PLACE})\s*[.)]?\s*$", re.IGNORECASE
)
_LEADING_PLACE = re.compile(
    rf"^\s*(?:(?:in|from|at|on)\s+)?(?P<note>{_PLACE})\s*[:,\-–—]\s*", re.IGNORECASE
)
_LEADING_LABEL = re.compile(
    r"^\s*(?P<note>(?:the\s+)?(?:phrase|words?|expression|term|sentence|clause|text|part|passage|span|"
    r"mention\s+of|use\s+of))(?:\s*:\s*|\s+(?=[\"“„‘'`«‹]))",
    re.IGNORECASE,
)
_LEADING_THE_LABEL = re.compile(
    r"^\s*(?P<note>the\s+(?:phrase|words?|expression|term))\s+(?=\S)", re.IGNORECASE
)


@dataclass(frozen=True)
class Pick:
    """Which occurrence a note asks for: the nth (1-based; -1 is the last) occurrence, sentence, ..."""

    nth: int
    unit: Unit
    cue: str


@dataclass(frozen=True)
class ReadLocation:
    text: str  # the phrase to look for
    pick: Pick | None
    notes: tuple[str, ...]  # the remarks removed, as written


def _ordinal_value(word: str) -> int | None:
    lowered = word.lower()
    if lowered in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[lowered]
    digits = re.match(r"\d+", lowered)
    return int(digits.group(0)) if digits and int(digits.group(0)) > 0 else None


def _unit_of(word: str) -> Unit:
    lowered = word.lower()
    if lowered.startswith("sentence"):
        return "sentence"
    if lowered.startswith("para"):
        return "paragraph"
    if lowered.startswith("line"):
        return "line"
    return "occurrence"


def pick_in(note: str) -> Pick | None:
    """Return the ordinal cue of a note ("second mention", "[2nd]", "sentence 3"), if it has one."""
    match = _CUE.search(note)
    if match:
        if match.group("ord"):
            nth, unit = _ordinal_value(match.group("ord")), _unit_of(match.group("unit"))
        else:
            nth, unit = _ordinal_value(match.group("num")), _unit_of(match.group("unit2"))
        if nth is not None:
            return Pick(nth, unit, match.group(0).strip())
    bare = _BARE_ORDINAL.match(note)
    if bare:
        nth = _ordinal_value(bare.group("ord"))
        if nth is not None:
            return Pick(nth, "occurrence", note.strip())
    return None


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def pick_in_explanation(explanation: str, location: str = "") -> Pick | None:
    """Return an explicit pointer of the explanation: "the second mention", "in the first sentence", or an
    ordinal in front of the quoted location ('the second "He said"')."""
    match = _EXPLANATION_CUE.search(explanation)
    if match:
        nth = _ordinal_value(match.group("ord"))
        if nth is not None:
            return Pick(nth, _unit_of(match.group("unit")), match.group(0))
    wanted = _squash(location)
    for quoted in _ORDINAL_QUOTE.finditer(explanation):
        said = _squash(quoted.group("quote"))
        nth = _ordinal_value(quoted.group("ord"))
        if wanted and said and (said == wanted or wanted.startswith(said)) and nth is not None:
            return Pick(nth, "occurrence", quoted.group(0))
    return None


def _is_note(note: str) -> bool:
    return bool(note.strip()) and (pick_in(note) is not None or bool(_NOTE_WORDS.search(note)))


def _unquote(text: str) -> str | None:
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] in _QUOTES and stripped[-1] == _QUOTES[stripped[0]]:
        inner = stripped[1:-1]
        if not any(q in inner for q in (stripped[0], _QUOTES[stripped[0]])) or stripped[0] == "'":
            return inner.strip()
    return None


def read_location(location: str) -> ReadLocation:
    """Return the phrase a location quotes, the occurrence its notes ask for and the notes removed."""
    text = location.strip()
    notes: list[str] = []
    pick: Pick | None = None
    for _ in range(8):  # each pass removes one note; locations carry few
        before = text
        for pattern, is_note in (
            (_TRAILING_BRACKET, _is_note), (_LEADING_BRACKET, _is_note), (_TRAILING_PLACE, None),
            (_LEADING_PLACE, None), (_LEADING_LABEL, None), (_LEADING_THE_LABEL, None),
        ):
            match = pattern.search(text)
            if not match or (is_note is not None and not is_note(match.group("note"))):
                continue
            rest = (text[: match.start()] + text[match.end() :]).strip()
            if not rest.strip(" .,;:-–—\"'“”‘’"):
                continue
            note = match.group("note").strip()
            notes.append(note)
            pick = pick or pick_in(note)
            text = rest
            break
        unquoted = _unquote(text)
        if unquoted:
            text = unquoted
        if text == before:
            break
    return ReadLocation(text, pick, tuple(notes))
