"""The context and answer budget of one (run, model): how many tokens a prompt takes, which `num_ctx` holds
the run's prompts, and whether a prompt fits at all. Pure functions, no server and no Django.

Prompts are counted before they are sent, with an estimate that errs high: every digit and punctuation mark
is a token (Llama-2, qwen2.5 and gemma2 split digits one by one: a box score is mostly digits), the rest one
token per three characters. Answered calls calibrate it: the server's `prompt_eval_count` of a prompt that
was not cut tells how far off it was, and later estimates follow, never below what was seen plus a margin.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass

CTX_STEP = 1024  # num_ctx is a multiple of this
MARGIN = 1.10  # calibrated estimates stay this much above the largest ratio seen
MIN_FACTOR = 0.2
MIN_PLAUSIBLE_RATIO = 0.3  # before calibration: no tokenizer counts fewer than this share of the raw estimate
CUT_SHARE = 0.75  # a count under this share of the expected one means the prompt was cut
CUT_SLACK = 8  # a count within this of num_ctx means the prompt was cut to the context
TEMPLATE_TOKENS = 32  # the chat template's own tokens around a message
_DIGIT_OR_MARK = re.compile(r"[0-9]|[^\w\s]")

PROMPT_TOO_LONG = "prompt_too_long"
ANSWER_CUT = "answer_cut"
UNPARSED = "unparsed"
STABLE_PREFIXES = (f"{PROMPT_TOO_LONG}:", f"{ANSWER_CUT}:", f"{UNPARSED}:")


def raw_estimate(text: str) -> int:
    """A high token count of `text`: digits and punctuation one each, other characters one per three."""
    marks = len(_DIGIT_OR_MARK.findall(text))
    return marks + math.ceil((len(text) - marks) / 3) + TEMPLATE_TOKENS


class Estimator:
    """Token estimates of one model's prompts, calibrated by the counts its server reports (thread-safe)."""

    def __init__(self) -> None:
        self.factor = 1.0
        self._ratio: float | None = None
        self._lock = threading.Lock()

    def tokens(self, text: str) -> int:
        return math.ceil(raw_estimate(text) * self.factor)

    def cut(self, text: str, prompt_eval_count: int | None, num_ctx: int | None) -> bool:
        """Whether the server cut the prompt, judged by the tokens it says it kept: about `num_ctx` (older
        Ollama keeps the head and the tail up to the context), or clearly fewer than this prompt should have
        (newer Ollama keeps about half the context) once answered calls have shown what to expect."""
        if not prompt_eval_count:
            return False
        if num_ctx and prompt_eval_count >= num_ctx - CUT_SLACK:
            return True
        expected = raw_estimate(text) * (self._ratio if self._ratio is not None else MIN_PLAUSIBLE_RATIO)
        return prompt_eval_count < expected * CUT_SHARE

    def observe(self, text: str, prompt_eval_count: int) -> None:
        """Learn from a prompt the server counted whole (never from a cut one: its count is too small)."""
        if prompt_eval_count <= 0:
            return
        ratio = prompt_eval_count / raw_estimate(text)
        with self._lock:
            self._ratio = ratio if self._ratio is None else max(self._ratio, ratio)
            self.factor = min(1.0, max(MIN_FACTOR, self._ratio * MARGIN))


def num_ctx_for(longest_prompt: int, answer_tokens: int, *, model_limit: int | None, pinned: int | None = None) -> int:
    """The context to ask for: `pinned` when set, else the smallest multiple of CTX_STEP holding the longest
    prompt plus the answer budget (thinking included), capped at the model's trained length."""
    if pinned:
        return pinned
    wanted = max(CTX_STEP, math.ceil((longest_prompt + answer_tokens) / CTX_STEP) * CTX_STEP)
    return min(wanted, model_limit) if model_limit else wanted


@dataclass(frozen=True)
class Fit:
    """Whether a prompt can be sent within `num_ctx`, and the answer budget left for it."""

    tokens: int
    limit: int
    answer_tokens: int

    @property
    def fits(self) -> bool:
        return self.tokens < self.limit and self.answer_tokens > 0

    @property
    def problem(self) -> str:
        return f"{PROMPT_TOO_LONG}: ~{self.tokens} tokens, limit {self.limit}"


MIN_ANSWER_TOKENS = 256  # below this an answer cannot hold even one error and a score


def fit(prompt_tokens: int, *, num_ctx: int, answer_tokens: int) -> Fit:
    """Fit a prompt into `num_ctx`: the answer gets what the prompt leaves, at most `answer_tokens`; a prompt
    that leaves less than MIN_ANSWER_TOKENS does not fit."""
    room = num_ctx - prompt_tokens
    answer = min(answer_tokens, room) if room >= min(MIN_ANSWER_TOKENS, answer_tokens) else 0
    return Fit(prompt_tokens, num_ctx, answer)


def answer_cut_problem(completion_tokens: int) -> str:
    return f"{ANSWER_CUT}: {completion_tokens} tokens"


class ModelBudget:
    """The budget of one (run, model): its `num_ctx` (grown, never shrunk, to hold every prompt planned so
    far; or pinned), the answer budget, and the estimator its answered calls calibrate (thread-safe).

    `limit` is the model's trained context length (None when the server does not say)."""

    def __init__(
        self, *, limit: int | None, answer_tokens: int, pinned: int | None = None, num_ctx: int | None = None,
        estimator: Estimator | None = None, think: bool | None = None,
    ) -> None:
        self.limit = limit
        self.think = think  # the preset's thinking switch for this model (None: the server's default)
        self.answer_tokens = answer_tokens
        self.pinned = pinned
        self.num_ctx = pinned or num_ctx or 0
        self.estimator = estimator or Estimator()

    @property
    def ceiling(self) -> int | None:
        """The largest context a prompt may use: the pinned one, else the model's."""
        return self.pinned or self.limit

    def settle(self, prompts: list[str], *, extra_tokens: int = 0) -> int:
        """Grow num_ctx to hold the longest of `prompts` (plus `extra_tokens`, for prompts still to be written
        in full) that can fit at all, with its answer; return it."""
        if self.pinned:
            return self.pinned
        longest = 0
        for prompt in prompts:
            tokens = min(self.estimator.tokens(prompt) + extra_tokens, self.ceiling or 1 << 30)
            if self.ceiling is None or fit(tokens, num_ctx=self.ceiling, answer_tokens=self.answer_tokens).fits:
                longest = max(longest, tokens)
        wanted = num_ctx_for(longest, self.answer_tokens, model_limit=self.limit)
        self.num_ctx = max(self.num_ctx, wanted)
        return self.num_ctx

    def check(self, prompt: str) -> Fit:
        """Whether `prompt` fits the context this budget has settled on (settle first)."""
        return fit(self.estimator.tokens(prompt), num_ctx=self.num_ctx or self.ceiling or 0,
                   answer_tokens=self.answer_tokens)

    def options(self, base: dict) -> dict:
        """`base` with this budget's num_ctx and answer budget (the same for every prompt: they key the cache)."""
        return {**base, "num_ctx": self.num_ctx, "num_predict": self.answer_tokens}
