"""OllamaBackend against the simulated Ollama: model checks, results, retries and error messages.

The backend is blocking and shared by a run's worker threads; these tests call it the way the executor does."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.llm import (
    BackendError,
    BackendUnavailable,
    LLMResult,
    ModelMissing,
    OllamaBackend,
    resolve_model,
    tag_matches,
)
from evaluation.llm.errors import OutOfMemory
from evaluation.llm.policy import RetryPolicy
from evaluation.runs.backends import connect
from tests.ollama_sim import FaultRule, OllamaSim, ReplyRule, digest_for

ONCE = RetryPolicy(transport_retries=0)

OPTIONS = {"temperature": 0, "seed": 42, "num_ctx": 4096}


def _backend(url: str, *, retries: int = 4, **kwargs: object) -> OllamaBackend:
    kwargs.setdefault("timeout", 10)
    return OllamaBackend(url, policy=RetryPolicy(transport_retries=retries, backoff=0.01), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("requested", "available", "expected"),
    [
        ("llama3", "llama3:latest", True),
        ("llama3:latest", "llama3", True),
        ("LLama3", "llama3:latest", True),
        ("registry.ollama.ai/library/llama3", "llama3:latest", True),
        ("library/llama3:latest", "llama3", True),
        ("llama3", "llama3:8b", False),
        ("llama3:8b", "llama3:70b", False),
        ("llama3", "llama3.1:latest", False),
        ("me/llama3", "llama3", False),
        ("localhost:5000/me/model", "localhost:5000/me/model:latest", True),
    ],
)
def test_tag_matches_like_ollama(requested: str, available: str, expected: bool) -> None:
    assert tag_matches(requested, available) is expected


def test_resolve_model_returns_the_available_name() -> None:
    assert resolve_model("gemma2", ["llama3:latest", "gemma2:latest"]) == "gemma2:latest"
    assert resolve_model("gemma2", ["gemma2:9b"]) is None


def test_backend_check_returns_digests_by_requested_name(sim: OllamaSim) -> None:
    digests = _backend(sim.url).check(["llama3", "gemma2:9b"])
    assert digests == {"llama3": digest_for("llama3"), "gemma2:9b": digest_for("gemma2:9b")}


def test_backend_check_lists_every_missing_model_with_pull_commands(sim: OllamaSim) -> None:
    with pytest.raises(ModelMissing) as caught:
        _backend(sim.url).check(["llama3", "mistral", "phi3:mini"])
    assert caught.value.models == ["mistral", "phi3:mini"]
    message = str(caught.value)
    assert "ollama pull mistral" in message and "ollama pull phi3:mini" in message
    assert "ollama pull llama3" not in message
    assert sim.url in message


def test_backend_check_unreachable_names_url_and_remedy(closed_port_url: str) -> None:
    with pytest.raises(BackendUnavailable) as caught:
        _backend(closed_port_url).check(["llama3"])
    message = str(caught.value)
    assert closed_port_url in message
    assert "ollama serve" in message and "OLLAMA_URL" in message


def test_backend_chat_returns_text_and_accounting(sim: OllamaSim) -> None:
    sim.configure(rules=[ReplyRule(reply="one two three")], swap_cost=0.02, call_time=0.02)
    backend = _backend(sim.url)
    backend.check(["llama3"])
    result = backend.chat("llama3", "four words of prompt", options=OPTIONS, system="be strict")
    assert result.text == "one two three"
    assert result.model == "llama3"
    assert result.digest == digest_for("llama3")
    assert (result.prompt_tokens, result.completion_tokens) == (6, 3)  # system + user words
    assert result.load_duration_ns >= 20_000_000
    assert result.prompt_eval_duration_ns + result.eval_duration_ns >= 20_000_000
    assert result.total_duration_ns >= result.load_duration_ns
    assert result.done_reason == "stop" and result.attempts == 1

    record = sim.stats.log[-1]
    assert record.options == OPTIONS  # sampling options travel inside `options`
    assert record.keep_alive is None  # not given: left to the server
    assert not {"temperature", "seed", "num_ctx"} & set(record.top_level_keys)


def test_jobs_keep_models_loaded_for_the_keep_alive_setting(sim: OllamaSim, allow_ollama, settings) -> None:
    settings.OLLAMA_KEEP_ALIVE = "3m"
    allow_ollama(sim.url)
    with connect(sim.url, policy=ONCE) as backend:
        backend.chat("llama3", "hi", options=OPTIONS)
    assert sim.stats.log[-1].keep_alive == "3m"


def test_backend_chat_missing_model_fails_at_once(sim: OllamaSim) -> None:
    with pytest.raises(ModelMissing) as caught:
        _backend(sim.url).chat("mistral", "hi", options=OPTIONS)
    assert caught.value.models == ["mistral"]
    assert "ollama pull mistral" in str(caught.value)
    assert sim.stats.requests == 1


def test_backend_retries_server_errors(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", first=2)])
    result = _backend(sim.url).chat("llama3", "hi", options=OPTIONS)
    assert result.attempts == 3
    assert [r.status for r in sim.stats.log] == ["error", "error", "ok"]


def test_backend_retries_dropped_connections(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="drop", nth=(1,))])
    result = _backend(sim.url).chat("llama3", "hi", options=OPTIONS)
    assert result.attempts == 2


def test_backend_retries_a_drop_after_the_call(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="drop", nth=(1,), after_call=True)], call_time=0.01)
    assert _backend(sim.url).chat("llama3", "hi", options=OPTIONS).attempts == 2


def test_a_slow_steady_stream_is_not_cut_by_a_total_timeout(sim: OllamaSim) -> None:
    """Answers stream: a long generation whose chunks keep coming is never given up (no total timeout)."""
    sim.configure(faults=[FaultRule(kind="slow", nth=(1,), delay=1.0)])
    started = time.perf_counter()
    result = _backend(sim.url, timeout=0.4).chat("llama3", "hi", options=OPTIONS)
    assert result.attempts == 1 and time.perf_counter() - started >= 1.0
    assert [r.status for r in sim.stats.log] == ["ok"]


def test_a_load_longer_than_the_idle_timeout_completes(sim: OllamaSim) -> None:
    """The first byte may wait for a model load (LLM_LOAD_TIMEOUT); only later silence is an idle timeout."""
    sim.configure(swap_cost=1.0)
    result = OllamaBackend(sim.url, timeout=5, idle_timeout=0.3, policy=ONCE).chat("llama3", "hi", options=OPTIONS)
    assert result.attempts == 1 and result.load_duration_ns >= 0.9e9
    assert [r.status for r in sim.stats.log] == ["ok"] and sim.stats.loads == 1


def test_backend_gives_up_after_max_retries(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", message="runner crashed: secret detail")])
    with pytest.raises(BackendUnavailable) as caught:
        _backend(sim.url, retries=3).chat("llama3", "hi", options=OPTIONS)
    assert sim.stats.requests == 4
    # The status and the server are named; what the server answered is logged, never shown (issue 15).
    assert "HTTP 500" in str(caught.value) and sim.url in str(caught.value)
    assert "secret detail" not in str(caught.value)
    assert caught.value.__cause__ is not None


def test_out_of_memory_is_not_retried_and_says_what_the_server_said(sim: OllamaSim) -> None:
    """Issue 21: an OOM 500 is persistent; it is reported at once with the server's message and what to do."""
    message = "model requires more system memory (48.2 GiB) than is available (31.0 GiB)"
    sim.configure(faults=[FaultRule(kind="error", message=message)])
    with pytest.raises(OutOfMemory) as caught:
        _backend(sim.url, retries=3).chat("llama3", "hi", options=OPTIONS)
    assert sim.stats.requests == 1
    text = str(caught.value)
    assert message in text and "llama3" in text and "Free memory" in text and text.startswith("Ollama at")


