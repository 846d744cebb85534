"""`manage.py priming --campaign ID [--format json|csv]`: the control arm's priming figures per evaluator."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import CommandParser

from analytics.selectors.priming import priming_dicts, priming_report, simulated_labels
from annotator.selectors.campaigns import campaign_named
from corpus.spreadsheet import SheetDictWriter
from errors.commands import BaseCommand
from stats.priming import SHARES


def flat_row(row: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: each share's value, interval and n; errors per output; seconds per span; the machine spans
    without a location that accepted_unfound leaves out."""
    out: dict[str, Any] = {"evaluator": row["evaluator"], "simulated": row["simulated"]}
    for name in SHARES:
        for key in ("value", "ci_low", "ci_high", "n"):
            out[f"{name}_{key}"] = row[name][key]
    for key, value in row["errors_per_output"].items():
        out[f"errors_per_output_{key}"] = value
    for key, value in row["seconds_per_span"].items():
        out[f"seconds_per_span_{key}"] = value
    out["unlocated"] = row["unlocated"]
    return out


class Command(BaseCommand):
    help = ("Print the priming figures of a campaign's control arm per evaluator (the same list as "
            "GET /api/analytics/campaigns/ID/priming), as JSON or CSV.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign id (or name).")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: object, **options: object) -> None:
        value = str(options["campaign"])
        campaign = campaign_named(value)
        rows = priming_dicts(priming_report(campaign), simulated_labels(campaign))
        if options["format"] == "json":
            sys.stdout.write(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
            return
        flat = [flat_row(r) for r in rows]
        if not flat:
            self.stderr.write(f"campaign {campaign.name!r} has no control arm: nothing to report")
            return
        writer = SheetDictWriter(sys.stdout, fieldnames=list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)
