"""The admin of every job kind: cancel and resume actions written once, and the lifecycle columns."""

from __future__ import annotations

from django.contrib import admin

from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import Job

LIFECYCLE_FIELDS = ("status", "message", "cancel_requested", "celery_task_id", "started_at", "finished_at",
                    "heartbeat_at")


class JobAdmin(admin.ModelAdmin):
    """A kind's admin inherits this; `cancel_job`/`resume_job` are its services when it has its own (a run's
    cancel message counts its calls), else the lifecycle's."""

    actions = ("cancel_jobs", "resume_jobs")
    list_filter = ("status",)

    def cancel_job(self, job: Job) -> bool:
        return job_cancel(type(job), job.pk)

    def resume_job(self, job: Job) -> bool:
        return job_requeue(job)

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset) -> None:
        done = sum(self.cancel_job(job) for job in queryset)
        self.message_user(request, f"Cancellation requested for {done} job(s).")

    @admin.action(description="Resume the selected paused or failed jobs (work done is kept)")
    def resume_jobs(self, request, queryset) -> None:
        done = sum(self.resume_job(job) for job in queryset)
        self.message_user(request, f"{done} job(s) queued again.")
