"""The one retry and failure policy of every LLM call: how often to ask again, and what each error does to a job.

Transport retries (a connection refused, a busy or failing server) happen inside the client; answer retries
(an answer that does not parse) and the repair of an unreadable answer happen per step. What an error does
to the job that met it - ask again, fail that one request, pause, fail - is `stop_for`, the same for every
kind of job. No Django here: the settings feed `RetryPolicy` from outside (`evaluation.runs.backends`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from evaluation.runs.attempts import MAX_TRIES

from .errors import BackendError, BackendUnavailable, OutOfMemory, PromptTooLong, ServerListError


@dataclass(frozen=True)
class RetryPolicy:
    """Every number of the policy, with its default (each one can be set by an environment variable, see
    config/settings.py).

    Transport retry k waits `backoff * 2**(k-1)` seconds, at most `max_backoff`. An answer that does not
    parse is asked again up to `answer_attempts` tries in all, slightly warmer (`retry_temperature`) with a
    shifted seed; with `repair`, an unreadable answer is first sent back once to be restated."""

    transport_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 30.0
    answer_attempts: int = 4
    retry_temperature: float = 0.1
    repair: bool = True

    def __post_init__(self) -> None:
        if self.transport_retries < 0:
            raise ValueError("transport_retries cannot be negative")
        if not 1 <= self.answer_attempts <= MAX_TRIES:
            raise ValueError(f"answer_attempts must be 1 to {MAX_TRIES} (the ledger numbers a step's tries below that)")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("backoff and max_backoff cannot be negative")

    def delay(self, retry: int) -> float:
        """Seconds to wait before transport retry `retry` (1 = the first retry)."""
        return min(self.max_backoff, self.backoff * 2 ** (retry - 1))

    def once(self) -> RetryPolicy:
        """The same policy without transport retries: a preflight reports an unreachable server now."""
        return replace(self, transport_retries=0)


def transient_status(status: int) -> bool:
    """Whether an HTTP status from an LLM server is worth asking again: a server error (5xx), a request
    timeout (408) or a full queue (429; Ollama also answers 503 when OLLAMA_MAX_QUEUE is reached)."""
    return status >= 500 or status in (408, 429)


class Transient(BackendError):
    """A failure a retry may cure (connection refused or reset, HTTP 5xx, 408, 429, a busy queue); the
    client asks again while its transport retries last, then raises BackendUnavailable."""


class Stop(StrEnum):
    """What an LLM error does to the job that met it."""

    RETRY = "retry"  # ask the same server again after a backoff (inside the client)
    SKIP = "skip"  # that one request fails (recorded on its item); the job goes on
    PAUSE = "pause"  # the job pauses with its work kept; an operator acts, then resumes it
    FAIL = "fail"  # the job fails: resuming without changing something would fail again


def stop_for(exc: BaseException) -> Stop | None:
    """The policy's answer to one error; None for an error that is not the LLM's (a bug propagates as is).

    - Transient: RETRY, until the transport retries are spent (then BackendUnavailable).
    - BackendUnavailable (retries spent): PAUSE; the server is lost (`server_lost`), so a job with other
      servers hands its work to them first.
    - OutOfMemory: PAUSE; retrying cannot help until memory is freed.
    - PromptTooLong: SKIP; only that (item, model) fails.
    - ModelMissing, ServerNotAllowed, a malformed server address, a refused request: FAIL.
    """
    if isinstance(exc, Transient):
        return Stop.RETRY
    if isinstance(exc, BackendUnavailable | OutOfMemory):
        return Stop.PAUSE
    if isinstance(exc, PromptTooLong):
        return Stop.SKIP
    if isinstance(exc, BackendError | ServerListError):
        return Stop.FAIL
    return None


def server_lost(exc: BaseException) -> bool:
    """Whether the error means the server, not the model or the request, is gone: its work may move."""
    return isinstance(exc, BackendUnavailable)
