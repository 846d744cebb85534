"""Metric comparison tasks: a thin wrapper around the job's service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from comparison.models import ComparisonJob, JobStatus
from comparison.services.execute import job_execute
from comparison.services.jobs import jobs_needing_recovery

log = logging.getLogger(__name__)


@shared_task(bind=True, name="tasks.comparison.run_comparison", acks_late=True, max_retries=None)
def run_comparison(self, job_id: int) -> str | None:
    """Execute comparison job `job_id`; stored scores are never recomputed, so a retry continues."""
    try:
        if not ComparisonJob.objects.filter(pk=job_id).exists():
            return None
        status = job_execute(job_id, token=self.request.id or "celery")
    except DatabaseError as exc:
        close_old_connections()
        log.warning("comparison %s: database error (%s); retrying after the heartbeat expires", job_id, exc)
        raise self.retry(exc=exc, countdown=settings.RUN_STALE_SECONDS + 5, max_retries=50) from exc
    if status is None and ComparisonJob.objects.filter(pk=job_id, status=JobStatus.RUNNING).exists():
        raise self.retry(countdown=settings.RUN_STALE_SECONDS / 2 + 1)
    return status


@worker_ready.connect
def _recover_orphaned_jobs(**kwargs: object) -> None:
    """A starting worker re-queues comparisons whose worker died; their stored scores are not computed again."""
    for job_id in jobs_needing_recovery():
        log.info("re-queueing comparison %s left running by a stopped worker", job_id)
        run_comparison.delay(job_id)
