"""`manage.py export_items --dataset NAME --format jsonl|csv [-o PATH]` (contract in DESIGN.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotator.services.exporting import export_csv, export_jsonl
from corpus.models import Dataset


class Command(BaseCommand):
    help = "Export a dataset with its annotations and judgments as JSONL or CSV (streams; stdout by default)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("-o", "--output", type=Path, default=None, help="File to write (default stdout).")

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            names = ", ".join(Dataset.objects.values_list("name", flat=True)[:20]) or "none yet"
            raise CommandError(f"no dataset named {options['dataset']!r} (datasets: {names})")
        chunks = export_jsonl(dataset) if options["format"] == "jsonl" else export_csv(dataset)
        output: Path | None = options["output"]
        if output is None:
            for chunk in chunks:
                sys.stdout.write(chunk)
            sys.stdout.flush()
            return
        newline = "" if options["format"] == "csv" else None
        with output.open("w", encoding="utf-8", newline=newline) as handle:
            for chunk in chunks:
                handle.write(chunk)
        self.stderr.write(f"Wrote {output}")
