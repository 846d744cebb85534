"""The one client base: both backends share its retry loop, and every message names the kind of server."""

from __future__ import annotations

import pytest

from evaluation.llm.errors import BackendUnavailable, ModelMissing
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from tests.ollama_sim import FaultRule

FAST = RetryPolicy(transport_retries=2, backoff=0.01)


@pytest.mark.parametrize(("backend_class", "kind_words"), [
    (OllamaBackend, "Ollama at"), (OpenAICompatBackend, "The OpenAI-compatible server at"),
])
def test_spent_retries_name_the_server_kind(sim, backend_class, kind_words):
    sim.configure(faults=[FaultRule(kind="error", status=503, message="busy")])
    with backend_class(sim.url, policy=FAST) as backend, pytest.raises(BackendUnavailable) as caught:
        backend.chat("llama3", "hello", options={"temperature": 0})
    message = str(caught.value)
    assert message.startswith(kind_words) and "3 attempt(s)" in message and sim.url in message
    assert sim.stats.requests == 3
    assert ("ollama serve" in message) == (backend_class is OllamaBackend)


def test_missing_model_advice_fits_the_server_kind(sim):
    with OpenAICompatBackend(sim.url) as backend, pytest.raises(ModelMissing) as caught:
        backend.check(["mistral"])
    assert "ollama pull" not in str(caught.value) and "/v1/models" in str(caught.value)
    assert caught.value.commands == []
    with OllamaBackend(sim.url) as backend, pytest.raises(ModelMissing) as caught:
        backend.check(["mistral"])
    assert caught.value.commands == ["ollama pull mistral"]


def test_a_closed_client_reopens_on_next_use(sim):
    backend = OllamaBackend(sim.url)
    assert backend.chat("llama3", "one", options={}).text
    backend.close()
    assert backend.chat("llama3", "two", options={}).text
    backend.close()
    assert sim.stats.requests == 2
