"""Bad item files refused with the field and the line, never a 500 or a database error: one test per case."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Dataset, Item

pytestmark = pytest.mark.django_db


def _good(i: int, **changes) -> dict:
    return {"id": f"g{i}", "inputs": {"Data": "x"}, "outputs": {"Text": f"Output number {i}."}} | changes


def _refused(path: Path, *fragments: str, dataset: str = "bad") -> str:
    with pytest.raises(CommandError) as excinfo:
        call_command("import_items", str(path), dataset=dataset, task="data-to-text", stdout=io.StringIO())
    message = str(excinfo.value)
    for fragment in fragments:
        assert fragment in message, message
    assert not Dataset.objects.exists() and not Item.objects.exists()
    return message


def _jsonl(tmp_path: Path, objects: list) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


def test_nul_character_in_output_is_refused_naming_field_and_line(tmp_path):
    _refused(_jsonl(tmp_path, [_good(1), _good(2, outputs={"Text": "a\u0000b"})]),
             "line 2", "field 'outputs.Text' contains a NUL")


def test_nul_character_in_header_is_refused(tmp_path):
    _refused(_jsonl(tmp_path, [_good(1, inputs={"Da\u0000ta": "x"})]), "line 1", "'inputs (header)' contains a NUL")


def test_nul_character_in_span_explanation_is_refused(tmp_path):
    span = {"start": 0, "end": 6, "text": "Output", "explanation": "bad\u0000"}
    _refused(_jsonl(tmp_path, [_good(1, spans=[span])]), "line 1", "spans[0]", "'explanation' contains a NUL")


def test_nul_character_in_an_unknown_field_is_refused(tmp_path):
    _refused(_jsonl(tmp_path, [_good(1, notes={"a": ["x\u0000"]})]), "line 1", "'notes.a[0]' contains a NUL")


def test_json_nested_2000_deep_is_refused_in_jsonl(tmp_path):
    path = tmp_path / "deep.jsonl"
    deep = "[" * 2000 + "]" * 2000
    path.write_text(json.dumps(_good(1)) + "\n" + '{"id": "g2", "outputs": {"Text": "t"}, "extra": ' + deep + "}\n")
    _refused(path, "line 2", "nested deeper than 64 levels")


def test_json_nested_2000_deep_is_refused_in_a_json_list(tmp_path):
    path = tmp_path / "deep.json"
    deep = "[" * 2000 + "]" * 2000
    path.write_text("[\n" + json.dumps(_good(1)) + ',\n{"id": "g2", "outputs": {"Text": "t"}, "x": ' + deep + "}\n]")
    _refused(path, "object #2 (line 3)", "nested deeper than 64 levels")


@pytest.mark.parametrize(("field", "change", "limit"), [
    ("id", {"id": "i" * 201}, 200),
    ("system", {"system": "s" * 201}, 200),
    ("outputs (header)", {"outputs": {"H" * 201: "text"}}, 200),
    ("aspect", {"aspect": "a" * 201}, 200),
    ("category", {"spans": [{"start": 0, "end": 6, "text": "Output", "category": "c" * 101}]}, 100),
    ("score_label", {"annotations": [{"source": "s", "kind": "annotator", "score_label": "L" * 33}]}, 32),
])
def test_field_longer_than_its_column_is_refused_by_name(tmp_path, field, change, limit):
    _refused(_jsonl(tmp_path, [_good(1), _good(2, **change)]), "line 2", f"field '{field}' is",
             f"at most {limit} are allowed")


def test_dataset_name_longer_than_its_column_is_refused(tmp_path):
    _refused(_jsonl(tmp_path, [_good(1)]), "--dataset", "is longer than 200 characters", dataset="d" * 201)


def test_invalid_utf8_is_reported_on_its_own_line_in_jsonl(tmp_path):
    path = tmp_path / "latin1.jsonl"
    lines = [json.dumps(_good(i)).encode() for i in range(3000)] + [b'{"id": "x", "outputs": {"Text": "caf\xe9"}}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    message = _refused(path, "line 3001", "not UTF-8")
    assert "line 2966" not in message


def test_invalid_utf8_is_reported_on_its_own_line_in_a_json_list(tmp_path):
    path = tmp_path / "latin1.json"
    body = b",\n".join(json.dumps(_good(i)).encode() for i in range(2999))
    path.write_bytes(b"[\n" + body + b',\n{"id": "x", "outputs": {"Text": "caf\xe9"}}\n]')
    _refused(path, "line 3001", "not UTF-8")


def test_cli_names_the_file_once(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    message = _refused(path, "the file is empty")
    assert message.count(str(path)) == 1 and message.startswith(f"{path}: ")


def test_upload_errors_name_the_users_file_not_a_temp_path(client, researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    upload = SimpleUploadedFile("my items.jsonl", b"\xff\xfe not text\n")
    response = client.post("/datasets/import/",
                           {"file": upload, "dataset": "d", "task": "data-to-text", "source": "gold"})
    page = response.content.decode()
    assert "my items.jsonl: line 1: not UTF-8 text" in page and "/tmp" not in page


def test_upload_over_the_size_limit_is_refused_with_413(client, researcher, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.IMPORT_MAX_UPLOAD_MB = 1
    client.force_login(researcher)
    upload = SimpleUploadedFile("big.jsonl", b" " * (1024 * 1024 + 1))
    response = client.post("/datasets/import/", {"file": upload, "dataset": "d", "task": "data-to-text",
                                                 "source": "gold"})
    assert response.status_code == 413
    assert "big.jsonl: upload size: 1.0 MB is over the limit of 1 MB (IMPORT_MAX_UPLOAD_MB)" in (
        response.content.decode())


def test_request_body_over_the_limit_is_refused_before_it_is_read(client, researcher, settings):
    settings.IMPORT_MAX_UPLOAD_MB = 1
    client.force_login(researcher)
    response = client.post("/datasets/import/", data=b"x" * (2 * 1024 * 1024 + 1),
                           content_type="application/octet-stream")
    assert response.status_code == 413 and "uploads are limited to 1 MB" in response.content.decode()
    api = client.post("/api/datasets/import", data=b"x" * (2 * 1024 * 1024 + 1), content_type="multipart/form-data")
    assert api.status_code == 413 and "IMPORT_MAX_UPLOAD_MB" in api.json()["detail"]
