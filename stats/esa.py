"""ESA figures: mean scores per system with bootstrap intervals and a ranking with paired tests, spans by severity,
agreement between raters on scores and on spans, what ESA^AI annotators did with the pre-filled spans, and the
two arms (ESA against ESA^AI on the same outputs) side by side.

Plain data in, numbers out. A rating is one rater's 0-100 score and error spans on one system's output of one
segment, in one arm. Higher scores are better. Scores, intervals, the ranking and agreement are stats.systems'
(the segment as unit); the paired arm differences resample outputs with stats.bootstrap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from stats import systems
from stats.bootstrap import bootstrap_ratio_cis_grouped
from stats.overlap import shared_chars
from stats.ranking import ALPHA, RESAMPLES
from stats.shares import ratio
from stats.systems import HIGHER, Agreement, Observation, Rated, SystemResults, SystemScore, system_results

__all__ = ["Agreement", "SystemResults", "SystemScore"]  # the results' types, as stats.systems defines them

ESA, ESA_AI = "esa", "esa_ai"
ARMS = (ESA, ESA_AI)
SEVERITIES = ("minor", "major")


@dataclass(frozen=True)
class Span:
    """One error span: its place in the output (None for missing content) and its severity."""

    start: int | None
    end: int | None
    severity: str  # minor | major

    @property
    def located(self) -> bool:
        return self.start is not None and self.end is not None


@dataclass(frozen=True)
class Rating:
    """One rater's score and spans on one system's output of one segment, in one arm, with the seconds it took
    (working time) and, where the page measured it, the milliseconds until the spans were done."""

    system: str
    segment: Hashable
    rater: str
    score: float
    spans: tuple[Span, ...] = ()
    arm: str = ESA
    seconds: float = 0.0
    spans_ms: int | None = None

    @property
    def output(self) -> tuple[str, Hashable]:
        return (self.system, self.segment)


# ---- scores and the ranking -----------------------------------------------------------------------------------

def system_ranking(
    ratings: Sequence[Rating], *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
    rank_resamples: int = RESAMPLES, alpha: float = ALPHA,
) -> SystemResults:
    """Each system's mean score, best (highest) first, with a percentile bootstrap interval over segments and a
    rank range, and every pair's test: stats.systems with higher is better and the segment as unit."""
    return system_results((Observation(r.system, r.segment, r.score) for r in ratings), better=HIGHER,
                          n_resamples=n_resamples, seed=seed, confidence=confidence, rank_resamples=rank_resamples,
                          alpha=alpha)


# ---- spans by severity ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SeverityCounts:
    system: str
    ratings: int
    minor: int
    major: int
    missing: int  # of the spans above, those marking missing content

    @property
    def spans(self) -> int:
        return self.minor + self.major

    @property
    def per_rating(self) -> float | None:
        return ratio(self.spans, self.ratings)


def severity_counts(ratings: Iterable[Rating]) -> list[SeverityCounts]:
    """Per system (then all systems as "all"), its ratings and their spans by severity."""
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in ratings:
        for key in (r.system, "all"):
            row = by[key]
            row[0] += 1
            row[1] += sum(s.severity == "minor" for s in r.spans)
            row[2] += sum(s.severity == "major" for s in r.spans)
            row[3] += sum(not s.located for s in r.spans)
    order = sorted(k for k in by if k != "all") + (["all"] if by else [])
    return [SeverityCounts(k, *by[k]) for k in order]


# ---- agreement between raters --------------------------------------------------------------------------------

def rater_agreement(ratings: Iterable[Rating]) -> Agreement:
    """Agreement of raters who rated the same output, in either arm (stats.systems.rater_agreement): scores, and
    located spans labelled by severity (missing content has no characters and does not count)."""
    return systems.rater_agreement(
        Rated(r.system, r.segment, r.rater, r.score,
              tuple((s.start, s.end, s.severity) for s in r.spans if s.located))  # type: ignore[misc]
        for r in ratings)


# ---- ESA^AI: what became of the pre-filled spans ---------------------------------------------------------------

@dataclass(frozen=True)
class Prefilled:
    """A machine span as it arrived on an ESA^AI output, and the annotator's span it became (None: deleted)."""

    start: int
    end: int
    severity: str
    final: Span | None


@dataclass(frozen=True)
class PrefillOutcomes:
    outputs: int  # ESA^AI ratings counted
    prefilled: int
    kept: int  # unchanged
    deleted: int
    resized: int  # offsets changed (a span may be resized and re-graded)
    regraded: int  # severity changed
    added: int  # spans the annotators marked themselves

    @property
    def kept_share(self) -> float | None:
        return ratio(self.kept, self.prefilled)


def prefill_outcomes(items: Iterable[tuple[Sequence[Prefilled], int]]) -> PrefillOutcomes:
    """Count, over ESA^AI ratings given as (their pre-filled spans, the number of spans added), how many
    pre-filled spans were kept as they came, deleted, resized and re-graded, and how many spans were added."""
    outputs = prefilled = kept = deleted = resized = regraded = added = 0
    for spans, n_added in items:
        outputs += 1
        added += n_added
        for p in spans:
            prefilled += 1
            if p.final is None:
                deleted += 1
                continue
            moved = (p.final.start, p.final.end) != (p.start, p.end)
            graded = p.final.severity != p.severity
            resized += moved
            regraded += graded
            kept += not moved and not graded
    return PrefillOutcomes(outputs, prefilled, kept, deleted, resized, regraded, added)


