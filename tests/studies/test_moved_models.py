"""The study and quality models left `annotator` with their tables: rows and content types survive the move."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotator", "0009_quality_checks"), ("quality", None), ("studies", None)]
AFTER = [("annotator", "0010_study_and_quality_moved"), ("quality", "0001_initial"), ("studies", "0001_initial")]


def _migrate(targets):
    """Migrate to `targets` and return the models as they stand there (an app at None has none)."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    loader = MigrationExecutor(connection).loader
    below = [leaf for leaf in loader.graph.leaf_nodes() if leaf[0] in ("accounts", "corpus", "contenttypes")]
    return loader.project_state(below + [t for t in targets if t[1] is not None]).apps


@pytest.mark.django_db(transaction=True)
def test_rows_and_content_types_follow_the_models_to_their_new_apps():
    old = _migrate(BEFORE)
    User = old.get_model("accounts", "User")
    Dataset, Task = old.get_model("corpus", "Dataset"), old.get_model("corpus", "TaskType")
    Campaign, StudyLink = old.get_model("annotator", "Campaign"), old.get_model("annotator", "StudyLink")
    Participant, Qualification = old.get_model("annotator", "Participant"), old.get_model("annotator", "Qualification")
    ContentType = old.get_model("contenttypes", "ContentType")
    user = User.objects.create(username="moved-expert")
    task = Task.objects.first() or Task.objects.create(slug="moved-task", name="moved task")
    campaign = Campaign.objects.create(name="moved", dataset=Dataset.objects.create(name="moved-set", task=task))
    link = StudyLink.objects.create(campaign=campaign, token="a" * 32, pass_code="PASS")
    Participant.objects.create(link=link, user=User.objects.create(username="moved-p"), prolific_pid="PID1")
    Qualification.objects.create(campaign=campaign, annotator=user, score=0.75, passed=True)
    ContentType.objects.get_or_create(app_label="annotator", model="studylink")
    ContentType.objects.get_or_create(app_label="annotator", model="qualification")

    new = _migrate(AFTER)
    moved_link = new.get_model("studies", "StudyLink").objects.get()
    assert (moved_link.token, moved_link.campaign_id) == ("a" * 32, campaign.pk)
    assert new.get_model("studies", "Participant").objects.get().prolific_pid == "PID1"
    assert new.get_model("quality", "Qualification").objects.get().score == 0.75
    labels = set(new.get_model("contenttypes", "ContentType").objects.filter(
        model__in=["studylink", "qualification"]).values_list("app_label", "model"))
    assert labels == {("studies", "studylink"), ("quality", "qualification")}

    back = _migrate(BEFORE)  # and back again, rows kept
    assert back.get_model("annotator", "StudyLink").objects.get().token == "a" * 32
    call_command("migrate", verbosity=0)  # leave the database as the other tests expect it
