"""`manage.py export_dhp --run ID --format json|csv [-o PATH]` (docs: reference/export-formats)."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from dhp.models import DhpRun
from dhp.selectors import export_csv, export_json
from errors.commands import BaseCommand
from jobs.models import JobStatus


class Command(BaseCommand):
    help = "Export a finished DHP run's p-values, discernment scores and mean scores."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--format", choices=["json", "csv"], required=True)
        parser.add_argument("-o", "--output", default="", help="File to write (default: stdout).")

    def handle(self, *args: object, **options: object) -> None:
        run = DhpRun.objects.select_related("dataset", "weights").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"no DHP run with id {options['run']}")
        if run.status != JobStatus.DONE or not run.results:
            raise CommandError(f"DHP run {run.pk} is {run.status}, not done; there are no results to export yet")
        text = export_json(run) if options["format"] == "json" else export_csv(run)
        if options["output"]:
            with open(str(options["output"]), "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        else:
            self.stdout.write(text, ending="")
