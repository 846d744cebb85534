"""The streaming reader of JSON lists: element-by-element decoding with exact places."""

from __future__ import annotations

import json

import pytest

from corpus.formats import FormatError, iter_objects


def test_iter_objects_json_list_streams_across_chunk_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr("corpus.formats.reader._CHUNK", 7)
    objects = [{"id": i, "text": "é" * i + "]" + "," * (i % 3)} for i in range(40)]
    path = tmp_path / "list.json"
    path.write_text(json.dumps(objects, indent=2, ensure_ascii=False))
    got = [value for _, value in iter_objects(path)]
    assert got == objects


def test_iter_objects_json_list_reports_object_line(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('[\n {"id": 1},\n {"id": 2},\n {"id": 3,, }\n]')
    with pytest.raises(FormatError) as excinfo:
        list(iter_objects(path))
    assert excinfo.value.where.startswith("object #3 (line 4")


def test_iter_objects_rejects_trailing_garbage_and_empty(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('[{"id": 1}] extra')
    with pytest.raises(FormatError, match="after the closing"):
        list(iter_objects(path))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("  \n")
    with pytest.raises(FormatError, match="empty"):
        list(iter_objects(empty))


def test_the_models_choices_are_the_protocols_kinds_and_match_kinds():
    """The Django-free protocol holds the values once; the models' choices take them, in order and with labels."""
    from corpus.models import AnnotationKind, MatchKind
    from corpus.protocols.opennlgauge import ANNOTATION_KINDS, MATCH_KINDS

    assert AnnotationKind.choices == list(ANNOTATION_KINDS) and AnnotationKind.GOLD == "gold"
    assert MatchKind.choices == list(MATCH_KINDS) and MatchKind.NONE == "none"
