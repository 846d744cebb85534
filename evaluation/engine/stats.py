"""Human-study statistics: Table-4 matrices, bootstrap CIs, agreement, span overlap, calibration, correlations."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import krippendorff
import numpy as np
from scipy import stats as sps
from scipy.optimize import linear_sum_assignment

from corpus import protocol
from evaluation.engine.errors import EngineError
from evaluation.engine.ties import snap_ties

# The study protocol's vocabulary, in the column and row order of the paper's Table 4. corpus.protocol imports
# no Django, so the engine stays Django-free.
SPAN_VERDICTS: tuple[str, ...] = protocol.TABLE4_SPAN_ORDER
EXPLANATION_VERDICTS: tuple[str, ...] = protocol.TABLE4_EXPLANATION_ORDER
FLAGS: tuple[str, ...] = protocol.FLAG_VALUES
SEVERITIES: tuple[int, ...] = protocol.SEVERITIES

Span = tuple[int, int] | None
MatchMode = Literal["exact", "overlap"]


def ratio(numerator: float, denominator: float) -> float | None:
    """Return numerator / denominator, or None when nothing was counted (a rate of nothing is unknown, not 0)."""
    return numerator / denominator if denominator else None


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------- Table 4


@dataclass
class AccuracyMatrix:
    """Counts of (explanation verdict, span verdict) pairs, with the paper's two headline rates."""

    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {e: dict.fromkeys(SPAN_VERDICTS, 0) for e in EXPLANATION_VERDICTS}
    )

    def add(self, explanation: str, span: str, n: int) -> None:
        if explanation not in self.counts or span not in SPAN_VERDICTS:
            raise EngineError(f"unknown verdict pair ({explanation!r}, {span!r})")
        self.counts[explanation][span] += n

    def row_total(self, explanation: str) -> int:
        return sum(self.counts[explanation].values())

    def column_total(self, span: str) -> int:
        return sum(row[span] for row in self.counts.values())

    @property
    def total(self) -> int:
        return sum(self.row_total(e) for e in EXPLANATION_VERDICTS)

    @property
    def span_ok(self) -> float | None:
        """Share of judged spans whose span verdict is Error (the paper's "Span OK")."""
        return ratio(self.column_total(protocol.SPAN_OK), self.total)

    @property
    def exp_correct(self) -> float | None:
        """Share of judged spans whose explanation verdict is Correct (the paper's "Exp. correct")."""
        return ratio(self.row_total(protocol.EXPLANATION_OK), self.total)

    def merged(self, other: AccuracyMatrix) -> AccuracyMatrix:
        out = AccuracyMatrix()
        for e in EXPLANATION_VERDICTS:
            for s in SPAN_VERDICTS:
                out.counts[e][s] = self.counts[e][s] + other.counts[e][s]
        return out


def accuracy_matrix(cells: Iterable[tuple[str, str, int]]) -> AccuracyMatrix:
    """Build a matrix from (explanation verdict, span verdict, count) cells, e.g. a GROUP BY result."""
    matrix = AccuracyMatrix()
    for explanation, span, n in cells:
        matrix.add(explanation, span, n)
    return matrix


