"""Quality checks of expert work, Django-free: decoy proposals, Wilson intervals, telemetry rules, flags.

The rules here are evidence, not verdicts: each one is a named function with its source, so a researcher can
read what flagged an annotator and switch a rule off (docs/guides/quality-checks.md).
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

# ---- telemetry ---------------------------------------------------------------------------------------------

MAX_MS = 10 * 60 * 1000
"""Time since focus is clamped to 0..10 minutes: a card left open over lunch says nothing about reading."""
IDLE_CAP_SECONDS = 60
"""Pearmut's rule: a pause between two actions counts as active time up to 60 s, never more."""


def clamp_ms(value: object) -> int | None:
    """Return the browser's milliseconds since focus as a whole number in 0..MAX_MS (None when not given)."""
    if value is None or value == "":
        return None
    try:
        number = float(str(value))
    except ValueError:
        raise ValueError(f"ms: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"ms: {value!r} is not a finite number")
    return int(min(max(number, 0), MAX_MS))


def active_increment(gap_seconds: float | None, cap: float = IDLE_CAP_SECONDS) -> float:
    """Active time a new action adds: the gap since the previous action, capped (0 for the first action)."""
    if gap_seconds is None or gap_seconds <= 0:
        return 0.0
    return min(gap_seconds, cap)


def active_seconds(times: Sequence[float], cap: float = IDLE_CAP_SECONDS) -> float:
    """Active time over action timestamps (seconds): the sum of the gaps between neighbours, each capped."""
    ordered = sorted(times)
    return sum(active_increment(b - a, cap) for a, b in zip(ordered, ordered[1:], strict=False))


# ---- intervals ---------------------------------------------------------------------------------------------

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Proportion:
    """k successes out of n with the Wilson score interval (95%)."""

    k: int
    n: int
    rate: float | None
    low: float
    high: float


def wilson(k: int, n: int, z: float = Z95) -> Proportion:
    """Return k/n with its Wilson score interval; with n = 0 the interval is [0, 1] (nothing is known).

    Wilson's interval stays inside [0, 1] and is not degenerate at k = 0 or k = n, which matters here: an
    annotator with 2 of 2 decoys rejected is not known to be perfect."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(0, 0, None, 0.0, 1.0)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, centre - half)  # exact ends: the formula leaves rounding dust at 0 and 1
    high = 1.0 if k == n else min(1.0, centre + half)
    return Proportion(k, n, p, low, high)


# ---- the rubber-stamp rule ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StampRule:
    """Potato 2.x's rubber-stamp rule: at least `min_accepts` machine spans confirmed as errors, the median
    time to those confirmations under `max_median_ms`, and at most `max_changed` of them changed later."""

    min_accepts: int = 5
    max_median_ms: float = 500.0
    max_changed: float = 0.05

    def describe(self) -> str:
        return (
            f"flagged as rubber-stamping when at least {self.min_accepts} machine spans were confirmed as errors, "
            f"the median time from focus to those confirmations is under {self.max_median_ms:g} ms, and at most "
            f"{self.max_changed:.0%} of them were changed later (Potato 2.x's rule)"
        )


STAMP_RULE = StampRule()


@dataclass(frozen=True)
class Verdict:
    """One machine span's verdict as telemetry sees it, in the order the annotator gave them."""

    confirmed: bool  # the final span verdict is Error
    ms: int | None  # time from focus to the first span verdict
    changed: bool  # the span verdict was changed after it was first given


def median_ms(verdicts: Sequence[Verdict]) -> float | None:
    times = [v.ms for v in verdicts if v.ms is not None]
    return float(statistics.median(times)) if times else None


def is_rubber_stamping(verdicts: Sequence[Verdict], rule: StampRule = STAMP_RULE) -> bool:
    accepts = [v for v in verdicts if v.confirmed]
    if len(accepts) < rule.min_accepts:
        return False
    median = median_ms(accepts)
    if median is None or median >= rule.max_median_ms:
        return False
    return sum(v.changed for v in accepts) <= rule.max_changed * len(accepts)


def drift(confirmed: Sequence[bool], parts: int = 5) -> list[float | None]:
    """The confirm rate in each fifth of the annotator's work, in order (None for an empty fifth)."""
    n = len(confirmed)
    rates: list[float | None] = []
    for i in range(parts):
        chunk = confirmed[n * i // parts : n * (i + 1) // parts]
        rates.append(sum(chunk) / len(chunk) if chunk else None)
    return rates


@dataclass
class Figures:
    """One annotator's telemetry and vigilance, and the reasons they are flagged (empty: not flagged)."""

    verdicts: list[Verdict] = field(default_factory=list)
    decoys: Proportion = field(default_factory=lambda: wilson(0, 0))
    planted: Proportion = field(default_factory=lambda: wilson(0, 0))
    qualification_passed: bool | None = None

    @property
    def median_ms(self) -> float | None:
        return median_ms(self.verdicts)

    def _share(self, hits: int) -> float | None:
        return hits / len(self.verdicts) if self.verdicts else None

    @property
    def confirm_rate(self) -> float | None:
        return self._share(sum(v.confirmed for v in self.verdicts))

    @property
    def fast_confirm_rate(self) -> float | None:
        return self._share(sum(v.confirmed and v.ms is not None and v.ms < 1000 for v in self.verdicts))

    @property
    def changed_rate(self) -> float | None:
        return self._share(sum(v.changed for v in self.verdicts))

    def drift(self) -> list[float | None]:
        return drift([v.confirmed for v in self.verdicts])


# Reason codes, in the order they are listed.
RUBBER_STAMP = "rubber_stamp"
DECOYS = "decoys_missed"
PLANTED = "planted_missed"
QUALIFICATION = "qualification_failed"
REASON_TEXT: dict[str, str] = {
    RUBBER_STAMP: "confirms machine spans faster than they can be read (rubber-stamp rule)",
    DECOYS: "the upper bound of the decoy rejection rate is below the campaign's minimum",
    PLANTED: "the upper bound of the planted-error find rate is below the campaign's minimum",
    QUALIFICATION: "did not reach the qualification pass mark",
}


def flag_reasons(figures: Figures, *, vigilance_min: float, rule: StampRule = STAMP_RULE) -> list[str]:
    """Why an annotator is flagged. Vigilance compares the upper bound of the 95% interval with the minimum,
    so one early miss (interval still wide) flags nobody."""
    reasons = []
    if is_rubber_stamping(figures.verdicts, rule):
        reasons.append(RUBBER_STAMP)
    if figures.decoys.n and figures.decoys.high < vigilance_min:
        reasons.append(DECOYS)
    if figures.planted.n and figures.planted.high < vigilance_min:
        reasons.append(PLANTED)
    if figures.qualification_passed is False:
        reasons.append(QUALIFICATION)
    return reasons


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
