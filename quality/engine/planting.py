"""Planted errors: rule-based perturbations that change one fact a reader can check against the input.

Two kinds, both without an LLM: `number` changes one number of the output to another value, `entity` replaces
one name of the output with a different name the input mentions (a swapped entity). The changed stretch is
reported in the planted text's code points, and it never touches a stretch the caller wants kept (the machine
spans of the output), so a found planted error is one the annotator found unaided.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

PLANT_KINDS: tuple[str, ...] = ("number", "entity")

_NUMBER = re.compile(r"(?<![\w.,])\d{1,6}(?![\w.,]\d)")
_NAME = re.compile(r"\b[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)*")


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
    return not any(start < b and a < end for a, b in keep)


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


def plant(output: str, inputs_text: str, *, keep: Sequence[tuple[int, int]], rng: random.Random,
          kinds: Sequence[str] = PLANT_KINDS) -> Planted | None:
    """Plant one error of a kind that fits (tried in a seeded order); None when no kind fits this output."""
    order = list(kinds)
    rng.shuffle(order)
    for kind in order:
        if kind not in PLANT_KINDS:
            raise ValueError(f"unknown planted-error kind {kind!r}; kinds are {', '.join(PLANT_KINDS)}")
        changes = _number(output, keep, rng) if kind == "number" else _entity(output, inputs_text, keep, rng)
        if not changes:
            continue
        start, end, before, after = rng.choice(changes)
        text = output[:start] + after + output[end:]
        return Planted(text=text, start=start, end=start + len(after), before=before, after=after, kind=kind)
    return None
