"""Execute a claimed comparison job: every missing metric score, then the results, with progress and a heartbeat."""

from __future__ import annotations

import logging

from django.db import DatabaseError
from django.db.models import F
from django.utils import timezone

from comparison.engine.metrics import parse_metrics
from comparison.models import ComparisonJob, JobStatus
from comparison.services.jobs import job_claim
from comparison.services.results import job_results
from comparison.services.scoring import Stop, dataset_items, score_metric

log = logging.getLogger(__name__)


class _Tracker:
    """Writes progress and the heartbeat as scores arrive, and notices a cancel request."""

    def __init__(self, job: ComparisonJob) -> None:
        self.job = job

    def progress(self, metric: str, done: int) -> None:
        entry = self.job.progress.setdefault(metric, {"done": 0, "total": done})
        entry["done"] = done
        ComparisonJob.objects.filter(pk=self.job.pk).update(progress=self.job.progress, heartbeat_at=timezone.now())
        if ComparisonJob.objects.filter(pk=self.job.pk, cancel_requested=True).exists():
            raise Stop(JobStatus.CANCELLED, "Cancelled by an admin; the scores computed so far are kept.")

    def count_call(self, n: int) -> None:
        if n:
            ComparisonJob.objects.filter(pk=self.job.pk).update(llm_calls=F("llm_calls") + n)

    def remember_run(self, metric: str, aspect: str, run_id: int) -> None:
        self.job.runs.setdefault(metric, {})[aspect] = run_id
        ComparisonJob.objects.filter(pk=self.job.pk).update(runs=self.job.runs)


def _finish(job: ComparisonJob, status: str, message: str, results: dict | None = None) -> None:
    fields = {"status": status, "message": message, "finished_at": timezone.now(), "heartbeat_at": timezone.now()}
    if results is not None:
        fields["results"] = results
    ComparisonJob.objects.filter(pk=job.pk).update(**fields)


def job_execute(job_id: int, *, token: str = "sync") -> str | None:
    """Claim and run a job; return its final status, or None when another worker holds it."""
    job = job_claim(job_id, token)
    if job is None:
        return None
    tracker = _Tracker(job)
    try:
        items = dataset_items(job.dataset_id)
        for spec in parse_metrics(job.metrics):
            score_metric(job, spec, items, tracker.progress, tracker.count_call, tracker.remember_run)
        results = job_results(job)
    except Stop as stop:
        _finish(job, stop.status, stop.message)
        return stop.status
    except DatabaseError:
        raise  # the task retries once the heartbeat is stale; every stored score stays stored
    except Exception as exc:
        log.exception("comparison job %s failed", job_id)
        _finish(job, JobStatus.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    _finish(job, JobStatus.DONE, "", results)
    return JobStatus.DONE
