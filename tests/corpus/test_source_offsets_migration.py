"""The migration that moved an MQM source mark from its span's note into source_start/source_end, and back."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("corpus", "0007_side_by_side_units")]
AFTER = [("corpus", "0008_errorspan_source_offsets")]


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)
    loader = MigrationExecutor(connection).loader
    below = [leaf for leaf in loader.graph.leaf_nodes() if leaf[0] in ("accounts", "contenttypes")]
    return loader.project_state(below + targets).apps


@pytest.mark.django_db(transaction=True)
def test_source_marks_move_from_notes_into_fields_and_back():
    old = _migrate(BEFORE)
    Task, Dataset, Item = (old.get_model("corpus", name) for name in ("TaskType", "Dataset", "Item"))
    Source, Annotation, Span = (old.get_model("corpus", name) for name in ("Source", "Annotation", "ErrorSpan"))
    task = Task.objects.first() or Task.objects.create(slug="mqm-task", name="mqm task")
    dataset = Dataset.objects.create(name="source-marks", task=task)
    item = Item.objects.create(dataset=dataset, position=1, external_id="1", output="Das Haus.",
                               inputs={"Source": "The old house."})
    source = Source.objects.create(label="mqm-rater1", kind="import")
    annotation = Annotation.objects.create(item=item, source=source, kind="human")
    spans = {
        "source": Span.objects.create(annotation=annotation, position=0, text="old", match="none",
                                      note="mqm:source 4-7"),
        "open source": Span.objects.create(annotation=annotation, position=1, text="house.", match="none",
                                           note="mqm:source 8-14 mqm:open"),
        "target": Span.objects.create(annotation=annotation, position=2, text="Haus", start=4, end=8,
                                      note="mqm:open"),
        "plain": Span.objects.create(annotation=annotation, position=3, text="", match="none", note="a remark"),
    }

    new = _migrate(AFTER)
    rows = {pk: row for pk, *row in new.get_model("corpus", "ErrorSpan").objects.values_list(
        "pk", "source_start", "source_end", "start", "note")}
    assert rows[spans["source"].pk] == [4, 7, None, ""]
    assert rows[spans["open source"].pk] == [8, 14, None, "mqm:open"]
    assert rows[spans["target"].pk] == [None, None, 4, "mqm:open"]
    assert rows[spans["plain"].pk] == [None, None, None, "a remark"]

    back = _migrate(BEFORE)
    notes = dict(back.get_model("corpus", "ErrorSpan").objects.values_list("pk", "note"))
    assert notes == {spans["source"].pk: "mqm:source 4-7", spans["open source"].pk: "mqm:source 8-14 mqm:open",
                     spans["target"].pk: "mqm:open", spans["plain"].pk: "a remark"}
    call_command("migrate", verbosity=0)  # leave the database as the other tests expect it
