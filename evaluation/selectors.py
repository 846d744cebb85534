"""Read-side queries of the evaluation app."""

from __future__ import annotations

from django.db.models import QuerySet

from evaluation.models import EvaluatorRun


def runs_for_home() -> QuerySet[EvaluatorRun]:
    return EvaluatorRun.objects.select_related("evaluator", "dataset", "aspect").order_by("-created_at")
