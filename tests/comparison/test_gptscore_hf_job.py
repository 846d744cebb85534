"""gptscore-hf inside a comparison job: all pending pairs go to the scorer in resumable chunks, every answer is
an LLM call keyed with its precision, and the precision is pinned per job and shown in results and exports."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from jobs.kinds import job_execute
from jobs.lifecycle import job_requeue

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from comparison.engine.errors import ComparisonError  # noqa: E402
from comparison.engine.gptscore_hf import HFScorer  # noqa: E402
from comparison.models import ComparisonJob, MetricScore  # noqa: E402
from comparison.services import gptscore_hf  # noqa: E402
from comparison.services.jobs import comparison_create  # noqa: E402
from comparison.services.results import export_document  # noqa: E402
from corpus.models import Item  # noqa: E402
from errors import UserError  # noqa: E402
from evaluation.models import LLMCall  # noqa: E402
from jobs.models import JobStatus  # noqa: E402
from tests.comparison.hf_models import reference_decoder, save_gpt2  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def gpt2_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pairs each call of the scorer was handed."""
    sizes: list[int] = []
    real = HFScorer.score

    def spy(self, pairs, **kwargs):
        sizes.append(len(pairs))
        return real(self, pairs, **kwargs)

    monkeypatch.setattr(HFScorer, "score", spy)
    return sizes


def _execute(job: ComparisonJob) -> ComparisonJob:
    status = job_execute(ComparisonJob, job.pk)
    job = ComparisonJob.objects.get(pk=job.pk)
    assert status == JobStatus.DONE, job.message
    return job


def test_a_job_scores_locally_equal_to_the_reference_and_a_rerun_computes_nothing(gpt2_path, summaries,
                                                                                  handed) -> None:
    metric = f"gptscore-hf:{gpt2_path}"
    job = _execute(comparison_create(dataset=summaries, metrics=f"{metric},length", precision="fp32"))
    items = list(Item.objects.filter(dataset=summaries))
    scores = {s.item_id: s.value for s in MetricScore.objects.filter(metric=f"{metric}@fp32")}
    assert set(scores) == {i.pk for i in items}
    assert handed == [len(items)]  # every pending pair in one call: the scorer sorts and packs them all
    calls = list(LLMCall.objects.filter(model=str(gpt2_path)))
    assert len(calls) == len(items) == job.llm_calls
    for item in items:
        call = next(c for c in calls if c.prompt.endswith(item.output))
        assert call.options["precision"] == "fp32" and call.options["backend"] == "transformers"
        context = call.prompt[: call.options["scored_from"]]
        assert scores[item.pk] == pytest.approx(reference_decoder(gpt2_path, context, item.output), abs=1e-5)
    record = job.results["gptscore_hf"][metric]
    assert (record["requested"], record["precision"], record["device"]) == ("fp32", "fp32", "cpu")
    assert record["attention"] == "sdpa" and record["tokens"] > 0 and record["peak_gpu_memory_bytes"] is None
    assert export_document(job)["gptscore_hf"] == job.results["gptscore_hf"]
    again = _execute(comparison_create(dataset=summaries, metrics=metric, precision="fp32"))
    assert again.llm_calls == 0 and handed == [len(items)]


def test_a_second_precision_is_asked_again_and_stored_apart(gpt2_path, summaries) -> None:
    metric = f"gptscore-hf:{gpt2_path}"
    _execute(comparison_create(dataset=summaries, metrics=metric, precision="fp32"))
    half = _execute(comparison_create(dataset=summaries, metrics=metric, precision="bf16"))
    n = Item.objects.filter(dataset=summaries).count()
    assert half.llm_calls == n  # no fp32 answer was taken from the cache for a bf16 job
    assert LLMCall.objects.filter(model=str(gpt2_path)).count() == 2 * n
    assert {c.options["precision"] for c in LLMCall.objects.filter(model=str(gpt2_path))} == {"fp32", "bf16"}
    full = dict(MetricScore.objects.filter(metric=f"{metric}@fp32").values_list("item_id", "value"))
    low = dict(MetricScore.objects.filter(metric=f"{metric}@bf16").values_list("item_id", "value"))
    assert set(full) == set(low) and full != low
    assert max(abs(full[k] - low[k]) for k in full) < 0.05
    assert half.results["gptscore_hf"][metric]["precision"] == "bf16"
    exported = {s["item_id"]: s["value"] for s in export_document(half)["scores"]}
    assert sorted(exported.values()) == sorted(low.values())  # the job's own precision, not the other's


