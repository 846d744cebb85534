"""The comparison launch form: the known metrics as checkboxes, metrics with a model typed beside them, and the
comma-separated `metrics` that scripts post still accepted."""

from __future__ import annotations

import pytest

from comparison.engine.metrics import parse_metric, plain_metric_names
from comparison.forms import ComparisonLaunchForm
from comparison.models import ComparisonJob

pytestmark = pytest.mark.django_db


def test_every_offered_metric_is_a_metric_the_job_accepts() -> None:
    names = plain_metric_names()
    assert [parse_metric(name).name for name in names] == names
    assert {"length", "bleu", "bleu@input", "wordllama@input", "ensemble"} <= set(names)
    assert len(names) == len(set(names)) == 14


def test_the_page_offers_each_known_metric_as_a_checkbox(client, make_user) -> None:
    client.force_login(make_user("root", role="admin"))
    page = client.get("/comparisons/new/").content.decode()
    for name in plain_metric_names():
        assert f'type="checkbox" name="metrics" value="{name}"' in page, name
    assert 'name="model_metrics"' in page


@pytest.mark.parametrize(("posted", "expected"), [
    ({"metrics": ["length", "wordllama@input"]}, ["length", "wordllama@input"]),
    ({"metrics": "length, bleu@input"}, ["length", "bleu@input"]),  # a script's comma-separated value
    ({"metrics": ["length"], "model_metrics": "annotator:m, gptscore:g"}, ["length", "annotator:m", "gptscore:g"]),
    ({"model_metrics": "distilled:d"}, ["distilled:d"]),
])
def test_checked_typed_and_posted_metrics_arrive_as_one_list(dialogue, posted, expected) -> None:
    form = ComparisonLaunchForm({"dataset": dialogue.name, **posted})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["metrics"] == expected


def test_a_launch_with_checked_metrics_queues_them_and_an_unknown_one_is_refused(client, make_user, dialogue,
                                                                                 django_capture_on_commit_callbacks):
    client.force_login(make_user("root", role="admin"))
    with django_capture_on_commit_callbacks():
        made = client.post("/comparisons/new/", {"dataset": dialogue.name, "metrics": ["length", "wordllama@input"]})
    job = ComparisonJob.objects.get()
    assert made.status_code == 302 and job.metrics == ["length", "wordllama@input"]
    refused = client.post("/comparisons/new/", {"dataset": dialogue.name, "model_metrics": "telepathy"})
    assert refused.status_code == 200 and "unknown metric" in refused.content.decode()
    assert ComparisonJob.objects.count() == 1
