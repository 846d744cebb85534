"""Load the engine's built-in tasks, aspects and prompt templates into the database (missing rows only)."""

from __future__ import annotations

from django.db import transaction

from corpus.models import TaskType
from evaluation.engine import prompts
from evaluation.engine.aspects import ASPECTS
from evaluation.engine.tasks import TASKS
from evaluation.models import Aspect, LLMRole, PromptTemplate


@transaction.atomic
def builtins_sync(*, reset: bool = False) -> dict[str, int]:
    """Create the built-in rows that are missing; with `reset`, overwrite admins' edits of built-ins too.

    Idempotent, so it runs after every migrate; admins' edits survive because existing rows are kept.
    """
    created = {"tasks": 0, "aspects": 0, "templates": 0}
    tasks: dict[str, TaskType] = {}
    for spec in TASKS.values():
        fields = {"name": spec.name, "description": spec.description, "output_noun": spec.output_noun,
                  "is_builtin": True}
        task, was_created = TaskType.objects.get_or_create(slug=spec.slug, defaults=fields)
        if reset and not was_created:
            TaskType.objects.filter(pk=task.pk).update(**fields)
        created["tasks"] += was_created
        tasks[spec.slug] = task
    for spec in ASPECTS:
        fields = {
            "definition": spec.definition, "confused_with": list(spec.confused_with), "lowest": spec.lowest,
            "highest": spec.highest, "steps": list(spec.steps), "output_only": spec.output_only,
            "is_builtin": True,
        }
        aspect, was_created = Aspect.objects.get_or_create(task=tasks[spec.task], name=spec.name, defaults=fields)
        if reset and not was_created:
            Aspect.objects.filter(pk=aspect.pk).update(**fields)
        created["aspects"] += was_created
    created["templates"] = _templates_sync()
    return created


def _templates_sync() -> int:
    count = 0
    for kind, text in (
        (LLMRole.ANNOTATOR, prompts.ANNOTATOR_TEMPLATE),
        (LLMRole.SUPERVISOR, prompts.SUPERVISOR_TEMPLATE),
        (LLMRole.DISTILLED, prompts.DISTILLED_TEMPLATE),
    ):
        if not PromptTemplate.objects.filter(kind=kind, task=None).exists():
            PromptTemplate.objects.create(kind=kind, task=None, version=1, text=text, note="built-in")
            count += 1
    return count
