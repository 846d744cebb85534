"""Ratings derived from Google's TED MQM file for the equality tests of the system-level statistics.

The file has one rater per translation, so agreement has nothing to compare; an "echo" rater re-rates every third
segment (dropping every other error), which gives the agreement figures real, reproducible input. The same
ratings, turned into 0-100 scores with their located spans as ESA spans, give ESA a ranking of 14 systems.
"""

from __future__ import annotations

from pathlib import Path

from corpus.interop.mqm import read_mqm_tsv
from corpus.protocols.mqm import DEFAULT
from stats import esa, mqm

ECHO = "echo"


def ted_mqm(path: Path) -> list[mqm.Rating]:
    """The TED ratings as stats.mqm takes them (located only in the translation), plus the echo rater."""
    with path.open(encoding="utf-8") as handle:
        read = read_mqm_tsv(handle)
    ratings = [mqm.Rating(system=r.system, segment=r.segment, rater=r.rater, errors=tuple(
        mqm.Error(e.category, e.severity, *((e.start, e.end) if e.side == "target" else (None, None)))
        for e in r.errors)) for r in read]
    echo = [mqm.Rating(system=r.system, segment=r.segment, rater=ECHO, errors=r.errors[::2])
            for n, r in enumerate(ratings) if n % 3 == 0]
    return ratings + echo


def ted_esa(ratings: list[mqm.Rating]) -> list[esa.Rating]:
    """0-100 scores (100 less four points per MQM point, floored at 0) with the located errors as spans."""
    out = []
    for r in ratings:
        score = max(0.0, 100 - 4 * mqm.segment_score(r.errors, DEFAULT.weight))
        spans = tuple(esa.Span(e.start, e.end, "major" if e.severity == "major" else "minor") for e in r.errors)
        out.append(esa.Rating(system=r.system, segment=r.segment, rater=r.rater, score=score, spans=spans))
    return out
