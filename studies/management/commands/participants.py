"""List the participants of a campaign's link, for payment: CSV (default) or JSON, to stdout or a file."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from errors.commands import BaseCommand
from studies.models import StudyLink
from studies.selectors import participant_rows, participants_csv


class Command(BaseCommand):
    help = ("Everyone who joined a campaign by its participant link: handle, platform ids, started, finished, "
            "items done, active time (pay by it) and wall time, flags and the code given (the same rows as GET "
            "/api/campaigns/ID/participants).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="The campaign id.")
        parser.add_argument("--format", choices=["csv", "json"], default="csv")
        parser.add_argument("-o", "--output", default="", help="Write here instead of stdout.")

    def handle(self, *args: object, **options: object) -> None:
        link = StudyLink.objects.select_related("campaign").filter(campaign_id=options["campaign"]).first()
        if link is None:
            raise CommandError(f"campaign {options['campaign']} does not exist or has no participant link")
        rows = participant_rows(link)
        text = "".join(participants_csv(rows)) if options["format"] == "csv" else json.dumps(rows, indent=2) + "\n"
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as out:
                out.write(text)
        else:
            self.stdout.write(text, ending="")
