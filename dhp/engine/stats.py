"""DHP statistics: one-sided Wilcoxon per (perturbation, metric), harmonic mean p-values with and without
expert weights (plain and asymptotically exact), discernment D = log_0.05(p), and the level-weighted
average and minimum over perturbations. Plain functions over plain data (scipy; no Django).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from scipy.special import digamma

from dhp.engine.errors import DhpError

EXACT_MAX_N = 50  # scipy's exact null distribution is used up to this many non-zero differences
_P_FLOOR = 1e-300  # log of 0 is -inf; no test here returns 0, but a product of tiny p-values may underflow


@dataclass(frozen=True)
class TestResult:
    """One one-sided Wilcoxon signed-rank test (original > perturbed)."""

    statistic: float | None
    p: float
    n_pairs: int
    n_nonzero: int
    method: str  # "exact", "asymptotic" or "all-zero" (no test: every difference is 0, p = 1)

    @property
    def all_zero(self) -> bool:
        return self.method == "all-zero"


def wilcoxon_greater(original: Sequence[float], perturbed: Sequence[float]) -> TestResult:
    """Test whether original scores are greater than perturbed ones, pairwise.

    Zero differences are dropped (`zero_method="wilcox"`, the paper's scipy default). The method is chosen
    explicitly: the exact null distribution for up to EXACT_MAX_N differences without ties, the normal
    approximation (tie-corrected, continuity-corrected) otherwise; LLM scores tie all the time. When every
    difference is zero there is nothing to test: p = 1 (so D = 0), reported as method "all-zero".
    """
    x = np.asarray(original, dtype=float)
    y = np.asarray(perturbed, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise DhpError(f"original and perturbed scores must pair up; got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise DhpError("no score pairs to test")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DhpError("scores must be finite numbers")
    d = x - y
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return TestResult(None, 1.0, len(d), 0, "all-zero")
    ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
    method = "exact" if len(nonzero) <= EXACT_MAX_N and not ties else "asymptotic"
    result = sps.wilcoxon(
        nonzero, zero_method="wilcox", correction=method == "asymptotic", alternative="greater", method=method
    )
    return TestResult(float(result.statistic), min(1.0, float(result.pvalue)), len(d), len(nonzero), method)


def normalize_weights(weights: Mapping[str, float], metrics: Sequence[str]) -> dict[str, float] | None:
    """Return the metrics' weights scaled to sum to 1 (missing metrics weigh 0), or None if all are 0.

    Raw vote counts must not go into the weighted HMP: they would make p several times too small.
    """
    raw = {m: float(weights.get(m, 0.0)) for m in metrics}
    if any(w < 0 or not math.isfinite(w) for w in raw.values()):
        raise DhpError(f"weights must be finite and non-negative: {raw}")
    total = sum(raw.values())
    if total == 0:
        return None
    return {m: w / total for m, w in raw.items()}


def hmp(p_values: Mapping[str, float], weights: Mapping[str, float] | None = None) -> float:
    """The weighted harmonic mean p-value 1 / sum(w_j / p_j), weights summing to 1 (equal by default).

    With equal weights this is the harmonic mean of the p-values (Wilson 2019). The paper prints the
    unweighted sum 1 / sum(1 / p_j), which is M times smaller for M metrics; we use the mean, so the plain
    and the expert-weighted values are on the same footing.
    """
    metrics = list(p_values)
    if not metrics:
        raise DhpError("no p-values to combine")
    w = normalize_weights(weights, metrics) if weights is not None else {m: 1 / len(metrics) for m in metrics}
    if w is None:
        raise DhpError("every weight is 0; there is nothing to combine")
    denominator = sum(w[m] / max(p_values[m], _P_FLOOR) for m in metrics if w[m] > 0)
    return min(1.0, 1.0 / denominator)


def hmp_asymptotic(p_values: Mapping[str, float], weights: Mapping[str, float] | None = None) -> float:
    """The asymptotically exact HMP p-value (Wilson 2019): P(Landau > 1/HMP) with location
    log L + 1 + digamma(1) - log(2/pi) and scale pi/2, L the number of tests. One test is its own p."""
    metrics = list(p_values)
    w = normalize_weights(weights, metrics) if weights is not None else {m: 1 / len(metrics) for m in metrics}
    if w is None:
        raise DhpError("every weight is 0; there is nothing to combine")
    used = [m for m in metrics if w[m] > 0]
    if len(used) == 1:
        return float(p_values[used[0]])
    h = hmp(p_values, w)
    loc = math.log(len(metrics)) + 1 + float(digamma(1)) - math.log(2 / math.pi)
    return float(min(1.0, sps.landau.sf(1.0 / h, loc=loc, scale=math.pi / 2)))


def discernment(p: float) -> float:
    """D = log_0.05(p): 1 at p = 0.05, higher is better, 0 at p = 1."""
    if not 0 <= p <= 1:
        raise DhpError(f"p must lie in [0, 1], not {p}")
    return math.log(max(p, _P_FLOOR)) / math.log(0.05) + 0.0  # + 0.0 turns -0.0 into 0.0


def level_weighted_average(values: Sequence[tuple[str, float]]) -> float | None:
    """Average (level, D) pairs so each level counts equally and kinds within a level equally."""
    by_level: dict[str, list[float]] = {}
    for level, value in values:
        by_level.setdefault(level, []).append(value)
    if not by_level:
        return None
    return sum(sum(v) / len(v) for v in by_level.values()) / len(by_level)


@dataclass(frozen=True)
class KindInput:
    """One perturbation's paired scores per metric (means over samples), in the same item order."""

    kind: str
    level: str
    original: Mapping[str, Sequence[float]]
    perturbed: Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class KindResult:
    kind: str
    level: str
    n_pairs: int
    n_zero: int  # metrics whose differences were all zero (p = 1 by rule)
    tests: dict[str, TestResult]
    p_hmp: float
    p_hmp_asym: float
    p_hmp_ew: float | None
    p_hmp_ew_asym: float | None
    D: float  # noqa: N815 - the paper's symbol
    D_ew: float | None  # noqa: N815


@dataclass(frozen=True)
class Summary:
    D_avg: float | None  # noqa: N815
    D_min: float | None  # noqa: N815
    D_avg_ew: float | None  # noqa: N815
    D_min_ew: float | None  # noqa: N815


def analyse_kind(data: KindInput, weights: Mapping[str, float] | None) -> KindResult:
    """Test every metric of one perturbation and combine them; `weights` are this kind's expert weights."""
    metrics = list(data.original)
    if not metrics:
        raise DhpError(f"{data.kind}: no metrics", field=None)  # a kind of the run, not a field
    tests = {m: wilcoxon_greater(data.original[m], data.perturbed[m]) for m in metrics}
    p_values = {m: t.p for m, t in tests.items()}
    p_hmp = hmp(p_values)
    ew = normalize_weights(weights, metrics) if weights is not None else None
    p_ew = hmp(p_values, ew) if ew is not None else None
    return KindResult(
        kind=data.kind, level=data.level, n_pairs=max(t.n_pairs for t in tests.values()),
        n_zero=sum(t.all_zero for t in tests.values()), tests=tests, p_hmp=p_hmp,
        p_hmp_asym=hmp_asymptotic(p_values), p_hmp_ew=p_ew,
        p_hmp_ew_asym=hmp_asymptotic(p_values, ew) if ew is not None else None,
        D=discernment(p_hmp), D_ew=discernment(p_ew) if p_ew is not None else None,
    )


def summarize(results: Sequence[KindResult]) -> Summary:
    """D_avg (level-weighted) and D_min over perturbations, with and without expert weights."""
    plain = [(r.level, r.D) for r in results]
    ew = [(r.level, r.D_ew) for r in results if r.D_ew is not None]
    return Summary(
        D_avg=level_weighted_average(plain), D_min=min((d for _, d in plain), default=None),
        D_avg_ew=level_weighted_average(ew), D_min_ew=min((d for _, d in ew), default=None),
    )
