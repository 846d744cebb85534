"""The abstract Job model and its one status vocabulary (each kind of job inherits it), and the workers' beats."""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar

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
    """What every long job records about its own lifecycle; the services in jobs.lifecycle write it.

    A kind declares, as class attributes: `task_name`, the Celery task that executes it (the task takes its
    `name=` from here, so it is written once; left out, jobs.kinds.register sets the kind's model label);
    `cancelled_message`, what a job cancelled mid-work says; `waiting_cancelled_message`, what one cancelled
    before it could reach a checkpoint says; and
    `kept_message`, what a job paused by an LLM error says is kept and when to resume. Its progress is
    `done` of `total` units, whatever unit the kind counts (calls, steps, records). Its `execute(job)` is
    declared beside it in its app's jobs.py (see jobs.kinds)."""

    task_name: ClassVar[str] = ""
    cancelled_message: ClassVar[str] = "Cancelled by an admin; the work done so far is kept."
    waiting_cancelled_message: ClassVar[str] = "Cancelled before it ran."
    kept_message: ClassVar[str] = "The work done so far is kept; resume the job afterwards."

    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    message = models.TextField(blank=True, default="", help_text="Why it failed or paused; what to do.")
    cancel_requested = models.BooleanField(default=False)
    celery_task_id = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0, help_text="Units of work done so far (the kind says which).")
    total = models.PositiveIntegerField(default=0, help_text="Units of work in the whole job.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def is_finished(self) -> bool:
        return self.status in FINISHED

    def can_cancel(self) -> bool:
        """Whether `job_cancel` would stop it: anything not finished (a running job stops at its next checkpoint)."""
        return not self.is_finished()

    def can_resume(self) -> bool:
        """Whether `job_resume` would queue it again: paused, failed, or running with a dead worker."""
        return self.status in RESUMABLE or self.is_abandoned()

    def done_total(self) -> tuple[int, int]:
        return int(self.done or 0), int(self.total or 0)

    def percent(self) -> int:
        """How much of the work is done, 0 to 100 (a job with nothing to count shows 100 once done)."""
        done, total = self.done_total()
        if total <= 0:
            return 100 if self.status == JobStatus.DONE else 0
        return max(0, min(100, round(100 * done / total)))

    def cancel_message(self) -> str:
        """What a job cancelled before its next checkpoint says (a kind may count what it kept)."""
        return self.waiting_cancelled_message

    def is_abandoned(self) -> bool:
        """Running, but its worker stopped beating (the staleness rule of jobs.lifecycle.stale_running)."""
        stale_before = timezone.now() - stale_after()
        return self.status == JobStatus.RUNNING and self.heartbeat_at is not None and self.heartbeat_at < stale_before


class WorkerBeat(models.Model):
    """The last sign of life of one Celery worker, so a web host can tell that no worker listens to its queue."""

    hostname = models.CharField(max_length=255, unique=True, help_text="The worker's node name (name@host).")
    queues = models.JSONField(default=list, help_text="The queues it consumes.")
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.hostname} at {self.beat_at:%Y-%m-%d %H:%M:%S}"
