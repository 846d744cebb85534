"""The one retry and failure policy: each LLM error's verdict, the client's retries under it, and its settings."""

from __future__ import annotations

import pytest
from django.test import override_settings

from evaluation.llm.client import RetryingClient
from evaluation.llm.errors import (
    BackendError,
    BackendUnavailable,
    ModelMissing,
    OutOfMemory,
    PromptTooLong,
    ServerListError,
    ServerNotAllowed,
)
from evaluation.llm.policy import RetryPolicy, Stop, Transient, server_lost, stop_for
from evaluation.runs.backends import retry_policy
from evaluation.runs.failures import llm_stopped
from jobs.models import JobStatus

# error -> (verdict, whether the server is lost, the status of a job it stops)
TABLE = [
    (Transient("HTTP 503"), Stop.RETRY, False, JobStatus.FAILED),
    (BackendUnavailable("gone after 5 attempts", url="http://a:1"), Stop.PAUSE, True, JobStatus.PAUSED),
    (OutOfMemory("cannot load m", url="http://a:1", model="m"), Stop.PAUSE, False, JobStatus.PAUSED),
    (PromptTooLong("too long", tokens=9000, limit=8192), Stop.SKIP, False, JobStatus.FAILED),
    (ModelMissing(["m"], url="http://a:1"), Stop.FAIL, False, JobStatus.FAILED),
    (ServerNotAllowed("http://b:1: not an allowed LLM server"), Stop.FAIL, False, JobStatus.FAILED),
    (ServerListError("bad address"), Stop.FAIL, False, JobStatus.FAILED),
    (BackendError("rejected (HTTP 400)"), Stop.FAIL, False, JobStatus.FAILED),
]


@pytest.mark.parametrize(("error", "verdict", "lost", "status"), TABLE, ids=[type(row[0]).__name__ for row in TABLE])
def test_policy_gives_each_llm_error_one_verdict(error, verdict, lost, status) -> None:
    assert stop_for(error) is verdict
    assert server_lost(error) is lost
    stopped = llm_stopped(error, kept="Kept.")
    assert stopped.status == status
    assert stopped.message == (f"{error} Kept." if status == JobStatus.PAUSED else str(error))


def test_policy_leaves_errors_that_are_not_the_llms_alone() -> None:
    assert stop_for(KeyError("x")) is None and stop_for(ValueError("x")) is None


class _Flaky(RetryingClient[object]):
    """Fails with the given library errors in turn, then answers."""

    def __init__(self, errors: list[Exception], policy: RetryPolicy) -> None:
        super().__init__("http://a:1", timeout=1, policy=policy)
        self.errors = errors
        self.calls = 0

    def _open(self) -> object:
        return object()

    def _classify(self, exc: Exception, model: str) -> BackendError | None:
        if isinstance(exc, ConnectionError):
            return Transient(str(exc))
        if isinstance(exc, LookupError):
            return ModelMissing([model], url=self.url)
        return None

    def ask(self) -> tuple[str, int]:
        def send(_client: object) -> str:
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
            return "ok"

        return self._retrying("m", send)


def test_client_retries_transient_errors_as_often_as_the_policy_says() -> None:
    client = _Flaky([ConnectionError("refused")] * 2, RetryPolicy(transport_retries=2, backoff=0))
    assert client.ask() == ("ok", 3)
    spent = _Flaky([ConnectionError("refused")] * 3, RetryPolicy(transport_retries=2, backoff=0))
    with pytest.raises(BackendUnavailable, match="failed 3 attempt"):
        spent.ask()
    assert spent.calls == 3


def test_client_stops_at_once_on_an_error_the_policy_does_not_retry() -> None:
    client = _Flaky([LookupError("404"), ConnectionError("never reached")], RetryPolicy(transport_retries=4, backoff=0))
    with pytest.raises(ModelMissing):
        client.ask()
    assert client.calls == 1
    with pytest.raises(ZeroDivisionError):  # not the server's error: it propagates unchanged
        _Flaky([ZeroDivisionError("bug")], RetryPolicy(backoff=0)).ask()


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [RetryPolicy(backoff=0.5, max_backoff=3).delay(k) for k in range(1, 6)] == [0.5, 1.0, 2.0, 3, 3]


def test_retry_policy_reads_the_settings_overrides_and_keeps_the_other_defaults() -> None:
    with override_settings(LLM_RETRY={"transport_retries": 1, "answer_attempts": 2, "repair": False}):
        policy = retry_policy()
    assert (policy.transport_retries, policy.answer_attempts, policy.repair) == (1, 2, False)
    assert (policy.backoff, policy.max_backoff, policy.retry_temperature) == (0.5, 30.0, 0.1)
    assert policy.once().transport_retries == 0 and policy.once().answer_attempts == 2


def test_retry_policy_refuses_impossible_numbers() -> None:
    with pytest.raises(ValueError, match="answer_attempts"):
        RetryPolicy(answer_attempts=0)
    with pytest.raises(ValueError, match="transport_retries"):
        RetryPolicy(transport_retries=-1)


def test_which_http_statuses_are_worth_asking_again_is_said_once():
    from evaluation.llm.policy import transient_status

    assert [s for s in (400, 401, 404, 408, 413, 422, 429, 500, 502, 503, 504) if transient_status(s)] == [
        408, 429, 500, 502, 503, 504]
