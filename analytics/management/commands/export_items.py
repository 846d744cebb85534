"""`manage.py export_items --dataset NAME --format jsonl|csv|parquet|labelstudio|factgenie [filters] [-o PATH]`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.exports.card import data_card
from analytics.exports.formats import EXPORT_FORMATS, text_chunks, write_export
from annotator.models import Assignment, Campaign
from annotator.services.exporting import ExportFilter
from corpus import cleaning
from corpus.models import Dataset
from corpus.services.annotation_export import ExportReport
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Export a dataset with its annotations and judgments (streams; stdout by default) and its data card."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl")
        parser.add_argument("-o", "--output", type=Path, default=None,
                            help="File to write (default stdout); for factgenie a folder of campaigns, one per "
                                 "source (or NAME.zip of it).")
        parser.add_argument("--card", type=Path, default=None,
                            help="Where to write the data card (default: beside -o as NAME.card.json).")
        parser.add_argument("--campaign", default="", help="Campaign name or id: its items and judgments only.")
        parser.add_argument("--aspect", default="")
        parser.add_argument("--source", default="", help="Only annotations by this source label.")
        parser.add_argument("--annotator", default="", help="Only this annotator's judgments.")
        parser.add_argument("--system", default="")
        parser.add_argument("--status", default="", choices=["", *Assignment.Status.values],
                            help="Only items whose assignment has this status.")

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            names = ", ".join(Dataset.objects.values_list("name", flat=True)[:20]) or "none yet"
            raise CommandError(f"no dataset named {options['dataset']!r} (datasets: {names})")
        keep = ExportFilter(
            campaign_id=self._campaign(dataset, str(options["campaign"])), aspect=options["aspect"],
            source=options["source"], annotator=options["annotator"], system=options["system"],
            status=options["status"],
        )
        if refusal := keep.refusal(dataset):
            raise CommandError(str(refusal))
        fmt: str = options["format"]  # type: ignore[assignment]
        output: Path | None = options["output"]  # type: ignore[assignment]
        card: Path | None = options["card"]  # type: ignore[assignment]
        report = ExportReport()
        if output is None:
            if fmt == "parquet":
                raise CommandError("Parquet is binary: give a file with -o")
            if fmt == "factgenie":
                raise CommandError("a factgenie export is a folder of campaigns: give a folder (or NAME.zip) with -o")
            for chunk in text_chunks(dataset, fmt, keep, report=report):
                sys.stdout.write(chunk)
            sys.stdout.flush()
        else:
            for path in write_export(dataset, fmt, keep, output, report=report):
                self.stderr.write(f"Wrote {path}")
            card = card or output.with_name(output.stem + ".card.json")
        for line in report.lines():
            self.stderr.write(line)
        if card is not None:
            content = data_card(dataset, keep, fmt=fmt, report=report)
            card.write_text(json.dumps(content, indent=1, ensure_ascii=False), "utf-8")
            self.stderr.write(f"Wrote {card}")

    def _campaign(self, dataset: Dataset, value: str) -> int | None:
        if not value:
            return None
        campaigns = Campaign.objects.filter(dataset=dataset)
        pk = cleaning.as_id(value)
        found = campaigns.filter(pk=pk).first() if pk is not None else campaigns.filter(name=value).first()
        if found is None:
            raise CommandError(f"no campaign {value!r} on dataset {dataset.name!r}")
        return found.pk
