"""Django admin for comparison jobs (read-only records; launching goes through /comparisons/new/)."""

from __future__ import annotations

from django.contrib import admin

from comparison import models
from comparison.services.jobs import job_cancel, job_resume


@admin.register(models.ComparisonJob)
class ComparisonJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "dataset", "status", "llm_calls", "created_by", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("dataset", "metrics", "aspects", "options", "status", "message", "progress", "runs",
                       "results", "llm_calls", "cancel_requested", "celery_task_id", "created_by", "started_at",
                       "finished_at", "heartbeat_at")
    actions = ("cancel_jobs", "resume_jobs")

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Cancel the selected jobs")
    def cancel_jobs(self, request, queryset) -> None:
        done = sum(job_cancel(job=job) for job in queryset)
        self.message_user(request, f"Cancellation requested for {done} job(s).")

    @admin.action(description="Resume the selected jobs (stored scores are kept)")
    def resume_jobs(self, request, queryset) -> None:
        done = sum(job_resume(job=job) for job in queryset)
        self.message_user(request, f"{done} job(s) queued again.")


@admin.register(models.MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ("item", "metric", "aspect", "value", "created_at")
    list_filter = ("metric",)
    raw_id_fields = ("item",)
