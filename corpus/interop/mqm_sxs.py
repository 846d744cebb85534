"""Google's side-by-side MQM TSV (Song et al. 2025): reading it into ratings and screens, and writing it back.

No Django here. The header is `system doc docSegId globalSegId rater source target category severity metadata`
(a trailing header cell that starts with `#` is documentation the rows do not have). One row per error, as in the
pointwise TSV (corpus.interop.mqm), plus `HOTW-test` rows: a planted-error check ("hands on the wheel"), category
`Found` or `Missed`, that is no error of the output. `metadata` is JSON: `timestamp` (ms), `side` (the column an
error was marked in: 1 or 2, 0 for the source), per-action `timing`, `deleted_errors`, ... It is kept as written
(its spacing varies between rows), so that the file can be written back byte for byte.

Which outputs were on one screen (a unit) is no column. The rule (docs: guides/mqm, "Side-by-side MQM"): for one
rater and one segment, order the rater's rows by `metadata.timestamp` (file order breaks ties) and list the outputs
in the order their first row comes; the screens are consecutive runs of two. Each screen is checked, and the file
refused where the rule would have to guess: the rows of a screen must form one run in time, its two outputs must
not be marked on the same side, and an output `X_with_Y` must share its screen with `Y`. An output's position on
its screen is the side its translation's marks are on, else the side its screen-mate's are not on, else unknown.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from corpus.formats import FormatError, check_text
from corpus.interop.mqm import CLOSE, MAX_LISTED, OPEN, MqmError, MqmRating, _unmark
from corpus.protocols.mqm import NO_ERROR, SEVERITY_LABELS, severity_value

HEADER: tuple[str, ...] = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category",
                           "severity", "metadata")
COLUMNS: tuple[str, ...] = tuple(c.casefold() for c in HEADER)
CHECK_SEVERITY = "HOTW-test"
FOUND, MISSED = "Found", "Missed"
PER_SCREEN = 2  # the release shows each segment's outputs two at a time
WITH = "_with_"  # `X_with_Y`: system X, in the pair where it was shown with Y
ERROR, CLEAN, CHECK = "error", "clean", "check"


def is_side_by_side(header_line: str) -> bool:
    """Whether a TSV's first line is the side-by-side layout's header (its columns, in any case)."""
    names = [n.strip().casefold() for n in header_line.lstrip("\ufeff").rstrip("\r\n").split("\t")]
    return names[:len(COLUMNS)] == list(COLUMNS)


@dataclass
class SxsRow:
    """One row of a rating as the file has it: what it is, where it came, and what the rating itself cannot hold."""

    line: int  # the file's line number (the header is line 1): rows are written back in this order
    kind: str  # ERROR, CLEAN or CHECK
    metadata: str  # the cell as written
    error: int | None = None  # ERROR: the index of its error in the rating's errors
    found: bool | None = None  # CHECK: whether the rater found the planted error
    pad: str = ""  # whitespace the marker covers past the end of the text (a release writes a few so)

    @property
    def meta(self) -> dict:
        return json.loads(self.metadata) if self.metadata else {}


@dataclass
class SxsRating:
    """One rater's rating of one output shown side by side, its rows, and where it was shown."""

    rating: MqmRating  # doc_id is the file's docSegId, seg_id its globalSegId
    rows: list[SxsRow] = field(default_factory=list)
    screen: int = 0  # 1-based: the rater's screens on this segment in time order
    position: int | None = None  # 1 or 2: the column it was shown in; None when no row says

    @property
    def checks(self) -> list[SxsRow]:
        return [r for r in self.rows if r.kind == CHECK]


@dataclass
class SxsFile:
    header: list[str]  # the header's cells as written, its documentation cell included
    ratings: list[SxsRating]


def system_of(label: str, labels: Iterable[str]) -> tuple[str, str | None]:
    """(system, shown with) of a file's system label: `X_with_Y` is X shown with Y when Y is a label of the file."""
    known = set(labels)
    head, sep, partner = label.rpartition(WITH)
    if sep and head and partner in known:
        return head, partner
    return label, None


# --- reading -----------------------------------------------------------------------------------------------


