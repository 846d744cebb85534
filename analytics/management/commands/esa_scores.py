"""`manage.py esa_scores --campaign ID [--format json|csv] [--resamples N] [--seed S] [--exclude-flagged |
--include-flagged]` (docs: guides/esa)."""

from __future__ import annotations

import json

from django.core.management.base import CommandError, CommandParser

from analytics.management.flagged import add_flagged_arguments
from analytics.selectors.esa import RESAMPLES, SEED, campaign_esa, check_esa_request
from analytics.selectors.systems import scores_csv
from annotator.models import Campaign
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("An ESA campaign's figures: mean score per system with bootstrap intervals and rank ranges, the pairwise "
            "tests, spans by severity, agreement, ESA^AI's pre-filled spans and the two arms (JSON), or the systems "
            "as CSV.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, type=int, help="The campaign's id.")
        parser.add_argument("--format", default="json", choices=("json", "csv"))
        parser.add_argument("--resamples", type=int, default=RESAMPLES, help="Bootstrap resamples (default 1000).")
        parser.add_argument("--seed", type=int, default=SEED, help="Seed of the bootstrap and the tests (default 0).")
        add_flagged_arguments(parser, "figures")

    def handle(self, *args: object, **options: object) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        resamples, seed = int(options["resamples"]), int(options["seed"])  # type: ignore[call-overload]
        check_esa_request(campaign, resamples=resamples, seed=seed)
        result = campaign_esa(campaign, n_resamples=resamples, seed=seed,
                              exclude_flagged=options["exclude_flagged"])  # type: ignore[arg-type]
        if options["format"] == "csv":
            self.stdout.write(scores_csv(result["systems"]), ending="")
            # the CSV holds the systems only; who was left out goes beside it, as the JSON says it in its fields
            self.stderr.write(f"exclude_flagged: {str(result['exclude_flagged']).lower()}; excluded: "
                              f"{', '.join(result['excluded']) or 'nobody'}")
        else:
            self.stdout.write(json.dumps(result, indent=2))
