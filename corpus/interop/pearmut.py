"""Pearmut's annotation log (JSONL): ESA ratings with their scores read from it and written back to it.

No Django here. Pearmut (Zouhar and Kocmi 2026; github.com/zouharvi/pearmut) runs ESA and ESA^AI and writes
one JSON line per submitted document of a user (`data/outputs/CAMPAIGN.jsonl`, what its dashboard downloads):

    {"user_id": "alice", "item_i": 0,
     "item": [{"item_id": "seg1", "src": "...", "tgt": {"sysA": "..."}, "error_spans": {"sysA": [...]}}, ...],
     "annotation": [{"sysA": {"score": 70, "error_spans": [{"start_i": 5, "end_i": 8, "severity": "major",
                                                           "category": null}], "textfield": null}}, ...],
     "actions": [{"time": 1705680000.0, "action": "load"}, ...], "comment": "..."}

`item` and `annotation` run in parallel: one entry per segment of the document, one key per system (model).
An item's `error_spans` are ESA^AI's pre-filled spans. Span indices count Pearmut's character boxes: the UTF-16
code units of the text with every line break left out (it draws a line break as <br>, not as a box), both
ends inclusive; missing content is the box after the text (`[missing]`), `start_i == end_i == len(boxes)`.
These indices become code-point offsets [start, end) here, and back.

Everything of a line spanjudge does not model (`actions`, `validations`, per-system keys such as `textfield`,
item keys such as `instructions`) travels verbatim beside the rating, so a file read and written back is the
same JSON line for line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from corpus.formats import FormatError
from corpus.protocols import esa

MODELLED_LINE = ("user_id", "item_i", "item", "annotation", "comment")
MODELLED_ITEM = ("item_id", "src", "ref", "tgt", "error_spans")
MODELLED_RATING = ("score", "error_spans")


@dataclass(frozen=True)
class PearmutSpan:
    """A span in code points [start, end) of the output; None and None for missing content."""

    start: int | None
    end: int | None
    severity: str  # minor | major
    category: str | None = None

    @property
    def missing(self) -> bool:
        return self.start is None


@dataclass
class PearmutRating:
    """One user's score and spans on one system's output of one segment of a document line, with what the line
    carries beside them."""

    user_id: str
    item_i: Any  # Pearmut's index of the document in the user's task (a number, or a string for tutorials)
    k: int  # the segment's place in the document
    m: int  # the system's place among the segment's systems
    item_id: str | None
    system: str
    source: str | None
    reference: str | None
    output: str
    score: float | None
    spans: list[PearmutSpan] = field(default_factory=list)
    prefill: list[PearmutSpan] | None = None  # ESA^AI's pre-filled spans of this output, as the item gives them
    item_extra: dict[str, Any] = field(default_factory=dict)  # the item's other keys
    rating_extra: dict[str, Any] = field(default_factory=dict)  # the system's other keys (textfield, sliders)
    line_extra: dict[str, Any] = field(default_factory=dict)  # the line's other keys (actions, validations)
    comment: str | None = None
    line: int = 0


# ---- offsets ------------------------------------------------------------------------------------------------

def _boxes(text: str) -> list[int]:
    """Pearmut's character boxes of `text`: box j holds (a UTF-16 unit of) the code point at the returned index."""
    boxes: list[int] = []
    for i, ch in enumerate(text):
        if ch == "\n":
            continue
        boxes += [i, i] if ord(ch) > 0xFFFF else [i]
    return boxes


def from_pearmut(text: str, start_i: object, end_i: object, where: str) -> tuple[int | None, int | None]:
    """Code-point offsets [start, end) of an inclusive box range; (None, None) for the missing-content box."""
    if isinstance(start_i, bool) or isinstance(end_i, bool) or not isinstance(start_i, int) \
            or not isinstance(end_i, int):
        raise FormatError(where, f"start_i and end_i must be whole numbers, not {start_i!r} and {end_i!r}")
    boxes = _boxes(text)
    if start_i == end_i == len(boxes):
        return None, None
    if not 0 <= start_i <= end_i < len(boxes):
        raise FormatError(where, f"span {start_i}-{end_i} lies outside the text's {len(boxes)} characters "
                                 f"(and its [missing] box, {len(boxes)})")
    return boxes[start_i], boxes[end_i] + 1


def to_pearmut(text: str, start: int | None, end: int | None) -> tuple[int, int] | None:
    """The inclusive box range of code points [start, end) (the missing-content box for None); None when the
    span covers line breaks only, which Pearmut has no box for."""
    boxes = _boxes(text)
    if start is None or end is None:
        return len(boxes), len(boxes)
    inside = [j for j, i in enumerate(boxes) if start <= i < end]
    return (inside[0], inside[-1]) if inside else None


