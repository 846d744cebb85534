"""Export jobs: a thin task around the analytics export service."""

from __future__ import annotations

from celery import shared_task

from analytics.exports.jobs import export_job_run


@shared_task(name="tasks.exporting.run_export", acks_late=True)
def run_export(job_id: int) -> str | None:
    """Write export job `job_id`; a job that is gone or already claimed is left alone."""
    return export_job_run(job_id)
