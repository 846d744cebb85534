"""Priming figures of a crossed control arm: what experts find on their own, and what the machine's spans add.

The design follows the two protocols WMT runs side by side: ESA, where experts mark error spans from scratch,
and ESA^AI, where they correct pre-filled spans (Zouhar, Kocmi et al., NAACL 2025, arXiv 2406.12419). Seeing
suggestions shifts what experts label (Schroeder, Roy & Kabbara 2025, arXiv 2507.15821), so the machine's
recall and the size of that shift are measured here, per evaluator, rather than assumed:

- recall: the share of unprimed marks that a machine span of the evaluator overlaps (an unplaced mark, ESA's
  missing content, overlaps none);
- precision_confirmed: the share of the evaluator's machine spans on control-arm outputs that the same expert
  confirmed (span verdict Error) after the reveal;
- precision_found: the share of those machine spans that overlap one of the expert's unprimed marks;
- accepted_unfound: among those machine spans that no unprimed mark overlaps, the share the same expert then
  confirmed: errors accepted only because they were shown (the direct measure of priming). A machine span
  without a location in the output could never have been found unprimed, so it is left out here and counted
  apart (`unlocated`);
- errors_per_output: primed (confirmed machine spans of the evaluator plus errors added, on outputs shown with
  the spans from the start) against unprimed (marks before the reveal), with the difference paired over the
  crossed outputs (seen both ways);
- seconds_per_span: working time per error span in each arm.

Every share comes with its n and a 95% percentile interval from a cluster bootstrap over outputs (an output's
counts stay together), so two experts on one output are not counted as independent. Plain data only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stats.bootstrap import bootstrap_ratio_cis_grouped
from stats.overlap import shared_chars
from stats.shares import ratio

RESAMPLES = 2000
SHARES = ("recall", "precision_confirmed", "precision_found", "accepted_unfound")


@dataclass(frozen=True)
class MachineSpan:
    """One machine span as one expert judged it."""

    evaluator: str
    start: int | None
    end: int | None
    confirmed: bool  # the expert's span verdict is Error


@dataclass(frozen=True)
class Work:
    """One finished assignment: an expert on an output, in one arm.

    `marks` are the unprimed marks (control arm only); `added` counts the errors added while the machine spans
    were shown; `seconds` is the arm's working time (the marking time in the control arm)."""

    output: int
    unprimed: bool
    evaluators: frozenset[str]  # the evaluators with an answer on this output
    machine: tuple[MachineSpan, ...]
    marks: tuple[tuple[int | None, int | None], ...] = ()  # an unplaced mark (missing content) has no offsets
    added: int = 0
    seconds: int = 0


@dataclass(frozen=True)
class Share:
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass(frozen=True)
class PerOutput:
    primed: float | None
    unprimed: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    n_outputs: int


@dataclass(frozen=True)
class PrimingFigures:
    evaluator: str
    recall: Share
    precision_confirmed: Share
    precision_found: Share
    accepted_unfound: Share
    errors_per_output: PerOutput
    seconds_per_span: dict[str, float | None]
    unlocated: int = 0  # machine spans on control-arm outputs without a location: outside accepted_unfound


def _placed(span: MachineSpan) -> tuple[int, int] | None:
    return (span.start, span.end) if span.start is not None and span.end is not None else None


def share_counts(work: Work, evaluator: str) -> dict[str, tuple[int, int]]:
    """(numerator, denominator) of each share on one control-arm assignment."""
    spans = [s for s in work.machine if s.evaluator == evaluator]
    places = [p for p in map(_placed, spans) if p is not None]
    found = [any(shared_chars(p, m) for m in work.marks) if (p := _placed(s)) else False for s in spans]
    unfound = [s for s, f in zip(spans, found, strict=True) if not f and _placed(s) is not None]
    return {
        "recall": (sum(any(shared_chars(p, m) for p in places) for m in work.marks), len(work.marks)),
        "precision_confirmed": (sum(s.confirmed for s in spans), len(spans)),
        "precision_found": (sum(found), len(spans)),
        "accepted_unfound": (sum(s.confirmed for s in unfound), len(unfound)),
    }


