"""Google's MQM TSV (the WMT MQM human-evaluation releases): reading it into ratings and writing ratings back.

No Django here. One row per error with the header `system doc doc_id seg_id rater source target category
severity` (and an optional `comment`); the error's span is marked inside `target` (or `source`) with
`<v>...</v>`; a clean segment is one row whose severity is `no-error`. Rows are read as plain tab-separated
fields (no quoting: the releases carry quotes inside texts), grouped into one rating per (system, doc,
seg_id, rater); every bad row is refused with its line number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from corpus.formats import FormatError, check_text
from corpus.protocols.mqm import NO_ERROR, SEVERITY_LABELS, severity_value

COLUMNS: tuple[str, ...] = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
COMMENT = "comment"
OPEN, CLOSE = "<v>", "</v>"
MAX_LISTED = 50


@dataclass
class MqmError:
    """One error: its category and severity as read, and where its span lies (None: the row marks none)."""

    category: str
    severity: str  # a value of corpus.protocols.mqm.SEVERITIES
    start: int | None = None
    end: int | None = None
    side: str = "target"  # "source" when the span is marked in the source
    comment: str = ""
    line: int = 0
    open_end: bool = False  # the file never closed the marker (it is written back so)


@dataclass
class MqmRating:
    """One rater's errors in one system's translation of one segment ([] when the segment is clean)."""

    system: str
    doc: str
    doc_id: str
    seg_id: str
    rater: str
    source: str
    target: str
    errors: list[MqmError] = field(default_factory=list)
    comment: str = ""  # a clean segment's comment
    line: int = 0

    @property
    def segment(self) -> tuple[str, str]:
        return (self.doc, self.seg_id)


def _unmark(text: str, where: str, column: str) -> tuple[str, tuple[int, int] | None, bool]:
    """The text without its `<v>...</v>` marker, the marked span's offsets in it (None when unmarked), and
    whether the marker is left open: a `<v>` never closed marks the rest of the text (a release has one)."""
    opens, closes = text.count(OPEN), text.count(CLOSE)
    if opens == closes == 0:
        return text, None, False
    if opens == 1 and closes == 0 and not text.endswith(OPEN):
        start = text.index(OPEN)
        return text.replace(OPEN, "", 1), (start, len(text) - len(OPEN)), True
    if opens != 1 or closes != 1:
        raise FormatError(where, f"column '{column}' must mark at most one span with one <v>...</v> "
                                 f"(found {opens} <v> and {closes} </v>)")
    start = text.index(OPEN)
    end = text.index(CLOSE) - len(OPEN)
    if end < start:
        raise FormatError(where, f"column '{column}' closes </v> before it opens <v>")
    if end == start:
        raise FormatError(where, f"column '{column}' marks an empty span <v></v>")
    return text.replace(OPEN, "", 1).replace(CLOSE, "", 1), (start, end), False


def _header(line: str, where: str) -> list[str]:
    names = [n.strip().casefold() for n in line.rstrip("\r\n").split("\t")]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise FormatError(where, f"the header must name the columns {' '.join(COLUMNS)} [{COMMENT}]; "
                                 f"missing: {', '.join(missing)}")
    if len(set(names)) != len(names):
        raise FormatError(where, "the header names a column twice")
    return names


def read_mqm_tsv(lines: Iterable[str], *, name: str = "file") -> list[MqmRating]:
    """The ratings of an MQM TSV in the order their first rows come. Raise FormatError listing every bad row
    (its line number and what is wrong) when any row is bad."""
    ratings: dict[tuple[str, str, str, str], MqmRating] = {}
    texts: dict[tuple[str, str, str], tuple[str, str, str, int]] = {}
    problems: list[str] = []
    names: list[str] | None = None
    for number, raw in enumerate(lines, 1):
        where = f"{name}, line {number}"
        line = raw.rstrip("\r\n")
        if names is None:
            names = _header(line.lstrip("\ufeff"), where)
            continue
        if not line.strip():
            continue
        try:
            _row(line, names, where, number, ratings, texts)
        except FormatError as exc:
            problems.append(str(exc))
    if names is None:
        raise FormatError(name, "is empty; an MQM TSV starts with its header line")
    if problems:
        shown = "\n".join(f"  - {p}" for p in problems[:MAX_LISTED])
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise FormatError(name, f"{len(problems)} bad row{'s' if len(problems) != 1 else ''}:\n{shown}{more}")
    if not ratings:
        raise FormatError(name, "holds no rows after its header")
    return list(ratings.values())


def _row(line: str, names: list[str], where: str, number: int,
         ratings: dict[tuple[str, str, str, str], MqmRating],
         texts: dict[tuple[str, str, str], tuple[str, str, str, int]]) -> None:
    cells = line.split("\t")
    if len(cells) == len(names) - 1 and names[-1] == COMMENT:
        cells.append("")  # a trailing empty comment some editors drop
    if len(cells) != len(names):
        raise FormatError(where, f"has {len(cells)} tab-separated fields; the header has {len(names)}")
    row = dict(zip(names, cells, strict=True))
    for column in ("system", "doc", "doc_id", "seg_id", "rater"):
        value = row[column].strip()
        if not value:
            raise FormatError(where, f"column '{column}' is empty")
        row[column] = value
    check_text(row["system"], where, "system")
    check_text(row["rater"], where, "annotator")
    check_text(f"{row['doc']}:{row['seg_id']}", where, "id")
    severity = severity_value(row["severity"])
    if severity is None:
        raise FormatError(where, f"unknown severity {row['severity']!r} (known: Neutral, Minor, Major, No-error)")
    source, source_span, source_open = _unmark(row["source"], where, "source")
    target, target_span, target_open = _unmark(row["target"], where, "target")
    if source_span and target_span:
        raise FormatError(where, "marks a span in both the source and the target; one row is one error")
    span_marked = bool(source_span or target_span)
    item = (row["system"], row["doc"], row["seg_id"])
    known = texts.setdefault(item, (source, target, row["doc_id"], number))
    if known[:3] != (source, target, row["doc_id"]):
        what = "source" if known[0] != source else "target" if known[1] != target else "doc_id"
        raise FormatError(where, f"the {what} of system {item[0]!r}, doc {item[1]!r}, seg_id {item[2]!r} differs "
                                 f"from line {known[3]}'s (markers aside)")
    category = row["category"].strip()
    if severity == NO_ERROR and span_marked:
        raise FormatError(where, "a no-error row marks no span")
    if severity != NO_ERROR:
        if not category:
            raise FormatError(where, "column 'category' is empty (a clean segment has severity No-error)")
        check_text(category, where, "category")
    key = (*item, row["rater"])
    rating = ratings.get(key)
    if rating is None:
        rating = ratings[key] = MqmRating(
            system=row["system"], doc=row["doc"], doc_id=row["doc_id"], seg_id=row["seg_id"], rater=row["rater"],
            source=source, target=target, line=number,
        )
    elif not rating.errors:
        raise FormatError(where, f"rater {row['rater']!r} already called this segment clean on line {rating.line}")
    comment = row.get(COMMENT, "")
    if severity == NO_ERROR:
        if rating.line != number:
            raise FormatError(where, f"a no-error row for a segment rater {row['rater']!r} found errors in "
                                     f"(line {rating.line})")
        rating.comment = comment
        return
    span = target_span or source_span
    rating.errors.append(MqmError(
        category=category, severity=severity, start=span[0] if span else None, end=span[1] if span else None,
        side="source" if source_span else "target", comment=comment, line=number,
        open_end=source_open or target_open,
    ))


# --- writing -------------------------------------------------------------------------------------------


def _mark(text: str, error: MqmError) -> str:
    if error.start is None or error.end is None:
        return text
    close = "" if error.open_end and error.end == len(text) else CLOSE
    return f"{text[:error.start]}{OPEN}{text[error.start:error.end]}{close}{text[error.end:]}"


_CONTROL = re.compile(r"[\t\r\n]")


def _cell(text: str) -> str:
    """A field as the format can hold it: a tab or a line break would split the row, so each becomes a space."""
    return _CONTROL.sub(" ", text)


def natural(text: str) -> tuple[int, int | str]:
    """Sort key putting numbers in numeric order ("2" before "10") and other ids after them, as text."""
    return (0, int(text)) if text.isascii() and text.isdigit() and len(text) <= 18 else (1, text)


def rating_sort_key(rating: MqmRating) -> tuple[object, ...]:
    return (rating.system, natural(rating.doc_id), natural(rating.seg_id), rating.rater)


def mqm_tsv_lines(ratings: Iterable[MqmRating]) -> Iterator[str]:
    """The TSV (header first) of `ratings` as given, one row per error in span order, one row per clean segment."""
    yield "\t".join((*COLUMNS, COMMENT)) + "\n"
    for rating in ratings:
        common = (rating.system, rating.doc, rating.doc_id, rating.seg_id, rating.rater)
        if not rating.errors:
            cells = (*common, rating.source, rating.target, "No-error", "No-error", rating.comment)
            yield "\t".join(_cell(c) for c in cells) + "\n"
            continue
        for error in sorted(rating.errors, key=lambda e: (e.start is None, e.start or 0, e.end or 0)):
            on_source = error.side == "source"
            source = _mark(rating.source, error) if on_source else rating.source
            target = rating.target if on_source else _mark(rating.target, error)
            cells = (*common, source, target, error.category, SEVERITY_LABELS[error.severity], error.comment)
            yield "\t".join(_cell(c) for c in cells) + "\n"
