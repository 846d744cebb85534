"""Small housekeeping tasks; `ping_dataset` proves a worker round-trip into the database."""

from __future__ import annotations

from celery import shared_task

from corpus.models import Dataset


@shared_task(name="tasks.maintenance.ping_dataset", acks_late=True)
def ping_dataset(dataset_id: int, note: str) -> None:
    """Write `note` into the dataset's description: the integration test's proof that a worker ran."""
    Dataset.objects.filter(pk=dataset_id).update(description=note)
