"""Django admin for campaigns, assignments, judgments and control verdicts."""

from __future__ import annotations

from django.contrib import admin

from annotator import models
from annotator.services.campaigns import campaigns_delete


class CampaignRunInline(admin.TabularInline):
    model = models.CampaignRun
    extra = 0
    raw_id_fields = ("run",)


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "dataset", "status", "annotators_per_item", "created_at")
    list_filter = ("status",)
    filter_horizontal = ("annotators",)
    inlines = [CampaignRunInline]

    def delete_model(self, request, obj: models.Campaign) -> None:
        campaigns_delete([obj])

    def delete_queryset(self, request, queryset) -> None:
        campaigns_delete(list(queryset))


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("campaign", "annotator", "order", "item", "status", "is_control", "seconds_spent")
    list_filter = ("campaign", "status", "is_control")
    raw_id_fields = ("item",)


@admin.register(models.SpanJudgment)
class SpanJudgmentAdmin(admin.ModelAdmin):
    list_display = ("span", "annotator", "span_verdict", "explanation_verdict", "updated_at")
    list_filter = ("span_verdict", "explanation_verdict")
    raw_id_fields = ("span", "assignment")


@admin.register(models.JudgmentEvent)
class JudgmentEventAdmin(admin.ModelAdmin):
    list_display = ("judgment", "user", "field", "old_value", "new_value", "undone", "at")
    raw_id_fields = ("judgment",)


@admin.register(models.ControlVerdict)
class ControlVerdictAdmin(admin.ModelAdmin):
    list_display = ("campaign", "span", "span_verdict", "explanation_verdict")
    raw_id_fields = ("span",)
