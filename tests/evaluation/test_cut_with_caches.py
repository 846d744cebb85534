"""A prompt the server really cuts is still caught with prompt caches on, on every profile: by the server's
refusal, or by its count in the server's own signature; where neither can tell, the answer says so."""

from __future__ import annotations

import threading

import pytest

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.budget import ModelBudget
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from evaluation.runs.scheduler import Step, perform, plan_attempts
from tests.ollama_sim import OllamaSim, SimConfig
from tests.ollama_sim.config import ReplyRule

WARM = " ".join(["a"] * 500)  # shares its words with the head of the long prompt: the cache holds them
LONG = " ".join(["a"] * 3_000)  # 3,000 words against a context of 2,048

NO_RETRY = RetryPolicy(transport_retries=0)


@pytest.mark.parametrize(("profile", "count", "version", "caught"), [
    ("ollama", "full", "0.33.0", True),  # refused: truncate:false
    ("ollama", "evaluated", "0.30.3", True),
    ("ollama-0.6", "full", "0.12.0", True),  # cut silently: the count is at num_ctx
    ("ollama-0.6", "zero", "0.1.30", False),  # cut silently and no count: only a run's problem can say so
    ("vllm", "full", "0.12.0", True),
    ("llamacpp", "full", "0.12.0", True),
    ("tgi2", "full", "0.12.0", True),
])
def test_a_really_cut_prompt_is_still_caught_with_caches_on(profile, count, version, caught):
    config = SimConfig(models=["m:1b"], profile=profile, count=count, version=version, cache_slots=1,
                       context_length=2_048, rules=(ReplyRule("Score: 3"),))
    budget = ModelBudget(limit=None, answer_tokens=64, pinned=2_048)
    budget.estimator.factor = 0.5  # a tokenizer said to count half our estimate: the prompt "fits"
    assert budget.check(LONG).fits
    options = budget.options({"temperature": 0.0})
    step = Step(0, LONG, plan_attempts("m:1b", "", LONG, options, attempts=1, retry_temperature=0.1), budget=budget)
    with OllamaSim(config) as sim:
        kind = OllamaBackend if profile.startswith("ollama") else OpenAICompatBackend
        with kind(sim.url, policy=NO_RETRY) as backend:
            backend.chat("m:1b", WARM, options=options)
            outcome = perform(backend, "m:1b", step, lambda text: ParsedAnswer(score=3, status="ok"),
                              threading.Event())
    if caught:
        assert outcome.parsed.status == "failed" and outcome.problems[0].startswith("prompt_too_long: ~")
        assert outcome.unchecked == ""
    else:
        assert outcome.parsed.status == "ok" and outcome.unchecked == sim.url
