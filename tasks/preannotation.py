"""Pre-annotation tasks (the OpeNLGauge ensemble job) and the recovery of jobs whose worker died."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from evaluation.models import EvaluatorRun, RunStatus
from evaluation.runs.execute import run_execute
from evaluation.runs.recovery import runs_going_stale, runs_needing_recovery

log = logging.getLogger(__name__)


@shared_task(bind=True, name="tasks.preannotation.run_preannotation", acks_late=True, max_retries=None)
def run_preannotation(self, run_id: int) -> str | None:
    """Execute run `run_id`; a run another live worker holds is left alone, a stale one is taken over."""
    try:
        if not EvaluatorRun.objects.filter(pk=run_id).exists():
            return None
        status = run_execute(run_id, token=self.request.id or "celery")
    except DatabaseError as exc:
        # The database went away (restart, failover). Every answer already stored stays stored; once the
        # run's heartbeat is stale, the retry claims it again and continues from the cache.
        close_old_connections()
        log.warning("run %s: database error (%s); retrying after the heartbeat expires", run_id, exc)
        raise self.retry(exc=exc, countdown=settings.RUN_STALE_SECONDS + 5, max_retries=50) from exc
    if status is None and EvaluatorRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
        # Its heartbeat is still fresh: either a live worker has it, or a dead one's beat has not
        # expired yet. Look again once it would have.
        raise self.retry(countdown=settings.RUN_STALE_SECONDS / 2 + 1)
    return status


@worker_ready.connect
def _recover_orphaned_runs(**kwargs: object) -> None:
    """A worker that starts re-queues runs left 'running' by a stopped worker, so a killed job resumes.

    Runs whose heartbeat is still fresh may belong to a live worker or to one killed a moment ago (a
    restarted worker is often up within seconds): they are looked at again once the heartbeat would
    have expired, and the claim takes over only those whose worker has really stopped.
    """
    for run_id in runs_needing_recovery():
        log.info("re-queueing run %s left running by a stopped worker", run_id)
        run_preannotation.delay(run_id)
    for run_id, seconds in runs_going_stale():
        run_preannotation.apply_async((run_id,), countdown=seconds + 1)
