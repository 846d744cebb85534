"""Side-by-side figures: pairwise wins with sign tests, a Bradley-Terry ranking, position bias, marking consistency.

Plain data in, numbers out. A judged output is one rater's MQM score of one system's output of one segment, with the
screen (unit) it was judged on and its column there. Of two outputs compared, the better one has the lower MQM
score; equal scores tie. Two systems shown together on some screens are compared on those screens only; two
systems never shown together are compared on every (rater, segment) that rated both, each side's score the mean of
its outputs there (a system shown in two pairs, `X_with_Y`, has two). Win rates leave ties out; p-values are the
exact two-sided sign test, Holm-adjusted over the pairs; intervals of shares are Clopper-Pearson's exact ones.

Bradley-Terry: P(i beats j) = 1 / (1 + exp(s_j - s_i)), fitted to every decided comparison of every pair by
maximum likelihood under a weak Gaussian prior on the log-strengths (choix's `alpha`, variance 1 / (2 alpha)), so
that a system that never loses keeps a finite strength; the strengths then sum to zero. Their intervals are a
percentile bootstrap over segments; rank ranges come from the pairs' Holm-adjusted sign tests as WMT reports them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.optimize import minimize
from scipy.stats import binomtest

from stats.errors import StatsError
from stats.ranking import ALPHA, holm, rank_bounds

PRIOR = 0.01  # choix's alpha: a Gaussian prior of variance 50 on each log-strength
RESAMPLES = 1000
TIE = 1e-9
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Judged:
    """One rater's MQM score of one system's output of one segment, and where it was shown."""

    system: str
    segment: Hashable
    rater: str
    score: float
    unit: Hashable | None = None  # the screen; None: judged alone
    position: int | None = None  # its column on the screen (1 the first); None when unknown
    text: str = ""  # the output, for the marking consistency
    spans: tuple[tuple[int, int], ...] = ()  # its marked errors' offsets in `text`


@dataclass(frozen=True)
class Strength:
    system: str
    strength: float  # the Bradley-Terry log-strength
    ci_low: float | None
    ci_high: float | None
    rank_range: tuple[int, int] | None


@dataclass(frozen=True)
class Pair:
    a: str  # the stronger of the two
    b: str
    units: int  # comparisons: shared screens, or (rater, segment) pairs for systems never shown together
    a_better: int
    b_better: int
    ties: int
    a_win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    shown_together: bool


@dataclass(frozen=True)
class Share:
    hits: int
    n: int
    share: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass
class PairwiseResults:
    systems: list[Strength] = field(default_factory=list)  # strongest first
    pairs: list[Pair] = field(default_factory=list)
    position_bias: Share = Share(0, 0, None, None, None)  # hits: decided screens won by the first column
    consistency_together: Share = Share(0, 0, None, None, None)
    consistency_others: Share = Share(0, 0, None, None, None)


def exact_share(hits: int, n: int, confidence: float = 0.95) -> Share:
    """hits / n with its Clopper-Pearson interval (None for all three when n is 0)."""
    if n == 0:
        return Share(0, 0, None, None, None)
    ci = binomtest(hits, n).proportion_ci(confidence_level=confidence, method="exact")
    return Share(hits, n, hits / n, float(ci.low), float(ci.high))


def sign_test(a: int, b: int) -> float | None:
    """The exact two-sided sign test of a wins against b wins (ties left out); None without a decided one."""
    return float(binomtest(a, a + b, 0.5).pvalue) if a + b else None


# ---- comparisons ---------------------------------------------------------------------------------------------

Comparison = tuple[str, str, Hashable, float, float]  # system a, system b (a < b), segment, score a, score b


def comparisons(judged: Iterable[Judged], *, apart: bool = True) -> tuple[list[Comparison], set[tuple[str, str]]]:
    """Every comparison of two systems (the module's docstring says which), and the pairs shown together; without
    `apart`, only those shown together (a preference says nothing about outputs it did not compare)."""
    judged = list(judged)
    screens: dict[Hashable, list[Judged]] = defaultdict(list)
    for j in judged:
        if j.unit is not None:
            screens[j.unit].append(j)
    out: list[Comparison] = []
    together: set[tuple[str, str]] = set()
    for outputs in screens.values():
        for x, y in combinations(sorted(outputs, key=lambda j: j.system), 2):
            if x.system != y.system:
                together.add((x.system, y.system))
                out.append((x.system, y.system, x.segment, x.score, y.score))
    rated: dict[tuple[str, Hashable], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j in judged:
        rated[(j.rater, j.segment)][j.system].append(j.score)
    for (_, segment), systems in rated.items() if apart else ():
        for a, b in combinations(sorted(systems), 2):
            if (a, b) not in together:
                out.append((a, b, segment, float(np.mean(systems[a])), float(np.mean(systems[b]))))
    return out, together


def _wins(found: Sequence[Comparison], index: dict[str, int], segments: dict[Hashable, int]) -> np.ndarray:
    """(segments, systems, systems): how often the row system beat the column one on each segment."""
    wins = np.zeros((len(segments), len(index), len(index)))
    for a, b, segment, x, y in found:
        if abs(x - y) > TIE:
            winner, loser = (a, b) if x < y else (b, a)
            wins[segments[segment], index[winner], index[loser]] += 1
    return wins


# ---- Bradley-Terry -------------------------------------------------------------------------------------------


def bradley_terry(wins: np.ndarray, *, prior: float = PRIOR, start: np.ndarray | None = None) -> np.ndarray:
    """The log-strengths maximising the Bradley-Terry likelihood of `wins` (wins[i, j]: i beat j) under the prior,
    choix's `opt_pairwise` objective (prior * |s|^2 plus the negative log-likelihood) with its matrix form."""
    wins = np.asarray(wins, dtype=float)
    n = len(wins)
    if wins.shape != (n, n):
        raise StatsError("wins must be a square matrix, one row and column per system")
    if prior <= 0:
        raise StatsError("the prior must be positive, or a system that never loses has no finite strength")

    def parts(s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        d = s[:, None] - s[None, :]
        loss = float(prior * s @ s + np.sum(wins * np.logaddexp(0.0, -d)))
        p = wins / (1.0 + np.exp(d))  # each win's gradient weight: sigmoid(-(s_i - s_j))
        grad = 2 * prior * s - p.sum(axis=1) + p.sum(axis=0)
        v = wins / (2.0 + np.exp(d) + np.exp(-d))
        v = v + v.T
        hess = 2 * prior * np.eye(n) + np.diag(v.sum(axis=1)) - v
        return loss, grad, hess

    result = minimize(lambda s: parts(s)[0], np.zeros(n) if start is None else start, method="Newton-CG",
                      jac=lambda s: parts(s)[1], hess=lambda s: parts(s)[2], options={"xtol": 1e-10})
    return np.asarray(result.x, dtype=float)


# ---- the figures ---------------------------------------------------------------------------------------------


def pairwise_results(
    judged: Iterable[Judged], *, n_resamples: int = RESAMPLES, seed: int = 0, confidence: float = 0.95,
    alpha: float = ALPHA, prior: float = PRIOR, apart: bool = True,
) -> PairwiseResults:
    """Every side-by-side figure of the module's docstring (`apart`: as `comparisons`)."""
    if n_resamples < 1:
        raise StatsError("n_resamples must be at least 1")
    if not 0 < confidence < 1:
        raise StatsError("confidence must lie between 0 and 1")
    judged = list(judged)
    found, together = comparisons(judged, apart=apart)
    systems = sorted({j.system for j in judged})
    result = PairwiseResults()
    if not systems:
        return result
    index = {s: k for k, s in enumerate(systems)}
    segments = {s: k for k, s in enumerate(sorted({j.segment for j in judged}, key=repr))}
    per_segment = _wins(found, index, segments)
    strength = bradley_terry(per_segment.sum(axis=0), prior=prior)
    rng = np.random.default_rng(seed)
    draws = np.empty((n_resamples, len(systems)))
    for r in range(n_resamples):
        weights = np.bincount(rng.integers(0, len(segments), len(segments)), minlength=len(segments))
        draws[r] = bradley_terry(np.tensordot(weights, per_segment, axes=1), prior=prior, start=strength)
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail], axis=0)
    order = sorted(range(len(systems)), key=lambda k: (-strength[k], systems[k]))
    rank_of = {k: r for r, k in enumerate(order)}
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for a, b, _, x, y in found:
        cell = counts[(a, b)]
        cell[2 if abs(x - y) <= TIE else 0 if x < y else 1] += 1
    pairs = []
    for (a, b), (a_wins, b_wins, ties) in counts.items():
        if rank_of[index[b]] < rank_of[index[a]]:
            a, b, a_wins, b_wins = b, a, b_wins, a_wins
        share = exact_share(a_wins, a_wins + b_wins, confidence)
        pairs.append([a, b, a_wins + b_wins + ties, a_wins, b_wins, ties, share, sign_test(a_wins, b_wins),
                      tuple(sorted((a, b))) in together])
    adjusted = holm([p[7] for p in pairs])
    better = set()
    for p, q in zip(pairs, adjusted, strict=True):
        if q is not None and q < alpha and p[3] != p[4]:
            winner, loser = (p[0], p[1]) if p[3] > p[4] else (p[1], p[0])
            better.add((rank_of[index[winner]], rank_of[index[loser]]))
    bounds = rank_bounds(len(systems), better)
    result.systems = [Strength(systems[k], float(strength[k]), float(low[k]), float(high[k]), bounds[rank_of[k]])
                      for k in order]
    result.pairs = sorted((Pair(a=p[0], b=p[1], units=p[2], a_better=p[3], b_better=p[4], ties=p[5],
                                a_win_rate=p[6].share, ci_low=p[6].ci_low, ci_high=p[6].ci_high, p_value=p[7],
                                p_holm=q, shown_together=p[8]) for p, q in zip(pairs, adjusted, strict=True)),
                          key=lambda p: (not p.shown_together, rank_of[index[p.a]], rank_of[index[p.b]]))
    result.position_bias = position_bias(judged, confidence)
    result.consistency_together, result.consistency_others = consistency(judged, confidence)
    return result