# --------------------------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def bootstrap_ratio_cis(
    item_counts: Sequence[Sequence[float]] | np.ndarray,
    ratios: Mapping[str, tuple[int, int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Interval | None]:
    """Return percentile bootstrap intervals of ratios of column sums, resampling items (rows).

    `item_counts[i]` is item i's count vector (e.g. judged, span ok, explanation correct); `ratios` names
    (numerator column, denominator column) pairs. The same seed and row order give the same intervals.
    """
    counts = np.asarray(item_counts, dtype=float)
    if counts.size == 0:
        return dict.fromkeys(ratios)
    if counts.ndim != 2:
        raise EngineError("item_counts must be a 2-d table: one count vector per item")
    return bootstrap_ratio_cis_grouped(
        counts[:, None, :], ratios, n_resamples=n_resamples, confidence=confidence, seed=seed
    )[0]


def bootstrap_ratio_cis_grouped(
    item_counts: np.ndarray,
    ratios: Mapping[str, tuple[int, int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    chunk: int = 250,
) -> list[dict[str, Interval | None]]:
    """Return bootstrap intervals for several groups (evaluators, annotators, ...) from one set of resamples.

    `item_counts` has shape (items, groups, columns): each group's count vector per item, zeros where a
    group has nothing on an item. Each resample draws items with replacement (as many as there are) and
    sums every group's vectors over the drawn items, so all groups see the same resampled study: a
    cluster bootstrap with the item as cluster. A resample that holds none of a group's items gives it
    no ratio and is skipped for that group.
    """
    if not 0 < confidence < 1:
        raise EngineError(f"confidence must be in (0, 1), got {confidence}")
    counts = np.asarray(item_counts, dtype=float)
    if counts.ndim != 3:
        raise EngineError("item_counts must have the shape (items, groups, columns)")
    n_items, n_groups, width = counts.shape
    if n_items == 0 or n_resamples < 1:
        return [dict.fromkeys(ratios) for _ in range(n_groups)]
    flat = counts.reshape(n_items, n_groups * width)
    # integer counts below 2**24 are exact in float32, which halves the cost of the products
    dtype = np.float32 if flat.sum() < 2**24 else np.float64
    flat = flat.astype(dtype)
    rng = np.random.default_rng(seed)
    sums = np.empty((n_resamples, n_groups * width))
    for begin in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - begin)
        picks = rng.integers(0, n_items, size=(size, n_items))
        # how often each item was drawn in each resample, then all groups' sums in one matrix product
        draws = np.bincount((picks + n_items * np.arange(size)[:, None]).ravel(), minlength=size * n_items)
        sums[begin : begin + size] = draws.reshape(size, n_items).astype(dtype) @ flat
    sums = sums.reshape(n_resamples, n_groups, width)
    tail = (1 - confidence) / 2 * 100
    out: list[dict[str, Interval | None]] = [{} for _ in range(n_groups)]
    for name, (num, den) in ratios.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            values = sums[:, :, num] / sums[:, :, den]
        for g in range(n_groups):
            finite = values[:, g][np.isfinite(values[:, g])]
            if finite.size == 0:
                out[g][name] = None
                continue
            low, high = np.percentile(finite, [tail, 100 - tail])
            out[g][name] = Interval(float(low), float(high))
    return out


# --------------------------------------------------------------------------------------------- agreement


def krippendorff_alpha_nominal(value_counts: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Return Krippendorff's alpha (nominal) from a units x categories table of how many coders chose what.

    Units coded by fewer than two coders carry no pairs and are dropped. None when no unit has two codes
    or when every pairable value is the same category (expected disagreement 0: alpha is 0/0).
    """
    table = np.asarray(value_counts, dtype=float)
    if table.size == 0:
        return None
    table = table[table.sum(axis=1) >= 2]
    if table.shape[0] == 0 or np.count_nonzero(table.sum(axis=0)) < 2:
        return None
    return _finite(krippendorff.alpha(value_counts=table, level_of_measurement="nominal"))


def observed_agreement(value_counts: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Return the share of agreeing coder pairs among all pairs of coders of the same unit.

    A unit with k codes holds k(k-1)/2 pairs, of which sum_c n_c(n_c-1)/2 agree. This is the pooled
    pairwise percentage agreement (as a fraction).
    """
    table = np.asarray(value_counts, dtype=float)
    if table.size == 0:
        return None
    per_unit = table.sum(axis=1)
    pairs = (per_unit * (per_unit - 1) / 2).sum()
    agreeing = (table * (table - 1) / 2).sum()
    return ratio(float(agreeing), float(pairs))


def distribution(counts: Mapping[str, int], categories: Sequence[str]) -> dict[str, float | None]:
    """Return each category's share of the counted total (None for all when nothing was counted)."""
    total = sum(counts.get(c, 0) for c in categories)
    return {c: ratio(counts.get(c, 0), total) for c in categories}


# --------------------------------------------------------------------------------------------- span overlap


@dataclass(frozen=True)
class PRF:
    """Matched units out of predicted and reference ones (spans or characters)."""

    matched: int
    n_predicted: int
    n_reference: int

    @property
    def precision(self) -> float | None:
        return ratio(self.matched, self.n_predicted)

    @property
    def recall(self) -> float | None:
        return ratio(self.matched, self.n_reference)

    @property
    def f1(self) -> float | None:
        # 2PR/(P+R) written on counts: defined (as 0) even when one side is empty and nothing matched.
        return ratio(2 * self.matched, self.n_predicted + self.n_reference)

    @property
    def missed(self) -> int:
        """Reference units no prediction covered: the errors the machine missed."""
        return self.n_reference - self.matched

    def __add__(self, other: PRF) -> PRF:
        return PRF(
            self.matched + other.matched, self.n_predicted + other.n_predicted, self.n_reference + other.n_reference
        )


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def match_spans(predicted: Sequence[Span], reference: Sequence[Span], *, mode: MatchMode) -> list[tuple[int, int]]:
    """Return a one-to-one matching (predicted index, reference index) of maximum size.

    "exact" pairs spans with equal offsets; "overlap" pairs spans sharing at least one character, and
    among the largest matchings takes one with the most overlapping characters in total (a maximum
    weight bipartite matching, solved by linear_sum_assignment). Spans without offsets (None) never match.
    """
    if mode not in ("exact", "overlap"):
        raise EngineError(f"unknown match mode {mode!r}")
    pred = [(i, s) for i, s in enumerate(predicted) if s is not None]
    ref = [(j, s) for j, s in enumerate(reference) if s is not None]
    if not pred or not ref:
        return []
    if mode == "exact":
        # equal offsets form cliques, so pairing the k-th copy on each side is already a maximum matching
        free: dict[tuple[int, int], list[int]] = {}
        for j, span in ref:
            free.setdefault(span, []).append(j)
        pairs = []
        for i, span in pred:
            if free.get(span):
                pairs.append((i, free[span].pop(0)))
        return pairs
    p = np.array([s for _, s in pred])
    r = np.array([s for _, s in ref])
    overlaps = np.clip(np.minimum(p[:, None, 1], r[None, :, 1]) - np.maximum(p[:, None, 0], r[None, :, 0]), 0, None)
    linked = overlaps > 0
    if not linked.any():
        return []
    # one more pair must outweigh any gain in overlap: `big` exceeds the largest possible overlap sum
    big = float(overlaps.sum()) + 1
    weights = np.where(linked, big + overlaps, 0.0)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return [(pred[a][0], ref[b][0]) for a, b in zip(rows, cols, strict=True) if linked[a, b]]


def span_prf(items: Iterable[tuple[Sequence[Span], Sequence[Span]]], *, mode: MatchMode) -> PRF:
    """Return span-level counts micro-averaged over items, each given as (predicted spans, reference spans)."""
    total = PRF(0, 0, 0)
    for predicted, reference in items:
        matched = len(match_spans(predicted, reference, mode=mode))
        total += PRF(matched, len(predicted), len(reference))
    return total


def _union(spans: Iterable[Span]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s is not None):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def char_prf(items: Iterable[tuple[Sequence[Span], Sequence[Span]]]) -> PRF:
    """Return character-level counts: characters covered by predictions, by the reference, and by both."""
    total = PRF(0, 0, 0)
    for predicted, reference in items:
        p, r = _union(predicted), _union(reference)
        both = sum(_overlap(a, b) for a in p for b in r)
        total += PRF(both, sum(b - a for a, b in p), sum(b - a for a, b in r))
    return total


@dataclass(frozen=True)
class OverlapCounts:
    """An evaluator's span-level (exact, any-overlap) and character-level counts against a reference."""

    exact: PRF
    overlap: PRF
    chars: PRF


def overlap_prf(items: Iterable[tuple[Sequence[Span], Sequence[Span]]]) -> OverlapCounts:
    """Return `span_prf` (both modes) and `char_prf` of the same items in one pass.

    Most items have few spans and no contested overlaps (no span overlapping two on the other side);
    there the number of linked pairs is already the maximum matching, so the assignment solver runs
    only where a choice exists.
    """
    exact = overlap = chars = PRF(0, 0, 0)
    for predicted, reference in items:
        pred = [s for s in predicted if s is not None]
        ref = [s for s in reference if s is not None]
        n_exact = n_overlap = 0
        if pred and ref:
            n_exact = len(match_spans(pred, ref, mode="exact"))
            sizes = [[_overlap(p, r) for r in ref] for p in pred]
            row_links = [sum(1 for v in row if v) for row in sizes]
            col_links = [sum(1 for row in sizes if row[j]) for j in range(len(ref))]
            if max(row_links) <= 1 and max(col_links) <= 1:
                n_overlap = sum(row_links)
            else:
                n_overlap = len(match_spans(pred, ref, mode="overlap"))
        exact += PRF(n_exact, len(predicted), len(reference))
        overlap += PRF(n_overlap, len(predicted), len(reference))
        p_union, r_union = _union(pred), _union(ref)
        both = sum(_overlap(a, b) for a in p_union for b in r_union) if p_union and r_union else 0
        chars += PRF(both, sum(b - a for a, b in p_union), sum(b - a for a, b in r_union))
    return OverlapCounts(exact=exact, overlap=overlap, chars=chars)


def _union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Return the number of positions covered by intervals [start, end) (they may overlap)."""
    if starts.size == 0:
        return 0
    order = np.lexsort((ends, starts))
    s, e = starts[order], ends[order]
    reach = np.concatenate(([s[0]], np.maximum.accumulate(e)[:-1]))
    return int(np.maximum(0, e - np.maximum(s, reach)).sum())


def overlap_prf_arrays(predicted: np.ndarray, reference: np.ndarray) -> OverlapCounts:
    """Return the counts of `overlap_prf` from whole tables of spans, one row (item, start, end) per span.

    Unlocated spans have start = -1 (they count, but never match). Same numbers as `overlap_prf` over
    the items, computed with array operations: exact matches by counting equal rows, characters through
    unions of intervals laid out item after item, and the assignment solver only for items where some
    span overlaps two on the other side.
    """
    pred = np.asarray(predicted, dtype=np.int64).reshape(-1, 3)
    ref = np.asarray(reference, dtype=np.int64).reshape(-1, 3)
    n_pred, n_ref = len(pred), len(ref)
    pred, ref = pred[pred[:, 1] >= 0], ref[ref[:, 1] >= 0]
    items = np.unique(np.concatenate((pred[:, 0], ref[:, 0])))
    stride = int(max(pred[:, 2].max(initial=0), ref[:, 2].max(initial=0))) + 1
    p_rank, r_rank = np.searchsorted(items, pred[:, 0]), np.searchsorted(items, ref[:, 0])
    # characters: items laid end to end `stride` apart, so intervals of different items never touch
    p_s, p_e = p_rank * stride + pred[:, 1], p_rank * stride + pred[:, 2]
    r_s, r_e = r_rank * stride + ref[:, 1], r_rank * stride + ref[:, 2]
    p_len, r_len = _union_length(p_s, p_e), _union_length(r_s, r_e)
    both = p_len + r_len - _union_length(np.concatenate((p_s, r_s)), np.concatenate((p_e, r_e)))
    chars = PRF(both, p_len, r_len)
    if not len(pred) or not len(ref):
        return OverlapCounts(PRF(0, n_pred, n_ref), PRF(0, n_pred, n_ref), chars)
    # exact: an offset pair present a times among predictions and b times in the reference gives min(a, b)
    both_sides = np.concatenate((pred, ref))
    if len(items) * stride * stride < 2**62:
        # one integer per (item, start, end): far faster to sort than rows
        ranks = np.concatenate((p_rank, r_rank))
        keys, inverse = np.unique((ranks * stride + both_sides[:, 1]) * stride + both_sides[:, 2], return_inverse=True)
    else:
        keys, inverse = np.unique(both_sides, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    in_pred = np.bincount(inverse[: len(pred)], minlength=len(keys))
    in_ref = np.bincount(inverse[len(pred) :], minlength=len(keys))
    n_exact = int(np.minimum(in_pred, in_ref).sum())
    # any overlap: all (prediction, reference) pairs of the same item
    p_order, r_order = np.argsort(p_rank, kind="stable"), np.argsort(r_rank, kind="stable")
    pred, p_rank, ref, r_rank = pred[p_order], p_rank[p_order], ref[r_order], r_rank[r_order]
    refs_per_item = np.bincount(r_rank, minlength=len(items))
    ref_offset = np.concatenate(([0], np.cumsum(refs_per_item)[:-1]))
    reps = refs_per_item[p_rank]
    pi = np.repeat(np.arange(len(pred)), reps)
    ri = ref_offset[p_rank[pi]] + np.arange(len(pi)) - np.repeat(np.cumsum(reps) - reps, reps)
    sizes = np.minimum(pred[pi, 2], ref[ri, 2]) - np.maximum(pred[pi, 1], ref[ri, 1])
    pi, ri = pi[sizes > 0], ri[sizes > 0]
    contested = (np.bincount(pi, minlength=len(pred))[pi] > 1) | (np.bincount(ri, minlength=len(ref))[ri] > 1)
    hard_items = np.unique(p_rank[pi[contested]])
    n_overlap = int(np.count_nonzero(~np.isin(p_rank[pi], hard_items)))
    preds_per_item = np.bincount(p_rank, minlength=len(items))
    pred_offset = np.concatenate(([0], np.cumsum(preds_per_item)[:-1]))
    for k in hard_items:
        p_rows = pred[pred_offset[k] : pred_offset[k] + preds_per_item[k], 1:]
        r_rows = ref[ref_offset[k] : ref_offset[k] + refs_per_item[k], 1:]
        n_overlap += len(match_spans([tuple(r) for r in p_rows], [tuple(r) for r in r_rows], mode="overlap"))
    return OverlapCounts(PRF(n_exact, n_pred, n_ref), PRF(n_overlap, n_pred, n_ref), chars)


# --------------------------------------------------------------------------------------------- calibration


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
            raise EngineError(f"severities must be 1..5, got ({machine}, {human})")
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


# --------------------------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class Correlation:
    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None


def correlations(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Correlation:
    """Return Pearson, Spearman and Kendall (tau-b) with p-values; None where undefined (n < 3, a constant side).

    The one correlation of the project: the rank coefficients see values equal to within 1e-9 (relative) as
    ties (`ties.snap_ties`), so float noise in means never breaks a tie; Pearson reads the values as they are."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise EngineError(f"correlation needs paired values, got {xs.size} and {ys.size}")
    n = int(xs.size)
    xr, yr = snap_ties(xs), snap_ties(ys)
    if n < 3 or np.ptp(xr) == 0 or np.ptp(yr) == 0:
        return Correlation(n=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = sps.pearsonr(xs, ys)
        sr = sps.spearmanr(xr, yr)
        kt = sps.kendalltau(xr, yr)
    return Correlation(
        n=n,
        pearson=_finite(pr.statistic), pearson_p=_finite(pr.pvalue),
        spearman=_finite(sr.statistic), spearman_p=_finite(sr.pvalue),
        kendall=_finite(kt.statistic), kendall_p=_finite(kt.pvalue),
    )
