"""`manage.py mqm_scores (--dataset NAME [--source PREFIX] | --campaign ID [--exclude-flagged | --include-flagged])
[--weights FILE] [--format json|csv]` (docs: guides/mqm)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.management.flagged import add_flagged_arguments
from analytics.selectors.mqm import RESAMPLES, SEED, campaign_scores, check_mqm_request, dataset_scores
from analytics.selectors.systems import scores_csv
from annotator.models import Campaign
from corpus.models import Dataset
from corpus.protocols.errors import ProtocolError
from corpus.protocols.mqm import DEFAULT, Weights
from errors.commands import BaseCommand

SOURCE = "mqm"


class Command(BaseCommand):
    help = ("Each system's MQM score (lower is better) with a bootstrap interval over segments and its rank range: "
            "of a dataset's imported raters, or of an MQM campaign's finished work.")

    def add_arguments(self, parser: CommandParser) -> None:
        whose = parser.add_mutually_exclusive_group(required=True)
        whose.add_argument("--dataset", help="Score the dataset's imported ratings (the sources --source PREFIX:*).")
        whose.add_argument("--campaign", type=int, metavar="ID",
                           help="Score an MQM campaign's finished ratings (training and known-answer items left "
                                "out), with the campaign's own weights unless --weights is given.")
        parser.add_argument("--source", default=None, metavar="PREFIX",
                            help=f"With --dataset: score the ratings of the sources labelled PREFIX:* (default "
                                 f"{SOURCE}).")
        parser.add_argument("--weights", type=Path, metavar="FILE",
                            help="A JSON object category -> severity -> weight with * wildcards (default: "
                                 "Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25, Neutral 0; "
                                 "with --campaign the campaign's weights).")
        parser.add_argument("--format", default="json", choices=("json", "csv"))
        parser.add_argument("--resamples", type=int, default=RESAMPLES, help="Bootstrap resamples (default 1000).")
        parser.add_argument("--seed", type=int, default=SEED, help="Seed of the bootstrap and the tests (default 0).")
        add_flagged_arguments(parser, "scores (with --campaign)")

    def handle(self, *args: object, **options: object) -> None:
        weights = _weights(options["weights"])  # type: ignore[arg-type]
        resamples, seed = int(options["resamples"]), int(options["seed"])  # type: ignore[call-overload]
        if options["campaign"] is not None:
            if options["source"] is not None:
                raise CommandError("--source names a dataset's imported raters; with --campaign leave it out")
            campaign = Campaign.objects.filter(pk=options["campaign"]).first()
            if campaign is None:
                raise CommandError(f"--campaign: no campaign with id {options['campaign']}")
            check_mqm_request(campaign, resamples=resamples, seed=seed)
            result = campaign_scores(campaign, weights=weights, n_resamples=resamples, seed=seed,
                                     exclude_flagged=options["exclude_flagged"])  # type: ignore[arg-type]
        else:
            if options["exclude_flagged"] is not None:
                raise CommandError("--exclude-flagged and --include-flagged apply only with --campaign")
            dataset = Dataset.objects.filter(name=options["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset named {options['dataset']!r}")
            if not 1 <= resamples <= 100_000:
                raise ProtocolError("--resamples: from 1 to 100000", field="resamples")
            result = dataset_scores(dataset, prefix=str(options["source"] or SOURCE), weights=weights or DEFAULT,
                                    n_resamples=resamples, seed=seed)
        if options["format"] == "csv":
            self.stdout.write(scores_csv(result["systems"]), ending="")
            if "excluded" in result:  # who was left out goes beside the CSV, as the JSON says it in its fields
                self.stderr.write(f"exclude_flagged: {str(result['exclude_flagged']).lower()}; excluded: "
                                  f"{', '.join(result['excluded']) or 'nobody'}")
        else:
            self.stdout.write(json.dumps(result, indent=2))


def _weights(path: Path | None) -> Weights | None:
    """The weights a --weights file gives; None when none is named (each scope has its default)."""
    if path is None:
        return None
    try:
        text = Path(str(path)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"--weights {path}: cannot read it ({exc})", field="weights") from None
    return Weights.from_json(text, f"--weights {Path(str(path)).name}")
