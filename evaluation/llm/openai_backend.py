"""Talk to an OpenAI-compatible server (vLLM, the llama.cpp server, TGI) through the official `openai` client.

Two uses share this one client: chat calls for evaluator runs (the same interface as `OllamaBackend`,
so a job can use either), and GPTScore, which needs the log-probability of every token of a *given*
text. Ollama cannot return those; an OpenAI-compatible `/v1/completions` endpoint can, when it is asked
to echo the prompt with `logprobs`. The server must support `echo` (vLLM does); one that ignores it
returns no prompt tokens, and `text_logprobs` then fails loudly instead of inventing a score.

These servers publish no weight digest, so the digest recorded for a model is "" and the cache keys
an answer by server-side model name, prompt and options only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from evaluation.engine.echo_tokens import EchoMismatch, scored_token_indices

from .errors import BackendError, BackendUnavailable, ModelMissing
from .ollama_backend import LLMResult, resolve_model

# Ollama-style option names (what our prompts and presets use) -> OpenAI request fields.
_STANDARD = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
             "num_predict": "max_tokens", "presence_penalty": "presence_penalty",
             "frequency_penalty": "frequency_penalty"}
# Sampling parameters vLLM and llama.cpp accept beyond OpenAI's own (sent in the request body as-is).
_EXTRA = {"top_k": "top_k", "min_p": "min_p", "repeat_penalty": "repetition_penalty"}
# Server-side settings with no per-request meaning here: accepted and dropped.
_IGNORED = frozenset({"num_ctx", "num_gpu", "num_thread", "keep_alive"})


def request_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split Ollama-style options into (OpenAI request fields, extra body fields); refuse unknown names."""
    unknown = sorted(set(options) - set(_STANDARD) - set(_EXTRA) - _IGNORED - {"format"})
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for an OpenAI-compatible server; known: "
            + ", ".join(sorted({*_STANDARD, *_EXTRA}))
        )
    fields = {_STANDARD[k]: v for k, v in options.items() if k in _STANDARD}
    extra = {_EXTRA[k]: v for k, v in options.items() if k in _EXTRA}
    if options.get("format") is not None:  # a structured answer (evaluation.engine.answer_schema)
        fields["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": "answer", "schema": options["format"]}}
    return fields, extra


