"""Import Pearmut's ESA annotation log: one item per (segment, system), one imported source per user, each rating an
annotation with its 0-100 score and its spans at exact offsets, in one transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from corpus.formats import FormatError, check_text
from corpus.interop.pearmut import PearmutLog, PearmutRating, PearmutSpan, read_pearmut
from corpus.models import (
    Annotation,
    AnnotationKind,
    Dataset,
    ErrorSpan,
    Item,
    MatchKind,
    Source,
    SourceKind,
    TaskType,
    Unit,
)
from corpus.protocols import esa

TOOL = "pearmut"
DEFAULT_PREFIX = "pearmut"
TASK = "translation"
SOURCE_HEADER, OUTPUT_HEADER = "Source", "Translation"
EXTRA = "pearmut"  # the key of Item.extra and of Annotation.raw_answer that holds what Pearmut's line carries


def source_label(prefix: str, user_id: str) -> str:
    return f"{prefix}:{user_id}"


def external_id(rating: PearmutRating) -> str:
    """The item's id: Pearmut's item_id, else the user's document and place (each user's own task)."""
    if rating.item_id is not None:
        return rating.item_id
    return f"{rating.user_id}:{json.dumps(rating.item_i)}:{rating.k}"


def span_json(span: PearmutSpan) -> list:
    return [span.start, span.end, span.severity, span.category]


def _kept(rating: PearmutRating) -> dict:
    """What the rating's line carries that spanjudge does not model, kept with the rating to be written back: its
    place (document, segment, system), the line's, the item's and the system's other keys, and ESA^AI's
    pre-filled spans (per user: in Pearmut each user's task holds its own items)."""
    kept = {"item_i": rating.item_i, "k": rating.k, "m": rating.m, "line": rating.line_extra,
            "item": rating.item_extra, "rating": rating.rating_extra, "comment": rating.comment is not None}
    if rating.prefill is not None:
        kept["prefill"] = [span_json(s) for s in rating.prefill]
    return kept


@dataclass
class PearmutImportReport:
    dataset: str
    prefix: str
    created_items: int = 0
    reused_items: int = 0
    ratings: int = 0
    spans: int = 0
    superseded: int = 0
    reset: int = 0
    skipped: int = 0
    units: int = 0  # screens of several systems (contrastive), each a unit of the pairwise figures
    sources: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"Imported Pearmut ESA ratings into {self.dataset!r}: {self.created_items} new items, "
                f"{self.reused_items} existing, {self.ratings} ratings, {self.spans} error spans, sources "
                f"{', '.join(self.sources)}.")
        if self.units:
            text += f" {self.units} contrastive screens (several systems side by side) are units for pairwise_scores."
        set_aside = [f"{n} {what}" for n, what in ((self.superseded, "replaced by a later submission"),
                                                   (self.reset, "cancelled by a reset"),
                                                   (self.skipped, "forms, tutorials or attention checks")) if n]
        return text + (f" Left out as Pearmut counts them: {', '.join(set_aside)}." if set_aside else "")


def _read(path: Path, name: str) -> PearmutLog:
    if not path.is_file():
        raise FormatError(name, "no such file")
    try:
        with path.open(encoding="utf-8") as handle:
            return read_pearmut(handle, name=name)
    except UnicodeDecodeError as exc:
        raise FormatError(name, f"is not UTF-8 text (byte {exc.start})") from None


@transaction.atomic
def pearmut_import(*, path: Path, dataset_name: str, prefix: str = DEFAULT_PREFIX, file_name: str = "",
                   user=None) -> PearmutImportReport:
    """Import the Pearmut log at `path` into dataset `dataset_name` (created if new; an existing one must hold the
    same texts) under sources `PREFIX:USER`; raise FormatError and keep nothing when anything is wrong."""
    name = file_name or path.name
    check_text(dataset_name, "--dataset", "dataset")
    if not dataset_name.strip():
        raise FormatError("--dataset", "a dataset name is needed")
    if not prefix.strip():
        raise FormatError("--source", "a source prefix is needed")
    check_text(prefix, "--source", "source")
    log = _read(path, name)
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        task = TaskType.objects.filter(slug=TASK).first()
        if task is None:
            raise FormatError("--dataset", f"the built-in task {TASK!r} is missing (run migrate)")
        dataset = Dataset.objects.create(
            name=dataset_name, task=task, source_file=name[:500], created_by=user, input_headers=[SOURCE_HEADER],
            output_header=OUTPUT_HEADER, description="ESA ratings imported from Pearmut's annotation log.")
    report = PearmutImportReport(dataset=dataset.name, prefix=prefix, superseded=log.superseded, reset=log.reset,
                                 skipped=log.skipped)
    items = outputs_items(dataset, log.ratings, name, report)
    sources = _sources(dataset, log.ratings, prefix, name, report)
    units = _units(dataset, log.ratings, sources, report)
    annotations = Annotation.objects.bulk_create([
        Annotation(item_id=items[(external_id(r), r.system)], aspect="", source=sources[r.user_id],
                   kind=AnnotationKind.HUMAN, score=r.score, score_explanation=r.comment or "",
                   raw_answer=json.dumps({EXTRA: _kept(r)}, ensure_ascii=False, sort_keys=True),
                   unit=units.get(_screen(r)), unit_position=r.m + 1 if _screen(r) in units else None)
        for r in log.ratings
    ])
    spans = []
    for annotation, rating in zip(annotations, log.ratings, strict=True):
        report.ratings += 1
        for position, span in enumerate(rating.spans):
            located = span.start is not None
            spans.append(ErrorSpan(
                annotation=annotation, position=position, start=span.start, end=span.end,
                text=rating.output[span.start:span.end] if located else "",
                match=MatchKind.EXACT if located else MatchKind.NONE, severity=esa.SEVERITY_CODES[span.severity],
                category=span.category if span.category is not None else ("" if located else esa.MISSING),
            ))
    ErrorSpan.objects.bulk_create(spans)
    report.spans = len(spans)
    return report


