"""The one exception the statistics package raises."""

from __future__ import annotations


class StatsError(Exception):
    """A statistic asked of data it cannot be computed from (shapes that disagree, a confidence outside (0, 1))."""
