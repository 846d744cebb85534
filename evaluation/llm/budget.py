"""The context and answer budget of one (run, model): how many tokens a prompt takes, which `num_ctx` holds
the run's prompts, and whether a prompt fits at all. Pure functions, no server and no Django.

Prompts are counted before they are sent, with an estimate that errs high: every digit and punctuation mark
is a token (Llama-2, qwen2.5 and gemma2 split digits one by one: a box score is mostly digits), the rest one
token per three characters. Answered calls calibrate it: the server's count of a whole prompt that was not
cut tells how far off it was, and later estimates follow, never below what was seen plus a margin. The
estimate decides what is sent; it is never evidence that the server cut a prompt (`Estimator.read`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import deque
from dataclasses import dataclass

from .counting import COUNT, REFUSAL

CTX_STEP = 1024  # num_ctx is a multiple of this
MARGIN = 1.10  # calibrated estimates stay this much above the largest ratio seen
MIN_FACTOR = 0.2
CUT_SLACK = 8  # a count within this of the server's truncation signature means the prompt was cut
NUM_KEEP = 4  # Ollama's default num_keep: the head it keeps when it shifts an over-long prompt
RECENT_PROMPTS = 16  # prompts of a model remembered to tell a count that left a cached prefix out
SHARED_PREFIX_TOKENS = 64  # a shared prefix shorter than this is no reason to distrust a count
TEMPLATE_TOKENS = 32  # the chat template's own tokens around a message
_DIGIT_OR_MARK = re.compile(r"[0-9]|[^\w\s]")

PROMPT_TOO_LONG = "prompt_too_long"
ANSWER_CUT = "answer_cut"
UNPARSED = "unparsed"
TRUNCATION_UNCHECKED = "truncation_unchecked"  # a run's problem (once per server), never an answer's
STABLE_PREFIXES = (f"{PROMPT_TOO_LONG}:", f"{ANSWER_CUT}:", f"{UNPARSED}:")


def raw_estimate(text: str) -> int:
    """A high token count of `text`: digits and punctuation one each, other characters one per three."""
    marks = len(_DIGIT_OR_MARK.findall(text))
    return marks + math.ceil((len(text) - marks) / 3) + TEMPLATE_TOKENS


class Estimator:
    """Token estimates of one model's prompts, calibrated by the counts its server reports, and the reading of
    those counts (thread-safe)."""

    def __init__(self) -> None:
        self.factor = 1.0
        self._ratio: float | None = None
        self._lock = threading.Lock()
        self._recent: deque[str] = deque(maxlen=RECENT_PROMPTS)

    def tokens(self, text: str) -> int:
        return math.ceil(raw_estimate(text) * self.factor)

    def read(
        self, text: str, *, tokens: int, cached: int | None, whole: bool, guard: str, num_ctx: int | None
    ) -> Reading:
        """Read a server's count of the prompt `text`: whether the server says it cut the prompt, and whether
        a cut could not be told at all.

        A count is evidence of a cut only in the server's own signature (`guard` COUNT: about `num_ctx`, or
        `num_keep + num_ctx/2`), never as a ratio to our estimate: tokenizers differ (Llama 3 groups digits) and
        a prompt cache makes some releases count only what they evaluated. A count that may leave cached tokens
        out (`whole` false, or short by about the prefix an earlier prompt of this model shares with this one
        while no cached count is given) says nothing; then only a server that refuses over-long prompts is
        guarded. Whole counts calibrate the estimate."""
        shared = self._shared_with_recent(text)
        if guard != REFUSAL and num_ctx and tokens >= num_ctx - CUT_SLACK:
            return Reading(cut=True, unchecked=False)  # cut to the context (evaluated tokens alone cannot get there)
        if whole and cached is None and shared and tokens < self._expected(text) - self._expected(shared) / 2:
            whole = False  # short by about the shared prefix: the server counted what it evaluated
        if not whole or not tokens:
            return Reading(cut=False, unchecked=guard != REFUSAL)
        if guard == COUNT and num_ctx and abs(tokens - (NUM_KEEP + num_ctx // 2)) <= CUT_SLACK:
            return Reading(cut=True, unchecked=False)  # the context-shift limit of a newer Ollama
        self.observe(text, tokens)
        return Reading(cut=False, unchecked=False)

    def _expected(self, text: str) -> float:
        """The count a whole `text` should get: the raw estimate, scaled by what calibration has seen."""
        return raw_estimate(text) * (self._ratio if self._ratio is not None else 1.0)

    def _shared_with_recent(self, text: str) -> str:
        """The longest prefix `text` shares with a recent prompt of this model, if long enough to matter for a
        cache (else ""); remembers `text`."""
        with self._lock:
            recent = list(self._recent)
            self._recent.append(text)
        best = max((common_prefix(text, other) for other in recent), default=0)
        return text[:best] if raw_estimate(text[:best]) - TEMPLATE_TOKENS >= SHARED_PREFIX_TOKENS else ""

    def observe(self, text: str, prompt_eval_count: int) -> None:
        """Learn from a prompt the server counted whole (never from a cut one: its count is too small)."""
        if prompt_eval_count <= 0:
            return
        ratio = prompt_eval_count / raw_estimate(text)
        with self._lock:
            self._ratio = ratio if self._ratio is None else max(self._ratio, ratio)
            self.factor = min(1.0, max(MIN_FACTOR, self._ratio * MARGIN))


@dataclass(frozen=True)
class Reading:
    """What a server's prompt count says: `cut` (the server cut the prompt) and `unchecked` (nothing could tell
    a cut: the server cuts silently and its count may leave cached tokens out)."""

    cut: bool
    unchecked: bool


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b` (a binary search over slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def unchecked_problem(server: str) -> str:
    return f"{TRUNCATION_UNCHECKED}: {server}"


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
