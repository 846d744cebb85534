"""The demo shows the product: human scores, something to judge on every output, sample judgments by both
experts with disagreements, and figures in the analytics right after load_demo."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from analytics.selectors import Scope, accuracy_report
from annotator.models import Assignment, Campaign, SpanJudgment
from annotator.selectors.campaigns import queue_for
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from corpus.models import Dataset, ErrorSpan
from jobs.kinds import job_execute
from jobs.models import JobStatus
from studies.management.commands.load_demo import DEMO_CAMPAIGN, DEMO_DATASET, SAMPLE_COMMENT

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo():
    call_command("load_demo", stdout=io.StringIO())
    return Campaign.objects.get(name=DEMO_CAMPAIGN)


def test_demo_dataset_has_human_scores_and_a_metric_comparison_runs_at_once(demo):
    dataset = Dataset.objects.get(name=DEMO_DATASET)
    assert dataset.score_aspects == ["accuracy", "fluency"]
    assert dataset.items.filter(human_scores__accuracy=1).count() == 2  # r01 and r04 llm-small, by hand
    job = comparison_create(dataset=dataset, metrics="length")
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.results


def test_every_demo_output_has_a_machine_span_and_every_queue_starts_on_one(demo, django_user_model):
    dataset = demo.dataset
    assert dataset.items.count() == 18
    assert not dataset.items.exclude(annotations__spans__isnull=False).exists()
    for name in ("expert1", "expert2"):
        expert = django_user_model.objects.get(username=name)
        _, summary = queue_for(demo, expert)
        assert summary.done == 4 and summary.total == 18
        assert ErrorSpan.objects.filter(annotation__item_id=summary.resume.item_id).exists()


def test_demo_sample_judgments_give_figures_and_disagreements_at_first_open(demo, client, django_user_model):
    judgments = SpanJudgment.objects.filter(assignment__campaign=demo)
    assert judgments.count() == 20 and set(judgments.values_list("comment", flat=True)) == {SAMPLE_COMMENT}
    assert Assignment.objects.filter(campaign=demo, status=Assignment.Status.DONE).count() == 8
    report = accuracy_report(Scope(campaign_id=demo.pk), n_resamples=50)
    # expert1 marks 9 of the 10 spans as errors, expert2 8 of 10: Span OK 17 / 20 pooled.
    assert report.pooled.matrix.total == 20
    assert report.pooled.matrix.span_ok == pytest.approx(17 / 20)
    disputed = {j.span.text for j in judgments.select_related("span")
                if judgments.filter(span=j.span).values("span_verdict").distinct().count() > 1}
    assert disputed == {"breakfasts", "just a short walk", "a loyal following"}
    client.force_login(django_user_model.objects.get(username="researcher"))
    page = client.get(f"/analytics/campaigns/{demo.pk}/").content.decode()
    assert "85.0" in page  # Span OK % of the pooled row
