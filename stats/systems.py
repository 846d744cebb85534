"""System-level results of any protocol that gives each output a number: per-system scores with bootstrap intervals,
rank clusters and rank ranges, and agreement between raters of the same outputs.

Plain data in, numbers out. A rating is one rater's value (an MQM segment score, an ESA 0-100 score) on one
system's output of one unit; the unit is what every system's output shares and what is resampled and paired: the
source segment for MQM and ESA, a document for a document-level protocol. A system's score is the mean of its
ratings' values. `better` says which direction wins: MQM counts penalties (lower is better), ESA scores quality
(higher is better). The intervals are stats.bootstrap's cluster bootstrap (the unit as cluster, every system seeing
the same resampled test set); the ranking is stats.ranking's paired approximate randomization over the units two
systems share, Holm-corrected, with WMT's rank ranges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import numpy as np

from stats.bootstrap import bootstrap_ratio_cis_grouped
from stats.correlation import Correlation, correlations
from stats.errors import StatsError
from stats.overlap import PRF, factgenie_char_prf
from stats.ranking import ALPHA, RESAMPLES, rank

Better = Literal["higher", "lower"]
HIGHER: Better = "higher"
LOWER: Better = "lower"


@dataclass(frozen=True)
class Observation:
    """One rater's value on one system's output of one unit."""

    system: str
    unit: Hashable
    value: float


@dataclass(frozen=True)
class SystemScore:
    """One system's line of a protocol's results (the JSON and CSV of MQM and ESA scores carry these fields).

    score: the mean of its ratings' values. ratings: how many ratings it has (one rater's value on one output; for
    MQM the rated (segment, rater) pairs). segments: on how many distinct units (source segments) it was rated, the
    number the bootstrap and the pairwise tests draw from. ci_low, ci_high: the percentile bootstrap interval of
    the score (None without a finite resample). rank_range: its (best, worst) rank, 1-based, from the pairwise
    tests; systems no test separates share a range.
    """

    system: str
    score: float
    ratings: int
    segments: int
    ci_low: float | None
    ci_high: float | None
    rank_range: tuple[int, int] | None


@dataclass(frozen=True)
class PairRow:
    """One pairwise test: `a` is the better-ranked of the two; `difference` is mean(a) - mean(b) over the units
    both have, in the score's own units (negative where lower is better)."""

    a: str
    b: str
    difference: float | None
    p: float | None
    p_holm: float | None
    segments: int  # units both systems were rated on


@dataclass
class SystemResults:
    systems: list[SystemScore] = field(default_factory=list)  # best first
    pairs: list[PairRow] = field(default_factory=list)
    better: Better = HIGHER
    resamples: int = 0
    rank_resamples: int = 0
    seed: int = 0
    alpha: float = ALPHA


def system_results(
    observations: Iterable[Observation], *, better: Better, n_resamples: int = 1000, seed: int = 0,
    confidence: float = 0.95, rank_resamples: int = RESAMPLES, alpha: float = ALPHA,
) -> SystemResults:
    """Each system's mean, best first, with a bootstrap interval over units (`n_resamples` from `seed`) and a rank
    range; and every pair's test (a before b in the ranked order)."""
    if better not in (HIGHER, LOWER):
        raise StatsError(f"better must be {HIGHER!r} or {LOWER!r}, not {better!r}")
    observations = list(observations)
    result = SystemResults(better=better, resamples=n_resamples, rank_resamples=rank_resamples, seed=seed,
                           alpha=alpha)
    systems = sorted({o.system for o in observations})
    if not systems:
        return result
    units = sorted({o.unit for o in observations}, key=repr)
    s_index = {s: i for i, s in enumerate(systems)}
    u_index = {u: i for i, u in enumerate(units)}
    counts = np.zeros((len(units), len(systems), 2))
    for o in observations:
        cell = counts[u_index[o.unit], s_index[o.system]]
        cell[0] += o.value
        cell[1] += 1
    totals = counts.sum(axis=0)
    means = totals[:, 0] / totals[:, 1]
    intervals = bootstrap_ratio_cis_grouped(counts, {"score": (0, 1)}, n_resamples=n_resamples,
                                            confidence=confidence, seed=seed)
    # stats.ranking ranks higher-is-better ratios of sums: where lower is better, the negated sums rank
    sign = 1.0 if better == HIGHER else -1.0
    signed = counts.copy()
    signed[:, :, 0] *= sign
    ranked = rank([sign * float(m) for m in means], signed, n_resamples=rank_resamples, seed=seed, alpha=alpha)
    for k, system in enumerate(systems):
        ci = intervals[k]["score"]
        result.systems.append(SystemScore(
            system=system, score=float(means[k]), ratings=int(totals[k, 1]),
            segments=int(np.count_nonzero(counts[:, k, 1])), ci_low=ci.low if ci else None,
            ci_high=ci.high if ci else None, rank_range=ranked.bounds[k]))
    result.systems.sort(key=lambda s: (-sign * s.score, s.system))
    result.pairs = [PairRow(a=systems[p.a], b=systems[p.b],
                            difference=None if p.test.difference is None else sign * p.test.difference,
                            p=p.test.p, p_holm=p.p_holm, segments=p.test.n_outputs) for p in ranked.pairs]
    return result


