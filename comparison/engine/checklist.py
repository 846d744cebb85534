"""The metric preference checklist (Ni'mah et al. 2023) beyond correlation: can a metric tell low-, moderate-
and high-rated outputs apart (aspect level), tell systems apart (system level, easy and hard pairs), and
rank systems as humans do (ranking similarity)?

Quality levels follow the paper's split of 1-5 ratings: low < 3, moderate = 3, high > 3. Human scores on
other scales are first mapped linearly onto 1..5 from the aspect's observed minimum and maximum; averaged
ratings are rarely exactly 3, so "moderate" is the band that rounds to 3 (2.5 <= r <= 3.5), which for
integer 1-5 ratings is exactly the paper's split.

Ranking similarity is S = ((L1 + L2) - 2 * Lev) / (L1 + L2) with the unit-cost Levenshtein distance
(insertions, deletions and substitutions cost 1; rapidfuzz's default). The paper's example cdabe vs abcde
gives 0.2 with it; its second example, cbed vs abcde, has unit-cost distance 3 and gives 1/3, not the
paper's 0.11 (that needs a distance of 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy import stats as sps

from stats.ties import snap_mapping

QUALITY_LEVELS: tuple[str, ...] = ("low", "moderate", "high")
LEVEL_PAIRS: tuple[tuple[str, str], ...] = (("low", "high"), ("low", "moderate"), ("moderate", "high"))


def ranking_similarity(first: Sequence[object], second: Sequence[object]) -> float | None:
    """S = ((L1+L2) - 2*Lev) / (L1+L2) over two orderings (strings or lists of names); None when both are empty."""
    total = len(first) + len(second)
    if total == 0:
        return None
    return (total - 2 * Levenshtein.distance(list(first), list(second))) / total


def ks_distance(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The two-sample Kolmogorov-Smirnov statistic D (0 = same distribution, 1 = fully separated)."""
    if len(a) == 0 or len(b) == 0:
        return None
    return float(sps.ks_2samp(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).statistic)


def rescale_to_five(values: Sequence[float], low: float, high: float) -> np.ndarray:
    """Map scores on [low, high] linearly onto [1, 5] (the paper's scale)."""
    values = np.asarray(values, dtype=float)
    if high <= low:
        return np.full(len(values), 3.0)
    return 1 + 4 * (values - low) / (high - low)


def quality_levels(human: Sequence[float], *, low: float | None = None, high: float | None = None) -> list[str]:
    """Each output's human quality level; the scale defaults to the observed minimum and maximum."""
    human = np.asarray(human, dtype=float)
    if len(human) == 0:
        return []
    lo = float(human.min()) if low is None else low
    hi = float(human.max()) if high is None else high
    out = []
    for r in rescale_to_five(human, lo, hi):
        out.append("low" if r < 2.5 else ("moderate" if r <= 3.5 else "high"))
    return out


def aspect_level(metric: Sequence[float], human: Sequence[float]) -> dict:
    """KS distances of the metric's scores between quality levels, and how it orders the levels."""
    metric = np.asarray(metric, dtype=float)
    levels = np.asarray(quality_levels(human))
    groups = {lv: metric[levels == lv] for lv in QUALITY_LEVELS}
    present = [lv for lv in QUALITY_LEVELS if len(groups[lv])]
    means = snap_mapping({lv: float(groups[lv].mean()) for lv in present})  # noise-equal means tie
    by_metric = sorted(present, key=lambda lv: (means[lv], QUALITY_LEVELS.index(lv)))
    return {
        "counts": {lv: int(len(groups[lv])) for lv in QUALITY_LEVELS},
        "ks": {f"{a}-{b}": ks_distance(groups[a], groups[b]) for a, b in LEVEL_PAIRS},
        "level_order": by_metric,
        "level_ranking_similarity": ranking_similarity(present, by_metric) if len(present) >= 2 else None,
    }


def _ranking(means: dict[str, float]) -> list[str]:
    """Systems from worst to best; ties (equal to within 1e-9 relative) broken by name so the order is
    reproducible and float noise never decides it."""
    snapped = snap_mapping(means)
    return sorted(means, key=lambda s: (snapped[s], s))


def system_level(metric: Sequence[float], human: Sequence[float], systems: Sequence[str]) -> dict | None:
    """System rankings by the metric and by humans, their similarity, and KS on the easy and hard pair.

    The easy pair is the lowest- and the highest-rated system (by mean human score); the hard pair the
    two systems whose mean human scores are closest. Per pair, the similarity of the two-system
    orderings is 1 when the metric orders them as humans do and 0 when it swaps them; the mean over all
    pairs is reported beside the similarity of the whole ranking."""
    metric, human = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    names = sorted({str(s) for s in systems})
    if len(names) < 2:
        return None
    systems = np.asarray([str(s) for s in systems])
    m_means = {s: float(metric[systems == s].mean()) for s in names}
    h_means = {s: float(human[systems == s].mean()) for s in names}
    human_rank, metric_rank = _ranking(h_means), _ranking(m_means)

    def ordered(a: str, b: str) -> tuple[str, str]:
        lo, hi = _ranking({a: h_means[a], b: h_means[b]})
        return lo, hi

    def similarity(lo: str, hi: str) -> float | None:
        return ranking_similarity([lo, hi], _ranking({lo: m_means[lo], hi: m_means[hi]}))

    def pair(a: str, b: str) -> dict:
        lo, hi = ordered(a, b)
        return {
            "systems": [lo, hi],
            "human_gap": h_means[hi] - h_means[lo],
            "ks_metric": ks_distance(metric[systems == lo], metric[systems == hi]),
            "ks_human": ks_distance(human[systems == lo], human[systems == hi]),
            "similarity": similarity(lo, hi),
        }

    pairs = [ordered(a, b) for a, b in combinations(names, 2)]
    hard = min(pairs, key=lambda p: (h_means[p[1]] - h_means[p[0]], p))
    pair_sims = [v for v in (similarity(lo, hi) for lo, hi in pairs) if v is not None]
    return {
        "human_ranking": human_rank,
        "metric_ranking": metric_rank,
        "ranking_similarity": ranking_similarity(human_rank, metric_rank),
        "pairwise_similarity_mean": float(np.mean(pair_sims)) if pair_sims else None,
        "easy": pair(human_rank[0], human_rank[-1]),
        "hard": pair(*hard),
        "metric_means": m_means,
        "human_means": h_means,
    }