@dataclass(frozen=True)
class TextLogprobs:
    """Log-probabilities of the tokens of one text, conditioned on the context before it."""

    model: str
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    attempts: int

    @property
    def mean(self) -> float:
        """GPTScore: the average token log-likelihood of the text."""
        return sum(self.logprobs) / len(self.logprobs)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"  # never the body: it is whatever the server chose to say
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class OpenAICompatBackend:
    """A blocking client of one OpenAI-compatible server, shared by a job's worker threads.

    Retries work as in `OllamaBackend`: `max_retries` retries after the first attempt, waiting
    `backoff * 2**(k-1)` seconds (at most `max_backoff`); a missing model (HTTP 404) fails at once.
    """

    kind = "openai"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = 300,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._client: openai.OpenAI | None = None
        self._opening = threading.Lock()

    @property
    def base_url(self) -> str:
        """The API root: the server URL with `/v1` appended unless it already ends with it."""
        return self.url if self.url.endswith("/v1") else f"{self.url}/v1"

    def _connection(self) -> openai.OpenAI:
        with self._opening:
            if self._client is None:
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.api_key or "no-key",  # local servers ignore it; the client insists on one
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                    max_retries=0,  # we retry ourselves, with the same policy as the Ollama backend
                )
            return self._client

    def close(self) -> None:
        with self._opening:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAICompatBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- model check -----------------------------------------------------------------------
    def list_models(self) -> list[str]:
        try:
            return [entry.id for entry in self._connection().models.list()]
        except openai.APIStatusError as exc:
            raise BackendError(f"The server at {self.url} refused to list its models ({_describe(exc)})") from exc
        except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError) as exc:
            raise BackendError(f"The server at {self.url} did not answer with an OpenAI model list") from exc
        except (openai.APIConnectionError, httpx.TransportError) as exc:
            raise BackendUnavailable(
                f"Cannot reach the OpenAI-compatible server at {self.url} ({_describe(exc)}). "
                "Check that it is running and that the URL is its address (with or without /v1).",
                url=self.url,
            ) from exc

    def check(self, models: Sequence[str]) -> dict[str, str]:
        """Return requested model -> "" (no digest exists); raise ModelMissing naming every absent model."""
        available = self.list_models()
        missing = [m for m in models if m not in available and resolve_model(m, available) is None]
        if missing:
            raise ModelMissing(missing, url=self.url)
        return {model: "" for model in models}

    # --- requests with retries -------------------------------------------------------------
    def _retrying(self, model: str, send: Any) -> tuple[Any, int]:
        last: BaseException | None = None
        for attempt in range(1, self.max_retries + 2):
            try:
                return send(self._connection()), attempt
            except Exception as exc:
                self._raise_if_final(exc, model)
                last = exc
                if attempt <= self.max_retries:
                    time.sleep(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
        error = BackendUnavailable(
            f"The server at {self.url} failed {self.max_retries + 1} attempt(s) for {model}; last error: "
            f"{_describe(last) if last else 'unknown'}. Check that it is running, then resume the job.",
            url=self.url,
        )
        error.__cause__ = last
        raise error

    def _raise_if_final(self, exc: Exception, model: str) -> None:
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 404:
                raise ModelMissing([model], url=self.url) from exc
            if exc.status_code >= 500 or exc.status_code in (408, 429):
                return
            raise BackendError(f"The server at {self.url} rejected the request for {model} ({_describe(exc)})") from exc
        if isinstance(exc, openai.APIConnectionError | httpx.TransportError | ConnectionError):
            return
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            raise BackendError(f"Request to {self.url} for {model} failed ({_describe(exc)})") from exc
        raise exc

    # --- chat ------------------------------------------------------------------------------
    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None) -> LLMResult:
        """Return the model's answer to one user prompt, as `OllamaBackend.chat` does."""
        if not model:
            raise ValueError("a model name is required")
        fields, extra = request_options(options)
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        started = time.perf_counter_ns()
        response, attempts = self._retrying(
            model,
            lambda client: client.chat.completions.create(
                model=model, messages=messages, stream=False, extra_body=extra or None, **fields
            ),
        )
        elapsed = time.perf_counter_ns() - started
        if not response.choices:
            raise BackendError(f"The server at {self.url} answered {model} with no choices")
        choice = response.choices[0]
        usage = response.usage
        return LLMResult(
            text=choice.message.content or "",
            model=response.model or model,
            digest="",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            total_duration_ns=elapsed,
            load_duration_ns=0,
            prompt_eval_duration_ns=0,
            eval_duration_ns=0,
            done_reason=choice.finish_reason,
            attempts=attempts,
        )

    # --- log-probabilities of a given text (GPTScore) --------------------------------------
    def text_logprobs(self, model: str, context: str, text: str) -> TextLogprobs:
        """Return the log-probability of each token of `text` following `context`.

        The server scores `context + text` with `echo`; tokens that overlap `text` are kept, and any
        token the server generated after it (some servers insist on at least one) is dropped.
        """
        if not text:
            raise ValueError("there is no text to score")
        prompt = context + text
        response, attempts = self._retrying(
            model,
            lambda client: client.completions.create(
                model=model, prompt=prompt, echo=True, logprobs=0, max_tokens=1, temperature=0
            ),
        )
        if not response.choices or response.choices[0].logprobs is None:
            raise BackendError(f"The server at {self.url} returned no log-probabilities for {model}")
        logprobs = response.choices[0].logprobs
        tokens_ = list(logprobs.tokens or [])
        values = list(logprobs.token_logprobs or [])
        try:  # by the tokens' text, never raw text_offset (vLLM counts a BOS string in it)
            indices = scored_token_indices(context, text, tokens_)
        except EchoMismatch as exc:
            raise BackendError(f"The server at {self.url} ({model}): {exc}") from None
        picked = [(tokens_[i], values[i]) for i in indices if i < len(values) and values[i] is not None]
        kept_tokens = [token for token, _ in picked]
        kept = [float(value) for _, value in picked]
        if not kept:
            raise BackendError(
                f"The server at {self.url} did not echo the scored text's tokens for {model}; "
                "GPTScore needs a server that supports `echo` with `logprobs` on /v1/completions (vLLM does)."
            )
        return TextLogprobs(model=response.model or model, tokens=tuple(kept_tokens), logprobs=tuple(kept),
                            attempts=attempts)
