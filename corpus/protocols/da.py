"""The Direct Assessment protocol's vocabulary: the 0-100 scale and its anchors, the campaign options (show the
reference; the languages), and Appraise's scores CSV, read and written.

DA (Graham et al. 2013; WMT's human evaluation 2016-2022; Appraise and Pearmut offer it): the annotator reads
the source (and, where the campaign says so, a reference) and moves a slider from 0 to 100 for how well the output
expresses its meaning; nothing else. Raw scores are compared per annotator as z-scores, because people use the
scale differently. Appraise plants BAD items: a degraded copy of an output that a careful annotator scores below
the original. Django-free, like the other protocols: the declaration, the screen, the figures and the docs
derive from here. The anchors' wording is ours.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from corpus.protocols.mqm import ProtocolError

SCORE_MIN, SCORE_MAX = 0, 100
QUESTION = "How accurately does the output express the meaning of the source?"
QUESTION_REFERENCE = "How accurately does the output express the meaning of the reference?"
ANCHORS: tuple[tuple[int, str], ...] = ((0, "nothing of the meaning"), (50, "about half of it"),
                                        (100, "all of it, and perfectly readable"))
OPTIONS = ("reference", "source_language", "target_language")

# Appraise's scores CSV: one rating per line, no header (a first line naming the columns is skipped on reading).
COLUMNS = ("annotator", "system", "item", "type", "source_language", "target_language", "score", "document",
           "complete", "spans", "start", "end")
TGT, BAD, REF, CHK = "TGT", "BAD", "REF", "CHK"  # a real output, a degraded copy, a reference as output, a repeat
TYPES = (TGT, BAD, REF, CHK)


def clean_options(value: Any) -> dict[str, Any]:
    """{"reference": true|false (show the item's reference beside the source), "source_language",
    "target_language": codes written to Appraise's CSV (e.g. "eng", "deu")}; all optional."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ProtocolError("protocol_options: an object, e.g. {\"reference\": true}", field="protocol_options")
    unknown = sorted(set(value) - set(OPTIONS))
    if unknown:
        raise ProtocolError(f"protocol_options: unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})",
                            field="protocol_options")
    cleaned: dict[str, Any] = {}
    if "reference" in value:
        if not isinstance(value["reference"], bool):
            raise ProtocolError("protocol_options.reference: true or false", field="protocol_options.reference")
        if value["reference"]:
            cleaned["reference"] = True
    for name in ("source_language", "target_language"):
        code = value.get(name)
        if code in (None, ""):
            continue
        if not isinstance(code, str) or not code.replace("-", "").replace("_", "").isalnum() or len(code) > 16:
            raise ProtocolError(f"protocol_options.{name}: a language code such as eng or de-DE",
                                field=f"protocol_options.{name}")
        cleaned[name] = code
    return cleaned


def shows_reference(options: Mapping[str, Any] | None) -> bool:
    return bool((options or {}).get("reference"))


SCORE_STEP, SCORE_PAGE = 1, 10
KEYS: dict[str, str] = {
    "ArrowLeft/ArrowRight": f"score -{SCORE_STEP} / +{SCORE_STEP} (ArrowDown/ArrowUp too)",
    "PageDown/PageUp": f"score -{SCORE_PAGE} / +{SCORE_PAGE}",
    "Home/End": f"score {SCORE_MIN} / {SCORE_MAX}",
    "digits": "type the score (7 then 5 for 75)",
}  # the slider's keys; besides the screen's own: u undoes the last score change, f finishes, n/p move


def keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(KEYS)


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
    writer = csv.writer(handle, lineterminator="\n")
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