# ---- agreement between raters --------------------------------------------------------------------------------

Located = tuple[int, int, str]  # a span's start, end (exclusive) and its label (MQM: category; ESA: severity)


@dataclass(frozen=True)
class Rated:
    """One rater's value and located spans on one system's output of one unit."""

    system: str
    unit: Hashable
    rater: str
    value: float
    spans: tuple[Located, ...] = ()


@dataclass(frozen=True)
class RaterPair:
    """Two raters on the outputs both rated: their values' correlation, and factgenie's character F1 of their
    located spans with labels ignored (`char`) and required to match (`char_labelled`)."""

    a: str
    b: str
    outputs: int
    scores: Correlation
    char: PRF
    char_labelled: PRF


@dataclass
class Agreement:
    """Every pair of raters that share an output, and the same figures pooled over all pairs."""

    pairs: list[RaterPair] = field(default_factory=list)
    scores: Correlation = Correlation(n=0)
    char: PRF = PRF(0, 0, 0)
    char_labelled: PRF = PRF(0, 0, 0)


def _unlabelled(spans: Sequence[Located]) -> list[Located]:
    return [(start, end, "") for start, end, _ in spans]


def rater_agreement(rated: Iterable[Rated]) -> Agreement:
    """Agreement of raters who rated the same output (system and unit). Values: Pearson, Spearman and Kendall's
    tau-b (stats.correlation) over the shared outputs, per pair and pooled over all pairs. Spans: factgenie's
    character F1 (stats.overlap.factgenie_char_prf: only outputs where both marked a located span count)."""
    by_output: dict[tuple[str, Hashable], dict[str, Rated]] = defaultdict(dict)
    for r in rated:
        by_output[(r.system, r.unit)][r.rater] = r
    shared: dict[tuple[str, str], list[tuple[Rated, Rated]]] = defaultdict(list)
    for raters in by_output.values():
        for a, b in combinations(sorted(raters), 2):
            shared[(a, b)].append((raters[a], raters[b]))
    result = Agreement()
    xs: list[float] = []
    ys: list[float] = []
    for (a, b), outputs in sorted(shared.items()):
        x = [u.value for u, _ in outputs]
        y = [v.value for _, v in outputs]
        xs += x
        ys += y
        char = factgenie_char_prf((_unlabelled(u.spans), _unlabelled(v.spans)) for u, v in outputs)
        labelled = factgenie_char_prf((list(u.spans), list(v.spans)) for u, v in outputs)
        result.pairs.append(RaterPair(a=a, b=b, outputs=len(outputs), scores=correlations(x, y), char=char,
                                      char_labelled=labelled))
        result.char += char
        result.char_labelled += labelled
    result.scores = correlations(xs, ys)
    return result


# ---- per-rater standardisation -------------------------------------------------------------------------------


def standardised(rated: Iterable[Rated]) -> list[Rated]:
    """Each rating's value as a z-score within its rater: (value - the rater's mean) / the rater's standard
    deviation (population, as WMT's DA z-scores). Raters use a scale differently (one never goes below 40,
    another uses all of it); standardising removes each one's offset and spread before systems are compared.
    A rater with one rating or a constant scale carries no spread: their values become 0."""
    rated = list(rated)
    by_rater: dict[str, list[float]] = defaultdict(list)
    for r in rated:
        by_rater[r.rater].append(r.value)
    moments = {}
    for rater, values in by_rater.items():
        array = np.asarray(values, dtype=float)
        moments[rater] = (float(array.mean()), float(array.std()))
    out = []
    for r in rated:
        mean, sd = moments[r.rater]
        out.append(Rated(system=r.system, unit=r.unit, rater=r.rater, value=(r.value - mean) / sd if sd > 0 else 0.0,
                         spans=r.spans))
    return out