def position_bias(judged: Iterable[Judged], confidence: float = 0.95) -> Share:
    """Of the screens of two outputs in known columns 1 and 2 whose scores differ, the share won by column 1."""
    screens: dict[Hashable, list[Judged]] = defaultdict(list)
    for j in judged:
        if j.unit is not None:
            screens[j.unit].append(j)
    first = decided = 0
    for outputs in screens.values():
        placed = {j.position: j for j in outputs}
        if len(outputs) != 2 or set(placed) != {1, 2} or abs(placed[1].score - placed[2].score) <= TIE:
            continue
        decided += 1
        first += placed[1].score < placed[2].score
    return exact_share(first, decided, confidence)


def _marked(j: Judged) -> list[str]:
    return [j.text[s:e].strip() for s, e in j.spans if _WORD.search(j.text[s:e])]


def _covered(text: str, spans: Sequence[tuple[int, int]], other: Judged) -> bool:
    """Whether one of `other`'s marked spans overlaps an occurrence of `text` in its output."""
    at = other.text.find(text)
    while at >= 0:
        if any(s < at + len(text) and at < e for s, e in spans):
            return True
        at = other.text.find(text, at + 1)
    return False


def consistency(judged: Iterable[Judged], confidence: float = 0.95) -> tuple[Share, Share]:
    """Inter-output marking consistency of one rater across the outputs of one segment, for outputs shown together
    and for the others: of the errors marked in one output (a span with a letter or digit) whose text also occurs
    in the other output, the share the rater marked there too (a marked span overlapping an occurrence)."""
    rated: dict[tuple[str, Hashable], list[Judged]] = defaultdict(list)
    for j in judged:
        rated[(j.rater, j.segment)].append(j)
    hits = {True: 0, False: 0}
    n = {True: 0, False: 0}
    for outputs in rated.values():
        for x in outputs:
            for y in outputs:
                if x is y or x.system == y.system:
                    continue
                shown = x.unit is not None and x.unit == y.unit
                for text in _marked(x):
                    if text in y.text:
                        n[shown] += 1
                        hits[shown] += _covered(text, y.spans, y)
    return exact_share(hits[True], n[True], confidence), exact_share(hits[False], n[False], confidence)


@dataclass(frozen=True)
class Checks:
    rater: str
    found: int
    missed: int


def check_counts(checks: Iterable[tuple[str, bool]]) -> list[Checks]:
    """Planted-error checks per rater, from (rater, found) pairs, raters in natural order."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for rater, found in checks:
        counts[rater][0 if found else 1] += 1
    key = [(int(m.group()) if (m := re.search(r"\d+$", r)) else -1, r) for r in counts]
    return [Checks(r, *counts[r]) for _, r in sorted(key, key=lambda t: (re.sub(r"\d+$", "", t[1]), t[0], t[1]))]
