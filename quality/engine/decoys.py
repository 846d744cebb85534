"""Decoy stretches and explanations, Django-free: the stretches of an output a decoy may mark (the input supports
every fact in them, dates included, and they start and end where phrases do), and a donor's explanation made about
one of them.

A decoy copies a donor, a real machine span of the campaign (quality.engine.drawing chooses which and where). Its
explanation is the donor's, with the donor's marked words, numbers and names swapped for the decoy's, so it keeps
the evaluator's voice and answer format but claims a supported stretch is wrong: the claim a careful expert rejects.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from stats.overlap import shared_chars

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
# A number standing alone: not one part of a time, season or size ("17:00", "23/24", "240x320").
_LONE_NUMBER = re.compile(r"(?<![\w.:/])\d+(?:[.,]\d+)?(?![\w]|[:/]\d)")
_NAME = re.compile(r"\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")
_CLAUSE = re.compile(r"(?:[^.;:!?,\n]|[.;:!?,](?!\s|$))+")  # a mark ends a clause when a space follows (not 2.5)
_WORD = re.compile(r"\S+")
# Phrases that state one fact in several words ("3 out of 5", "7 of 10", "1 in 4", "from 3 to 5", "between 2 and
# 4"): a stretch marks them whole or not at all, since "3 out" or "of 5" reads as cut out of its phrase.
_N = r"\d+(?:[.,]\d+)?"
_BOUND = re.compile(rf"\b(?:{_N}\s+(?:out\s+of|of|in|for|to)\s+{_N}|from\s+{_N}\s+to\s+{_N}"
                    rf"|between\s+{_N}\s+and\s+{_N})\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?:[^.;!?\n]|[.;!?](?!\s|$))+")
# Words an evaluator's span seldom ends on, nor (but "the") begins with: a stretch cut there reads as a cut.
_STOP = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "for", "with", "and", "or", "but", "is", "was",
                   "are", "were", "be", "been", "has", "had", "have", "will", "by", "from", "as", "it", "its",
                   "that", "which", "who", "this", "than", "then", "their", "his", "her"})
_OPENERS = _STOP - {"the"}
_NUMBER_ONLY = re.compile(r"^\W*\d[\d.,]*\W*$")
_CAPITALISED = re.compile(r"^[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*$")
KINDS = ("number", "name", "phrase", "clause")


def span_kind(text: str) -> str:
    """The kind of stretch a span marks: a number, a name, a phrase (up to four words) or a clause (longer)."""
    if _NUMBER_ONLY.match(text):
        return "number"
    words = text.split()
    if words and _CAPITALISED.match(text.strip(" .,;:")):
        return "name"
    return "phrase" if len(words) <= 4 else "clause"


def natural_edges(output: str, start: int, end: int) -> tuple[bool, bool]:
    """Does the stretch start and end where a phrase does: at the text's or a clause's edge, or beside a function
    word ("of [4.19 m/s]", "[the high] is")? Most evaluators' spans do on both sides; a stretch that does not reads
    as cut out of its phrase."""
    before, after = output[:start].rstrip(), output[end:].lstrip()
    previous, following = before.rsplit(None, 1)[-1:] , after.split(None, 1)[:1]
    opens = not before or before[-1] in ".,;:!?()[]\"'" or (bool(previous) and previous[0].lower() in _STOP)
    closes = (not after or output[end:end + 1] in ".,;:!?)]\"'"
              or (bool(following) and following[0].lower().strip(".,;:") in _STOP))
    return opens, closes


@dataclass(frozen=True)
class Candidate:
    """A stretch of the output a decoy may mark: [start, end) in code points, and its kind."""

    start: int
    end: int
    text: str
    what: str  # one of KINDS
    ambiguous: bool = False  # the text occurs more than once in the output (the card then says so)


@dataclass(frozen=True)
class Donor:
    """A real machine span a decoy is modelled on: its evaluator label, what its card says, where it sits."""

    label: str
    text: str
    explanation: str
    severity: int | None
    category: str
    aspect: str
    position: float  # start as a share of its output's length
    ambiguous: bool = False
    match: str = "exact"  # how the aligner found its location: exact, normalized or fuzzy

    @property
    def kind(self) -> str:
        return span_kind(self.text)


def _overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(shared_chars((start, end), span) for span in taken)


def _names(text: str) -> list[re.Match]:
    return [m for m in _NAME.finditer(text)
            if not (_SENTENCE_START.search(text[: m.start()]) and " " not in m.group(0))]  # a sentence's capital


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?P<{g}>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?)"
_DATE = re.compile(
    r"\b(?:" + _MONTH.format(g="m1") + r"\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?"
    r"|(?:the\s+)?(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH.format(g="m2") + r")\b")


def _month(word: str) -> int | None:
    word = word.lower().rstrip(".")
    found = [i for i, name in enumerate(_MONTHS, 1) if name.startswith(word) and len(word) >= 3]
    return found[0] if found else None


def _dates(output: str) -> list[tuple[int, int, str]]:
    """The output's calendar dates ("January 4th", "the 6th of January"), each as a fact keyed by its month and day
    ("date:01-04"): data often gives dates as 2024-01-04 or as timestamps' text, never in the output's words."""
    found = []
    for match in _DATE.finditer(output):
        month = _month(match.group("m1") or match.group("m2"))
        day = int(match.group("d1") or match.group("d2"))
        if month is not None and 1 <= day <= 31:
            found.append((match.start(), match.end(), f"date:{month:02d}-{day:02d}"))
    return found


def _facts(output: str) -> list[tuple[int, int, str]]:
    """The output's checkable facts, where they stand: its dates, numbers and names (read in the whole output's
    context, so a capital that only opens a sentence is no name; a number or month inside a date is the date)."""
    dates = _dates(output)
    found = [(m.start(), m.end(), m.group(0)) for m in _NUMBER.finditer(output)]
    found += [(m.start(), m.end(), m.group(0)) for m in _names(output)]
    return sorted(dates + [f for f in found if not _overlaps(f[0], f[1], [(a, b) for a, b, _ in dates])])


def _in_input(fact: str, inputs_text: str) -> bool:
    """A fact the input states: its words, or for a date its month and day in ISO form (2024-01-04) or in words."""
    if not fact.startswith("date:"):
        return fact in inputs_text
    month, day = (int(v) for v in fact[5:].split("-"))
    if re.search(rf"\d{{4}}-{month:02d}-{day:02d}\b", inputs_text):
        return True
    return any(_month(m.group("m1") or m.group("m2")) == month and int(m.group("d1") or m.group("d2")) == day
               for m in _DATE.finditer(inputs_text))


def _supported(start: int, end: int, facts: Sequence[tuple[int, int, str]], inputs_text: str) -> bool:
    """Every fact the stretch touches is in the input, and it touches at least one (something to check)."""
    touched = [text for a, b, text in facts if shared_chars((a, b), (start, end))]
    inside = all(start <= a and b <= end for a, b, _ in facts if shared_chars((a, b), (start, end)))
    return bool(touched) and inside and all(_in_input(text, inputs_text) for text in touched)


def decoy_candidates(output: str, inputs_text: str, taken: Sequence[tuple[int, int]]) -> list[Candidate]:
    """Stretches of the output whose facts the input contains (so a claim that they are wrong does not hold),
    overlapping no span in `taken`, in text order: numbers, names, clauses and the phrases around a fact."""
    found: dict[tuple[int, int], Candidate] = {}
    facts = _facts(output)
    bound = [(m.start(), m.end()) for m in _BOUND.finditer(output)]

    def add(start: int, end: int, what: str | None = None) -> None:
        while start < end and not output[start].isalnum():
            start += 1
        while end > start and not output[end - 1].isalnum():
            end -= 1
        text = output[start:end]
        if not text or _overlaps(start, end, taken) or not _supported(start, end, facts, inputs_text):
            return
        if any(shared_chars((a, b), (start, end)) and not (start <= a and b <= end) for a, b in bound):
            return  # it would cut inside a phrase that states one fact
        found.setdefault((start, end), Candidate(start, end, text, what or span_kind(text), output.count(text) > 1))

    for match in _LONE_NUMBER.finditer(output):
        add(match.start(), match.end(), "number")
    for match in _names(output):
        add(match.start(), match.end(), "name")
    for sentence in _SENTENCE.finditer(output):
        add(sentence.start(), sentence.end())
    for clause in _CLAUSE.finditer(output):
        words = list(_WORD.finditer(output, clause.start(), clause.end()))
        if len(words) >= 2:
            add(clause.start(), clause.end())
        # Phrases inside the clause that start and end where an evaluator's span does (natural_edges): a stretch
        # cut inside a phrase ("4th, the temperature") reads as cut.
        for i, first in enumerate(words):
            if first.group(0).lower() in _OPENERS:
                continue
            for n in range(1, 13):  # a word (a number with its unit), phrases (2-4 words), clauses (5-12)
                if i + n > len(words):
                    break
                last = words[i + n - 1]
                if (last.group(0).strip(".,;:!?").lower() not in _STOP
                        and all(natural_edges(output, first.start(), last.end()))):
                    add(first.start(), last.end())
    return sorted(found.values(), key=lambda c: (c.start, c.end))


# Capitalised words that are dates, not entities: a date in an explanation stays a date.
_CALENDAR = frozenset({"January", "February", "March", "April", "May", "June", "July", "August", "September",
                       "October", "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                       "Saturday", "Sunday"})


def _swap_facts(explanation: str, donor_text: str, candidate: Candidate, fallback: Sequence[str]) -> str:
    """The donor's marked numbers and names, where the explanation repeats them, become the decoy's; a donor from
    another output also has its other names swapped for names of the decoy's output (`fallback`), so that the
    explanation speaks of what the reader sees."""
    numbers = [m.group(0) for m in _NUMBER.finditer(candidate.text)] or [m.group(0) for m in _NUMBER.finditer(
        " ".join(fallback))]
    names = [m.group(0) for m in _names(candidate.text)]
    counter = {"n": 0, "e": 0}

    def number(match: re.Match) -> str:
        if match.group(0) not in donor_text or not numbers:
            return match.group(0)
        counter["n"] += 1
        return numbers[(counter["n"] - 1) % len(numbers)]

    def name(match: re.Match) -> str:
        pool = names or list(fallback)
        if not pool or _SENTENCE_START.search(explanation[: match.start()]) or match.group(0) in _CALENDAR:
            return match.group(0)
        if match.group(0) not in donor_text and not fallback:
            return match.group(0)
        counter["e"] += 1
        return pool[(counter["e"] - 1) % len(pool)]

    return _NUMBER.sub(number, _NAME.sub(name, explanation))


def voice_explanation(donor: Donor, candidate: Candidate, output: str, *, same_output: bool,
                      quote: str | None = None) -> str:
    """The donor's explanation made about the decoy: its quotation of the marked words becomes the decoy's (`quote`,
    the decoy's location as written, when it differs from the stretch), and its marked numbers and names become the
    decoy's; the wording, length and format stay the evaluator's. A donor from another output has its other names
    swapped for names of this output."""
    fallback = [] if same_output else [m.group(0) for m in _names(output) if m.group(0) not in candidate.text]
    explanation = donor.explanation
    if donor.text and donor.text in explanation:
        head, _, tail = explanation.partition(donor.text)
        return _swap_facts(head, donor.text, candidate, fallback) + (quote or candidate.text) + _swap_facts(
            tail, donor.text, candidate, fallback)
    return _swap_facts(explanation, donor.text, candidate, fallback)


_QUOTE_MARKS = re.compile(r"[\"'‘’“”]")


def written_like(donor: Donor, stretch: str, rng: random.Random) -> tuple[str, str]:
    """The decoy's location as its evaluator might have written it, and the match the card then names: a donor
    whose location the aligner found only after normalising (case, quotation marks) or by a fuzzy match gives a
    decoy written with the same kind of slip (lower case or its quotation marks left out; one inner word left out),
    so the card's "Location found by ... match" line keeps its real share. Otherwise the stretch itself, exact."""
    if donor.match == "normalized":
        for variant in (stretch.lower(), _QUOTE_MARKS.sub("", stretch)):
            if variant != stretch:
                return variant, "normalized"
    if donor.match == "fuzzy":
        words = stretch.split()
        if len(words) >= 3:
            drop = rng.randrange(1, len(words) - 1)
            return " ".join(words[:drop] + words[drop + 1:]), "fuzzy"
    return stretch, "exact"
