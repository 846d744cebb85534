"""Execute a claimed comparison job: every missing metric score, then the results, with progress."""

from __future__ import annotations

from django.db.models import F

from comparison.engine.metrics import Family, parse_metrics
from comparison.models import ComparisonJob
from comparison.services.results import job_results
from comparison.services.scoring import dataset_items, score_metric
from evaluation.llm.servers import ServerKind, ServerListError, parse_server
from evaluation.llm.simulated import server_simulated
from evaluation.models import EvaluatorRun
from jobs.lifecycle import job_checkpoint, job_finish, job_run
from jobs.models import JobStatus


class _Tracker:
    """Writes progress as scores arrive, and notices a cancel request."""

    def __init__(self, job: ComparisonJob) -> None:
        self.job = job

    def progress(self, metric: str, done: int) -> None:
        entry = self.job.progress.setdefault(metric, {"done": 0, "total": done})
        entry["done"] = done
        job_checkpoint(ComparisonJob, self.job.pk, progress=self.job.progress)

    def count_call(self, n: int) -> None:
        if n:
            ComparisonJob.objects.filter(pk=self.job.pk).update(llm_calls=F("llm_calls") + n)

    def remember_run(self, metric: str, aspect: str, run_id: int) -> None:
        self.job.runs.setdefault(metric, {})[aspect] = run_id
        ComparisonJob.objects.filter(pk=self.job.pk).update(runs=self.job.runs)


def _answered_by_simulator(job: ComparisonJob) -> bool:
    """Return whether a run this job used, or its GPTScore server, is the simulator."""
    run_ids = [pk for by_aspect in job.runs.values() for pk in by_aspect.values()]
    if EvaluatorRun.objects.filter(pk__in=run_ids, simulated=True).exists():
        return True
    gptscore = any(s.family is Family.GPTSCORE and not s.local for s in parse_metrics(job.metrics))
    if gptscore and job.options.get("gptscore_url"):
        try:
            return server_simulated(parse_server(job.options["gptscore_url"], default=ServerKind.OPENAI))
        except ServerListError:
            return False
    return False


def _execute(job: ComparisonJob) -> str:
    tracker = _Tracker(job)
    items = dataset_items(job.dataset_id)
    for spec in parse_metrics(job.metrics):
        score_metric(job, spec, items, tracker.progress, tracker.count_call, tracker.remember_run)
    results = job_results(job)
    simulated = job.simulated or _answered_by_simulator(job)
    job_finish(ComparisonJob, job.pk, JobStatus.DONE, "", results=results, simulated=simulated)
    return JobStatus.DONE


def comparison_execute(job_id: int, *, token: str = "sync") -> str | None:
    """Claim and run a job; return its final status, or None when another worker holds it."""
    return job_run(ComparisonJob, job_id, token, _execute, related=("dataset__task",))
