"""MQM figures: segment and system scores with bootstrap intervals and rank ranges, per-category breakdowns, and
agreement between raters on spans and on segment scores.

Plain data in, numbers out. A rating is one rater's errors in one system's translation of one segment; a
segment's score is the sum of its errors' weights, a system's MQM score the mean over its rated (segment,
rater) pairs, lower is better (Freitag et al. 2021). Weights come in as a function (category, severity) ->
weight, so that the protocol's wildcard table (corpus.protocols.mqm.Weights) or any other scheme plugs in.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from stats.bootstrap import bootstrap_ratio_cis_grouped
from stats.correlation import Correlation, correlations
from stats.overlap import PRF, factgenie_char_prf
from stats.ranking import ALPHA, RESAMPLES, rank

Weight = Callable[[str, str], float]


@dataclass(frozen=True)
class Error:
    """One error: category, severity, and its span in the translation (None when not located in it)."""

    category: str
    severity: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Rating:
    """One rater's errors in one system's translation of one segment (no errors: a clean segment)."""

    system: str
    segment: Hashable  # the source segment, shared by every system's translation of it
    rater: str
    errors: tuple[Error, ...] = ()


def segment_score(errors: Iterable[Error], weight: Weight) -> float:
    return float(sum(weight(e.category, e.severity) for e in errors))


@dataclass(frozen=True)
class SystemScore:
    system: str
    score: float
    segments: int  # rated (segment, rater) pairs
    ci_low: float | None
    ci_high: float | None
    rank_range: tuple[int, int] | None


def system_scores(
    ratings: Sequence[Rating], weight: Weight, *, n_resamples: int = 1000, seed: int = 0,
    confidence: float = 0.95, rank_resamples: int = RESAMPLES, alpha: float = ALPHA,
) -> list[SystemScore]:
    """Each system's MQM score, best (lowest) first, with a bootstrap interval and a rank range.

    The interval resamples source segments with replacement (`n_resamples` times from `seed`), every system
    seeing the same resampled test set (stats.bootstrap's cluster bootstrap, the segment as cluster). Rank
    ranges come from the paired approximate randomization tests of stats.ranking over the segments two
    systems share, Holm-corrected: a system's best rank is one plus the systems significantly better, its
    worst the number of systems minus those significantly worse (WMT's clusters).
    """
    systems = sorted({r.system for r in ratings})
    segments = sorted({r.segment for r in ratings}, key=repr)
    if not systems:
        return []
    s_index = {s: i for i, s in enumerate(systems)}
    g_index = {g: i for i, g in enumerate(segments)}
    counts = np.zeros((len(segments), len(systems), 2))
    for r in ratings:
        cell = counts[g_index[r.segment], s_index[r.system]]
        cell[0] += segment_score(r.errors, weight)
        cell[1] += 1
    totals = counts.sum(axis=0)
    means = totals[:, 0] / totals[:, 1]
    intervals = bootstrap_ratio_cis_grouped(counts, {"score": (0, 1)}, n_resamples=n_resamples,
                                            confidence=confidence, seed=seed)
    # stats.ranking ranks higher-is-better ratios of sums: the negated sum over the count is the negated mean
    negated = counts * np.array([-1.0, 1.0])
    ranking = rank([-float(m) for m in means], negated, n_resamples=rank_resamples, seed=seed, alpha=alpha)
    out = []
    for k, system in enumerate(systems):
        ci = intervals[k]["score"]
        out.append(SystemScore(
            system=system, score=float(means[k]), segments=int(totals[k, 1]),
            ci_low=ci.low if ci else None, ci_high=ci.high if ci else None, rank_range=ranking.bounds[k],
        ))
    return sorted(out, key=lambda s: (s.score, s.system))


@dataclass(frozen=True)
class CategoryFigure:
    """A category's errors in one system: how many of each severity, and the score they add per rated pair
    (a system's figures over all categories add up to its score)."""

    category: str
    errors: int
    by_severity: dict[str, int]
    score: float


def category_breakdown(
    ratings: Iterable[Rating], weight: Weight, *, name: Callable[[str], str] = str,
) -> dict[str, list[CategoryFigure]]:
    """Per system, its errors by category (as `name` groups them, e.g. a canonical spelling or the top-level
    category), most costly first."""
    rated: Counter[str] = Counter()
    errors: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    cost: dict[str, Counter[str]] = defaultdict(Counter)
    for r in ratings:
        rated[r.system] += 1
        for e in r.errors:
            group = name(e.category)
            errors[r.system][group][e.severity] += 1
            cost[r.system][group] += weight(e.category, e.severity)
    out: dict[str, list[CategoryFigure]] = {}
    for system in sorted(rated):
        figures = [CategoryFigure(category=group, errors=sum(by.values()), by_severity=dict(sorted(by.items())),
                                  score=cost[system][group] / rated[system])
                   for group, by in errors[system].items()]
        out[system] = sorted(figures, key=lambda f: (-f.score, -f.errors, f.category))
    return out


@dataclass(frozen=True)
class RaterPair:
    """Two raters on the translations both rated: factgenie's character F1 (categories ignored, and matched)
    and the correlation of their segment scores."""

    a: str
    b: str
    segments: int
    char: PRF
    char_category: PRF
    scores: Correlation


@dataclass
class Agreement:
    """Every pair of raters that share a rated translation, and the same figures pooled over all pairs."""

    pairs: list[RaterPair] = field(default_factory=list)
    char: PRF = PRF(0, 0, 0)
    char_category: PRF = PRF(0, 0, 0)
    scores: Correlation = Correlation(n=0)


def _located(errors: Iterable[Error], name: Callable[[str], str] | None) -> list[tuple[int, int, str]]:
    return [(e.start, e.end, name(e.category) if name else "") for e in errors
            if e.start is not None and e.end is not None]


def rater_agreement(
    ratings: Iterable[Rating], weight: Weight, *, name: Callable[[str], str] = str,
) -> Agreement:
    """Agreement of raters who rated the same translation (system and segment). Character figures are
    factgenie's (stats.overlap.factgenie_char_prf: only translations where both marked a located span count);
    segment scores are compared with Pearson, Spearman and Kendall over the shared translations."""
    by_unit: dict[tuple[str, Hashable], dict[str, Rating]] = defaultdict(dict)
    for r in ratings:
        by_unit[(r.system, r.segment)][r.rater] = r
    shared: dict[tuple[str, str], list[tuple[Rating, Rating]]] = defaultdict(list)
    for raters in by_unit.values():
        for a, b in combinations(sorted(raters), 2):
            shared[(a, b)].append((raters[a], raters[b]))
    result = Agreement()
    xs: list[float] = []
    ys: list[float] = []
    for (a, b), units in sorted(shared.items()):
        char = factgenie_char_prf((_located(x.errors, None), _located(y.errors, None)) for x, y in units)
        by_category = factgenie_char_prf((_located(x.errors, name), _located(y.errors, name)) for x, y in units)
        x = [segment_score(u.errors, weight) for u, _ in units]
        y = [segment_score(v.errors, weight) for _, v in units]
        xs += x
        ys += y
        result.pairs.append(RaterPair(a=a, b=b, segments=len(units), char=char, char_category=by_category,
                                      scores=correlations(x, y)))
        result.char += char
        result.char_category += by_category
    result.scores = correlations(xs, ys)
    return result
