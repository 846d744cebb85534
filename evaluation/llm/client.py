"""The one retrying client both backends are: the lifecycle of the official client and the retry loop.

A backend says how to open its library's client, what each of its library's errors is among ours
(`_classify`), and how to describe an error; everything else - one connection pool shared by a job's
threads, reopened after `close`, the retries the policy (`evaluation.llm.policy`) allows with its backoff,
and the message once they are spent - is written here once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from .errors import BackendError, BackendUnavailable, OutOfMemory, PromptTooLong
from .policy import RetryPolicy, Stop, stop_for

# How servers word a prompt longer than the context (Ollama 0.12.4+ with truncate:false, deepseek2 family; vLLM;
# llama.cpp exceed_context_size_error; TGI's 422 validation error), and a model that does not fit in memory
# (Ollama's scheduler; CUDA). Sources: REAL_SERVERS.md.
_TOO_LONG = re.compile(
    r"exceeds the context length|longer than the context length|maximum context length|exceed_context_size"
    r"|context length|must be <= \d+|too long", re.IGNORECASE)
_OOM = re.compile(r"requires more system memory|out of memory|insufficient memory|cudaMalloc failed", re.IGNORECASE)

C = TypeVar("C")  # the library's client
T = TypeVar("T")


class RetryingClient(Generic[C]):
    """A blocking client of one server; `policy` says how often a transient failure is asked again and how
    long to wait before each retry (default: the policy's own numbers; jobs pass the settings')."""

    kind = ""  # ServerKind value of the subclass
    # Whether `chat` says `landing.landed()` when the server has taken the request into a slot (a streaming
    # answer's headers); without it a request counts as landed when it returns.
    signals_landing = False
    label = "the server"  # how messages name the kind of server ("Ollama", "the OpenAI-compatible server")
    advice = "Check that it is running, then resume the job."

    def __init__(
        self, url: str, *, timeout: float, idle_timeout: float | None = None, policy: RetryPolicy | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout  # until the first byte of an answer: queueing and a model load fit in it
        self.idle_timeout = min(timeout, idle_timeout) if idle_timeout else timeout  # between chunks
        self.policy = policy or RetryPolicy()
        self._client: C | None = None
        self._opening = threading.Lock()

    # --- lifecycle ----------------------------------------------------------------------------
    def _open(self) -> C:
        raise NotImplementedError

    def _connection(self) -> C:
        """Return the client, opened on first use (and again after `close`); one pool for every thread."""
        with self._opening:
            if self._client is None:
                self._client = self._open()
            return self._client

    def close(self) -> None:
        with self._opening:
            if self._client is not None:
                self._client.close()  # type: ignore[attr-defined]
                self._client = None

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def where(self) -> str:
        """The server as messages name it: its kind and address."""
        return f"{self.label} at {self.url}"

    # --- retries ------------------------------------------------------------------------------
    def _classify(self, exc: Exception, model: str) -> BackendError | None:
        """Our error for one of the library's (a `Transient` one when a retry may cure it); None for an
        error that is not the server's (it propagates unchanged)."""
        return None

    def _named(self, text: str, status: int, model: str) -> BackendError | None:
        """The server errors whose text says what they are: a prompt longer than the context (that one
        request fails, not the job) and a model that does not fit in memory (retrying does not help)."""
        said = " ".join(text.split())[:300]
        if status in (400, 413, 422, 500) and _TOO_LONG.search(text):
            # Only the status is shown (errors never repeat what a server answered, as every other one here);
            # the out-of-memory message below is the exception: what to free is in the server's words.
            return PromptTooLong(f"{self.where} refused the prompt for {model} as too long (HTTP {status})")
        if status >= 500 and _OOM.search(text):
            return OutOfMemory(
                f"{self.where} cannot load {model}: {said}. Free memory on that machine (unload other models, "
                "lower OLLAMA_NUM_PARALLEL or the context), or use a smaller model, then resume the job.",
                url=self.url, model=model,
            )
        return None

    def _describe(self, exc: BaseException) -> str:
        text = str(exc)
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def _retrying(self, model: str, send: Callable[[C], T]) -> tuple[T, int]:
        """Return (what `send(client)` returned, the attempts it took); raise at once what the policy does
        not retry, and BackendUnavailable when the retries are spent."""
        retries = self.policy.transport_retries
        last: BaseException | None = None
        for attempt in range(1, retries + 2):
            try:
                return send(self._connection()), attempt
            except Exception as exc:
                error = self._classify(exc, model)
                if error is None:
                    raise
                if stop_for(error) is not Stop.RETRY:
                    raise error from exc
                last = exc
                if attempt <= retries:
                    time.sleep(self.policy.delay(attempt))
        error = BackendUnavailable(
            f"{self.where[0].upper()}{self.where[1:]} failed {retries + 1} attempt(s) for {model}; "
            f"last error: {self._describe(last) if last else 'unknown'}. {self.advice}",
            url=self.url,
        )
        error.__cause__ = last
        raise error

