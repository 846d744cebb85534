"""ExportJob left corpus for analytics, beside its kind, with its table: rows and content types survive the move."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("corpus", "0005_exportjob_job_progress"), ("analytics", None)]
AFTER = [("corpus", "0006_exportjob_moved_to_analytics"), ("analytics", "0001_initial")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


@pytest.mark.django_db(transaction=True)
def test_export_rows_and_their_content_type_follow_the_model_to_analytics():
    old = _migrate(BEFORE)
    Dataset, Task = old.get_model("corpus", "Dataset"), old.get_model("corpus", "TaskType")
    ContentType = old.get_model("contenttypes", "ContentType")
    task = Task.objects.first() or Task.objects.create(slug="moved-task", name="moved task")
    dataset = Dataset.objects.create(name="moved-exports", task=task)
    old.get_model("corpus", "ExportJob").objects.create(dataset=dataset, format="csv", files=["a.csv"], total=4)
    ContentType.objects.get_or_create(app_label="corpus", model="exportjob")

    new = _migrate(AFTER)
    moved = new.get_model("analytics", "ExportJob").objects.get()
    assert (moved.dataset_id, moved.format, moved.files, moved.total) == (dataset.pk, "csv", ["a.csv"], 4)
    labels = set(new.get_model("contenttypes", "ContentType").objects.filter(model="exportjob")
                 .values_list("app_label", flat=True))
    assert labels == {"analytics"}

    back = _migrate(BEFORE)  # and back again, rows kept
    assert back.get_model("corpus", "ExportJob").objects.get().format == "csv"
    call_command("migrate", verbosity=0)  # leave the database as the other tests expect it
