"""What a job needs of an LLM server, whatever its kind: the one backend protocol and its result type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class LLMResult:
    """One answer with the server's accounting; durations are nanoseconds (Ollama reports them, the
    OpenAI-compatible backend fills in the wall time). `thinking` is a reasoning trace kept apart from `text`."""

    text: str
    model: str
    digest: str | None
    prompt_tokens: int
    completion_tokens: int
    total_duration_ns: int
    load_duration_ns: int
    prompt_eval_duration_ns: int
    eval_duration_ns: int
    done_reason: str | None
    attempts: int
    thinking: str = ""
    # The prompt tokens the server took from its prompt cache, as it reports them (None: it does not say), and
    # what `prompt_tokens` counts: the whole prompt (evaluated + cached), or maybe only the newly evaluated part
    # (some Ollama releases), and how the server guards against a cut (`evaluation.llm.counting`: it refuses an
    # over-long prompt, or its count says so, or nothing tells).
    cached_tokens: int | None = None
    count_whole: bool = True
    guard: str = "refusal"

    @property
    def whole_prompt_tokens(self) -> int | None:
        """The whole prompt as the server counted it, or None when its count may leave cached tokens out."""
        return self.prompt_tokens if self.count_whole else None

    @property
    def evaluated_tokens(self) -> int:
        """The prompt tokens the server evaluated (not taken from its cache)."""
        if self.count_whole:
            return max(self.prompt_tokens - (self.cached_tokens or 0), 0)
        return self.prompt_tokens


class LLMBackend(Protocol):
    """One server's client (`OllamaBackend`, `OpenAICompatBackend`): evaluator runs, DHP and the perturber
    use `chat`; `check` is the model preflight (requested model -> digest, "" where servers have none)."""

    kind: str
    url: str
    signals_landing: bool  # `chat` says `landing.landed()` once the server holds the request in a slot

    def check(self, models: Sequence[str]) -> dict[str, str]: ...

    def chat(
        self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None,
        think: bool | None = None,
    ) -> LLMResult: ...

    def context_length(self, model: str) -> int | None: ...

    def close(self) -> None: ...