def test_a_stopped_job_resumes_with_the_missing_pairs_in_its_pinned_precision(gpt2_path, summaries, handed,
                                                                               monkeypatch) -> None:
    monkeypatch.setattr(gptscore_hf, "CHUNK", 3)
    real = HFScorer.score
    calls = {"n": 0}

    def second_fails(self, pairs, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ComparisonError("gptscore-hf: simulated failure")
        return real(self, pairs, **kwargs)

    metric = f"gptscore-hf:{gpt2_path}"
    job = comparison_create(dataset=summaries, metrics=metric)  # auto: fp32 on this CPU
    with monkeypatch.context() as patch:
        patch.setattr(HFScorer, "score", second_fails)
        assert job_execute(ComparisonJob, job.pk) == JobStatus.FAILED
    job.refresh_from_db()
    assert "simulated failure" in job.message
    assert MetricScore.objects.filter(metric=f"{metric}@fp32").count() == 3  # the first chunk is kept
    assert job.options["gptscore_hf"][metric]["precision"] == "fp32"
    job.options["gptscore_hf"][metric]["precision"] = "bf16"  # as if a GPU had started it
    ComparisonJob.objects.filter(pk=job.pk).update(options=job.options)
    MetricScore.objects.filter(metric=f"{metric}@fp32").update(metric=f"{metric}@bf16")
    assert job_requeue(job, enqueue=False)
    with override_settings(GPTSCORE_HF_PRECISION="fp32"):
        job = _execute(job)
    assert handed[-1] == 1  # only the missing pair, in the pinned precision
    last = LLMCall.objects.filter(model=str(gpt2_path)).order_by("-pk").first()
    assert last is not None and last.options["precision"] == "bf16"
    assert job.results["gptscore_hf"][metric]["precision"] == "bf16"
    assert MetricScore.objects.filter(metric=f"{metric}@bf16").count() == 4


def test_the_precision_option_defaults_to_the_setting_and_is_checked(gpt2_path, summaries) -> None:
    metric = f"gptscore-hf:{gpt2_path}"
    with override_settings(GPTSCORE_HF_PRECISION="bf16"):
        assert comparison_create(dataset=summaries, metrics=metric).options["precision"] == "bf16"
    assert comparison_create(dataset=summaries, metrics=metric, precision="FP16").options["precision"] == "fp16"
    assert "precision" not in comparison_create(dataset=summaries, metrics="length").options
    with pytest.raises(UserError, match="unknown precision 'int8'"):
        comparison_create(dataset=summaries, metrics=metric, precision="int8")


def test_the_api_takes_a_precision_and_the_page_shows_the_one_used(client, researcher, make_user, gpt2_path,
                                                                   summaries) -> None:
    from ninja.testing import TestClient

    from config.api import api

    metric = f"gptscore-hf:{gpt2_path}"
    admin = TestClient(api)
    refused = admin.post("/comparisons", json={"dataset": summaries.name, "metrics": [metric], "precision": "int8"},
                         user=make_user("root", role="admin"))
    assert refused.status_code == 422  # not one of the precisions
    created = admin.post("/comparisons", json={"dataset": summaries.name, "metrics": [metric], "precision": "fp32"},
                         user=make_user("root2", role="admin"))
    assert created.status_code == 201, created.content
    job = _execute(ComparisonJob.objects.get(pk=created.json()["id"]))
    client.force_login(researcher)
    html = client.get(f"/comparisons/{job.pk}/").content.decode()
    assert f"{metric}: computed in fp32 (asked: fp32) on cpu, sdpa attention" in html
