"""Bounded parsing: deeply nested JSON is refused while it is read, fast and in little memory, in every reader.

A 100,000-deep `[[[[...]]]]` inside one object once took a web worker to ~20 GB (the JSON-list reader kept
each piece's parse events with their whole path prefix). Each case measures the time and the memory the
refusal took (tracemalloc's peak of Python allocations, and the process's peak RSS before and after).
"""

from __future__ import annotations

import json
import resource
import time
import tracemalloc
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus.formats import FormatError, iter_objects
from corpus.interop import read_annotations

LIMIT_SECONDS = 1.0
LIMIT_BYTES = 100 * 2**20


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _item(deep: str = "[]") -> str:
    return '{"id": "a", "outputs": {"Text": "An output."}, "notes": ' + deep + "}"


def _files(tmp_path: Path, depth: int) -> dict[str, tuple[Path, str]]:
    """Every reader's file shape with the deep value in its second object, and the format to read it as."""
    deep = _deep(depth)
    task = '{"data": {"text": "An output.", "item_id": "a"}, "annotations": [], "x": ' + deep + "}"
    factgenie = '{"example_idx": 0, "annotations": [], "metadata": ' + deep + "}"
    shapes = {
        "items.json": ("[\n" + _item() + ",\n" + _item(deep) + "\n]", "items"),
        "items.jsonl": (_item() + "\n" + _item(deep) + "\n", "items"),
        "labelstudio.json": ("[" + task.replace(deep, "[]") + ",\n" + task + "]", "labelstudio"),
        "annotations.jsonl": ('{"item_id": "a", "spans": []}\n{"item_id": "a", "spans": ' + deep + "}\n", "jsonl"),
        "annotations.json": ('[{"item_id": "a", "spans": []},\n{"item_id": "a", "spans": ' + deep + "}]", "jsonl"),
        "factgenie.jsonl": (factgenie.replace(deep, "{}") + "\n" + factgenie + "\n", "factgenie"),
    }
    out = {}
    for name, (text, fmt) in shapes.items():
        path = tmp_path / name
        path.write_text(text)
        out[name] = (path, fmt)
    return out


def _read(path: Path, fmt: str) -> None:
    if fmt == "items":
        list(iter_objects(path))
    else:
        list(read_annotations(path, fmt))


@pytest.mark.parametrize("depth", [20_000, 100_000])
def test_deep_nesting_is_refused_within_a_second_and_100_mb_in_every_reader(tmp_path, depth):
    for name, (path, fmt) in _files(tmp_path, depth).items():
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        tracemalloc.start()
        began = time.perf_counter()
        with pytest.raises(FormatError) as excinfo:
            _read(path, fmt)
        seconds = time.perf_counter() - began
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
        message = str(excinfo.value)
        assert "nested deeper than 64 levels" in message, (name, message)
        assert ("line 2" in message) or ("object #2" in message), (name, message)  # names where
        assert seconds < LIMIT_SECONDS, (name, seconds)
        assert peak < LIMIT_BYTES, (name, peak)
        assert rss_growth < LIMIT_BYTES, (name, rss_growth)


