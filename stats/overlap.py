"""Span overlap of predictions against a reference: one-to-one matching, span- and character-level counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from stats.errors import StatsError
from stats.shares import ratio

Span = tuple[int, int] | None
MatchMode = Literal["exact", "overlap"]



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


def shared_chars(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> int:
    """Return how many characters two half-open ranges [start, end) share: the one test of span overlap
    (overlapping = sharing at least one). A range without offsets (missing content, an unlocated error) has no
    character to share, nor has an empty one."""
    if a[0] is None or a[1] is None or b[0] is None or b[1] is None:
        return 0
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def match_spans(predicted: Sequence[Span], reference: Sequence[Span], *, mode: MatchMode) -> list[tuple[int, int]]:
    """Return a one-to-one matching (predicted index, reference index) of maximum size.

    "exact" pairs spans with equal offsets; "overlap" pairs spans sharing at least one character, and
    among the largest matchings takes one with the most overlapping characters in total (a maximum
    weight bipartite matching, solved by linear_sum_assignment). Spans without offsets (None) never match.
    """
    if mode not in ("exact", "overlap"):
        raise StatsError(f"unknown match mode {mode!r}")
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
        both = sum(shared_chars(a, b) for a in p for b in r)
        total += PRF(both, sum(b - a for a, b in p), sum(b - a for a, b in r))
    return total


def factgenie_char_prf(items: Iterable[tuple[Sequence[tuple[int, int, str]], Sequence[tuple[int, int, str]]]]) -> PRF:
    """Return character counts as factgenie computes them, over items given as (predicted, reference) lists of
    located (start, end, label) spans: items where either side has no span are left out; each side's span
    lengths are summed (a character under two spans counts twice); a character (with its label) counts as
    matched min(#predicted, #reference) times. Give every span the same label to ignore categories."""
    total = PRF(0, 0, 0)
    for predicted, reference in items:
        if not predicted or not reference:
            continue
        covers: list[Counter[tuple[int, str]]] = [Counter(), Counter()]
        for spans, cover in ((predicted, covers[0]), (reference, covers[1])):
            for start, end, label in spans:
                for position in range(start, end):
                    cover[(position, label)] += 1
        matched = sum(min(n, covers[1][cell]) for cell, n in covers[0].items() if cell in covers[1])
        total += PRF(matched, sum(e - s for s, e, _ in predicted), sum(e - s for s, e, _ in reference))
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
            sizes = [[shared_chars(p, r) for r in ref] for p in pred]
            row_links = [sum(1 for v in row if v) for row in sizes]
            col_links = [sum(1 for row in sizes if row[j]) for j in range(len(ref))]
            if max(row_links) <= 1 and max(col_links) <= 1:
                n_overlap = sum(row_links)
            else:
                n_overlap = len(match_spans(pred, ref, mode="overlap"))
        exact += PRF(n_exact, len(predicted), len(reference))
        overlap += PRF(n_overlap, len(predicted), len(reference))
        p_union, r_union = _union(pred), _union(ref)
        both = sum(shared_chars(a, b) for a in p_union for b in r_union) if p_union and r_union else 0
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
