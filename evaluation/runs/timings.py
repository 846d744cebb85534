"""What placement needs from the database: each model's measured call and load times, and its calls left."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Avg, Count, Max, Sum

from corpus.models import Annotation, AnnotationKind
from evaluation.models import EvaluatorRun, LLMCall, LLMRole, RunCall
from evaluation.runs.modes import ModelPass
from evaluation.runs.placement import DEFAULT_CALL_SECONDS, DEFAULT_LOAD_SECONDS, ModelWork

LOADED = 10**8  # a load_duration above 0.1 s means the call paid for loading the model


def model_works(calls: dict[ModelPass, int], *, answer_format: str | None = None) -> list[ModelWork]:
    """Each model with its calls left (over its passes: a model may annotate and supervise) and its times
    as measured by earlier calls, or the defaults."""
    models = list(dict.fromkeys(model_pass.model for model_pass in calls))
    # A step's time is all its calls' (a retry of an unreadable answer and a repair are more calls of the same
    # step), so a model that often needs them is planned at its real pace; calls of no run (none yet) per call.
    fresh = RunCall.objects.filter(model__in=models, from_cache=False, call__wall_seconds__gt=0)
    if answer_format is not None:  # a schema-held answer is seldom retried: its steps have a pace of their own
        fresh = fresh.filter(run__config__answer_format=answer_format)
    spent = {row["model"]: row["seconds"] for row in fresh.values("model").annotate(seconds=Sum("call__wall_seconds"))}
    steps = {row["model"]: row["n"] for row in fresh.filter(attempt=0).values("model").annotate(n=Count("id"))}
    measured = {model: spent[model] / steps[model] for model in spent if steps.get(model)}
    measured.update({
        row["model"]: row["call"]
        for row in LLMCall.objects.filter(model__in=[m for m in models if m not in measured], status=LLMCall.Status.OK,
                                          wall_seconds__gt=0)
        .values("model").annotate(call=Avg("wall_seconds"))
    })
    loads = {
        row["model"]: row["load"] / 1e9
        for row in LLMCall.objects.filter(model__in=models, load_duration_ns__gt=LOADED)
        .values("model").annotate(load=Max("load_duration_ns"))
    }
    return [
        ModelWork(model, sum(n for model_pass, n in calls.items() if model_pass.model == model),
                  measured.get(model) or DEFAULT_CALL_SECONDS, loads.get(model) or DEFAULT_LOAD_SECONDS)
        for model in models
    ]


def calls_left(run: EvaluatorRun, passes: Sequence[ModelPass], n_items: int) -> dict[ModelPass, int]:
    """Steps each pass still has: items without its annotation (a new run: every item)."""
    done = {
        (row["kind"], row["model"]): row["n"]
        for row in Annotation.objects.filter(source=run).values("kind", "model").annotate(n=Count("id"))
    }
    ensembles = sum(n for (kind, _), n in done.items() if kind == AnnotationKind.ENSEMBLE)
    return {
        model_pass: n_items - (ensembles if model_pass.role == LLMRole.SUPERVISOR
                                else done.get((AnnotationKind.ANNOTATOR, model_pass.model), 0))
        for model_pass in passes
    }
