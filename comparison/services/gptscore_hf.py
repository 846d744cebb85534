"""`gptscore-hf:MODEL` in a comparison job: every pending pair goes to the local scorer at once, in chunks that
are stored as they finish, so the scorer can sort and pack the whole job and a stopped job loses one chunk at most.

The precision is settled once per job and metric (the comparison's `precision` option, else
GPTSCORE_HF_PRECISION, resolved for this machine and model) and pinned in the job's options: a job resumed on
another machine computes the rest in the same precision. It is part of every call's cache key and of the
scores' storage key, so no job reuses or mixes in scores computed in another precision.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

from django.conf import settings

from comparison.engine.errors import ComparisonError
from comparison.engine.gptscore_hf import HFScore, HFScorer, scorer_precision
from comparison.engine.metrics import MetricSpec
from comparison.models import ComparisonJob
from comparison.services.gptscore_pairs import Pending, pending_pairs
from comparison.services.stored import (
    ItemRow,
    Progress,
    job_options_save,
    local_record,
    storage_key,
    store_scores,
)
from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMResult
from evaluation.llm.errors import BackendError
from evaluation.runs.ledger import cached_answers, store_answers
from evaluation.runs.scheduler import Attempt, AttemptRecord, Outcome, Step, plan_attempts
from jobs.lifecycle import job_beat

CHUNK = 512  # pairs per call of the scorer: the job's progress is written and its scores stored after each
BEAT_SECONDS = 10.0  # heartbeats while a chunk is scored (a slow CPU may take minutes over one)


def score_local(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
                count_call: Callable[[int], None]) -> None:
    """Store the scores of every pending pair: the ledger's answers first, then the scorer's, chunk by chunk."""
    try:
        precision = _settle_precision(job, spec)
    except ComparisonError as exc:  # the model's config cannot be read: the job fails with the reason
        raise BackendError(str(exc)) from None
    key = storage_key(spec.name, job.options)
    done, pending = pending_pairs(job, items, key)
    asks = [(pair, _attempt(spec.model, pair, precision)) for pair in pending]
    cached = cached_answers([attempt.key for _, attempt in asks])
    done += _store(key, [(pair, json.loads(cached[a.key])["mean"]) for pair, a in asks if a.key in cached])
    progress(spec.name, done)
    todo = [(pair, attempt) for pair, attempt in asks if attempt.key not in cached]
    if not todo:
        return
    scorer = _scorer(spec.model, precision)
    beat = _Beat(job.pk)
    tokens, seconds = 0, 0.0
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        began = time.perf_counter()
        try:
            scores = scorer.score([(p.context, p.output) for p, _ in chunk], on_batch=beat)
        except ComparisonError as exc:  # a text the model cannot take: no score is invented
            raise BackendError(str(exc)) from None
        wall = time.perf_counter() - began
        _ledger(spec.model, chunk, scores, wall)
        tokens, seconds = tokens + scorer.last_tokens, seconds + wall
        done += _store(key, [(pair, score.mean) for (pair, _), score in zip(chunk, scores, strict=True)])
        count_call(len(chunk))
        _record(job, spec, scorer, tokens=tokens, seconds=seconds)
        progress(spec.name, done)


def _settle_precision(job: ComparisonJob, spec: MetricSpec) -> str:
    """The job's precision for this metric: the pinned one, or the requested one resolved here and pinned."""
    pinned = local_record(job.options, spec.name).get("precision")
    if pinned:
        return str(pinned)
    requested = str(job.options.get("precision") or settings.GPTSCORE_HF_PRECISION)
    precision = str(scorer_precision(spec.model, requested))
    job.options.setdefault("gptscore_hf", {})[spec.name] = {"requested": requested, "precision": precision}
    job_options_save(job)
    return precision


def _attempt(model: str, pair: Pending, precision: str) -> Attempt:
    """The ledger entry of one pair: keyed by model, prompt and options, the precision among them."""
    options = {"backend": "transformers", "precision": precision, "scored_from": len(pair.context)}
    return plan_attempts(model, "", pair.context + pair.output, options, attempts=1, retry_temperature=0.0)[0]


def _scorer(model: str, precision: str) -> HFScorer:
    try:
        return HFScorer(model, precision=precision, batch_tokens=settings.GPTSCORE_HF_BATCH_TOKENS)
    except ComparisonError as exc:  # a model that cannot load or does not fit fails the job with the reason
        raise BackendError(str(exc)) from None


def _store(key: str, values: list[tuple[Pending, float]]) -> int:
    by_aspect: dict[str, list[tuple[int, float]]] = {}
    for pair, mean in values:
        by_aspect.setdefault(pair.aspect, []).append((pair.item, float(mean)))
    return sum(store_scores(key, aspect, rows) for aspect, rows in by_aspect.items())


def _ledger(model: str, chunk: list[tuple[Pending, Attempt]], scores: list[HFScore], wall: float) -> None:
    """Store each answer as an LLM call (the cache and the audit), its share of the chunk's time as duration."""
    each = int(wall * 1e9) // max(1, len(chunk))
    outcomes = []
    for index, ((pair, attempt), score) in enumerate(zip(chunk, scores, strict=True)):
        text = json.dumps({"mean": score.mean, "tokens": score.tokens})
        # The scored tokens are in the answer; the whole prompt's count is not measured (0), as on a server.
        result = LLMResult(text=text, model=model, digest="", prompt_tokens=0, completion_tokens=0,
                           total_duration_ns=each, load_duration_ns=0, prompt_eval_duration_ns=each,
                           eval_duration_ns=0, done_reason=None, attempts=1)
        step = Step(index, pair.context + pair.output, [attempt])
        record = AttemptRecord(0, attempt.key, attempt.options, text, result, each / 1e9)
        outcomes.append((model, "", Outcome(step, ParsedAnswer(status="ok"), [record], used=0)))
    store_answers(outcomes)


def _record(job: ComparisonJob, spec: MetricSpec, scorer: HFScorer, *, tokens: int, seconds: float) -> None:
    """Keep how the model scored in the job's options (the figures of this worker's run; the precision
    stays as pinned); the results and exports show it."""
    entry = job.options.setdefault("gptscore_hf", {}).setdefault(spec.name, {})
    entry.update({
        "device": scorer.device, "attention": scorer.attention, "batch_tokens": scorer.batch_tokens,
        "parameters": scorer.parameters, "tokens": tokens, "seconds": round(seconds, 3),
        "tokens_per_second": round(tokens / seconds) if seconds > 0 else None,
        "peak_gpu_memory_bytes": max(entry.get("peak_gpu_memory_bytes") or 0, scorer.peak_memory or 0) or None,
    })
    job_options_save(job)


class _Beat:
    """The job's heartbeat while the scorer works through a chunk (no cancel check: that ends a chunk)."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last = time.monotonic()

    def __call__(self, done: int) -> None:
        if time.monotonic() - self.last >= BEAT_SECONDS:
            job_beat(ComparisonJob, self.job_id)
            self.last = time.monotonic()
