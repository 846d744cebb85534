"""import_annotations / export_annotations: the three formats, every problem listed, round trips."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Annotation, ErrorSpan, Source, SourceKind
from corpus.services.importing import items_import

OUTPUTS = {
    "1": "The Hawks won 102-99. Less than 0.1% of shots missed.",
    "2": "Atlanta lost at home.  Young scored 30 points.",
    "3": "No errors here.",
}


@pytest.fixture
def dataset(db, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(
        json.dumps({"id": key, "system": "sysA", "inputs": {"data": "d"}, "outputs": {"summary": text}}) + "\n"
        for key, text in OUTPUTS.items()
    ))
    items_import(path=path, dataset_name="games", task_slug="data-to-text")
    return "games"


def _write(tmp_path: Path, name: str, rows: list) -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _import(path: Path, **options) -> str:
    out = io.StringIO()
    call_command("import_annotations", str(path), dataset=options.pop("dataset", "games"),
                 source=options.pop("source", "llm"), stdout=out, **options)
    return out.getvalue()


def _export(**options) -> str:
    out = io.StringIO()
    call_command("export_annotations", dataset="games", stdout=out, **options)
    return out.getvalue()


def _spans(source: str) -> list[tuple[str, int | None, int | None, str, str]]:
    return list(
        ErrorSpan.objects.filter(annotation__source__label=source, annotation__source__kind=SourceKind.EXTERNAL)
        .order_by("annotation__item__position", "position")
        .values_list("annotation__item__external_id", "start", "end", "match", "category")
    )


def test_import_annotations_jsonl_derives_end_keeps_empty_outputs_and_records_provenance(dataset, tmp_path):
    path = _write(tmp_path, "run.jsonl", [
        {"item_id": "1", "system": "sysA", "model": "qwen2.5:7b",
         "spans": [{"start": 10, "text": "won", "category": "fact", "severity": 3, "explanation": "they lost"}]},
        {"item_id": 2, "system": "sysA", "model": "qwen2.5:7b", "spans": [{"start": 0, "end": 7, "text": "Atlanta"}]},
        {"item_id": "3", "system": "sysA", "model": "qwen2.5:7b", "spans": []},
    ])
    out = _import(path)
    assert "3 annotations, 2 spans" in out and "1 outputs with no error" in out
    assert _spans("llm") == [("1", 10, 13, "exact", "fact"), ("2", 0, 7, "exact", "")]
    source = Source.objects.get(label="llm")
    assert (source.kind, source.tool, source.file_name, source.producer) == ("external", "jsonl", "run.jsonl",
                                                                            "qwen2.5:7b")
    assert set(Annotation.objects.filter(source=source).values_list("kind", flat=True)) == {"annotator"}


def test_import_annotations_keeps_case_and_whitespace_differences_as_normalized(dataset, tmp_path):
    path = _write(tmp_path, "cased.jsonl", [
        {"item_id": "1", "system": "sysA", "spans": [{"start": 22, "text": "LESS THAN 0.1%"}]},
        {"item_id": "2", "system": "sysA", "spans": [{"start": 16, "text": "home. Young"}]},
    ])
    out = _import(path)
    assert "2 matched after case/whitespace normalization" in out
    # the second text lost one of the output's two spaces: its end is found where the folded texts agree
    assert _spans("llm") == [("1", 22, 36, "normalized", ""), ("2", 16, 28, "normalized", "")]
    assert OUTPUTS["2"][16:28] == "home.  Young"


def test_import_annotations_lists_every_bad_span_and_refuses_the_file(dataset, tmp_path):
    path = _write(tmp_path, "bad.jsonl", [
        {"item_id": "1", "system": "sysA", "spans": [{"start": 0, "text": ""}, {"start": 4, "text": "Hawks"}]},
        {"item_id": "2", "system": "sysA", "spans": [{"start": 500, "text": "x"}, {"start": 0, "text": "Boston"}]},
    ])
    with pytest.raises(CommandError) as excinfo:
        _import(path)
    message = str(excinfo.value)
    assert message.startswith("bad.jsonl: 3 problems (pass --skip-bad-spans")
    assert "line 1, spans[0]: empty span" in message
    assert "line 2, spans[0]: impossible span: start 500 is outside the output" in message
    assert "line 2, spans[1]: offsets 0-6 select 'Atlanta'[:6]" not in message
    assert "line 2, spans[1]: offsets 0-6 select 'Atlant' but field 'text' is 'Boston'" in message
    assert str(tmp_path) not in message  # the file is named, not its path
    assert not Annotation.objects.filter(source__label="llm").exists()


def test_import_annotations_skip_bad_spans_imports_the_rest_and_reports_each(dataset, tmp_path):
    path = _write(tmp_path, "bad.jsonl", [
        {"item_id": "1", "system": "sysA", "spans": [{"start": 0, "text": ""}, {"start": 4, "text": "Hawks"}]},
        {"item_id": "2", "system": "sysA", "spans": [{"start": 500, "text": "x"}]},
    ])
    out = _import(path, skip_bad_spans=True)
    assert "skipped 2 bad spans" in out
    assert "line 1, spans[0]: empty span" in out and "line 2, spans[0]: impossible span" in out
    assert _spans("llm") == [("1", 4, 9, "exact", "")]
    assert Annotation.objects.filter(source__label="llm").count() == 2  # item 2 stays, with no spans left


def test_import_annotations_refuses_unknown_items_even_when_skipping(dataset, tmp_path):
    path = _write(tmp_path, "unknown.jsonl", [
        {"item_id": "9", "system": "sysA", "spans": []},
        {"item_id": "1", "system": "other", "spans": []},
        {"item_id": "1", "system": "sysA", "spans": []},
        {"item_id": "1", "system": "sysA", "spans": []},
    ])
    with pytest.raises(CommandError) as excinfo:
        _import(path, skip_bad_spans=True)
    message = str(excinfo.value)
    assert "3 problems" in message
    assert "line 1: no item with id '9' and system 'sysA'" in message
    assert "line 2: no item with id '1' and system 'other'" in message
    assert "line 4: a second annotation of item '1'" in message
    assert not Source.objects.filter(label="llm", annotations__isnull=False).exists()


def test_import_annotations_refuses_unknown_dataset_and_long_fields(dataset, tmp_path):
    path = _write(tmp_path, "ok.jsonl", [{"item_id": "1", "system": "sysA", "spans": []}])
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        _import(path, dataset="nope")
    long = _write(tmp_path, "long.jsonl", [
        {"item_id": "1", "system": "sysA", "spans": [{"start": 4, "text": "Hawks", "category": "c" * 101}]},
        {"item_id": "2", "system": "sysA", "model": "m" * 201, "spans": []},
    ])
    with pytest.raises(CommandError) as excinfo:
        _import(long)
    assert "line 1, spans[0]: field 'category' is 101 characters long; at most 100" in str(excinfo.value)
    assert "line 2: field 'model' is 201 characters long; at most 200" in str(excinfo.value)


def test_import_annotations_refuses_nul_characters_naming_field_and_line(dataset, tmp_path):
    path = _write(tmp_path, "nul.jsonl", [
        {"item_id": "1", "system": "sysA", "spans": [{"start": 4, "text": "Hawks", "explanation": "bad\u0000"}]},
    ])
    with pytest.raises(CommandError, match=r"line 1, spans\[0\]: field 'explanation' contains a NUL"):
        _import(path)


def _factgenie_campaign(tmp_path: Path) -> Path:
    folder = tmp_path / "llm-campaign"
    (folder / "files").mkdir(parents=True)
    categories = [{"name": "Incorrect", "color": "#f00"}, {"name": "Misleading", "color": "#0f0"}]
    (folder / "metadata.json").write_text(json.dumps(
        {"id": "llm-campaign", "mode": "llm_eval", "config": {"annotation_span_categories": categories}}
    ))
    meta = {"annotation_span_categories": categories, "model": "llama3.1:8b", "annotator_id": "llama3.1:8b",
            "annotator_group": 0}
    rows = [
        {"dataset": "games", "split": "test", "setup_id": "sysA", "example_idx": 1, "output": OUTPUTS["1"],
         "annotations": [{"start": 10, "text": "won", "type": 0, "reason": "lost"},
                         {"start": 22, "text": "less than 0.1%", "type": 1, "reason": "case differs"}],
         "metadata": meta},
        {"dataset": "games", "split": "test", "setup_id": "sysA", "example_idx": 2, "output": OUTPUTS["2"],
         "annotations": [], "metadata": meta},
    ]
    _write(folder / "files", "games-test-sysA-1.jsonl", rows)
    return folder


def test_import_annotations_factgenie_campaign_without_end_and_round_trip(dataset, tmp_path):
    out = _import(_factgenie_campaign(tmp_path), format="factgenie", source="fg")
    assert "2 annotations, 2 spans (1 matched after" in out
    assert _spans("fg") == [("1", 10, 13, "exact", "Incorrect"), ("1", 22, 36, "normalized", "Misleading")]
    assert set(Annotation.objects.filter(source__label="fg").values_list("model", "kind")) == {
        ("llama3.1:8b", "annotator")
    }
    again = tmp_path / "again"
    _export(source="fg", format="factgenie", output=again)
    _import(again, format="factgenie", source="fg2")
    assert [s[1:] for s in _spans("fg2")] == [(10, 13, "exact", "Incorrect"), (22, 36, "exact", "Misleading")]


def test_import_annotations_labelstudio_export_and_round_trip(dataset, tmp_path):
    tasks = [{
        "id": 7, "data": {"text": OUTPUTS["1"], "item_id": "1", "system": "sysA"},
        "annotations": [{
            "completed_by": {"email": "ann@example.org"}, "was_cancelled": False,
            "result": [
                {"id": "a1", "from_name": "label", "to_name": "text", "type": "labels",
                 "value": {"start": 4, "end": 9, "text": "Hawks", "labels": ["Entity"]}},
                {"id": "a1", "from_name": "explanation", "to_name": "text", "type": "textarea",
                 "value": {"start": 4, "end": 9, "text": ["wrong team"]}},
                {"id": "a1", "from_name": "severity", "to_name": "text", "type": "rating",
                 "value": {"start": 4, "end": 9, "rating": 4}},
            ],
        }, {"completed_by": 3, "was_cancelled": True, "result": []}],
    }]
    path = tmp_path / "project.json"
    path.write_text(json.dumps(tasks))
    _import(path, format="labelstudio", source="ls")
    span = ErrorSpan.objects.get(annotation__source__label="ls")
    assert (span.start, span.end, span.category, span.explanation, span.severity) == (4, 9, "Entity", "wrong team", 4)
    assert Annotation.objects.get(source__label="ls").model == "ann@example.org"
    exported = tmp_path / "export.json"
    _export(source="ls", format="labelstudio", output=exported)
    assert '<Label value="Entity"/>' in exported.with_suffix(".xml").read_text()
    _import(exported, format="labelstudio", source="ls2")
    again = ErrorSpan.objects.get(annotation__source__label="ls2")
    assert (again.start, again.end, again.category, again.explanation, again.severity) == (4, 9, "Entity",
                                                                                         "wrong team", 4)


def test_jsonl_import_then_export_is_identical(dataset, tmp_path):
    rows = [
        {"item_id": "1", "system": "sysA", "model": "m1", "spans": [
            {"start": 4, "end": 9, "text": "Hawks", "category": "entity", "explanation": "x", "severity": 2},
            {"start": None, "end": None, "text": "the coach", "category": "", "explanation": "", "severity": None}]},
        {"item_id": "2", "system": "sysA", "aspect": "coherence", "model": "m1", "spans": []},
    ]
    path = tmp_path / "ours.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    _import(path)
    assert _export(source="llm", format="jsonl") == path.read_text()
