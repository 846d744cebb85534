"""Execute an ensemble run: model-major annotator phases, then the supervisor, with a call cache.

Scheduling: every call of one model across the dataset before the next model, so each model is
loaded once, with `run.parallel` requests in flight (the server's OLLAMA_NUM_PARALLEL). Worker threads
only talk HTTP and parse; the database is written from the coordinating thread: each answer is stored
as an LLMCall the moment it arrives (so a killed worker repeats no finished call), annotations in batches.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from corpus.models import Annotation, AnnotationKind, ErrorSpan, Item, ParseStatus
from evaluation.engine.alignment import AlignedSpan, align_location
from evaluation.engine.aspects import AspectSpec
from evaluation.engine.ensemble import MAX_ERRORS, cap_errors, ensemble_score, fallback_merge, get_outlier_rule
from evaluation.engine.parsing import (
    ParsedAnswer,
    ParsedError,
    parse_annotator_answer,
    parse_distilled_answer,
    parse_supervisor_answer,
    score_to_label,
)
from evaluation.engine.prompts import render_annotator_prompt, render_distilled_prompt, render_supervisor_prompt
from evaluation.engine.tasks import TaskSpec
from evaluation.llm.errors import BackendError, BackendUnavailable, ModelMissing
from evaluation.llm.ollama_backend import LLMResult, OllamaBackend
from evaluation.models import EvaluatorRun, LLMCall, RunCall, RunStatus

log = logging.getLogger(__name__)

FLUSH_EVERY = 25  # outcomes per annotation batch
FLUSH_SECONDS = 2.0


def cache_key(model: str, digest: str, prompt: str, options: dict[str, Any]) -> str:
    """The cache identity of a call: the same model build, prompt and options give the same answer."""
    blob = json.dumps({"model": model, "digest": digest, "prompt": prompt, "options": options}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def attempt_options(base: dict[str, Any], attempt: int, retry_temperature: float) -> dict[str, Any]:
    """Options of try `attempt`: the run's own first, then slightly warmer with a shifted seed."""
    if attempt == 0:
        return dict(base)
    return {**base, "temperature": retry_temperature, "seed": int(base.get("seed", 0)) + attempt}


@dataclass
class Step:
    """One (item, model) request with the keys of all its possible attempts and what the cache holds."""

    item_id: int
    output: str
    prompt: str
    attempts: list[tuple[str, dict[str, Any]]]  # (cache key, options) per attempt
    cached: dict[str, str]  # cache key -> stored answer
    role: str
    context: Any = None  # supervisor steps carry the annotator answers they merge


@dataclass
class AttemptRecord:
    attempt: int
    key: str
    options: dict[str, Any]
    text: str
    result: LLMResult | None  # None when the answer came from the cache
    wall: float = 0.0


@dataclass
class Outcome:
    step: Step
    parsed: ParsedAnswer
    attempts: list[AttemptRecord] = field(default_factory=list)


class RunStopped(Exception):
    """Raised inside the executor when a run must stop (cancelled, paused or failed)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _specs(run: EvaluatorRun) -> tuple[TaskSpec, AspectSpec]:
    """Build the engine's specs from the database rows, so admins' edits of tasks and aspects apply."""
    task = run.aspect.task
    aspect = run.aspect
    return (
        TaskSpec(slug=task.slug, name=task.name, description=task.description, output_noun=task.output_noun),
        AspectSpec(
            task=task.slug, name=aspect.name, definition=aspect.definition,
            confused_with=list(aspect.confused_with), lowest=aspect.lowest, highest=aspect.highest,
            output_only=aspect.output_only, steps=list(aspect.steps),
        ),
    )


def spans_for_errors(errors: Iterable[ParsedError], output: str) -> list[ErrorSpan]:
    """Align each error's location to the output; '...'-joined locations become one span per part."""
    rows: list[ErrorSpan] = []
    for error in errors:
        aligned = align_location(error.location, output, explanation=error.explanation)
        for span in aligned:
            rows.append(_span_row(span, error.explanation, error.severity, error.location_raw))
    return rows


