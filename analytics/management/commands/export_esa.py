"""`manage.py export_esa --campaign ID [-o PATH]`: an ESA campaign's ratings as Pearmut's annotation log
(docs: guides/esa)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.selectors.esa import campaign_pearmut_ratings, check_esa_request
from annotator.models import Campaign
from corpus.interop.pearmut import pearmut_lines
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Write an ESA campaign's finished ratings (scores, error spans, ESA^AI's pre-filled spans) as Pearmut's "
            "annotation log: one JSON line per (user, item).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, type=int, help="The campaign's id.")
        parser.add_argument("-o", "--output", type=Path, help="File to write (stdout by default).")

    def handle(self, *args: object, **options: object) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        check_esa_request(campaign, resamples=1, seed=0)
        ratings = campaign_pearmut_ratings(campaign)
        out: Path | None = options["output"]  # type: ignore[assignment]
        if out is None:
            for line in pearmut_lines(ratings):
                self.stdout.write(line, ending="")
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(pearmut_lines(ratings))
        self.stdout.write(f"Wrote {len(ratings)} ESA ratings of campaign {campaign.pk} to {out}")
