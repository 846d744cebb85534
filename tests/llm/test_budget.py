"""The pure budget functions (issue 21): token estimates, num_ctx per (run, model), fits, cut detection, and
thinking kept apart from the answer."""

from __future__ import annotations

import pytest

from evaluation.llm.budget import (
    CTX_STEP,
    Estimator,
    ModelBudget,
    Reading,
    fit,
    num_ctx_for,
    raw_estimate,
)
from evaluation.llm.counting import COUNT, NONE, REFUSAL
from evaluation.llm.thinking import split_thinking


def test_estimate_counts_digits_and_marks_one_each_and_errs_high_on_words():
    assert raw_estimate("1234567890") - raw_estimate("") == 10
    words = "the quick brown fox jumps over the lazy dog " * 50
    assert raw_estimate(words) > len(words.split())  # a word is one or two tokens; the estimate gives more


@pytest.mark.parametrize(("prompt", "answer", "limit", "expected"), [
    (7_400, 2_048, 32_768, 10_240),  # the longest RotoWire annotator prompt: a fixed 8192 would cut it
    (100, 2_048, None, 3_072),
    (30_000, 4_096, 32_768, 32_768),  # capped at the model's length
    (0, 0, None, CTX_STEP),
])
def test_num_ctx_is_the_smallest_multiple_of_1024_holding_prompt_and_answer(prompt, answer, limit, expected):
    got = num_ctx_for(prompt, answer, model_limit=limit)
    assert got == expected and got % CTX_STEP == 0
    if limit is None or prompt + answer <= limit:
        assert got >= prompt + answer > got - CTX_STEP or got == CTX_STEP


def test_a_pinned_num_ctx_wins():
    assert num_ctx_for(50_000, 2_048, model_limit=8_192, pinned=4_096) == 4_096


def test_fit_leaves_the_answer_what_the_prompt_leaves():
    assert fit(6_000, num_ctx=8_192, answer_tokens=2_048).answer_tokens == 2_048
    tight = fit(7_900, num_ctx=8_192, answer_tokens=2_048)
    assert tight.fits and tight.answer_tokens == 292
    refused = fit(8_100, num_ctx=8_192, answer_tokens=2_048)
    assert not refused.fits and refused.problem == "prompt_too_long: ~8100 tokens, limit 8192"


def test_budget_grows_to_the_longest_prompt_that_can_fit_and_never_shrinks():
    budget = ModelBudget(limit=4_096, answer_tokens=512)
    short, long_, too_long = "word " * 100, "word " * 2_000, "word " * 20_000
    first = budget.settle([short])
    assert first == num_ctx_for(budget.estimator.tokens(short), 512, model_limit=4_096)
    assert budget.settle([long_]) >= budget.estimator.tokens(long_) + 512 > first
    grown = budget.num_ctx
    assert budget.settle([too_long, short]) == grown  # what cannot fit does not grow it
    assert not budget.check(too_long).fits and budget.check(long_).fits
    assert budget.options({"temperature": 0}) == {"temperature": 0, "num_ctx": grown, "num_predict": 512}


def test_calibration_follows_the_servers_count_but_stays_above_it():
    estimator = Estimator()
    text = "alpha beta gamma delta " * 400
    raw = estimator.tokens(text)
    estimator.observe(text, prompt_eval_count=raw // 2)
    assert raw // 2 < estimator.tokens(text) < raw
    estimator.observe(text, prompt_eval_count=raw * 3)  # a tokenizer that counts more: never above raw
    assert estimator.tokens(text) == raw


def _read(estimator: Estimator, text: str, tokens: int, *, num_ctx: int, whole: bool = True, guard: str = COUNT,
          cached: int | None = None):
    return estimator.read(text, tokens=tokens, cached=cached, whole=whole, guard=guard, num_ctx=num_ctx)


def test_cut_prompts_are_recognised_by_the_servers_own_signature_only():
    estimator = Estimator()
    text = "alpha beta gamma delta " * 400
    words = len(text.split())
    assert _read(estimator, text, words, num_ctx=8_192) == Reading(cut=False, unchecked=False)
    assert _read(Estimator(), text, 1_000 // 2 + 5, num_ctx=1_000).cut  # >= 0.30.9: num_keep + num_ctx/2 kept
    assert _read(estimator, text + "y", 1_000, num_ctx=1_000).cut  # older Ollama cuts to num_ctx
    # A count far below the estimate is no cut (Llama 3 groups digits; a cache leaves tokens out) ...
    assert not _read(Estimator(), "1234567890 " * 300, 200, num_ctx=8_192).cut
    # ... and a server that refuses over-long prompts is never read as having cut one.
    assert not _read(Estimator(), text, 1_000, num_ctx=1_000, guard=REFUSAL).cut


def test_a_count_that_may_leave_the_cache_out_says_nothing():
    text = "alpha beta gamma delta " * 400
    unguarded = _read(Estimator(), text, 12, num_ctx=1_000, whole=False, guard=NONE)
    assert unguarded == Reading(cut=False, unchecked=True)
    assert _read(Estimator(), text, 12, num_ctx=1_000, whole=False, guard=REFUSAL) == Reading(False, False)


def test_a_count_short_by_about_the_shared_prefix_is_not_read_as_the_whole_prompt():
    estimator = Estimator()
    prefix = "The box score: " + "word " * 900
    first, second = prefix + "the first text ends here.", prefix + "a perturbed text ends here."
    assert _read(estimator, first, len(first.split()), num_ctx=4_096) == Reading(False, False)
    factor = estimator.factor
    # An Ollama that claims a whole-counting release but counts what it evaluated after a cache hit: the count
    # covers the suffix only. It is not a cut, and (no refusal to rely on) the cut cannot be checked.
    assert _read(estimator, second, 6, num_ctx=1_000) == Reading(cut=False, unchecked=True)
    assert estimator.factor == factor  # nor does it calibrate the estimate down
    # The same count with the cached part reported is the whole prompt as PR #17943 counts it.
    third = prefix + "another text."
    assert _read(estimator, third, len(third.split()), num_ctx=4_096, cached=900) == Reading(False, False)


@pytest.mark.parametrize(("content", "given", "answer", "trace"), [
    ("Score: 4", "I think. Score: 1", "Score: 4", "I think. Score: 1"),  # Ollama 0.12.4+, reasoning_content
    ("<think>\nScore: 1\n</think>\n\nScore: 4", "", "Score: 4", "Score: 1"),  # inline (old Ollama, TGI)
    ("Draft. Score: 1\n</think>\n\nScore: 4", "", "Score: 4", "Draft. Score: 1"),  # R1 on vLLM: no opening tag
    ("<think>\nScore: 1 and then the budget ran", "", "", "Score: 1 and then the budget ran"),  # cut mid-trace
    ("Score: 4", "", "Score: 4", ""),
])
def test_thinking_is_split_from_the_answer(content, given, answer, trace):
    assert split_thinking(content, given) == (answer, trace)
