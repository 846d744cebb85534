"""`manage.py import_items PATH --dataset NAME --task TASK [--source NAME]` (contract in DESIGN.md)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotator.services.importing import items_import
from corpus.formats import FormatError, named
from evaluation.engine.tasks import TASKS


class Command(BaseCommand):
    help = "Import items (JSON list or JSONL in the OpeNLGauge meta-evaluation format) into a dataset."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--dataset", required=True, help="Dataset name (created if it does not exist).")
        parser.add_argument("--task", required=True,
                            help=f"The task of the dataset: {', '.join(TASKS)}, or a task an admin added "
                                 "(`manage.py list_aspects` says which kind of file fits which task).")
        parser.add_argument("--source", default="gold", help="Source name of the objects' `spans` (default gold).")
        parser.add_argument("--aspect", default="",
                            help="Aspect the `spans` are about (default: none); `manage.py list_aspects --task TASK` "
                                 "lists a task's aspects.")

    def handle(self, *args: object, **options: object) -> None:
        try:
            report = items_import(
                path=options["path"], dataset_name=options["dataset"], task_slug=options["task"],
                source=options["source"], aspect=options["aspect"], file_name=str(options["path"]),
            )
        except FormatError as exc:
            raise CommandError(f"{named(exc, str(options['path']))} - nothing was imported") from None
        self.stdout.write(
            f"Imported into {report.dataset!r}: {report.created_items} new items, {report.reused_items} existing, "
            f"{report.annotations} annotations, {report.spans} spans, {report.judgments} judgments."
        )
