"""`manage.py dhp --dataset NAME --evaluator MODEL|ensemble|distilled:MODEL --metrics a,b,... [...]` (docs)."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from corpus.models import Dataset
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, Survey
from dhp.services.runs import dhp_create
from errors.commands import BaseCommand
from jobs.models import JobStatus
from jobs.waiting import add_job_arguments, job_follow


class Command(BaseCommand):
    help = "Run the DHP discernment benchmark (perturb if needed, score, test) as one job; prints the run id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--evaluator", required=True, help="An Ollama model, 'ensemble' or 'distilled:MODEL'.")
        parser.add_argument("--metrics", required=True, help="Comma-separated aspects of the dataset's task.")
        parser.add_argument("--kinds", default="", help="Comma-separated perturbation kinds (default: rule-based).")
        parser.add_argument("--samples", type=int, default=5, help="Scores per text and metric (direct scoring).")
        parser.add_argument("--survey", type=int, default=None, help="Survey id whose expert weights to use.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--ollama-url", default="")
        parser.add_argument("--parallel", type=int, default=0)
        parser.add_argument("--preset", default="", help="Ensemble preset (default: ENSEMBLE_PRESET).")
        add_job_arguments(parser)

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.select_related("task").filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        survey = None
        if options["survey"] is not None:
            survey = Survey.objects.filter(pk=options["survey"]).first()
            if survey is None:
                raise CommandError(f"no survey with id {options['survey']}")
        run = dhp_create(
            dataset=dataset, evaluator=str(options["evaluator"]), metrics=str(options["metrics"]).split(","),
            kinds=parse_kinds(str(options["kinds"])), samples=int(options["samples"]), survey=survey,
            seed=int(options["seed"]), ollama_url=str(options["ollama_url"]) or None,
            parallel=int(options["parallel"]) or None, preset=options.get("preset") or None,
        )
        self.stdout.write(str(run.pk))
        ended = job_follow(run, options, line=_line, write=self.stderr.write,
                           queued=f"Queued; follow it at /dhp/runs/{run.pk}/ or GET /api/dhp/runs/{run.pk}.")
        return None if ended is None else self._report(ended)

    def _report(self, run: DhpRun) -> None:
        for note in run.notes:
            self.stderr.write(note)
        summary = (run.results or {}).get("summary") or {}
        self.stderr.write(
            f"DHP run {run.pk}: {run.status}; {run.done}/{run.total} scores, {run.llm_calls} LLM calls, "
            f"{run.cache_hits} from the cache; D_avg={_fmt(summary.get('D_avg'))} D_min={_fmt(summary.get('D_min'))}"
        )
        problems = (run.config or {}).get("problems") or {}
        for key, count in problems.items():
            if key.startswith("truncation_unchecked:"):
                self.stderr.write(f"{key} ({count} answer(s): the server cuts over-long prompts silently and its "
                                  "counts cannot tell a cut)")
        self.stderr.write(f"prompt_too_long: {problems.get('prompt_too_long', 0)} pair(s); "
                          f"answer_cut: {problems.get('answer_cut', 0)} pair(s)")
        if run.status != JobStatus.DONE:
            raise CommandError(run.message or f"run ended as {run.status}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _line(run: DhpRun) -> str:
    return f"{run.status} {run.stage}: {run.done}/{run.total}"
