"""Decoy proposals, Django-free: stretches of an output a known non-error may mark, and what it claims."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

# ---- decoy proposals ---------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


@dataclass(frozen=True)
class Candidate:
    """A stretch of the output a decoy may mark: [start, end) in code points, and what it is."""

    start: int
    end: int
    text: str
    what: str  # "number" or "name"


def _overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in taken)


def decoy_candidates(output: str, inputs_text: str, taken: Sequence[tuple[int, int]]) -> list[Candidate]:
    """Numbers and names of the output that the inputs contain too (so the claim that they are wrong does not
    hold), overlapping no span in `taken` (every source's spans on this output), in text order."""
    found: list[Candidate] = []
    for what, pattern in (("number", _NUMBER), ("name", _NAME)):
        for match in pattern.finditer(output):
            text = match.group(0)
            if what == "name" and _SENTENCE_START.search(output[: match.start()]) and " " not in text:
                continue  # a capital at a sentence start is no name
            if text not in inputs_text or _overlaps(match.start(), match.end(), taken):
                continue
            found.append(Candidate(match.start(), match.end(), text, what))
    found.sort(key=lambda c: (c.start, c.end))
    return found


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


_CLAIMS: dict[str, tuple[str, ...]] = {
    "number": (
        "The figure \"{text}\" does not match the input; the data gives a different value.",
        "\"{text}\" is not supported by the input data, which reports another number here.",
        "The output states \"{text}\", but this number cannot be found in the source.",
    ),
    "name": (
        "\"{text}\" is not mentioned in the input in this role; the output attributes this to the wrong entity.",
        "The input does not support \"{text}\" here; the statement is unfaithful to the source.",
        "\"{text}\" appears to be confused with another entity from the input.",
    ),
}


def decoy_explanation(candidate: Candidate, rng: random.Random) -> str:
    """An explanation claiming the (supported) stretch is wrong: the claim a careful expert rejects."""
    return rng.choice(_CLAIMS[candidate.what]).format(text=candidate.text)
