"""One step of a run and how it is asked: the cache keys of its attempts, and retries of unparseable answers.

A step is one (item, model) request: its prompt, the cache key and options of every attempt it may
need (known up front, so the cache is asked once), and the answers the cache already holds. `perform`
asks (or reads the cache) until an answer parses; `lanes` runs the steps of every job on its servers (an
evaluator run's several, `asking`'s one). No database and no Django here.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluation.engine.parsing import ParsedAnswer
from evaluation.engine.repair import needs_repair, repair_key, repair_prompt, repaired_is_better
from evaluation.llm.base import LLMBackend, LLMResult
from evaluation.llm.budget import PROMPT_TOO_LONG, ModelBudget, answer_cut_problem
from evaluation.llm.errors import PromptTooLong
from evaluation.llm.landing import listening
from evaluation.runs.attempts import AttemptKind, longer_number, read_number, repair_number, try_number
from evaluation.runs.cache_order import InTransit

BATCH_SIZE = 25  # finished steps per storing batch
BATCH_SECONDS = 2.0  # and at least this often, so the heartbeat and cancel checks keep going


def cache_key(model: str, digest: str, prompt: str, options: Mapping[str, Any]) -> str:
    """The cache identity of a call: the same model build, prompt and options give the same answer."""
    blob = json.dumps({"model": model, "digest": digest, "prompt": prompt, "options": options}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def attempt_options(base: Mapping[str, Any], attempt: int, retry_temperature: float) -> dict[str, Any]:
    """Options of try `attempt`: the run's own first, then slightly warmer with a shifted seed."""
    if attempt == 0:
        return dict(base)
    return {**base, "temperature": retry_temperature, "seed": int(base.get("seed", 0)) + attempt}


@dataclass(frozen=True)
class Attempt:
    key: str
    options: dict[str, Any]


def plan_attempts(
    model: str, digest: str, prompt: str, base: Mapping[str, Any], *, attempts: int, retry_temperature: float
) -> list[Attempt]:
    """Every attempt a step may need, known up front so the cache can be asked for all of them at once."""
    planned = []
    for number in map(try_number, range(attempts)):
        options = attempt_options(base, number, retry_temperature)
        planned.append(Attempt(cache_key(model, digest, prompt, options), options))
    return planned


@dataclass
class Step:
    """One (item, model) request: its prompt, its possible attempts and what the cache holds for them;
    `budget` is the model's context budget in this job (None: send as planned)."""

    item_id: int
    prompt: str
    attempts: list[Attempt]
    cached: dict[str, str] = field(default_factory=dict)  # cache key -> stored answer
    repair: bool = False  # restate an unreadable answer once (evaluation.engine.repair)
    budget: ModelBudget | None = None
    group: Hashable | None = None  # steps sharing a long prompt prefix (cache_order; None: the prompt itself)


@dataclass(frozen=True)
class AttemptRecord:
    number: int  # the ledger's attempt number (evaluation.runs.attempts)
    key: str
    options: dict[str, Any]
    text: str
    result: LLMResult | None  # None when the answer came from the cache
    wall: float = 0.0
    prompt: str = ""  # a repair's own prompt; empty for the step's prompt

    @property
    def kind(self) -> AttemptKind:
        return read_number(self.number).kind


@dataclass
class Outcome:
    """A finished step: the attempts made (the last one's answer counts) and its parse; `problems` are the
    budget's (prompt_too_long:, answer_cut:), also listed first among `parsed.problems`."""

    step: Step
    parsed: ParsedAnswer
    attempts: list[AttemptRecord] = field(default_factory=list)
    used: int = -1  # which attempt's answer counts (a repair that reads worse leaves the first)
    repaired: bool = False
    problems: list[str] = field(default_factory=list)
    unchecked: str = ""  # the server whose count could not tell whether it cut this prompt (a run's problem)

    def fail(self, problem: str) -> Outcome:
        self.problems.append(problem)
        self.parsed = ParsedAnswer(status="failed", problems=[problem])
        return self

    @property
    def raw(self) -> str:
        return self.attempts[self.used].text if self.attempts else ""

    @property
    def retries(self) -> int:
        """Attempts made again because an answer did not parse (not those asked again with a longer budget)."""
        return len({read_number(a.number).attempt_try for a in self.attempts}) - 1 if self.attempts else 0


