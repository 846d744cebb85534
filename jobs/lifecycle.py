"""The job lifecycle, written once for every kind: enqueue, claim, beat, cancel, resume, finish, recovery.

A running job proves it is alive by its heartbeat; one staleness rule (no beat for RUN_STALE_SECONDS)
decides who may take a job over, which jobs a starting worker re-queues and which an admin may resume,
so the three cannot disagree. Every function takes the job's model class and primary key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import TypeVar

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from jobs.models import RESUMABLE, STARTABLE, Job, JobStatus, stale_after

log = logging.getLogger(__name__)

J = TypeVar("J", bound=Job)

RESUMED = "Resumed; waiting for a worker."
CANCELLED_WHILE_DOWN = "Cancelled; its worker had stopped, so it stopped where that worker left it (work done is kept)."


class JobStopped(Exception):
    """The job must end before its work is done; `status` is how (paused, failed or cancelled), `message` why
    and what to do. Raised from anywhere inside the work, recorded once by job_run."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def stale_running(now: datetime | None = None) -> Q:
    """Running jobs whose last heartbeat is older than RUN_STALE_SECONDS at `now`: their worker stopped."""
    return Q(status=JobStatus.RUNNING, heartbeat_at__lt=(now or timezone.now()) - stale_after())


def job_enqueue(task_name: str, pk: int) -> None:
    """Queue the job's task once the surrounding transaction commits.

    Sent by name: the tasks/ package sits above every layer and only Celery imports it."""
    transaction.on_commit(partial(current_app.send_task, task_name, args=[pk]))


def job_queue(job: Job) -> None:
    """Queue the task its kind declares (`task_name`) once the surrounding transaction commits."""
    job_enqueue(type(job).task_name, job.pk)


def job_requeue(job: Job, *, enqueue: bool = True) -> bool:
    """Resume a job: make a paused, failed or abandoned one pending again and queue it (unless `enqueue` is
    False: a job run inside another one); False when it cannot be resumed."""
    resumed = job_resume(type(job), job.pk)
    if resumed and enqueue:
        job_queue(job)
    return resumed


def job_checkpoint(model: type[J], pk: int, **fields: object) -> None:
    """The one call a job's work makes between batches: the heartbeat (with any progress `fields`) and the
    cancel check, which ends the job as cancelled with its kind's `cancelled_message`."""
    job_beat(model, pk, **fields)
    if job_cancel_requested(model, pk):
        raise JobStopped(JobStatus.CANCELLED, model.cancelled_message)


def job_claim(model: type[J], pk: int, token: str) -> bool:
    """Take job `pk` for the worker `token`: a pending or paused one, or a running one whose worker stopped.

    A job an admin cancelled while its worker was dead ends here as cancelled instead of running again."""
    now = timezone.now()
    model.objects.filter(pk=pk, cancel_requested=True).filter(stale_running(now)).update(
        status=JobStatus.CANCELLED, finished_at=now, heartbeat_at=now, message=CANCELLED_WHILE_DOWN
    )
    return bool(
        model.objects.filter(pk=pk, cancel_requested=False)
        .filter(Q(status__in=STARTABLE) | stale_running(now))
        .update(status=JobStatus.RUNNING, heartbeat_at=now, celery_task_id=token, message="",
                started_at=Coalesce(F("started_at"), now))
    )


def job_beat(model: type[J], pk: int, **fields: object) -> None:
    """Write the heartbeat (and any progress `fields`) of a running job."""
    model.objects.filter(pk=pk).update(heartbeat_at=timezone.now(), **fields)


def job_cancel_requested(model: type[J], pk: int) -> bool:
    return model.objects.filter(pk=pk, cancel_requested=True).exists()


def job_cancel(job: Job) -> bool:
    """Stop a job: a waiting one, or one whose worker died, at once (saying the kind's `cancel_message()`);
    a live one at its next checkpoint."""
    model = type(job)
    job.refresh_from_db(fields=["done", "total"])
    now = timezone.now()
    stopped = model.objects.filter(pk=job.pk).filter(Q(status__in=STARTABLE) | stale_running(now)).update(
        status=JobStatus.CANCELLED, cancel_requested=True, finished_at=now, message=job.cancel_message()
    )
    if stopped:
        return True
    return bool(model.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(cancel_requested=True))


