"""The OpenAI-compatible client against a real server (llama-cpp-python with SmolLM2-135M): token counts, the
prompt cache's traces in `usage`, the refusal of a prompt over the context, model names, and GPTScore read from
echoed log-probabilities, checked against the same model's logits computed in-process."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest

from comparison.engine.gptscore import gptscore_context
from evaluation.llm.errors import BackendError, ModelMissing, PromptTooLong
from evaluation.llm.logprob_preflight import logprob_preflight
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from tests.conftest import REPO
from tests.real_model.conftest import ALIASES, N_CTX, SmallModel

pytestmark = pytest.mark.real_model

MODEL = ALIASES[0]
QUICK = RetryPolicy(transport_retries=1, backoff=0.1)
PROMPT = ("Data: name[Blue Door] | food[Thai] | area[riverside]\n"
          "Text: Blue Door serves Italian food by the river.\n"
          "Is the text accurate? Answer in one sentence.")
OPTIONS = {"temperature": 0.0, "seed": 42, "num_predict": 16}


def test_usage_counts_the_whole_prompt_with_the_chat_template_and_reports_no_cache(small_model: SmallModel):
    with OpenAICompatBackend(small_model.url, policy=QUICK) as backend:
        first = backend.chat(MODEL, PROMPT, options=OPTIONS)
        again = backend.chat(MODEL, PROMPT, options=OPTIONS)  # the same prompt: its tokens are still in the KV cache
    template = first.prompt_tokens - small_model.tokens(PROMPT)
    assert 0 < template < 64  # the GGUF's chat template (system turn, role markers) around our prompt
    assert again.prompt_tokens == first.prompt_tokens  # a reused prefix is still counted: the whole prompt
    assert first.cached_tokens is None and again.cached_tokens is None  # not reported, so not read as 0
    assert again.whole_prompt_tokens == again.prompt_tokens and again.evaluated_tokens == again.prompt_tokens
    assert 0 < first.completion_tokens <= OPTIONS["num_predict"] and first.done_reason in ("stop", "length")
    raw = httpx.post(f"{small_model.url}/v1/chat/completions", timeout=120, json={
        "model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 4, "temperature": 0})
    body = raw.json()
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert "timings" not in body and "tokens_cached" not in body  # llama-server's cache fields are not sent


def test_a_prompt_over_the_context_is_refused_as_too_long_and_the_context_is_not_stated(small_model: SmallModel):
    long_prompt = "The box score lists points, rebounds and assists. " * 400
    assert small_model.tokens(long_prompt) > N_CTX
    with OpenAICompatBackend(small_model.url, policy=QUICK) as backend:
        with pytest.raises(PromptTooLong, match="too long"):
            backend.chat(MODEL, long_prompt, options=OPTIONS)
        assert backend.context_length(MODEL) is None  # no /props, no max_model_len: only the refusal guards
        assert backend.chat(MODEL, PROMPT, options=OPTIONS).text  # the server is still fine


def test_model_names_are_checked_against_the_list_because_the_server_falls_back_to_its_default(
    small_model: SmallModel,
):
    with OpenAICompatBackend(small_model.url, policy=QUICK) as backend:
        assert backend.list_models() == list(ALIASES)
        assert backend.check(list(ALIASES)) == {alias: "" for alias in ALIASES}
        with pytest.raises(ModelMissing):
            backend.check(["smollm2-1.7b"])
        # What the check is for: a name the server does not have is answered by its first model, not refused.
        answer = backend.chat("smollm2-1.7b", PROMPT, options=OPTIONS)
    assert answer.text and answer.model == "smollm2-1.7b"


def _reference(small_model: SmallModel, context: str, text: str) -> dict:
    done = subprocess.run(
        [small_model.python, str(REPO / "tests" / "real_model" / "llama_reference.py")],
        input=json.dumps({"model": small_model.gguf, "context": context, "text": text, "n_ctx": N_CTX}),
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


CONTEXT = gptscore_context(
    task="Turn the restaurant data into a short description.", output_noun="description", aspect="accuracy",
    definition="every statement is supported by the data",
    inputs={"Data": "name[The Copper Kettle] | eatType[coffee shop] | food[English] | area[city centre]"},
    output_header="Text",
)
TEXT = "The Copper Kettle is a coffee shop serving English food in the city centre."
BOS = "<|im_start|>"  # SmolLM2's BOS token; its tokenizer adds none (tokenizer.ggml.add_bos_token false)


def test_gptscore_over_the_server_equals_the_in_process_score_once_the_echo_is_aligned(small_model: SmallModel):
    with OpenAICompatBackend(small_model.url, policy=QUICK) as backend:
        # Without a BOS the server gives each echoed token the probability of the token after it: the preflight
        # refuses it, and the values are indeed far from the model's own.
        with pytest.raises(BackendError, match="belong to the token after each one"):
            logprob_preflight(backend, MODEL)
        shifted = backend.text_logprobs(MODEL, CONTEXT, TEXT)
        logprob_preflight(backend, MODEL, prefix=BOS)  # with SmolLM2's BOS in front the server strips and aligns
        served = backend.text_logprobs(MODEL, CONTEXT, TEXT, prefix=BOS)
    local = _reference(small_model, BOS + CONTEXT, TEXT)
    unprefixed = _reference(small_model, CONTEXT, TEXT)
    assert "".join(served.tokens) == "".join(local["tokens"]) == TEXT
    assert len(served.logprobs) == len(local["logprobs"])
    assert served.mean == pytest.approx(_mean(local["logprobs"]), abs=1e-4)
    assert served.logprobs == pytest.approx(local["logprobs"], abs=1e-3)
    assert abs(shifted.mean - _mean(unprefixed["logprobs"])) > 1.0


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
