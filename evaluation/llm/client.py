"""The one retrying client both backends are: the lifecycle of the official client and the retry loop.

A backend says how to open its library's client, which errors a retry cannot fix (`_final`), and how
to describe an error; everything else - one connection pool shared by a job's threads, reopened after
`close`, exponential backoff, and the message once the retries are spent - is written here once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from .errors import BackendUnavailable, OutOfMemory, PromptTooLong

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
    """A blocking client of one server. `max_retries` retries follow the first attempt; retry k waits
    `backoff * 2**(k-1)` seconds (at most `max_backoff`)."""

    kind = ""  # ServerKind value of the subclass
    label = "the server"  # how messages name the kind of server ("Ollama", "the OpenAI-compatible server")
    advice = "Check that it is running, then resume the job."

    def __init__(
        self, url: str, *, timeout: float, max_retries: int, backoff: float, max_backoff: float,
        idle_timeout: float | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        self.url = url.rstrip("/")
        self.timeout = timeout  # until the first byte of an answer: queueing and a model load fit in it
        self.idle_timeout = min(timeout, idle_timeout) if idle_timeout else timeout  # between chunks
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
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
    def _final(self, exc: Exception, model: str) -> None:
        """Raise at once for errors a retry cannot fix; return for transient ones."""
        raise exc

    def _raise_if_named(self, text: str, status: int, model: str, exc: Exception) -> None:
        """Raise for the server errors whose text says what they are: a prompt longer than the context (that
        one request fails, not the job) and a model that does not fit in memory (retrying does not help)."""
        said = " ".join(text.split())[:300]
        if status in (400, 413, 422, 500) and _TOO_LONG.search(text):
            # Only the status is shown (errors never repeat what a server answered, as every other one here);
            # the out-of-memory message below is the exception: what to free is in the server's words.
            raise PromptTooLong(f"{self.where} refused the prompt for {model} as too long (HTTP {status})") from exc
        if status >= 500 and _OOM.search(text):
            raise OutOfMemory(
                f"{self.where} cannot load {model}: {said}. Free memory on that machine (unload other models, "
                "lower OLLAMA_NUM_PARALLEL or the context), or use a smaller model, then resume the job.",
                url=self.url, model=model,
            ) from exc

    def _describe(self, exc: BaseException) -> str:
        text = str(exc)
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def _delay(self, attempt: int) -> float:
        return min(self.max_backoff, self.backoff * 2 ** (attempt - 1))

    def _retrying(self, model: str, send: Callable[[C], T]) -> tuple[T, int]:
        """Return (what `send(client)` returned, the attempts it took); raise BackendUnavailable when spent."""
        last: BaseException | None = None
        for attempt in range(1, self.max_retries + 2):
            try:
                return send(self._connection()), attempt
            except Exception as exc:
                self._final(exc, model)
                last = exc
                if attempt <= self.max_retries:
                    time.sleep(self._delay(attempt))
        error = BackendUnavailable(
            f"{self.where[0].upper()}{self.where[1:]} failed {self.max_retries + 1} attempt(s) for {model}; "
            f"last error: {self._describe(last) if last else 'unknown'}. {self.advice}",
            url=self.url,
        )
        error.__cause__ = last
        raise error
