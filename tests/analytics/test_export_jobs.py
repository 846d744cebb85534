"""Exports as jobs: the browser page and the API queue them, a worker writes them, the page offers the files."""

from __future__ import annotations

import json

import pytest
from celery import current_app
from django.test import Client

from accounts.services.tokens import token_create
from analytics.exports.jobs import export_file
from analytics.models import ExportJob
from jobs.kinds import job_execute
from tests import factories as make


@pytest.fixture
def export_dir(settings, tmp_path):
    settings.EXPORT_DIR = tmp_path / "exports"
    return settings.EXPORT_DIR


@pytest.fixture
def sent(monkeypatch):
    """Tasks sent by name, recorded instead of reaching a broker (the worker test sends them for real)."""
    calls: list[tuple[str, list]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **kw: calls.append((name, args)))
    return calls


def test_browser_export_runs_as_a_job_with_progress_and_download(study, client, export_dir, sent,
                                                                django_capture_on_commit_callbacks):
    client.force_login(make.user("rosa", role="researcher"))
    page = client.get(f"/analytics/datasets/{study.dataset.pk}/exports/")
    assert page.status_code == 200 and "parquet" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/analytics/datasets/{study.dataset.pk}/exports/",
                               {"format": "labelstudio", "system": "sysA"})
    job = ExportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/analytics/exports/{job.pk}/"
    assert sent == [("tasks.exporting.run_export", [job.pk])]
    waiting = client.get(f"/analytics/exports/{job.pk}/", HTTP_HX_REQUEST="true")
    assert waiting.status_code == 200 and 'hx-trigger="every 1s"' in waiting.content.decode()
    assert job_execute(ExportJob, job.pk) == "done"
    assert job_execute(ExportJob, job.pk) is None  # claimed once
    job.refresh_from_db()
    assert job.filters == {"system": "sysA"} and job.done == job.total == 2
    stem = f"{study.dataset.pk}-tiny-study-export{job.pk}"
    assert job.files == [f"{stem}.json", f"{stem}.labels.xml", f"{stem}.json.card.json"]
    finished = client.get(f"/analytics/exports/{job.pk}/", HTTP_HX_REQUEST="true")
    assert finished.status_code == 286  # htmx: stop polling
    assert f"/analytics/exports/{job.pk}/files/{job.files[0]}" in finished.content.decode()
    download = client.get(f"/analytics/exports/{job.pk}/files/{job.files[0]}")
    tasks = json.loads(b"".join(download.streaming_content))
    assert {t["data"]["item_id"] for t in tasks} == {"i1", "i2"}
    assert client.get(f"/analytics/exports/{job.pk}/files/..%2Fsecret").status_code == 404


def test_export_api_queues_reports_and_serves_files(study, export_dir, sent, django_capture_on_commit_callbacks):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make.user('rosa', role='researcher'))}")
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(f"/api/datasets/{study.dataset.pk}/exports",
                           data=json.dumps({"format": "parquet", "annotator": study.ann1.username}),
                           content_type="application/json")
    assert created.status_code == 202 and created.json()["status"] == "pending"
    job_id = created.json()["id"]
    job_execute(ExportJob, job_id)
    job = api.get(f"/api/exports/{job_id}").json()
    assert job["status"] == "done" and job["files"][0].endswith(".parquet")
    assert api.get(f"/api/exports/{job_id}/files/{job['files'][1]}").status_code == 200
    assert api.get(f"/api/exports/{job_id}/files/nope.csv").status_code == 404
    bad = api.post(f"/api/datasets/{study.dataset.pk}/exports", data=json.dumps({"format": "xlsx"}),
                   content_type="application/json")
    assert bad.status_code == 422 and "format must be one of" in bad.json()["detail"]


def test_exports_are_for_researchers_only(study, client, export_dir):
    client.force_login(study.ann1)
    assert client.get(f"/analytics/datasets/{study.dataset.pk}/exports/").status_code == 403
    job = ExportJob.objects.create(dataset=study.dataset, format="jsonl")
    assert client.get(f"/analytics/exports/{job.pk}/").status_code == 403
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=study.ann1)}")
    assert api.post(f"/api/datasets/{study.dataset.pk}/exports", data="{}",
                    content_type="application/json").status_code == 403
    assert api.get(f"/api/exports/{job.pk}").status_code == 403