def test_deep_factgenie_metadata_is_refused_by_name(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.jsonl").write_text('{"example_idx": 0, "annotations": []}\n')
    (tmp_path / "metadata.json").write_text('{"config": ' + _deep(100_000) + "}")
    with pytest.raises(FormatError, match="metadata.json: invalid JSON: nested deeper than 64 levels"):
        list(read_annotations(tmp_path, "factgenie"))


def test_an_object_over_the_size_limit_is_refused_while_reading(tmp_path, monkeypatch):
    monkeypatch.setattr("corpus.formats.reader.MAX_OBJECT_MB", 1)
    big = '{"id": "b", "outputs": {"Text": "' + "x" * (3 * 2**20) + '"}}'
    for name, text in (("big.json", "[" + _item() + ",\n" + big + "]"), ("big.jsonl", _item() + "\n" + big + "\n")):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(FormatError, match="larger than 1 MB") as excinfo:
            list(iter_objects(path))
        assert "line 2" in str(excinfo.value)


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_list_reader_decodes_elements_across_pieces_of_any_size(tmp_path, monkeypatch, chunk):
    """Strings, escapes, numbers and multi-byte characters cut at every place still decode whole."""
    monkeypatch.setattr("corpus.formats.reader._CHUNK", chunk)
    objects = [
        {"id": i, "text": "é\"\\\u00e9\U0001f600" * (i % 5) + "]" + "," * (i % 3), "n": 12345678901234 + i,
         "f": -1.5e-3 * i, "deep": [[[{"k": [i]}]]]}
        for i in range(60)
    ] + [123456789, "a plain string", None]
    path = tmp_path / "list.json"
    path.write_text(json.dumps(objects, indent=1, ensure_ascii=False))
    assert [value for _, value in iter_objects(path)] == objects
    path.write_text(json.dumps(objects, ensure_ascii=True))
    assert [value for _, value in iter_objects(path)] == objects


def test_list_reader_names_the_line_of_an_error_inside_a_large_object(tmp_path, monkeypatch):
    monkeypatch.setattr("corpus.formats.reader._CHUNK", 16)
    lines = ['{"id": "a", "words": ['] + ['"w",'] * 50 + ['"w" "missing comma"', "]}"]
    path = tmp_path / "list.json"
    path.write_text("[\n" + _item() + ",\n" + "\n".join(lines) + "\n]")
    with pytest.raises(FormatError) as excinfo:
        list(iter_objects(path))
    assert excinfo.value.where == "object #2 (line 54)", excinfo.value.where
    assert "Expecting ',' delimiter" in excinfo.value.message


def test_list_reader_reads_empty_lists_bom_and_crlf(tmp_path):
    path = tmp_path / "list.json"
    for text in (b"[]", b" [ ]\n\n", b"\xef\xbb\xbf[]"):
        path.write_bytes(text)
        assert list(iter_objects(path)) == []
    path.write_bytes(b'\xef\xbb\xbf[\r\n{"a": 1},\r\n{"b": 2}\r\n]\r\n')
    assert list(iter_objects(path)) == [("object #1 (line 2)", {"a": 1}), ("object #2 (line 3)", {"b": 2})]
    for text, where in ((b"[", "object #1 (line 1)"), (b"[1,]", "object #2 (line 1)"), (b"[]]", "line 1")):
        path.write_bytes(text)
        with pytest.raises(FormatError) as excinfo:
            list(iter_objects(path))
        assert excinfo.value.where == where


def test_list_reader_refuses_a_missing_separator_and_an_unclosed_list(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[" + _item() + " " + _item() + "]")
    with pytest.raises(FormatError, match="object #2 .*expected ',' or ']' after object #1"):
        list(iter_objects(path))
    path.write_text("[" + _item() + ",\n" + _item())
    with pytest.raises(FormatError, match="expected ',' or ']' after object #2, found the end of the file"):
        list(iter_objects(path))


@pytest.mark.django_db
def test_deep_upload_is_a_4xx_naming_where_on_the_import_page_and_the_api(client, researcher):
    from ninja.testing import TestClient

    from config.api import api
    from corpus.models import Dataset

    deep = ("[\n" + _item() + ",\n" + _item(_deep(100_000)) + "\n]").encode()
    client.force_login(researcher)
    response = client.post("/datasets/import/", {
        "file": SimpleUploadedFile("deep.json", deep), "dataset": "deep", "task": "data-to-text", "source": "gold"})
    assert response.status_code == 400
    assert "deep.json: object #2 (line 3): invalid JSON: nested deeper than 64 levels" in response.content.decode()
    api_client = TestClient(api)
    response = api_client.post("/datasets/import", data={"dataset": "deep-api", "task": "data-to-text"},
                               FILES={"file": SimpleUploadedFile("deep.json", deep)}, user=researcher)
    assert response.status_code == 422
    assert "object #2 (line 3): invalid JSON: nested deeper than 64 levels" in response.json()["detail"]
    assert not Dataset.objects.filter(name__startswith="deep").exists()


@pytest.mark.django_db
def test_deep_annotation_upload_is_a_4xx_in_every_format(client, researcher, tmp_path):
    from ninja.testing import TestClient

    from config.api import api
    from corpus.services.importing import items_import

    items = tmp_path / "items.jsonl"
    items.write_text(_item() + "\n")
    items_import(path=items, dataset_name="games", task_slug="data-to-text")
    from corpus.models import Dataset

    dataset = Dataset.objects.get(name="games")
    api_client = TestClient(api)
    client.force_login(researcher)
    for name, (path, fmt) in _files(tmp_path, 100_000).items():
        if fmt == "items":
            continue
        response = api_client.post(f"/datasets/{dataset.pk}/annotations", data={"source": f"s-{fmt}", "format": fmt},
                                   FILES={"file": SimpleUploadedFile(name, path.read_bytes())}, user=researcher)
        assert response.status_code == 422, (name, response.content)
        assert "nested deeper than 64 levels" in response.json()["detail"], name
        response = client.post(f"/datasets/{dataset.pk}/annotations/import/", {
            "file": SimpleUploadedFile(name, path.read_bytes()), "source": f"p-{fmt}", "format": fmt})
        assert response.status_code == 400, (name, response.status_code)
        assert "nested deeper than 64 levels" in response.content.decode(), name