def _span_row(span: AlignedSpan, explanation: str, severity: int | None, raw: str) -> ErrorSpan:
    no_location = span.start is None and not span.text
    return ErrorSpan(
        text=span.text or raw, start=span.start, end=span.end, match=span.match, multi_part=span.multi_part,
        ambiguous=span.ambiguous, explanation=explanation, severity=severity,
        note=span.note or ("The answer gives no location." if no_location else ""),
    )


class RunExecutor:
    """Runs one claimed EvaluatorRun to the end, or until it is cancelled, paused or fails."""

    def __init__(self, run: EvaluatorRun, backend: OllamaBackend | None = None) -> None:
        self.run = run
        self.config = run.config
        self.backend = backend or OllamaBackend(
            run.ollama_url, timeout=settings.OLLAMA_TIMEOUT, keep_alive=self.config.get("keep_alive", "10m")
        )
        self.task_spec, self.aspect_spec = _specs(run)
        self.items = list(
            Item.objects.filter(dataset_id=run.dataset_id).order_by("position").values_list("pk", "inputs", "output")
        )
        self.by_id = {pk: (inputs, output) for pk, inputs, output in self.items}
        self.output_header = run.dataset.output_header
        self.digests: dict[str, str] = dict(self.config.get("digests", {}))
        # "ensemble": annotators then supervisor; "single": one annotator model's answer is final;
        # "distilled": one model with the short prompt that answers a 0-100 score.
        self.mode: str = self.config.get("mode", "ensemble")
        self.stop = threading.Event()
        self.last_flush = time.monotonic()

    # --- entry point --------------------------------------------------------------------------
    def execute(self) -> str:
        try:
            self._refresh_digests()
            for model in self.config["annotators"]:
                self._phase(model, AnnotationKind.ANNOTATOR, self._annotator_steps(model))
            if self.mode == "ensemble":
                self._phase(self.config["supervisor"], AnnotationKind.SUPERVISOR, self._supervisor_steps())
        except RunStopped as stop:
            self._finish(stop.status, stop.message)
            return stop.status
        finally:
            self.backend.close()
        self._finish(RunStatus.DONE, "")
        return RunStatus.DONE

    def _refresh_digests(self) -> None:
        models = [*self.config["annotators"], *([self.config["supervisor"]] if self.mode == "ensemble" else [])]
        try:
            digests = self.backend.check_sync(models)
        except ModelMissing as exc:
            raise RunStopped(RunStatus.FAILED, str(exc)) from exc
        except BackendError as exc:
            raise RunStopped(RunStatus.PAUSED, f"{exc} Completed calls are kept; resume the run afterwards.") from exc
        changed = [m for m in models if self.digests.get(m) and self.digests[m] != digests[m]]
        if changed:
            log.warning("model digests changed since the run was created: %s", ", ".join(changed))
        self.digests.update(digests)

    # --- steps --------------------------------------------------------------------------------
    def _keys(self, model: str, prompt: str) -> list[tuple[str, dict[str, Any]]]:
        base = dict(self.config["options"])
        attempts = []
        for attempt in range(int(self.config.get("max_answer_attempts", 4))):
            options = attempt_options(base, attempt, float(self.config.get("retry_temperature", 0.1)))
            attempts.append((cache_key(model, self.digests.get(model, ""), prompt, options), options))
        return attempts

    def _with_cache(self, steps: list[Step]) -> list[Step]:
        keys = [key for step in steps for key, _ in step.attempts]
        cached: dict[str, str] = {}
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            cached.update(
                LLMCall.objects.filter(cache_key__in=chunk, status=LLMCall.Status.OK).values_list(
                    "cache_key", "response"
                )
            )
        for step in steps:
            step.cached = {key: cached[key] for key, _ in step.attempts if key in cached}
        return steps

    def _annotator_steps(self, model: str) -> list[Step]:
        done = set(
            Annotation.objects.filter(source=self.run, kind=AnnotationKind.ANNOTATOR, model=model).values_list(
                "item_id", flat=True
            )
        )
        distilled = self.mode == "distilled"
        template = self.run.templates["distilled" if distilled else "annotator"]
        render = render_distilled_prompt if distilled else render_annotator_prompt
        steps = []
        for pk, inputs, output in self.items:
            if pk in done:
                continue
            prompt = render(
                template, task=self.task_spec, aspect=self.aspect_spec, inputs=inputs, output=output,
                output_header=self.output_header,
            )
            steps.append(Step(pk, output, prompt, self._keys(model, prompt), {}, RunCall.Role.ANNOTATOR))
        return self._with_cache(steps)

    def _supervisor_steps(self) -> list[Step]:
        model = self.config["supervisor"]
        done = set(
            Annotation.objects.filter(source=self.run, kind=AnnotationKind.ENSEMBLE).values_list("item_id", flat=True)
        )
        answers: dict[int, list[Annotation]] = {}
        for annotation in Annotation.objects.filter(source=self.run, kind=AnnotationKind.ANNOTATOR).order_by("model"):
            answers.setdefault(annotation.item_id, []).append(annotation)
        template = self.run.templates["supervisor"]
        rule = get_outlier_rule(self.config.get("outlier_rule", "leave_one_out"))
        steps = []
        for pk, inputs, output in self.items:
            if pk in done:
                continue
            annotations = sorted(answers.get(pk, []), key=lambda a: self.config["annotators"].index(a.model))
            parsed = [parse_annotator_answer(a.raw_answer) for a in annotations]
            usable = [(a, p) for a, p in zip(annotations, parsed, strict=True) if p.status != "failed"]
            scored = [(a, p) for a, p in usable if p.score is not None]
            flags = rule([p.score for _, p in scored]) if scored else []
            outliers = {a.pk for (a, _), flag in zip(scored, flags, strict=True) if flag}
            kept = [(a, p) for a, p in usable if a.pk not in outliers]
            context = {"annotations": annotations, "parsed": parsed, "outliers": outliers, "kept": kept}
            if not kept:
                self._store_ensemble_without_supervisor(pk, output, context)
                continue
            prompt = render_supervisor_prompt(
                template, task=self.task_spec, aspect=self.aspect_spec, inputs=inputs, output=output,
                output_header=self.output_header, annotations=[p for _, p in kept],
            )
            steps.append(Step(pk, output, prompt, self._keys(model, prompt), {}, RunCall.Role.SUPERVISOR, context))
        return self._with_cache(steps)

    # --- one phase: P requests in flight for one model -------------------------------------------
    def _phase(self, model: str, kind: str, steps: list[Step]) -> None:
        if not steps:
            return
        if kind == AnnotationKind.SUPERVISOR:
            parse = parse_supervisor_answer
        else:
            parse = parse_distilled_answer if self.mode == "distilled" else parse_annotator_answer
        pending: list[Outcome] = []
        progress_key = model if kind == AnnotationKind.ANNOTATOR else f"{model} (supervisor)"
        with ThreadPoolExecutor(max_workers=self.run.parallel, thread_name_prefix="llm") as pool:
            queue = iter(steps)
            running: set[Future[Outcome]] = set()

            def top_up() -> None:
                while len(running) < self.run.parallel and not self.stop.is_set():
                    step = next(queue, None)
                    if step is None:
                        return
                    running.add(pool.submit(self._perform, model, step, parse))

            top_up()
            try:
                while running:
                    finished, _ = wait(running, timeout=FLUSH_SECONDS, return_when=FIRST_COMPLETED)
                    for future in finished:
                        running.discard(future)
                        outcome = future.result()
                        self._store_calls(model, outcome)
                        pending.append(outcome)
                    if len(pending) >= FLUSH_EVERY or time.monotonic() - self.last_flush >= FLUSH_SECONDS:
                        self._flush(model, kind, progress_key, pending)
                        pending = []
                    top_up()
            except BaseException:
                self.stop.set()
                for future in running:
                    future.cancel()
                # Answers that already arrived are kept even when the phase breaks off.
                for future in running:
                    if future.done() and not future.cancelled() and future.exception() is None:
                        outcome = future.result()
                        self._store_calls(model, outcome)
                        pending.append(outcome)
                self._flush(model, kind, progress_key, pending, check_cancel=False)
                raise
        self._flush(model, kind, progress_key, pending)

    def _perform(self, model: str, step: Step, parse: Callable[[str], ParsedAnswer]) -> Outcome:
        """Worker thread: ask (or read the cache) until an answer parses or the attempts run out."""
        outcome = Outcome(step, ParsedAnswer())
        for attempt, (key, options) in enumerate(step.attempts):
            if self.stop.is_set():
                raise RunStopped(RunStatus.PAUSED, "stopping")
            if key in step.cached:
                text, result, wall = step.cached[key], None, 0.0
            else:
                began = time.monotonic()
                try:
                    result = self.backend.chat_sync(model, step.prompt, options=options)
                except ModelMissing as exc:
                    raise RunStopped(RunStatus.FAILED, str(exc)) from exc
                except BackendUnavailable as exc:
                    raise RunStopped(
                        RunStatus.PAUSED, f"{exc} Completed calls are kept; resume the run when the server is back."
                    ) from exc
                except BackendError as exc:
                    raise RunStopped(RunStatus.FAILED, str(exc)) from exc
                text, wall = result.text, time.monotonic() - began
            outcome.attempts.append(AttemptRecord(attempt, key, options, text, result, wall))
            outcome.parsed = parse(text)
            if outcome.parsed.status != "failed":
                break
        return outcome

    # --- storing ------------------------------------------------------------------------------
    def _store_calls(self, model: str, outcome: Outcome) -> None:
        """Store new answers at once: the cache is what makes a resumed job repeat no call."""
        fresh = [a for a in outcome.attempts if a.result is not None]
        if not fresh:
            return
        LLMCall.objects.bulk_create(
            [
                LLMCall(
                    cache_key=a.key, model=model, model_digest=self.digests.get(model, ""), prompt=outcome.step.prompt,
                    options=a.options, response=a.text, prompt_tokens=a.result.prompt_tokens,
                    completion_tokens=a.result.completion_tokens, total_duration_ns=a.result.total_duration_ns,
                    load_duration_ns=a.result.load_duration_ns,
                    prompt_eval_duration_ns=a.result.prompt_eval_duration_ns,
                    eval_duration_ns=a.result.eval_duration_ns, wall_seconds=a.wall, attempts=a.result.attempts,
                )
                for a in fresh
                if a.result is not None
            ],
            ignore_conflicts=True,
        )

    @transaction.atomic
    def _flush(
        self, model: str, kind: str, progress_key: str, outcomes: Sequence[Outcome], check_cancel: bool = True
    ) -> None:
        self.last_flush = time.monotonic()
        if outcomes:
            keys = [a.key for o in outcomes for a in o.attempts]
            calls = dict(LLMCall.objects.filter(cache_key__in=keys).values_list("cache_key", "pk"))
            run_calls = [
                RunCall(
                    run=self.run, item_id=o.step.item_id, role=o.step.role, model=model, attempt=a.attempt,
                    call_id=calls[a.key], from_cache=a.result is None,
                )
                for o in outcomes
                for a in o.attempts
            ]
            RunCall.objects.bulk_create(run_calls, ignore_conflicts=True)
            for outcome in outcomes:
                last_call = calls[outcome.attempts[-1].key] if outcome.attempts else None
                if kind == AnnotationKind.ANNOTATOR:
                    self._store_annotator(model, outcome, last_call)
                else:
                    self._store_supervised(model, outcome, last_call)
        n_calls = sum(len(o.attempts) for o in outcomes)
        n_cached = sum(1 for o in outcomes for a in o.attempts if a.result is None)
        n_failed = sum(1 for o in outcomes if o.parsed.status == "failed")
        progress = self.run.progress
        entry = progress.setdefault(progress_key, {"done": 0, "total": len(self.items)})
        entry["done"] = entry.get("done", 0) + len(outcomes)
        entry["failed"] = entry.get("failed", 0) + n_failed
        entry["calls"] = entry.get("calls", 0) + n_calls
        EvaluatorRun.objects.filter(pk=self.run.pk).update(
            progress=progress, done_calls=F("done_calls") + len(outcomes), cache_hits=F("cache_hits") + n_cached,
            failed_calls=F("failed_calls") + n_failed, heartbeat_at=timezone.now(),
        )
        if check_cancel and EvaluatorRun.objects.filter(pk=self.run.pk, cancel_requested=True).exists():
            self.stop.set()
            raise RunStopped(RunStatus.CANCELLED, "Cancelled by an admin; completed calls and annotations are kept.")

    def _annotation(self, item_id: int, kind: str, model: str, **fields: Any) -> Annotation:
        return Annotation.objects.create(
            item_id=item_id, aspect=self.run.aspect.name, source=self.run, kind=kind, model=model, **fields,
        )

    @staticmethod
    def _status(parsed: ParsedAnswer) -> str:
        return {"ok": ParseStatus.OK, "partial": ParseStatus.PARTIAL}.get(parsed.status, ParseStatus.FAILED)

    def _store_annotator(self, model: str, outcome: Outcome, call_id: int | None) -> None:
        parsed = outcome.parsed
        raw = outcome.attempts[-1].text if outcome.attempts else ""
        problems = list(parsed.problems)
        if len(outcome.attempts) > 1:
            problems.insert(0, f"answer unparseable on {len(outcome.attempts) - 1} earlier attempt(s); retried warmer")
        # The distilled model scores 0-100; label-scored answers are on the 1..5 scale.
        score = parsed.score100 if self.mode == "distilled" else parsed.score
        annotation = self._annotation(
            outcome.step.item_id, AnnotationKind.ANNOTATOR, model, score=score,
            score_label=parsed.score_label or "", score_explanation=parsed.score_explanation, raw_answer=raw,
            parse_status=self._status(parsed), parse_problems=problems,
        )
        self._save_spans(annotation, spans_for_errors(parsed.errors, outcome.step.output))

    def _store_supervised(self, model: str, outcome: Outcome, call_id: int | None) -> None:
        context = outcome.step.context
        parsed = outcome.parsed
        raw = outcome.attempts[-1].text if outcome.attempts else ""
        supervisor = self._annotation(
            outcome.step.item_id, AnnotationKind.SUPERVISOR, model, raw_answer=raw,
            parse_status=self._status(parsed), parse_problems=list(parsed.problems),
        )
        output = outcome.step.output
        if parsed.status != "failed":
            spans = spans_for_errors(cap_errors(parsed.errors, MAX_ERRORS), output)
            self._save_spans(supervisor, [_copy(s) for s in spans])
            note = ""
        else:
            spans = self._fallback_spans(context, output)
            note = "The supervisor's answer was unusable; errors were merged by span overlap instead."
        self._store_ensemble(outcome.step.item_id, context, spans, note, model)

    def _fallback_spans(self, context: dict[str, Any], output: str) -> list[ErrorSpan]:
        annotated = []
        for _, parsed in context["kept"]:
            for error in parsed.errors:
                annotated.append((error, align_location(error.location, output, explanation=error.explanation)))
        merged = fallback_merge(annotated, output, max_errors=MAX_ERRORS)
        return [
            ErrorSpan(
                text=m.location or "", start=m.start, end=m.end, match=m.match, explanation=m.explanation,
                severity=m.severity, note="merged without the supervisor" if m.start is not None else
                "merged without the supervisor; no location in the text",
            )
            for m in merged
        ]

    def _store_ensemble_without_supervisor(self, item_id: int, output: str, context: dict[str, Any]) -> None:
        with transaction.atomic():
            self._store_ensemble(
                item_id, context, [], "No annotator gave a usable answer, so there was nothing to merge.", ""
            )
            entry = self.run.progress.setdefault(
                f"{self.config['supervisor']} (supervisor)", {"done": 0, "total": len(self.items)}
            )
            entry["done"] = entry.get("done", 0) + 1
            EvaluatorRun.objects.filter(pk=self.run.pk).update(
                progress=self.run.progress, done_calls=F("done_calls") + 1
            )

    def _store_ensemble(
        self, item_id: int, context: dict[str, Any], spans: list[ErrorSpan], note: str, supervisor: str
    ) -> None:
        annotations: list[Annotation] = context["annotations"]
        if context["outliers"]:
            Annotation.objects.filter(pk__in=context["outliers"]).update(is_outlier=True)
        scores = [p.score for p in context["parsed"]]
        mean = ensemble_score(scores)
        used = [f"{a.model}: {p.score_label or '-'}" for a, p in zip(annotations, context["parsed"], strict=True)]
        explanation = f"Mean of the annotators' scores ({'; '.join(used)})." if used else ""
        ensemble = self._annotation(
            item_id, AnnotationKind.ENSEMBLE, supervisor, score=mean,
            score_label=score_to_label(mean) if mean is not None else "", score_explanation=explanation,
            parse_status=ParseStatus.OK if mean is not None else ParseStatus.FAILED,
            parse_problems=[note] if note else [],
        )
        self._save_spans(ensemble, spans)

    @staticmethod
    def _save_spans(annotation: Annotation, spans: list[ErrorSpan]) -> None:
        for position, span in enumerate(spans):
            span.annotation = annotation
            span.position = position
        ErrorSpan.objects.bulk_create(spans)

    def _finish(self, status: str, message: str) -> None:
        EvaluatorRun.objects.filter(pk=self.run.pk).update(
            status=status, message=message, heartbeat_at=timezone.now(),
            finished_at=timezone.now() if status != RunStatus.PAUSED else None,
        )


