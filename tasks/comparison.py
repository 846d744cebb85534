"""Metric comparison tasks: a thin wrapper around the job's service."""

from __future__ import annotations

from celery import shared_task

from comparison.models import ComparisonJob
from comparison.services.execute import comparison_execute
from jobs.worker import JobTask


@shared_task(bind=True, base=JobTask, job_model=ComparisonJob, name=ComparisonJob.task_name)
def run_comparison(self, job_id: int) -> str | None:
    """Execute comparison job `job_id`; stored scores are never recomputed, so a retry continues."""
    return self.run_job(job_id, comparison_execute)
