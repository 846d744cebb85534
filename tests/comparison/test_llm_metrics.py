"""GPTScore on the simulated OpenAI-compatible server, and evaluator-run metrics on the simulated Ollama:
real HTTP on loopback through the official clients; a rerun makes zero LLM calls."""

from __future__ import annotations

import hashlib
import json

import pytest

from comparison.models import ComparisonJob, MetricScore
from comparison.services.jobs import comparison_create
from comparison.services.results import export_document
from corpus.models import Annotation, AnnotationKind, Item
from errors import UserError
from evaluation.llm.openai_backend import SHIFT_PROBE
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)
LAPTOP = ["llama3.2:3b", "qwen2.5:3b", "gemma2:2b", "phi3.5:3.8b"]


def _word_logprob(before: str, token: str) -> float:
    """A log-probability we can recompute by hand: minus a tenth of the word's length."""
    return -len(token.strip()) / 10


_PREFLIGHT = hashlib.sha256(SHIFT_PROBE.encode()).hexdigest()


def _requests(sim: OllamaSim) -> int:
    """Scoring requests: the one-token preflight each job makes before any work is not one."""
    return sum(1 for r in sim.stats.log if r.prompt_sha256 != _PREFLIGHT)


def _execute(job: ComparisonJob) -> ComparisonJob:
    status = job_execute(ComparisonJob, job.pk)
    job = ComparisonJob.objects.get(pk=job.pk)
    assert status == JobStatus.DONE, job.message
    return job


def test_gptscore_is_the_mean_token_logprob_of_the_output_and_a_rerun_calls_nothing(summaries):
    with OllamaSim(SimConfig(models=["scorer-1b"], logprob=_word_logprob)) as sim:
        job = _execute(comparison_create(dataset=summaries, metrics="gptscore:scorer-1b,length", gptscore_url=sim.url))
        calls = _requests(sim)
        assert calls == 4  # one echo+logprobs request per item and aspect (4 items x 1 aspect)
        assert job.llm_calls == 4
        for item in Item.objects.filter(dataset=summaries):
            expected = -sum(len(w) for w in item.output.split()) / len(item.output.split()) / 10
            got = MetricScore.objects.get(item=item, metric="gptscore:scorer-1b", aspect="factual consistency")
            assert got.value == pytest.approx(expected)
        audit = LLMCall.objects.filter(model="scorer-1b")
        assert audit.count() == 4
        assert {"mean", "tokens"} <= set(json.loads(audit.first().response))

        again = _execute(comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url))
        assert _requests(sim) == calls and again.llm_calls == 0  # the stored scores answer
        MetricScore.objects.filter(metric="gptscore:scorer-1b").delete()
        third = _execute(comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url))
        assert _requests(sim) == calls and third.llm_calls == 0  # the call cache answers
        assert MetricScore.objects.filter(metric="gptscore:scorer-1b").count() == 4
        row = next(r for r in job.results["correlations"]
                   if r["metric"] == "gptscore:scorer-1b" and r["level"] == "dataset")
        assert row["n"] == 4


def test_gptscore_refused_when_the_server_is_unreachable_or_lacks_the_model(summaries):
    with OllamaSim(SimConfig(models=["scorer-1b"])) as sim:
        with pytest.raises(UserError, match="other-7b"):
            comparison_create(dataset=summaries, metrics="gptscore:other-7b", gptscore_url=sim.url)
        url = sim.url
    with pytest.raises(UserError, match="Cannot reach"):
        comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=url)
    assert not ComparisonJob.objects.exists()


def test_gptscore_refused_before_any_job_by_a_server_without_echo(summaries):
    # llama.cpp rejects echo; TGI ignores it and returns no log-probabilities (REAL_SERVERS.md). The message says
    # what the server lacks and its HTTP status, never the server's own body (issue 26: errors never echo a body).
    for echo, lacks in (("rejected", r"lacks prompt log-probabilities \(.*HTTP 400"),
                        ("ignored", "lacks prompt log-probabilities .*no log-probabilities")):
        with OllamaSim(SimConfig(models=["scorer-1b"], echo=echo)) as sim:
            with pytest.raises(UserError, match=lacks) as refused:
                comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url)
            assert "Only no echo is supported" not in str(refused.value)
            assert sim.stats.endpoint_hits["POST /v1/completions"] == 1  # the one-token preflight, nothing else
    assert not ComparisonJob.objects.exists()
@pytest.mark.strict_allowlist
def test_gptscore_server_must_be_on_the_allowlist(summaries, settings):
    """GPTScore's address goes through the same allowlist as every job's servers (it used to skip it)."""
    with OllamaSim(SimConfig(models=["scorer-1b"])) as sim:
        with pytest.raises(UserError, match="not an allowed GPTScore server"):
            comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url)
        settings.GPTSCORE_URL = sim.url  # allowed when the job is made...
        job = comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url, check=False)
        settings.GPTSCORE_URL = ""  # ...then taken off the allowlist: the worker checks again and sends nothing
        assert job_execute(ComparisonJob, job.pk) == JobStatus.FAILED
        assert sim.stats.requests == 0 and sim.stats.endpoint_hits.get("openai-models", 0) == 0
        job.refresh_from_db()
        assert "not an allowed LLM server" in job.message
        settings.GPTSCORE_URL = sim.url  # the admin's GPTScore server is allowed, as an OpenAI-compatible one
        job = comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url)
        assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE
        assert MetricScore.objects.filter(metric="gptscore:scorer-1b").count() == 4  # 4 items x 1 aspect


