"""`manage.py compare_sources --dataset NAME --reference SOURCE [--sources a,b] [--categories] [--format json|csv]`."""

from __future__ import annotations

import json

from django.core.management.base import CommandError, CommandParser

from analytics.compare.sources import comparison_csv, sources_compare
from corpus.models import Dataset
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Compare annotation sources (runs, imported files, gold, campaign humans) with a reference source."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--reference", required=True, help="e.g. gold:gold, external:NAME, run:LABEL, human:ID.")
        parser.add_argument("--sources", default="", help="Comma-separated sources (default: all others).")
        parser.add_argument("--categories", action="store_true", help="Match spans only within a category.")
        parser.add_argument("--format", default="json", choices=("json", "csv"))
        parser.add_argument("--aspect", default="", help="Only annotations of this aspect (and aspect-less ones).")
        parser.add_argument("--no-gamma", action="store_true", help="Skip gamma (pygamma-agreement is slow).")

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        names = [n.strip() for n in str(options["sources"]).split(",") if n.strip()]
        rows = sources_compare(
            dataset, reference=options["reference"], sources=names, by_category=options["categories"],
            gamma=not options["no_gamma"], aspect=options["aspect"],
        )
        if options["format"] == "csv":
            self.stdout.write(comparison_csv(rows), ending="")
        else:
            self.stdout.write(json.dumps(rows, indent=1, ensure_ascii=False))
