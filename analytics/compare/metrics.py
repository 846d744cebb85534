"""Agreement of two sources' error spans on the outputs both annotated (no Django: plain data in, numbers out).

Our definitions (docs: guides/interop): span-level P/R/F1 with a one-to-one maximum matching
(exact offsets, or any shared character), and character-level P/R/F1 over the union of each side's
spans, micro-averaged over every output both sources annotated, including outputs where one side found
nothing. `factgenie_chars` reproduces factgenie's character figures instead: span lengths are summed (a
character under two spans counts twice), and outputs where either side has no span are left out.
The category-matched mode pairs only spans of the same category; the soft mode ignores categories.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from stats.correlation import correlations
from stats.overlap import PRF, factgenie_char_prf, overlap_prf


class CatSpan(NamedTuple):
    """A span with its category; start/end are None when the location is not in the text."""

    start: int | None
    end: int | None
    category: str = ""


Spans = Mapping[Any, Sequence[CatSpan]]
"""Output key -> that output's spans by one source (an output with no error maps to [])."""


@dataclass(frozen=True)
class Scores:
    precision: float | None
    recall: float | None
    f1: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {"p": self.precision, "r": self.recall, "f1": self.f1}


def _scores(prf: PRF) -> Scores:
    return Scores(prf.precision, prf.recall, prf.f1)


@dataclass
class Comparison:
    outputs: int
    span_exact: Scores
    span_overlap: Scores
    char: Scores
    char_factgenie: Scores
    pearson_counts: float | None
    gamma: float | None = None
    per_category: dict[str, Comparison] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outputs": self.outputs, "span_exact": self.span_exact.as_dict(),
            "span_overlap": self.span_overlap.as_dict(), "char": self.char.as_dict(),
            "char_factgenie": self.char_factgenie.as_dict(), "pearson_counts": self.pearson_counts,
            "gamma": self.gamma,
        }
        if self.per_category:
            out["categories"] = {name: c.as_dict() for name, c in self.per_category.items()}
        return out


def _located(spans: Sequence[CatSpan]) -> list[tuple[int, int] | None]:
    return [None if s.start is None else (s.start, s.end) for s in spans]


def _units(predicted: Spans, reference: Spans, keys: Sequence[Any], by_category: bool):
    """(predicted, reference) offset lists per unit: an output, or an (output, category) pair."""
    for key in keys:
        pred, ref = predicted[key], reference[key]
        if not by_category:
            yield _located(pred), _located(ref)
            continue
        for category in sorted({s.category for s in pred} | {s.category for s in ref}):
            yield (_located([s for s in pred if s.category == category]),
                   _located([s for s in ref if s.category == category]))


def factgenie_chars(predicted: Spans, reference: Spans, keys: Sequence[Any], *, by_category: bool) -> Scores:
    """factgenie's character P/R/F1 (stats.overlap.factgenie_char_prf) over the outputs `keys`, categories
    matched when `by_category`. Undefined figures are 0, as factgenie reports them."""
    counts = factgenie_char_prf(
        ([(s.start, s.end, s.category if by_category else "") for s in predicted[key] if s.start is not None],
         [(s.start, s.end, s.category if by_category else "") for s in reference[key] if s.start is not None])
        for key in keys
    )
    return Scores(counts.precision or 0.0, counts.recall or 0.0, counts.f1 or 0.0)


def _pearson(predicted: Spans, reference: Spans, keys: Sequence[Any], categories: Sequence[str] | None):
    """Pearson r of error counts per output (or per output and category); None when one side is constant."""
    xs, ys = [], []
    for key in keys:
        if categories is None:
            xs.append(len(predicted[key]))
            ys.append(len(reference[key]))
            continue
        pred, ref = Counter(s.category for s in predicted[key]), Counter(s.category for s in reference[key])
        for category in categories:
            xs.append(pred[category])
            ys.append(ref[category])
    return correlations(np.array(xs, dtype=float), np.array(ys, dtype=float)).pearson


def compare(
    predicted: Spans, reference: Spans, *, by_category: bool = False, gamma: bool = False, seed: int = 0
) -> Comparison:
    """Compare `predicted` with `reference` on the outputs both cover; per category too when `by_category`."""
    keys = sorted(set(predicted) & set(reference), key=repr)
    counts = overlap_prf(_units(predicted, reference, keys, by_category))
    categories = sorted({s.category for k in keys for side in (predicted, reference) for s in side[k]})
    result = Comparison(
        outputs=len(keys), span_exact=_scores(counts.exact), span_overlap=_scores(counts.overlap),
        char=_scores(counts.chars), char_factgenie=factgenie_chars(predicted, reference, keys, by_category=by_category),
        pearson_counts=_pearson(predicted, reference, keys, categories if by_category else None),
        gamma=gamma_agreement(predicted, reference, keys, by_category=by_category, seed=seed) if gamma else None,
    )
    if by_category:
        for category in categories:
            only = {k: [s for s in predicted[k] if s.category == category] for k in keys}
            ref_only = {k: [s for s in reference[k] if s.category == category] for k in keys}
            result.per_category[category] = compare(only, ref_only, by_category=False, gamma=False)
    return result


def _silence_glpk() -> None:
    """Keep GLPK's solver log off standard output (file descriptor 1, which no redirect_stdout reaches).

    cvxpy copies cvxopt.glpk.options before each solve, sets msg_lev off, and restores the copy afterwards,
    deleting keys the copy lacked. pygamma solves in threads, so one thread's restore could delete msg_lev while
    another was about to solve, and GLPK then printed its log in full. With the key in the shared options from
    the start, every copy holds it and no restore removes it."""
    try:
        import cvxopt.glpk
    except ImportError:
        return
    cvxopt.glpk.options["msg_lev"] = "GLP_MSG_OFF"


def gamma_agreement(
    predicted: Spans, reference: Spans, keys: Sequence[Any], *, by_category: bool, seed: int = 0
) -> float | None:
    """Mathet et al.'s gamma between the two sources (pygamma-agreement), outputs laid end to end.

    Each output starts after the previous one's end plus a gap as long as the longest output, so
    units of different outputs never align. Categories count in the category-matched mode only.
    None when a side has no located span (gamma is undefined) or pygamma-agreement is missing.
    """
    try:
        import pygamma_agreement as pa  # optional and slow to import (numba): loaded only when asked for
        from pyannote.core import Segment
    except ImportError:
        return None
    _silence_glpk()
    lengths = [max((s.end for side in (predicted, reference) for s in side[k] if s.start is not None), default=0)
               for k in keys]
    gap = max(lengths, default=0) + 1
    continuum = pa.Continuum()
    offset = 0
    sides = 0
    for name, spans in (("source", predicted), ("reference", reference)):
        offset = 0
        placed = 0
        for key, length in zip(keys, lengths, strict=True):
            for s in spans[key]:
                if s.start is not None:
                    category = (s.category or "-") if by_category else "error"
                    continuum.add(name, Segment(offset + s.start, offset + s.end), category)
                    placed += 1
            offset += length + gap
        sides += placed > 0
    if sides < 2:
        return None
    dissimilarity = pa.CombinedCategoricalDissimilarity(alpha=1, beta=1)
    state = np.random.get_state()
    np.random.seed(seed)  # pygamma samples shuffled continua from numpy's global generator
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its "CBC solver not installed. Using GLPK." warnings
    try:
        # it prints its progress to stdout, which would spoil a command's JSON
        with contextlib.redirect_stdout(io.StringIO()):
            return float(continuum.compute_gamma(dissimilarity, precision_level=0.05).gamma)
    finally:
        quiet.setLevel(level)
        np.random.set_state(state)
