"""Write a filtered dataset export in one of the formats, streaming (memory stays flat as the export grows)."""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from django.utils import timezone

from annotator.services.exporting import (
    CSV_COLUMNS,
    ExportFilter,
    Progress,
    csv_rows,
    dataset_records,
    export_csv,
    export_jsonl,
)
from corpus.formats import ExportRecord
from corpus.interop import FactgenieCampaignWriter, OutputAnnotation, labelstudio_config, labelstudio_task
from corpus.models import Dataset
from corpus.services.annotation_export import ExportReport, campaign_id, dataset_categories

# a factgenie export is a folder of campaigns (one per source); jobs and `-o NAME.zip` zip it
EXTENSIONS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet", "labelstudio": "json", "factgenie": "zip"}
EXPORT_FORMATS = tuple(EXTENSIONS)
PARQUET_BATCH = 5000

_INTS = {"span_index", "start", "end", "severity"}
_FLAGS = set(CSV_COLUMNS[CSV_COLUMNS.index("explanation_verdict") + 1 : CSV_COLUMNS.index("comment")])


def categories(dataset: Dataset, keep: ExportFilter | None = None) -> list[str]:
    """The span categories of the dataset in a fixed order, whatever the filters: factgenie numbers them
    (every campaign of every export of one dataset shares the list), Label Studio lists them."""
    return dataset_categories(dataset)


def _outputs(record: ExportRecord, positions: dict[tuple[str, str], int]) -> list[OutputAnnotation]:
    (output,) = record["outputs"].values()
    return [
        OutputAnnotation(
            item_id=record["item_id"], system=record["system"], output=output, aspect=record["aspect"] or "",
            model=a["model"], source=a["source"], machine=a["kind"] in ("ensemble", "annotator", "supervisor"),
            spans=a["spans"], example_idx=positions.get((record["item_id"], record["system"])),
        )
        for a in record["annotations"]
    ]


def _positions(dataset: Dataset) -> dict[tuple[str, str], int]:
    """Each item's place in the dataset: factgenie's integer example id (stable across exports)."""
    return {(ext, system): pos for ext, system, pos in dataset.items.values_list("external_id", "system", "position")}


def text_chunks(
    dataset: Dataset, fmt: str, keep: ExportFilter, progress: Progress | None = None,
    report: ExportReport | None = None,
) -> Iterator[str]:
    """The export as text chunks (every format but Parquet and factgenie, which `write_export` writes)."""
    report = report if report is not None else ExportReport()
    if fmt == "jsonl":
        yield from export_jsonl(dataset, keep, progress)
    elif fmt == "csv":
        yield from export_csv(dataset, keep, progress)
    elif fmt == "labelstudio":
        yield "["
        number = 0
        for record in dataset_records(dataset, keep, progress):
            outputs = _outputs(record, {})
            if outputs:
                number += 1
                for annotation in outputs:
                    report.count(annotation, placed_only=True)
                task = json.dumps(labelstudio_task(number, outputs, report.labelstudio_users), ensure_ascii=False)
                yield ("\n" if number == 1 else ",\n") + task
        yield "\n]\n"
    elif fmt in EXPORT_FORMATS:
        raise ValueError(f"the {fmt} export is written to a file or folder (give -o)")
    else:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(EXPORT_FORMATS)})")


def write_factgenie(
    dataset: Dataset, keep: ExportFilter, folder: Path, progress: Progress | None = None,
    report: ExportReport | None = None,
) -> list[Path]:
    """A folder of factgenie campaigns, one per source (named DATASET-SOURCE, slugified), all with the
    dataset's one category list; each opens in factgenie as it is (copy it into factgenie/campaigns)."""
    report = report if report is not None else ExportReport()
    names = categories(dataset)
    positions = _positions(dataset)
    created = timezone.localtime().strftime("%Y-%m-%d %H:%M:%S")
    writers: dict[str, FactgenieCampaignWriter] = {}
    try:
        for record in dataset_records(dataset, keep, progress):
            for annotation in _outputs(record, positions):
                writer = writers.get(annotation.source)
                if writer is None:
                    campaign = _unused(campaign_id(dataset, annotation.source), {w.campaign for w in writers.values()})
                    writer = writers[annotation.source] = FactgenieCampaignWriter(
                        folder / campaign, campaign=campaign, dataset=dataset.name, source=annotation.source,
                        categories=names, created=created,
                    )
                report.count(annotation, placed_only=True)
                writer.add(annotation)
    finally:
        for writer in writers.values():
            writer.close()
    folder.mkdir(parents=True, exist_ok=True)
    return [writer.folder for writer in writers.values()]


def _unused(campaign: str, taken: set[str]) -> str:
    """The campaign id, numbered when two source names slugify alike ('llm a', 'llm-a')."""
    number, candidate = 1, campaign
    while candidate in taken:
        number += 1
        candidate = f"{campaign}-{number}"
    return candidate


def _zip(folder: Path, path: Path) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())


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
    dataset: Dataset, fmt: str, keep: ExportFilter, path: Path, progress: Progress | None = None,
    report: ExportReport | None = None,
) -> list[Path]:
    """Write the export to `path` (plus Label Studio's labeling config beside it; for factgenie a folder of
    campaigns, zipped when `path` ends in .zip); return the files written. `report` counts what the format
    could not hold."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(EXPORT_FORMATS)})")
    written = [path]
    if fmt == "parquet":
        _parquet(dataset, keep, path, progress)
        return written
    if fmt == "factgenie":
        if path.suffix != ".zip":
            return write_factgenie(dataset, keep, path, progress, report)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            write_factgenie(dataset, keep, Path(tmp), progress, report)
            _zip(Path(tmp), path)
        return written
    newline = "" if fmt == "csv" else None
    with path.open("w", encoding="utf-8", newline=newline) as handle:
        for chunk in text_chunks(dataset, fmt, keep, progress, report):
            handle.write(chunk)
    if fmt == "labelstudio":
        config = path.with_name(path.stem + ".labels.xml")
        config.write_text(labelstudio_config(categories(dataset, keep)), encoding="utf-8")
        written.append(config)
    return written
