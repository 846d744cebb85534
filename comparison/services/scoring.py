"""Compute the metric scores a job still lacks and store them per (item, metric, aspect).

Each family writes in batches, so a stopped job keeps what it finished and a resumed or later job asks
only for the missing pairs. LLM metrics never invent a score: an item the backend cannot score stops the
job (paused when the server is away, failed otherwise) instead of being filled in."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Avg

from comparison.engine.baselines import baseline_scores
from comparison.engine.errors import ComparisonError
from comparison.engine.gptscore import gptscore_context
from comparison.engine.gptscore_hf import DEFAULT_BATCH, HFScorer
from comparison.engine.metrics import Family, MetricSpec
from comparison.models import ComparisonJob, MetricScore
from corpus.models import Annotation, Item
from errors import UserError
from evaluation.answers import answer_kind
from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMBackend, LLMResult
from evaluation.llm.errors import BackendError
from evaluation.llm.logprob_preflight import logprob_preflight
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.servers import ServerKind
from evaluation.models import Aspect, EvaluatorRun, RunCall
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect
from evaluation.runs.failures import LLM_ERRORS, llm_stopped
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute_nested
from jobs.lifecycle import JobStopped, job_requeue
from jobs.models import JobStatus

BATCH = 256
GPTSCORE_OPTIONS = {"endpoint": "completions", "echo": True, "logprobs": 0, "max_tokens": 1, "temperature": 0}


@dataclass(frozen=True)
class ItemRow:
    pk: int
    system: str
    inputs: dict
    output: str
    reference: str

    @property
    def input_text(self) -> str:
        return "\n".join(str(v) for v in self.inputs.values())


Progress = Callable[[str, int], None]  # (metric, done so far); raises JobStopped when the job is cancelled


def storage_key(name: str, options: dict) -> str:
    """The name a metric's scores are stored under: the metric's name, except that `ensemble` also names the
    preset's models, so a job after ENSEMBLE_PRESET changed does not reuse another ensemble's scores."""
    if name == "ensemble":
        return f"ensemble:{'+'.join(options.get('annotators', []))}/{options.get('supervisor', '')}"
    return name


def dataset_items(dataset_id: int) -> list[ItemRow]:
    rows = Item.objects.filter(dataset_id=dataset_id).order_by("position").values_list(
        "pk", "system", "inputs", "output", "reference")
    return [ItemRow(*row) for row in rows]


def _existing(items: Sequence[ItemRow], metric: str, aspect: str) -> set[int]:
    return set(MetricScore.objects.filter(item__in=[i.pk for i in items], metric=metric, aspect=aspect)
               .values_list("item_id", flat=True))


def _store(metric: str, aspect: str, values: Iterable[tuple[int, float]]) -> int:
    rows = [MetricScore(item_id=pk, metric=metric, aspect=aspect, value=v) for pk, v in values]
    MetricScore.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def score_baseline(spec: MetricSpec, items: Sequence[ItemRow], progress: Progress) -> None:
    have = _existing(items, spec.name, "")
    todo = [i for i in items if i.pk not in have]
    done = len(items) - len(todo)
    progress(spec.name, done)
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        others = [i.input_text if spec.against_input else i.reference for i in chunk]
        values = baseline_scores(spec, [i.output for i in chunk], others)
        done += _store(spec.name, "", zip([i.pk for i in chunk], values, strict=True))
        progress(spec.name, done)


# ---------------------------------------------------------------------------------------------- GPTScore


def _aspect_definitions(job: ComparisonJob) -> dict[str, str]:
    defs = {a.name.lower(): a.definition for a in Aspect.objects.filter(task=job.dataset.task)}
    return {key: defs.get(key.lower(), "") for key in job.aspects}


def _task_description(job: ComparisonJob) -> tuple[str, str]:
    task = job.dataset.task
    return task.description, task.output_noun


class _LogprobAsker:
    """The GPTScore server as the scheduler's backend: a "prompt" is context + output, and the step's
    `scored_from` option says where the output begins; the answer is the mean log-probability as JSON."""

    def __init__(self, backend: OpenAICompatBackend) -> None:
        self.backend = backend
        self.kind = backend.kind
        self.url = backend.url
        self._preflown = threading.Lock()
        self._checked = False

    def check(self, models: Sequence[str]) -> dict[str, str]:
        return self.backend.check(models)

    def close(self) -> None:
        self.backend.close()

    def context_length(self, model: str) -> int | None:
        return self.backend.context_length(model)

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None) -> LLMResult:
        with self._preflown:  # one token first, before the first uncached request: a server without echo
            if not self._checked:  # fails clearly instead of on every item (a cached rerun sends nothing)
                logprob_preflight(self.backend, model, prefix=options.get("prefix", ""))
                self._checked = True
        started = time.perf_counter_ns()
        split = int(options["scored_from"])
        result = self.backend.text_logprobs(model, prompt[:split], prompt[split:], prefix=options.get("prefix", ""))
        answer = json.dumps({"mean": result.mean, "tokens": len(result.logprobs)})
        # The server's count of the whole prompt is not in this answer (only the scored tokens are): 0, unknown.
        return LLMResult(text=answer, model=result.model, digest="", prompt_tokens=0,
                         completion_tokens=0, total_duration_ns=time.perf_counter_ns() - started, load_duration_ns=0,
                         prompt_eval_duration_ns=0, eval_duration_ns=0, done_reason=None, attempts=result.attempts)


class _LocalAsker:
    """A local transformers model as the scheduler's backend: the requests that wait together are scored in one
    padded batch (whichever asking thread finds the model free scores them all), the answer as the server
    asker's. The model loads on the first request that needs it; a cached rerun never loads it."""

    kind = "transformers"

    def __init__(self, name: str, *, batch_size: int = DEFAULT_BATCH) -> None:
        self.url = f"local:{name}"
        self.name = name
        self.batch_size = batch_size
        self._scorer: HFScorer | None = None
        self._model = threading.Lock()
        self._queue = threading.Lock()
        self._waiting: list[tuple[str, str, Future[LLMResult]]] = []

    def check(self, models: Sequence[str]) -> dict[str, str]:
        return dict.fromkeys(models, "")

    def context_length(self, model: str) -> int | None:
        return None  # the scorer itself refuses a text longer than the model's positions

    def close(self) -> None:
        self._scorer = None

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None) -> LLMResult:
        split = int(options["scored_from"])
        answer: Future[LLMResult] = Future()
        with self._queue:
            self._waiting.append((prompt[:split], prompt[split:], answer))
        while not answer.done():
            if self._model.acquire(timeout=0.01):
                try:
                    self._score_waiting()
                finally:
                    self._model.release()
        return answer.result()

    def _score_waiting(self) -> None:
        with self._queue:
            batch, self._waiting = self._waiting[: self.batch_size], self._waiting[self.batch_size :]
        if not batch:
            return
        started = time.perf_counter_ns()
        try:
            self._scorer = self._scorer or HFScorer(self.name, batch_size=self.batch_size)
            scores = self._scorer.score([(context, text) for context, text, _ in batch])
            each = (time.perf_counter_ns() - started) // len(batch)
            # The scored tokens are in the answer; the whole prompt's count is unknown (0), as on a server.
            results = [LLMResult(
                text=json.dumps({"mean": score.mean, "tokens": score.tokens}), model=self.name, digest="",
                prompt_tokens=0, completion_tokens=0, total_duration_ns=each, load_duration_ns=0,
                prompt_eval_duration_ns=each, eval_duration_ns=0, done_reason=None, attempts=1,
            ) for score in scores]
        except Exception as exc:  # every waiting request gets the error, or its thread would wait forever
            # A model that cannot load or a text it cannot take fails the job (the policy's BackendError).
            error = BackendError(str(exc)) if isinstance(exc, ComparisonError) else exc
            for _, _, answer in batch:
                answer.set_exception(error)
            return
        for (_, _, answer), result in zip(batch, results, strict=True):
            answer.set_result(result)

