"""Create, check, enqueue, cancel and resume runs (the OpeNLGauge ensemble, or one model, over a dataset)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from corpus.models import Dataset
from evaluation.engine.ensemble import DEFAULT_OUTLIER_RULE, get_outlier_rule
from evaluation.engine.errors import EngineError
from evaluation.engine.presets import get_preset
from evaluation.llm.errors import BackendError
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.models import Aspect, Evaluator, EvaluatorRun, PromptTemplate, RunStatus
from evaluation.runs.modes import DEFAULT_MODE, ModeSpec, UnknownMode, mode_spec

RETRY_TEMPERATURE = 0.1
MAX_ANSWER_ATTEMPTS = 4  # the first try and three warmer retries of an unparseable answer


class LaunchError(Exception):
    """A run cannot start; the message says what to do."""


def _template_text(kind: str, task_id: int) -> str:
    template = (
        PromptTemplate.objects.filter(kind=kind, is_active=True)
        .filter(Q(task_id=task_id) | Q(task__isnull=True))
        .order_by("task_id")  # NULLs last on PostgreSQL and first on SQLite: pick explicitly below
    )
    rows = list(template)
    own = [t for t in rows if t.task_id == task_id]
    chosen = (own or rows or [None])[0]
    if chosen is None:
        raise LaunchError(f"no active {kind} prompt template; run `manage.py migrate` to load the built-ins")
    return chosen.text


def _templates(spec: ModeSpec, task_id: int) -> dict[str, str]:
    return {str(kind): _template_text(kind, task_id) for kind in spec.template_kinds}


def check_models(url: str, models: Sequence[str]) -> dict[str, str]:
    """Return model -> digest, or raise LaunchError naming the URL tried or the `ollama pull` commands to run."""
    try:
        with OllamaBackend(url, timeout=settings.OLLAMA_TIMEOUT) as backend:
            return backend.check(list(dict.fromkeys(models)))
    except BackendError as exc:
        raise LaunchError(str(exc)) from exc


MAX_PARALLEL = 64  # requests in flight per model; EvaluatorRun.parallel is a small integer


def allowed_ollama_url(requested: str | None) -> str:
    """Return the server a run may use: OLLAMA_URL by default, otherwise one listed in OLLAMA_URLS.

    The app fetches this URL itself, so a free-form value would let a user make the server probe its network."""
    if not requested:
        return settings.OLLAMA_URL
    url = requested.strip().rstrip("/")
    allowed = [u.rstrip("/") for u in settings.OLLAMA_URLS]
    if url not in allowed:
        raise LaunchError(f"ollama_url {requested[:200]!r} is not an allowed Ollama server; allowed: "
                          f"{', '.join(allowed)} (an admin adds servers with the OLLAMA_URLS environment variable)")
    return url


@transaction.atomic
def run_create(
    *,
    dataset: Dataset,
    aspect_name: str,
    annotators: Sequence[str] | None = None,
    supervisor: str | None = None,
    ollama_url: str | None = None,
    parallel: int | None = None,
    outlier_rule: str = DEFAULT_OUTLIER_RULE,
    mode: str = DEFAULT_MODE,
    user=None,
    check: bool = True,
) -> EvaluatorRun:
    """Create a pending run with its configuration and prompt templates frozen.

    `mode` names one of evaluation.runs.modes.MODES. With `check`, the Ollama server is asked first,
    so a missing model or an unreachable server is refused before anything is queued.
    """
    try:
        spec = mode_spec(mode)
    except UnknownMode as exc:
        raise LaunchError(str(exc)) from None
    aspect = Aspect.objects.select_related("task").filter(task=dataset.task, name=aspect_name).first()
    if aspect is None:
        known = ", ".join(Aspect.objects.filter(task=dataset.task).values_list("name", flat=True))
        raise LaunchError(f"task {dataset.task.slug!r} has no aspect {aspect_name!r} (aspects: {known})")
    preset = get_preset(settings.ENSEMBLE_PRESET)
    annotators = list(annotators or preset.annotators)
    supervisor = supervisor or preset.supervisor
    if not annotators:
        raise LaunchError("an ensemble needs at least one annotator model")
    if spec.n_models is not None and len(annotators) != spec.n_models:
        wanted = "one model (--annotators MODEL)" if spec.n_models == 1 else f"{spec.n_models} models"
        raise LaunchError(f"a {spec.mode} run takes exactly {wanted}, not {len(annotators)}")
    if not spec.has_supervisor:
        supervisor = ""
    if len(set(annotators)) != len(annotators):
        raise LaunchError("the same annotator model is listed twice")
    try:
        get_outlier_rule(outlier_rule)
    except EngineError as exc:
        raise LaunchError(str(exc)) from None
    url = allowed_ollama_url(ollama_url)
    parallel = parallel or settings.OLLAMA_PARALLEL
    if not 1 <= parallel <= MAX_PARALLEL:
        raise LaunchError(f"--parallel must be between 1 and {MAX_PARALLEL}")
    if not dataset.items.exists():
        raise LaunchError(f"dataset {dataset.name!r} has no items")
    phases = spec.phases(annotators, supervisor)
    digests = check_models(url, [phase.model for phase in phases]) if check else {}
    config = {
        "mode": spec.mode.value,
        "annotators": annotators,
        "supervisor": supervisor,
        "digests": digests,
        "options": {"temperature": 0.0, "seed": settings.LLM_SEED, "num_ctx": settings.OLLAMA_NUM_CTX},
        "retry_temperature": RETRY_TEMPERATURE,
        "max_answer_attempts": MAX_ANSWER_ATTEMPTS,
        "outlier_rule": outlier_rule,
        "keep_alive": settings.OLLAMA_KEEP_ALIVE,
    }
    evaluator, _ = Evaluator.objects.get_or_create(
        name=spec.evaluator_name(annotators, supervisor)[:200],
        defaults={"kind": spec.evaluator_kind, "config": {"annotators": annotators, "supervisor": supervisor}},
    )
    n_items = dataset.items.count()
    run = EvaluatorRun.objects.create(
        evaluator=evaluator, dataset=dataset, aspect=aspect, label=f"pending-{timezone.now().timestamp()}",
        config=config, ollama_url=url, parallel=parallel, created_by=user,
        templates=_templates(spec, aspect.task_id),
        total_calls=n_items * len(phases),
        progress={phase.progress_key: {"done": 0, "total": n_items} for phase in phases},
    )
    run.label = f"{spec.mode}-{run.pk}"
    run.save(update_fields=["label"])
    return run


PREANNOTATION_TASK = "tasks.preannotation.run_preannotation"


def run_enqueue(run: EvaluatorRun) -> None:
    """Queue the run's Celery job once the surrounding transaction commits.

    The task is sent by name: the tasks/ package sits above every layer and is imported only by Celery."""
    transaction.on_commit(partial(current_app.send_task, PREANNOTATION_TASK, args=[run.pk]))


def run_cancel(*, run: EvaluatorRun) -> bool:
    """Ask a run to stop; a pending or paused one stops at once, a running one at its next checkpoint."""
    now = timezone.now()
    stopped = EvaluatorRun.objects.filter(pk=run.pk, status__in=[RunStatus.PENDING, RunStatus.PAUSED]).update(
        status=RunStatus.CANCELLED, cancel_requested=True, finished_at=now, message="Cancelled before it ran."
    )
    if stopped:
        return True
    return bool(
        EvaluatorRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(cancel_requested=True)
    )


def run_resume(*, run: EvaluatorRun, enqueue: bool = True) -> bool:
    """Put a paused or failed run back in the queue; finished calls come from the cache."""
    updated = EvaluatorRun.objects.filter(pk=run.pk, status__in=[RunStatus.PAUSED, RunStatus.FAILED]).update(
        status=RunStatus.PENDING, message="Resumed; waiting for a worker.", cancel_requested=False
    )
    if updated and enqueue:
        run_enqueue(run)
    return bool(updated)
