"""Decoy proposals, Django-free: a stretch of an output the input supports, drawn and explained like an evaluator's
own real spans, so that nothing on the card but the facts tells it apart.

A decoy copies a donor: one real machine span of the campaign, chosen at random (so labels, severities and
categories keep their real shares). The decoy's stretch is of the donor's kind (number, name, phrase, clause) and
about its length and place in the output; its explanation is the donor's, with the donor's marked words, numbers and
names swapped for the decoy's, so it keeps the evaluator's voice and answer format but claims a supported stretch is
wrong: the claim a careful expert rejects.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")
_CLAUSE = re.compile(r"(?:[^.;:!?,\n]|[.;:!?,](?!\s|$))+")  # a mark ends a clause when a space follows (not 2.5)
_WORD = re.compile(r"\S+")
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

    @property
    def kind(self) -> str:
        return span_kind(self.text)


def _overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in taken)


def _names(text: str) -> list[re.Match]:
    return [m for m in _NAME.finditer(text)
            if not (_SENTENCE_START.search(text[: m.start()]) and " " not in m.group(0))]  # a sentence's capital


def _facts(output: str) -> list[tuple[int, int, str]]:
    """The output's checkable facts, where they stand: its numbers and names (read in the whole output's context,
    so a capital that only opens a sentence is no name)."""
    found = [(m.start(), m.end(), m.group(0)) for m in _NUMBER.finditer(output)]
    return sorted(found + [(m.start(), m.end(), m.group(0)) for m in _names(output)])


def _supported(start: int, end: int, facts: Sequence[tuple[int, int, str]], inputs_text: str) -> bool:
    """Every fact the stretch touches is in the input, and it touches at least one (something to check)."""
    touched = [text for a, b, text in facts if a < end and start < b]
    inside = all(start <= a and b <= end for a, b, _ in facts if a < end and start < b)
    return bool(touched) and inside and all(text in inputs_text for text in touched)


def decoy_candidates(output: str, inputs_text: str, taken: Sequence[tuple[int, int]]) -> list[Candidate]:
    """Stretches of the output whose facts the input contains (so a claim that they are wrong does not hold),
    overlapping no span in `taken`, in text order: numbers, names, clauses and the phrases around a fact."""
    found: dict[tuple[int, int], Candidate] = {}
    facts = _facts(output)

    def add(start: int, end: int, what: str | None = None) -> None:
        while start < end and not output[start].isalnum():
            start += 1
        while end > start and not output[end - 1].isalnum():
            end -= 1
        text = output[start:end]
        if not text or _overlaps(start, end, taken) or not _supported(start, end, facts, inputs_text):
            return
        found.setdefault((start, end), Candidate(start, end, text, what or span_kind(text), output.count(text) > 1))

    for match in _NUMBER.finditer(output):
        add(match.start(), match.end(), "number")
    for match in _names(output):
        add(match.start(), match.end(), "name")
    for clause in _CLAUSE.finditer(output):
        if len(_WORD.findall(output, clause.start(), clause.end())) >= 2:
            add(clause.start(), clause.end())
    for sentence in _SENTENCE.finditer(output):
        words = list(_WORD.finditer(output, sentence.start(), sentence.end()))
        for i, first in enumerate(words):
            if first.group(0).lower() in _OPENERS:
                continue
            for n in range(1, 13):  # a word (a number with its unit), phrases (2-4 words), clauses (5-12)
                if i + n > len(words):
                    break
                last = words[i + n - 1]
                if last.group(0).strip(".,;:!?").lower() not in _STOP:
                    add(first.start(), last.end())
    return sorted(found.values(), key=lambda c: (c.start, c.end))


_SINGLE_DIGIT = re.compile(r"(?<![\d.,])\d(?![\d.,])")
_WITH_UNIT = re.compile(r"\d ?(?:[^\W\d_]|[°%$€£])")


def _shape(text: str) -> tuple[bool, ...]:
    """What a reader sees first of a stretch: does it hold a digit, a lone digit, a number with its unit, a comma;
    does it open with a capital, end on a digit."""
    return (any(ch.isdigit() for ch in text), bool(_SINGLE_DIGIT.search(text)), bool(_WITH_UNIT.search(text)),
            "," in text, text[:1].isupper(), text[-1:].isdigit())


def _grams(text: str) -> set[str]:
    """Character trigrams of the text with its digits folded together (a number reads like any number)."""
    folded = " " + re.sub(r"\d", "0", text.lower()) + " "
    return {folded[i:i + 3] for i in range(len(folded) - 2)}


def _content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more that are not function words (digits left out: numbers differ)."""
    return {w for w in re.findall(r"[^\W\d_]{3,}", text.lower()) if w not in _STOP}


def draw_candidate(candidates: Sequence[Candidate], donor: Donor, output_length: int,
                   rng: random.Random) -> Candidate | None:
    """The candidate most like the donor: its kind when the output has one (else any), then closest in shape
    (digits, commas, capitals, ambiguity), wording (character trigrams), topic (the words of the donor's
    explanation), length and place (one of the three closest, by chance)."""
    same = [c for c in candidates if c.what == donor.kind] or list(candidates)
    if not same:
        return None
    words = len(donor.text.split())
    shape = _shape(donor.text)
    grams = _grams(donor.text)
    topic = _content_words(f"{donor.text} {donor.explanation}")

    def distance(c: Candidate) -> float:
        mismatched = sum(a != b for a, b in zip(_shape(c.text), shape, strict=True)) + (c.ambiguous != donor.ambiguous)
        mine = _grams(c.text)
        alike = len(mine & grams) / max(len(mine | grams), 1)  # Jaccard of character trigrams: how it reads
        # What the donor's explanation is about ("wind speed", "battery") should be what the decoy marks, or the
        # explanation would speak of something else.
        on_topic = len(_content_words(c.text) & topic) / max(len(_content_words(c.text)), 1)
        return (mismatched + abs(len(c.text.split()) - words) / max(words, 1)
                + abs(c.start / max(output_length, 1) - donor.position) - 8 * alike - 3 * on_topic)

    ranked = sorted(same, key=lambda c: (distance(c), rng.random()))
    return rng.choice(ranked[:3])


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


def voice_explanation(donor: Donor, candidate: Candidate, output: str, *, same_output: bool) -> str:
    """The donor's explanation made about the decoy: its quotation of the marked words becomes the decoy's, and its
    marked numbers and names become the decoy's; the wording, length and format stay the evaluator's. A donor from
    another output has its other names swapped for names of this output."""
    fallback = [] if same_output else [m.group(0) for m in _names(output) if m.group(0) not in candidate.text]
    explanation = donor.explanation
    if donor.text and donor.text in explanation:
        head, _, tail = explanation.partition(donor.text)
        return _swap_facts(head, donor.text, candidate, fallback) + candidate.text + _swap_facts(
            tail, donor.text, candidate, fallback)
    return _swap_facts(explanation, donor.text, candidate, fallback)


def propose_decoys(
    output: str, inputs_text: str, taken: Sequence[tuple[int, int]], n: int, rng: random.Random
) -> list[Candidate]:
    """Pick up to n candidates that overlap neither `taken` nor each other (a seeded choice)."""
    pool = decoy_candidates(output, inputs_text, taken)
    rng.shuffle(pool)
    chosen: list[Candidate] = []
    for candidate in pool:
        if len(chosen) == n:
            break
        if not _overlaps(candidate.start, candidate.end, [(c.start, c.end) for c in chosen]):
            chosen.append(candidate)
    return sorted(chosen, key=lambda c: c.start)
