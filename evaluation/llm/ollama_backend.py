"""Talk to an Ollama server through the official client: model checks and chat calls with retries.

Sampling options (temperature, seed, num_ctx, num_predict) travel inside `options`, never at the top
level, and every request carries a timeout, because the client's default is to wait forever.
Transient failures (connection refused or dropped, timeouts, HTTP 5xx) are retried with exponential
backoff; a missing model (HTTP 404) is reported at once, since waiting will not make it appear.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpx
import ollama

from .base import LLMResult
from .client import RetryingClient
from .counting import Version, ollama_count, parse_version
from .errors import OLLAMA, BackendError, BackendUnavailable, ModelMissing
from .landing import landed
from .policy import RetryPolicy, Transient, transient_status
from .thinking import split_thinking

# httpx logs every request at INFO; a run makes thousands, which would bury the command's own output.
logging.getLogger("httpx").setLevel(logging.WARNING)

log = logging.getLogger(__name__)

DEFAULT_REGISTRY = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
# Server options the client's `Options` model does not list yet but Ollama accepts.
_EXTRA_OPTIONS = frozenset({"min_p"})
_KNOWN_OPTIONS = frozenset(ollama.Options.model_fields) | _EXTRA_OPTIONS


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


class OllamaBackend(RetryingClient[ollama.Client]):
    """A blocking client of one Ollama server, shared by the run's worker threads (retries: `RetryingClient`).

    `keep_alive` is how long the server keeps a model loaded after a request; jobs pass the OLLAMA_KEEP_ALIVE
    setting (`evaluation.runs.backends.connect`), and None leaves it to the server."""

    kind = "ollama"
    signals_landing = True  # the stream's headers come once the prompt is in a slot
    label = OLLAMA
    advice = "Check that the server is running (`ollama serve`) and reachable at OLLAMA_URL, then resume the job."

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 300,
        idle_timeout: float | None = None,
        keep_alive: str | int | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(url, timeout=timeout, idle_timeout=idle_timeout, policy=policy)
        self.keep_alive = keep_alive
        self._digests: dict[str, str] = {}
        self._version: Version | None = None
        self._version_asked = False

    def _open(self) -> ollama.Client:
        # A refused or unroutable address should fail fast even when answers may take minutes.
        return ollama.Client(host=self.url, timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)))

    def _describe(self, exc: BaseException) -> str:
        return _describe(exc)

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
    def _request(
        self, model: str, prompt: str, options: Mapping[str, Any], system: str | None, think: bool | None
    ) -> dict[str, Any]:
        if not model:
            raise ValueError("a model name is required")
        options = dict(options)
        schema = options.pop("format", None)  # a structured answer's JSON schema is a request field in Ollama
        _check_options(options)
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "options": options,
            "stream": True,
            # Since 0.12.4 a prompt longer than num_ctx is refused (400) instead of silently cut; older servers
            # ignore the field. The client has no parameter for it, so the body is written here.
            "truncate": False,
            **({"format": schema} if schema is not None else {}),
        }
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        if think is not None:
            body["think"] = think
        return body

    def chat(
        self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None,
        think: bool | None = None,
    ) -> LLMResult:
        """Return the model's answer to one user prompt (plus an optional system prompt), retrying transient
        failures with backoff; blocks the calling thread. The answer streams: the first chunk may take a model
        load (`timeout`), later ones must come within `idle_timeout` of each other."""
        body = self._request(model, prompt, options, system, think)
        (final, content, thinking, counts), attempts = self._retrying(model, lambda client: self._stream(client, body))
        return self._result(model, final, content, thinking, attempts, counts)

    def _stream(
        self, client: ollama.Client, body: dict[str, Any]
    ) -> tuple[ollama.ChatResponse, str, str, dict[str, Any]]:
        """One streamed chat through the official client's connection: (the final chunk, content, thinking, the
        final chunk's prompt counts as sent: the client's model drops fields it does not know, such as
        `prompt_eval_cached_count`)."""
        content: list[str] = []
        thinking: list[str] = []
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        with client._client.stream("POST", "/api/chat", json=body, timeout=timeout) as response:
            if response.status_code >= 400:
                response.read()
                raise ollama.ResponseError(response.text, response.status_code)
            # Ollama sends its headers with the first chunk, once the model is loaded and the prompt read: from
            # now on silence means a stalled server. (httpcore reads this timeout when the body's first read
            # starts, so it must be set before iterating, not after the first line.)
            response.request.extensions["timeout"]["read"] = self.idle_timeout
            landed()  # the prompt is in a slot: a new prefix group's first call may go now (cache_order)
            for line in response.iter_lines():
                if not line.strip():
                    continue
                part = json.loads(line)
                if part.get("error"):
                    raise ollama.ResponseError(str(part["error"]))  # status -1: an error inside the stream
                message = part.get("message") or {}
                content.append(message.get("content") or "")
                thinking.append(message.get("thinking") or "")
                if part.get("done"):
                    counts = {k: part.get(k) for k in ("prompt_eval_count", "prompt_eval_cached_count")}
                    return ollama.ChatResponse(**part), "".join(content), "".join(thinking), counts
        raise ollama.ResponseError("the answer stream ended before the answer was done")

    def load(self, model: str, *, options: Mapping[str, Any]) -> None:
        """Ask the server to load `model` now (a chat without messages), so a model whose requests are
        still to come (a supervisor waiting for annotators elsewhere) is ready when they arrive. `options`
        must carry the run's num_ctx, or the first real request reloads. One attempt; errors propagate."""
        _check_options(options)
        self._connection().chat(model=model, messages=[], options=dict(options), keep_alive=self.keep_alive)

    def context_length(self, model: str) -> int | None:
        """The model's trained context length from /api/show (`<arch>.context_length`), None if not stated."""
        try:
            info = self._connection().show(model).modelinfo or {}
        except (ollama.ResponseError, ConnectionError, httpx.HTTPError, ValueError):
            return None
        lengths = [int(v) for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
        return lengths[0] if lengths else None

    def _classify(self, exc: Exception, model: str) -> BackendError | None:
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404:
                return ModelMissing([model], url=self.url)
            named = self._named(str(exc.error), exc.status_code, model)
            if named is not None:
                return named
            # -1 is an error line inside a stream (Ollama's own); the rest as for every server.
            if exc.status_code == -1 or transient_status(exc.status_code):
                return Transient(_describe(exc))
            return BackendError(f"Ollama at {self.url} rejected the request for {model} ({_describe(exc)})")
        if isinstance(exc, httpx.UnsupportedProtocol):
            return BackendError(f"OLLAMA_URL {self.url!r} is not an http(s) URL")
        if isinstance(exc, ConnectionError | httpx.TransportError):
            return Transient(_describe(exc))
        if isinstance(exc, ollama.RequestError | ValueError):
            return BackendError(f"Ollama request for {model} failed ({_describe(exc)})")
        return None

    def version(self) -> Version | None:
        """The server's release from /api/version, asked once (None when it does not say): what its token
        counts mean and whether it honours `truncate: false` depend on it."""
        with self._opening:
            if self._version_asked:
                return self._version
        try:
            response = self._connection()._client.get("/api/version", timeout=min(self.timeout, 10.0))
            found = parse_version(str(response.json().get("version", ""))) if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            found = None
        with self._opening:
            self._version, self._version_asked = found, True
        return found

    def _digest(self, model: str) -> str | None:
        if model in self._digests:
            return self._digests[model]
        return next((digest for name, digest in self._digests.items() if tag_matches(model, name)), None)

    def _result(
        self, model: str, response: ollama.ChatResponse, content: str, thinking: str, attempts: int,
        counts: dict[str, Any],
    ) -> LLMResult:
        answer, trace = split_thinking(content, thinking)
        count = ollama_count(counts, self.version())
        return LLMResult(
            text=answer,
            thinking=trace,
            model=response.model or model,
            digest=self._digest(model),
            prompt_tokens=count.tokens,
            cached_tokens=count.cached,
            count_whole=count.whole,
            guard=count.guard,
            completion_tokens=response.eval_count or 0,
            total_duration_ns=response.total_duration or 0,
            load_duration_ns=response.load_duration or 0,
            prompt_eval_duration_ns=response.prompt_eval_duration or 0,
            eval_duration_ns=response.eval_duration or 0,
            done_reason=response.done_reason,
            attempts=attempts,
        )
