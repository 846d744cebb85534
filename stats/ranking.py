"""Evaluators ranked with significance: paired approximate randomization, Holm's correction, rank ranges.

Each evaluator is judged on outputs; per output it has a count vector (judged spans, spans judged OK). Its
figure is a ratio of sums (Span OK % = OK / judged over all its outputs), as in Table 4. Two evaluators are
compared over the outputs both were judged on.

Why approximate randomization and not the paired bootstrap: it tests the null hypothesis directly (on each
shared output the two evaluators' counts are exchangeable), needs no shifting of a resampled distribution,
keeps each output's spans together (an output, not a span, is the unit that is swapped), and was found to
hold its nominal false-positive rate better than the bootstrap when comparing systems on the same test set
(Riezler and Maxwell 2005; Noreen 1989). All pairs are tested on one seeded draw of swaps, so a result
depends on the seed and the data only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stats.errors import StatsError

RESAMPLES = 10_000
ALPHA = 0.05
SEED = 0
_CHUNK = 1000


@dataclass(frozen=True)
class PairTest:
    difference: float | None  # ratio(a) - ratio(b) over the shared outputs, 0-1 scale
    p: float | None
    n_outputs: int


def paired_randomization(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, n_resamples: int = RESAMPLES, seed: int | Sequence[int] = SEED
) -> list[PairTest]:
    """Return, for each pair (a, b), the two-sided approximate randomization test of ratio(a) - ratio(b).

    `a` and `b` have one row per output and two columns (numerator, denominator): row i of both is the
    same output. Each resample swaps a's and b's rows on every output with probability 1/2; the p-value is
    (resamples with |difference| >= the observed one, plus one) / (resamples plus one), so it is never zero.
    Outputs where either side has a zero denominator carry no comparison and are dropped.

    All pairs are tested on one draw of coins, row i of every pair swapped by the same coin, so that one
    matrix product per chunk of resamples moves every pair at once. Each pair's test is valid on its own;
    the tests depend on one another, which Holm's correction allows. A pair with fewer rows than the
    others shares no output beyond its last row.
    """
    if n_resamples < 1:
        raise StatsError("n_resamples must be at least 1")
    sides = []
    for a, b in pairs:
        a = np.asarray(a, dtype=float).reshape(-1, 2)
        b = np.asarray(b, dtype=float).reshape(-1, 2)
        if a.shape != b.shape:
            raise StatsError("the two evaluators need one row per shared output each")
        sides.append((a, b))
    rows = max((len(a) for a, _ in sides), default=0)
    delta = np.zeros((rows, len(sides), 2))  # per pair, what swapping an output moves from b to a
    base_a, base_b = np.zeros((len(sides), 2)), np.zeros((len(sides), 2))
    shared = np.zeros(len(sides), dtype=int)
    for k, (a, b) in enumerate(sides):
        keep = (a[:, 1] > 0) & (b[:, 1] > 0)
        shared[k] = np.count_nonzero(keep)
        base_a[k], base_b[k] = a[keep].sum(axis=0), b[keep].sum(axis=0)
        delta[: len(a), k] = np.where(keep[:, None], b - a, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = _difference(base_a, base_b)
    # A pair whose swaps change nothing (the same counts on every shared output) needs no resample, and an
    # output on which no drawn pair differs changes nothing when swapped: only the others take a coin.
    drawn = np.flatnonzero((shared > 0) & np.any(delta != 0, axis=(0, 2)))
    delta = delta[:, drawn].reshape(rows, 2 * len(drawn))
    delta = delta[np.any(delta != 0, axis=1)]
    extreme = np.zeros(len(drawn), dtype=np.int64)
    if len(drawn):
        m = len(delta)
        # counts below 2**24 add up exactly in float32, which halves the cost of the product
        delta = delta.astype(np.float32 if np.abs(delta).sum(axis=0).max() < 2**24 else np.float64)
        base_a, base_b, threshold = base_a[drawn], base_b[drawn], np.abs(observed[drawn]) - 1e-12
        rng = np.random.default_rng(seed)
        for begin in range(0, n_resamples, _CHUNK):
            size = min(_CHUNK, n_resamples - begin)
            # one fair coin per output and resample, as bits of random bytes (far cheaper than uniform floats)
            coins = np.unpackbits(rng.integers(0, 256, size=(size, (m + 7) // 8), dtype=np.uint8), axis=1, count=m)
            moved = (coins.astype(delta.dtype) @ delta).astype(float).reshape(size, len(drawn), 2)
            diffs = _difference(base_a + moved, base_b - moved)
            extreme += np.count_nonzero(np.abs(diffs) >= threshold, axis=0)
    pvalues = np.ones(len(sides))  # a pair left undrawn: every swap pattern is as extreme as the observed one
    pvalues[drawn] = (extreme + 1) / (n_resamples + 1)
    return [PairTest(float(observed[k]), float(pvalues[k]), int(shared[k])) if shared[k] else PairTest(None, None, 0)
            for k in range(len(sides))]


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ratio(a) - ratio(b), the last axis holding (numerator, denominator)."""
    return a[..., 0] / a[..., 1] - b[..., 0] / b[..., 1]


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Return Holm's step-down adjusted p-values (None stays None and does not count among the tests)."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def rank_bounds(n: int, better: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return each evaluator's best and worst rank (1-based), given which evaluator significantly beats which
    (i, j): i > j.

    The best rank an evaluator can hold is one plus the number that significantly beat it; the worst is
    the number of evaluators minus the number it significantly beats (as WMT reports ranks).
    """
    return [(1 + sum(1 for j in range(n) if (j, i) in better), n - sum(1 for j in range(n) if (i, j) in better))
            for i in range(n)]


def rank_ranges(n: int, better: set[tuple[int, int]]) -> list[str]:
    """Return `rank_bounds` as text: evaluators that no test separates share a range ("1-3" each when all
    three are alike), a single rank stands alone."""
    return [rank_range_text(bounds) for bounds in rank_bounds(n, better)]


def rank_range_text(bounds: Sequence[int] | None) -> str:
    """Return a (best, worst) rank range as every table, CSV and figure writes it: "2-4", a single rank alone
    ("3"), and "" for a system without a rank."""
    if not bounds:
        return ""
    top, bottom = bounds
    return str(top) if top == bottom else f"{top}-{bottom}"


@dataclass(frozen=True)
class RankedPair:
    a: int  # indices into the evaluators as given
    b: int
    test: PairTest
    p_holm: float | None


@dataclass(frozen=True)
class RankingResult:
    order: list[int]  # evaluator indices, best first; evaluators without a figure last
    ranks: dict[int, str | None]
    pairs: list[RankedPair]
    bounds: dict[int, tuple[int, int] | None]  # the ranks' (best, worst), 1-based


def rank(
    values: Sequence[float | None],
    counts: np.ndarray,
    *,
    n_resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> RankingResult:
    """Rank evaluators by `values` (higher is better) with pairwise tests over their shared outputs.

    `counts` has the shape (outputs, evaluators, 2): evaluator k's (numerator, denominator) on each output,
    a zero denominator where it was not judged on it. Pairs are tested in the ranked order (a before b),
    Holm-corrected over all pairs that share an output; a pair separates its evaluators when the corrected p
    is below `alpha`, the better one being the one with the larger figure over the shared outputs.
    Evaluators without a figure get no rank.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 3 or counts.shape[1:] != (len(values), 2):
        raise StatsError("counts must have the shape (outputs, evaluators, 2), one evaluator per value")
    ranked = sorted((k for k, v in enumerate(values) if v is not None), key=lambda k: (-values[k], k))  # type: ignore[operator]
    order = ranked + [k for k, v in enumerate(values) if v is None]
    index = [(ranked[x], ranked[y]) for x in range(len(ranked)) for y in range(x + 1, len(ranked))]
    tests = paired_randomization([(counts[:, i], counts[:, j]) for i, j in index], n_resamples=n_resamples,
                                 seed=seed)
    adjusted = holm([t.p for t in tests])
    pairs = [RankedPair(i, j, t, q) for (i, j), t, q in zip(index, tests, adjusted, strict=True)]
    position = {k: x for x, k in enumerate(ranked)}
    better = set()
    for pair in pairs:
        if pair.p_holm is not None and pair.p_holm < alpha and pair.test.difference:
            winner, loser = (pair.a, pair.b) if pair.test.difference > 0 else (pair.b, pair.a)
            better.add((position[winner], position[loser]))
    limits = rank_bounds(len(ranked), better)
    ranks: dict[int, str | None] = {k: rank_range_text(limits[position[k]]) for k in ranked}
    ranks |= {k: None for k in order if k not in position}
    bounds: dict[int, tuple[int, int] | None] = {k: limits[position[k]] if k in position else None for k in order}
    return RankingResult(order=order, ranks=ranks, pairs=pairs, bounds=bounds)
