"""Admin pages of the DHP app (perturbation sizes are edited here)."""

from __future__ import annotations

from django.contrib import admin

from dhp.models import DhpRun, PerturbationSizes, Survey, SurveyWeights
from jobs.admin import LIFECYCLE_FIELDS, JobAdmin

admin.site.register(PerturbationSizes)
admin.site.register(Survey)
admin.site.register(SurveyWeights)


@admin.register(DhpRun)
class DhpRunAdmin(JobAdmin):
    list_display = ("pk", "dataset", "evaluator", "status", "done", "total", "created_at")
    readonly_fields = ("config", "results", *LIFECYCLE_FIELDS)
