"""Evaluator runs on real-server profiles (issue 21): every prompt fits or is refused, every answer is whole
or marked cut, thinking stays apart, an out-of-memory server pauses the run with its message."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.services.tokens import token_create
from corpus.models import Annotation, ParseStatus
from evaluation.models import EvaluatorRun, LLMCall, RunCall
from evaluation.runs.launch import run_create
from evaluation.selectors import run_problems
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import ReplyRule, SimConfig
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b"]
SUPERVISOR = "sup:1b"
SENTENCE = "The home team scored 23 points in the third quarter while the guests missed 7 of 9 attempts. "


def _dataset(name: str, lengths: list[int]):
    """Items whose outputs repeat a box-score sentence `n` times (RotoWire-like: long and full of digits)."""
    return factories.dataset(name, input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"i{i}", "inputs": {"Data": f"game {i}"}, "output": SENTENCE * n}
        for i, n in enumerate(lengths)
    ])


def _run(dataset, sim) -> EvaluatorRun:
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                     ollama_url=sim.url, parallel=2)
    job_execute(EvaluatorRun, run.pk)
    return EvaluatorRun.objects.get(pk=run.pk)


def _config(**kw) -> SimConfig:
    return SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, **kw)


def test_long_items_are_sent_whole_where_a_fixed_8192_would_be_cut(settings):
    """ollama-0.6 cuts silently (no `truncate`); num_ctx=auto sizes the context so nothing is cut."""
    dataset = _dataset("long", [600, 650])  # ~9.5k words each: over 8192 tokens
    with OllamaSim(_config(profile="ollama-0.6", context_length=65_536)) as sim:
        run = _run(dataset, sim)
        assert run.status == JobStatus.DONE, run.message
        assert sim.stats.truncated == 0 and sim.stats.requests == 2 * 3
        ctx = {r.options["num_ctx"] for r in sim.stats.log if r.model.startswith("ann")}
        assert len(ctx) == 1 and 8_192 < min(ctx) <= 65_536
    for call in LLMCall.objects.all():
        assert call.prompt_tokens == len(call.prompt.split())  # the server counted the whole prompt
    annotations = Annotation.objects.filter(source=run, kind="annotator")
    assert annotations.count() == 4 and all(a.parse_status == ParseStatus.OK for a in annotations)
    assert run.config["num_ctx"][ANNOTATORS[0]] % 1024 == 0


def test_a_prompt_longer_than_the_model_is_not_sent_and_the_run_goes_on():
    dataset = _dataset("too-long", [20, 900, 25])
    with OllamaSim(_config(profile="ollama", context_length=8_192)) as sim:
        run = _run(dataset, sim)
        assert run.status == JobStatus.DONE, run.message
        assert sim.stats.truncated == 0 and sim.stats.refused_too_long == 0  # never even sent
        assert sim.stats.requests == 2 * 3  # 2 items x (2 annotators + supervisor)
    long_item = dataset.items.get(external_id="i1")
    failed = Annotation.objects.filter(source=run, kind="annotator", item=long_item)
    assert failed.count() == 2
    for annotation in failed:
        assert annotation.parse_status == ParseStatus.FAILED
        assert annotation.parse_problems[0].startswith("prompt_too_long: ~") and "limit 8192" in \
            annotation.parse_problems[0]
    token = token_create(user=factories.user("res", role="researcher"), name="t")
    body = Client().get(f"/api/runs/{run.pk}", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert body["problems"] == {"prompt_too_long": 2, "answer_cut": 0}


def test_a_thinking_trace_with_a_decoy_score_leaves_the_answers_score():
    dataset = _dataset("think", [3, 4])
    answer = "Error 1:\nLocation: home team\nExplanation: not in the data\nSeverity: 2\nOverall score: Good"
    config = _config(profile="ollama-0.6", rules=(ReplyRule(answer),), thinking_models=tuple(ANNOTATORS))
    with OllamaSim(config) as sim:
        run = _run(dataset, sim)
    assert run.status == JobStatus.DONE, run.message
    for annotation in Annotation.objects.filter(source=run, kind="annotator"):
        assert annotation.score_label == "Good" and annotation.parse_status == ParseStatus.OK
        assert [s.text for s in annotation.spans.all()] == ["home team"]  # no phantom error from the trace
        assert "<think>" not in annotation.raw_answer
    traces = LLMCall.objects.filter(model__in=ANNOTATORS).values_list("thinking", flat=True)
    assert traces and all("Overall score: Poor" in t and "phantom" in t for t in traces)


def test_a_cut_answer_is_asked_again_with_twice_the_budget_then_stored_partial(settings):
    settings.LLM_ANSWER_TOKENS = 8
    dataset = _dataset("cut", [3])
    answer = "Error 1:\nLocation: home team\nExplanation: " + "very " * 40 + "long\nSeverity: 2\nOverall score: Good"
    with OllamaSim(_config(profile="ollama", rules=(ReplyRule(answer),))) as sim:
        run = _run(dataset, sim)
        budgets = [r.options["num_predict"] for r in sim.stats.log if r.model == ANNOTATORS[0]]
    assert budgets == [8, 16]
    annotation = Annotation.objects.get(source=run, kind="annotator", model=ANNOTATORS[0])
    assert annotation.parse_status != ParseStatus.OK
    assert annotation.parse_problems[0] == "answer_cut: 16 tokens"
    assert set(LLMCall.objects.filter(model=ANNOTATORS[0]).values_list("done_reason", flat=True)) == {"length"}
    assert RunCall.objects.filter(run=run, model=ANNOTATORS[0]).count() == 2
    assert run_problems(run.pk)["answer_cut"] >= 2


def test_an_out_of_memory_server_pauses_the_run_with_its_message():
    dataset = _dataset("oom", [3, 4])
    with OllamaSim(_config(profile="ollama", oom_models=(ANNOTATORS[1],))) as sim:
        run = _run(dataset, sim)
        oom_requests = [r for r in sim.stats.log if r.model == ANNOTATORS[1]]
    assert run.status == JobStatus.PAUSED
    assert "requires more system memory" in run.message and ANNOTATORS[1] in run.message
    assert "Free memory" in run.message and "ollama serve" not in run.message
    assert len(oom_requests) <= 2  # not retried: at most the requests already in flight


def test_preannotate_ends_with_the_counts_of_too_long_and_cut_pairs():
    _dataset("cmd", [20, 900])
    out = StringIO()
    with OllamaSim(_config(profile="ollama", context_length=8_192)) as sim:
        call_command("preannotate", dataset="cmd", aspect="accuracy", annotators=",".join(ANNOTATORS),
                     supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2, sync=True, stdout=out)
    assert out.getvalue().rstrip().splitlines()[-1] == "prompt_too_long: 2 pair(s); answer_cut: 0 pair(s)"
