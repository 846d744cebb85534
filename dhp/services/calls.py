"""Ask one Ollama model many prompts through the run scheduler, with the shared call cache and audit.

Every answer is an `evaluation.LLMCall` row keyed by (model, digest, prompt, options), stored the moment it
arrives, so a rerun or a resumed job asks nothing whose answer is stored. Parallelism and the retry of
unparseable answers are the evaluation runs' own (`evaluation.runs.scheduler.run_phase`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.models import LLMCall
from evaluation.runs.scheduler import Outcome, Step, plan_attempts, run_phase
from evaluation.runs.steps import fill_cache

RETRY_TEMPERATURE = 0.1


@dataclass(frozen=True)
class Ask:
    """One prompt with its options; `ref` is whatever the caller needs to file the answer."""

    ref: Any
    prompt: str
    options: Mapping[str, Any]


@dataclass
class Answered:
    ask: Ask
    outcome: Outcome
    call_id: int | None  # the LLMCall of the answer that counts (the last attempt)
    fresh: int  # attempts sent to the server (not from the cache)


def _store(model: str, digest: str, outcome: Outcome) -> None:
    fresh = [(a, a.result) for a in outcome.attempts if a.result is not None]
    if not fresh:
        return
    LLMCall.objects.bulk_create(
        [
            LLMCall(
                cache_key=a.key, model=model, model_digest=digest, prompt=outcome.step.prompt, options=a.options,
                response=a.text, prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
                total_duration_ns=r.total_duration_ns, load_duration_ns=r.load_duration_ns,
                prompt_eval_duration_ns=r.prompt_eval_duration_ns, eval_duration_ns=r.eval_duration_ns,
                wall_seconds=a.wall, attempts=r.attempts,
            )
            for a, r in fresh
        ],
        ignore_conflicts=True,
    )


def ask_many(
    backend: OllamaBackend,
    model: str,
    digest: str,
    asks: Sequence[Ask],
    *,
    parse: Callable[[str], ParsedAnswer],
    parallel: int,
    attempts: int,
    on_batch: Callable[[list[Answered], bool], None],
) -> None:
    """Ask every prompt (cache first), `parallel` at a time; `on_batch(answered, interrupted)` files them and
    may raise to stop (a cancelled job). Backend errors propagate after the answers so far are handed over."""
    steps = [
        Step(index, ask.prompt, plan_attempts(model, digest, ask.prompt, ask.options, attempts=attempts,
                                              retry_temperature=RETRY_TEMPERATURE))
        for index, ask in enumerate(asks)
    ]
    fill_cache(steps)

    def batch(outcomes: list[Outcome], interrupted: bool) -> None:
        keys = [o.attempts[-1].key for o in outcomes if o.attempts]
        calls = dict(LLMCall.objects.filter(cache_key__in=keys).values_list("cache_key", "pk"))
        answered = [
            Answered(asks[o.step.item_id], o, calls.get(o.attempts[-1].key) if o.attempts else None,
                     sum(1 for a in o.attempts if a.result is not None))
            for o in outcomes
        ]
        on_batch(answered, interrupted)

    run_phase(backend, model, steps, parse=parse, parallel=parallel,
              on_answer=lambda outcome: _store(model, digest, outcome), on_batch=batch)
