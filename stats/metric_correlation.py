"""Correlations of metric scores with human scores at three levels, with bootstrap intervals and paired tests.

Levels (as in Deutsch et al. 2021 and the OpeNLGauge tables):
- dataset (segment) level: every (output, human score) pair at once;
- sample level: per input (the outputs of all systems for the same input), then averaged over inputs;
- system level: each system's mean metric score against its mean human score.
Intervals are 95% percentile intervals of seeded bootstrap resamples: items for the dataset level, inputs
(with all their outputs) for the sample and system levels. The paired test for "metric A correlates better
than metric B" is a paired bootstrap: both metrics are scored on the same resamples, and p is the share of
resamples in which A's coefficient is not above B's. Williams' test (dependent Pearson correlations that
share the human variable) is given beside it at the dataset level.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from stats.correlation import correlations
from stats.ties import snap_ties

COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall")
LEVELS: tuple[str, ...] = ("dataset", "sample", "system")
MIN_POINTS = 3  # fewer points give no meaningful coefficient (two points always correlate perfectly)


def _clean(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def coefficients(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> dict[str, float | None]:
    """Pearson r, Spearman rho and Kendall tau-b of the one correlation function
    (`stats.correlation.correlations`: near-equal values rank as ties); None where undefined."""
    found = correlations(x, y)
    return {"pearson": found.pearson, "spearman": found.spearman, "kendall": found.kendall}


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc * yc).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


# scipy's public kendalltau spends most of its time in its nan-policy wrapper (0.57 ms against 0.21 ms for
# 1,056 points here); the bootstrap calls it thousands of times on finite data, so it calls the function inside.
_kendalltau = getattr(sps.kendalltau, "__wrapped__", sps.kendalltau)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Row-wise ranks with ties given their average rank (what scipy's rankdata does), without its overhead."""
    order = np.argsort(x, axis=1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=1)
    positions = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    new_run = np.ones(x.shape, dtype=bool)
    new_run[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.maximum.accumulate(np.where(new_run, positions, 0), axis=1)  # where each tie run starts
    ends = np.ones(x.shape, dtype=bool)
    ends[:, :-1] = new_run[:, 1:]
    last = np.minimum.accumulate(np.where(ends, positions, x.shape[1])[:, ::-1], axis=1)[:, ::-1]
    out = np.empty(x.shape, dtype=float)
    np.put_along_axis(out, order, (first + last) / 2 + 1, axis=1)
    return out


def _pairwise_kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b of every row pair from all point pairs at once: cheap for the few points of system level."""
    iu, ju = np.triu_indices(x.shape[1], k=1)
    dx, dy = np.sign(x[:, iu] - x[:, ju]), np.sign(y[:, iu] - y[:, ju])
    den = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def _rowwise(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """The three coefficients of every row pair (one row per bootstrap resample); NaN where undefined.
    The rank coefficients see near-equal values (1e-9 relative) as ties."""
    out = {"pearson": _rowwise_pearson(x, y)}
    x, y = snap_ties(x), snap_ties(y)
    out["spearman"] = _rowwise_pearson(_average_ranks(x), _average_ranks(y))
    if x.shape[1] <= 60:
        out["kendall"] = _pairwise_kendall(x, y)
        return out
    kendall = np.full(len(x), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in range(len(x)):
            if np.isfinite(out["pearson"][b]):
                kendall[b] = _kendalltau(x[b], y[b]).statistic
    out["kendall"] = kendall
    return out


MAX_PAIR_MATRIX = 3000  # up to this many items the n x n pair matrix (float32) is cheaper than a loop of sorts


def _tie_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items ordered by value, where each run of equal values starts in that order, and each item's run."""
    unique, group = np.unique(values, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(unique)))
    return order, starts, group


