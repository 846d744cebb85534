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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from evaluation.engine.echo_tokens import EchoMismatch, scored_token_indices

from .base import LLMResult
from .client import RetryingClient
from .counting import openai_cached
from .errors import BackendError, BackendUnavailable, FormatRefused, ModelMissing
from .ollama_backend import resolve_model, tag_matches
from .policy import RetryPolicy, Transient, transient_status
from .thinking import split_thinking

# Ollama-style option names (what our prompts and presets use) -> OpenAI request fields.
_STANDARD = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
             "num_predict": "max_tokens", "presence_penalty": "presence_penalty",
             "frequency_penalty": "frequency_penalty"}
# Sampling parameters vLLM and llama.cpp accept beyond OpenAI's own (sent in the request body as-is).
_EXTRA = {"top_k": "top_k", "min_p": "min_p", "repeat_penalty": "repetition_penalty"}
# Server-side settings with no per-request meaning here: accepted and dropped.
_IGNORED = frozenset({"num_ctx", "num_gpu", "num_thread", "keep_alive"})


# How a structured answer's JSON schema is asked for: OpenAI's `json_schema` (vLLM and llama.cpp's llama-server take
# it), or `json_object` with the schema beside it, the only shape llama-cpp-python's server takes (0.3.x,
# llama_types.py ChatCompletionRequestResponseFormat; its grammar then follows the schema).
SCHEMA_SHAPES = ("json_schema", "json_object")


def request_options(options: Mapping[str, Any], *, schema_shape: str = SCHEMA_SHAPES[0],
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
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
        schema = options["format"]
        fields["response_format"] = ({"type": "json_object", "schema": schema} if schema_shape == "json_object"
                                     else {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}})
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


