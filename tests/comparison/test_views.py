"""The comparison pages and API: who may see and launch, the Table-3-like grid, escaping, downloads, plots."""

from __future__ import annotations

import json

import pytest
from ninja.testing import TestClient

from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from config.api import api
from jobs.kinds import job_execute
from jobs.models import JobStatus


@pytest.fixture
def done_job(dialogue) -> ComparisonJob:
    job = comparison_create(dataset=dialogue, metrics="length,wordllama@input", check=False)
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE
    return ComparisonJob.objects.get(pk=job.pk)


def _api(user):
    client = TestClient(api)
    return lambda method, path, **kw: getattr(client, method)(path, user=user, **kw)


def test_annotators_see_nothing(client, annotator_user, done_job):
    client.force_login(annotator_user)
    for url in ("/comparisons/", f"/comparisons/{done_job.pk}/", "/comparisons/new/",
                f"/comparisons/{done_job.pk}/export.json", f"/comparisons/{done_job.pk}/plots/ks.svg"):
        assert client.get(url).status_code == 403, url
    call = _api(annotator_user)
    assert call("get", f"/comparisons/{done_job.pk}").status_code == 403
    assert call("get", "/comparisons").status_code == 403


def test_researchers_read_but_do_not_launch(client, researcher, done_job, dialogue):
    client.force_login(researcher)
    assert client.get(f"/comparisons/{done_job.pk}/").status_code == 200
    assert client.get("/comparisons/new/").status_code == 403
    call = _api(researcher)
    response = call("post", "/comparisons", json={"dataset": dialogue.name, "metrics": ["length"]})
    assert response.status_code == 403
    assert call("post", f"/comparisons/{done_job.pk}/cancel").status_code == 403
    results = call("get", f"/comparisons/{done_job.pk}/results")
    assert results.status_code == 200 and results.json()["job"] == done_job.pk


def test_admins_launch_through_the_api_and_bad_requests_say_why(
    make_user, dialogue, django_capture_on_commit_callbacks
):
    call = _api(make_user("root", role="admin"))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = call("post", "/comparisons", json={"dataset": dialogue.name, "metrics": ["length", "bleu"]})
    assert response.status_code == 422 and "bleu@input" in response.json()["detail"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = call("post", "/comparisons", json={"dataset": dialogue.name, "metrics": ["length"],
                                                      "aspects": ["coherence"]})
    assert response.status_code == 201, response.content
    assert len(callbacks) == 1  # the job is queued once the transaction commits
    job_id = response.json()["id"]
    assert response.json()["total"] == 6 and response.json()["status"] == "pending"
    assert call("get", f"/comparisons/{job_id}/results").status_code == 409
    assert call("post", "/comparisons", json={"dataset": "nope", "metrics": ["length"]}).status_code == 404
    assert call("post", f"/comparisons/{job_id}/cancel").json()["status"] == "cancelled"
    assert call("post", f"/comparisons/{job_id}/resume").status_code == 409


def test_result_page_shows_the_grid_with_the_best_in_bold_and_escapes_names(client, researcher, done_job):
    client.force_login(researcher)
    html = client.get(f"/comparisons/{done_job.pk}/?level=dataset&coef=pearson").content.decode()
    assert "dlg &lt;i&gt;x&lt;/i&gt;" in html and "dlg <i>x</i>" not in html
    rows = {r["aspect"]: r for r in done_job.results["correlations"]
            if r["level"] == "dataset" and r["metric"] == "length"}
    others = {r["aspect"]: r for r in done_job.results["correlations"]
              if r["level"] == "dataset" and r["metric"] == "wordllama@input"}
    aspect = "coherence"
    best = max(rows[aspect]["pearson"], others[aspect]["pearson"])
    assert f"<strong>{best:.3f}</strong>" in html
    assert "95% CI" in html and "Ollama returns log-probabilities only" in html
    assert "KS low-high" in html and "Easy pair" in html


def test_downloads_and_plots(client, researcher, done_job):
    client.force_login(researcher)
    doc = json.loads(client.get(f"/comparisons/{done_job.pk}/export.json").content)
    assert doc["metrics"] == ["length", "wordllama@input"] and len(doc["scores"]) == 12
    csv_text = client.get(f"/comparisons/{done_job.pk}/export.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("metric,aspect,level,pearson")
    for name in ("correlations", "ks"):
        response = client.get(f"/comparisons/{done_job.pk}/plots/{name}.svg")
        assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert client.get(f"/comparisons/{done_job.pk}/plots/nope.svg").status_code == 404


def test_progress_polling_partial(client, researcher, dialogue):
    job = comparison_create(dataset=dialogue, metrics="length", check=False)
    client.force_login(researcher)
    response = client.get(f"/comparisons/{job.pk}/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="job-progress")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<section class="card" id="job-progress"') and "0 / 6 scores" in body
    job_execute(ComparisonJob, job.pk)
    response = client.get(f"/comparisons/{job.pk}/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="job-progress")
    assert response.status_code == 286 and response["HX-Refresh"] == "true"  # stop polling, reload with results


def test_django_admin_cancels_a_pending_job(client, django_user_model, dialogue):
    boss = django_user_model.objects.create_superuser("boss", "boss@example.org", "boss-pass-2026", role="admin")
    job = comparison_create(dataset=dialogue, metrics="length", check=False)
    client.force_login(boss)
    assert client.get("/admin/comparison/comparisonjob/").status_code == 200
    response = client.post("/admin/comparison/comparisonjob/",
                           {"action": "cancel_jobs", "_selected_action": [job.pk]}, follow=True)
    assert response.status_code == 200
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