# ---- reading ---------------------------------------------------------------------------------------------------

def _span(raw: object, text: str, where: str) -> PearmutSpan:
    if not isinstance(raw, dict):
        raise FormatError(where, "a span is an object with start_i, end_i and severity")
    severity = raw.get("severity")
    if not isinstance(severity, str) or esa.severity_value(severity) is None:
        raise FormatError(where, f"severity must be one of {', '.join(esa.SEVERITY_VALUES)} for ESA, "
                                 f"not {severity!r}")
    category = raw.get("category")
    if category is not None and not isinstance(category, str):
        raise FormatError(where, f"category must be text or null, not {category!r}")
    unknown = sorted(set(raw) - {"start_i", "end_i", "severity", "category"})
    if unknown:
        raise FormatError(where, f"unknown span field(s) {', '.join(unknown)}")
    start, end = from_pearmut(text, raw.get("start_i"), raw.get("end_i"), where)
    return PearmutSpan(start, end, severity, category)


def _score(raw: object, where: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw) \
            or not esa.SCORE_MIN <= raw <= esa.SCORE_MAX:
        raise FormatError(where, f"score must be a number from {esa.SCORE_MIN} to {esa.SCORE_MAX} or null, "
                                 f"not {raw!r}")
    return float(raw)


def _text(value: object, where: str, name: str) -> str:
    if not isinstance(value, str):
        raise FormatError(where, f"{name} must be text, not {type(value).__name__}")
    return value


def _ratings_of_line(record: object, number: int, name: str) -> Iterator[PearmutRating]:
    where = f"{name}, line {number}"
    if not isinstance(record, dict):
        raise FormatError(where, "a line is one JSON object")
    user_id = record.get("user_id")
    if not isinstance(user_id, str) or not user_id.strip():
        raise FormatError(where, "user_id must be non-empty text")
    items, annotations = record.get("item"), record.get("annotation")
    if not isinstance(items, list) or not isinstance(annotations, list) or len(items) != len(annotations):
        raise FormatError(where, "item and annotation must be lists of the same length (one entry per segment)")
    comment = record.get("comment")
    if comment is not None and not isinstance(comment, str):
        raise FormatError(where, "comment must be text")
    line_extra = {k: v for k, v in record.items() if k not in MODELLED_LINE}
    for k, (item, annotation) in enumerate(zip(items, annotations, strict=True)):
        place = f"{where}, item {k}"
        if not isinstance(item, dict) or not isinstance(item.get("tgt"), dict) or not item["tgt"]:
            raise FormatError(place, "an item is an object whose tgt maps each system to its output")
        if annotation is None:
            raise FormatError(place, "a skipped item (annotation null) has no rating to import")
        if not isinstance(annotation, dict):
            raise FormatError(place, "an annotation entry maps each system to its score and error spans")
        prefills = item.get("error_spans")
        if prefills is not None and not isinstance(prefills, dict):
            raise FormatError(place, "error_spans of an item maps each system to its pre-filled spans")
        item_id = item.get("item_id")
        if item_id is not None and not isinstance(item_id, str):
            raise FormatError(place, "item_id must be text")
        source = item.get("src")
        reference = item.get("ref")
        for m, (system, rating) in enumerate(annotation.items()):
            spot = f"{place}, system {system!r}"
            if system not in item["tgt"]:
                raise FormatError(spot, "the annotation names a system the item's tgt does not have")
            output = _text(item["tgt"][system], spot, "tgt")
            if not isinstance(rating, dict):
                raise FormatError(spot, "a rating is an object with score and error_spans")
            raw_spans = rating.get("error_spans") or []
            if not isinstance(raw_spans, list):
                raise FormatError(spot, "error_spans must be a list")
            prefill = None
            if prefills is not None and system in prefills:
                if not isinstance(prefills[system], list):
                    raise FormatError(spot, "pre-filled error_spans must be a list")
                prefill = [_span(s, output, f"{spot}, pre-filled span {n}") for n, s in enumerate(prefills[system])]
            yield PearmutRating(
                user_id=user_id, item_i=record.get("item_i"), k=k, m=m, item_id=item_id, system=system,
                source=None if source is None else _text(source, place, "src"),
                reference=None if reference is None else _text(reference, place, "ref"), output=output,
                score=_score(rating.get("score"), spot),
                spans=[_span(s, output, f"{spot}, span {n}") for n, s in enumerate(raw_spans)], prefill=prefill,
                item_extra={key: v for key, v in item.items() if key not in MODELLED_ITEM},
                rating_extra={key: v for key, v in rating.items() if key not in MODELLED_RATING},
                line_extra=line_extra, comment=comment, line=number,
            )