class StepInterrupted(Exception):
    """A step given up between attempts because the pass is stopping; its answers so far travel along."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__("pass stopped")
        self.outcome = outcome


@dataclass(frozen=True)
class Passage:
    """A request's place among its server's requests in transit (`cache_order.InTransit`); `after_earlier`:
    it opens a prefix group, so it goes once every request handed out before it holds a slot."""

    transit: InTransit
    ticket: int
    after_earlier: bool = False

    def land(self) -> None:
        self.transit.land(self.ticket)

    def hold(self) -> None:
        self.transit.hold(self.ticket)


def perform(
    backend: LLMBackend, model: str, step: Step, parse: Callable[[str], ParsedAnswer], stop: threading.Event,
    passage: Passage | None = None,
) -> Outcome:
    """Ask (or read the cache) until an answer parses or the attempts run out; backend errors propagate,
    except a prompt the server refuses as too long, which fails this step only.

    With a budget: a prompt that cannot fit is not sent; an answer the server cut at the answer budget is
    asked again once with twice the budget (within the context), and if still cut counts as partial at best;
    a prompt the server truncated is never parsed. `passage`: the request's ticket among its server's requests
    in transit; one that opens a prefix group first waits until those sent before it hold their slots."""
    if passage is None:
        return _perform(backend, model, step, parse, stop)
    if passage.after_earlier and not passage.transit.wait_for_earlier(passage.ticket, stop):
        passage.land()
        raise StepInterrupted(Outcome(step, ParsedAnswer()))
    try:
        with listening(passage.land):
            return _perform(backend, model, step, parse, stop)
    finally:
        # Ended (an answer, a cached one, a failure): the slot it leaves is kept for its group's next call until
        # the scheduler has decided (LaneScheduler._top_up lands or passes on the ticket).
        passage.hold()


def _perform(
    backend: LLMBackend, model: str, step: Step, parse: Callable[[str], ParsedAnswer], stop: threading.Event,
) -> Outcome:
    outcome = Outcome(step, ParsedAnswer())
    budget = step.budget
    if budget is not None and not budget.check(step.prompt).fits:
        return outcome.fail(_too_long(step, None))
    for number, attempt in enumerate(step.attempts):
        if stop.is_set():
            raise StepInterrupted(outcome)
        if attempt.key in step.cached:
            record = AttemptRecord(number, attempt.key, attempt.options, step.cached[attempt.key], None)
        else:
            try:
                record = _ask(backend, model, step, number, attempt)
            except PromptTooLong as exc:
                return outcome.fail(_too_long(step, exc))
        outcome.attempts.append(record)
        if budget is not None and record.result is not None:
            result = record.result
            num_ctx = int(attempt.options.get("num_ctx") or 0) or None
            reading = budget.estimator.read(step.prompt, tokens=result.prompt_tokens, cached=result.cached_tokens,
                                            whole=result.count_whole, guard=result.guard, num_ctx=num_ctx)
            if reading.unchecked:
                outcome.unchecked = backend.url
            if reading.cut:
                return outcome.fail(_too_long(step, None))
            if result.done_reason == "length":
                record = _ask_longer(backend, model, step, number, attempt, outcome) or record
                if record.result is not None and record.result.done_reason == "length":
                    outcome.problems.append(answer_cut_problem(record.result.completion_tokens))
        outcome.parsed, outcome.used = parse(record.text), len(outcome.attempts) - 1
        if outcome.problems:
            outcome.parsed.problems[:0] = outcome.problems
            if outcome.parsed.status == "ok":
                outcome.parsed.status = "partial"  # a cut answer is never whole
            break
        if step.repair and not outcome.repaired and record.text.strip() and needs_repair(outcome.parsed):
            _repair(backend, model, step, attempt, record.text, parse, outcome)
        if outcome.parsed.status != "failed":
            break
    return outcome


def _repair(backend: LLMBackend, model: str, step: Step, attempt: Attempt, text: str,
            parse: Callable[[str], ParsedAnswer], outcome: Outcome) -> None:
    """Ask the model once to restate `text` in our format; both answers stay among the attempts. A repair
    prompt (the prompt plus the answer) that would not fit the context is not sent."""
    outcome.repaired = True
    prompt, key = repair_prompt(step.prompt, text), repair_key(attempt.key, text)
    if step.budget is not None and not step.budget.check(prompt).fits:
        return
    number = repair_number(outcome.attempts[-1].number)
    if key in step.cached:
        fixed, result, wall = step.cached[key], None, 0.0
    else:
        began = time.monotonic()
        think = step.budget.think if step.budget is not None else None
        try:
            result = backend.chat(model, prompt, options=attempt.options, **({"think": think} if think is not None
                                                                              else {}))
        except PromptTooLong:
            return
        fixed, wall = result.text, time.monotonic() - began
    outcome.attempts.append(AttemptRecord(number, key, attempt.options, fixed, result, wall, prompt=prompt))
    parsed = parse(fixed)
    if repaired_is_better(outcome.parsed, parsed):
        outcome.parsed, outcome.used = parsed, len(outcome.attempts) - 1


def _ask(backend: LLMBackend, model: str, step: Step, number: int, attempt: Attempt) -> AttemptRecord:
    began = time.monotonic()
    think = step.budget.think if step.budget is not None else None
    extra = {"think": think} if think is not None else {}  # only a preset's setting is sent
    result = backend.chat(model, step.prompt, options=attempt.options, **extra)
    return AttemptRecord(number, attempt.key, attempt.options, result.text, result, time.monotonic() - began)


def _ask_longer(
    backend: LLMBackend, model: str, step: Step, number: int, attempt: Attempt, outcome: Outcome
) -> AttemptRecord | None:
    """Ask a cut answer again with twice the answer budget, as far as the context allows (its own cache key)."""
    budget = step.budget
    assert budget is not None
    room = budget.num_ctx - budget.estimator.tokens(step.prompt)
    longer = min(2 * int(attempt.options.get("num_predict") or budget.answer_tokens), room)
    if longer <= int(attempt.options.get("num_predict") or 0):
        return None
    options = {**attempt.options, "num_predict": longer}
    # Keyed from the cut attempt's key (which names model, build, prompt and options) and the new budget.
    again = Attempt(hashlib.sha256(f"{attempt.key}|num_predict={longer}".encode()).hexdigest(), options)
    if again.key in step.cached:
        record = AttemptRecord(longer_number(number), again.key, options, step.cached[again.key], None)
    else:
        try:
            record = _ask(backend, model, step, longer_number(number), again)
        except PromptTooLong:
            return None
    outcome.attempts.append(record)
    return record


def _too_long(step: Step, refused: PromptTooLong | None) -> str:
    budget = step.budget
    tokens = budget.estimator.tokens(step.prompt) if budget is not None else len(step.prompt) // 3
    limit = (budget.ceiling or budget.num_ctx) if budget is not None else None
    return f"{PROMPT_TOO_LONG}: ~{tokens} tokens, limit {limit or 'unknown'}"
