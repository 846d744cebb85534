"""A real Celery worker process on Redis runs a task whose result lands in the test database."""

from __future__ import annotations

import uuid

import pytest

from corpus.models import Dataset
from tasks.maintenance import ping_dataset
from tests import factories
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


def test_worker_process_writes_task_result_to_database(celery_worker_factory):
    worker = celery_worker_factory().start()
    dataset = factories.dataset("ping")
    note = f"written by a worker {uuid.uuid4().hex}"
    ping_dataset.apply_async((dataset.pk, note), queue=worker.queue)
    assert wait_for(lambda: Dataset.objects.get(pk=dataset.pk).description == note, timeout=30), (
        worker.log.read_text()[-2000:]
    )
    assert "ping_dataset" in worker.log.read_text()
