"""Appraise's scores CSV for Direct Assessment, read and written: one rating per line, no header (a first line
naming the columns is skipped on reading). No Django.

Columns: annotator, system, item, type (TGT a real output, BAD a degraded copy, REF a reference as output, CHK a
repeat), source language, target language, score (0-100), document, complete (True/False), spans (JSON), start and
end (Unix seconds). docs/guides/da.md describes the format as we write it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from corpus.protocols.da import SCORE_MAX, SCORE_MIN
from corpus.protocols.errors import ProtocolError
from corpus.spreadsheet import interchange_writer

# Appraise's scores CSV: one rating per line, no header (a first line naming the columns is skipped on reading).
COLUMNS = ("annotator", "system", "item", "type", "source_language", "target_language", "score", "document",
           "complete", "spans", "start", "end")
TGT, BAD, REF, CHK = "TGT", "BAD", "REF", "CHK"  # a real output, a degraded copy, a reference as output, a repeat
TYPES = (TGT, BAD, REF, CHK)


@dataclass(frozen=True)
class AppraiseRow:
    """One line of Appraise's scores CSV. `start` and `end` are Unix seconds (None where unknown)."""

    annotator: str
    system: str
    item: str
    type: str
    source_language: str
    target_language: str
    score: int
    document: str = ""
    complete: bool = True
    spans: str = "[]"
    start: float | None = None
    end: float | None = None


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def write_appraise(rows: Iterable[AppraiseRow], handle: IO[str]) -> int:
    """Write the rows as Appraise does (no header; `complete` as True/False); return how many."""
    writer = interchange_writer(handle, lineterminator="\n")  # read back by Appraise and by read_appraise
    n = 0
    for row in rows:
        writer.writerow([row.annotator, row.system, row.item, row.type, row.source_language, row.target_language,
                         row.score, row.document, "True" if row.complete else "False", row.spans, _seconds(row.start),
                         _seconds(row.end)])
        n += 1
    return n


def _time(text: str, where: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise ProtocolError(f"{where}: Unix seconds, not {text[:40]!r}", field=where) from None


def read_appraise(lines: Iterable[str]) -> Iterator[AppraiseRow]:
    """Parse Appraise's scores CSV; a ProtocolError names the line and column of the first bad value. Lines may
    stop after `score` (older Appraise exports): the rest is then empty."""
    for number, cells in enumerate(csv.reader(lines), 1):
        if not cells or all(not c.strip() for c in cells):
            continue
        if number == 1 and cells[0].strip().casefold() == "annotator":
            continue  # a header line
        where = f"line {number}"
        if len(cells) < 7 or len(cells) > len(COLUMNS):
            raise ProtocolError(f"{where}: {len(COLUMNS)} columns ({', '.join(COLUMNS)}), not {len(cells)}",
                                field="file")
        cells = [c.strip() for c in cells] + [""] * (len(COLUMNS) - len(cells))
        kind = cells[3].upper()
        if kind not in TYPES:
            raise ProtocolError(f"{where}, type: one of {', '.join(TYPES)}, not {cells[3][:20]!r}", field="type")
        try:
            score = round(float(cells[6]))
        except ValueError:
            raise ProtocolError(f"{where}, score: a number from {SCORE_MIN} to {SCORE_MAX}, not {cells[6][:20]!r}",
                                field="score") from None
        if not SCORE_MIN <= score <= SCORE_MAX:
            raise ProtocolError(f"{where}, score: from {SCORE_MIN} to {SCORE_MAX}, not {score}", field="score")
        if not cells[0] or not cells[2]:
            raise ProtocolError(f"{where}: an annotator and an item are required", field="file")
        yield AppraiseRow(annotator=cells[0], system=cells[1], item=cells[2], type=kind, source_language=cells[4],
                          target_language=cells[5], score=score, document=cells[7],
                          complete=cells[8].casefold() not in ("false", "0", "no"), spans=cells[9] or "[]",
                          start=_time(cells[10], f"{where}, start"), end=_time(cells[11], f"{where}, end"))
