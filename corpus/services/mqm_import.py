"""Import Google's MQM TSV, pointwise or side by side: one item per (system, doc, seg_id), one imported source per
rater, and for the side-by-side layout one unit per screen, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import Max

from corpus.formats import FormatError, check_text
from corpus.interop.mqm import MqmRating, natural, read_mqm_tsv
from corpus.interop.mqm_sxs import SxsFile, SxsRating, SxsRow, is_side_by_side, read_sxs_tsv
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
from corpus.protocols.mqm import OUTPUT_HEADER, SEVERITY_CODES, SOURCE_HEADER, open_note
from corpus.selectors.mqm import SXS_ROWS

TOOL = "mqm"
DEFAULT_PREFIX = "mqm"
TASK = "translation"
BATCH = 2000


def item_external_id(doc: str, seg_id: str) -> str:
    """An item's id within its system: the document and the segment (the same for every system's translation)."""
    return f"{doc}:{seg_id}"


def source_label(prefix: str, rater: str) -> str:
    return f"{prefix}:{rater}"


@dataclass
class MqmImportReport:
    dataset: str
    prefix: str
    created_items: int = 0
    reused_items: int = 0
    annotations: int = 0
    clean: int = 0
    spans: int = 0
    sources: list[str] = field(default_factory=list)
    units: int = 0  # side by side: the screens
    checks: dict[str, list[int]] = field(default_factory=dict)  # side by side: rater -> [found, missed]

    def summary(self) -> str:
        text = (f"Imported MQM ratings into {self.dataset!r}: {self.created_items} new items, {self.reused_items} "
                f"existing, {self.annotations} ratings ({self.clean} clean segments), {self.spans} errors, "
                f"sources {', '.join(self.sources)}.")
        if self.units:
            found = sum(f for f, _ in self.checks.values())
            missed = sum(m for _, m in self.checks.values())
            text += (f" Side by side: {self.units} screens; planted-error checks {found} found, {missed} missed "
                     f"(kept, left out of every score).")
        return text


def _read(path: Path, name: str, side_by_side: bool | None) -> list[MqmRating] | SxsFile:
    """The file's ratings: the side-by-side layout when its header is that one's (`side_by_side` True: it must
    be), else the pointwise one."""
    if not path.is_file():
        raise FormatError(name, "no such file")
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            sxs = is_side_by_side(handle.readline())
            if side_by_side and not sxs:
                raise FormatError(name, "--side-by-side: the header is not the side-by-side layout's (system doc "
                                        "docSegId globalSegId rater source target category severity metadata)")
            handle.seek(0)
            return read_sxs_tsv(handle, name=name) if sxs else read_mqm_tsv(handle, name=name)
    except UnicodeDecodeError as exc:
        raise FormatError(name, f"is not UTF-8 text (byte {exc.start})") from None


def _order(ratings: list[MqmRating]) -> list[tuple[str, str, str]]:
    """The items in reading order: documents as the file first names them, then segments in document order."""
    docs: dict[str, int] = {}
    items: dict[tuple[str, str, str], tuple[object, ...]] = {}
    for r in ratings:
        docs.setdefault(r.doc, len(docs))
        items.setdefault((r.system, r.doc, r.seg_id), (docs[r.doc], natural(r.doc_id), natural(r.seg_id), r.system))
    return sorted(items, key=items.__getitem__)


@transaction.atomic
def mqm_import(
    *, path: Path, dataset_name: str, prefix: str = DEFAULT_PREFIX, file_name: str = "", user=None,
    side_by_side: bool | None = None,
) -> MqmImportReport:
    """Import the MQM TSV at `path` into dataset `dataset_name` (created if new; an existing one must hold the
    same texts) under sources `PREFIX:RATER`; raise FormatError and keep nothing when anything is wrong. The
    layout follows from the header; `side_by_side` True refuses a file that is not side by side."""
    name = file_name or path.name
    check_text(dataset_name, "--dataset", "dataset")
    if not dataset_name.strip():
        raise FormatError("--dataset", "a dataset name is needed")
    if not prefix.strip():
        raise FormatError("--source", "a source prefix is needed")
    check_text(prefix, "--source", "source")
    read = _read(path, name, side_by_side)
    sxs = read if isinstance(read, SxsFile) else None
    ratings: list[MqmRating] = [r.rating for r in read.ratings] if isinstance(read, SxsFile) else read
    for rater in {r.rater for r in ratings}:
        check_text(source_label(prefix, rater), "--source", "source")
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        task = TaskType.objects.filter(slug=TASK).first()
        if task is None:
            raise FormatError("--dataset", f"the built-in task {TASK!r} is missing (run migrate)")
        dataset = Dataset.objects.create(
            name=dataset_name, task=task, source_file=name[:500], created_by=user, input_headers=[SOURCE_HEADER],
            output_header=OUTPUT_HEADER, description="MQM ratings imported from Google's TSV format.",
        )
    report = MqmImportReport(dataset=dataset.name, prefix=prefix)
    items = _items(dataset, ratings, name, report, header=sxs.header if sxs else None)
    sources = _sources(dataset, ratings, prefix, name, report)
    units = _units(dataset, sxs.ratings, sources, report) if sxs else {}
    pending: list[tuple[Annotation, MqmRating]] = []
    for k, rating in enumerate(ratings):
        annotation = Annotation(
            item_id=items[(rating.system, rating.doc, rating.seg_id)], aspect="", source=sources[rating.rater],
            kind=AnnotationKind.HUMAN, score_explanation=rating.comment,
        )
        if sxs:
            rated = sxs.ratings[k]
            annotation.unit = units[_unit_key(rated)]
            annotation.unit_position = rated.position
            annotation.extra = {SXS_ROWS: [row_record(row) for row in rated.rows]}
        pending.append((annotation, rating))
        if len(pending) >= BATCH:
            _flush(pending, report)
    _flush(pending, report)
    return report


def row_record(row: SxsRow) -> dict[str, object]:
    """A row as Annotation.extra keeps it (what is empty left out: the rows are 30 MB for one release)."""
    record: dict[str, object] = {"line": row.line, "kind": row.kind, "metadata": row.metadata}
    if row.error is not None:
        record["error"] = row.error
    if row.found is not None:
        record["found"] = row.found
    if row.pad:
        record["pad"] = row.pad
    return record


def _unit_key(rated: SxsRating) -> tuple[str, str, int]:
    return (rated.rating.rater, item_external_id(rated.rating.doc, rated.rating.seg_id), rated.screen)


def _units(dataset: Dataset, ratings: list[SxsRating], sources: dict[str, Source],
           report: MqmImportReport) -> dict[tuple[str, str, int], Unit]:
    """One unit per screen, and the planted-error checks counted per rater."""
    keys = list(dict.fromkeys(_unit_key(r) for r in ratings))
    created = Unit.objects.bulk_create([Unit(dataset=dataset, source=sources[rater], segment=segment, number=number)
                                        for rater, segment, number in keys], batch_size=BATCH)
    report.units = len(created)
    for rated in ratings:
        counts = report.checks.setdefault(rated.rating.rater, [0, 0])
        for row in rated.checks:
            counts[0 if row.found else 1] += 1
    return dict(zip(keys, created, strict=True))


def _items(dataset: Dataset, ratings: list[MqmRating], name: str, report: MqmImportReport,
           header: list[str] | None = None) -> dict[tuple, int]:
    """The pk of each rated item, creating the missing ones; an existing item must hold the file's texts."""
    existing = {(ext, system): (pk, output, inputs) for pk, ext, system, output, inputs in
                dataset.items.values_list("pk", "external_id", "system", "output", "inputs")}
    first = {}
    for r in ratings:
        first.setdefault((r.system, r.doc, r.seg_id), r)
    found: dict[tuple, int] = {}
    new: list[Item] = []
    position = (dataset.items.aggregate(top=Max("position"))["top"] or 0) + 1 if existing else 0
    for key in _order(ratings):
        r = first[key]
        ext = item_external_id(r.doc, r.seg_id)
        check_text(ext, f"{name}, line {r.line}", "id")
        known = existing.get((ext, r.system))
        if known is not None:
            if known[1] != r.target or known[2].get(SOURCE_HEADER) != r.source:
                raise FormatError(f"{name}, line {r.line}", f"item {ext!r} of system {r.system!r} exists in dataset "
                                  f"{dataset.name!r} with another source or target")
            found[key] = known[0]
            report.reused_items += 1
            continue
        place: dict[str, object] = {"doc": r.doc, "doc_id": r.doc_id, "seg_id": r.seg_id}
        if header is not None:
            place["header"] = header  # the side-by-side header as written, for the export
        new.append(Item(dataset=dataset, position=position, external_id=ext, system=r.system,
                        inputs={SOURCE_HEADER: r.source}, output=r.target, extra={"mqm": place}))
        position += 1
    for item in Item.objects.bulk_create(new, batch_size=BATCH):
        found[(item.system, item.extra["mqm"]["doc"], item.extra["mqm"]["seg_id"])] = item.pk
    report.created_items = len(new)
    return found


