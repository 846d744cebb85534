"""Prompt caches of the simulated servers and how the backends read them: which tokens a request takes from a
cache (per profile), what each `--count` mode reports, and that cached tokens cost no prompt time."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from evaluation.llm.counting import COUNT, NONE, REFUSAL
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.policy import RetryPolicy
from tests.ollama_sim import OllamaSim, SimConfig
from tests.ollama_sim.config import ReplyRule
from tests.ollama_sim.prompt_cache import BlockCache, SlotCache, make_cache

HEAD = " ".join(f"head{i}" for i in range(50))
A = HEAD + " " + " ".join(f"a{i}" for i in range(10))  # 60 words
B = HEAD + " " + " ".join(f"b{i}" for i in range(10))  # shares 50 words with A

NO_RETRY = RetryPolicy(transport_retries=0)


def _words(text: str) -> list[str]:
    return text.split()


def test_ollama_slots_take_the_free_slot_with_the_longest_prefix_and_never_share():
    cache = SlotCache(2)
    first, cached = cache.take(_words(A))
    assert (first, cached) == (0, 0)
    other, cached = cache.take(_words(B))  # slot 0 is busy: B gets slot 1, which holds nothing
    assert (other, cached) == (1, 0)
    cache.give_back(first, _words(A))
    cache.give_back(other, _words("x y z"))
    again, cached = cache.take(_words(B))
    assert (again, cached) == (0, 50)  # slot 0 holds A: 50 words in common
    cache.give_back(again, _words(B))
    slot, cached = cache.take(_words(B))
    assert (slot, cached) == (0, 59)  # cached whole: the last token is evaluated again


def test_llamacpp_takes_a_similar_slot_or_else_the_least_recently_used():
    cache = SlotCache(2, similarity=0.5)
    for text in (A, "x y z"):
        slot, _ = cache.take(_words(text))
        cache.give_back(slot, _words(text))
    slot, cached = cache.take(_words(B))  # 50 of 60 words in common with A's slot: above 0.5
    assert cached == 50 and cache.slots[slot].tokens == _words(A)
    cache.give_back(slot, _words(B))
    short = HEAD.split()[:5] + [f"c{i}" for i in range(20)]  # 5 of 25 in common: below 0.5
    slot, cached = cache.take(short)
    assert cache.slots[slot].tokens == ["x", "y", "z"] and cached == 0  # the least recently used slot


def test_vllm_caches_whole_16_token_blocks_shared_by_every_request():
    cache = BlockCache(capacity_blocks=100)
    assert cache.take(_words(A)) == (None, 0)
    assert cache.take(_words(B)) == (None, 48)  # 50 words in common: three whole blocks
    assert cache.take(_words(A)) == (None, 48)  # 60 words: blocks of 16 up to 59 tokens
    assert make_cache("tgi2", slots=4, context_length=8192) is None
    assert make_cache("ollama", slots=0, context_length=8192) is None


def _sim(**kw) -> OllamaSim:
    return OllamaSim(SimConfig(models=["m:1b"], parallel=1, rules=(ReplyRule("Score: 3"),), **kw))


@pytest.mark.parametrize(("count", "version", "first", "second"), [
    # (prompt_tokens, cached_tokens, count_whole, guard) of A, then of B after A
    ("full", "0.33.0", (60, 0, True, REFUSAL), (60, 50, True, REFUSAL)),
    ("full", "0.12.0", (60, None, True, COUNT), (60, None, True, COUNT)),
    ("evaluated", "0.30.3", (60, None, False, REFUSAL), (10, None, False, REFUSAL)),
    ("evaluated", "0.12.0", (60, None, True, COUNT), (10, None, True, COUNT)),  # a count the estimator must doubt
    ("zero", "0.1.30", (60, None, False, NONE), (0, None, False, NONE)),
])
def test_each_count_mode_reports_what_its_ollama_release_sends(count, version, first, second):
    with _sim(profile="ollama", cache_slots=1, count=count, version=version) as sim, \
            OllamaBackend(sim.url, policy=NO_RETRY) as backend:
        results = [backend.chat("m:1b", text, options={"num_ctx": 4096}) for text in (A, B)]
        assert [r.cached_tokens for r in sim.stats.log] == [0, 50]
        assert (sim.stats.prompt_tokens_sent, sim.stats.prompt_tokens_cached) == (120, 50)
    for result, (tokens, cached, whole, guard) in zip(results, (first, second), strict=True):
        assert (result.prompt_tokens, result.cached_tokens, result.count_whole, result.guard) == \
            (tokens, cached, whole, guard)


@pytest.mark.parametrize(("profile", "cached"), [("vllm", 48), ("llamacpp", 50), ("tgi2", 0)])
def test_openai_compatible_servers_report_the_cached_part_of_a_whole_count(profile, cached):
    with _sim(profile=profile, cache_slots=1) as sim, OpenAICompatBackend(sim.url, policy=NO_RETRY) as backend:
        backend.chat("m:1b", A, options={"num_predict": 64})
        result = backend.chat("m:1b", B, options={"num_predict": 64})
    assert result.prompt_tokens == 60 and result.count_whole and result.guard == REFUSAL
    assert result.cached_tokens == (cached if profile != "tgi2" else None)


def test_cached_tokens_cost_no_prompt_time():
    long = " ".join(f"w{i}" for i in range(800))
    with _sim(profile="ollama", cache_slots=1, prompt_tokens_per_second=1000.0) as sim, \
            OllamaBackend(sim.url, policy=NO_RETRY) as backend:
        began = time.perf_counter()
        backend.chat("m:1b", long, options={"num_ctx": 4096})
        cold = time.perf_counter() - began
        began = time.perf_counter()
        backend.chat("m:1b", long + " one more", options={"num_ctx": 4096})
        warm = time.perf_counter() - began
    assert cold >= 0.8  # 800 tokens at 1000/s
    assert warm < 0.4  # 3 tokens evaluated; 799 from the cache


def test_the_command_line_sets_cache_slots_and_count(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.ollama_sim", "--cache-slots", "3", "--count", "evaluated"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = process.stdout.readline().strip()
        with urllib.request.urlopen(f"{url}/_sim/config", timeout=10) as response:
            config = json.load(response)
        assert (config["cache_slots"], config["count"]) == (3, "evaluated")
    finally:
        process.terminate()
        process.wait(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "tests.ollama_sim", "--count", "some"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "--count" in bad.stderr
