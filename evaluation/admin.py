"""Django admin for aspects, prompt templates, evaluators, runs and LLM calls."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from evaluation import models
from evaluation.engine.errors import EngineError
from evaluation.engine.prompts import validate_template
from evaluation.services.templates import template_revise
from jobs.admin import JobAdmin


@admin.register(models.Aspect)
class AspectAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "output_only", "is_builtin", "updated_at")
    list_filter = ("task", "output_only", "is_builtin")
    search_fields = ("name", "definition")


class PromptTemplateForm(forms.ModelForm):
    class Meta:
        model = models.PromptTemplate
        fields = ("kind", "task", "text", "note")

    def clean(self):
        data = super().clean()
        try:
            validate_template(data.get("text", ""), data.get("kind", "annotator"))
        except EngineError as exc:
            raise forms.ValidationError({"text": str(exc)}) from None
        return data


@admin.register(models.PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    """Saving an edited template stores a new active version; old versions stay for the runs that used them."""

    form = PromptTemplateForm
    list_display = ("kind", "task", "version", "is_active", "note", "created_at")
    list_filter = ("kind", "is_active")
    readonly_fields = ("version", "is_active", "created_by", "created_at")

    def save_model(self, request, obj, form, change) -> None:
        if change or models.PromptTemplate.objects.filter(kind=obj.kind, task=obj.task).exists():
            revised = template_revise(template=obj, text=obj.text, note=obj.note, user=request.user)
            obj.pk, obj.version = revised.pk, revised.version
            return
        obj.created_by = request.user
        obj.save()


@admin.register(models.Evaluator)
class EvaluatorAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "created_at")


@admin.register(models.EvaluatorRun)
class EvaluatorRunAdmin(JobAdmin):
    list_display = ("label", "evaluator", "dataset", "aspect", "status", "done", "total", "created_at")
    list_filter = ("status", "evaluator")
    readonly_fields = ("progress", "templates", "config", "celery_task_id", "heartbeat_at")


@admin.register(models.LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = ("cache_key", "model", "status", "done_reason", "prompt_tokens", "completion_tokens", "wall_seconds",
                    "created_at")
    list_filter = ("status", "done_reason", "model")  # the change page shows the reasoning trace (`thinking`)
    search_fields = ("cache_key", "prompt", "response")


@admin.register(models.RunCall)
class RunCallAdmin(admin.ModelAdmin):
    list_display = ("run", "item", "role", "model", "attempt", "kind", "from_cache")
    list_filter = ("role", "from_cache")
    raw_id_fields = ("item", "call")

    @admin.display(description="kind")
    def kind(self, obj: models.RunCall) -> str:
        return obj.attempt_kind.value
