"""`manage.py decoy_audit --campaign ID [--format json|text]`: what `GET /api/campaigns/ID/decoys/audit` answers."""

from __future__ import annotations

import json

from django.core.management.base import CommandParser

from annotator.selectors.campaigns import campaign_named
from errors.commands import BaseCommand
from quality.campaign_audit import campaign_audit


class Command(BaseCommand):
    help = ("Audit a campaign's decoys: how well a cross-validated classifier tells them from real machine spans "
            "by their cards (ROC AUC, bootstrap interval, the features that give them away).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign id (or name).")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: object, **options: object) -> None:
        audit = campaign_audit(campaign_named(str(options["campaign"])))
        if options["format"] == "json":
            self.stdout.write(json.dumps(audit.as_dict(), indent=1, ensure_ascii=False))
            return
        if audit.auc is None:
            self.stdout.write(f"No audit: it {audit.reason}.")
            return
        interval = "" if audit.ci_low is None else f" (95% interval {audit.ci_low:.3f}-{audit.ci_high:.3f})"
        self.stdout.write(f"{audit.decoys} decoys, {audit.real} real cards: ROC AUC {audit.auc:.3f}{interval}, "
                          f"{audit.level}")
        for name, weight in audit.features:
            self.stdout.write(f"  {weight:+.3f}  {name}")
