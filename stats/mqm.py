"""MQM figures: segment and system scores with bootstrap intervals and rank ranges, per-category breakdowns, and
agreement between raters on spans and on segment scores.

Plain data in, numbers out. A rating is one rater's errors in one system's translation of one segment; a
segment's score is the sum of its errors' weights, a system's MQM score the mean over its rated (segment,
rater) pairs, lower is better (Freitag et al. 2021); stats.systems computes the scores, rankings and agreement.
Weights come in as a function (category, severity) -> weight, so that the protocol's wildcard table
(corpus.protocols.mqm.Weights) or any other scheme plugs in.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from stats import systems
from stats.ranking import ALPHA, RESAMPLES
from stats.systems import LOWER, Agreement, Observation, Rated, SystemScore, system_results

__all__ = ["Agreement", "SystemScore"]  # the results' types, as stats.systems defines them

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


def system_scores(
    ratings: Sequence[Rating], weight: Weight, *, n_resamples: int = 1000, seed: int = 0,
    confidence: float = 0.95, rank_resamples: int = RESAMPLES, alpha: float = ALPHA,
) -> list[SystemScore]:
    """Each system's MQM score, best (lowest) first, with a bootstrap interval over source segments and a rank
    range: stats.systems with lower is better and the segment as unit."""
    observations = [Observation(r.system, r.segment, segment_score(r.errors, weight)) for r in ratings]
    return system_results(observations, better=LOWER, n_resamples=n_resamples, seed=seed, confidence=confidence,
                          rank_resamples=rank_resamples, alpha=alpha).systems


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


def rater_agreement(
    ratings: Iterable[Rating], weight: Weight, *, name: Callable[[str], str] = str,
) -> Agreement:
    """Agreement of raters who rated the same translation (stats.systems.rater_agreement): segment scores, and
    located spans labelled by category as `name` spells it."""
    return systems.rater_agreement(
        Rated(r.system, r.segment, r.rater, segment_score(r.errors, weight),
              tuple((e.start, e.end, name(e.category)) for e in r.errors if e.start is not None and e.end is not None))
        for r in ratings)
