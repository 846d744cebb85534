"""Pearmut's ESA annotation log: its character boxes against our offsets, its counting rules, refusals by line,
and round trips: a Pearmut log imported and exported is the same JSON line for line, and a campaign exported,
imported and exported again is the same bytes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analytics.selectors.esa import campaign_esa
from corpus.formats import FormatError
from corpus.interop.pearmut import from_pearmut, read_pearmut, to_pearmut
from corpus.models import Annotation, ErrorSpan, Item, Source
from corpus.protocols import esa
from tests.conftest import SAMPLE_DATA
from tests.esa_study import build_esa_study, work_esa_study

FIXTURE = SAMPLE_DATA / "pearmut_esa.jsonl"


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_boxes_skip_line_breaks_count_utf16_units_and_end_inclusive():
    text = "ab\ncd 😀 e"  # boxes: a b c d ' ' 😀 😀 ' ' e -> 9; code points: a0 b1 \n2 c3 d4 ' '5 😀6 ' '7 e8
    assert from_pearmut(text, 2, 3, "t") == (3, 5)  # "cd": after the line break
    assert from_pearmut(text, 5, 6, "t") == (6, 7)  # the emoji's two units are one code point
    assert from_pearmut(text, 8, 8, "t") == (8, 9)
    assert from_pearmut(text, 9, 9, "t") == (None, None)  # the [missing] box after the text
    assert to_pearmut(text, 3, 5) == (2, 3) and to_pearmut(text, 6, 7) == (5, 6) and to_pearmut(text, 8, 9) == (8, 8)
    assert to_pearmut(text, None, None) == (9, 9)
    assert to_pearmut(text, 2, 3) is None  # a line break alone has no box
    with pytest.raises(FormatError, match="outside"):
        from_pearmut(text, 4, 10, "t")
    with pytest.raises(FormatError, match="whole numbers"):
        from_pearmut(text, "1", 2, "t")


def _log(*records: dict) -> list[str]:
    return [json.dumps(r) + "\n" for r in records]


def _record(user: str, item_i, score, *, spans=()) -> dict:
    return {"user_id": user, "item_i": item_i, "item": [{"item_id": "x", "tgt": {"s": "abc def"}}],
            "annotation": [{"s": {"score": score, "error_spans": list(spans)}}], "actions": []}


def test_read_counts_as_pearmut_does():
    log = read_pearmut(_log(
        _record("u", 0, 10), _record("u", 0, 20),  # the later submission replaces the earlier
        _record("v", 0, 30), {"user_id": "v", "item_i": 0, "annotation": "__RESET__"},  # cancelled by the reset
        _record("v", 0, 40), _record("u", "welcome_0", 50),  # a tutorial: left out
        {"user_id": "u", "item_i": 1, "item": [{"text": "Your language?", "form": "string"}], "annotation": [None]},
    ), name="log.jsonl")
    assert sorted((r.user_id, r.score) for r in log.ratings) == [("u", 20.0), ("v", 40.0)]
    assert (log.superseded, log.reset, log.skipped) == (1, 1, 2)


@pytest.mark.parametrize(("change", "message"), [
    ({"spans": [{"start_i": 0, "end_i": 2, "severity": "neutral", "category": None}]}, "line 1, item 0, system 's', "
                                                                                        "span 0: severity"),
    ({"spans": [{"start_i": 0, "end_i": 9, "severity": "minor", "category": None}]}, "outside"),
    ({"score": 120}, "score must be a number from 0 to 100"),
])
def test_bad_lines_are_refused_by_place(change, message):
    record = _record("u", 0, change.get("score", 50), spans=change.get("spans", ()))
    with pytest.raises(FormatError, match=message):
        read_pearmut(_log(record), name="log.jsonl")


@pytest.mark.django_db
def test_a_pearmut_log_imports_and_exports_as_the_same_json(tmp_path: Path):
    out = io.StringIO()
    call_command("import_pearmut", str(FIXTURE), "--dataset", "Pearmut ESA", "--source", "pm", stdout=out)
    assert "6 ratings" in out.getvalue() and "pm:alice, pm:bob" in out.getvalue()
    assert set(Source.objects.filter(label__startswith="pm:").values_list("label", flat=True)) == {"pm:alice",
                                                                                                 "pm:bob"}
    # doc1-1 and doc1-2 of two systems, bob's item without an item_id, doc2-1 of sysB
    assert Item.objects.filter(dataset__name="Pearmut ESA").count() == 6
    ja = ErrorSpan.objects.get(annotation__source__label="pm:alice", annotation__item__system="sysB", text="ja")
    assert (ja.start, ja.end, ja.severity) == (19, 21, esa.SEVERITY_CODES["major"])
    missing = ErrorSpan.objects.get(annotation__source__label="pm:alice", category=esa.MISSING)
    assert (missing.start, missing.end) == (None, None)
    assert ErrorSpan.objects.filter(text="Tschüss", start=12, end=19).exists()
    scores = sorted(Annotation.objects.filter(source__label__startswith="pm:").values_list("score", flat=True))
    assert scores == [20, 35, 62.5, 80, 95, 100]

    target = tmp_path / "back.jsonl"
    call_command("export_annotations", "--dataset", "Pearmut ESA", "--format", "pearmut", "--source", "pm",
                 "-o", str(target), stdout=io.StringIO())
    assert _lines(target.read_text(encoding="utf-8")) == _lines(FIXTURE.read_text(encoding="utf-8"))


@pytest.mark.django_db
def test_an_esa_campaign_round_trips_through_pearmut_byte_for_byte(make_user, tmp_path: Path):
    study = build_esa_study([make_user("rt-a"), make_user("rt-b")], name="ESA round trip", control_arm=1.0)
    work_esa_study(study)
    first = tmp_path / "campaign.jsonl"
    call_command("export_esa", "--campaign", str(study.campaign.pk), "-o", str(first), stdout=io.StringIO())
    written = _lines(first.read_text(encoding="utf-8"))
    assert len(written) == 12 and {line["user_id"] for line in written} == {"rt-a", "rt-b"}
    # ESA^AI lines carry the pre-filled spans the annotator saw; control-arm (ESA) lines none
    prefilled = [line for line in written if "error_spans" in line["item"][0]]
    assert len(prefilled) == 6
    call_command("import_pearmut", str(first), "--dataset", "ESA round trip back", stdout=io.StringIO())
    second = tmp_path / "again.jsonl"
    call_command("export_annotations", "--dataset", "ESA round trip back", "--format", "pearmut", "-o", str(second),
                 stdout=io.StringIO())
    assert second.read_bytes() == first.read_bytes()
    # the scores survive: per system, the imported ratings average to the campaign's means
    means = {row["system"]: row["score"] for row in campaign_esa(study.campaign, n_resamples=10)["systems"]}
    for system, mean in means.items():
        imported = Annotation.objects.filter(item__dataset__name="ESA round trip back", item__system=system)
        assert sum(a.score for a in imported) / imported.count() == pytest.approx(mean)


@pytest.mark.django_db
def test_import_refuses_a_taken_prefix_and_keeps_nothing(tmp_path: Path):
    call_command("import_pearmut", str(FIXTURE), "--dataset", "Pearmut twice", stdout=io.StringIO())
    before = Annotation.objects.count()
    with pytest.raises(CommandError, match="already has ratings"):
        call_command("import_pearmut", str(FIXTURE), "--dataset", "Pearmut twice", stdout=io.StringIO())
    assert Annotation.objects.count() == before
    bad = tmp_path / "bad.jsonl"
    bad.write_text(FIXTURE.read_text(encoding="utf-8") + '{"user_id": "carl", "item_i": 0}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="bad.jsonl, line 4: item and annotation"):
        call_command("import_pearmut", str(bad), "--dataset", "Pearmut bad", stdout=io.StringIO())
    assert not Item.objects.filter(dataset__name="Pearmut bad").exists()
