"""The facts a location states (numbers, dates, names): a loose match that changes one of them is another claim.

In data-to-text most errors are wrong numbers or names, so "15 threes" must never be taken for the output's
"12 threes" however similar the strings are. A normalized or fuzzy candidate is accepted only when every
anchor of the location is in it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

from evaluation.engine.alignment.nlp import stop_words

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec",
]
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# "may" and "march" are also ordinary words; they count as dates only when capitalised
_DATE_WORDS = frozenset(w for w in _MONTHS + _WEEKDAYS if w not in ("may", "march", "jan", "mar", "sep"))

_WORD = re.compile(r"[A-Za-z][A-Za-z'’.-]*|\d+(?:[.,:]\d+)*")
# a name token may carry a typo ("Irvng") and still be the same name; "Love"/"Lowe" are two players
_NAME_SIMILARITY = 80.0


@dataclass(frozen=True)
class Anchors:
    numbers: tuple[str, ...]  # with repeats: "0-3 3Pt" states 3 twice
    dates: frozenset[str]
    names: tuple[str, ...]  # lower-cased

    def __bool__(self) -> bool:
        return bool(self.numbers or self.dates or self.names)


def _number_value(word: str) -> str | None:
    """Return a canonical number for a digit or written number word ("1,234" -> "1234", "twenty-one" -> "21")."""
    lowered = word.lower().strip(".")
    if lowered[:1].isdigit():
        digits = re.sub(r"(?<=\d),(?=\d{3}\b)", "", lowered)
        return digits.rstrip(".")
    if lowered in _UNITS:
        return str(_UNITS[lowered])
    if lowered in _TENS:
        return str(_TENS[lowered])
    head, _, tail = lowered.partition("-")
    if head in _TENS and tail in _UNITS and 0 < _UNITS[tail] < 10:
        return str(_TENS[head] + _UNITS[tail])
    if tail and (head in _UNITS or head in _TENS):  # "three-pointers", "four-game"
        return str(_UNITS.get(head, _TENS.get(head)))
    # ordinals ("first quarter") are left out: they are cue words as often as numbers
    return None


def anchors_of(text: str) -> Anchors:
    """Return the numbers, dates and capitalised names a piece of text states."""
    words = _WORD.findall(text)
    numbers = sorted(value for w in words if (value := _number_value(w)) is not None)
    dates = {w.lower() for w in words if w.lower() in _DATE_WORDS or (w in ("May", "March"))}
    shouting = sum(1 for w in words if w.isalpha()) > 1 and all(w.isupper() for w in words if w.isalpha())
    stops = stop_words()
    names: list[str] = []
    if not shouting:  # an all-capitals location says nothing about which words are names
        for w in words:
            bare = w.strip(".'’-")
            if bare[:1].isupper() and bare.lower() not in stops and _number_value(bare) is None:
                names.append(bare.lower())
    return Anchors(tuple(numbers), frozenset(dates), tuple(dict.fromkeys(names)))


def missing_anchor(location: Anchors, candidate_text: str) -> str | None:
    """Return the first anchor of the location that the candidate text lacks, or None when all are there."""
    if not location:
        return None
    found = anchors_of(candidate_text)
    lacking = Counter(location.numbers) - Counter(found.numbers)
    if lacking:
        return min(lacking)
    for date in sorted(location.dates):
        if date not in found.dates:
            return date
    words = [w.strip(".'’-").lower() for w in _WORD.findall(candidate_text)]
    for name in location.names:
        if not any(w == name or (len(name) >= 4 and fuzz.ratio(w, name) >= _NAME_SIMILARITY) for w in words):
            return name
    return None


_NUMBER_WORD = re.compile(r"\b[a-z]+(?:-[a-z]+)?\b")


def digits_for_words(text: str) -> str:
    """Return lower-case text with written numbers as digits ("twenty-one" -> "21"), for fuzzy comparison."""

    def value(match: re.Match[str]) -> str:
        word = match.group(0)
        head, _, tail = word.partition("-")
        if word in _UNITS or word in _TENS or (head in _TENS and tail in _UNITS):
            return _number_value(word) or word
        return word

    return _NUMBER_WORD.sub(value, text)