def _sources(dataset: Dataset, ratings: list[MqmRating], prefix: str, name: str,
             report: MqmImportReport) -> dict[str, Source]:
    sources: dict[str, Source] = {}
    for rater in dict.fromkeys(r.rater for r in ratings):
        label = source_label(prefix, rater)
        source, _ = Source.objects.get_or_create(
            kind=SourceKind.EXTERNAL, label=label, defaults={"tool": TOOL, "producer": rater, "file_name": name[:500]})
        if source.tool != TOOL:
            raise FormatError("--source", f"source {label!r} was imported from {source.tool or 'another file'}; "
                                          "choose another prefix")
        if Annotation.objects.filter(source=source, item__dataset=dataset).exists():
            raise FormatError("--source", f"dataset {dataset.name!r} already has ratings by {label!r}; "
                                          "choose another prefix")
        sources[rater] = source
        report.sources.append(label)
    return sources


def _flush(pending: list[tuple[Annotation, MqmRating]], report: MqmImportReport) -> None:
    if not pending:
        return
    created = Annotation.objects.bulk_create([a for a, _ in pending])
    spans = []
    for annotation, (_, rating) in zip(created, pending, strict=True):
        report.annotations += 1
        report.clean += not rating.errors
        for position, error in enumerate(rating.errors):
            placed = error.start is not None
            on_target, on_source = placed and error.side == "target", placed and error.side == "source"
            text = rating.target if error.side == "target" else rating.source
            spans.append(ErrorSpan(
                annotation=annotation, position=position,
                text=text[error.start:error.end] if placed else "",
                start=error.start if on_target else None, end=error.end if on_target else None,
                source_start=error.start if on_source else None, source_end=error.end if on_source else None,
                match=MatchKind.EXACT if on_target else MatchKind.NONE, explanation=error.comment,
                severity=SEVERITY_CODES[error.severity], category=error.category, note=open_note(error.open_end),
            ))
    ErrorSpan.objects.bulk_create(spans, batch_size=BATCH)
    report.spans += len(spans)
    pending.clear()
