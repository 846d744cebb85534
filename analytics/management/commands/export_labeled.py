"""`manage.py export_labeled --campaign ID --format jsonl|parquet [-o PATH] [--exclude-flagged | --include-flagged]`:
the labeled set and its data card."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.exports.labeled import LABELED_FORMATS, labeled_card, labeled_jsonl, write_labeled
from analytics.management.flagged import add_flagged_arguments
from annotator.selectors.campaigns import campaign_named
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Export a campaign's labeled set: one record per judged output with its final error spans "
            "(stdout by default), and its data card.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign id (or name).")
        parser.add_argument("--format", choices=LABELED_FORMATS, default="jsonl")
        parser.add_argument("-o", "--output", type=Path, default=None, help="File to write (default stdout).")
        parser.add_argument("--card", type=Path, default=None,
                            help="Where to write the data card (default: beside -o as NAME.card.json).")
        add_flagged_arguments(parser, "export")

    def handle(self, *args: object, **options: object) -> None:
        value = str(options["campaign"])
        campaign = campaign_named(value)
        fmt: str = options["format"]  # type: ignore[assignment]
        output: Path | None = options["output"]  # type: ignore[assignment]
        card: Path | None = options["card"]  # type: ignore[assignment]
        choice = options["exclude_flagged"]
        if output is None:
            if fmt == "parquet":
                raise CommandError("Parquet is binary: give a file with -o")
            for line in labeled_jsonl(campaign, exclude_flagged=choice):
                sys.stdout.write(line)
            sys.stdout.flush()
        else:
            write_labeled(campaign, fmt, output, exclude_flagged=choice)
            self.stderr.write(f"Wrote {output}")
            card = card or output.with_name(output.stem + ".card.json")
        if card is not None:
            data = labeled_card(campaign, fmt=fmt, exclude_flagged=choice)
            card.write_text(json.dumps(data, indent=1, ensure_ascii=False), "utf-8")
            self.stderr.write(f"Wrote {card}")
