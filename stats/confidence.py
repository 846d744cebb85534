"""Confidence calibration of an ensemble: at each level k of n models agreeing, the share of spans experts confirm.

Django-free. A machine span flagged by k of n annotator models is read as a forecast that it is an error with
probability k/n. Per level (k, n), the observed share is confirmed / spans with its Wilson score interval
(Wilson 1927). The expected calibration error is the spans-weighted mean distance between forecast and
observation over the levels (Naeini, Cooper and Hauskrecht 2015, with the levels as the bins):

    ECE = sum over levels l of (spans_l / spans) * |k_l / n_l - confirmed_l / spans_l|

0 means every level confirms exactly as often as its share of agreeing models says; it is None without spans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from stats.errors import StatsError
from stats.intervals import wilson


@dataclass(frozen=True)
class Level:
    k: int
    n: int
    spans: int
    confirmed: int
    share: float | None
    ci_low: float
    ci_high: float

    @property
    def forecast(self) -> float:
        return self.k / self.n


@dataclass(frozen=True)
class Calibration:
    levels: list[Level]  # by n, then k
    ece: float | None
    spans: int


def calibration(outcomes: Iterable[tuple[int, int, bool]], confidence: float = 0.95) -> Calibration:
    """Return the calibration of (k, n, confirmed) outcomes, one per expert-labelled span."""
    spans: Counter[tuple[int, int]] = Counter()
    confirmed: Counter[tuple[int, int]] = Counter()
    for k, n, ok in outcomes:
        if not 0 <= k <= n or n < 1:
            raise StatsError(f"a level needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
        spans[(k, n)] += 1
        confirmed[(k, n)] += bool(ok)
    levels = []
    for k, n in sorted(spans, key=lambda kn: (kn[1], kn[0])):
        interval = wilson(confirmed[(k, n)], spans[(k, n)], confidence)
        levels.append(Level(k, n, spans[(k, n)], confirmed[(k, n)], interval.rate, interval.low, interval.high))
    total = sum(spans.values())
    ece = sum(lv.spans / total * abs(lv.forecast - lv.confirmed / lv.spans) for lv in levels) if total else None
    return Calibration(levels, ece, total)
