"""Quality figures, Django-free: the rubber-stamp rule, drift and the flags they raise.

The rules here are evidence, not verdicts: each one is a named function with its source, so a researcher can
read what flagged an annotator and switch a rule off (docs/guides/quality-checks.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from stats.intervals import Proportion, wilson

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
REASON_LABEL: dict[str, str] = {  # the same reasons in a table cell
    RUBBER_STAMP: "rubber-stamp rule", DECOYS: "decoys missed", PLANTED: "planted errors missed",
    QUALIFICATION: "qualification failed",
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
