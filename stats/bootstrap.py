"""Cluster bootstrap intervals of ratios of summed counts, the item as cluster, for many groups at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from stats.errors import StatsError


@dataclass(frozen=True)
class Interval:
    low: float
    high: float



def bootstrap_ratio_cis_grouped(
    item_counts: np.ndarray,
    ratios: Mapping[str, tuple[int, int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    chunk: int = 250,
) -> list[dict[str, Interval | None]]:
    """Return bootstrap intervals for several groups (evaluators, annotators, ...) from one set of resamples.

    `item_counts` has shape (items, groups, columns): each group's count vector per item, zeros where a
    group has nothing on an item. Each resample draws items with replacement (as many as there are) and
    sums every group's vectors over the drawn items, so all groups see the same resampled study: a
    cluster bootstrap with the item as cluster. A resample that holds none of a group's items gives it
    no ratio and is skipped for that group.
    """
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence}")
    counts = np.asarray(item_counts, dtype=float)
    if counts.ndim != 3:
        raise StatsError("item_counts must have the shape (items, groups, columns)")
    n_items, n_groups, width = counts.shape
    if n_items == 0 or n_resamples < 1:
        return [dict.fromkeys(ratios) for _ in range(n_groups)]
    flat = counts.reshape(n_items, n_groups * width)
    # integer counts below 2**24 are exact in float32, which halves the cost of the products
    dtype = np.float32 if flat.sum() < 2**24 else np.float64
    flat = flat.astype(dtype)
    rng = np.random.default_rng(seed)
    sums = np.empty((n_resamples, n_groups * width))
    for begin in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - begin)
        picks = rng.integers(0, n_items, size=(size, n_items))
        # how often each item was drawn in each resample, then all groups' sums in one matrix product
        draws = np.bincount((picks + n_items * np.arange(size)[:, None]).ravel(), minlength=size * n_items)
        sums[begin : begin + size] = draws.reshape(size, n_items).astype(dtype) @ flat
    sums = sums.reshape(n_resamples, n_groups, width)
    tail = (1 - confidence) / 2 * 100
    out: list[dict[str, Interval | None]] = [{} for _ in range(n_groups)]
    for name, (num, den) in ratios.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            values = sums[:, :, num] / sums[:, :, den]
        for g in range(n_groups):
            finite = values[:, g][np.isfinite(values[:, g])]
            if finite.size == 0:
                out[g][name] = None
                continue
            low, high = np.percentile(finite, [tail, 100 - tail])
            out[g][name] = Interval(float(low), float(high))
    return out
