"""`manage.py import_campaign PATH --campaign ID --format NAME [--create-annotators]`: ratings in a campaign-level
format its protocol declares, stored as the campaign's own (docs: reference/commands)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.management.commands.export_campaign import campaign_format
from annotator.models import Campaign
from errors import UserError
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Read ratings into a campaign from a campaign-level format its protocol declares (e.g. DA's appraise-csv)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="The file to read.")
        parser.add_argument("--campaign", required=True, type=int, help="The campaign's id.")
        parser.add_argument("--format", required=True, help="The format's name (the protocol's exports).")
        parser.add_argument("--create-annotators", action="store_true",
                            help="Create an account (without a password) for each annotator the file names and "
                                 "the site does not know; without it such a file is refused.")

    def handle(self, *args: object, **options: object) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        fmt = campaign_format(campaign, str(options["format"]), reading=True)
        path: Path = options["path"]  # type: ignore[assignment]
        if fmt.read is None:  # campaign_format(reading=True) gave one that reads
            raise CommandError(f"--format: {fmt.name} is written, not read")
        try:
            with path.open(encoding="utf-8", newline="") as handle:
                counts = fmt.read(campaign, handle, create_annotators=bool(options["create_annotators"]))
        except UserError as exc:
            raise CommandError(f"{path.name}: {exc} - nothing was imported") from None
        self.stdout.write(f"Imported into campaign {campaign.pk}: "
                          + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
