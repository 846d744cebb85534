"""`manage.py export_campaign --campaign ID --format NAME [-o PATH]`: a campaign in one of the formats its protocol
declares and a module of analytics.protocols registers (docs: reference/commands)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.protocols import CAMPAIGN_FORMATS
from annotator.models import Campaign
from corpus import protocols
from errors.commands import BaseCommand


def campaign_format(campaign: Campaign, name: str, *, reading: bool = False):
    """The registered format `name`, if the campaign's protocol declares it; CommandError otherwise."""
    declared = protocols.get(campaign.protocol).exports
    known = [n for n in declared if n in CAMPAIGN_FORMATS and (not reading or CAMPAIGN_FORMATS[n].read)]
    if name not in known:
        raise CommandError(f"--format: the {campaign.protocol} protocol's campaign formats here are "
                           f"{', '.join(known) or 'none'}, not {name!r}")
    return CAMPAIGN_FORMATS[name]


class Command(BaseCommand):
    help = "Write a campaign's ratings in a campaign-level format its protocol declares (e.g. DA's appraise-csv)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, type=int, help="The campaign's id.")
        parser.add_argument("--format", required=True, help="The format's name (the protocol's exports).")
        parser.add_argument("-o", "--output", type=Path, help="File to write (stdout by default).")

    def handle(self, *args: object, **options: object) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        fmt = campaign_format(campaign, str(options["format"]))
        out: Path | None = options["output"]  # type: ignore[assignment]
        if out is None:
            fmt.write(campaign, self.stdout)
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            n = fmt.write(campaign, handle)
        self.stdout.write(f"Wrote {n} records of campaign {campaign.pk} as {fmt.name} to {out}")
