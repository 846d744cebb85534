"""Export jobs: a thin task around the analytics export service."""

from __future__ import annotations

from celery import shared_task

from analytics.exports.jobs import export_job_run
from corpus.models import ExportJob
from jobs.worker import JobTask


@shared_task(bind=True, base=JobTask, job_model=ExportJob, name=ExportJob.task_name)
def run_export(self, job_id: int) -> str | None:
    """Write export job `job_id`; one a live worker holds is left alone, one a dead worker left is taken over."""
    return self.run_job(job_id, export_job_run)
