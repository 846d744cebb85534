"""`manage.py import_pearmut PATH --dataset NAME [--source PREFIX]` (docs: guides/esa)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from corpus.formats import FormatError, named
from corpus.services.pearmut_import import DEFAULT_PREFIX, pearmut_import
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Import ESA ratings from Pearmut's annotation log (JSONL): one item per (segment, system), one source "
            "PREFIX:USER per user, each rating's 0-100 score and error spans.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="Pearmut's annotation log (data/outputs/CAMPAIGN.jsonl).")
        parser.add_argument("--dataset", required=True, help="Dataset name (created if it does not exist).")
        parser.add_argument("--source", default=DEFAULT_PREFIX, metavar="PREFIX",
                            help="Label the users' sources PREFIX:USER (default pearmut).")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]  # type: ignore[assignment]
        try:
            report = pearmut_import(path=path, dataset_name=str(options["dataset"]), prefix=str(options["source"]),
                                    file_name=path.name)
        except FormatError as exc:
            raise CommandError(f"{named(exc, path.name)} - nothing was imported") from None
        self.stdout.write(report.summary())