def reported_errors(work: Work, evaluator: str) -> int:
    """Error spans the expert ended with: unprimed marks in the control arm; confirmed machine spans of the
    evaluator plus added errors in the primed arm."""
    if work.unprimed:
        return len(work.marks)
    return sum(s.confirmed for s in work.machine if s.evaluator == evaluator) + work.added


def _shares(works: Sequence[Work], evaluator: str, resamples: int, seed: int) -> dict[str, Share]:
    outputs = sorted({w.output for w in works})
    index = {o: i for i, o in enumerate(outputs)}
    counts = np.zeros((len(outputs), 1, 2 * len(SHARES)))
    for work in works:
        work_counts = share_counts(work, evaluator)
        for k, name in enumerate(SHARES):
            num, den = work_counts[name]
            counts[index[work.output], 0, 2 * k] += num
            counts[index[work.output], 0, 2 * k + 1] += den
    totals = counts.sum(axis=(0, 1)) if outputs else np.zeros(2 * len(SHARES))
    pairs = {name: (2 * k, 2 * k + 1) for k, name in enumerate(SHARES)}
    cis = bootstrap_ratio_cis_grouped(counts, pairs, n_resamples=resamples, seed=seed)[0] if outputs else {}
    out = {}
    for k, name in enumerate(SHARES):
        interval = cis.get(name)
        out[name] = Share(ratio(totals[2 * k], totals[2 * k + 1]), interval.low if interval else None,
                          interval.high if interval else None, int(totals[2 * k + 1]))
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _per_output(works: Sequence[Work], evaluator: str, resamples: int, seed: int) -> PerOutput:
    arms: dict[bool, dict[int, list[int]]] = {True: defaultdict(list), False: defaultdict(list)}
    for work in works:
        arms[work.unprimed][work.output].append(reported_errors(work, evaluator))
    primed = {o: _mean(v) for o, v in arms[False].items()}
    unprimed = {o: _mean(v) for o, v in arms[True].items()}
    crossed = sorted(set(primed) & set(unprimed))
    diffs = [primed[o] - unprimed[o] for o in crossed]  # type: ignore[operator]
    low = high = None
    if diffs:
        table = np.array([[[d, 1.0]] for d in diffs])
        interval = bootstrap_ratio_cis_grouped(table, {"d": (0, 1)}, n_resamples=resamples, seed=seed)[0]["d"]
        if interval is not None:
            low, high = interval.low, interval.high
    return PerOutput(
        primed=_mean(list(primed.values())), unprimed=_mean(list(unprimed.values())), difference=_mean(diffs),
        ci_low=low, ci_high=high, n_outputs=len(crossed),
    )


def _seconds(works: Sequence[Work], evaluator: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name, arm in (("primed", False), ("unprimed", True)):
        chosen = [w for w in works if w.unprimed is arm]
        out[name] = ratio(sum(w.seconds for w in chosen), sum(reported_errors(w, evaluator) for w in chosen))
    return out


def priming_figures(works: Sequence[Work], evaluators: Sequence[str], *, resamples: int = RESAMPLES,
                    seed: int = 0) -> list[PrimingFigures]:
    """One row per evaluator, from the finished assignments of the outputs it has an answer on."""
    rows = []
    for evaluator in evaluators:
        mine = [w for w in works if evaluator in w.evaluators]
        control = [w for w in mine if w.unprimed]
        shares = _shares(control, evaluator, resamples, seed)
        rows.append(PrimingFigures(
            evaluator=evaluator, **shares, errors_per_output=_per_output(mine, evaluator, resamples, seed),
            seconds_per_span=_seconds(mine, evaluator),
            unlocated=sum(_placed(s) is None for w in control for s in w.machine if s.evaluator == evaluator),
        ))
    return rows
