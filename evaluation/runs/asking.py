"""Ask one model many prompts on one server (DHP scoring, the perturber, GPTScore over a server or a local
model), the way an evaluator run asks: the lane scheduler, the ledger as cache and audit, the retry policy.

Every answer is stored in the ledger the moment it arrives. This is the single-lane case of
`evaluation.runs.lanes.LaneScheduler`: a server that stops answering has nowhere to hand its work to, so
its error stops the job (the policy pauses it) once the answers that arrived are stored.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMBackend
from evaluation.llm.budget import ModelBudget
from evaluation.runs.backends import retry_policy
from evaluation.runs.lanes import Feed, Lane, LaneScheduler
from evaluation.runs.ledger import call_ids, fill_cache, store_answers
from evaluation.runs.scheduler import Outcome, Step, plan_attempts


@dataclass(frozen=True)
class Ask:
    """One prompt with its options; `ref` is whatever the caller needs to file the answer."""

    ref: Any
    prompt: str
    options: Mapping[str, Any]
    group: Hashable | None = None  # prompts sharing a long prefix (evaluation.runs.cache_order)


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
    on_batch: Callable[[list[Answered], bool], None],
    answer_tokens: int | None = None,
) -> None:
    """Ask every prompt (cache first), `parallel` at a time, an unparseable answer again as the retry policy
    says; `on_batch(answered, interrupted)` files them and
    may raise to stop (a cancelled job). Backend errors propagate after the answers so far are handed over.

    The prompts go through the model's context budget as an evaluator run's do: num_ctx sized to the longest,
    the answer budget `answer_tokens` (LLM_ANSWER_TOKENS), prompts that cannot fit not sent (their outcome
    fails with prompt_too_long:). With `answer_tokens=0` (GPTScore: nothing is generated) only the fit is
    checked and the options are left as they are."""
    budget = job_budget(backend, model, asks, answer_tokens)
    policy = retry_policy()
    steps = []
    for index, ask in enumerate(asks):
        options = {k: v for k, v in ask.options.items() if v is not None}
        if answer_tokens != 0:
            options = budget.options(options)
        planned = plan_attempts(model, digest, ask.prompt, options, attempts=policy.answer_attempts,
                                retry_temperature=policy.retry_temperature)
        steps.append(Step(index, ask.prompt, planned, budget=budget, group=ask.group))
    fill_cache(steps)

    def store(arrived: list[tuple[Feed, Outcome]]) -> None:
        store_answers([(model, digest, outcome) for _, outcome in arrived])

    def batch(_feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        keys = [o.attempts[-1].key for o in outcomes if o.attempts]
        calls = call_ids(keys)
        answered = [
            Answered(asks[o.step.item_id], o, calls.get(o.attempts[-1].key) if o.attempts else None,
                     sum(1 for a in o.attempts if a.result is not None))
            for o in outcomes
        ]
        on_batch(answered, interrupted)

    feed = Feed(model, parse, grouped=settings.LLM_CACHE_ORDER)
    feed.add(steps)
    LaneScheduler([Lane(backend.url, backend, [feed])], parallel=parallel, on_answers=store, on_batch=batch,
                  on_server_lost=_nowhere_else).run()


def _nowhere_else(server: str, error: BaseException, feeds: list[Feed]) -> dict[str, str]:
    raise error  # one server: the job stops, as the retry policy says


def job_budget(backend: LLMBackend, model: str, asks: Sequence[Ask], answer_tokens: int | None) -> ModelBudget:
    """One budget for a job's prompts to one model: the model's length from its server, num_ctx pinned by
    OLLAMA_NUM_CTX or sized to the longest prompt."""
    pinned = next((int(a.options["num_ctx"]) for a in asks if a.options.get("num_ctx")), None)
    lookup = getattr(backend, "context_length", None)
    budget = ModelBudget(
        limit=lookup(model) if lookup is not None else None,
        answer_tokens=settings.LLM_ANSWER_TOKENS if answer_tokens is None else max(answer_tokens, 1),
        pinned=pinned,
    )
    budget.settle([ask.prompt for ask in asks])
    return budget
