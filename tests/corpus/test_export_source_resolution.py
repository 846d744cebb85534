"""export_annotations looks a source name up within the named dataset only; an unknown one is an error listing them.

The silent empty export: dataset A's gold came with its item file, dataset B had an external source also named
'gold'; `export_annotations --dataset A --source gold` picked B's, wrote 0 lines and said "Wrote ...".
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db

TEXT = "The Hawks beat the Nets 102-98 on Monday."


def _items(tmp_path, name: str, spans: bool) -> None:
    path = tmp_path / f"{name}.jsonl"
    record = {"id": "T1", "outputs": {"text": TEXT}}
    if spans:
        record["spans"] = [{"start": 4, "end": 9, "text": "Hawks", "category": "Incorrect"}]
    path.write_text(json.dumps(record) + "\n")
    call_command("import_items", str(path), dataset=name, task="data-to-text", source="gold", stdout=io.StringIO())


def test_a_source_name_is_resolved_within_the_dataset(tmp_path):
    _items(tmp_path, "A", spans=True)
    _items(tmp_path, "B", spans=False)
    external = tmp_path / "b-gold.jsonl"
    external.write_text(json.dumps({"item_id": "T1", "spans": [{"start": 19, "text": "Nets"}]}) + "\n")
    call_command("import_annotations", str(external), dataset="B", source="gold", stdout=io.StringIO())
    out = tmp_path / "a-gold.jsonl"
    said = io.StringIO()
    call_command("export_annotations", dataset="A", source="gold", output=out, stdout=said)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(s["start"], s["text"]) for line in lines for s in line["spans"]] == [(4, "Hawks")]
    assert "Wrote 1 annotations" in said.getvalue()
    # and B's own external gold from B
    call_command("export_annotations", dataset="B", source="gold", output=out, stdout=io.StringIO())
    assert [s["text"] for s in json.loads(out.read_text())["spans"]] == ["Nets"]


def test_an_unknown_source_is_an_error_listing_the_datasets_sources(tmp_path):
    _items(tmp_path, "A", spans=True)
    _items(tmp_path, "B", spans=False)
    external = tmp_path / "b-llm.jsonl"
    external.write_text(json.dumps({"item_id": "T1", "model": "m", "spans": []}) + "\n")
    call_command("import_annotations", str(external), dataset="B", source="llm", stdout=io.StringIO())
    out = tmp_path / "never.jsonl"
    with pytest.raises(CommandError, match=r"dataset 'A' has no source named 'llm' \(its sources: 'gold'\)"):
        call_command("export_annotations", dataset="A", source="llm", output=out, stdout=io.StringIO())
    assert not out.exists()
