"""Ask one model many prompts through the run scheduler, with the ledger as cache and audit (DHP scoring,
the perturber, GPTScore).

Every answer is stored in the ledger the moment it arrives. Parallelism and the retry of unparseable
answers are the evaluation runs' own (`evaluation.runs.scheduler.run_phase`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMBackend
from evaluation.runs.ledger import call_ids, fill_cache, store_answers
from evaluation.runs.scheduler import Outcome, Step, plan_attempts, run_phase

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


def ask_many(
    backend: LLMBackend,
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
        calls = call_ids(keys)
        answered = [
            Answered(asks[o.step.item_id], o, calls.get(o.attempts[-1].key) if o.attempts else None,
                     sum(1 for a in o.attempts if a.result is not None))
            for o in outcomes
        ]
        on_batch(answered, interrupted)

    run_phase(backend, model, steps, parse=parse, parallel=parallel,
              on_answer=lambda outcome: store_answers([(model, digest, outcome)]), on_batch=batch)
