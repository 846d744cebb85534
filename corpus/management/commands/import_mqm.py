"""`manage.py import_mqm PATH --dataset NAME [--source PREFIX] [--side-by-side]` (docs: guides/mqm)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from corpus.formats import FormatError, named
from corpus.services.mqm_import import DEFAULT_PREFIX, mqm_import
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Import Google's MQM TSV, pointwise or side by side (told by its header): one item per (system, doc, "
            "seg_id), one source PREFIX:RATER per rater, one unit per side-by-side screen.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="The TSV (header system doc doc_id seg_id rater source target "
                                                    "category severity [comment], or system doc docSegId "
                                                    "globalSegId rater source target category severity metadata).")
        parser.add_argument("--dataset", required=True, help="Dataset name (created if it does not exist).")
        parser.add_argument("--source", default=DEFAULT_PREFIX, metavar="PREFIX",
                            help="Label the raters' sources PREFIX:RATER (default mqm).")
        parser.add_argument("--side-by-side", action="store_true",
                            help="Refuse the file unless it is in the side-by-side layout (the header tells it "
                                 "without this flag).")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]  # type: ignore[assignment]
        try:
            report = mqm_import(path=path, dataset_name=str(options["dataset"]), prefix=str(options["source"]),
                                file_name=path.name, side_by_side=bool(options["side_by_side"]) or None)
        except FormatError as exc:
            raise CommandError(f"{named(exc, path.name)} - nothing was imported") from None
        self.stdout.write(report.summary())
