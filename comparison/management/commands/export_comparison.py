"""`manage.py export_comparison --job ID --format json|csv [-o PATH]` (stdout by default)."""

from __future__ import annotations

import io
import json
from typing import TextIO

from django.core.management.base import CommandError, CommandParser

from comparison.models import ComparisonJob
from comparison.services.results import csv_rows, export_document
from corpus.spreadsheet import sheet_writer
from errors.commands import BaseCommand
from jobs.models import JobStatus


class Command(BaseCommand):
    help = "Export a comparison job's correlations, checklist and scores as JSON, or its correlations as CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--job", type=int, required=True)
        parser.add_argument("--format", choices=["json", "csv"], required=True)
        parser.add_argument("-o", "--output", default="", help="File to write (default: stdout).")

    def handle(self, *args: object, **options: object) -> None:
        job = ComparisonJob.objects.select_related("dataset").filter(pk=options["job"]).first()
        if job is None:
            raise CommandError(f"no comparison job with id {options['job']}")
        if job.status != JobStatus.DONE:
            raise CommandError(f"comparison {job.pk} is {job.status}, not done: it has no results yet"
                               + (f" ({job.message})" if job.message else ""))
        if not options["output"]:
            buffer = io.StringIO()
            self._write(job, options["format"], buffer)
            self.stdout.write(buffer.getvalue(), ending="")
            return None
        with open(options["output"], "w", newline="", encoding="utf-8") as handle:
            return self._write(job, options["format"], handle)

    def _write(self, job: ComparisonJob, fmt: str, handle: TextIO) -> None:
        if fmt == "json":
            json.dump(export_document(job), handle, ensure_ascii=False)
            handle.write("\n")
        else:
            sheet_writer(handle).writerows(csv_rows(job))
