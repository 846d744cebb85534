"""Django admin for task types, datasets, items, sources, annotations and spans."""

from __future__ import annotations

from django.contrib import admin

from corpus import models


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
    search_fields = ("source__label", "model", "item__external_id")
    raw_id_fields = ("item", "source", "author", "unit")
    inlines = [ErrorSpanInline]


@admin.register(models.ErrorSpan)
class ErrorSpanAdmin(admin.ModelAdmin):
    list_display = ("id", "annotation", "text", "start", "end", "match", "severity", "category")
    list_filter = ("match", "severity")
    raw_id_fields = ("annotation",)


@admin.register(models.Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ("label", "kind", "created_at")
    list_filter = ("kind",)
    search_fields = ("label",)


@admin.register(models.Unit)
class UnitAdmin(admin.ModelAdmin):
    list_display = ("id", "dataset", "source", "segment", "number")
    search_fields = ("source__label", "segment")
    raw_id_fields = ("dataset", "source")
