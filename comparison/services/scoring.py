"""Compute the metric scores a job still lacks and store them per (item, metric, aspect).

Each family writes in batches, so a stopped job keeps what it finished and a resumed or later job asks
only for the missing pairs. LLM metrics never invent a score: an item the backend cannot score stops the
job (paused when the server is away, failed otherwise) instead of being filled in."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db.models import Avg

from comparison.engine.baselines import baseline_scores
from comparison.engine.metrics import Family, MetricSpec
from comparison.models import ComparisonJob
from comparison.services.gptscore import score_gptscore
from comparison.services.stored import ItemRow, Progress, existing_scores, storage_key, store_scores
from corpus.models import Annotation
from errors import UserError
from evaluation.answers import answer_kind
from evaluation.models import Aspect, EvaluatorRun, RunCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute_nested
from jobs.lifecycle import JobStopped, job_requeue
from jobs.models import JobStatus

BATCH = 256


def score_baseline(spec: MetricSpec, items: Sequence[ItemRow], progress: Progress) -> None:
    have = existing_scores(items, spec.name, "")
    todo = [i for i in items if i.pk not in have]
    done = len(items) - len(todo)
    progress(spec.name, done)
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        others = [i.input_text if spec.against_input else i.reference for i in chunk]
        values = baseline_scores(spec, [i.output for i in chunk], others)
        done += store_scores(spec.name, "", zip([i.pk for i in chunk], values, strict=True))
        progress(spec.name, done)


# ------------------------------------------------------------------------------- evaluator runs (Ollama)


def _run_config(job: ComparisonJob, spec: MetricSpec) -> tuple[list[str], str]:
    if spec.base == "ensemble":
        return list(job.options["annotators"]), job.options["supervisor"]
    return [spec.model], ""


def _find_run(job: ComparisonJob, spec: MetricSpec, aspect: str) -> EvaluatorRun | None:
    """A run of this mode, models and aspect on the dataset that is done or can go on (its calls are cached)."""
    run_id = job.runs.get(spec.name, {}).get(aspect)
    if run_id and EvaluatorRun.objects.filter(pk=run_id).exists():
        return EvaluatorRun.objects.get(pk=run_id)
    annotators, supervisor = _run_config(job, spec)
    runs = EvaluatorRun.objects.filter(
        dataset=job.dataset, aspect__name__iexact=aspect, config__mode=spec.run_mode,
        config__annotators=annotators,
    ).exclude(status=JobStatus.CANCELLED)
    if supervisor:
        runs = runs.filter(config__supervisor=supervisor)
    return runs.order_by("status", "-created_at").first() if runs.exists() else None


def run_scores(run: EvaluatorRun) -> dict[int, float]:
    """Item -> the run's overall score: the mean score of its answer annotations (evaluation.answers)."""
    kinds = set(Annotation.objects.filter(source_id=run.pk).values_list("kind", flat=True).distinct())
    kind = answer_kind(kinds)
    if kind is None:
        return {}
    rows = (Annotation.objects.filter(source_id=run.pk, kind=kind, score__isnull=False)
            .values("item_id").annotate(s=Avg("score")).values_list("item_id", "s"))
    return {pk: float(s) for pk, s in rows}


def score_runs(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
               count_call: Callable[[int], None], remember_run: Callable[[str, str, int], None]) -> None:
    """Per aspect: reuse a finished run of this mode and models (no call), or create/continue one and run it."""
    key = storage_key(spec.name, job.options)
    done = 0
    for aspect in job.aspects:
        have = existing_scores(items, key, aspect)
        if len(have) == len(items):
            done += len(have)
            progress(spec.name, done)
            continue
        run = _find_run(job, spec, aspect)
        if run is None:
            annotators, supervisor = _run_config(job, spec)
            aspect_name = Aspect.objects.filter(task=job.dataset.task, name__iexact=aspect).values_list(
                "name", flat=True).first() or aspect
            try:
                run = run_create(dataset=job.dataset, aspect_name=aspect_name, annotators=annotators,
                                 supervisor=supervisor or None, ollama_url=job.options["ollama_url"],
                                 mode=spec.run_mode, user=job.created_by, check=False,
                                 part_of=f"comparison {job.pk}")
            except UserError as exc:
                raise JobStopped(JobStatus.FAILED, f"{spec.name} on {aspect}: {exc}") from exc
        remember_run(spec.name, aspect, run.pk)
        if run.status != JobStatus.DONE:
            if run.status == JobStatus.FAILED:
                job_requeue(run, enqueue=False)
            before = RunCall.objects.filter(run=run, from_cache=False).count()
            status = job_execute_nested(EvaluatorRun, run.pk, token=f"comparison-{job.pk}")
            count_call(RunCall.objects.filter(run=run, from_cache=False).count() - before)
            run.refresh_from_db()
            if status is None:
                raise JobStopped(JobStatus.PAUSED, f"run {run.label} is being executed by another worker; resume this "
                                             "job when it has finished")
            if status != JobStatus.DONE:
                job_status = JobStatus.PAUSED if status == JobStatus.PAUSED else JobStatus.FAILED
                raise JobStopped(job_status, f"{spec.name} on {aspect}: run {run.label} ended {status}: {run.message}")
        scores = run_scores(run)
        done += store_scores(key, aspect, [(i.pk, scores[i.pk]) for i in items
                                           if i.pk in scores and i.pk not in have]) + len(have)
        progress(spec.name, done)


def score_metric(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
                 count_call: Callable[[int], None], remember_run: Callable[[str, str, int], None]) -> None:
    if spec.family in (Family.LENGTH, Family.OVERLAP, Family.SEMANTIC):
        score_baseline(spec, items, progress)
    elif spec.family is Family.GPTSCORE:
        score_gptscore(job, spec, items, progress, count_call)
    else:
        score_runs(job, spec, items, progress, count_call, remember_run)
