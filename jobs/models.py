"""The abstract Job model and its one status vocabulary; each kind of job inherits it (no table here)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)
# A job a worker may start: waiting, or stopped by a server that went away.
STARTABLE = (JobStatus.PENDING, JobStatus.PAUSED)
# A job an admin may put back in the queue (a running one only once its worker stopped beating).
RESUMABLE = (JobStatus.PAUSED, JobStatus.FAILED)


def stale_after() -> timedelta:
    """How long a running job may go without a heartbeat before it counts as abandoned."""
    return timedelta(seconds=settings.RUN_STALE_SECONDS)


class Job(models.Model):
    """What every long job records about its own lifecycle; the services in jobs.lifecycle write it."""

    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    message = models.TextField(blank=True, default="", help_text="Why it failed or paused; what to do.")
    cancel_requested = models.BooleanField(default=False)
    celery_task_id = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def is_finished(self) -> bool:
        return self.status in FINISHED

    def is_abandoned(self) -> bool:
        """Running, but its worker stopped beating (the staleness rule of jobs.lifecycle.stale_running)."""
        stale_before = timezone.now() - stale_after()
        return self.status == JobStatus.RUNNING and self.heartbeat_at is not None and self.heartbeat_at < stale_before
