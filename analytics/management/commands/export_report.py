"""`manage.py export_report --campaign ID --format latex|markdown|html [-o DIR] [--exclude-flagged |
--include-flagged]`: the campaign's study report."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.management.flagged import add_flagged_arguments
from analytics.report.build import MAIN_FILE, REPORT_FORMATS, report_files, report_write
from annotator.selectors.campaigns import campaign_named
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Write a campaign's study report: the overview, Table 4 with intervals, explanation verdicts, "
            "agreement and the evaluators ranked with significance, one file per table plus a main file, "
            "and the figures as PDF and SVG.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign id (or name).")
        parser.add_argument("--format", required=True, help=f"One of {', '.join(REPORT_FORMATS)}.")
        parser.add_argument("-o", "--output", type=Path, default=None,
                            help="Folder to write (default: ./campaign-ID-report-FORMAT).")
        add_flagged_arguments(parser, "report")

    def handle(self, *args: object, **options: object) -> None:
        fmt = str(options["format"])
        if fmt not in REPORT_FORMATS:
            raise CommandError(f"--format: {fmt!r} is not a report format; give one of {', '.join(REPORT_FORMATS)}",
                               returncode=2)
        value = str(options["campaign"])
        campaign = campaign_named(value)
        folder: Path = options["output"] or Path(f"campaign-{campaign.pk}-report-{fmt}")  # type: ignore[assignment]
        if folder.exists() and not folder.is_dir():
            raise CommandError(f"-o: {folder} exists and is not a folder", returncode=2)
        # everything is computed before anything is written
        files = report_files(campaign, fmt, exclude_flagged=options["exclude_flagged"])  # type: ignore[arg-type]
        written = report_write(files, folder)
        self.stdout.write(f"Wrote {len(written)} files to {folder}; main file: {folder / MAIN_FILE[fmt]}")
