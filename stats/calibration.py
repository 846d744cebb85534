"""Machine severity against the human-corrected one: signed and absolute error, exact share, Spearman."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from corpus.protocols import opennlgauge as protocol
from stats.correlation import correlations
from stats.errors import StatsError
from stats.shares import ratio

SEVERITIES: tuple[int, ...] = protocol.SEVERITIES

@dataclass(frozen=True)
class SeverityCalibration:
    """Machine severity against the human-corrected one; differences are machine minus human."""

    n: int
    mean_signed_difference: float | None
    mean_absolute_error: float | None
    spearman: float | None
    spearman_p: float | None
    exact_share: float | None
    # confusion[machine - 1][human - 1]
    confusion: tuple[tuple[int, ...], ...]


def severity_calibration(cells: Iterable[tuple[int, int, int]]) -> SeverityCalibration:
    """Compare severities from (machine severity, human severity, count) cells."""
    confusion = np.zeros((5, 5), dtype=int)
    for machine, human, n in cells:
        if machine not in SEVERITIES or human not in SEVERITIES:
            raise StatsError(f"severities must be 1..5, got ({machine}, {human})")
        confusion[machine - 1, human - 1] += n
    n = int(confusion.sum())
    grid = np.arange(1, 6)
    diff = grid[:, None] - grid[None, :]
    msd = ratio(float((diff * confusion).sum()), n)
    mae = ratio(float((np.abs(diff) * confusion).sum()), n)
    exact = ratio(float(np.trace(confusion)), n)
    rho = p = None
    if n >= 2:
        machine_rows, human_cols = np.nonzero(confusion)
        weights = confusion[machine_rows, human_cols]
        corr = correlations(np.repeat(machine_rows + 1, weights), np.repeat(human_cols + 1, weights))
        rho, p = corr.spearman, corr.spearman_p
    return SeverityCalibration(
        n=n, mean_signed_difference=msd, mean_absolute_error=mae, spearman=rho, spearman_p=p, exact_share=exact,
        confusion=tuple(tuple(int(v) for v in row) for row in confusion),
    )
