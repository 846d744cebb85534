"""Planted errors: rule-based perturbations that change one fact a reader can check against the input.

Four kinds, all without an LLM: `number` changes one number of the output to another value, `entity` replaces
one name of the output with a different name the input mentions (a swapped entity); from the DHP benchmark's
perturbations that change a checkable fact, `sentence` replaces one sentence with a sentence of another output
(DHP's swapped ending, anywhere in the text) and `insert` adds one (the rule-based twin of DHP's inserted
sentence). A borrowed sentence always states a number or name this output's input does not have, so the error can
be checked. The changed stretch is reported in the planted text's code points, and it never touches a stretch the
caller wants kept (the machine spans of the output), so a found planted error is one the annotator found unaided.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from stats.overlap import shared_chars

PLANT_KINDS: tuple[str, ...] = ("number", "entity", "sentence", "insert")

_NUMBER = re.compile(r"(?<![\w.,])\d{1,6}(?![\w.,]\d)")
_NAME = re.compile(r"\b[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)*")
_SENTENCE = re.compile(r"[^.!?]*[^.!?\s][^.!?]*(?:[.!?]+|$)")


@dataclass(frozen=True)
class Planted:
    """The output with one error planted: [start, end) is the new stretch in `text`; `before` what it replaced."""

    text: str
    start: int
    end: int
    before: str
    after: str
    kind: str


def _free(start: int, end: int, keep: Sequence[tuple[int, int]]) -> bool:
    return not any(shared_chars((start, end), span) for span in keep)


def _number(output: str, keep: Sequence[tuple[int, int]], rng: random.Random) -> list[tuple[int, int, str, str]]:
    changes = []
    for match in _NUMBER.finditer(output):
        if not _free(match.start(), match.end(), keep):
            continue
        value = int(match.group(0))
        step = rng.choice((1, 2, 3, 4, 5, 6, 7))
        new = value + step if value < 3 or rng.random() < 0.5 else value - step
        new = max(new, 0)
        if new == value:
            new = value + step
        changes.append((match.start(), match.end(), match.group(0), str(new)))
    return changes


def _entity(output: str, inputs_text: str, keep: Sequence[tuple[int, int]],
            rng: random.Random) -> list[tuple[int, int, str, str]]:
    names_in_input = sorted({m.group(0) for m in _NAME.finditer(inputs_text)})
    changes = []
    for match in _NAME.finditer(output):
        name = match.group(0)
        if name not in names_in_input or not _free(match.start(), match.end(), keep):
            continue
        others = [n for n in names_in_input if n != name and n not in name and name not in n
                  and len(n.split()) == len(name.split())]
        if others:
            changes.append((match.start(), match.end(), name, rng.choice(others)))
    return changes


def _sentences(text: str) -> list[tuple[int, int]]:
    """Each sentence's [start, end), its leading spaces left out (a sentence ends at . ! ? or the text's end)."""
    spans = []
    for match in _SENTENCE.finditer(text):
        start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
        if match.end() > start:
            spans.append((start, match.end()))
    return spans


def _foreign(others: Sequence[str], inputs_text: str, rng: random.Random) -> list[str]:
    """Sentences of other outputs that state a number or name this input does not have: a checkable error."""
    found = []
    for other in others:
        for start, end in _sentences(other):
            sentence = other[start:end].strip()
            facts = [m.group(0) for m in _NUMBER.finditer(sentence)] + [m.group(0) for m in _NAME.finditer(sentence)]
            # "The Raptors" at a sentence's start is the name "Raptors": its tail may be what the input has
            unknown = [f for f in facts if f not in inputs_text
                       and not (" " in f and f.partition(" ")[2] in inputs_text)]
            if len(sentence.split()) >= 4 and unknown:
                found.append(sentence)
    rng.shuffle(found)
    return found[:20]


def _sentence(output: str, inputs_text: str, keep: Sequence[tuple[int, int]], others: Sequence[str],
              rng: random.Random) -> list[tuple[int, int, str, str]]:
    borrowed = _foreign(others, inputs_text, rng)
    own = [(a, b) for a, b in _sentences(output) if _free(a, b, keep)]
    if not borrowed or len(_sentences(output)) < 2:
        return []  # replacing a one-sentence output's only sentence would plant a whole other text
    return [(a, b, output[a:b], rng.choice(borrowed)) for a, b in own if output[a:b].strip() not in borrowed]


def _insert(output: str, inputs_text: str, keep: Sequence[tuple[int, int]], others: Sequence[str],
            rng: random.Random) -> list[tuple[int, int, str, str]]:
    borrowed = _foreign(others, inputs_text, rng)
    if not borrowed:
        return []
    # The space after a sentence becomes " <borrowed sentence> ": it goes in between two sentences.
    return [(b, b + 1, " ", f" {rng.choice(borrowed)} ") for _, b in _sentences(output)
            if output[b:b + 1] == " " and _free(b, b + 1, keep)]


def plant(output: str, inputs_text: str, *, keep: Sequence[tuple[int, int]], rng: random.Random,
          kinds: Sequence[str] = PLANT_KINDS, others: Sequence[str] = ()) -> Planted | None:
    """Plant one error of a kind that fits (tried in a seeded order); None when no kind fits this output.
    `others` are other outputs of the dataset, where the sentence kinds borrow a sentence."""
    order = list(kinds)
    rng.shuffle(order)
    for kind in order:
        if kind not in PLANT_KINDS:
            raise ValueError(f"unknown planted-error kind {kind!r}; kinds are {', '.join(PLANT_KINDS)}")
        if kind == "number":
            changes = _number(output, keep, rng)
        elif kind == "entity":
            changes = _entity(output, inputs_text, keep, rng)
        elif kind == "sentence":
            changes = _sentence(output, inputs_text, keep, others, rng)
        else:
            changes = _insert(output, inputs_text, keep, others, rng)
        if not changes:
            continue
        start, end, before, after = rng.choice(changes)
        text = output[:start] + after + output[end:]
        return Planted(text=text, start=start, end=start + len(after), before=before, after=after, kind=kind)
    return None


def planted_count(share: float, n_real: int) -> int:
    """How many planted outputs make `share` of an annotator's queue of n_real outputs (at least one)."""
    if share <= 0 or n_real == 0:
        return 0
    return max(1, round(share * n_real / (1 - share)))