def score_gptscore(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
                   count_call: Callable[[int], None]) -> None:
    """Average token log-probability of each output given an instruction with the aspect, asked through the
    lane scheduler with the ledger of LLM calls as cache (as every other LLM job): on an OpenAI-compatible
    server that echoes log-probabilities, or on a local transformers model (`gptscore-hf`)."""
    definitions = _aspect_definitions(job)
    task_text, noun = _task_description(job)
    header = job.dataset.output_header
    # The prefix (a BOS token the server needs to align its echo) changes the scores, so it keys the cache.
    prefix = {"prefix": settings.GPTSCORE_PREFIX} if settings.GPTSCORE_PREFIX else {}
    base = {"backend": "transformers"} if spec.local else {**GPTSCORE_OPTIONS, **prefix}
    done = 0
    asks: list[Ask] = []
    for aspect in job.aspects:
        have = _existing(items, spec.name, aspect)
        done += len(have)
        for item in items:
            if item.pk in have:
                continue
            context = gptscore_context(task=task_text, output_noun=noun, aspect=aspect,
                                       definition=definitions.get(aspect, ""), inputs=item.inputs,
                                       output_header=header)
            asks.append(Ask((aspect, item.pk), context + item.output, {**base, "scored_from": len(context)}))
    progress(spec.name, done)
    if not asks:
        return

    def on_batch(answered: list[Answered], interrupted: bool) -> None:
        nonlocal done
        by_aspect: dict[str, list[tuple[int, float]]] = {}
        for a in answered:
            aspect, pk = a.ask.ref
            if a.outcome.problems:  # too long for the model: no score is invented, the item stays unscored
                continue
            by_aspect.setdefault(aspect, []).append((pk, float(json.loads(a.outcome.raw)["mean"])))
        for aspect, values in by_aspect.items():
            done += _store(spec.name, aspect, values)
        count_call(sum(a.fresh for a in answered))
        if not interrupted:
            progress(spec.name, done)

    def ask(backend: LLMBackend, parallel: int) -> None:
        ask_many(backend, spec.model, "", asks, parse=lambda text: ParsedAnswer(status="ok"), parallel=parallel,
                 on_batch=on_batch, answer_tokens=0)

    try:
        if spec.local:
            ask(_LocalAsker(spec.model), DEFAULT_BATCH)
            return
        # connect() checks the allowlist again here: it may have changed since the job was made
        with connect(job.options.get("gptscore_url", ""), default=ServerKind.OPENAI) as backend:
            if not isinstance(backend, OpenAICompatBackend):
                raise BackendError(f"GPTScore needs an OpenAI-compatible server (Ollama gives no prompt "
                                   f"log-probabilities); {backend.url} is an Ollama address")
            backend.check([spec.model])
            ask(_LogprobAsker(backend), max(1, settings.OLLAMA_PARALLEL))
    except LLM_ERRORS as exc:
        raise llm_stopped(exc, kept=ComparisonJob.kept_message) from exc


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
        have = _existing(items, key, aspect)
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
        done += _store(key, aspect, [(i.pk, scores[i.pk]) for i in items
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