RESET = "__RESET__"  # Pearmut's annotation for a task reset: earlier submissions of that document no longer count
SKIPPED_ITEM_I = ("welcome_", "random_", "goodbye_")  # tutorials and attention checks, which its scores skip too


@dataclass
class PearmutLog:
    """The ratings a log holds once Pearmut's own rules are applied, and what those rules set aside."""

    ratings: list[PearmutRating]
    superseded: int = 0  # submissions a later one of the same user and document replaced
    reset: int = 0  # submissions a later reset of their document cancelled
    skipped: int = 0  # forms, tutorials and attention checks


def read_pearmut(lines: Iterable[str], *, name: str = "file") -> PearmutLog:
    """Every rating of a Pearmut annotation log, as Pearmut counts them: a user's later submission of a document
    replaces the earlier one, a reset cancels what came before it, and forms, tutorials and attention checks are
    left out. A FormatError names the first bad line."""
    latest: dict[tuple[str, str], tuple[int, dict]] = {}
    log = PearmutLog(ratings=[])
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise FormatError(f"{name}, line {number}", f"not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise FormatError(f"{name}, line {number}", "a line is one JSON object")
        key = (str(record.get("user_id")), json.dumps(record.get("item_i")))
        if record.get("annotation") == RESET:
            log.reset += key in latest
            latest.pop(key, None)
            continue
        item_i = record.get("item_i")
        items = record.get("item")
        is_form = isinstance(items, list) and items and isinstance(items[0], dict) and "form" in items[0]
        if (isinstance(item_i, str) and item_i.startswith(SKIPPED_ITEM_I)) or is_form:
            log.skipped += 1
            continue
        log.superseded += key in latest
        latest[key] = (number, record)
    for number, record in sorted(latest.values(), key=lambda pair: pair[0]):
        log.ratings.extend(_ratings_of_line(record, number, name))
    if not log.ratings:
        raise FormatError(name, "no rating found (one JSON line per submitted document)")
    return log


# ---- writing ---------------------------------------------------------------------------------------------------

def _number(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def _span_out(span: PearmutSpan, text: str) -> dict[str, Any] | None:
    place = to_pearmut(text, span.start, span.end)
    if place is None:
        return None
    return {"start_i": place[0], "end_i": place[1], "severity": span.severity, "category": span.category}


def _item(segment: list[PearmutRating], item: dict[str, Any]) -> dict[str, Any]:
    """One Pearmut item of a segment's outputs (in the given order), on top of the item's other keys: its id,
    source and reference, each system's output and ESA^AI's pre-filled spans where there are any."""
    head = segment[0]
    if head.item_id is not None:
        item["item_id"] = head.item_id
    if head.source is not None:
        item["src"] = head.source
    if head.reference is not None:
        item["ref"] = head.reference
    item["tgt"] = {r.system: r.output for r in segment}
    prefilled = {r.system: [s for s in (_span_out(p, r.output) for p in r.prefill) if s is not None]
                 for r in segment if r.prefill is not None}
    if prefilled:
        item["error_spans"] = prefilled
    return item


def line_key(rating: PearmutRating) -> tuple[str, str]:
    return (rating.user_id, json.dumps(rating.item_i))


def pearmut_lines(ratings: Iterable[PearmutRating]) -> Iterator[str]:
    """The ratings as Pearmut's log: one line per (user, document), documents in the order of their user and
    `item_i`, segments and systems in their place. Keys are written sorted, so equal content is equal bytes."""
    lines: dict[tuple[str, str], list[PearmutRating]] = {}
    for rating in ratings:
        lines.setdefault(line_key(rating), []).append(rating)
    for key in sorted(lines, key=lambda key: (key[0], _natural(key[1]))):
        members = sorted(lines[key], key=lambda r: (r.k, r.m))
        first = members[0]
        items: list[dict[str, Any]] = []
        annotations: list[dict[str, Any]] = []
        for k in sorted({r.k for r in members}):
            segment = [r for r in members if r.k == k]
            items.append(_item(segment, dict(segment[0].item_extra)))
            annotations.append({r.system: {**r.rating_extra, "score": _number(r.score), "error_spans": [
                s for s in (_span_out(span, r.output) for span in r.spans) if s is not None]} for r in segment})
        record: dict[str, Any] = {**first.line_extra, "user_id": first.user_id, "item_i": first.item_i,
                                  "item": items, "annotation": annotations}
        if first.comment is not None:
            record["comment"] = first.comment
        yield json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def _natural(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(json.loads(text)), "")
    except (TypeError, ValueError):
        return (1, 0.0, text)


# ---- task files ------------------------------------------------------------------------------------------------

TASK_PROTOCOL = "cESA"  # Pearmut's contrastive ESA; its task-based assignment gives task n to the n-th user


@dataclass
class PearmutTask:
    """A Pearmut task file (campaign JSON) as outputs to judge: one rating without score per (task, document,
    segment, system), `user_id` the task's label (the user's name in a file that maps users to tasks, else
    task-N), `item_i` the document's place in the task, each output's pre-filled spans where the item has them."""

    campaign_id: str
    protocol: str
    outputs: list[PearmutRating]
    tasks: int
    documents: int


def read_pearmut_task(text: str, *, name: str = "file") -> PearmutTask:
    """The outputs of a Pearmut task file: `{"info": {...}, "campaign_id": ..., "data": [task, ...]}` with a task a
    list of documents and a document a list of items, each item's `tgt` mapping systems to outputs (`data` may
    also map user names to their tasks, as Pearmut's own cache does). A FormatError names the first bad place."""
    try:
        record = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FormatError(name, f"not JSON ({exc})") from None
    if not isinstance(record, dict) or "data" not in record:
        raise FormatError(name, "a task file is one JSON object with the tasks under \"data\"")
    info = record.get("info") or {}
    if not isinstance(info, dict):
        raise FormatError(f"{name}, info", "info must be an object")
    data = record["data"]
    if isinstance(data, dict):
        named = [(str(user), tasks) for user, tasks in data.items()]
    elif isinstance(data, list):
        named = [(f"task-{n}", task) for n, task in enumerate(data)]
    else:
        raise FormatError(f"{name}, data", "data is a list of tasks (or an object of each user's task)")
    outputs: list[PearmutRating] = []
    documents = 0
    for label, task in named:
        where = f"{name}, data {label!r}"
        if not isinstance(task, list):
            raise FormatError(where, "a task is a list of documents")
        for d, document in enumerate(task):
            place = f"{where}, document {d}"
            if not isinstance(document, list) or not document:
                raise FormatError(place, "a document is a non-empty list of items")
            documents += 1
            for k, item in enumerate(document):
                spot = f"{place}, item {k}"
                if not isinstance(item, dict) or not isinstance(item.get("tgt"), dict) or not item["tgt"]:
                    raise FormatError(spot, "an item is an object whose tgt maps each system to its output")
                item_id, source, reference = item.get("item_id"), item.get("src"), item.get("ref")
                if item_id is not None and not isinstance(item_id, str):
                    raise FormatError(spot, "item_id must be text")
                prefills = item.get("error_spans")
                if prefills is not None and not isinstance(prefills, dict):
                    raise FormatError(spot, "error_spans of an item maps each system to its pre-filled spans")
                for m, (system, output) in enumerate(item["tgt"].items()):
                    at = f"{spot}, system {system!r}"
                    output = _text(output, at, "tgt")
                    prefill = None
                    if prefills is not None and system in prefills:
                        if not isinstance(prefills[system], list):
                            raise FormatError(at, "pre-filled error_spans must be a list")
                        prefill = [_span(s, output, f"{at}, pre-filled span {n}")
                                   for n, s in enumerate(prefills[system])]
                    outputs.append(PearmutRating(
                        user_id=label, item_i=d, k=k, m=m, item_id=item_id, system=system,
                        source=None if source is None else _text(source, spot, "src"),
                        reference=None if reference is None else _text(reference, spot, "ref"), output=output,
                        score=None, prefill=prefill,
                        item_extra={key: v for key, v in item.items() if key not in MODELLED_ITEM}))
    if not outputs:
        raise FormatError(name, "no output found (data holds no task with a document)")
    return PearmutTask(campaign_id=str(record.get("campaign_id") or ""), protocol=str(info.get("protocol") or ""),
                       outputs=outputs, tasks=len(named), documents=documents)


def pearmut_task(campaign_id: str, tasks: Iterable[Iterable[Iterable[PearmutRating]]]) -> str:
    """A Pearmut contrastive task file: each task a list of documents, each document one segment whose systems
    are the given outputs in the given order (Pearmut keeps it with `shuffle` off), ESA^AI's spans pre-filled
    where an output has them. Task n goes to the n-th user who opens the campaign."""
    data = []
    for task in tasks:
        documents = []
        for screen in task:
            documents.append([_item(list(screen), {})])
        data.append(documents)
    record = {"info": {"assignment": "task-based", "protocol": TASK_PROTOCOL, "shuffle": False,
                       "show_model_names": False}, "campaign_id": campaign_id, "data": data}
    return json.dumps(record, ensure_ascii=False, indent=2) + "\n"
