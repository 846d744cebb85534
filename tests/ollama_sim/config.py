"""Configuration of the simulated Ollama server: models, timing, scripted replies and faults."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

COUNT_MODES = ("full", "evaluated", "zero")
FaultKind = Literal["error", "drop", "slow", "garbage", "stream_error"]
FAULT_KINDS: tuple[str, ...] = ("error", "drop", "slow", "garbage", "stream_error")

DEFAULT_GARBAGE = "}}} lorem ipsum ;; Severity: banana ### <unk> <unk>"
# A reasoning trace with draft lines that look like an answer (real traces do: REAL_SERVERS.md, thinking models).
DEFAULT_TRACE = ("Let me look at the text first. Draft:\nScore: 1\nReason: maybe everything is wrong.\n"
                 "Overall score: Poor\nError 1:\nLocation: phantom\nExplanation: a draft error\nSeverity: 5\n"
                 "On reflection the draft was too harsh.")


def digest_for(name: str) -> str:
    """Return a stable sha256-looking hex digest for a model name (what `ollama list` shows)."""
    return hashlib.sha256(f"sim-model:{normalize_name(name)}".encode()).hexdigest()


def normalize_name(name: str) -> str:
    """Return the short canonical form Ollama lists a model under: lower case, `:latest` if untagged.

    `registry.ollama.ai/library/` is dropped because that is how Ollama prints official models.
    """
    name = name.strip().lower()
    for prefix in ("registry.ollama.ai/library/", "library/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


@dataclass(frozen=True)
class SimRequest:
    """What an answer function sees of one chat/generate request."""

    model: str
    endpoint: str
    prompt: str
    messages: tuple[Mapping[str, Any], ...]
    system: str | None
    options: Mapping[str, Any]


AnswerFn = Callable[[SimRequest], "str | None"]
LogprobFn = Callable[[str, str], float]  # (text before the token, token) -> log-probability


@dataclass(frozen=True)
class ReplyRule:
    """A scripted reply: used when the model (if given) and the prompt substring (if given) match."""

    reply: str
    model: str | None = None
    contains: str | None = None

    def matches(self, model: str, prompt: str) -> bool:
        if self.model is not None and normalize_name(self.model) != normalize_name(model):
            return False
        return self.contains is None or self.contains in prompt


@dataclass(frozen=True)
class FaultRule:
    """A deterministic fault on chat/generate requests.

    A rule counts the requests it could apply to (its `model`, or all models) in arrival order,
    1-based. It fires on request number k when k is in `nth`, or k <= `first`, or a draw of its own
    `random.Random(seed)` is below `rate`. A rule with none of the three set fires on every request.

    Kinds: `error` answers HTTP `status` with {"error": message}; `drop` closes the socket without an
    answer; `slow` adds `delay` seconds; `garbage` replaces the reply text with `text`;
    `stream_error` sends half the reply and then an {"error": message} line (HTTP 500 when the
    request does not stream). `error` and `drop` strike on arrival, or after the simulated
    generation time when `after_call` is set.
    """

    kind: FaultKind
    model: str | None = None
    nth: tuple[int, ...] = ()
    first: int = 0
    rate: float = 0.0
    seed: int = 0
    status: int = 500
    message: str = "simulated server failure"
    delay: float = 0.0
    text: str = DEFAULT_GARBAGE
    after_call: bool = False

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {', '.join(FAULT_KINDS)}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")
        object.__setattr__(self, "nth", tuple(int(n) for n in self.nth))

    @property
    def always(self) -> bool:
        return not self.nth and self.first <= 0 and self.rate <= 0.0

    def applies_to(self, model: str) -> bool:
        return self.model is None or normalize_name(self.model) == normalize_name(model)


@dataclass(frozen=True)
class SimConfig:
    """Everything the simulator does; JSON-serialisable except `answer` (in-process only).

    `models` maps a model name to its digest; a list of names in JSON gets digests from `digest_for`.
    Seconds are floats. `parallel` is the number of slots of each loaded model, `max_loaded` how
    many models fit in memory at once.
    """

    models: dict[str, str] = field(default_factory=lambda: {"sim-annotator": digest_for("sim-annotator")})
    swap_cost: float = 0.0
    max_loaded: int = 1
    call_time: float = 0.0
    parallel: int = 1
    default_num_ctx: int = 4096
    default_keep_alive: str | float = "5m"
    rules: tuple[ReplyRule, ...] = ()
    faults: tuple[FaultRule, ...] = ()
    version: str = "0.12.0"
    answer: AnswerFn | None = None
    logprob: LogprobFn | None = None
    # /v1/completions with echo, as real servers differ (REAL_SERVERS.md, "GPTScore"): "yes" echoes
    # the prompt's tokens with log-probabilities (vLLM); "rejected" answers 400 "Only no echo is supported"
    # (llama.cpp server-common.cpp); "ignored" drops echo and logprobs silently, logprobs null (TGI
    # router/src/lib.rs CompletionRequest); "shifted" echoes them with each value and top token taken from the
    # position after it, as llama-cpp-python 0.3.36 does for a model that adds no BOS (llama.py,
    # `_create_completion`: the logits from position 0 zipped with the tokens, only a leading BOS dropped).
    # `bos_text` is the BOS token's text vLLM puts first in the
    # echoed tokens and counts in text_offset ("<s>", "<|begin_of_text|>"; completion/serving.py).
    echo: str = "yes"
    bos_text: str = ""
    # Real-server behaviour (profiles.py): "" keeps the simulator kind (no context limit, no thinking).
    profile: str = ""
    context_length: int = 8192  # every model's trained context (/api/show, /v1/models, /props)
    thinking_models: tuple[str, ...] = ()  # these write a trace before the answer
    thinking_text: str = DEFAULT_TRACE
    oom_models: tuple[str, ...] = ()  # these do not fit in memory: 500 "model requires more system memory"
    # Time from tokens (0: off; call_time still adds): prompt tokens and generated tokens per second, load
    # seconds per GB of weights (on top of swap_cost).
    prompt_tokens_per_second: float = 0.0
    tokens_per_second: float = 0.0
    load_seconds_per_gb: float = 0.0
    # Prompt caches (prompt_cache.py): cache slots per loaded model (0: no cache; Ollama and llama.cpp take one
    # per parallel request, so at least `parallel`; vLLM's block cache holds cache_slots x context_length
    # tokens). Cached tokens cost no prompt time. `count` is what prompt_eval_count reports: "full" (the whole
    # prompt; with `prompt_eval_cached_count` beside it from 0.33.0, PR #17943), "evaluated" (only what was
    # evaluated: 0.30 on llama-server before PR #16428) or "zero" (left out for a cached prompt: the 2024
    # releases, ollama #2068, #3427).
    cache_slots: int = 0
    count: str = "full"
    # The `response_format` types an OpenAI-compatible request may name (empty: any). llama-cpp-python 0.3.36
    # takes "text" and "json_object" only (llama_types.py, ChatCompletionRequestResponseFormat: a Literal; a
    # "schema" beside "json_object" becomes its grammar, llama_chat_format.py) and answers any other type with
    # HTTP 500 and the validation error in the message (server/errors.py, RouteErrorHandler).
    response_format_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _coerce_models(self.models))
        object.__setattr__(self, "rules", tuple(_coerce(ReplyRule, r) for r in self.rules))
        object.__setattr__(self, "faults", tuple(_coerce(FaultRule, f) for f in self.faults))
        if self.max_loaded < 1:
            raise ValueError("max_loaded must be at least 1")
        if self.parallel < 1:
            raise ValueError("parallel must be at least 1")
        if self.echo not in ("yes", "rejected", "ignored", "shifted"):
            raise ValueError(f"echo must be yes, rejected, ignored or shifted, got {self.echo!r}")
        if self.count not in COUNT_MODES:
            raise ValueError(f"count must be one of {', '.join(COUNT_MODES)}, got {self.count!r}")
        if self.cache_slots < 0:
            raise ValueError("cache_slots cannot be negative")
        if self.swap_cost < 0 or self.call_time < 0:
            raise ValueError("swap_cost and call_time cannot be negative")
        from .profiles import PROFILES

        if self.profile not in PROFILES:
            known = ", ".join(p or "(none)" for p in PROFILES)
            raise ValueError(f"unknown profile {self.profile!r}; expected one of {known}")
        object.__setattr__(self, "thinking_models", tuple(normalize_name(m) for m in self.thinking_models))
        object.__setattr__(self, "oom_models", tuple(normalize_name(m) for m in self.oom_models))
        object.__setattr__(self, "response_format_types", tuple(self.response_format_types))

    def digest(self, model: str) -> str | None:
        return self.models.get(normalize_name(model))

    def replace(self, **changes: Any) -> SimConfig:
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown SimConfig field(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SimConfig:
        """Build a config from its JSON form; unknown keys are an error so typos do not pass silently."""
        for name in _CALLABLES:
            if name in data:
                raise ValueError(f"`{name}` is a Python callable and cannot come from JSON")
        return cls().replace(**dict(data))

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _CALLABLES}
        data["rules"] = [_drop_defaults(r) for r in self.rules]
        data["faults"] = [_drop_defaults(f) for f in self.faults]
        data["thinking_models"] = list(self.thinking_models)
        data["oom_models"] = list(self.oom_models)
        data["response_format_types"] = list(self.response_format_types)
        data["models"] = dict(self.models)
        return data


_CALLABLES = frozenset({"answer", "logprob"})


def _coerce_models(models: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    if isinstance(models, Mapping):
        pairs = [(name, digest) for name, digest in models.items()]
    else:
        pairs = [(name, digest_for(name)) for name in models]
    result: dict[str, str] = {}
    for name, digest in pairs:
        digest = digest.removeprefix("sha256:")
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError(f"digest of model {name!r} must be 64 lowercase hex digits, got {digest!r}")
        result[normalize_name(name)] = digest
    return result


def _coerce(cls: type[Any], value: Any) -> Any:
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"unknown {cls.__name__} field(s): {', '.join(sorted(unknown))}")
        return cls(**value)
    raise TypeError(f"expected {cls.__name__} or a dict, got {type(value).__name__}")


def _drop_defaults(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.default is dataclasses.MISSING or value != f.default:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out
