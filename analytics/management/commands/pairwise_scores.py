"""`manage.py pairwise_scores (--dataset NAME [--source PREFIX] | --campaign ID) [--weights FILE] [--format json|csv]`
(docs: guides/mqm, "Side-by-side MQM")."""

from __future__ import annotations

import json

from django.core.management.base import CommandError, CommandParser

from analytics.management.commands.mqm_scores import SOURCE, _weights
from analytics.selectors.mqm import RESAMPLES, SEED
from analytics.selectors.pairwise import campaign_pairwise, dataset_pairwise, pairs_csv
from annotator.models import Campaign
from corpus.models import Dataset
from corpus.protocols.mqm import DEFAULT
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = ("Side-by-side MQM figures: Bradley-Terry strengths with intervals and rank ranges, every pair's wins "
            "with a sign test, position bias, marking consistency and the planted-error checks per rater.")

    def add_arguments(self, parser: CommandParser) -> None:
        whose = parser.add_mutually_exclusive_group(required=True)
        whose.add_argument("--dataset", help="The dataset's imported side-by-side ratings (sources PREFIX:*).")
        whose.add_argument("--campaign", type=int, metavar="ID",
                           help="An MQM campaign's side-by-side ratings (a 422-style refusal while campaigns show "
                                "one output at a time).")
        parser.add_argument("--source", default=None, metavar="PREFIX",
                            help=f"With --dataset: the sources labelled PREFIX:* (default {SOURCE}).")
        parser.add_argument("--weights", metavar="FILE",
                            help="A JSON object category -> severity -> weight for the MQM scores the outputs are "
                                 "compared by (default: Major 5, Minor 1, Minor Fluency/Punctuation 0.1, "
                                 "Non-translation 25, Neutral 0).")
        parser.add_argument("--format", default="json", choices=("json", "csv"),
                            help="json: the whole answer; csv: the pairs, one line each.")
        parser.add_argument("--resamples", type=int, default=RESAMPLES,
                            help="Bootstrap resamples of the strengths' intervals (default 1000).")
        parser.add_argument("--seed", type=int, default=SEED, help="Seed of the bootstrap (default 0).")

    def handle(self, *args: object, **options: object) -> None:
        resamples, seed = int(options["resamples"]), int(options["seed"])  # type: ignore[call-overload]
        if options["campaign"] is not None:
            if options["source"] is not None:
                raise CommandError("--source names a dataset's imported raters; with --campaign leave it out")
            campaign = Campaign.objects.filter(pk=options["campaign"]).first()
            if campaign is None:
                raise CommandError(f"--campaign: no campaign with id {options['campaign']}")
            result = campaign_pairwise(campaign, n_resamples=resamples, seed=seed)
        else:
            dataset = Dataset.objects.filter(name=options["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset named {options['dataset']!r}")
            weights = _weights(options["weights"]) or DEFAULT  # type: ignore[arg-type]
            result = dataset_pairwise(dataset, prefix=str(options["source"] or SOURCE), weights=weights,
                                      n_resamples=resamples, seed=seed)
        if options["format"] == "csv":
            self.stdout.write(pairs_csv(result["pairs"]), ending="")
        else:
            self.stdout.write(json.dumps(result, indent=2))