def _screen(rating: PearmutRating) -> tuple[str, str, int]:
    """The screen a rating was made on: its user's document and the segment in it."""
    return (rating.user_id, json.dumps(rating.item_i), rating.k)


def _units(dataset: Dataset, ratings: list[PearmutRating], sources: dict[str, Source],
           report: PearmutImportReport) -> dict[tuple[str, str, int], Unit]:
    """A unit per segment of a line that shows several systems (Pearmut's contrastive protocol): the outputs one user
    judged side by side, each at its place in the line. Numbered per user and input in the log's order."""
    shown: dict[tuple[str, str, int], list[PearmutRating]] = {}
    for r in ratings:
        shown.setdefault(_screen(r), []).append(r)
    keys = [key for key, members in shown.items() if len(members) > 1]
    numbers: dict[tuple[str, str], int] = {}
    made = []
    for key in keys:
        head = shown[key][0]
        segment = external_id(head)
        numbers[(head.user_id, segment)] = numbers.get((head.user_id, segment), 0) + 1
        made.append(Unit(dataset=dataset, source=sources[head.user_id], segment=segment,
                         number=numbers[(head.user_id, segment)]))
    report.units = len(made)
    return dict(zip(keys, Unit.objects.bulk_create(made), strict=True))


def outputs_items(dataset: Dataset, ratings: list[PearmutRating], name: str,
           report: PearmutImportReport) -> dict[tuple[str, str], int]:
    """The pk of each rated output, creating the missing ones; an existing one must hold the file's texts."""
    existing = {(ext, system): (pk, output, inputs, reference) for pk, ext, system, output, inputs, reference in
                dataset.items.values_list("pk", "external_id", "system", "output", "inputs", "reference")}
    found: dict[tuple[str, str], int] = {}
    new: dict[tuple[str, str], Item] = {}
    position = (dataset.items.aggregate(top=Max("position"))["top"] or 0) + 1 if existing else 0
    for r in ratings:
        key = (external_id(r), r.system)
        where = f"{name}, line {r.line}"
        if key in found or key in new:
            continue
        check_text(key[0], where, "item_id")
        check_text(r.system, where, "system")
        inputs = {SOURCE_HEADER: r.source} if r.source is not None else {}
        known = existing.get(key)
        if known is not None:
            if known[1] != r.output or (known[2] or {}) != inputs or known[3] != (r.reference or ""):
                raise FormatError(where, f"item {key[0]!r} of system {key[1]!r} exists in dataset {dataset.name!r} "
                                         "with other texts")
            found[key] = known[0]
            report.reused_items += 1
            continue
        extra = {"has_ref": r.reference is not None, "has_item_id": r.item_id is not None}
        new[key] = Item(dataset=dataset, position=position, external_id=key[0], system=r.system, inputs=inputs,
                        output=r.output, reference=r.reference or "", extra={EXTRA: extra})
        position += 1
    for item in Item.objects.bulk_create(list(new.values())):
        found[(item.external_id, item.system)] = item.pk
    report.created_items = len(new)
    return found


def _sources(dataset: Dataset, ratings: list[PearmutRating], prefix: str, name: str,
             report: PearmutImportReport) -> dict[str, Source]:
    sources: dict[str, Source] = {}
    for user_id in dict.fromkeys(r.user_id for r in ratings):
        label = source_label(prefix, user_id)
        check_text(label, "--source", "source")
        source, _ = Source.objects.get_or_create(
            kind=SourceKind.EXTERNAL, label=label, defaults={"tool": TOOL, "producer": user_id,
                                                             "file_name": name[:500]})
        if source.tool != TOOL:
            raise FormatError("--source", f"source {label!r} was imported from {source.tool or 'another file'}; "
                                          "choose another prefix")
        if Annotation.objects.filter(source=source, item__dataset=dataset).exists():
            raise FormatError("--source", f"dataset {dataset.name!r} already has ratings by {label!r}; "
                                          "choose another prefix")
        sources[user_id] = source
        report.sources.append(label)
    return sources
