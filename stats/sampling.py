"""A designed sample of machine spans: stratified draws, the stratified estimator with its 95% interval, a planner.

Django-free. A campaign may judge a stratified random sample of an evaluator's spans instead of all of them
(strata: the evaluator, optionally crossed with category or severity). Each stratum h of an evaluator has
N_h spans, n_h of them judged, k_h of those judged "OK" (Span OK: the span is an error; Exp. correct: the
explanation is correct). The share of OK spans among ALL the evaluator's spans is estimated by

    p = sum_h W_h p_h,   W_h = N_h / N,   p_h = k_h / n_h
    Var(p) = sum_h W_h^2 (1 - n_h/N_h) s_h^2 / n_h,   s_h^2 = n_h/(n_h - 1) p_h (1 - p_h)

(stratified simple random sampling without replacement, design-based, with the finite population
correction; Cochran, Sampling Techniques, 3rd ed., ch. 5). The 95% interval is p +- 1.96 se when every
judged stratum holds at least `SMALL_CELL` judged spans; otherwise it is a percentile bootstrap that
resamples within each stratum, rescaled by sqrt((1 - f_h) n_h/(n_h - 1)) so that it carries the same
finite population correction (the rescaling bootstrap of Rao and Wu, 1988, with m_h = n_h - 1).
Strata with spans but no judgment yet cannot be estimated: they are left out, and `covered` says how many
of the evaluator's spans the estimate speaks for.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from errors import UserError
from stats.errors import StatsError

SMALL_CELL = 10  # a judged stratum with fewer spans than this switches the interval to the bootstrap
DEFAULT_RESAMPLES = 4000


MIN_HALF_WIDTH = 0.001  # a tenth of a point: (z / d)^2 overflows a float for d near 1e-154 and below
MAX_HALF_WIDTH = 0.5  # a share's interval is never wider than ±50 points


class SamplingError(StatsError, UserError):
    """A sample that cannot be drawn or planned as asked (sizes, strata, half-width); the user can put it
    right, so it is also a UserError."""


def check_half_width(half_width: float, name: str = "half_width") -> float:
    """Return `half_width` when the planner can use it (MIN_HALF_WIDTH <= d < MAX_HALF_WIDTH), else refuse it
    naming `name`: nothing narrower than a tenth of a point is plannable, and a tiny d overflows the plan."""
    if not (isinstance(half_width, int | float) and math.isfinite(half_width)
            and MIN_HALF_WIDTH <= half_width < MAX_HALF_WIDTH):
        raise SamplingError(f"{name}: {half_width!r} must be a share from {MIN_HALF_WIDTH} to below "
                            f"{MAX_HALF_WIDTH} (0.05 = ±5 points)", field=name)
    return half_width


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise SamplingError(f"confidence must be between 0 and 1, not {confidence}", field="confidence")
    return float(norm.ppf(0.5 + confidence / 2))


# ------------------------------------------------------------------------------------------------ drawing

def allocate(population: Mapping[str, int], *, per_stratum: int | None = None,
             total: int | None = None) -> dict[str, int]:
    """Return how many spans to draw per stratum: `per_stratum` each (capped at the stratum's size), or
    `total` split in proportion to the strata sizes by largest remainder, at least one per non-empty stratum
    while the total allows, never more than a stratum holds."""
    if (per_stratum is None) == (total is None):
        raise SamplingError("give exactly one of a size per stratum or a total", field=("per_stratum", "total"))
    if per_stratum is not None:
        if per_stratum < 1:
            raise SamplingError(f"size per stratum must be at least 1, not {per_stratum}", field="per_stratum")
        return {h: min(per_stratum, size) for h, size in population.items()}
    assert total is not None
    if total < 1:
        raise SamplingError(f"total sample size must be at least 1, not {total}", field="total")
    size = sum(population.values())
    if total >= size:
        return dict(population)
    strata = sorted(population)
    quota = {h: total * population[h] / size for h in strata}
    counts = {h: min(population[h], max(1 if population[h] else 0, math.floor(quota[h]))) for h in strata}
    # Hand out what is left by largest remainder; take back from the largest strata if the minimum of one
    # per stratum overshot.
    while sum(counts.values()) < total:
        open_ = [h for h in strata if counts[h] < population[h]]
        best = max(open_, key=lambda h: (quota[h] - counts[h], population[h], h))
        counts[best] += 1
    while sum(counts.values()) > total:
        best = max((h for h in strata if counts[h] > 1), key=lambda h: (counts[h] - quota[h], h))
        counts[best] -= 1
    return counts


def draw_stratified(units: Sequence[tuple[Hashable, str]], *, per_stratum: int | None = None,
                    total: int | None = None, seed: int = 0) -> list[Hashable]:
    """Return the keys of a stratified simple random sample (without replacement) of `units` (key, stratum).

    The same units, sizes and seed give the same sample whatever order the units come in."""
    by_stratum: dict[str, list[Hashable]] = {}
    for key, stratum in units:
        by_stratum.setdefault(stratum, []).append(key)
    sizes = allocate({h: len(keys) for h, keys in by_stratum.items()}, per_stratum=per_stratum, total=total)
    rng = np.random.default_rng(seed)
    chosen: list[Hashable] = []
    for stratum in sorted(by_stratum):
        keys = sorted(by_stratum[stratum], key=repr)
        picks = rng.choice(len(keys), size=sizes[stratum], replace=False)
        chosen += [keys[i] for i in sorted(picks)]
    return chosen


# ------------------------------------------------------------------------------------------------ estimating

@dataclass(frozen=True)
class Stratum:
    """One stratum of one evaluator: its spans, how many are judged, how many of those are OK."""

    name: str
    population: int
    judged: int
    successes: int


@dataclass(frozen=True)
class Estimate:
    """The stratified estimate of a share over all spans, with its interval (all shares in 0..1)."""

    point: float | None
    low: float | None
    high: float | None
    se: float | None
    method: str  # "normal", "bootstrap" or "none" (nothing judged)
    judged: int
    population: int
    covered: int  # spans in strata with at least one judgment: those the estimate speaks for


def stratified_normal(population: np.ndarray, judged: np.ndarray, successes: np.ndarray,
                      confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised estimator over the last axis (strata): return (point, se, low, high).

    Strata with no judged span get weight 0 (the estimate covers the judged strata); arrays may carry any
    leading axes, e.g. one row per simulated sample."""
    big_n = np.asarray(population, dtype=float)
    n = np.asarray(judged, dtype=float)
    k = np.asarray(successes, dtype=float)
    present = n > 0
    weights = np.where(present, big_n, 0.0)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    safe_n = np.where(present, n, 1.0)
    p_h = k / safe_n
    s2 = np.where(n > 1, p_h * (1 - p_h) * safe_n / np.maximum(safe_n - 1, 1), 0.0)
    fpc = np.where(big_n > 0, 1 - n / np.where(big_n > 0, big_n, 1.0), 0.0)
    point = (weights * p_h).sum(axis=-1)
    se = np.sqrt((weights**2 * fpc * s2 / safe_n).sum(axis=-1))
    z = _z(confidence)
    return point, se, np.clip(point - z * se, 0, 1), np.clip(point + z * se, 0, 1)


def stratified_bootstrap(population: np.ndarray, judged: np.ndarray, successes: np.ndarray,
                         confidence: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
                         seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the rescaled within-stratum bootstrap (module docstring) for one evaluator."""
    big_n = np.asarray(population, dtype=float)
    n = np.asarray(judged, dtype=int)
    k = np.asarray(successes, dtype=float)
    present = n > 0
    weights = np.where(present, big_n, 0.0)
    weights = weights / weights.sum()
    safe_n = np.where(present, n, 1)
    p_h = k / safe_n
    rng = np.random.default_rng(seed)
    # Resampling n_h binary outcomes with replacement from a stratum is drawing Binomial(n_h, p_h).
    draws = rng.binomial(safe_n, p_h, size=(resamples, len(n))) / safe_n
    fpc = np.where(big_n > 0, 1 - n / np.where(big_n > 0, big_n, 1.0), 0.0)
    scale = np.where(n > 1, np.sqrt(np.clip(fpc, 0, None) * safe_n / np.maximum(safe_n - 1, 1)), 0.0)
    replicates = ((p_h + scale * (draws - p_h)) * weights).sum(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    return float(np.clip(low, 0, 1)), float(np.clip(high, 0, 1))


def stratified_estimate(strata: Sequence[Stratum], *, confidence: float = 0.95,
                        resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> Estimate:
    """The estimate for all spans of one evaluator from its strata (module docstring)."""
    for s in strata:
        if not 0 <= s.successes <= s.judged <= s.population:
            raise SamplingError(f"stratum {s.name!r}: need 0 <= OK {s.successes} <= judged {s.judged} "
                                f"<= spans {s.population}")
    total = sum(s.population for s in strata)
    judged = sum(s.judged for s in strata)
    covered = sum(s.population for s in strata if s.judged)
    if not judged:
        return Estimate(None, None, None, None, "none", 0, total, 0)
    big_n = np.array([s.population for s in strata])
    n = np.array([s.judged for s in strata])
    k = np.array([s.successes for s in strata])
    point, se, low, high = stratified_normal(big_n, n, k, confidence)
    method = "normal"
    low_f, high_f = float(low), float(high)
    if any(0 < s.judged < SMALL_CELL for s in strata):
        method = "bootstrap"
        low_f, high_f = stratified_bootstrap(big_n, n, k, confidence, resamples, seed)
    return Estimate(float(point), low_f, high_f, float(se), method, judged, total, covered)


# ------------------------------------------------------------------------------------------------ planning

@dataclass(frozen=True)
class Plan:
    """How many judged spans an evaluator needs for an interval of the asked half-width."""

    half_width: float
    needed: int  # judged spans in all, allocated in proportion to the strata sizes
    judged: int
    more: int  # judgments still to make, summed over strata (never negative in any stratum)
    per_stratum: dict[str, int]  # more judgments per stratum


def judgments_needed(strata: Sequence[Stratum], *, half_width: float, confidence: float = 0.95) -> Plan:
    """Plan the sample size for a 95% half-width: n0 = (z/d)^2 sum W_h S_h^2, n = n0 / (1 + n0/N)
    (Cochran 5.25 with proportional allocation), S_h^2 from the judged spans so far, 0.25 (the largest a
    share can have) where a stratum has fewer than two judged spans."""
    check_half_width(half_width, "half-width")
    total = sum(s.population for s in strata)
    judged = sum(s.judged for s in strata)
    if not total:
        return Plan(half_width, 0, judged, 0, {})
    z = _z(confidence)
    v0 = 0.0
    for s in strata:
        if s.judged >= 2:
            p = s.successes / s.judged
            s2 = p * (1 - p) * s.judged / (s.judged - 1)
        else:
            s2 = 0.25
        v0 += s.population / total * s2
    n0 = (z / half_width) ** 2 * v0
    needed = min(total, math.ceil(n0 / (1 + n0 / total))) if n0 > 0 else min(total, 2 * len(strata))
    per_stratum = {}
    for s in strata:
        want = min(s.population, math.ceil(needed * s.population / total))
        per_stratum[s.name] = max(0, want - s.judged)
    return Plan(half_width, needed, judged, sum(per_stratum.values()), per_stratum)
