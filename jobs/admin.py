"""The admin of every job kind: cancel and resume actions written once, and the lifecycle columns."""

from __future__ import annotations

from django.contrib import admin

from jobs.lifecycle import job_cancel, job_requeue

LIFECYCLE_FIELDS = ("status", "message", "done", "total", "cancel_requested", "celery_task_id", "created_by",
                    "created_at", "started_at", "finished_at", "heartbeat_at")


class JobAdmin(admin.ModelAdmin):
    """A kind's admin inherits this: the Cancel and Resume actions and the lifecycle columns, read-only."""

    actions = ("cancel_jobs", "resume_jobs")
    list_filter = ("status",)

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset) -> None:
        done = sum(job_cancel(job) for job in queryset)
        self.message_user(request, f"Cancellation requested for {done} job(s).")

    @admin.action(description="Resume the selected paused or failed jobs (work done is kept)")
    def resume_jobs(self, request, queryset) -> None:
        done = sum(job_requeue(job) for job in queryset)
        self.message_user(request, f"{done} job(s) queued again.")


class KindAdmin(JobAdmin):
    """The admin a kind gets when its app writes none (jobs.apps): read-only records, since a job is made by its
    service and changed by its lifecycle only, with Cancel and Resume."""

    list_display = ("pk", "__str__", "status", "done", "total", "created_by", "created_at")

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return [field.name for field in self.model._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