def _group_totals(counts: np.ndarray, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per resample, how many drawn items fall in each run of equal values (in value order)."""
    return np.add.reduceat(counts[:, order], starts, axis=1)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    total = w.sum(axis=1, keepdims=True)
    mx, my = (w * x).sum(axis=1, keepdims=True) / total, (w * y).sum(axis=1, keepdims=True) / total
    dx, dy = x - mx, y - my
    den = np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (w * dx * dy).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def resampled_coefficients(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The three coefficients of every resample `x[idx[b]]`, `y[idx[b]]`, without sorting each resample.

    A resample is a multiset of the original items, so it is described by how often each item was drawn:
    an item's average rank in it follows from the counts of smaller and equal values (Spearman is then
    a count-weighted Pearson of those ranks), and Kendall's tau-b numerator is c' S c with S[i, j] =
    sign(x_i - x_j) * sign(y_i - y_j) over the original items; its denominator needs only the counts in
    each run of tied values. The result equals scipy's on the expanded resample (tested)."""
    n = x.shape[0]
    if n > MAX_PAIR_MATRIX:
        return _rowwise(x[idx], y[idx])
    raw_x, raw_y = x, y
    x, y = snap_ties(x), snap_ties(y)  # the rank coefficients see near-equal values as ties
    counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
    ranks = {}
    denominators = {}
    for name, values in (("x", x), ("y", y)):
        order, starts, group = _tie_groups(values)
        totals = _group_totals(counts, order, starts)
        below = np.cumsum(totals, axis=1) - totals
        ranks[name] = (below + (totals + 1) / 2)[:, group]
        denominators[name] = n * n - (totals * totals).sum(axis=1)  # ordered pairs not tied on this side
    pair_signs = (np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])).astype(np.float32)
    c32 = counts.astype(np.float32)
    numerator = ((c32 @ pair_signs) * c32).sum(axis=1, dtype=np.float64)
    den = np.sqrt(denominators["x"] * denominators["y"])
    with np.errstate(invalid="ignore", divide="ignore"):
        kendall = np.where(den > 0, numerator / np.where(den > 0, den, 1), np.nan)
    return {
        "pearson": _weighted_pearson(np.broadcast_to(raw_x, counts.shape), np.broadcast_to(raw_y, counts.shape),
                                     counts),
        "spearman": _weighted_pearson(ranks["x"], ranks["y"], counts),
        "kendall": kendall,
    }


@dataclass(frozen=True)
class Points:
    """One metric's scores against one aspect's human scores, item by item."""

    metric: np.ndarray
    human: np.ndarray
    groups: np.ndarray  # input group index of each item (0..G-1)
    systems: np.ndarray  # system index of each item (0..S-1); all 0 when the dataset names no systems

    @classmethod
    def build(cls, metric: Sequence[float], human: Sequence[float], groups: Sequence[object],
              systems: Sequence[object]) -> Points:
        _, g = np.unique(np.asarray([str(v) for v in groups]), return_inverse=True)
        _, s = np.unique(np.asarray([str(v) for v in systems]), return_inverse=True)
        return cls(np.asarray(metric, dtype=float), np.asarray(human, dtype=float), g, s)

    @property
    def n_groups(self) -> int:
        return int(self.groups.max()) + 1 if len(self.groups) else 0

    @property
    def n_systems(self) -> int:
        return int(self.systems.max()) + 1 if len(self.systems) else 0


@dataclass
class LevelResult:
    level: str
    n: int
    values: dict[str, float | None]
    ci: dict[str, list[float] | None]
    replicates: dict[str, np.ndarray] = field(default_factory=dict, repr=False)


