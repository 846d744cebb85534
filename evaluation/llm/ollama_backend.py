"""Talk to an Ollama server through the official client: model checks and chat calls with retries.

Sampling options (temperature, seed, num_ctx, num_predict) travel inside `options`, never at the top
level, and every request carries a timeout, because the client's default is to wait forever.
Transient failures (connection refused or dropped, timeouts, HTTP 5xx) are retried with exponential
backoff; a missing model (HTTP 404) is reported at once, since waiting will not make it appear.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import ollama

from .errors import BackendError, BackendUnavailable, ModelMissing

# httpx logs every request at INFO; a run makes thousands, which would bury the command's own output.
logging.getLogger("httpx").setLevel(logging.WARNING)

log = logging.getLogger(__name__)

DEFAULT_REGISTRY = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
# Server options the client's `Options` model does not list yet but Ollama accepts.
_EXTRA_OPTIONS = frozenset({"min_p"})
_KNOWN_OPTIONS = frozenset(ollama.Options.model_fields) | _EXTRA_OPTIONS


@dataclass(frozen=True)
class LLMResult:
    """One answer with the server's accounting; durations are nanoseconds as Ollama reports them."""

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


def _model_key(name: str) -> tuple[str, str, str, str]:
    """Return (registry, namespace, model, tag) with Ollama's defaults filled in, lower-cased."""
    name = name.strip().lower().split("@", 1)[0]
    name = name.split("://", 1)[-1]
    base, tag = name, DEFAULT_TAG
    colon = name.rfind(":")
    if colon > name.rfind("/"):  # a colon before the last slash is a registry port, not a tag
        base, tag = name[:colon], name[colon + 1 :] or DEFAULT_TAG
    parts = base.split("/")
    if len(parts) == 1:
        return DEFAULT_REGISTRY, DEFAULT_NAMESPACE, parts[0], tag
    if len(parts) == 2:
        return DEFAULT_REGISTRY, parts[0], parts[1], tag
    return "/".join(parts[:-2]), parts[-2], parts[-1], tag


def tag_matches(requested: str, available: str) -> bool:
    """Return whether two model names denote the same model, the way Ollama resolves names.

    "llama3" is "llama3:latest" is "registry.ollama.ai/library/llama3:latest"; names are
    case-insensitive; a different tag ("llama3:8b") is a different model.
    """
    return _model_key(requested) == _model_key(available)


def resolve_model(requested: str, available: Iterable[str]) -> str | None:
    """Return the first available name that `requested` denotes, or None."""
    return next((name for name in available if tag_matches(requested, name)), None)


