"""Survey arithmetic: expert weights as vote shares per quality issue, and the experts' agreement."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import krippendorff
import numpy as np


def vote_shares(
    votes: Iterable[tuple[int, str, str]], issues: Sequence[str], metrics: Sequence[str]
) -> dict[str, dict[str, float]]:
    """(expert, issue, metric) votes -> {issue: {metric: share}}; shares of an issue sum to 1 (0 without votes)."""
    counts = {issue: dict.fromkeys(metrics, 0) for issue in issues}
    for _, issue, metric in votes:
        if issue in counts and metric in counts[issue]:
            counts[issue][metric] += 1
    shares = {}
    for issue, row in counts.items():
        total = sum(row.values())
        shares[issue] = {m: (n / total if total else 0.0) for m, n in row.items()}
    return shares


def nominal_alpha(votes: Iterable[tuple[int, str, str]], issues: Sequence[str], metrics: Sequence[str]) -> float | None:
    """Krippendorff's alpha (nominal) of the experts' choices, issues as units; None when undefined
    (fewer than two experts, or every vote for one metric)."""
    votes = list(votes)
    experts = sorted({v[0] for v in votes})
    if len(experts) < 2:
        return None
    index = {m: i for i, m in enumerate(metrics)}
    table = np.full((len(experts), len(issues)), np.nan)
    row = {e: i for i, e in enumerate(experts)}
    col = {issue: j for j, issue in enumerate(issues)}
    for expert, issue, metric in votes:
        if issue in col and metric in index:
            table[row[expert], col[issue]] = index[metric]
    if len({v for v in table[~np.isnan(table)]}) < 2:
        return None
    value = krippendorff.alpha(reliability_data=table, level_of_measurement="nominal")
    return float(value) if np.isfinite(value) else None