def test_backend_unreachable_chat_is_unavailable_after_retries(closed_port_url: str) -> None:
    with pytest.raises(BackendUnavailable, match="ollama serve"):
        _backend(closed_port_url, retries=2).chat("llama3", "hi", options=OPTIONS)


def test_backend_backoff_grows_exponentially() -> None:
    backend = OllamaBackend("http://127.0.0.1:1", policy=RetryPolicy(backoff=0.5, max_backoff=3))
    assert [backend.policy.delay(k) for k in range(1, 6)] == [0.5, 1.0, 2.0, 3, 3]


def test_backend_client_errors_are_not_retried(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", status=400, message="invalid options")])
    with pytest.raises(BackendError) as caught:
        _backend(sim.url).chat("llama3", "hi", options=OPTIONS)
    assert not isinstance(caught.value, BackendUnavailable)
    assert "HTTP 400" in str(caught.value) and "invalid options" not in str(caught.value)
    assert sim.stats.requests == 1


def test_backend_returns_malformed_answers_as_text(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="garbage", text="<<not an annotation>>")])
    result = _backend(sim.url).chat("llama3", "hi", options=OPTIONS)
    assert result.text == "<<not an annotation>>" and result.attempts == 1


def test_backend_rejects_unknown_options(sim: OllamaSim) -> None:
    with pytest.raises(ValueError, match="temprature"):
        _backend(sim.url).chat("llama3", "hi", options={"temprature": 0})
    assert sim.stats.requests == 0


