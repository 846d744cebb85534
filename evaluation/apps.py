"""App config of the evaluation side (aspects, templates, evaluators, runs, LLM calls): it loads the built-in
tasks and aspects after every migrate."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _load_builtins(sender: AppConfig, **kwargs: object) -> None:
    """Built-in tasks and aspects must exist before any import, like Django's own permissions."""
    from evaluation.services.builtins import builtins_sync

    builtins_sync()


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        post_migrate.connect(_load_builtins, sender=self)
