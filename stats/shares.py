"""Rates over counts: a share of nothing counted is unknown (None), not 0."""

from __future__ import annotations


def ratio(numerator: float, denominator: float) -> float | None:
    """Return numerator / denominator, or None when nothing was counted (a rate of nothing is unknown, not 0)."""
    return numerator / denominator if denominator else None
