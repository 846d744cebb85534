"""`import_mqm`, `mqm_scores`, the MQM API and `export_annotations --format mqm-tsv` on a small made-up TSV."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from ninja.testing import TestClient

from config.api import api
from corpus.models import Annotation, Dataset, ErrorSpan, Item, Source

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"
ROWS = [
    # sysA: seg 1 one Major (5) by r1; seg 2 clean by r1 and a Minor punctuation (0.1) by r2 -> (5 + 0 + 0.1) / 3
    "sysA\ttalk\t1\t1\tr1\tHi 😀 there.\tHallo 😀 <v>dort</v>.\tAccuracy/Mistranslation\tMajor\twrong word\n",
    "sysA\ttalk\t2\t2\tr1\tBye.\tTschüss.\tNo-error\tNo-error\t\n",
    "sysA\ttalk\t2\t2\tr2\tBye.\tTschüss<v>.</v>\tFluency/Punctuation\tMinor\t\n",
    # sysB: seg 1 a source-side Omission (5) and a Non-translation! (25) by r2; seg 2 clean -> 30 / 2
    "sysB\ttalk\t1\t1\tr2\tHi 😀 <v>there</v>.\tHallo 😀.\tAccuracy/Omission\tMajor\t\n",
    "sysB\ttalk\t1\t1\tr2\tHi 😀 there.\tHallo 😀.\tNon-translation!\tMajor\t\n",
    "sysB\ttalk\t2\t2\tr2\tBye.\tAuf Wiedersehen.\tNo-error\tNo-error\tfine\n",
]


@pytest.fixture
def tsv(tmp_path):
    path = tmp_path / "ratings.tsv"
    path.write_text(HEADER + "".join(ROWS), encoding="utf-8")
    return path


def _import(path, **options) -> str:
    out = io.StringIO()
    call_command("import_mqm", str(path), dataset=options.pop("dataset", "mt"), stdout=out, **options)
    return out.getvalue()


def _scores(**options) -> str:
    out = io.StringIO()
    call_command("mqm_scores", dataset="mt", stdout=out, **options)
    return out.getvalue()


@pytest.mark.django_db
def test_import_makes_one_item_per_translation_and_one_source_per_rater(tsv):
    assert "4 new items" in _import(tsv)
    items = {(i.system, i.external_id): i for i in Item.objects.filter(dataset__name="mt")}
    assert len(items) == 4
    item = items[("sysA", "talk:1")]
    assert (item.output, item.inputs) == ("Hallo 😀 dort.", {"Source": "Hi 😀 there."})
    span = ErrorSpan.objects.get(annotation__item=item)
    assert item.output[span.start:span.end] == "dort" == span.text and span.explanation == "wrong word"
    assert sorted(Source.objects.filter(annotations__item__dataset__name="mt").distinct()
                  .values_list("label", flat=True)) == ["mqm:r1", "mqm:r2"]
    omission = ErrorSpan.objects.get(category="Accuracy/Omission")
    assert (omission.start, omission.text) == (None, "there")  # marked in the source: no place in the output
    assert Annotation.objects.filter(item__dataset__name="mt").count() == 5


@pytest.mark.django_db
def test_a_bad_row_is_refused_with_its_line_and_nothing_is_kept(tsv):
    tsv.write_text(HEADER + "".join(ROWS) + "sysB\ttalk\t3\t3\tr1\ta\tb\tOther\tHuge\t\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 8: unknown severity 'Huge'"):
        _import(tsv)
    assert not Dataset.objects.filter(name="mt").exists() and not Source.objects.filter(label="mqm:r1").exists()


@pytest.mark.django_db
def test_importing_the_same_raters_twice_is_refused_but_another_prefix_reuses_the_items(tsv):
    _import(tsv)
    with pytest.raises(CommandError, match="already has ratings by 'mqm:r1'"):
        _import(tsv)
    assert "0 new items, 4 existing" in _import(tsv, source="second")
    assert Annotation.objects.filter(source__label__startswith="second:").count() == 5


@pytest.mark.django_db
def test_mqm_scores_prints_the_contract_json_sorted_by_score(tsv):
    _import(tsv)
    body = json.loads(_scores())
    assert list(body) == ["systems"]
    rows = body["systems"]
    assert [list(r) for r in rows] == [["system", "score", "ratings", "segments", "ci_low", "ci_high",
                                        "rank_range"]] * 2
    # sysA: three rated (segment, rater) pairs over two segments; sysB: one rater on each of its two
    assert [(r["system"], r["ratings"], r["segments"]) for r in rows] == [("sysA", 3, 2), ("sysB", 2, 2)]
    assert rows[0]["score"] == pytest.approx(5.1 / 3) and rows[1]["score"] == pytest.approx(15.0)
    assert rows[0]["ci_low"] <= rows[0]["score"] <= rows[0]["ci_high"]
    assert rows[0]["rank_range"] == rows[1]["rank_range"] == [1, 2]  # two segments separate nothing


@pytest.mark.django_db
def test_mqm_scores_takes_weights_and_writes_csv(tsv, tmp_path):
    _import(tsv)
    weights = tmp_path / "w.json"
    weights.write_text(json.dumps({"*": {"*": 1}, "Non-translation": {"major": 0}}), encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(_scores(weights=str(weights), format="csv"))))
    assert list(rows[0]) == ["system", "score", "ratings", "segments", "ci_low", "ci_high", "rank_range"]
    assert {r["system"]: float(r["score"]) for r in rows} == {"sysA": pytest.approx(2 / 3), "sysB": 0.5}
    assert rows[0]["rank_range"] == "1-2"
    weights.write_text('{"*": {"major": -2}}', encoding="utf-8")
    with pytest.raises(CommandError, match="from 0"):
        _scores(weights=str(weights))
    with pytest.raises(CommandError, match="no source labelled other:"):
        _scores(source="other")


@pytest.mark.django_db
def test_the_api_returns_what_the_command_prints(tsv, researcher, annotator_user):
    _import(tsv)
    dataset = Dataset.objects.get(name="mt")
    client = TestClient(api)
    answer = client.get(f"/analytics/datasets/{dataset.pk}/mqm?source=mqm", user=researcher)
    assert answer.status_code == 200 and answer.json() == json.loads(_scores())
    assert client.get(f"/analytics/datasets/{dataset.pk}/mqm?source=zz", user=researcher).status_code == 422
    assert client.get(f"/analytics/datasets/{dataset.pk}/mqm", user=annotator_user).status_code == 403


@pytest.mark.django_db
def test_export_writes_the_tsv_back_sorted(tsv, tmp_path):
    _import(tsv)
    out = io.StringIO()
    call_command("export_annotations", dataset="mt", format="mqm-tsv", stdout=out)
    lines = out.getvalue().splitlines(keepends=True)
    assert lines[0] == HEADER
    assert sorted(lines[1:]) == sorted(ROWS)
    keys = [(r.split("\t")[0], int(r.split("\t")[2]), int(r.split("\t")[3]), r.split("\t")[4]) for r in lines[1:]]
    assert keys == sorted(keys)
