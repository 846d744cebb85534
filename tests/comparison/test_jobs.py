"""Comparison jobs on the made-up meta_eval samples: refusals, scores stored once, results, the two commands."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from scipy import stats

from comparison.models import ComparisonJob, MetricScore
from comparison.services.jobs import comparison_create
from corpus.models import Dataset, Item
from corpus.services.importing import items_import
from errors import UserError
from jobs.kinds import job_execute
from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import JobStatus
from tests import factories


def _run(dataset, metrics, **kw) -> ComparisonJob:
    job = comparison_create(dataset=dataset, metrics=metrics, check=False, **kw)
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE, ComparisonJob.objects.get(pk=job.pk).message
    return ComparisonJob.objects.get(pk=job.pk)


def test_job_create_refusals_name_what_is_wrong(dialogue, summaries):
    with pytest.raises(UserError, match="unknown metric 'blue'"):
        comparison_create(dataset=dialogue, metrics="length,blue")
    with pytest.raises(UserError, match="no human scores for aspect 'fluency'.*naturalness"):
        comparison_create(dataset=dialogue, metrics="length", aspects=["fluency"])
    with pytest.raises(UserError, match=r"bleu.*have none.*bleu@input"):
        comparison_create(dataset=dialogue, metrics="length,bleu")
    with pytest.raises(UserError, match="Ollama returns log-probabilities only of tokens it generates"):
        comparison_create(dataset=summaries, metrics="gptscore:opt", gptscore_url="")
    assert not ComparisonJob.objects.exists()


def test_baseline_job_scores_every_item_and_correlates_with_scipy(dialogue):
    job = _run(dialogue, "length,bleu@input,rougeL@input", aspects=["naturalness", "coherence"])
    items = list(Item.objects.filter(dataset=dialogue).order_by("position"))
    assert MetricScore.objects.filter(metric="length").count() == len(items) == 6
    lengths = [MetricScore.objects.get(item=i, metric="length", aspect="").value for i in items]
    assert lengths == [float(len(i.output.split())) for i in items]
    row = next(r for r in job.results["correlations"]
               if (r["metric"], r["aspect"], r["level"]) == ("length", "naturalness", "dataset"))
    human = [i.human_scores["naturalness"] for i in items]
    assert row["spearman"] == pytest.approx(stats.spearmanr(lengths, human).statistic)
    assert row["n"] == 6
    levels = {r["level"] for r in job.results["correlations"]}
    assert levels == {"dataset", "sample", "system"}
    assert job.progress["length"] == {"done": 6, "total": 6}
    assert job.llm_calls == 0


def test_adding_a_metric_later_computes_only_that_metric(dialogue):
    _run(dialogue, "length")
    first = {s.pk for s in MetricScore.objects.filter(metric="length")}
    job = _run(dialogue, "length,chrf@input")
    assert {s.pk for s in MetricScore.objects.filter(metric="length")} == first  # not rewritten
    assert MetricScore.objects.filter(metric="chrf@input").count() == 6
    assert job.progress["length"]["done"] == 6


def test_cancel_and_resume_keep_scores(dialogue):
    job = comparison_create(dataset=dialogue, metrics="length", check=False)
    assert job_cancel(job)
    assert job_execute(ComparisonJob, job.pk) is None  # a cancelled job is never claimed
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and not job_requeue(job, enqueue=False)
    failed = comparison_create(dataset=dialogue, metrics="length", check=False)
    ComparisonJob.objects.filter(pk=failed.pk).update(status=JobStatus.FAILED)
    assert job_requeue(failed, enqueue=False)
    assert job_execute(ComparisonJob, failed.pk) == JobStatus.DONE


def test_compare_metrics_prints_the_job_id_and_export_follows_the_contract(dialogue, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    call_command("compare_metrics", "--dataset", dialogue.name, "--metrics", "length,wordllama@input", "--sync",
                 stdout=out, stderr=err)
    job_id = int(out.getvalue().splitlines()[0])
    assert ComparisonJob.objects.get(pk=job_id).status == JobStatus.DONE
    path = tmp_path / "c.json"
    call_command("export_comparison", "--job", str(job_id), "--format", "json", "-o", str(path))
    doc = json.loads(path.read_text())
    assert {"job", "dataset", "metrics", "aspects", "correlations", "checklist", "scores"} <= set(doc)
    assert doc["job"] == job_id and doc["dataset"] == dialogue.name
    assert doc["metrics"] == ["length", "wordllama@input"]
    assert doc["aspects"] == ["naturalness", "groundedness", "coherence", "engagingness"]
    row = doc["correlations"][0]
    assert set(row) == {"metric", "aspect", "level", "pearson", "spearman", "kendall", "ci", "n"}
    assert set(row["ci"]) == {"pearson", "spearman", "kendall"}
    assert len(doc["scores"]) == 12
    assert set(doc["scores"][0]) >= {"item_id", "system", "metric", "value"}
    assert {s["system"] for s in doc["scores"]} == {"Greedy", "Human", "Sampling (p = 0.5)"}
    assert {"aspect_level", "system_level", "transfer"} <= set(doc["checklist"])
    out = io.StringIO()
    call_command("export_comparison", "--job", str(job_id), "--format", "csv", stdout=out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0][:6] == ["metric", "aspect", "level", "pearson", "spearman", "kendall"]
    assert len(rows) == 1 + 2 * 4 * 3


def test_commands_refuse_bad_input_clearly(dialogue):
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        call_command("compare_metrics", "--dataset", "nope", "--metrics", "length", "--sync")
    with pytest.raises(CommandError, match="rouge1.*rouge1@input"):
        call_command("compare_metrics", "--dataset", dialogue.name, "--metrics", "rouge1", "--sync")
    with pytest.raises(CommandError, match="no comparison job with id 999"):
        call_command("export_comparison", "--job", "999", "--format", "json")
    job = comparison_create(dataset=dialogue, metrics="length", check=False)
    with pytest.raises(CommandError, match="pending, not done"):
        call_command("export_comparison", "--job", str(job.pk), "--format", "json")


def test_transfer_shows_other_datasets(dialogue, summaries):
    _run(summaries, "length")
    job = _run(dialogue, "length")
    transfer = job.results["checklist"]["transfer"]
    assert transfer and transfer[0]["out_of_domain"]["dataset"] == "sums"
    assert transfer[0]["in_domain"]["dataset"] == dialogue.name


def test_reference_based_metrics_use_the_reference_when_every_item_has_one(db):
    dataset = factories.dataset("refs", task="summarization", score_aspects=["fluency"], items=[
        {"external_id": str(i), "inputs": {"Article": f"Input text {i}."}, "output": out, "reference": ref,
         "human_scores": {"fluency": float(i)}}
        for i, (out, ref) in enumerate([("the cat sat", "the cat sat"), ("the cat", "the cat sat"),
                                        ("a dog ran", "the cat sat")])
    ])
    job = _run(dataset, "rouge1,bleu,rouge1@input")
    items = {i.external_id: i for i in Item.objects.filter(dataset=dataset)}
    rouge = {k: MetricScore.objects.get(item=v, metric="rouge1").value for k, v in items.items()}
    assert rouge == pytest.approx({"0": 1.0, "1": 0.8, "2": 0.0})  # F1 against the reference, by hand
    assert MetricScore.objects.get(item=items["0"], metric="bleu").value == pytest.approx(100.0)
    assert MetricScore.objects.get(item=items["0"], metric="rouge1@input").value == pytest.approx(0.0)
    assert job.status == JobStatus.DONE


def test_topical_chat_groups_outputs_by_context_and_system(db, meta_eval_dir, settings):
    """The shared file repeats `id` across its six systems: 60 contexts, each answered by every system."""
    settings.COMPARISON_BOOTSTRAP = 100
    items_import(path=meta_eval_dir / "topical_chat.json", dataset_name="tc", task_slug="dialogue")
    job = _run(Dataset.objects.get(name="tc"), "length", aspects=["coherence"])
    rows = {r["level"]: r for r in job.results["correlations"]}
    assert (rows["dataset"]["n"], rows["sample"]["n"], rows["system"]["n"]) == (360, 60, 6)
    assert all(rows[level]["ci"]["spearman"] is not None for level in rows)
    panel = job.results["checklist"]["system_level"][0]
    assert len(panel["human_ranking"]) == 6 and panel["easy"]["systems"][0] == panel["human_ranking"][0]
