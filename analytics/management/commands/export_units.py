"""`manage.py export_units --campaign ID [--format csv|jsonl] [--output FILE]`: a comparing campaign's screens, one
row per output shown, with the screen's choice, positions and timings (docs: guides/pairwise)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.selectors.units import unit_rows, units_csv, units_jsonl
from annotator.models import Campaign
from corpus import protocols
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("A side-by-side campaign's comparison screens: one row per output shown (unit, annotator, input, "
            "screen number, position, system, item), with the screen's choice, preferred system, reason and timings.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", type=int, required=True, metavar="ID")
        parser.add_argument("--format", default="csv", choices=("csv", "jsonl"))
        parser.add_argument("--output", metavar="FILE", help="Write here instead of standard output.")

    def handle(self, *args: object, **options: object) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"--campaign: no campaign with id {options['campaign']}")
        declared = protocols.get(campaign.protocol)
        if not declared.comparing:
            raise CommandError(f"--campaign: {campaign.name!r} runs the {campaign.protocol} protocol, which shows one "
                               "output at a time: it has no comparison screens")
        rows = unit_rows(campaign)
        text = units_csv(rows) if options["format"] == "csv" else units_jsonl(rows)
        if options["output"]:
            Path(str(options["output"])).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
