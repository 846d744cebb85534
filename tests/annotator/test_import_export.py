"""import_items / export_items: meta-eval files, RotoWire-style gold spans, round-trips, bad input.

Each behaviour is checked on the made-up samples of tests/data (always present) and on the shared datasets
(skipped when $SPANJUDGE_DATA / ../shared/data is missing)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Annotation, Dataset, ErrorSpan, Item
from tests.conftest import SAMPLE_DATA, shared_file

pytestmark = pytest.mark.django_db

# name -> (task, items): the shared OpeNLGauge files, then the samples (named after their task).
META_FILES = {
    "qags": ("summarization", 474),
    "sfres": ("data-to-text", 1181),
    "sfhot": ("data-to-text", 875),
    "topical_chat": ("dialogue", 360),
    "hanna": ("story-generation", 1056),
    "wiki_da": ("simplification", 600),
}
SAMPLE_META_FILES = {
    "summarization": ("summarization", 4),
    "dialogue": ("dialogue", 6),
    "simplification": ("simplification", 6),
}
# gold-span files: the sample (made up), then RotoWire (skipped without the shared data); spans in each
ROTOWIRE_LIKE = {"sample": 9, "rotowire": 1214}
DEMO = Path(__file__).resolve().parents[2] / "demo" / "restaurants.jsonl"


def _meta_path(name: str) -> Path:
    if name in SAMPLE_META_FILES:
        return SAMPLE_DATA / "meta_eval" / f"{name}.json"
    return shared_file(f"meta_eval/{name}.json")


def _task(name: str) -> str:
    return {**META_FILES, **SAMPLE_META_FILES}[name][0]


def _gold_path(name: str) -> Path:
    return SAMPLE_DATA / "game_summaries.jsonl" if name == "sample" else shared_file("rotowire/train.jsonl")


def _import(path: Path, dataset: str, task: str, **extra) -> str:
    out = io.StringIO()
    call_command("import_items", str(path), dataset=dataset, task=task, stdout=out, **extra)
    return out.getvalue()


def _export(dataset: str, fmt: str = "jsonl") -> str:
    out = io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        call_command("export_items", dataset=dataset, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize("name", [*sorted(SAMPLE_META_FILES), *sorted(META_FILES)])
def test_import_items_loads_every_meta_eval_file_unchanged(name):
    task, expected = {**META_FILES, **SAMPLE_META_FILES}[name]
    path = _meta_path(name)
    source = json.loads(path.read_text())
    _import(path, name, task)
    dataset = Dataset.objects.get(name=name)
    assert dataset.items.count() == expected == len(source)
    # Every object's texts and scores are stored exactly, matched by (id, system).
    stored = {(i.external_id, i.system): i for i in dataset.items.all()}
    for obj in source[:: max(1, len(source) // 50)]:
        item = stored[(str(obj["id"]), obj.get("system", ""))]
        assert item.inputs == obj["inputs"]
        assert {dataset.output_header: item.output} == obj["outputs"]
        assert item.human_scores == obj["score"]
    assert dataset.score_aspects == list(source[0]["score"])
    assert dataset.input_headers == list(source[0]["inputs"])


@pytest.mark.parametrize(("name", "distinct", "per_id"), [("dialogue", 2, 3), ("topical_chat", 60, 6)])
def test_import_items_keeps_duplicate_ids_apart_by_system(name, distinct, per_id):
    _import(_meta_path(name), "tc", "dialogue")
    items = Item.objects.filter(dataset__name="tc")
    assert items.values("external_id").distinct().count() == distinct
    assert items.filter(external_id="0").count() == per_id


@pytest.mark.parametrize("name", sorted(ROTOWIRE_LIKE))
def test_import_items_rotowire_gold_offsets_exact(name):
    path = _gold_path(name)
    _import(path, "roto", "data-to-text")
    spans = ErrorSpan.objects.filter(annotation__item__dataset__name="roto").select_related(
        "annotation__item", "annotation__source"
    )
    assert spans.count() == ROTOWIRE_LIKE[name]
    for span in spans:
        assert span.annotation.kind == "gold" and span.annotation.source.label == "gold"
        assert span.annotation.item.output[span.start : span.end] == span.text
    source = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # every span keeps its offsets, category and explanation, in file order (also one on a repeated text)
    for record in source:
        stored = ErrorSpan.objects.filter(annotation__item__dataset__name="roto",
                                          annotation__item__external_id=record["id"]).order_by("position")
        assert [(s.start, s.end, s.text, s.category) for s in stored] == [
            (g["start"], g["end"], g["text"], g["category"]) for g in record["spans"]
        ]


def test_import_items_sample_gold_keeps_offsets_of_a_repeated_text_and_explanations():
    _import(SAMPLE_DATA / "game_summaries.jsonl", "roto", "data-to-text")
    item = Item.objects.get(dataset__name="roto", external_id="G001")
    assert item.system == "" and item.output.count("17") == 2
    span = ErrorSpan.objects.get(annotation__item=item, text="17")
    assert span.start == item.output.rindex("17") and span.explanation == "should be: 16"
    empty = Item.objects.get(dataset__name="roto", external_id="G003")
    assert not ErrorSpan.objects.filter(annotation__item=empty).exists()


@pytest.mark.parametrize("name", ["dialogue", "simplification", "hanna", "wiki_da"])
def test_export_jsonl_round_trips_meta_eval(name, tmp_path):
    task = _task(name)
    path = _meta_path(name)
    _import(path, "first", task)
    first = _export("first")
    again_path = tmp_path / "export.jsonl"
    again_path.write_text(first)
    _import(again_path, "second", task)
    second = _export("second")
    strip = [
        {k: v for k, v in json.loads(line).items() if k != "dataset"} for line in first.splitlines()
    ]
    again = [{k: v for k, v in json.loads(line).items() if k != "dataset"} for line in second.splitlines()]
    assert strip == again
    # one record per (item, aspect): every item has one per human-score aspect
    n_items = len(json.loads(path.read_text()))
    n_aspects = len(Dataset.objects.get(name="first").score_aspects)
    assert len(strip) == n_items * n_aspects


@pytest.mark.parametrize("name", sorted(ROTOWIRE_LIKE))
def test_export_jsonl_round_trips_gold_spans_and_annotations(name, tmp_path):
    _import(_gold_path(name), "roto", "data-to-text")
    _import(DEMO, "demo", "data-to-text")
    for dataset in ("roto", "demo"):
        first = _export(dataset)
        path = tmp_path / f"{dataset}.jsonl"
        path.write_text(first)
        _import(path, f"{dataset}-again", "data-to-text")
        second = _export(f"{dataset}-again")
        assert [json.loads(x) | {"dataset": 0} for x in first.splitlines()] == [
            json.loads(x) | {"dataset": 0} for x in second.splitlines()
        ]
    record = json.loads(_export("roto").splitlines()[0])
    assert record["aspect"] is None
    gold = record["annotations"][0]
    assert gold["kind"] == "gold" and gold["spans"][0]["match"] == "exact"
    output = next(iter(record["outputs"].values()))
    assert all(output[s["start"] : s["end"]] == s["text"] for s in gold["spans"])


def test_export_csv_has_one_row_per_span_when_unjudged():
    _import(DEMO, "demo", "data-to-text")
    import csv

    rows = list(csv.DictReader(io.StringIO(_export("demo", "csv"))))
    assert len(rows) == ErrorSpan.objects.filter(annotation__item__dataset__name="demo").count()
    row = rows[0]
    assert row["annotator"] == "" and row["match"] == "exact" and row["dataset"] == "demo"


# --- bad input: a precise message, exit != 0, nothing half-imported -------------------------------


def _write_jsonl(tmp_path: Path, objects: list[object | str]) -> Path:
    lines = [o if isinstance(o, str) else json.dumps(o) for o in objects]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _good(i: int) -> dict:
    return {"id": f"g{i}", "inputs": {"Data": "x"}, "outputs": {"Text": f"Output number {i}."}, "score": {"q": 1}}


def _assert_refused(path: Path, *fragments: str, task: str = "data-to-text") -> None:
    before = (Dataset.objects.count(), Item.objects.count(), Annotation.objects.count())
    with pytest.raises(CommandError) as excinfo:
        _import(path, "bad", task)
    message = str(excinfo.value)
    for fragment in fragments:
        assert fragment in message, message
    assert (Dataset.objects.count(), Item.objects.count(), Annotation.objects.count()) == before


def test_import_items_refuses_invalid_json_naming_the_line(tmp_path):
    objects: list[object | str] = [_good(i) for i in range(6)] + ['{"id": "g7", "outputs": {"Text": "x"']
    _assert_refused(_write_jsonl(tmp_path, objects), "line 7", "invalid JSON")


def test_import_items_refuses_span_whose_offsets_do_not_match_text(tmp_path):
    bad = _good(3) | {"spans": [{"start": 0, "end": 6, "text": "Output"}, {"start": 0, "end": 5, "text": "number"}]}
    _assert_refused(_write_jsonl(tmp_path, [_good(1), _good(2), bad]), "line 3", "spans[1]", "'Outpu'", "'number'")


def test_import_items_refuses_missing_output(tmp_path):
    bad = {"id": "x9", "inputs": {"Data": "x"}}
    _assert_refused(_write_jsonl(tmp_path, [_good(1), bad]), "line 2", "'x9'", "outputs", "missing")


def test_import_items_refuses_unknown_task(tmp_path):
    _assert_refused(_write_jsonl(tmp_path, [_good(1)]), "unknown task 'poetry'", "data-to-text", task="poetry")


def test_import_items_refuses_bad_json_list_naming_object(tmp_path):
    path = tmp_path / "bad.json"
    good = json.dumps([_good(1), _good(2)], indent=1)
    path.write_text(good[:-1] + ',\n {"id": 3, "outputs": {"Text": "a"}, "score": {"q": "high"}}\n]')
    _assert_refused(path, "object #3", "score.q", "finite number")


def test_import_items_refuses_offsets_outside_output_and_conflicting_duplicates(tmp_path):
    bad = _good(1) | {"spans": [{"start": 5, "end": 500, "text": "x"}]}
    _assert_refused(_write_jsonl(tmp_path, [bad]), "line 1", "outside the output")
    dup = _good(1) | {"outputs": {"Text": "another text"}}
    _assert_refused(_write_jsonl(tmp_path, [_good(1), dup]), "line 2", "already given at line 1")


def test_import_items_error_late_in_large_file_leaves_nothing(tmp_path):
    objects: list[object | str] = [_good(i) for i in range(1500)] + [{"id": "z", "outputs": {}}]
    _assert_refused(_write_jsonl(tmp_path, objects), "line 1501", "exactly one output")


@pytest.mark.parametrize("name", ["summarization", "sfhot"])
def test_import_items_reimport_of_items_only_file_reuses_items(name):
    task, expected = {**META_FILES, **SAMPLE_META_FILES}[name]
    path = _meta_path(name)
    _import(path, name, task)
    out = _import(path, name, task)
    assert "0 new items" in out
    assert Item.objects.filter(dataset__name=name).count() == expected


def test_export_round_trips_judgments_and_added_spans(two_annotators, tmp_path):
    """Verdicts, flags, comments and the errors humans added survive export -> import -> export."""
    from annotator.access import assignment_for_user
    from annotator.models import Assignment
    from annotator.services.added_spans import added_span_create
    from annotator.services.judgments import judgment_set
    from tests.factories import build_campaign

    ann1, ann2 = two_annotators
    built = build_campaign([ann1, ann2], per_item=2)
    item = built.items[0]
    for user, verdicts in ((ann1, ("error", "correct")), (ann2, ("not_error", "vague"))):
        work = assignment_for_user(user, Assignment.objects.get(annotator=user, item=item).pk)
        judgment_set(assignment=work, span=built.spans["a1_family"], user=user,
                     changes={"span_verdict": verdicts[0], "explanation_verdict": verdicts[1],
                              "too_strict": True, "comment": f"<b>{user.username}</b> says so"})
    work = assignment_for_user(ann1, Assignment.objects.get(annotator=ann1, item=item).pk)
    added_span_create(assignment=work, user=ann1, start=4, end=17, category="NAME", severity=3, note="wrong name")

    first = _export(built.dataset.name)
    records = [json.loads(line) for line in first.splitlines()]
    human = [a for r in records for a in r["annotations"] if a["kind"] == "human"]
    assert human == [{"source": "ann1", "kind": "human", "model": "", "score": None, "score_label": "",
                      "score_explanation": "", "parse_status": "n/a", "problems": [], "spans": [{
                          "start": 4, "end": 17, "text": "Copper Kettle", "explanation": "wrong name",
                          "severity": 3, "category": "NAME", "match": "exact", "judgments": [],
                          # one of the item's two judges marked it: a 1-1 tie (corpus.consensus)
                          "consensus": {"span_verdict": None, "explanation_verdict": None, "method": "unresolved",
                                        "agreement": 0.5}}]}]
    judged = [s for r in records for a in r["annotations"] for s in a["spans"] if s["judgments"]]
    assert judged[0]["judgments"] == [
        {"annotator": "ann1", "span_verdict": "error", "explanation_verdict": "correct", "flags": ["too_strict"],
         "comment": "<b>ann1</b> says so"},
        {"annotator": "ann2", "span_verdict": "not_error", "explanation_verdict": "vague", "flags": ["too_strict"],
         "comment": "<b>ann2</b> says so"},
    ]
    path = tmp_path / "judged.jsonl"
    path.write_text(first)
    _import(path, "judged copy", "data-to-text")
    again = [json.loads(line) | {"dataset": 0} for line in _export("judged copy").splitlines()]
    # The consensus is derived, and an added error's depends on its campaign (who else judged the output),
    # which an imported copy has not: everything else comes back as it was.
    assert _without_consensus(again) == _without_consensus([r | {"dataset": 0} for r in records])


def _without_consensus(records: list[dict]) -> list[dict]:
    return [r | {"annotations": [a | {"spans": [{k: v for k, v in s.items() if k != "consensus"}
                                                for s in a["spans"]]} for a in r["annotations"]]}
            for r in records]


def test_dataset_import_page_imports_and_refuses_bad_file(client, researcher, annotator_user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    good = "\n".join(json.dumps(_good(i)) for i in range(3)) + "\n"
    response = client.post("/datasets/import/", {
        "file": SimpleUploadedFile("ok.jsonl", good.encode()), "dataset": "uploaded", "task": "data-to-text",
        "source": "gold", "aspect": ""})
    assert response.status_code == 302
    assert Item.objects.filter(dataset__name="uploaded").count() == 3
    bad = good + '{"id": "g9", "outputs": {"Text": "x"}, "score": {"q": true}}\n'
    response = client.post("/datasets/import/", {
        "file": SimpleUploadedFile("bad.jsonl", bad.encode()), "dataset": "uploaded-2", "task": "data-to-text",
        "source": "gold"})
    assert response.status_code == 400
    assert "line 4" in response.content.decode() and "score.q" in response.content.decode()
    assert not Dataset.objects.filter(name="uploaded-2").exists()
    client.force_login(annotator_user)
    assert client.get("/datasets/import/").status_code == 403


def test_api_import_items_twin(researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from ninja.testing import TestClient

    from config.api import api

    client = TestClient(api)
    body = "\n".join(json.dumps(_good(i)) for i in range(2)) + "\n"
    response = client.post("/datasets/import", data={"dataset": "via-api", "task": "data-to-text"},
                           FILES={"file": SimpleUploadedFile("a.jsonl", body.encode())}, user=researcher)
    assert response.status_code == 201, response.content
    assert response.json()["created_items"] == 2
    bad = SimpleUploadedFile("b.jsonl", b'{"id": 1, "outputs": {}}\n')
    response = client.post("/datasets/import", data={"dataset": "via-api-2", "task": "data-to-text"},
                           FILES={"file": bad}, user=researcher)
    assert response.status_code == 422 and "line 1" in response.json()["detail"]
    assert not Dataset.objects.filter(name="via-api-2").exists()


def test_import_reads_ambiguous_back_and_export_writes_it_only_where_true(tmp_path):
    output = "Ana had 9 rebounds and Lee had 9 rebounds."
    item = {"id": "a1", "inputs": {"Data": "x"}, "outputs": {"Text": output}, "spans": [
        {"start": 8, "end": 18, "text": "9 rebounds", "ambiguous": True},
        {"start": 31, "end": 41, "text": "9 rebounds", "ambiguous": False},
        {"start": 0, "end": 3, "text": "Ana"},
    ]}
    path = _write_jsonl(tmp_path, [item])
    _import(path, "amb", "data-to-text")
    assert list(ErrorSpan.objects.order_by("position").values_list("ambiguous", flat=True)) == [True, False, False]
    [record] = [json.loads(line) for line in _export("amb").splitlines()]
    spans = record["annotations"][0]["spans"]
    assert spans[0]["ambiguous"] is True and "ambiguous" not in spans[1] and "ambiguous" not in spans[2]
    again = tmp_path / "again.jsonl"
    again.write_text(_export("amb"))
    _import(again, "amb-again", "data-to-text")
    assert ErrorSpan.objects.filter(annotation__item__dataset__name="amb-again", ambiguous=True).count() == 1


def test_import_items_refuses_a_bad_ambiguous_field(tmp_path):
    bad = {**_good(1), "spans": [{"start": 0, "end": 6, "text": "Output", "ambiguous": "yes"}]}
    _assert_refused(_write_jsonl(tmp_path, [bad]), "spans[0]", "field 'ambiguous' must be true or false, not 'yes'")
    unplaced = {**_good(1), "spans": [{"text": "Output", "ambiguous": True}]}
    _assert_refused(_write_jsonl(tmp_path, [unplaced]), "an ambiguous span needs offsets")
