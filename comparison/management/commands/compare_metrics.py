"""`manage.py compare_metrics --dataset NAME --metrics m1,m2 [--aspects a,b] [--ollama-url URL] [--precision P]
[--wait|--sync]`."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from comparison.engine.hf_plan import PRECISIONS
from comparison.engine.metrics import metric_names_help
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from corpus.models import Dataset
from errors.commands import BaseCommand
from jobs.models import JobStatus
from jobs.waiting import add_job_arguments, job_follow


class Command(BaseCommand):
    help = "Compare metrics with a dataset's human scores (correlations, checklist); prints the job id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--metrics", required=True, help=f"Comma-separated: {metric_names_help()}.")
        parser.add_argument("--aspects", default="", help="Comma-separated human-score aspects (default: all).")
        parser.add_argument("--ollama-url", default="", help="Ollama server for LLM evaluators (default: OLLAMA_URL).")
        parser.add_argument("--gptscore-url", default="",
                            help="OpenAI-compatible server with echo+logprobs for gptscore:MODEL (default: "
                                 "GPTSCORE_URL); Ollama cannot return log-probabilities of a given text.")
        parser.add_argument("--precision", default="", choices=["", *PRECISIONS],
                            help="What gptscore-hf:MODEL computes in (default: GPTSCORE_HF_PRECISION).")
        add_job_arguments(parser)

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        aspects = [a.strip() for a in str(options["aspects"]).split(",") if a.strip()] or None
        job = comparison_create(dataset=dataset, metrics=str(options["metrics"]), aspects=aspects,
                                ollama_url=options["ollama_url"] or None, gptscore_url=options["gptscore_url"] or None,
                                precision=str(options["precision"]) or None)
        self.stdout.write(str(job.pk))  # the first line is the job id alone, for scripts
        ended = job_follow(job, options, line=_line,
                           write=self.stderr.write,
                           queued=f"Queued; follow it on /comparisons/{job.pk}/ or GET /api/comparisons/{job.pk}.")
        return None if ended is None else self._report(ended)

    def _report(self, job: ComparisonJob) -> None:
        done = sum(p["done"] for p in job.progress.values())
        self.stderr.write(f"comparison {job.pk}: {job.status}; {done} scores, {job.llm_calls} LLM call(s).")
        if job.status != JobStatus.DONE:
            raise CommandError(job.message or f"comparison {job.pk} ended {job.status}")


def _line(job: ComparisonJob) -> str:
    done = sum(p["done"] for p in job.progress.values())
    total = sum(p["total"] for p in job.progress.values())
    return f"{job.status}: {done}/{total} scores"
