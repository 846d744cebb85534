"""What placement needs from the database: each model's measured call and load times, and its calls left."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from django.db.models import Avg, Count, Max, QuerySet

from corpus.models import Annotation, AnnotationKind
from evaluation.models import EvaluatorRun, LLMCall, LLMRole, RunCall
from evaluation.runs.modes import ModelPass
from evaluation.runs.placement import DEFAULT_CALL_SECONDS, DEFAULT_LOAD_SECONDS, ModelWork

LOADED = 10**8  # a load_duration above 0.1 s means the call paid for loading the model
PACE_CALLS = 2000  # the latest calls a model's pace is measured on


def model_works(calls: dict[ModelPass, int], *, answer_format: str | None = None) -> list[ModelWork]:
    """Each model with its calls left (over its passes: a model may annotate and supervise) and its times
    as measured by earlier calls, or the defaults."""
    models = list(dict.fromkeys(model_pass.model for model_pass in calls))
    fresh = RunCall.objects.filter(model__in=models, from_cache=False, call__wall_seconds__gt=0)
    if answer_format is not None:  # a schema-held answer is seldom retried: its steps have a pace of their own
        fresh = fresh.filter(run__config__answer_format=answer_format)
    measured = {model: pace for model in models if (pace := step_pace(fresh.filter(model=model))) is not None}
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


def step_pace(calls: QuerySet[RunCall], *, latest: int = PACE_CALLS) -> float | None:
    """Mean seconds of a step over the latest `latest` calls: a step's time is all its calls' (a retry of an
    unreadable answer and a repair are more calls of the same step, so a model that often needs them is planned
    at its real pace), less the time they spent loading the model (placement counts a load once, apart).

    Each run's first step is left out where the run has others: it pays the run's cold start (a structured
    answer's shape refused and asked again, an empty prompt cache), which the next steps do not. None when
    nothing was measured."""
    rows = list(calls.order_by("-id").values_list("run_id", "item_id", "role", "call__wall_seconds",
                                                  "call__load_duration_ns")[:latest])
    steps: dict[tuple[int, int, str], float] = {}  # (run, item, role) -> seconds
    first: dict[int, tuple[int, int, str]] = {}  # run -> its first step
    for run_id, item_id, role, wall, load in reversed(rows):  # oldest first
        key = (run_id, item_id, role)
        first.setdefault(run_id, key)
        steps[key] = steps.get(key, 0.0) + max(wall - load / 1e9 if (load or 0) > LOADED else wall, 0.0)
    runs = Counter(run_id for run_id, _, _ in steps)
    kept = [seconds for key, seconds in steps.items() if runs[key[0]] == 1 or first[key[0]] != key]
    return sum(kept) / len(kept) if kept else None


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
