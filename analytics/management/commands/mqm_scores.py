"""`manage.py mqm_scores --dataset NAME [--source PREFIX] [--weights FILE] [--format json|csv]` (docs: guides/mqm)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.selectors.mqm import RESAMPLES, SEED, dataset_scores
from analytics.selectors.systems import scores_csv
from corpus.models import Dataset
from corpus.protocols.mqm import DEFAULT, ProtocolError, Weights
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Each system's MQM score (lower is better) with a bootstrap interval over segments and its rank range."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--source", default="mqm", metavar="PREFIX",
                            help="Score the ratings of the sources labelled PREFIX:* (default mqm).")
        parser.add_argument("--weights", type=Path, metavar="FILE",
                            help="A JSON object category -> severity -> weight with * wildcards (default: "
                                 "Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25, Neutral 0).")
        parser.add_argument("--format", default="json", choices=("json", "csv"))
        parser.add_argument("--resamples", type=int, default=RESAMPLES, help="Bootstrap resamples (default 1000).")
        parser.add_argument("--seed", type=int, default=SEED, help="Seed of the bootstrap and the tests (default 0).")

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        weights = DEFAULT
        if options["weights"] is not None:
            path = Path(str(options["weights"]))
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ProtocolError(f"--weights {path}: cannot read it ({exc})", field="weights") from None
            weights = Weights.from_json(text, f"--weights {path.name}")
        resamples: int = options["resamples"]  # type: ignore[assignment]
        if not 1 <= resamples <= 100_000:
            raise ProtocolError("--resamples: from 1 to 100000", field="resamples")
        result = dataset_scores(dataset, prefix=str(options["source"]), weights=weights, n_resamples=resamples,
                                seed=int(options["seed"]))  # type: ignore[call-overload]
        if options["format"] == "csv":
            self.stdout.write(scores_csv(result["systems"]), ending="")
        else:
            self.stdout.write(json.dumps(result, indent=2))
