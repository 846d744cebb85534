"""`manage.py vigilance --campaign ID [--format json|csv]`: what `GET /api/campaigns/ID/vigilance` answers."""

from __future__ import annotations

import json
import sys

from django.core.management.base import CommandParser

from annotator.selectors.campaigns import campaign_named
from corpus.spreadsheet import sheet_writer
from errors.commands import BaseCommand
from quality.selectors.vigilance import campaign_checks

CSV_COLUMNS = (
    "annotator", "decoys.shown", "decoys.rejected", "decoys.rate", "decoys.ci_low", "decoys.ci_high",
    "planted.shown", "planted.found", "planted.rate", "planted.ci_low", "planted.ci_high", "median_ms_to_verdict",
    "confirm_rate", "fast_confirm_rate", "changed_rate", "active_seconds", "wall_seconds", "qualification.passed",
    "qualification.score", "flagged", "reasons",
)


def _cell(row: dict, column: str) -> object:
    value: object = row
    for part in column.split("."):
        value = None if value is None else value[part]  # type: ignore[index]
    if isinstance(value, list):
        return ";".join(value)
    return "" if value is None else value


class Command(BaseCommand):
    help = "Print each annotator's vigilance, telemetry and flags in a campaign (as the vigilance endpoint)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign id (or name).")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: object, **options: object) -> None:
        value = str(options["campaign"])
        campaign = campaign_named(value)
        rows = [row.as_dict() for row in campaign_checks(campaign)]
        if options["format"] == "json":
            sys.stdout.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
            return
        writer = sheet_writer(sys.stdout)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([_cell(row, c) for c in CSV_COLUMNS])
