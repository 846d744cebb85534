"""The API and page twins of `import_annotations --split` and `--map-annotator`: same service, same rules."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.services.tokens import token_create
from corpus.models import Annotation, ErrorSpan, Source
from tests import factories as make

pytestmark = pytest.mark.django_db

OUTPUT = "The Hawks won 102-99 at home."
CATEGORIES = [{"name": "Incorrect", "color": "#f00"}]


@pytest.fixture
def dataset():
    return make.dataset("games", items=[{"external_id": "1", "output": OUTPUT, "system": "sysA"}])


def _labelstudio_file() -> SimpleUploadedFile:
    """One task annotated by two Label Studio users (ids 7 and 8), as Label Studio exports it (no `meta`)."""
    def annotation(user: int, start: int, text: str) -> dict:
        return {"completed_by": user, "was_cancelled": False, "result": [
            {"id": f"r{user}", "from_name": "label", "to_name": "text", "type": "labels",
             "value": {"start": start, "end": start + len(text), "text": text, "labels": ["Entity"]}},
        ]}
    tasks = [{"id": 1, "data": {"text": OUTPUT, "item_id": "1", "system": "sysA"},
              "annotations": [annotation(7, 4, "Hawks"), annotation(8, 10, "won")]}]
    return SimpleUploadedFile("project.json", json.dumps(tasks).encode())


def _factgenie_file() -> SimpleUploadedFile:
    """The same output annotated in two splits of one campaign file: only the asked split is imported."""
    meta = {"annotation_span_categories": CATEGORIES, "model": "m", "annotator_id": "m", "annotator_group": 0}
    rows = [
        {"dataset": "games", "split": split, "setup_id": "sysA", "example_idx": 1, "output": OUTPUT,
         "annotations": [{"start": start, "text": text, "type": 0, "reason": split}], "metadata": meta}
        for split, start, text in (("dev", 4, "Hawks"), ("test", 14, "102-99"))
    ]
    return SimpleUploadedFile("campaign.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())


def _stored(source: str) -> list[tuple[str, int, int, str]]:
    return list(ErrorSpan.objects.filter(annotation__source__label=source)
                .order_by("annotation__model", "start")
                .values_list("annotation__model", "start", "end", "explanation"))


def _api(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)}")


def test_api_maps_label_studio_users_and_imports_one_factgenie_split(researcher, dataset):
    api, url = _api(researcher), f"/api/datasets/{dataset.pk}/annotations"
    mapped = api.post(url, {"file": _labelstudio_file(), "source": "ls", "format": "labelstudio",
                            "map_annotator": ["7=alice", "8=bob"]})
    assert mapped.status_code == 201, mapped.content
    assert mapped.json()["annotations"] == 2
    assert _stored("ls") == [("alice", 4, 9, ""), ("bob", 10, 13, "")]
    # without the mapping the ids stay ids: the mapping is what named them
    api.post(url, {"file": _labelstudio_file(), "source": "ls-ids", "format": "labelstudio"})
    assert sorted(Annotation.objects.filter(source__label="ls-ids").values_list("model", flat=True)) == ["7", "8"]

    split = api.post(url, {"file": _factgenie_file(), "source": "fg", "format": "factgenie", "split": "test"})
    assert split.status_code == 201, split.content
    assert _stored("fg") == [("m", 14, 20, "test")]
    missing = api.post(url, {"file": _factgenie_file(), "source": "fg-x", "format": "factgenie", "split": "train"})
    assert missing.status_code == 422 and "split 'train'" in missing.json()["detail"]


@pytest.mark.parametrize(("entries", "named", "why"), [
    (["7=alice", "8"], "map_annotator entry 2 ('8')", "expected ID=NAME"),
    (["=bob"], "map_annotator entry 1 ('=bob')", "expected ID=NAME"),
    (["7=alice", "7=bob"], "map_annotator entry 2 ('7=bob')", "already mapped to 'alice'"),
    (["7=al\x00ice"], "map_annotator: ", "NUL character"),  # the form's rules, before the mapping is read
    (["7=alice", "8=b\x00b"], "map_annotator entry 2: ", "NUL character"),
    (["7=" + "a" * 201], "map_annotator entry 1", "at most 200"),
])
def test_api_refuses_a_bad_mapping_entry_naming_it_and_stores_nothing(researcher, dataset, entries, named, why):
    response = _api(researcher).post(f"/api/datasets/{dataset.pk}/annotations", {
        "file": _labelstudio_file(), "source": "ls", "format": "labelstudio", "map_annotator": entries})
    detail = response.json()["detail"]
    assert response.status_code == 422 and named in detail and why in detail, detail
    assert not Source.objects.filter(label="ls").exists() and not Annotation.objects.exists()


def test_api_refuses_a_split_holding_a_nul(researcher, dataset):
    response = _api(researcher).post(f"/api/datasets/{dataset.pk}/annotations", {
        "file": _factgenie_file(), "source": "fg", "format": "factgenie", "split": "te\x00st"})
    assert response.status_code == 422 and "split: contains a NUL" in response.json()["detail"]
    assert response.json()["field"] == "split"
    assert not Annotation.objects.exists()


def test_page_maps_users_imports_a_split_and_names_a_bad_line(client, researcher, dataset):
    client.force_login(researcher)
    url = f"/datasets/{dataset.pk}/annotations/import/"
    form = client.get(url).content.decode()
    assert 'name="split"' in form and '<textarea name="map_annotator"' in form
    refused = client.post(url, {"file": _labelstudio_file(), "source": "ls", "format": "labelstudio",
                                "map_annotator": "7=alice\n\n8 bob\n"})
    assert refused.status_code == 400
    assert "line 3 (&#x27;8 bob&#x27;): expected ID=NAME" in refused.content.decode()
    assert not Annotation.objects.exists() and not Source.objects.filter(label="ls").exists()

    done = client.post(url, {"file": _labelstudio_file(), "source": "ls", "format": "labelstudio",
                             "map_annotator": "7=alice\r\n\r\n8=bob\r\n"})
    assert done.status_code == 302
    assert _stored("ls") == [("alice", 4, 9, ""), ("bob", 10, 13, "")]
    split = client.post(url, {"file": _factgenie_file(), "source": "fg", "format": "factgenie", "split": " dev "})
    assert split.status_code == 302
    assert _stored("fg") == [("m", 4, 9, "dev")]


def test_command_and_twins_share_the_parser_a_lone_surrogate_is_named(dataset, tmp_path):
    """A multipart body cannot carry a lone surrogate (it is not UTF-8), but a command line or a caller can."""
    path = tmp_path / "project.json"
    path.write_bytes(_labelstudio_file().read())
    with pytest.raises(CommandError, match=r"--map-annotator 2 .*: the name contains a lone UTF-16 surrogate"):
        call_command("import_annotations", str(path), dataset="games", source="ls", format="labelstudio",
                     map_annotator=["7=alice", "8=b\ud800b"], stdout=io.StringIO())
    call_command("import_annotations", str(path), dataset="games", source="ls", format="labelstudio",
                 map_annotator=["7=alice", "8=bob"], stdout=io.StringIO())
    assert _stored("ls") == [("alice", 4, 9, ""), ("bob", 10, 13, "")]
