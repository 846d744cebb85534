"""Ties that float noise hides: values equal to within 1e-9 (relative) rank as one value everywhere.

Means of the same human scores summed in a different order differ in the last bits (3.6666666666666665
against 3.666666666666667); a plain sort then breaks what is a tie, and rank correlations move (HANNA's
complexity: system-level Spearman of length 0.7426 with the noise, 0.7123 tie-aware).
"""

from __future__ import annotations

import numpy as np

REL_TOL = 1e-9


def snap_ties(values: np.ndarray, rel_tol: float = REL_TOL) -> np.ndarray:
    """Return the values (row-wise on the last axis) with every run of near-equal neighbours in sorted
    order replaced by the run's smallest value; NaN stays NaN."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return arr.copy()
    flat = arr.reshape(-1, arr.shape[-1])
    order = np.argsort(flat, axis=1, kind="stable")
    ordered = np.take_along_axis(flat, order, axis=1)
    with np.errstate(invalid="ignore"):
        close = np.isclose(ordered[:, 1:], ordered[:, :-1], rtol=rel_tol, atol=0.0)
    new_run = np.ones(ordered.shape, dtype=bool)
    new_run[:, 1:] = ~close
    positions = np.broadcast_to(np.arange(ordered.shape[1]), ordered.shape)
    first = np.maximum.accumulate(np.where(new_run, positions, 0), axis=1)
    snapped = np.take_along_axis(ordered, first, axis=1)
    out = np.empty_like(flat)
    np.put_along_axis(out, order, snapped, axis=1)
    return out.reshape(arr.shape)


def snap_mapping(means: dict[str, float], rel_tol: float = REL_TOL) -> dict[str, float]:
    """Return the means with near-equal values made equal (for rankings keyed by name)."""
    names = list(means)
    snapped = snap_ties(np.asarray([means[n] for n in names], dtype=float), rel_tol) if names else []
    return {n: float(v) for n, v in zip(names, snapped, strict=True)}
