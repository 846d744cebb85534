"""A real Celery worker writes an export job queued by the API (sent by task name), progress included."""

from __future__ import annotations

import json

import pytest
from celery import current_app
from django.test import Client

from accounts.services.tokens import token_create
from analytics.models import ExportJob
from tests import factories
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


def test_worker_writes_an_export_job_sent_by_name(celery_worker_factory, tmp_path, settings, monkeypatch):
    exports = tmp_path / "exports"
    settings.EXPORT_DIR = exports
    worker = celery_worker_factory({"SPANJUDGE_EXPORT_DIR": str(exports)}).start()
    monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
    dataset = factories.dataset("exported", items=[{"external_id": str(i), "output": f"text {i}"} for i in range(120)])
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=factories.user('rosa', role='researcher'))}")
    created = api.post(f"/api/datasets/{dataset.pk}/exports", data=json.dumps({"format": "jsonl"}),
                       content_type="application/json")
    assert created.status_code == 202
    job_id = created.json()["id"]
    finished = wait_for(lambda: ExportJob.objects.get(pk=job_id).status == "done", timeout=60)
    assert finished, worker.log.read_text()[-3000:]
    job = api.get(f"/api/exports/{job_id}").json()
    assert job["done"] == job["total"] == 120
    rows = b"".join(api.get(f"/api/exports/{job_id}/files/{job['files'][0]}").streaming_content).decode()
    assert [json.loads(line)["item_id"] for line in rows.splitlines()] == [str(i) for i in range(120)]