def test_gptscore_job_pauses_when_the_server_goes_away_and_keeps_its_scores(summaries):
    with OllamaSim(SimConfig(models=["scorer-1b"])) as sim:
        job = comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url)
    ComparisonJob.objects.filter(pk=job.pk).update(options={**job.options, "gptscore_url": sim.url})
    assert job_execute(ComparisonJob, job.pk) == JobStatus.PAUSED
    job.refresh_from_db()
    assert "Cannot reach" in job.message and "resume" in job.message.lower()


def test_ensemble_metric_reuses_an_existing_run_without_a_call(dialogue, settings):
    settings.ENSEMBLE_PRESET = "laptop"
    with OllamaSim(SimConfig(models=LAPTOP)) as sim:
        run = run_create(dataset=dialogue, aspect_name="naturalness", ollama_url=sim.url)
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        before = _requests(sim)
        job = _execute(comparison_create(dataset=dialogue, metrics="ensemble,length", aspects=["naturalness"],
                                  ollama_url=sim.url))
        assert _requests(sim) == before and job.llm_calls == 0
        assert job.runs == {"ensemble": {"naturalness": run.pk}}
        url = sim.url
    # stored under the preset's models, so another preset's ensemble never reuses these scores
    key = "ensemble:llama3.2:3b+qwen2.5:3b+gemma2:2b+phi3.5:3.8b/llama3.2:3b"
    for ann in Annotation.objects.filter(source_id=run.pk, kind=AnnotationKind.ENSEMBLE):
        stored = MetricScore.objects.get(item=ann.item, metric=key, aspect="naturalness")
        assert stored.value == pytest.approx(ann.score)
    assert {r["metric"] for r in export_document(job)["scores"]} == {"ensemble", "length"}
    # with the run finished the Ollama server is not needed, not even to launch: the run's answers are read
    MetricScore.objects.all().delete()
    later = _execute(comparison_create(dataset=dialogue, metrics="ensemble", aspects=["naturalness"], ollama_url=url))
    assert later.llm_calls == 0 and MetricScore.objects.filter(metric=key).count() == 6


def test_annotator_metric_runs_the_model_once_then_never_again(dialogue):
    with OllamaSim(SimConfig(models=["qwen2.5:3b"])) as sim:
        job = _execute(comparison_create(dataset=dialogue, metrics="annotator:qwen2.5:3b", aspects=["coherence"],
                                  ollama_url=sim.url))
        first = _requests(sim)
        assert first >= 6 and job.llm_calls == first  # one call per item (and retries of bad answers)
        run = EvaluatorRun.objects.get(pk=job.runs["annotator:qwen2.5:3b"]["coherence"])
        assert run.status == JobStatus.DONE and run.config["mode"] == "single"
        assert MetricScore.objects.filter(metric="annotator:qwen2.5:3b", aspect="coherence").count() == 6
        MetricScore.objects.all().delete()
        again = _execute(comparison_create(dataset=dialogue, metrics="annotator:qwen2.5:3b", aspects=["coherence"],
                                    ollama_url=sim.url))
        assert _requests(sim) == first and again.llm_calls == 0
        assert again.runs == job.runs


def test_run_metric_refused_for_a_missing_ollama_model(dialogue):
    with OllamaSim(SimConfig(models=["qwen2.5:3b"])) as sim, pytest.raises(UserError, match="ollama pull nope:1b"):
        comparison_create(dataset=dialogue, metrics="distilled:nope:1b", aspects=["coherence"], ollama_url=sim.url)


def test_distilled_metric_stores_the_0_to_100_score(dialogue):
    with OllamaSim(SimConfig(models=["gemma2:2b"])) as sim:
        job = _execute(comparison_create(dataset=dialogue, metrics="distilled:gemma2:2b", aspects=["coherence"],
                                  ollama_url=sim.url))
        run = EvaluatorRun.objects.get(pk=job.runs["distilled:gemma2:2b"]["coherence"])
        assert run.config["mode"] == "distilled"
        values = {s.item_id: s.value for s in MetricScore.objects.filter(metric="distilled:gemma2:2b")}
        answers = {a.item_id: a.score for a in Annotation.objects.filter(source_id=run.pk, score__isnull=False)}
        assert values == pytest.approx(answers) and len(values) == 6
        assert all(0 <= v <= 100 for v in values.values()) and max(values.values()) > 5  # not the 1-5 scale


def test_gptscore_goes_through_the_budget_a_too_long_text_is_not_sent_nor_scored(summaries):
    """Issue 21: GPTScore's prompts fit the model's length (vLLM's max_model_len) or are not sent; no score
    is invented for them, and the job completes with the others."""
    long_item = Item.objects.filter(dataset=summaries).order_by("position").first()
    Item.objects.filter(pk=long_item.pk).update(output="word " * 5_000)
    with OllamaSim(SimConfig(models=["scorer-1b"], profile="vllm", context_length=2_048)) as sim:
        job = _execute(comparison_create(dataset=summaries, metrics="gptscore:scorer-1b", gptscore_url=sim.url))
        assert _requests(sim) == 3 and sim.stats.refused_too_long == 0
    scored = set(MetricScore.objects.filter(metric="gptscore:scorer-1b").values_list("item_id", flat=True))
    assert len(scored) == 3 and long_item.pk not in scored
    assert job.status == JobStatus.DONE
