"""`manage.py import_annotations PATH --dataset NAME --source NAME [--format ...] [--skip-bad-spans]`."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from corpus.formats import FormatError, named
from corpus.interop import ANNOTATION_FILE_FORMATS
from corpus.services.annotation_import import annotations_import, annotator_map
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Import another tool's span annotations of existing items as a named external source."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="The file (or a factgenie campaign folder).")
        parser.add_argument("--dataset", required=True, help="The dataset whose items are annotated.")
        parser.add_argument("--source", required=True, help="Name of the new annotation source.")
        parser.add_argument("--format", default="jsonl", choices=ANNOTATION_FILE_FORMATS)
        parser.add_argument(
            "--split", default="",
            help="factgenie: only the lines of this split (lines of other datasets are always left aside).",
        )
        parser.add_argument(
            "--map-annotator", action="append", default=[], metavar="LSID=NAME",
            help="labelstudio: the annotator a Label Studio user id stands for (repeat for each user; "
                 "ID= for an annotation by nobody named).",
        )
        parser.add_argument(
            "--skip-bad-spans", action="store_true",
            help="Import the good spans of a file with empty or impossible ones, reporting each one skipped.",
        )

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]  # type: ignore[assignment]
        annotators = annotator_map(str(pair) for pair in options["map_annotator"])  # type: ignore[union-attr]
        try:
            report = annotations_import(
                path=path, dataset_name=options["dataset"], source=options["source"], fmt=options["format"],
                skip_bad_spans=options["skip_bad_spans"], file_name=path.name, split=options["split"],
                annotators=annotators,
            )
        except FormatError as exc:
            raise CommandError(f"{named(exc, path.name)} - nothing was imported") from None
        self.stdout.write(report.summary())
