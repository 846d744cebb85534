"""A one-token request before any GPTScore work: does this server give prompt log-probabilities, on the right tokens?

Of the OpenAI-compatible servers vLLM (>= 0.5.2) and llama-cpp-python's echo the prompt with log-probabilities
(the latter one token off for a model that adds no BOS); the llama.cpp server rejects `echo` and TGI silently
returns none (REAL_SERVERS.md). Asking once, up front,
turns a job that would fail on its first item, or score nothing, into one clear refusal.
"""

from __future__ import annotations

from typing import Protocol

from .errors import BackendError, BackendUnavailable

WHAT_WORKS = (
    "GPTScore needs prompt log-probabilities: `echo` with `logprobs` on /v1/completions. vLLM >= 0.5.2 "
    "and llama-cpp-python's server give them; the llama.cpp server rejects `echo` and TGI returns no "
    "log-probabilities. For a local model without a server use the metric gptscore-hf:MODEL_PATH_OR_NAME."
)


SHIFTED = (
    "its echoed log-probabilities belong to the token after each one (llama-cpp-python does this for a model "
    "whose tokenizer adds no BOS token); set GPTSCORE_PREFIX to the model's BOS token (SmolLM2: <|im_start|>), "
    "which the server then strips and aligns on"
)


class _Scores(Protocol):
    url: str

    def echo_shifted(self, model: str, *, prefix: str = "") -> bool: ...


def logprob_preflight(backend: _Scores, model: str, *, prefix: str = "") -> None:
    """Raise BackendError naming what the server lacks unless it echoes one short text's log-probabilities, each
    on its own token (one request); BackendUnavailable (a server that is down) passes through unchanged."""
    try:
        shifted = backend.echo_shifted(model, prefix=prefix)
    except BackendUnavailable:
        raise
    except BackendError as exc:
        raise BackendError(f"GPTScore preflight of {model} at {backend.url}: the server lacks prompt log-probabilities "
                           f"({exc}). {WHAT_WORKS}") from None
    if shifted:
        raise BackendError(f"GPTScore preflight of {model} at {backend.url}: {SHIFTED}.")