@dataclass
class _Row:
    number: int
    cells: dict[str, str]
    meta: dict
    source: str
    target: str
    source_span: tuple[int, int] | None
    target_span: tuple[int, int] | None


def read_sxs_tsv(lines: Iterable[str], *, name: str = "file") -> SxsFile:
    """The ratings of a side-by-side MQM TSV with their screens. Raise FormatError listing every bad row (its line
    number and what is wrong), or the first screen the rule cannot recover."""
    header: list[str] | None = None
    rows: list[_Row] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if header is None:
            header = _header(line.lstrip("\ufeff"), f"{name}, line {number}")
            continue
        if not line.strip():
            continue
        try:
            rows.append(_parse(line, number, f"{name}, line {number}"))
        except FormatError as exc:
            problems.append(str(exc))
    if header is None:
        raise FormatError(name, "is empty; a side-by-side MQM TSV starts with its header line")
    ratings: list[SxsRating] = []
    if not problems:
        ratings = _ratings(rows, name, problems)
    if problems:
        shown = "\n".join(f"  - {p}" for p in problems[:MAX_LISTED])
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise FormatError(name, f"{len(problems)} bad row{'s' if len(problems) != 1 else ''}:\n{shown}{more}")
    if not ratings:
        raise FormatError(name, "holds no rows after its header")
    _screens(ratings, name)
    return SxsFile(header=header, ratings=ratings)


def _header(line: str, where: str) -> list[str]:
    cells = line.split("\t")
    names = [c.strip().casefold() for c in cells]
    if names[:len(COLUMNS)] != list(COLUMNS):
        raise FormatError(where, f"the side-by-side header is {' '.join(HEADER)} (in this order)")
    if any(not c.startswith("#") for c in names[len(COLUMNS):]):
        raise FormatError(where, "after the metadata column the header holds only documentation cells (# ...)")
    return cells


def _parse(line: str, number: int, where: str) -> _Row:
    cells = line.split("\t")
    if len(cells) != len(COLUMNS):
        raise FormatError(where, f"has {len(cells)} tab-separated fields; the layout has {len(COLUMNS)}")
    row = dict(zip(COLUMNS, cells, strict=True))
    for column in ("system", "doc", "docsegid", "globalsegid", "rater"):
        if not row[column].strip() or row[column] != row[column].strip():
            raise FormatError(where, f"column '{column}' is empty or has spaces around it")
    check_text(row["system"], where, "system")
    check_text(row["rater"], where, "annotator")
    check_text(f"{row['doc']}:{row['globalsegid']}", where, "id")
    try:
        meta = json.loads(row["metadata"]) if row["metadata"] else {}
    except (json.JSONDecodeError, RecursionError):
        raise FormatError(where, "column 'metadata' is not JSON") from None
    if not isinstance(meta, dict):
        raise FormatError(where, "column 'metadata' is not a JSON object")
    stamp = meta.get("timestamp")
    if isinstance(stamp, bool) or not isinstance(stamp, int):
        raise FormatError(where, "metadata.timestamp (ms) is missing; the screens are recovered from it")
    if meta.get("side", 0) not in (0, 1, 2):
        raise FormatError(where, f"metadata.side is 0 (the source), 1 or 2, not {meta.get('side')!r}")
    source, source_span, source_open = _unmark(row["source"], where, "source")
    target, target_span, target_open = _unmark(row["target"], where, "target")
    if source_open or target_open:
        raise FormatError(where, "a <v> marker is never closed")
    if source_span and target_span:
        raise FormatError(where, "marks a span in both the source and the target; one row is one error")
    severity = row["severity"].strip()
    if severity.casefold() == CHECK_SEVERITY.casefold():
        if row["category"] not in (FOUND, MISSED):
            raise FormatError(where, f"a {CHECK_SEVERITY} row's category is {FOUND} or {MISSED}, not "
                                     f"{row['category']!r}")
        if source_span or target_span:
            raise FormatError(where, f"a {CHECK_SEVERITY} row marks no span")
    else:
        value = severity_value(severity)
        if value is None:
            raise FormatError(where, f"unknown severity {severity!r} (known: Neutral, Minor, Major, No-error, "
                                     f"{CHECK_SEVERITY})")
        if value == NO_ERROR and (source_span or target_span):
            raise FormatError(where, "a no-error row marks no span")
        if value != NO_ERROR:
            if not row["category"].strip():
                raise FormatError(where, "column 'category' is empty (a clean output has severity No-error)")
            check_text(row["category"], where, "category")
    return _Row(number, row, meta, source, target, source_span, target_span)


