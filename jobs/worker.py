"""The one Celery base task of every job kind, and the recovery of every kind when a worker starts."""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery import Task, current_app
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from jobs.lifecycle import job_fail_held, job_seconds_until_stale, jobs_going_stale, jobs_needing_recovery
from jobs.models import Job

log = logging.getLogger(__name__)


class JobTask(Task):
    """A job's task: acks late (a killed worker's job is redelivered), retries database errors once the
    heartbeat has expired, and fails the job once when the task ends for good without finishing it.

    Declare it with `@shared_task(bind=True, base=JobTask, job_model=Model, name=...)` and call
    `self.run_job(pk, execute)` from the body, `execute(pk, token=...)` returning the final status or None.
    """

    job_model: type[Job]
    acks_late = True
    autoretry_for = (DatabaseError,)
    max_retries = 50

    @property
    def default_retry_delay(self) -> float:  # type: ignore[override]
        """After a database error, look again once the job's heartbeat has expired (it can be claimed)."""
        return settings.RUN_STALE_SECONDS + 5

    def run_job(self, pk: int, execute: Callable[..., str | None]) -> str | None:
        if not self.job_model.objects.filter(pk=pk).exists():
            return None
        try:
            status = execute(pk, token=self.request.id or "celery")
        except DatabaseError:
            close_old_connections()  # the retry opens a fresh connection
            raise
        if status is None:
            # Another worker holds it with a fresh heartbeat: alive, or killed a moment ago. Look again once
            # the heartbeat would have expired; the claim tells the two apart then.
            wait = job_seconds_until_stale(self.job_model, pk)
            if wait is not None:
                raise self.retry(countdown=wait + 1)
        return status

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:  # noqa: ANN001 - Celery's signature
        pk = args[0] if args else kwargs.get("pk")
        try:
            if job_fail_held(self.job_model, pk, task_id, f"The worker gave up: {type(exc).__name__}: {exc}"):
                log.error("%s %s failed for good: %s", self.job_model.__name__, pk, exc)
        except DatabaseError:
            log.exception("%s %s: could not record the failure", self.job_model.__name__, pk)

    def recover(self) -> None:
        """Re-queue this kind's jobs left running by a stopped worker; look again at fresh ones when they
        would go stale (a worker restarted within seconds finds its predecessor's beat still fresh)."""
        for pk in jobs_needing_recovery(self.job_model):
            log.info("re-queueing %s %s left running by a stopped worker", self.job_model.__name__, pk)
            self.delay(pk)
        for pk, seconds in jobs_going_stale(self.job_model):
            self.apply_async((pk,), countdown=seconds + 1)


def recover_all_jobs() -> None:
    """Recovery for every registered job kind."""
    for task in list(current_app.tasks.values()):
        if isinstance(task, JobTask) and getattr(task, "job_model", None) is not None:
            task.recover()


@worker_ready.connect
def _recover_on_start(**kwargs: object) -> None:
    recover_all_jobs()
