"""Versioned prompt templates: an edit is a new version, so every run's frozen text stays traceable."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from errors import UserError
from evaluation.engine.errors import EngineError
from evaluation.engine.prompts import validate_template
from evaluation.models import PromptTemplate


class TemplateError(UserError):
    """The template text cannot be rendered (unknown placeholder, stray `$`)."""


@transaction.atomic
def template_revise(*, template: PromptTemplate, text: str, note: str = "", user=None) -> PromptTemplate:
    """Store `text` as the next version of `template`'s (kind, task) and make it the active one."""
    try:
        validate_template(text, template.kind)
    except EngineError as exc:
        raise TemplateError(str(exc), field="text") from None
    family = PromptTemplate.objects.select_for_update().filter(kind=template.kind, task=template.task)
    latest = family.aggregate(v=Max("version"))["v"] or 0
    family.update(is_active=False)
    return PromptTemplate.objects.create(
        kind=template.kind, task=template.task, version=latest + 1, text=text, note=note, created_by=user,
        is_active=True,
    )