def _check_options(options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - _KNOWN_OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown Ollama option(s) {', '.join(unknown)}; options are model parameters such as "
            "temperature, seed, num_ctx, num_predict, top_p, stop"
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ollama.ResponseError):
        # The body is not repeated: what the server answered stays out of messages users can read (it goes to
        # the worker's log for the operator).
        log.warning("Ollama answered HTTP %s: %.500s", exc.status_code, exc.error)
        return f"HTTP {exc.status_code}"
    if isinstance(exc, ValueError):  # JSON or schema errors quote the answer they could not read
        return f"{type(exc).__name__}: the answer is not what an Ollama server sends"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class OllamaBackend:
    """A blocking client of one Ollama server, shared by the run's worker threads.

    `max_retries` is the number of retries after the first attempt; retry k waits
    `backoff * 2**(k-1)` seconds (at most `max_backoff`).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 300,
        keep_alive: str | int = "10m",
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.keep_alive = keep_alive
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._digests: dict[str, str] = {}
        self._client: ollama.Client | None = None
        self._opening = threading.Lock()

    # --- clients ---------------------------------------------------------------------------
    def _client_kwargs(self) -> dict[str, Any]:
        # A refused or unroutable address should fail fast even when answers may take minutes.
        return {"host": self.url, "timeout": httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))}

    def _connection(self) -> ollama.Client:
        """Return the client, opened on first use (and again after `close`); one pool for every thread."""
        with self._opening:
            if self._client is None:
                self._client = ollama.Client(**self._client_kwargs())
            return self._client

    def close(self) -> None:
        with self._opening:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OllamaBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- model check -----------------------------------------------------------------------
    def check(self, models: Sequence[str]) -> dict[str, str]:
        """Return requested model -> digest; raise ModelMissing naming every absent model.

        One attempt only: this is a preflight, and an unreachable server should be reported now.
        """
        try:
            listing = self._connection().list()
        except (ConnectionError, httpx.TransportError, ollama.ResponseError) as exc:
            raise self._check_failure(exc) from exc
        except ValueError as exc:
            raise BackendError(f"{self.url} did not answer like an Ollama server ({_describe(exc)})") from exc
        return self._match_models(models, listing)

    def _check_failure(self, exc: Exception) -> BackendError:
        if isinstance(exc, ollama.ResponseError):
            return BackendError(f"Ollama at {self.url} refused to list its models ({_describe(exc)})")
        return BackendUnavailable(
            f"Cannot reach Ollama at {self.url} ({_describe(exc)}). "
            "Start it with `ollama serve`, or set OLLAMA_URL to the address of a running server.",
            url=self.url,
        )

    def _match_models(self, models: Sequence[str], listing: ollama.ListResponse) -> dict[str, str]:
        available = {entry.model: entry.digest or "" for entry in listing.models if entry.model}
        found: dict[str, str] = {}
        missing: list[str] = []
        for requested in models:
            name = resolve_model(requested, available)
            if name is None:
                missing.append(requested)
            else:
                found[requested] = available[name]
        if missing:
            raise ModelMissing(missing, url=self.url)
        self._digests.update(found)
        return found

    # --- chat ------------------------------------------------------------------------------
    def _request(self, model: str, prompt: str, options: Mapping[str, Any], system: str | None) -> dict[str, Any]:
        if not model:
            raise ValueError("a model name is required")
        options = dict(options)
        schema = options.pop("format", None)  # a structured answer's JSON schema is a request field in Ollama
        _check_options(options)
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        return {
            "model": model,
            "messages": messages,
            "options": options,
            "keep_alive": self.keep_alive,
            "stream": False,
            **({"format": schema} if schema is not None else {}),
        }

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None) -> LLMResult:
        """Return the model's answer to one user prompt (plus an optional system prompt), retrying transient
        failures with backoff; blocks the calling thread."""
        request = self._request(model, prompt, options, system)
        client = self._connection()
        last: BaseException | None = None
        for attempt in range(1, self.max_retries + 2):
            try:
                response = client.chat(**request)
            except Exception as exc:
                self._raise_if_final(exc, model)
                last = exc
                if attempt <= self.max_retries:
                    time.sleep(self._delay(attempt))
                continue
            return self._result(model, response, attempt)
        raise self._exhausted(model, last)

    def load(self, model: str, *, options: Mapping[str, Any]) -> None:
        """Ask the server to load `model` now (a chat without messages), so a model whose requests are
        still to come (a supervisor waiting for annotators elsewhere) is ready when they arrive. `options`
        must carry the run's num_ctx, or the first real request reloads. One attempt; errors propagate."""
        _check_options(options)
        self._connection().chat(model=model, messages=[], options=dict(options), keep_alive=self.keep_alive)

    def _delay(self, attempt: int) -> float:
        return min(self.max_backoff, self.backoff * 2 ** (attempt - 1))

    def _raise_if_final(self, exc: Exception, model: str) -> None:
        """Raise at once for errors a retry cannot fix; return for transient ones."""
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404:
                raise ModelMissing([model], url=self.url) from exc
            # -1 is an error line inside a stream; 429/503 mean the server's queue is full.
            if exc.status_code >= 500 or exc.status_code in (-1, 408, 429):
                return
            raise BackendError(f"Ollama at {self.url} rejected the request for {model} ({_describe(exc)})") from exc
        if isinstance(exc, httpx.UnsupportedProtocol):
            raise BackendError(f"OLLAMA_URL {self.url!r} is not an http(s) URL") from exc
        if isinstance(exc, ConnectionError | httpx.TransportError):
            return
        if isinstance(exc, ollama.RequestError | ValueError):
            raise BackendError(f"Ollama request for {model} failed ({_describe(exc)})") from exc
        raise exc

    def _exhausted(self, model: str, last: BaseException | None) -> BackendUnavailable:
        attempts = self.max_retries + 1
        error = BackendUnavailable(
            f"Ollama at {self.url} failed {attempts} attempt(s) for {model}; last error: "
            f"{_describe(last) if last else 'unknown'}. Check that the server is running "
            "(`ollama serve`) and reachable at OLLAMA_URL, then resume the job.",
            url=self.url,
        )
        error.__cause__ = last
        return error

    def _digest(self, model: str) -> str | None:
        if model in self._digests:
            return self._digests[model]
        return next((digest for name, digest in self._digests.items() if tag_matches(model, name)), None)

    def _result(self, model: str, response: ollama.ChatResponse, attempts: int) -> LLMResult:
        return LLMResult(
            text=response.message.content or "",
            model=response.model or model,
            digest=self._digest(model),
            prompt_tokens=response.prompt_eval_count or 0,
            completion_tokens=response.eval_count or 0,
            total_duration_ns=response.total_duration or 0,
            load_duration_ns=response.load_duration or 0,
            prompt_eval_duration_ns=response.prompt_eval_duration or 0,
            eval_duration_ns=response.eval_duration or 0,
            done_reason=response.done_reason,
            attempts=attempts,
        )
