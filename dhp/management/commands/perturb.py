"""`manage.py perturb --dataset NAME [--kinds k1,k2,...] [--seed S] [--ollama-url URL --model M]` (docs: guides/dhp)."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from corpus.models import Dataset
from dhp.engine.kinds import DEFAULT_KINDS, KINDS, parse_kinds
from dhp.services.perturbing import perturb_dataset
from errors.commands import BaseCommand
from evaluation.llm.errors import BackendError


class Command(BaseCommand):
    help = "Create the DHP perturbed items of a dataset (idempotent for the same seed and kinds)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--kinds", default="", help=f"Comma-separated kinds (default: {','.join(DEFAULT_KINDS)}); "
                                                        f"all: {', '.join(KINDS)}.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--ollama-url", default="", help="Ollama server for LLM-based kinds (default: OLLAMA_URL).")
        parser.add_argument("--model", default="", help="The model that writes LLM-based perturbations.")

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.select_related("task").filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        try:
            kinds = parse_kinds(str(options["kinds"]))
            reports = perturb_dataset(
                dataset=dataset, kinds=kinds, seed=int(options["seed"]),
                ollama_url=str(options["ollama_url"]) or None, model=str(options["model"]) or None,
            )
        except BackendError as exc:  # the LLM server's failure, told as a command error
            raise CommandError(str(exc)) from None
        for report in reports:
            self.stdout.write(report.line())
            if not report.made and not report.existing:
                self.stdout.write(f"  {report.kind} skipped: it fits none of the dataset's texts")
        total = sum(r.made for r in reports)
        self.stdout.write(f"{total} perturbed item(s) made in {dataset.name} (seed {options['seed']}).")