def test_backend_shared_by_threads_fills_the_slots(sim: OllamaSim) -> None:
    sim.configure(parallel=2, call_time=0.1)
    with _backend(sim.url) as backend, ThreadPoolExecutor(max_workers=4) as pool:
        results: list[LLMResult] = list(
            pool.map(lambda i: backend.chat("llama3", f"p{i}", options=OPTIONS), range(4))
        )
    assert [r.attempts for r in results] == [1] * 4
    assert sim.stats.requests == 4 and sim.stats.peak_concurrency == 2 and sim.stats.loads == 1


def test_backend_check_then_chat_answers_with_the_checked_digest(sim: OllamaSim) -> None:
    with _backend(sim.url) as backend:
        assert backend.check(["qwen2.5:7b"]) == {"qwen2.5:7b": digest_for("qwen2.5:7b")}
        result = backend.chat("qwen2.5:7b", "### Output\nA text.", options=OPTIONS)
    assert result.digest == digest_for("qwen2.5:7b") and "Overall score:" in result.text


def test_backend_reopens_after_close(sim: OllamaSim) -> None:
    backend = _backend(sim.url)
    first = backend.chat("llama3", "a", options=OPTIONS)
    backend.close()
    second = backend.chat("llama3", "b", options=OPTIONS)
    backend.close()
    assert first.attempts == second.attempts == 1 and sim.stats.requests == 2


@given(name=st.from_regex(r"[a-z][a-z0-9.\-]{0,10}(:[a-z0-9.]{1,6})?", fullmatch=True))
def test_tag_matches_is_reflexive_and_ignores_case_and_default_tag(name: str) -> None:
    assert tag_matches(name, name)
    assert tag_matches(name.upper(), name)
    if ":" not in name:
        assert tag_matches(name, f"{name}:latest") and tag_matches(f"{name}:latest", name)


def test_a_client_that_gives_up_mid_load_takes_the_load_with_it(sim: OllamaSim) -> None:
    """As in Ollama, the load belongs to the request: a first-byte timeout shorter than the load never gets
    the model loaded (why LLM_LOAD_TIMEOUT must cover a load); a patient client then loads it again."""
    sim.configure(swap_cost=1.0)
    with pytest.raises(BackendUnavailable):
        OllamaBackend(sim.url, timeout=0.3, policy=ONCE).chat("llama3", "hi", options=OPTIONS)
    deadline = time.monotonic() + 3
    while sim.stats.abandoned_loads == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sim.stats.abandoned_loads == 1 and sim.stats.loads == 1
    result = OllamaBackend(sim.url, timeout=5, idle_timeout=0.3, policy=ONCE).chat("llama3", "hi", options=OPTIONS)
    assert result.load_duration_ns >= 0.9e9 and sim.stats.loads == 2
