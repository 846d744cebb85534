"""System-level results as JSON rows and CSV, the same for every protocol that ranks systems (MQM, ESA).

A row is stats.systems.SystemScore with its rank range as a list: the keys researchers' scripts read
(`system`, `score`, `ratings`, `segments`, `ci_low`, `ci_high`, `rank_range`).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import TypedDict

from corpus.spreadsheet import sheet_writer
from stats.ranking import rank_range_text
from stats.systems import SystemScore

CSV_COLUMNS = ("system", "score", "ratings", "segments", "ci_low", "ci_high", "rank_range")


class SystemRow(TypedDict):
    system: str
    score: float
    ratings: int  # one rater's rating of one output (MQM: a rated (segment, rater) pair)
    segments: int  # distinct source segments it was rated on
    ci_low: float | None
    ci_high: float | None
    rank_range: list[int] | None  # [best, worst], 1-based


def system_rows(systems: Iterable[SystemScore]) -> list[SystemRow]:
    return [SystemRow(system=s.system, score=s.score, ratings=s.ratings, segments=s.segments, ci_low=s.ci_low,
                      ci_high=s.ci_high, rank_range=list(s.rank_range) if s.rank_range else None) for s in systems]


def _blank(value: float | None) -> float | str:
    return "" if value is None else value


def scores_csv(rows: Iterable[SystemRow]) -> str:
    """The rows as CSV, one line per system, best first; the rank range written as the tables write it."""
    out = io.StringIO()
    writer = sheet_writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([row["system"], row["score"], row["ratings"], row["segments"], _blank(row["ci_low"]),
                         _blank(row["ci_high"]), rank_range_text(row["rank_range"])])
    return out.getvalue()
