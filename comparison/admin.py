"""Django admin for comparison jobs (read-only records; launching goes through /comparisons/new/)."""

from __future__ import annotations

from django.contrib import admin

from comparison import models
from jobs.admin import LIFECYCLE_FIELDS, JobAdmin


@admin.register(models.ComparisonJob)
class ComparisonJobAdmin(JobAdmin):
    list_display = ("pk", "dataset", "status", "llm_calls", "created_by", "created_at", "finished_at")
    readonly_fields = ("dataset", "metrics", "aspects", "options", "progress", "runs", "results", "llm_calls",
                       *LIFECYCLE_FIELDS)

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(models.MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ("item", "metric", "aspect", "value", "created_at")
    list_filter = ("metric",)
    raw_id_fields = ("item",)
