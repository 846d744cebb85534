"""The one Celery task of every job kind, and the recovery of every kind: when a worker starts, and then by
a sweep every JOB_SWEEP_SECONDS in every worker, so a job whose worker died is taken over without waiting
for a restart."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from celery import Task, current_app, shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from jobs.kinds import JobKind
from jobs.lifecycle import job_fail_held, job_seconds_until_stale, jobs_going_stale, jobs_needing_recovery
from jobs.models import Job, WorkerBeat

log = logging.getLogger(__name__)


class JobTask(Task):
    """A job's task: acks late (a killed worker's job is redelivered), retries database errors once the
    heartbeat has expired, and fails the job once when the task ends for good without finishing it.

    `job_task(kind)` declares one per kind.
    """

    job_model: type[Job]
    job_kind: JobKind
    acks_late = True
    autoretry_for = (DatabaseError,)
    max_retries = 50

    @property
    def default_retry_delay(self) -> float:  # type: ignore[override]
        """After a database error, look again once the job's heartbeat has expired (it can be claimed)."""
        return settings.RUN_STALE_SECONDS + 5

    def run_job(self, pk: int) -> str | None:
        if not self.job_model.objects.filter(pk=pk).exists():
            return None
        try:
            status = self.job_kind.run(pk, token=self.request.id or "celery")
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

    def sweep(self) -> list[int]:
        """Re-queue this kind's stale jobs (no look-ahead at fresh ones: the next sweep sees them); return them."""
        stale = jobs_needing_recovery(self.job_model)
        for pk in stale:
            log.warning("%s %s: its worker stopped beating; re-queued by the sweep", self.job_model.__name__, pk)
            self.delay(pk)
        return stale


def job_task(kind: JobKind) -> JobTask:
    """The Celery task of `kind`, named by its model's `task_name`; a job found gone is skipped, one held by a
    live worker is looked at again once its heartbeat would have expired."""

    def run(self: JobTask, pk: int) -> str | None:
        return self.run_job(pk)

    run.__doc__ = f"Execute {kind.model.__name__} `pk`; work stored by an earlier attempt is not done again."
    return shared_task(bind=True, base=JobTask, job_model=kind.model, job_kind=kind, name=kind.model.task_name)(run)


def _job_tasks() -> list[JobTask]:
    return [task for task in list(current_app.tasks.values())
            if isinstance(task, JobTask) and getattr(task, "job_model", None) is not None]


def recover_all_jobs() -> None:
    """Recovery for every registered job kind."""
    for task in _job_tasks():
        task.recover()


# Housekeeping an app adds to every sweep (the export files' retention), registered with `on_sweep`.
_SWEEP_HOOKS: list[Callable[[], object]] = []


def on_sweep(hook: Callable[[], object]) -> Callable[[], object]:
    """Run `hook` at every sweep, after the stale jobs are re-queued."""
    _SWEEP_HOOKS.append(hook)
    return hook


def sweep_stale_jobs() -> dict[str, list[int]]:
    """One sweep over every job kind: re-queue the jobs whose worker stopped beating (kind -> their ids), then
    run the registered housekeeping."""
    stale = {task.job_model.__name__: task.sweep() for task in _job_tasks()}
    run_sweep_hooks()
    return stale


def run_sweep_hooks() -> None:
    """Run every registered hook; one that fails is logged and skipped, so it stops neither the others nor the
    sweeper's thread (a bucket that is away must not end the recovery of stale jobs)."""
    for hook in _SWEEP_HOOKS:
        try:
            hook()
        except Exception:
            log.exception("sweep hook %s failed; the next sweep runs it again", getattr(hook, "__name__", hook))


def worker_beat(hostname: str, queues: list[str]) -> None:
    """Record that the worker `hostname`, consuming `queues`, is alive now."""
    WorkerBeat.objects.update_or_create(hostname=hostname, defaults={"queues": queues, "beat_at": timezone.now()})


def start_beating(hostname: str, queues: list[str], every: float,
                  stop: threading.Event | None = None) -> threading.Thread:
    """Beat now and then every `every` seconds from a daemon thread, until `stop` is set or the process ends."""
    stop = stop or threading.Event()

    def loop() -> None:
        try:
            while True:
                try:
                    worker_beat(hostname, queues)
                except DatabaseError:  # the database is away: the next beat tries again
                    log.warning("worker beat skipped: database unreachable", exc_info=True)
                finally:
                    close_old_connections()
                if stop.wait(every):
                    return
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=loop, name="worker-beat", daemon=True)
    thread.start()
    return thread


def start_sweeper(every: float, stop: threading.Event | None = None) -> threading.Thread:
    """Sweep every `every` seconds from a daemon thread of this process until `stop` is set."""
    stop = stop or threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            try:
                sweep_stale_jobs()
            except DatabaseError:  # the database is away: the next sweep tries again
                log.warning("job sweep skipped: database unreachable", exc_info=True)
            finally:
                close_old_connections()

    thread = threading.Thread(target=loop, name="job-sweeper", daemon=True)
    thread.start()
    return thread


@worker_ready.connect
def _recover_on_start(sender: object = None, **kwargs: object) -> None:
    hostname = getattr(sender, "hostname", None)
    if hostname:
        queues = sorted(sender.app.amqp.queues.consume_from)  # type: ignore[attr-defined]
        start_beating(hostname, queues, settings.WORKER_BEAT_SECONDS)
    recover_all_jobs()
    run_sweep_hooks()
    if settings.JOB_SWEEP_SECONDS > 0:
        start_sweeper(settings.JOB_SWEEP_SECONDS)
