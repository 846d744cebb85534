"""`manage.py import_pearmut_task PATH --dataset NAME` (docs: guides/pairwise)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from corpus.formats import FormatError, named
from corpus.services.pearmut_task_import import pearmut_task_import
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Import the outputs of a Pearmut task file (campaign JSON, e.g. its contrastive cESA example) as a "
            "dataset: one item per (segment, system), the segment's src as its Source input.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="Pearmut's task file (the campaign JSON it is started with).")
        parser.add_argument("--dataset", required=True, help="Dataset name (created if it does not exist).")

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]  # type: ignore[assignment]
        try:
            report = pearmut_task_import(path=path, dataset_name=str(options["dataset"]), file_name=path.name)
        except FormatError as exc:
            raise CommandError(f"{named(exc, path.name)} - nothing was imported") from None
        self.stdout.write(report.summary())
