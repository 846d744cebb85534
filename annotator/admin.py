"""Django admin for datasets, items, annotations, spans, campaigns and judgments."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from annotator import models


@admin.register(models.User)
class UserAdmin(BaseUserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = (*BaseUserAdmin.fieldsets, ("Role", {"fields": ("role",)}))
    add_fieldsets = (*BaseUserAdmin.add_fieldsets, ("Role", {"fields": ("role",)}))


@admin.register(models.TaskType)
class TaskTypeAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "output_noun", "is_builtin")


class ItemInline(admin.TabularInline):
    model = models.Item
    fields = ("position", "external_id", "system")
    readonly_fields = fields
    extra = 0
    show_change_link = True
    max_num = 0


@admin.register(models.Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "output_header", "is_demo", "created_at")
    list_filter = ("task", "is_demo")
    search_fields = ("name",)


@admin.register(models.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "dataset", "system", "position")
    list_filter = ("dataset",)
    search_fields = ("external_id", "system", "output")
    raw_id_fields = ("derived_from",)


class ErrorSpanInline(admin.TabularInline):
    model = models.ErrorSpan
    fields = ("position", "text", "start", "end", "match", "multi_part", "severity", "category", "explanation")
    extra = 0


@admin.register(models.Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "aspect", "source", "kind", "model", "score", "parse_status", "is_sample")
    list_filter = ("kind", "parse_status", "is_sample", "aspect")
    search_fields = ("source", "model", "item__external_id")
    raw_id_fields = ("item", "run", "llm_call", "author", "campaign")
    inlines = [ErrorSpanInline]


@admin.register(models.ErrorSpan)
class ErrorSpanAdmin(admin.ModelAdmin):
    list_display = ("id", "annotation", "text", "start", "end", "match", "severity", "category")
    list_filter = ("match", "severity")
    raw_id_fields = ("annotation",)


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
