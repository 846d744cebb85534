"""A one-token request before any GPTScore work: does this server give prompt log-probabilities at all?

Of the OpenAI-compatible servers only vLLM (>= 0.5.2) echoes the prompt with log-probabilities; the
llama.cpp server rejects `echo` and TGI silently returns none (REAL_SERVERS.md). Asking once, up front,
turns a job that would fail on its first item, or score nothing, into one clear refusal.
"""

from __future__ import annotations

from typing import Protocol

from .errors import BackendError, BackendUnavailable

WHAT_WORKS = (
    "GPTScore needs prompt log-probabilities: `echo` with `logprobs` on /v1/completions. vLLM >= 0.5.2 "
    "gives them; the llama.cpp server rejects `echo` and TGI returns no log-probabilities. For a local "
    "model without a server use the metric gptscore-hf:MODEL_PATH_OR_NAME."
)


PREFLIGHT_CONTEXT, PREFLIGHT_TEXT = "Preflight:", " yes"


class _Scores(Protocol):
    url: str

    def text_logprobs(self, model: str, context: str, text: str) -> object: ...


def logprob_preflight(backend: _Scores, model: str) -> None:
    """Raise BackendError naming what the server lacks unless it echoes one short text's log-probabilities;
    BackendUnavailable (a server that is down) passes through unchanged."""
    try:
        backend.text_logprobs(model, PREFLIGHT_CONTEXT, PREFLIGHT_TEXT)
    except BackendUnavailable:
        raise
    except BackendError as exc:
        raise BackendError(f"GPTScore preflight of {model} at {backend.url}: the server lacks prompt log-probabilities "
                           f"({exc}). {WHAT_WORKS}") from None