def job_resume(model: type[J], pk: int) -> bool:
    """Make a paused, failed or abandoned job pending again (the caller queues it); a live one is refused."""
    return bool(
        model.objects.filter(pk=pk).filter(Q(status__in=RESUMABLE) | stale_running())
        .update(status=JobStatus.PENDING, message=RESUMED, cancel_requested=False)
    )


def job_finish(model: type[J], pk: int, status: str, message: str = "", **fields: object) -> None:
    """Record how the job ended; a paused job is not finished, it waits to be resumed."""
    now = timezone.now()
    model.objects.filter(pk=pk).update(
        status=status, message=message, heartbeat_at=now,
        finished_at=None if status == JobStatus.PAUSED else now, **fields,
    )


def job_fail_held(model: type[J], pk: int, token: str, message: str) -> bool:
    """Fail job `pk` if the worker `token` still holds it: its task ended without finishing the job."""
    return bool(
        model.objects.filter(pk=pk, status=JobStatus.RUNNING, celery_task_id=token).update(
            status=JobStatus.FAILED, message=message, finished_at=timezone.now()
        )
    )


def jobs_needing_recovery(model: type[J]) -> list[int]:
    """Jobs left running by a worker that stopped beating: claimable now."""
    return list(model.objects.filter(stale_running()).values_list("pk", flat=True))


def jobs_going_stale(model: type[J]) -> list[tuple[int, float]]:
    """Running jobs whose heartbeat is still fresh, with the seconds until it would be stale.

    Their worker may be alive or may have died a moment ago (a supervisor restarts a dead worker within
    seconds); a starting worker looks again once the heartbeat would have expired, and the claim tells
    the two apart then."""
    now = timezone.now()
    fresh = model.objects.filter(status=JobStatus.RUNNING, heartbeat_at__gte=now - stale_after())
    return [(pk, (beat + stale_after() - now).total_seconds()) for pk, beat in fresh.values_list("pk", "heartbeat_at")]


def job_seconds_until_stale(model: type[J], pk: int) -> float | None:
    """Seconds until running job `pk` counts as abandoned; None when it is not running."""
    beat = model.objects.filter(pk=pk, status=JobStatus.RUNNING).values_list("heartbeat_at", flat=True).first()
    if beat is None:
        return None
    return max(0.0, (beat + stale_after() - timezone.now()).total_seconds())


def beat_interval() -> float:
    return max(0.2, settings.RUN_STALE_SECONDS / 3)


@contextmanager
def job_heartbeat(model: type[J], pk: int, every: float | None = None) -> Iterator[None]:
    """Keep job `pk`'s heartbeat fresh from a thread while the block runs, whatever work it does in-process
    (a nested evaluator run, perturbing, a GPTScore batch): a live job is never taken for an abandoned one."""
    stop = threading.Event()
    every = every or beat_interval()

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    with transaction.atomic():
                        if connection.vendor == "postgresql":
                            with connection.cursor() as cursor:  # never queue behind a lock held elsewhere
                                cursor.execute("SET LOCAL lock_timeout = '1s'")
                        job_beat(model, pk)
                except DatabaseError as exc:  # the database is away: the next beat tries again
                    log.warning("%s %s: heartbeat not written (%s)", model.__name__, pk, exc)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"{model.__name__}-{pk}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def job_run(
    model: type[J], pk: int, token: str, work: Callable[[J], None], *, related: tuple[str, ...] = ()
) -> str | None:
    """Claim job `pk` and do `work` on it under a heartbeat; return its final status, or None when another
    worker holds it. `related` names the relations to load with it (`select_related`).

    One way to end a job: `work` returns when it is done, or raises JobStopped (paused, failed, cancelled);
    the status is recorded here, once. An unexpected error fails the job with its message instead of leaving
    it running; a database error propagates, for the task to retry once the database is back."""
    if not job_claim(model, pk, token):
        return None
    job = model.objects.select_related(*related).get(pk=pk)
    with job_heartbeat(model, pk):
        try:
            work(job)
        except JobStopped as stop:
            job_finish(model, pk, stop.status, stop.message)
            return stop.status
        except DatabaseError:
            raise
        except Exception as exc:
            log.exception("%s %s failed", model.__name__, pk)
            job_finish(model, pk, JobStatus.FAILED, f"{type(exc).__name__}: {exc}")
            return JobStatus.FAILED
        job_finish(model, pk, JobStatus.DONE)
        return JobStatus.DONE
