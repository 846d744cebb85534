"""The OpenAI-compatible backend against the simulator's /v1 dialect, through the official `openai` client."""

from __future__ import annotations

import math

import openai
import pytest

from evaluation.llm import BackendError, BackendUnavailable, ModelMissing, OpenAICompatBackend
from evaluation.llm.openai_backend import request_options
from evaluation.llm.policy import RetryPolicy
from tests.ollama_sim import FaultRule, OllamaSim, ReplyRule, SimConfig
from tests.ollama_sim.openai_api import hashed_logprob, tokens

PROMPT = "### Data\nname: Aromi\n### Output\nAromi is a cheap pub in the centre."


def _backend(url: str, *, retries: int = 4) -> OpenAICompatBackend:
    return OpenAICompatBackend(url, timeout=10, policy=RetryPolicy(transport_retries=retries, backoff=0.01))


def test_check_lists_models_and_names_every_missing_one(sim: OllamaSim) -> None:
    with _backend(sim.url) as backend:
        assert backend.check(["llama3"]) == {"llama3": ""}
        with pytest.raises(ModelMissing) as caught:
            backend.check(["llama3", "mistral", "phi4"])
    assert caught.value.models == ["mistral", "phi4"]


def test_a_url_ending_in_v1_is_not_doubled(sim: OllamaSim) -> None:
    with _backend(sim.url + "/v1/") as backend:
        assert backend.base_url == sim.url + "/v1"
        assert backend.check(["llama3"]) == {"llama3": ""}


def test_chat_returns_the_reply_and_maps_options(sim: OllamaSim) -> None:
    sim.configure(rules=[ReplyRule(reply="one two three four five", model="llama3")])
    with _backend(sim.url) as backend:
        full = backend.chat("llama3", PROMPT, options={"temperature": 0.0, "seed": 7, "num_ctx": 8192})
        cut = backend.chat("llama3", PROMPT, options={"num_predict": 2, "top_k": 5})
    assert full.text == "one two three four five" and full.done_reason == "stop"
    assert full.completion_tokens == 5 and full.prompt_tokens > 0 and full.attempts == 1
    assert cut.text == "one two" and cut.done_reason == "length"
    sent = [record.options for record in sim.stats.log]
    assert sent[0] == {"temperature": 0.0, "seed": 7}  # num_ctx is a server setting: not sent
    assert sent[1]["num_predict"] == 2


def test_unknown_options_are_refused_before_any_request(sim: OllamaSim) -> None:
    with pytest.raises(ValueError, match="mirostat"):
        request_options({"mirostat": 2})
    with _backend(sim.url) as backend, pytest.raises(ValueError, match="mirostat"):
        backend.chat("llama3", PROMPT, options={"mirostat": 2})
    assert sim.stats.requests == 0