def test_an_export_left_running_by_a_dead_worker_is_finished_by_its_redelivered_task(study, export_dir, settings):
    """A redelivered task could not claim a running export, so it stayed running (and its page polled) for ever.

    Its dead worker set it running, wrote some records and stopped beating five minutes ago."""
    from datetime import timedelta

    from django.utils import timezone

    from tasks.jobs import TASKS

    settings.RUN_STALE_SECONDS = 60
    job = ExportJob.objects.create(dataset=study.dataset, format="jsonl", total=4)
    ExportJob.objects.filter(pk=job.pk).update(status="running", done=2,
                                               heartbeat_at=timezone.now() - timedelta(minutes=5))
    result = TASKS[ExportJob].apply(args=[job.pk])  # acks late: the broker hands the dead worker's task out again
    assert result.successful() and result.result == "done"
    job.refresh_from_db()
    assert job.status == "done" and job.finished_at is not None and job.files[0].endswith(".jsonl")
    with export_file(job, job.files[0]) as stored:
        lines = stored.read().decode("utf-8").splitlines()
    assert lines and all(json.loads(line)["dataset"] == study.dataset.name for line in lines)
def test_two_exports_never_share_a_file_name_and_unknown_filters_are_refused(
    study, export_dir, sent, django_capture_on_commit_callbacks,
):
    client = Client()
    client.force_login(make.user("rhea", role="researcher"))
    names = []
    for fmt in ("jsonl", "csv"):
        with django_capture_on_commit_callbacks(execute=True):
            client.post(f"/analytics/datasets/{study.dataset.pk}/exports/", {"format": fmt})
        job = ExportJob.objects.order_by("-pk").first()
        assert job_execute(ExportJob, job.pk) == "done"
        job.refresh_from_db()
        names += job.files
    assert len(names) == len(set(names)) == 4  # each export and each data card has a name of its own
    assert sum(name.endswith(".card.json") for name in names) == 2
    before = ExportJob.objects.count()
    refused = client.post(f"/analytics/datasets/{study.dataset.pk}/exports/", {"format": "jsonl", "annotator": "nobdy"})
    assert refused.status_code == 200 and "no user named &#x27;nobdy&#x27;" in refused.content.decode()
    assert ExportJob.objects.count() == before
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make.user('rory', role='researcher'))}")
    answer = api.post(f"/api/datasets/{study.dataset.pk}/exports", {"format": "jsonl", "annotator": "nobdy"},
                      content_type="application/json")
    assert answer.status_code == 422 and "no user named 'nobdy'" in answer.json()["detail"]


def test_export_command_refuses_an_annotator_that_does_not_exist(study):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="annotator: no user named 'ghost'"):
        call_command("export_items", "--dataset", study.dataset.name, "--format", "jsonl", "--annotator", "ghost")


def test_the_api_cancels_and_resumes_an_export_as_it_does_every_job(study, export_dir, sent,
                                                                    django_capture_on_commit_callbacks):
    admin = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make.user('chief', role='admin'))}")
    researcher = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make.user('rosa', role='researcher'))}")
    job = ExportJob.objects.create(dataset=study.dataset, format="jsonl")
    assert researcher.post(f"/api/exports/{job.pk}/cancel").status_code == 403  # admins only, as on the page
    cancelled = admin.post(f"/api/exports/{job.pk}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = admin.post(f"/api/exports/{job.pk}/cancel")
    assert again.status_code == 409 and "only pending, paused or running" in again.json()["detail"]
    assert admin.post(f"/api/exports/{job.pk}/resume").status_code == 409  # a cancelled export stays cancelled
    ExportJob.objects.filter(pk=job.pk).update(status="failed", message="disk full")
    with django_capture_on_commit_callbacks(execute=True):
        resumed = admin.post(f"/api/exports/{job.pk}/resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "pending"
    assert sent == [("tasks.exporting.run_export", [job.pk])]
    assert job_execute(ExportJob, job.pk) == "done"
    assert admin.post("/api/exports/999999/cancel").status_code == 404
