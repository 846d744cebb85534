"""Intervals of a share: k successes out of n with the Wilson score interval, as scipy computes it."""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import binomtest

from stats.errors import StatsError


@dataclass(frozen=True)
class Proportion:
    """k successes out of n with the Wilson score interval (95%)."""

    k: int
    n: int
    rate: float | None
    low: float
    high: float


def wilson(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """Return k/n with its Wilson score interval; with n = 0 the interval is [0, 1] (nothing is known).

    Wilson's interval stays inside [0, 1] and is not degenerate at k = 0 or k = n, which matters here: an
    annotator with 2 of 2 decoys rejected is not known to be perfect. scipy refuses n = 0, so that case is
    answered here."""
    if n < 0 or not 0 <= k <= n:
        raise StatsError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(0, 0, None, 0.0, 1.0)
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    low = 0.0 if k == 0 else max(0.0, float(ci.low))  # exact ends: the formula leaves rounding dust at 0 and 1
    high = 1.0 if k == n else min(1.0, float(ci.high))
    return Proportion(k, n, k / n, low, high)