def _canonical(rows: list[_Row], column: str, where: str) -> str:
    """The text of one output: every row writes it, some with whitespace past its end inside their marker."""
    texts = {getattr(r, column) for r in rows}
    base = min(texts, key=len)
    for row in rows:
        text, span = getattr(row, column), getattr(row, f"{column}_span")
        if text != base and not (text.startswith(base) and not text[len(base):].strip() and span
                                 and span[1] == len(text) and span[0] <= len(base)):
            raise FormatError(f"{where}, line {row.number}", f"the {column} differs from line {rows[0].number}'s "
                                                             "(markers aside)")
    return base


def _ratings(rows: list[_Row], name: str, problems: list[str]) -> list[SxsRating]:
    outputs: dict[tuple[str, str, str], list[_Row]] = defaultdict(list)
    for row in rows:
        outputs[(row.cells["system"], row.cells["doc"], row.cells["globalsegid"])].append(row)
    texts: dict[tuple[str, str, str], tuple[str, str]] = {}
    for key, group in outputs.items():
        try:
            texts[key] = (_canonical(group, "source", name), _canonical(group, "target", name))
            doc_ids = {r.cells["docsegid"] for r in group}
            if len(doc_ids) > 1:
                raise FormatError(f"{name}, line {group[0].number}", "one output's rows name two docSegIds")
        except FormatError as exc:
            problems.append(str(exc))
    if problems:
        return []
    ratings: dict[tuple[str, str, str, str], SxsRating] = {}
    for row in rows:
        c = row.cells
        key = (c["system"], c["doc"], c["globalsegid"], c["rater"])
        source, target = texts[key[:3]]
        found = ratings.get(key)
        if found is None:
            found = ratings[key] = SxsRating(MqmRating(
                system=c["system"], doc=c["doc"], doc_id=c["docsegid"], seg_id=c["globalsegid"], rater=c["rater"],
                source=source, target=target, line=row.number))
        try:
            _add(found, row, source, target, f"{name}, line {row.number}")
        except FormatError as exc:
            problems.append(str(exc))
    return list(ratings.values())


def _add(rated: SxsRating, row: _Row, source: str, target: str, where: str) -> None:
    severity = row.cells["severity"].strip()
    kinds = {r.kind for r in rated.rows}
    if severity.casefold() == CHECK_SEVERITY.casefold():
        rated.rows.append(SxsRow(row.number, CHECK, row.cells["metadata"], found=row.cells["category"] == FOUND))
        return
    value = severity_value(severity)
    if value == NO_ERROR:
        if kinds & {ERROR, CLEAN}:
            raise FormatError(where, f"a no-error row for an output rater {row.cells['rater']!r} already rated "
                                     f"(line {rated.rows[0].line})")
        rated.rows.append(SxsRow(row.number, CLEAN, row.cells["metadata"]))
        return
    if CLEAN in kinds:
        raise FormatError(where, f"rater {row.cells['rater']!r} called this output clean on line "
                                 f"{next(r.line for r in rated.rows if r.kind == CLEAN)}")
    on_source = row.source_span is not None
    span, text = (row.source_span, source) if on_source else (row.target_span, target)
    pad = ""
    start: int | None = None
    end: int | None = None
    if span is not None:
        marked = row.source if on_source else row.target
        pad = marked[len(text):]
        start, end = span[0], min(span[1], len(text))
        if start >= end:  # only the whitespace past the end is marked
            start = end = None
    rated.rows.append(SxsRow(row.number, ERROR, row.cells["metadata"], error=len(rated.rating.errors), pad=pad))
    rated.rating.errors.append(MqmError(category=row.cells["category"], severity=value or "minor", start=start,
                                        end=end, side="source" if on_source else "target", line=row.number))


