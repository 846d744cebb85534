"""`manage.py export_annotations --dataset NAME --source NAME --format jsonl|factgenie|labelstudio [-o PATH]`."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.annotation_files import FORMATS
from corpus.models import Dataset
from corpus.services.annotation_export import (
    categories_of,
    export_annotation_lines,
    factgenie_metadata,
    labelstudio_config,
    source_annotations,
    source_for_export,
)


class Command(BaseCommand):
    help = "Export one source's annotations as our JSONL, a factgenie campaign or Label Studio tasks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--source", required=True)
        parser.add_argument("--format", default="jsonl", choices=FORMATS)
        parser.add_argument(
            "-o", "--output", type=Path,
            help="File to write (stdout by default); for factgenie a campaign folder, for labelstudio also "
            "writes the labeling config beside it (NAME.xml).",
        )

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        source = source_for_export(options["source"])
        if source is None:
            raise CommandError(f"no source named {options['source']!r}")
        annotations = source_annotations(dataset, source)
        fmt: str = options["format"]  # type: ignore[assignment]
        out: Path | None = options["output"]  # type: ignore[assignment]
        lines = export_annotation_lines(annotations, fmt, dataset=dataset.name)
        if out is None:
            for line in lines:
                self.stdout.write(line, ending="")
            return
        if fmt == "factgenie":
            (out / "files").mkdir(parents=True, exist_ok=True)
            meta = factgenie_metadata(source.label, categories_of(annotations))
            (out / "metadata.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")
            out = out / "files" / "annotations.jsonl"
        elif fmt == "labelstudio":
            out.with_suffix(".xml").write_text(labelstudio_config(categories_of(annotations)), encoding="utf-8")
        with out.open("w", encoding="utf-8") as handle:
            handle.writelines(lines)
        self.stdout.write(f"Wrote {out}")
