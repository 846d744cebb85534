"""The DHP benchmark job: perturb, score, test; a thin wrapper around `dhp.services.runs.dhp_execute`."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from dhp.models import DhpRun
from dhp.services.runs import dhp_execute, dhp_runs_needing_recovery
from evaluation.models import RunStatus

log = logging.getLogger(__name__)


@shared_task(bind=True, name="tasks.dhp.run_dhp", acks_late=True, max_retries=50)
def run_dhp(self, run_id: int) -> str | None:
    """Execute DHP run `run_id`; a run held by a live worker is left alone, a stale one is taken over."""
    try:
        if not DhpRun.objects.filter(pk=run_id).exists():
            return None
        status = dhp_execute(run_id, token=self.request.id or "celery")
    except DatabaseError as exc:
        close_old_connections()
        log.warning("DHP run %s: database error (%s); retrying after the heartbeat expires", run_id, exc)
        raise self.retry(exc=exc, countdown=settings.RUN_STALE_SECONDS + 5) from exc
    if status is None and DhpRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
        raise self.retry(countdown=settings.RUN_STALE_SECONDS / 2 + 1)
    return status


@worker_ready.connect
def _recover_orphaned_dhp_runs(**kwargs: object) -> None:
    """A starting worker re-queues DHP runs whose worker stopped beating; stored scores and calls are kept."""
    for run_id in dhp_runs_needing_recovery():
        log.info("re-queueing DHP run %s left running by a stopped worker", run_id)
        run_dhp.delay(run_id)