def _time(rows: list[SxsRow]) -> tuple[int, int]:
    return min((r.meta["timestamp"], r.line) for r in rows)


def _screens(ratings: list[SxsRating], name: str) -> None:
    """Give every rating its screen and position on it (the rule of the module's docstring), or refuse."""
    labels = {r.rating.system for r in ratings}
    groups: dict[tuple[str, str, str], list[SxsRating]] = defaultdict(list)
    for rated in ratings:
        groups[(rated.rating.rater, rated.rating.doc, rated.rating.seg_id)].append(rated)
    for (rater, doc, seg), group in groups.items():
        where = f"{name}: rater {rater!r} on doc {doc!r}, globalSegId {seg}"
        if len(group) % PER_SCREEN:
            raise FormatError(where, f"rated {len(group)} outputs; side-by-side screens show {PER_SCREEN} at a time")
        group.sort(key=lambda r: _time(r.rows))
        timeline = sorted((r.meta["timestamp"], r.line, k // PER_SCREEN) for k, rated in enumerate(group)
                          for r in rated.rows)
        runs = [s for n, (_, _, s) in enumerate(timeline) if n == 0 or timeline[n - 1][2] != s]
        if len(runs) != len(set(runs)):
            raise FormatError(where, "the rows of its screens interleave in time; which outputs were shown together "
                                     "cannot be told")
        for k in range(0, len(group), PER_SCREEN):
            _place(group[k:k + PER_SCREEN], k // PER_SCREEN + 1, labels, where)


def _place(screen: list[SxsRating], number: int, labels: set[str], where: str) -> None:
    sides: list[int | None] = []
    for rated in screen:
        marked = {r.meta.get("side") for r in rated.rows if r.kind == ERROR
                  and rated.rating.errors[r.error or 0].side == "target"} - {None, 0}
        if len(marked) > 1:
            raise FormatError(where, f"output {rated.rating.system!r} is marked on both sides of its screen")
        sides.append(marked.pop() if marked else None)
    known = [s for s in sides if s is not None]
    if len(known) != len(set(known)):
        raise FormatError(where, f"screen {number}'s outputs {', '.join(r.rating.system for r in screen)} are "
                                 "marked on the same side")
    for k, rated in enumerate(screen):
        partner = system_of(rated.rating.system, labels)[1]
        mates = {r.rating.system for r in screen if r is not rated}
        if partner is not None and partner not in mates:
            raise FormatError(where, f"output {rated.rating.system!r} shares its screen with {', '.join(mates)}, "
                                     f"not {partner!r}")
        rated.screen = number
        if sides[k] is not None:
            rated.position = sides[k]
        elif len(screen) == 2 and sides[1 - k] is not None:
            rated.position = 3 - sides[1 - k]  # type: ignore[operator]


# --- writing -------------------------------------------------------------------------------------------


def _mark(text: str, error: MqmError, pad: str) -> str:
    if error.start is None or error.end is None:
        return f"{text}{OPEN}{pad}{CLOSE}" if pad else text
    return f"{text[:error.start]}{OPEN}{text[error.start:error.end]}{pad}{CLOSE}{text[error.end:]}"


def sxs_tsv_lines(header: list[str], ratings: Iterable[SxsRating]) -> Iterator[str]:
    """The TSV of `ratings` in the side-by-side layout: `header` as written, then every row in its file order."""
    yield "\t".join(header or HEADER) + "\n"
    rows = sorted(((row.line, rated, row) for rated in ratings for row in rated.rows), key=lambda t: t[0])
    for _, rated, row in rows:
        r = rated.rating
        source, target = r.source, r.target
        if row.kind == CHECK:
            category, severity = (FOUND if row.found else MISSED), CHECK_SEVERITY
        elif row.kind == CLEAN:
            category, severity = "No-error", "No-error"
        else:
            error = r.errors[row.error or 0]
            category, severity = error.category, SEVERITY_LABELS[error.severity]
            if error.side == "source":
                source = _mark(source, error, row.pad)
            else:
                target = _mark(target, error, row.pad)
        yield "\t".join((r.system, r.doc, r.doc_id, r.seg_id, r.rater, source, target, category, severity,
                         row.metadata)) + "\n"