# ---- the two arms --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArmFigures:
    arm: str
    ratings: int
    outputs: int
    score: float | None
    spans: int
    minor: int
    major: int
    seconds: float
    seconds_per_item: float | None
    seconds_per_span: float | None  # working time over spans marked
    span_phase_seconds_per_span: float | None  # the page's time until spans done, over spans marked


@dataclass(frozen=True)
class Paired:
    """Per output seen in both arms: mean(ESA^AI) - mean(ESA), averaged over those outputs, with a 95% bootstrap
    interval over outputs."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    outputs: int


@dataclass(frozen=True)
class MachineFound:
    """On outputs seen in both arms, the machine's located spans: the share an ESA (unprimed) annotator's span
    overlaps, against the share an ESA^AI annotator kept in some form (not deleted)."""

    machine_spans: int
    found_unprimed: float | None
    kept_primed: float | None


@dataclass
class ArmComparison:
    arms: list[ArmFigures] = field(default_factory=list)
    score: Paired = Paired(None, None, None, 0)
    spans: Paired = Paired(None, None, None, 0)
    machine: MachineFound = MachineFound(0, None, None)


def _paired(values: Mapping[str, Mapping[Hashable, list[float]]], resamples: int, seed: int) -> Paired:
    both = sorted(set(values[ESA]) & set(values[ESA_AI]), key=repr)
    diffs = [float(np.mean(values[ESA_AI][o]) - np.mean(values[ESA][o])) for o in both]
    if not diffs:
        return Paired(None, None, None, 0)
    table = np.array([[[d, 1.0]] for d in diffs])
    interval = bootstrap_ratio_cis_grouped(table, {"d": (0, 1)}, n_resamples=resamples, seed=seed)[0]["d"]
    return Paired(float(np.mean(diffs)), interval.low if interval else None, interval.high if interval else None,
                  len(diffs))


def arm_comparison(
    ratings: Sequence[Rating], *, machine: Mapping[tuple[str, Hashable], Sequence[tuple[int, int]]] | None = None,
    kept: Mapping[tuple[str, Hashable], Sequence[tuple[int, int]]] | None = None, n_resamples: int = 1000,
    seed: int = 0,
) -> ArmComparison:
    """ESA against ESA^AI: per arm its ratings, mean score, spans and time per span; the paired differences over
    the outputs seen both ways; and how much of the machine's spans each arm ends up with.

    `machine` maps an output to the machine's located spans on it, `kept` to the pre-filled spans ESA^AI
    annotators did not delete (their places as they arrived), summed over the ESA^AI ratings of the output."""
    result = ArmComparison()
    scores: dict[str, dict[Hashable, list[float]]] = {ESA: defaultdict(list), ESA_AI: defaultdict(list)}
    counts: dict[str, dict[Hashable, list[float]]] = {ESA: defaultdict(list), ESA_AI: defaultdict(list)}
    for arm in ARMS:
        mine = [r for r in ratings if r.arm == arm]
        spans = sum(len(r.spans) for r in mine)
        seconds = float(sum(r.seconds for r in mine))
        phase = [r for r in mine if r.spans_ms is not None]
        for r in mine:
            scores[arm][r.output].append(r.score)
            counts[arm][r.output].append(len(r.spans))
        result.arms.append(ArmFigures(
            arm=arm, ratings=len(mine), outputs=len({r.output for r in mine}),
            score=float(np.mean([r.score for r in mine])) if mine else None, spans=spans,
            minor=sum(s.severity == "minor" for r in mine for s in r.spans),
            major=sum(s.severity == "major" for r in mine for s in r.spans), seconds=seconds,
            seconds_per_item=ratio(seconds, len(mine)), seconds_per_span=ratio(seconds, spans),
            span_phase_seconds_per_span=ratio(sum(r.spans_ms for r in phase) / 1000,  # type: ignore[misc]
                                              sum(len(r.spans) for r in phase)),
        ))
    result.score = _paired(scores, n_resamples, seed)
    result.spans = _paired(counts, n_resamples, seed)
    if machine:
        both = set(scores[ESA]) & set(scores[ESA_AI])
        by_output: dict[tuple[str, Hashable], list[Rating]] = defaultdict(list)
        for r in ratings:
            if r.output in both:
                by_output[r.output].append(r)
        found = total = kept_n = kept_total = 0
        for output, members in by_output.items():
            places = list(machine.get(output, ()))
            if not places:
                continue
            for r in members:
                if r.arm == ESA:
                    marks = [(s.start, s.end) for s in r.spans if s.located]
                    total += len(places)
                    found += sum(any(shared_chars(p, m) for m in marks) for p in places)
                else:
                    kept_total += len(places)
            kept_n += len((kept or {}).get(output, ()))
        result.machine = MachineFound(sum(len(machine.get(o, ())) for o in both), ratio(found, total),
                                      ratio(kept_n, kept_total))
    return result
