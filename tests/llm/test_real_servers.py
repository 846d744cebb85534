"""Both backends against the simulator's real-server profiles (issue 21): context lengths, refusals of
too-long prompts, truncation, answer cuts, thinking and out-of-memory, through the official clients."""

from __future__ import annotations

import pytest

from evaluation.llm.errors import OutOfMemory, PromptTooLong
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from tests.ollama_sim import OllamaSim, SimConfig
from tests.ollama_sim.config import DEFAULT_TRACE, ReplyRule

FAST = RetryPolicy(transport_retries=2, backoff=0.01)
QUICK = RetryPolicy(backoff=0.01)

ANSWER = "Overall score: Good\nThe text is fine."
LONG = "word " * 3_000


def _sim(profile: str, **kw) -> OllamaSim:
    return OllamaSim(SimConfig(models=["think:8b", "plain:1b"], profile=profile, context_length=2_048,
                               rules=(ReplyRule(ANSWER),), **kw))


def test_ollama_states_the_context_length_and_refuses_instead_of_cutting():
    with _sim("ollama") as sim, OllamaBackend(sim.url, policy=RetryPolicy(transport_retries=0)) as backend:
        assert backend.context_length("plain:1b") == 2_048
        with pytest.raises(PromptTooLong, match="Ollama at .* too long"):
            backend.chat("plain:1b", LONG, options={"num_ctx": 2_048})
        assert sim.stats.refused_too_long == 1 and sim.stats.truncated == 0
        assert "truncate" in sim.stats.log[0].top_level_keys


def test_old_ollama_cuts_to_the_context_and_says_so_only_in_the_count():
    with _sim("ollama-0.6") as sim, OllamaBackend(sim.url, policy=RetryPolicy(transport_retries=0)) as backend:
        result = backend.chat("plain:1b", LONG, options={"num_ctx": 1_024})
        assert sim.stats.truncated == 1 and result.prompt_tokens == 1_024  # kept head + tail


@pytest.mark.parametrize(("profile", "status"), [("vllm", 400), ("llamacpp", 400), ("tgi2", 422)])
def test_openai_compatible_servers_refuse_too_long_prompts_as_one_failed_request(profile, status):
    with _sim(profile) as sim, OpenAICompatBackend(sim.url, policy=FAST) as backend:
        with pytest.raises(PromptTooLong) as caught:
            backend.chat("plain:1b", LONG, options={"num_predict": 256})
        assert sim.stats.requests == 1  # not retried
        assert "OpenAI-compatible" in str(caught.value)


def test_context_length_from_vllm_models_and_llamacpp_props():
    for profile in ("vllm", "llamacpp"):
        with _sim(profile) as sim, OpenAICompatBackend(sim.url) as backend:
            assert backend.context_length("plain:1b") == 2_048
    with _sim("tgi2") as sim, OpenAICompatBackend(sim.url) as backend:
        assert backend.context_length("plain:1b") is None


def test_tgi_cuts_at_100_tokens_unless_max_tokens_is_sent():
    config = SimConfig(models=["plain:1b"], profile="tgi2", rules=(ReplyRule(" ".join(["word"] * 300)),))
    with OllamaSim(config) as sim, OpenAICompatBackend(sim.url) as backend:
        cut = backend.chat("plain:1b", "hi", options={})
        assert cut.done_reason == "length" and cut.completion_tokens == 100
        whole = backend.chat("plain:1b", "hi", options={"num_predict": 2_048})
        assert whole.done_reason == "stop" and whole.completion_tokens == 300


@pytest.mark.parametrize("profile", ["ollama", "ollama-0.6", "vllm", "llamacpp", "tgi2"])
def test_thinking_is_kept_apart_on_every_server(profile):
    with _sim(profile, thinking_models=("think:8b",)) as sim:
        backend = OllamaBackend(sim.url) if profile.startswith("ollama") else OpenAICompatBackend(sim.url)
        with backend:
            result = backend.chat("think:8b", "hi", options={"num_predict": 1_000})
    assert result.text == ANSWER
    assert "Score: 1" in result.thinking and result.thinking.split()[0] == DEFAULT_TRACE.split()[0]


def test_out_of_memory_is_named_on_an_openai_compatible_server_too():
    with _sim("vllm", oom_models=("plain:1b",)) as sim, OpenAICompatBackend(sim.url, policy=QUICK) as backend:
        with pytest.raises(OutOfMemory, match="requires more system memory"):
            backend.chat("plain:1b", "hi", options={})
        assert sim.stats.requests == 1
