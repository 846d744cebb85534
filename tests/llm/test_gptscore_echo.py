"""GPTScore on real servers: the scored tokens found by text (BOS strings included), and the preflight."""

from __future__ import annotations

import pytest

from evaluation.engine.echo_tokens import EchoMismatch, scored_token_indices
from evaluation.llm.errors import BackendError
from evaluation.llm.logprob_preflight import logprob_preflight
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from tests.ollama_sim import OllamaSim, SimConfig
from tests.ollama_sim.openai_api import hashed_logprob, tokens

CONTEXT = "Rate the fluency of this summary.\nSummary:"
TEXT = " The cat sat on the mat, said Zoë 🐈."


def _direct_mean(bos: str, context: str, text: str) -> tuple[list[str], float]:
    """The simulator's log-probabilities are a known function of (echoed text before the token, token):
    compute the mean over the text's tokens directly, the way the server conditions them (after the BOS)."""
    echoed = bos + context + text
    toks = ([bos] if bos else []) + tokens(context + text)
    kept, values, position = [], [], 0
    for token in toks:
        if position + len(token) > len(bos + context):
            kept.append(token)
            values.append(hashed_logprob(echoed[:position], token))
        position += len(token)
    return kept, sum(values) / len(values)


@pytest.mark.parametrize("bos", ["", "<s>", "<|begin_of_text|>"])
def test_boundary_found_by_text_with_and_without_a_bos_string(bos: str) -> None:
    toks = ([bos] if bos else []) + tokens(CONTEXT + TEXT) + [" Next"]  # and one generated token
    picked = [toks[i] for i in scored_token_indices(CONTEXT, TEXT, toks)]
    assert "".join(picked) == TEXT
    # raw offsets would have been shifted by the BOS text: the window would start inside the context
    shifted = [t for t, off in zip(toks, _offsets(toks), strict=True) if off + len(t) > len(CONTEXT)
               and off < len(CONTEXT + TEXT)]
    assert (shifted == picked) == (bos == "")


def _offsets(toks: list[str]) -> list[int]:
    out, position = [], 0
    for token in toks:
        out.append(position)
        position += len(token)
    return out


def test_boundary_survives_a_tokenizer_that_drops_spaces_when_decoding_single_tokens() -> None:
    toks = ["<s>", "Text", ":", "The", "cat", "sat"]  # SentencePiece pieces decoded one by one
    picked = [toks[i] for i in scored_token_indices("Text: ", "The cat sat", toks)]
    assert picked == ["The", "cat", "sat"]


def test_an_echo_without_the_prompt_is_a_clear_error() -> None:
    with pytest.raises(EchoMismatch, match="did not echo"):
        scored_token_indices("Text:", " hello", [" world"])


@pytest.mark.parametrize("bos", ["<s>", "<|begin_of_text|>", ""])
def test_gptscore_equals_the_direct_value_on_a_bos_echoing_server(bos: str) -> None:
    with OllamaSim(SimConfig(models=["llama3"], bos_text=bos)) as server, \
            OpenAICompatBackend(server.url, timeout=10, policy=RetryPolicy(transport_retries=0)) as backend:
        scored = backend.text_logprobs("llama3", CONTEXT, TEXT)
    expected_tokens, expected_mean = _direct_mean(bos, CONTEXT, TEXT)
    assert list(scored.tokens) == expected_tokens and "".join(scored.tokens) == TEXT
    assert scored.mean == pytest.approx(expected_mean, abs=1e-12)


def test_preflight_passes_a_server_that_echoes() -> None:
    with OllamaSim(SimConfig(models=["llama3"], bos_text="<s>")) as server, \
            OpenAICompatBackend(server.url, timeout=10, policy=RetryPolicy(transport_retries=0)) as backend:
        logprob_preflight(backend, "llama3")
        assert sum(1 for r in server.stats.log if r.endpoint == "openai-completion") == 1


@pytest.mark.parametrize(("echo", "lacks"), [("rejected", "HTTP 400"),
                                              ("ignored", "no log-probabilities")])
def test_preflight_names_what_the_server_lacks(echo: str, lacks: str) -> None:
    with OllamaSim(SimConfig(models=["llama3"], echo=echo)) as server, \
            OpenAICompatBackend(server.url, timeout=10, policy=RetryPolicy(transport_retries=0)) as backend, \
            pytest.raises(BackendError) as caught:
        logprob_preflight(backend, "llama3")
    message = str(caught.value)
    assert lacks in message and "preflight" in message and "vLLM >= 0.5.2" in message
    assert "lacks prompt log-probabilities" in message and "Only no echo is supported" not in message
    assert "llama.cpp server rejects" in message


def test_preflight_refuses_a_server_whose_echoed_values_belong_to_the_next_token() -> None:
    config = SimConfig(models=["llama3"], profile="vllm", echo="shifted")
    with OllamaSim(config) as sim, OpenAICompatBackend(sim.url, policy=RetryPolicy(backoff=0.01)) as backend:
        assert backend.echo_shifted("llama3") is True
        with pytest.raises(BackendError, match="belong to the token after each one.*GPTSCORE_PREFIX"):
            logprob_preflight(backend, "llama3")
    with OllamaSim(SimConfig(models=["llama3"], profile="vllm")) as sim, OpenAICompatBackend(sim.url) as backend:
        assert backend.echo_shifted("llama3") is False
        logprob_preflight(backend, "llama3")  # aligned: passes


def test_a_prefix_is_sent_before_the_context_but_not_looked_for_in_the_echo() -> None:
    with OllamaSim(SimConfig(models=["llama3"], profile="vllm")) as sim, OpenAICompatBackend(sim.url) as backend:
        scored = backend.text_logprobs("llama3", CONTEXT, TEXT, prefix="<|im_start|>")
        sent = sim.stats.log[-1]
    kept, mean = _direct_mean("", "<|im_start|>" + CONTEXT, TEXT)
    assert "".join(scored.tokens) == TEXT == "".join(kept)
    assert scored.mean == pytest.approx(mean)
    assert sent.endpoint == "openai-completion"
