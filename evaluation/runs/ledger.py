"""The one ledger of LLM calls: every answer any job gets (evaluator runs, DHP scoring and perturbation,
GPTScore) is stored here as an `LLMCall` the moment it arrives, and read back here as the cache.

An answer is keyed by (model, digest, prompt, options) (`scheduler.cache_key`), so a rerun or a resumed job
asks nothing whose answer is stored, whichever kind of job stored it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from evaluation.engine.repair import repair_key
from evaluation.models import LLMCall
from evaluation.runs.scheduler import Outcome, Step

CACHE_CHUNK = 1000  # cache keys per query

log = logging.getLogger(__name__)


def _patiently(write: Callable[[], object]) -> None:
    """Run `write`, retrying while the database cannot be reached (a restart, a failover) for up to
    RUN_DB_PATIENCE_SECONDS: an answer that arrived must be stored, or the resumed job would ask for it again."""
    deadline = time.monotonic() + settings.RUN_DB_PATIENCE_SECONDS
    delay = 0.25
    while True:
        try:
            write()
            return
        except (OperationalError, InterfaceError) as exc:
            if connection.in_atomic_block or time.monotonic() >= deadline:
                raise
            log.warning("storing LLM answers: database unreachable (%s); retrying in %.1f s", exc, delay)
            connection.close()  # a broken connection is replaced on the next query
            time.sleep(delay)
            delay = min(delay * 2, 4.0)


def store_answers(answers: Iterable[tuple[str, str, Outcome]]) -> None:
    """Store the new answers of finished steps, given as (model, digest, outcome), in one query."""
    rows = [
        LLMCall(
            cache_key=a.key, model=model, model_digest=digest, prompt=a.prompt or outcome.step.prompt,
            options=a.options,
            response=a.text, prompt_tokens=r.prompt_tokens, cached_tokens=r.cached_tokens,
            completion_tokens=r.completion_tokens,
            total_duration_ns=r.total_duration_ns, load_duration_ns=r.load_duration_ns,
            prompt_eval_duration_ns=r.prompt_eval_duration_ns, eval_duration_ns=r.eval_duration_ns,
            wall_seconds=a.wall, attempts=r.attempts, done_reason=(r.done_reason or "")[:16], thinking=r.thinking,
        )
        for model, digest, outcome in answers
        for a in outcome.attempts
        if (r := a.result) is not None
    ]
    if rows:
        _patiently(lambda: LLMCall.objects.bulk_create(rows, ignore_conflicts=True))


def cached_answers(keys: Sequence[str]) -> dict[str, str]:
    """cache key -> stored answer, for those of `keys` the ledger holds whole (an answer cut at the answer
    budget is no answer to reuse: the job asks again, with a longer budget if it is cut again)."""
    cached: dict[str, str] = {}
    for start in range(0, len(keys), CACHE_CHUNK):
        chunk = keys[start : start + CACHE_CHUNK]
        cached.update(
            LLMCall.objects.filter(cache_key__in=chunk, status=LLMCall.Status.OK).exclude(done_reason="length")
            .values_list("cache_key", "response")
        )
    return cached


def call_ids(keys: Sequence[str]) -> dict[str, int]:
    """cache key -> LLMCall id, for linking a job's rows to the calls that answered them."""
    return dict(LLMCall.objects.filter(cache_key__in=list(keys)).values_list("cache_key", "pk"))


def fill_cache(steps: list[Step]) -> list[Step]:
    """Fill in the stored answers of every attempt the steps may make: they will not be asked again."""
    cached = cached_answers([attempt.key for step in steps for attempt in step.attempts])
    for step in steps:
        step.cached = {a.key: cached[a.key] for a in step.attempts if a.key in cached}
    # A stored answer's repair (asked when it could not be read) is stored under a key of its own.
    repairs = [repair_key(key, text) for step in steps for key, text in step.cached.items()]
    found = cached_answers(repairs) if repairs else {}
    for step in steps:
        step.cached.update({k: found[k] for key, text in list(step.cached.items())
                            if (k := repair_key(key, text)) in found})
    return steps