def _interval(reps: np.ndarray) -> list[float] | None:
    finite = reps[np.isfinite(reps)]
    if len(finite) < max(10, len(reps) // 2):  # most resamples undefined: no honest interval
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return [float(low), float(high)]


def system_means(points: Points, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each system's mean metric and human score; `weights` (resamples x items) gives resampled means."""
    onehot = np.zeros((len(points.systems), points.n_systems))
    onehot[np.arange(len(points.systems)), points.systems] = 1.0
    w = np.ones((1, len(points.systems))) if weights is None else weights
    counts = w @ onehot
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * points.metric) @ onehot / counts, (w * points.human) @ onehot / counts


def sample_values(points: Points) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per input group with >= 3 outputs: the three coefficients (NaN where undefined); and which groups."""
    order = np.argsort(points.groups, kind="stable")
    bounds = np.flatnonzero(np.diff(points.groups[order])) + 1
    used, per = [], {c: [] for c in COEFFICIENTS}
    for chunk in np.split(order, bounds):
        if len(chunk) < MIN_POINTS:
            continue
        used.append(points.groups[chunk[0]])
        x, y = points.metric[chunk][None, :], points.human[chunk][None, :]
        xr, yr = snap_ties(x), snap_ties(y)  # near-equal values (1e-9 relative) rank as ties
        if np.ptp(xr) == 0 or np.ptp(yr) == 0:
            for name in COEFFICIENTS:
                per[name].append(np.nan)
            continue
        # one input's outputs are few: the vectorised forms (tested against scipy) skip scipy's per-call overhead
        per["pearson"].append(float(_rowwise_pearson(x, y)[0]))
        x, y = xr, yr
        per["spearman"].append(float(_rowwise_pearson(_average_ranks(x), _average_ranks(y))[0]))
        per["kendall"].append(float(_pairwise_kendall(x, y)[0]) if x.shape[1] <= 200 else
                              float(_kendalltau(x[0], y[0]).statistic))
    return np.asarray(used, dtype=int), {c: np.asarray(v, dtype=float) for c, v in per.items()}


def _nanmean(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values, axis=axis)


def correlate(points: Points, *, n_boot: int = 1000, seed: int = 0) -> dict[str, LevelResult]:
    """The three levels' coefficients with 95% bootstrap intervals (replicates kept for paired tests)."""
    rng = np.random.default_rng(seed)
    n, n_groups = len(points.metric), points.n_groups
    out: dict[str, LevelResult] = {}

    # dataset level: resample items
    values = coefficients(points.metric, points.human)
    reps: dict[str, np.ndarray] = {}
    if n >= MIN_POINTS and n_boot:
        idx = rng.integers(0, n, size=(n_boot, n))
        reps = resampled_coefficients(points.metric, points.human, idx)
    out["dataset"] = LevelResult("dataset", n, values, {c: _interval(reps[c]) if reps else None for c in COEFFICIENTS},
                                 reps)

    # sample level: mean over inputs of the per-input coefficients; resample inputs
    used, per = sample_values(points)
    values = {c: _clean(_nanmean(per[c])) if len(used) else None for c in COEFFICIENTS}
    reps = {}
    if len(used) >= 2 and n_boot:
        pick = rng.integers(0, len(used), size=(n_boot, len(used)))
        reps = {c: np.asarray(_nanmean(per[c][pick], axis=1), dtype=float) for c in COEFFICIENTS}
    out["sample"] = LevelResult("sample", len(used), values,
                                {c: _interval(reps[c]) if reps else None for c in COEFFICIENTS}, reps)

    # system level: correlation of system means; resample inputs, each with all its outputs
    reps = {}
    if points.n_systems >= MIN_POINTS:
        mx, hx = system_means(points)
        values = coefficients(mx[0], hx[0])
        if n_boot:
            drawn = rng.integers(0, n_groups, size=(n_boot, n_groups))
            counts = np.stack([np.bincount(row, minlength=n_groups) for row in drawn])
            mb, hb = system_means(points, counts[:, points.groups].astype(float))
            reps = _rowwise(np.nan_to_num(mb), np.nan_to_num(hb))
            missing = ~np.all(np.isfinite(mb), axis=1)  # a system none of whose inputs was drawn
            for c in COEFFICIENTS:
                reps[c][missing] = np.nan
    else:
        values = dict.fromkeys(COEFFICIENTS)
    out["system"] = LevelResult("system", points.n_systems if points.n_systems >= MIN_POINTS else 0, values,
                                {c: _interval(reps[c]) if reps else None for c in COEFFICIENTS}, reps)
    return out


def paired_bootstrap_p(a: np.ndarray, b: np.ndarray) -> float | None:
    """One-sided p for "A's coefficient is above B's": the share of paired resamples where it is not."""
    both = np.isfinite(a) & np.isfinite(b)
    if both.sum() < 10:
        return None
    return float(np.mean(a[both] - b[both] <= 0))


def williams_p(r12: float, r13: float, r23: float, n: int) -> float | None:
    """Williams' test (Williams 1959; Graham & Baldwin 2014): one-sided p that corr(1,2) > corr(1,3).

    Variable 1 is the human score, 2 and 3 the two metrics; r23 is the metrics' own correlation."""
    if n <= 3:
        return None
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if denominator <= 0:
        return None
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denominator)
    return float(sps.t.sf(t, df=n - 3))
