"""The migration that made ESA's spans done a phase move: rows at every ESA step arrive in the right phase with
undo's boundary, and go back as they were."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotator", "0018_assignment_opened_at")]
AFTER = [("annotator", "0019_esa_phases")]
T_DONE, T_REVEAL = datetime(2026, 11, 3, 10, 0, tzinfo=UTC), datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _migrate(targets):
    """Migrate to `targets` and return the models as they stand there (the apps below at their latest)."""
    MigrationExecutor(connection).migrate(targets)
    loader = MigrationExecutor(connection).loader
    below = [leaf for leaf in loader.graph.leaf_nodes() if leaf[0] in ("accounts", "corpus", "contenttypes")]
    return loader.project_state(below + targets).apps


@pytest.mark.django_db(transaction=True)
def test_spans_done_becomes_the_scoring_phase_and_comes_back():
    old = _migrate(BEFORE)
    User, Task = old.get_model("accounts", "User"), old.get_model("corpus", "TaskType")
    Dataset, Item = old.get_model("corpus", "Dataset"), old.get_model("corpus", "Item")
    Campaign, Assignment = old.get_model("annotator", "Campaign"), old.get_model("annotator", "Assignment")
    EsaScore = old.get_model("annotator", "EsaScore")
    task = Task.objects.first() or Task.objects.create(slug="esa-task", name="esa task")
    dataset = Dataset.objects.create(name="esa-migrated", task=task)
    campaign = Campaign.objects.create(name="esa-migrated", dataset=dataset, protocol="esa")
    user = User.objects.create(username="esa-migrated")

    def assignment(order: int, **fields):
        item = Item.objects.create(dataset=dataset, position=order, external_id=str(order), output="Text.")
        return Assignment.objects.create(campaign=campaign, item=item, annotator=user, order=order, **fields)

    marking = assignment(1)  # spans still open
    EsaScore.objects.create(assignment=marking)
    scoring = assignment(2)  # spans done, no score yet
    EsaScore.objects.create(assignment=scoring, spans_done_at=T_DONE)
    done = assignment(3, phase="done", status="done", finished_at=T_DONE)
    EsaScore.objects.create(assignment=done, spans_done_at=T_DONE, score=70)
    training = assignment(4, is_training=True, phase="training")
    EsaScore.objects.create(assignment=training, spans_done_at=T_DONE)
    revealed = assignment(5, in_control_arm=True, revealed_at=T_REVEAL)  # a revealed control-arm output
    EsaScore.objects.create(assignment=revealed, spans_done_at=T_DONE)
    unopened = assignment(6)

    new = _migrate(AFTER)
    rows = {a.pk: (a.phase, a.boundary_at) for a in new.get_model("annotator", "Assignment").objects.all()}
    assert rows[marking.pk] == ("judging", None)
    assert rows[scoring.pk] == ("scoring", T_DONE)
    assert rows[done.pk] == ("done", T_DONE)
    assert rows[training.pk] == ("scoring", T_DONE)
    assert rows[revealed.pk] == ("scoring", T_DONE)  # the later of the two closing moves
    assert rows[unopened.pk] == ("judging", None)

    back = _migrate(BEFORE)
    phases = dict(back.get_model("annotator", "Assignment").objects.values_list("pk", "phase"))
    assert phases == {marking.pk: "judging", scoring.pk: "judging", done.pk: "done", training.pk: "training",
                      revealed.pk: "judging", unopened.pk: "judging"}
    spans_done = dict(back.get_model("annotator", "EsaScore").objects.values_list("assignment_id", "spans_done_at"))
    assert spans_done == {marking.pk: None, scoring.pk: T_DONE, done.pk: T_DONE, training.pk: T_DONE,
                          revealed.pk: T_DONE}
    call_command("migrate", verbosity=0)  # leave the database as the other tests expect it
