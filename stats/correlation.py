"""Pearson, Spearman and Kendall with p-values: the one correlation of the project, tie-aware on ranks."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from stats.errors import StatsError
from stats.ties import snap_ties


def finite(value: float) -> float | None:
    """Return the value as a float, or None when it is NaN or infinite (a statistic that is undefined)."""
    value = float(value)
    return value if math.isfinite(value) else None



@dataclass(frozen=True)
class Correlation:
    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None


def correlations(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Correlation:
    """Return Pearson, Spearman and Kendall (tau-b) with p-values; None where undefined (n < 3, a constant side).

    The one correlation of the project: the rank coefficients see values equal to within 1e-9 (relative) as
    ties (`ties.snap_ties`), so float noise in means never breaks a tie; Pearson reads the values as they are."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise StatsError(f"correlation needs paired values, got {xs.size} and {ys.size}")
    n = int(xs.size)
    xr, yr = snap_ties(xs), snap_ties(ys)
    if n < 3 or np.ptp(xr) == 0 or np.ptp(yr) == 0:
        return Correlation(n=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = sps.pearsonr(xs, ys)
        sr = sps.spearmanr(xr, yr)
        kt = sps.kendalltau(xr, yr)
    return Correlation(
        n=n,
        pearson=finite(pr.statistic), pearson_p=finite(pr.pvalue),
        spearman=finite(sr.statistic), spearman_p=finite(sr.pvalue),
        kendall=finite(kt.statistic), kendall_p=finite(kt.pvalue),
    )