def test_transient_failures_are_retried_and_a_missing_model_is_not(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", first=2, status=503)])
    with _backend(sim.url) as backend:
        result = backend.chat("llama3", PROMPT, options={})
        assert result.attempts == 3
        with pytest.raises(ModelMissing):
            backend.chat("mistral", PROMPT, options={})
    assert sim.stats.requests_per_model.get("mistral:latest") == 1


def test_a_client_error_is_final_and_named(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", status=400, message="context too long")])
    with _backend(sim.url) as backend, pytest.raises(BackendError, match="HTTP 400") as refused:
        backend.chat("llama3", PROMPT, options={})
    assert sim.stats.requests == 1
    assert sim.url in str(refused.value) and "context too long" not in str(refused.value)  # never the body


def test_an_unreachable_server_is_reported_with_its_url(closed_port_url: str) -> None:
    with _backend(closed_port_url, retries=1) as backend:
        with pytest.raises(BackendUnavailable, match=closed_port_url):
            backend.check(["llama3"])
        with pytest.raises(BackendUnavailable, match="2 attempt"):
            backend.chat("llama3", PROMPT, options={})


def test_text_logprobs_are_those_of_the_text_tokens_only(sim: OllamaSim) -> None:
    context = "Rate the fluency of this summary.\nSummary:"
    text = " The cat sat on the mat."
    with _backend(sim.url) as backend:
        scored = backend.text_logprobs("llama3", context, text)
    # The simulator's log-probabilities are a known function of (text before the token, token).
    expected_tokens = []
    expected = []
    position = 0
    for token in tokens(context + text):
        if position + len(token) > len(context):
            expected_tokens.append(token)
            expected.append(hashed_logprob((context + text)[:position], token))
        position += len(token)
    assert scored.tokens == tuple(expected_tokens) == (" The", " cat", " sat", " on", " the", " mat.")
    assert scored.logprobs == pytest.approx(expected)
    assert scored.mean == pytest.approx(sum(expected) / len(expected))
    assert all(-6 <= value < 0 for value in scored.logprobs)
    (request,) = [record for record in sim.stats.log if record.endpoint == "openai-completion"]
    assert request.options.get("num_predict") == 1


def test_text_logprobs_follow_the_servers_model_of_the_text() -> None:
    """A server that finds typos unlikely gives a typo'd text a lower GPTScore: the figure is the server's."""

    def unlikely_typos(_context: str, token: str) -> float:
        return -9.0 if "teh" in token else -1.0

    with OllamaSim(SimConfig(models=["llama3"], logprob=unlikely_typos)) as server, _backend(server.url) as backend:
        clean = backend.text_logprobs("llama3", "Text:", " the cat sat")
        typo = backend.text_logprobs("llama3", "Text:", " teh cat sat")
    assert clean.mean == pytest.approx(-1.0)
    assert typo.mean == pytest.approx((-9.0 - 1.0 - 1.0) / 3)


def test_a_server_that_does_not_echo_gives_an_error_not_a_score(sim: OllamaSim) -> None:
    with _backend(sim.url) as backend:
        client = backend._connection()
        # What a server without echo support sends back: only the generated token.
        plain = client.completions.create(model="llama3", prompt="Text: hello", max_tokens=1, logprobs=0)
        assert plain.choices[0].logprobs.text_offset == [0]
        original = client.completions.create

        def without_echo(**kwargs: object) -> object:
            kwargs.pop("echo", None)
            return original(**kwargs)

        client.completions.create = without_echo  # type: ignore[method-assign]
        with pytest.raises(BackendError, match="echo"):
            backend.text_logprobs("llama3", "Text:", " hello there")


def test_the_simulator_speaks_the_official_clients_shapes(sim: OllamaSim) -> None:
    client = openai.OpenAI(base_url=sim.url + "/v1", api_key="x", max_retries=0)
    listed = [model.id for model in client.models.list()]
    assert listed == ["llama3:latest", "gemma2:9b", "qwen2.5:7b"]
    with pytest.raises(openai.BadRequestError, match="streaming"):
        client.chat.completions.create(model="llama3", messages=[{"role": "user", "content": "x"}], stream=True)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    scored = client.completions.create(model="llama3", prompt="a b", echo=True, logprobs=1, max_tokens=0)
    choice = scored.choices[0]
    assert choice.text == "a b" and choice.finish_reason == "length"
    assert choice.logprobs.token_logprobs[0] is None and math.isfinite(choice.logprobs.token_logprobs[1])
    client.close()


SCHEMA = {"type": "object", "properties": {"errors": {"type": "array"}}, "required": ["errors"]}


def test_a_server_that_takes_only_json_object_gets_the_schema_that_way_and_keeps_getting_it(sim: OllamaSim) -> None:
    """llama-cpp-python's server refuses `json_schema` with a 500 carrying its validation error: that is no
    transient fault to retry but a shape to change, once, for every later call too."""
    sim.configure(response_format_types=("text", "json_object"))
    with _backend(sim.url) as backend:
        first = backend.chat("llama3", PROMPT, options={"format": SCHEMA})
        assert first.text and backend.schema_shape == "json_object"
        backend.chat("llama3", PROMPT + " again", options={"format": SCHEMA})
        plain = backend.chat("llama3", PROMPT, options={})  # no structured answer: no response_format at all
    sent = [record.answer_format for record in sim.stats.log]
    assert sent == [{"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}},
                    {"type": "json_object", "schema": SCHEMA}, {"type": "json_object", "schema": SCHEMA}, None]
    assert [record.status for record in sim.stats.log].count("bad_request") == 1  # refused once, never retried
    assert plain.text


def test_a_server_that_takes_no_structured_answer_is_named_with_what_to_do(sim: OllamaSim) -> None:
    from evaluation.llm.errors import FormatRefused

    sim.configure(response_format_types=("text",))
    with _backend(sim.url) as backend, pytest.raises(FormatRefused) as refused:
        backend.chat("llama3", PROMPT, options={"format": SCHEMA})
    assert "refuses structured answers for llama3" in str(refused.value)
    assert "answer format `text`" in str(refused.value)
    assert len(sim.stats.log) == 2  # each shape once


def test_request_options_ask_for_the_schema_in_either_shape() -> None:
    assert request_options({"format": SCHEMA})[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    assert request_options({"format": SCHEMA}, schema_shape="json_object")[0]["response_format"] == {
        "type": "json_object", "schema": SCHEMA}
