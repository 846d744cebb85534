"""Write a filtered dataset export in one of the formats, streaming (memory stays flat as the export grows)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from annotator.services.exporting import (
    CSV_COLUMNS,
    ExportFilter,
    Progress,
    csv_rows,
    dataset_records,
    export_csv,
    export_jsonl,
)
from corpus.annotation_files import (
    OutputAnnotation,
    factgenie_metadata,
    labelstudio_config,
    labelstudio_task,
    to_factgenie,
)
from corpus.formats import ExportRecord
from corpus.models import Dataset, ErrorSpan

FORMATS = ("jsonl", "csv", "parquet", "labelstudio", "factgenie")
EXTENSIONS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet", "labelstudio": "json", "factgenie": "jsonl"}
PARQUET_BATCH = 5000

_INTS = {"span_index", "start", "end", "severity"}
_FLAGS = set(CSV_COLUMNS[CSV_COLUMNS.index("explanation_verdict") + 1 : CSV_COLUMNS.index("comment")])


def categories(dataset: Dataset, keep: ExportFilter) -> list[str]:
    """The span categories in the export, in a fixed order (factgenie numbers them, Label Studio lists them)."""
    annotations = keep.annotations().filter(item__in=keep.items(dataset))
    return sorted(set(ErrorSpan.objects.filter(annotation__in=annotations).values_list("category", flat=True)))


def _outputs(record: ExportRecord) -> list[OutputAnnotation]:
    (output,) = record["outputs"].values()
    return [
        OutputAnnotation(
            item_id=record["item_id"], system=record["system"], output=output, aspect=record["aspect"] or "",
            model=a["model"], source=a["source"], machine=a["kind"] in ("ensemble", "annotator", "supervisor"),
            spans=a["spans"],
        )
        for a in record["annotations"]
    ]


def text_chunks(dataset: Dataset, fmt: str, keep: ExportFilter, progress: Progress | None = None) -> Iterator[str]:
    """The export as text chunks (every format but Parquet, which is binary and written by `write_export`)."""
    if fmt == "jsonl":
        yield from export_jsonl(dataset, keep, progress)
    elif fmt == "csv":
        yield from export_csv(dataset, keep, progress)
    elif fmt == "factgenie":
        names = categories(dataset, keep)
        for record in dataset_records(dataset, keep, progress):
            for annotation in _outputs(record):
                yield to_factgenie(annotation, dataset=dataset.name, categories=names)
    elif fmt == "labelstudio":
        yield "["
        number = 0
        for record in dataset_records(dataset, keep, progress):
            outputs = _outputs(record)
            if outputs:
                number += 1
                task = json.dumps(labelstudio_task(number, outputs), ensure_ascii=False)
                yield ("\n" if number == 1 else ",\n") + task
        yield "\n]\n"
    else:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")


def _parquet(dataset: Dataset, keep: ExportFilter, path: Path, progress: Progress | None) -> None:
    """The CSV's rows in a typed Parquet table, written in batches (memory stays flat)."""
    # pyarrow adds ~40 MB to a process: loaded by the processes that write Parquet, not by every web worker
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        (name, pa.int64() if name in _INTS else pa.int8() if name in _FLAGS else pa.float64() if name == "score"
         else pa.string())
        for name in CSV_COLUMNS
    ])

    def table(rows: list[list[object]]) -> pa.Table:
        columns = list(zip(*rows, strict=True))
        arrays = [pa.array(list(column), type=field.type) for column, field in zip(columns, schema, strict=True)]
        return pa.Table.from_arrays(arrays, schema=schema)

    with pq.ParquetWriter(path, schema) as writer:
        batch: list[list[object]] = []
        for row in csv_rows(dataset, keep, progress):
            batch.append([None if cell == "" else cell for cell in row])
            if len(batch) >= PARQUET_BATCH:
                writer.write_table(table(batch))
                batch = []
        if batch:
            writer.write_table(table(batch))


def write_export(
    dataset: Dataset, fmt: str, keep: ExportFilter, path: Path, progress: Progress | None = None
) -> list[Path]:
    """Write the export to `path` (plus a factgenie campaign's metadata or Label Studio's labeling config
    beside it); return the files written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    written = [path]
    if fmt == "parquet":
        _parquet(dataset, keep, path, progress)
        return written
    newline = "" if fmt == "csv" else None
    with path.open("w", encoding="utf-8", newline=newline) as handle:
        for chunk in text_chunks(dataset, fmt, keep, progress):
            handle.write(chunk)
    if fmt == "labelstudio":
        config = path.with_name(path.stem + ".labels.xml")
        config.write_text(labelstudio_config(categories(dataset, keep)), encoding="utf-8")
        written.append(config)
    elif fmt == "factgenie":
        meta = path.with_name(path.stem + ".metadata.json")
        meta.write_text(json.dumps(factgenie_metadata(dataset.name, categories(dataset, keep)), indent=1), "utf-8")
        written.append(meta)
    return written