class OpenAICompatBackend(RetryingClient[openai.OpenAI]):
    """A blocking client of one OpenAI-compatible server, shared by a job's worker threads (retries:
    `RetryingClient`); a missing model (HTTP 404) fails at once."""

    kind = "openai"
    label = "The OpenAI-compatible server"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = 300,
        idle_timeout: float | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(url, timeout=timeout, idle_timeout=idle_timeout, policy=policy)
        self.api_key = api_key
        self.schema_shape = SCHEMA_SHAPES[0]  # the next shape once this server refuses one (shared by the threads)

    @property
    def base_url(self) -> str:
        """The API root: the server URL with `/v1` appended unless it already ends with it."""
        return self.url if self.url.endswith("/v1") else f"{self.url}/v1"

    def _open(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "no-key",  # local servers ignore it; the client insists on one
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            max_retries=0,  # RetryingClient retries, under the one policy of every backend
        )

    def _describe(self, exc: BaseException) -> str:
        return _describe(exc)

    # --- model check -----------------------------------------------------------------------
    def list_models(self) -> list[str]:
        try:
            return [entry.id for entry in self._connection().models.list()]
        except openai.APIStatusError as exc:
            raise BackendError(f"{self.where} refused to list its models ({_describe(exc)})") from exc
        except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError) as exc:
            raise BackendError(f"{self.where} did not answer with an OpenAI model list") from exc
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
            raise ModelMissing(missing, url=self.url, kind=self.kind)
        return {model: "" for model in models}

    # --- errors -----------------------------------------------------------------------------
    def _classify(self, exc: Exception, model: str) -> BackendError | None:
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 404:
                return ModelMissing([model], url=self.url, kind=self.kind)
            said = f"{exc.message} {exc.body or ''}"
            named = self._named(said, exc.status_code, model)
            if named is not None:
                return named
            if exc.status_code in (400, 422, 500) and "response_format" in said:
                return FormatRefused(f"{self.where} refused the structured-answer request for {model} "
                                     f"({_describe(exc)}, about response_format {self.schema_shape})")
            if transient_status(exc.status_code):
                return Transient(_describe(exc))
            return BackendError(f"{self.where} rejected the request for {model} ({_describe(exc)})")
        if isinstance(exc, openai.APIConnectionError | httpx.TransportError | ConnectionError):
            return Transient(_describe(exc))
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            return BackendError(f"Request to {self.where} for {model} failed ({_describe(exc)})")
        return None

    # --- chat ------------------------------------------------------------------------------
    def chat(
        self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None,
        think: bool | None = None,
    ) -> LLMResult:
        """Return the model's answer to one user prompt, as `OllamaBackend.chat` does; a reasoning trace
        (`reasoning_content`, `reasoning`, or `<think>` in the content) is kept apart from the answer."""
        if not model:
            raise ValueError("a model name is required")
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        started = time.perf_counter_ns()
        while True:
            shape = self.schema_shape
            fields, extra = request_options(options, schema_shape=shape)
            if think is not None:  # vLLM/llama.cpp pass this to the chat template (qwen3's switch)
                extra["chat_template_kwargs"] = {"enable_thinking": think}
            try:
                response, attempts = self._retrying(
                    model,
                    lambda client, fields=fields, extra=extra: client.chat.completions.create(
                        model=model, messages=messages, stream=False, extra_body=extra or None, **fields
                    ),
                )
                break
            except FormatRefused as refused:
                later = SCHEMA_SHAPES[SCHEMA_SHAPES.index(shape) + 1:]
                if options.get("format") is None or not later:
                    raise FormatRefused(
                        f"{self.where} refuses structured answers for {model}: it took neither response_format "
                        f"shape ({', '.join(SCHEMA_SHAPES)}). Start the run with the answer format `text` "
                        "(--answer-format text, the run form's Answer format)."
                    ) from refused
                if self.schema_shape == shape:
                    self.schema_shape = later[0]
        elapsed = time.perf_counter_ns() - started
        if not response.choices:
            raise BackendError(f"{self.where} answered {model} with no choices")
        choice = response.choices[0]
        usage = response.usage
        extra_fields = choice.message.model_extra or {}
        given = extra_fields.get("reasoning_content") or extra_fields.get("reasoning") or ""
        answer, trace = split_thinking(choice.message.content or "", str(given))
        return LLMResult(
            text=answer,
            thinking=trace,
            model=response.model or model,
            digest="",
            prompt_tokens=usage.prompt_tokens if usage else 0,  # the whole prompt, cached tokens included
            cached_tokens=openai_cached(usage.model_dump() if usage else None, response.model_extra),
            completion_tokens=usage.completion_tokens if usage else 0,
            total_duration_ns=elapsed,
            load_duration_ns=0,
            prompt_eval_duration_ns=0,
            eval_duration_ns=0,
            done_reason=choice.finish_reason,
            attempts=attempts,
        )

    def context_length(self, model: str) -> int | None:
        """The model's context length as the server states it: vLLM's `max_model_len` in /v1/models, or the
        llama.cpp server's `n_ctx` in /props; None when the server says neither (TGI)."""
        try:
            for entry in self._connection().models.list():
                length = (entry.model_extra or {}).get("max_model_len")
                if length and (entry.id == model or tag_matches(model, entry.id)):
                    return int(length)
            props = self._connection().get(f"{self.url}/props", cast_to=httpx.Response)
            settings = props.json().get("default_generation_settings") or {}
            return int(settings["n_ctx"]) if settings.get("n_ctx") else None
        except (openai.OpenAIError, httpx.HTTPError, ValueError, TypeError, KeyError):
            return None

    def total_slots(self) -> int | None:
        """How many requests the server processes at once, where it says: the llama.cpp server's `total_slots`
        in /props (its --parallel); None for servers that do not say (vLLM batches, TGI)."""
        try:
            props = self._connection().get(f"{self.url}/props", cast_to=httpx.Response)
            slots = props.json().get("total_slots")
        except (openai.OpenAIError, httpx.HTTPError, ValueError, TypeError, AttributeError):
            return None
        return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1 else None

    # --- log-probabilities of a given text (GPTScore) --------------------------------------
    def text_logprobs(self, model: str, context: str, text: str, *, prefix: str = "") -> TextLogprobs:
        """Return the log-probability of each token of `text` following `prefix + context`.

        The server scores `prefix + context + text` with `echo`; tokens that overlap `text` are kept, and any
        token the server generated after it (some servers insist on at least one) is dropped. `prefix` is a
        special token the server may leave out of the echo (a BOS it strips), so it is not looked for there.
        """
        if not text:
            raise ValueError("there is no text to score")
        prompt = prefix + context + text
        response, attempts = self._retrying(
            model,
            lambda client: client.completions.create(
                model=model, prompt=prompt, echo=True, logprobs=0, max_tokens=1, temperature=0
            ),
        )
        if not response.choices or response.choices[0].logprobs is None:
            raise BackendError(f"{self.where} returned no log-probabilities for {model}")
        logprobs = response.choices[0].logprobs
        tokens_ = list(logprobs.tokens or [])
        values = list(logprobs.token_logprobs or [])
        try:  # by the tokens' text, never raw text_offset (vLLM counts a BOS string in it)
            indices = scored_token_indices(context, text, tokens_)
        except EchoMismatch as exc:
            raise BackendError(f"{self.where} ({model}): {exc}") from None
        picked = [(tokens_[i], values[i]) for i in indices if i < len(values) and values[i] is not None]
        kept_tokens = [token for token, _ in picked]
        kept = [float(value) for _, value in picked]
        if not kept:
            raise BackendError(
                f"{self.where} did not echo the scored text's tokens for {model}; "
                "GPTScore needs a server that supports `echo` with `logprobs` on /v1/completions (vLLM does)."
            )
        return TextLogprobs(model=response.model or model, tokens=tuple(kept_tokens), logprobs=tuple(kept),
                            attempts=attempts)

    def echo_shifted(self, model: str, *, prefix: str = "") -> bool:
        """Whether the server's echoed log-probabilities belong to the token after each one.

        llama-cpp-python pairs echoed tokens with the logits by position and drops only a leading BOS token
        (`llama.py`, `_create_completion`), so for a model whose tokenizer adds no BOS every value is the
        probability of a token given itself and what came before. A counting sequence shows it: each position's
        most likely token (`top_logprobs`) is its own token when the values are aligned, the next one when shifted.
        """
        response, _ = self._retrying(
            model,
            lambda client: client.completions.create(
                model=model, prompt=prefix + SHIFT_PROBE, echo=True, logprobs=1, max_tokens=1, temperature=0
            ),
        )
        if not response.choices or response.choices[0].logprobs is None:
            raise BackendError(f"{self.where} returned no log-probabilities for {model}")
        tokens = list(response.choices[0].logprobs.tokens or [])
        tops = list(response.choices[0].logprobs.top_logprobs or [])
        if SHIFT_PROBE not in "".join(tokens):
            raise BackendError(f"{self.where} did not echo the prompt's tokens for {model}")
        own = following = 0
        for j in range(1, min(len(tokens), len(tops)) - 1):
            top = tops[j]
            if not top or tokens[j] == tokens[j + 1]:
                continue
            best = max(top, key=lambda token: top[token])
            own += best == tokens[j]
            following += best == tokens[j + 1]
        return following > own


SHIFT_PROBE = "Count: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20"