def _copy(span: ErrorSpan) -> ErrorSpan:
    return ErrorSpan(
        text=span.text, start=span.start, end=span.end, match=span.match, multi_part=span.multi_part,
        ambiguous=span.ambiguous, explanation=span.explanation, severity=span.severity, note=span.note,
    )


def run_claim(run_id: int, token: str) -> EvaluatorRun | None:
    """Take the run for this worker: pending/paused ones, or running ones whose worker stopped beating."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RUN_STALE_SECONDS)
    claimable = Q(status__in=[RunStatus.PENDING, RunStatus.PAUSED]) | Q(
        status=RunStatus.RUNNING, heartbeat_at__lt=stale
    )
    claimed = (
        EvaluatorRun.objects.filter(pk=run_id, cancel_requested=False)
        .filter(claimable)
        .update(
            status=RunStatus.RUNNING, heartbeat_at=now, celery_task_id=token, message="",
            started_at=Coalesce(F("started_at"), now),
        )
    )
    if not claimed:
        return None
    return EvaluatorRun.objects.select_related("aspect__task", "dataset").get(pk=run_id)


def run_execute(run_id: int, *, token: str = "sync", backend: OllamaBackend | None = None) -> str | None:
    """Claim and execute a run; return its final status, or None when another worker owns it."""
    run = run_claim(run_id, token)
    if run is None:
        return None
    return RunExecutor(run, backend).execute()


def runs_needing_recovery() -> list[int]:
    """Runs left 'running' by a worker that died (no heartbeat for RUN_STALE_SECONDS)."""
    return list(EvaluatorRun.objects.filter(status=RunStatus.RUNNING).values_list("pk", flat=True))
