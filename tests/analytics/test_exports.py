"""export_items: filters, Parquet, Label Studio and factgenie files that import back, and the data card."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
from django.core.management import call_command

from corpus.models import ErrorSpan


def _export(tmp_path: Path, fmt: str, name: str = "out", **filters) -> Path:
    path = tmp_path / {"labelstudio": f"{name}.json", "factgenie": name}.get(fmt, f"{name}.{fmt}")
    call_command("export_items", dataset="tiny-study", format=fmt, output=path, stderr=io.StringIO(), **filters)
    return path


def _csv(tmp_path: Path, **filters) -> list[dict[str, str]]:
    return list(csv.DictReader(_export(tmp_path, "csv", **filters).open(encoding="utf-8")))


def test_export_filters_by_system_annotator_campaign_status(study, tmp_path):
    rows = _csv(tmp_path)
    assert {r["item_id"] for r in rows} == {"i1", "i2", "i3", "i4"}
    assert {r["item_id"] for r in _csv(tmp_path, system="sysB")} == {"i3", "i4"}
    mine = _csv(tmp_path, annotator=study.ann2.username)
    assert {r["annotator"] for r in mine} <= {study.ann2.username, ""}
    assert any(r["annotator"] == study.ann2.username for r in mine)
    # i4 has no assignment in the campaign: a campaign (or status) filter leaves it out
    assert {r["item_id"] for r in _csv(tmp_path, campaign=str(study.campaign.pk))} == {"i1", "i2", "i3"}
    assert {r["item_id"] for r in _csv(tmp_path, status="done")} == {"i1", "i2", "i3"}
    assert {r["source"] for r in _csv(tmp_path, source="gold")} == {"gold"}


def test_export_parquet_has_the_csv_rows(study, tmp_path):
    rows = _csv(tmp_path)
    table = pq.read_table(_export(tmp_path, "parquet"))
    assert table.num_rows == len(rows)
    assert table.column_names == list(rows[0])
    first = table.slice(0, 1).to_pylist()[0]
    assert first["item_id"] == rows[0]["item_id"] and first["start"] == (int(rows[0]["start"]) if rows[0]["start"]
                                                                          else None)


def _gold_spans(label: str) -> list[tuple]:
    return sorted(ErrorSpan.objects.filter(annotation__source__label=label).values_list(
        "annotation__item__external_id", "start", "end"))


def test_export_labelstudio_and_factgenie_import_back_with_the_same_spans(study, tmp_path):
    gold = _gold_spans("gold")
    ls = _export(tmp_path, "labelstudio", source="gold")
    assert ls.with_name("out.labels.xml").read_text().startswith("<View>")
    call_command("import_annotations", str(ls), dataset="tiny-study", source="ls-back", format="labelstudio",
                 stdout=io.StringIO())
    assert _gold_spans("ls-back") == [s for s in gold if s[1] is not None]
    fg = _export(tmp_path, "factgenie", name="fg", source="gold")  # a folder of campaigns, one per source
    campaign = fg / "tiny-study-gold"
    assert json.loads((campaign / "metadata.json").read_text())["config"]["annotation_span_categories"]
    call_command("import_annotations", str(campaign), dataset="tiny-study", source="fg-back", format="factgenie",
                 stdout=io.StringIO())
    assert _gold_spans("fg-back") == [s for s in gold if s[1] is not None]


def test_export_writes_a_data_card_with_provenance_counts_and_agreement(study, tmp_path):
    path = _export(tmp_path, "jsonl")
    card = json.loads(path.with_name("out.card.json").read_text())
    assert card["dataset"] == "tiny-study" and card["format"] == "jsonl"
    assert card["counts"]["items"] == 4
    assert card["counts"]["judgments"] == sum(card["counts"]["judgments_by_annotator"].values()) > 0
    assert {r["label"] for r in card["runs"]} == {"ens-run", "single-run", "silent-run"}
    assert card["campaigns"][0]["agreement"]["units"] > 0
    assert {s["label"] for s in card["imported_sources"]} == {"gold"}
    filtered = _export(tmp_path, "jsonl", name="sysb", system="sysB")
    card = json.loads(filtered.with_name("sysb.card.json").read_text())
    assert card["filters"] == {"system": "sysB"} and card["counts"]["items"] == 2
