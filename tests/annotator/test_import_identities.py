"""Imported judgments are attributed to import identities unless mapped to a user explicitly, and audited."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.management import CommandError, call_command

from accounts.models import User
from annotator.models import JudgmentEvent, SpanJudgment
from corpus.models import Dataset

pytestmark = pytest.mark.django_db


def _judged_file(tmp_path: Path, annotators: list[str]) -> Path:
    lines = []
    for i in range(3):
        output = f"Output number {i} is wrong."
        judgments = [{"annotator": name, "span_verdict": "error", "explanation_verdict": "correct", "flags": [],
                      "comment": f"by {name}"} for name in annotators]
        lines.append(json.dumps({
            "id": f"j{i}", "inputs": {"Data": "x"}, "outputs": {"Text": output},
            "spans": [{"start": 0, "end": 6, "text": "Output", "judgments": judgments}],
        }))
    path = tmp_path / "judged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _import(path: Path, dataset: str = "judged", *extra: str) -> str:
    out = io.StringIO()
    call_command("import_items", str(path), "--dataset", dataset, "--task", "data-to-text", *extra, stdout=out)
    return out.getvalue()


def test_file_naming_a_real_annotator_does_not_write_under_their_account(tmp_path, make_user):
    expert2 = make_user("expert2")
    _import(_judged_file(tmp_path, ["expert2", "outsider"]))
    assert not SpanJudgment.objects.filter(annotator=expert2).exists()
    identities = {u.imported_name: u for u in User.objects.exclude(imported_name="")}
    assert set(identities) == {"expert2", "outsider"}
    for name, identity in identities.items():
        assert identity.pk != expert2.pk and not identity.is_active and not identity.has_usable_password()
        UnicodeUsernameValidator()(identity.username)
        assert identity.username.startswith("import.") and identity.export_name == name
        assert SpanJudgment.objects.filter(annotator=identity).count() == 3
    # One audit row per imported judgment.
    assert SpanJudgment.objects.count() == 6
    assert JudgmentEvent.objects.filter(field="import").count() == 6
    assert set(JudgmentEvent.objects.values_list("judgment_id", flat=True)) == set(
        SpanJudgment.objects.values_list("pk", flat=True))


def test_a_second_import_reuses_the_identity(tmp_path):
    _import(_judged_file(tmp_path, ["outsider"]), "first")
    _import(_judged_file(tmp_path, ["outsider"]), "second")
    assert User.objects.filter(imported_name="outsider").count() == 1
    assert SpanJudgment.objects.count() == 6


def test_explicit_mapping_writes_under_the_existing_user_with_audit(tmp_path, make_user):
    expert2 = make_user("expert2")
    out = _import(_judged_file(tmp_path, ["E2", "outsider"]), "judged", "--map-annotator", "E2=expert2")
    assert "6 judgments" in out
    assert SpanJudgment.objects.filter(annotator=expert2).count() == 3
    assert not User.objects.filter(imported_name="E2").exists()
    assert JudgmentEvent.objects.filter(field="import", judgment__annotator=expert2).count() == 3


def test_mapping_to_an_unknown_user_is_refused_before_anything_is_imported(tmp_path):
    with pytest.raises(CommandError, match="no such user: ghost"):
        _import(_judged_file(tmp_path, ["E2"]), "judged", "--map-annotator", "E2=ghost")
    with pytest.raises(CommandError, match="NAME=USERNAME"):
        _import(_judged_file(tmp_path, ["E2"]), "judged", "--map-annotator", "E2")
    assert not Dataset.objects.exists() and not User.objects.exists()


@pytest.mark.parametrize("name,problem", [
    ("a" * 201, "at most 150 are allowed"), ("bad\u0007bell", "control character"), ("   ", "blank"),
])
def test_annotator_names_that_break_rules_are_refused(tmp_path, name, problem):
    with pytest.raises(CommandError) as excinfo:
        _import(_judged_file(tmp_path, [name]))
    assert problem in str(excinfo.value) and "nothing was imported" in str(excinfo.value)
    assert not Dataset.objects.exists() and not User.objects.exists() and not SpanJudgment.objects.exists()


def test_odd_but_printable_names_get_valid_usernames(tmp_path):
    _import(_judged_file(tmp_path, ["<script>alert(1)</script>", "Expert 2", "expert-2"]))
    names = list(User.objects.exclude(imported_name="").values_list("username", flat=True))
    assert len(set(names)) == 3  # 'Expert 2' and 'expert-2' slug alike; the hash keeps them apart
    for username in names:
        UnicodeUsernameValidator()(username)


def test_import_identity_cannot_log_in(client, tmp_path):
    _import(_judged_file(tmp_path, ["outsider"]))
    identity = User.objects.get(imported_name="outsider")
    response = client.post("/accounts/login/", {"username": identity.username, "password": ""})
    assert "_auth_user_id" not in client.session and response.status_code == 200
