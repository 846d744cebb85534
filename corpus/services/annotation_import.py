"""Import another tool's annotations of existing items as a named external source, in one transaction.

Every problem of the file is collected (line, span index) before anything is decided: a file with a
problem in a record (unknown item, a second annotation of the same output) is refused whole; bad spans
refuse it too unless the caller asks to skip them, and then each skipped span is reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from corpus.cleaning import text_problem
from corpus.formats import FIELD_LIMITS, FormatError, SpanRecord, check_text
from corpus.interop import ANNOTATION_FILE_FORMATS, RawAnnotation, read_annotations, resolve_span, slug
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Source, SourceKind

BATCH = 500
MAX_LISTED = 200


@dataclass
class AnnotationImportReport:
    dataset: str
    source: str
    tool: str
    file: str
    records: int = 0
    annotations: int = 0
    spans: int = 0
    normalized: int = 0
    no_error_outputs: int = 0
    skipped: list[str] = field(default_factory=list)
    other_records: int = 0  # records of another dataset or split (a factgenie campaign may span several)

    def summary(self) -> str:
        text = (
            f"Imported source {self.source!r} ({self.tool}) into {self.dataset!r}: {self.annotations} annotations, "
            f"{self.spans} spans ({self.normalized} matched after case/whitespace normalization), "
            f"{self.no_error_outputs} outputs with no error"
        )
        if self.other_records:
            text += f"; left {self.other_records} records of other datasets or splits aside"
        if self.skipped:
            text += f"; skipped {len(self.skipped)} bad spans:\n" + "\n".join(f"  - {s}" for s in self.skipped)
        return text + "."


class ImportRefused(FormatError):
    """The file has problems; `problems` lists every one of them (place: message)."""

    def __init__(self, problems: list[str], *, spans_only: bool) -> None:
        hint = " (pass --skip-bad-spans to import the rest)" if spans_only else ""
        shown = problems[:MAX_LISTED]
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        super().__init__(
            f"{len(problems)} problem{'s' if len(problems) != 1 else ''}{hint}",
            "\n" + "\n".join(f"  - {p}" for p in shown) + more,
        )
        self.problems = problems


class _Writer:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.pending: list[tuple[Annotation, list[SpanRecord]]] = []

    def add(self, annotation: Annotation, spans: list[SpanRecord]) -> None:
        self.pending.append((annotation, spans))
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        created = Annotation.objects.bulk_create([a for a, _ in self.pending])
        ErrorSpan.objects.bulk_create(
            ErrorSpan(
                annotation=annotation, position=position, text=span["text"], start=span["start"], end=span["end"],
                match=span["match"], explanation=span["explanation"], severity=span["severity"],
                category=span["category"],
            )
            for annotation, (_, spans) in zip(created, self.pending, strict=True)
            for position, span in enumerate(spans)
        )
        self.pending = []


def annotator_map(
    entries: Iterable[str], *, place: str = "--map-annotator", skip_blank: bool = False
) -> dict[str, str]:
    """Read "ID=NAME" entries (a Label Studio user id and the annotator it stands for; `ID=` for nobody named)
    into a mapping; raise FormatError naming the first bad entry as `place` N. One parser for the command, the
    API and the page, so all three accept and refuse the same entries."""
    mapping: dict[str, str] = {}
    for number, entry in enumerate(entries, 1):
        if skip_blank and not entry.strip():
            continue
        where = f"{place} {number} ({entry!r})"
        user, sep, name = entry.partition("=")
        user, name = user.strip(), name.strip()
        if not sep or not user:
            raise FormatError(where, "expected ID=NAME, e.g. 3=alice", field="map_annotator")
        for part, value in (("id", user), ("name", name)):
            problem = text_problem(value)
            if problem:
                raise FormatError(where, f"the {part} {problem}", field="map_annotator")
        if len(name) > FIELD_LIMITS["model"]:
            raise FormatError(where, f"the name is {len(name)} characters long; at most {FIELD_LIMITS['model']} "
                                     "are allowed (it is stored as the annotation's model)", field="map_annotator")
        if mapping.get(user, name) != name:
            raise FormatError(where, f"user id {user!r} is already mapped to {mapping[user]!r}", field="map_annotator")
        mapping[user] = name
    return mapping


@transaction.atomic
def annotations_import(
    *, path: Path, dataset_name: str, source: str, fmt: str = "jsonl", skip_bad_spans: bool = False,
    file_name: str = "", split: str = "", annotators: dict[str, str] | None = None,
) -> AnnotationImportReport:
    """Import the annotations in `path` under external source `source`; raise FormatError and keep nothing
    when the file has problems (ImportRefused lists all of them). Records that name another dataset (or,
    with `split`, another split) are left aside; `annotators` maps Label Studio user ids to names."""
    name = file_name or path.name
    if fmt not in ANNOTATION_FILE_FORMATS:
        raise FormatError("--format", f"unknown format {fmt!r} (known: {', '.join(ANNOTATION_FILE_FORMATS)})")
    if not source.strip():
        raise FormatError("--source", "a source name is needed")
    check_text(source, "--source", "source")
    check_text(dataset_name, "--dataset", "dataset")
    check_text(split, "--split", "split")
    dataset = Dataset.objects.filter(name=dataset_name).first()
    if dataset is None:
        raise FormatError("--dataset", f"no dataset named {dataset_name!r}; import its items first (import_items)")
    if not path.exists():
        raise FormatError(name, "no such file or folder")
    label, created = Source.objects.get_or_create(
        kind=SourceKind.EXTERNAL, label=source, defaults={"tool": fmt, "file_name": name[:500]}
    )
    if not created and label.tool != fmt:
        raise FormatError(
            "--source", f"source {source!r} was imported from {label.tool} before; choose another name for {fmt}"
        )
    items = {
        (ext, system): (pk, output)
        for pk, ext, system, output in dataset.items.values_list("pk", "external_id", "system", "output")
    }
    seen = set(
        Annotation.objects.filter(source=label, item__dataset=dataset).values_list("item_id", "aspect", "model")
    )
    report = AnnotationImportReport(dataset=dataset.name, source=source, tool=fmt, file=name)
    record_problems: list[str] = []
    span_problems: list[str] = []
    writer = _Writer(label)
    producers: set[str] = set()
    wanted = {dataset.name, slug(dataset.name)}
    elsewhere: set[str] = set()
    for raw in read_annotations(path, fmt, name=name, annotators=annotators):
        if (raw.dataset is not None and raw.dataset not in wanted) or (split and raw.split not in (None, split)):
            report.other_records += 1
            elsewhere.add(f"{raw.dataset}/{raw.split}")
            continue
        report.records += 1
        annotation, spans = _resolve(raw, items, seen, dataset.name, record_problems, span_problems)
        if annotation is None:
            continue
        annotation.source = label
        report.normalized += sum(1 for s in spans if s["match"] == "normalized")
        report.spans += len(spans)
        report.annotations += 1
        report.no_error_outputs += not raw.spans
        producers.add(raw.model)
        writer.add(annotation, spans)
    if report.records == 0:
        if elsewhere:
            wanted_split = f", split {split!r}" if split else ""
            raise FormatError(name, f"holds no annotations of dataset {dataset.name!r}{wanted_split} (it holds "
                                    f"dataset/split: {', '.join(sorted(elsewhere)[:20])})")
        raise FormatError(name, "holds no annotations")
    if record_problems or (span_problems and not skip_bad_spans):
        raise ImportRefused(record_problems + span_problems, spans_only=not record_problems)
    writer.flush()
    report.skipped = span_problems
    label.file_name = name[:500]
    label.producer = ", ".join(sorted(p for p in producers if p))[:200]
    label.save(update_fields=["file_name", "producer"])
    return report


def _resolve(
    raw: RawAnnotation, items: dict[tuple[str, str], tuple[int, str]], seen: set[tuple[int, str, str]],
    dataset: str, record_problems: list[str], span_problems: list[str],
) -> tuple[Annotation | None, list[SpanRecord]]:
    """Return the annotation to store and its good spans, or (None, []) after noting why the record is refused."""
    try:
        check_text(raw.aspect, raw.where, "aspect")
        check_text(raw.model, raw.where, "model")
        check_text(raw.system, raw.where, "system")
        check_text(raw.item_id, raw.where, "id")
    except FormatError as exc:
        record_problems.append(str(exc))
        return None, []
    found = items.get((raw.item_id, raw.system))
    if found is None:
        system = f" and system {raw.system!r}" if raw.system else ""
        record_problems.append(f"{raw.where}: no item with id {raw.item_id!r}{system} in dataset {dataset!r}")
        return None, []
    item_pk, output = found
    if raw.output is not None and raw.output != output:
        record_problems.append(f"{raw.where}: the file's output text differs from item {raw.item_id!r}'s output")
        return None, []
    key = (item_pk, raw.aspect, raw.model)
    if key in seen:
        who = f" by {raw.model!r}" if raw.model else ""
        record_problems.append(
            f"{raw.where}: a second annotation{who} of item {raw.item_id!r} for aspect {raw.aspect or '(none)'!r} "
            "in this source"
        )
        return None, []
    seen.add(key)
    spans = []
    for index, span in enumerate(raw.spans):
        place = f"{raw.where}, spans[{span.get('_index', index) if isinstance(span, dict) else index}]"
        try:
            spans.append(resolve_span(span, output, place))
        except FormatError as exc:
            span_problems.append(str(exc))
    kind = AnnotationKind.ANNOTATOR if raw.machine else AnnotationKind.HUMAN
    return Annotation(item_id=item_pk, aspect=raw.aspect, kind=kind, model=raw.model), spans
