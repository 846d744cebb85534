"""Each input that once ended as a 500 (issue 26) is refused with a 4xx or a clear import error naming the field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from annotator.services.judgments import JudgmentError, judgment_set
from corpus import cleaning
from corpus.formats import FormatError, iter_objects
from corpus.interop import read_annotations
from corpus.models import Dataset, Item
from tests import factories as make
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db

LONE = "\ud800"


def _api(user, method: str, path: str, raw: str | bytes):
    client = Client()
    return getattr(client, method)(f"/api{path}", data=raw, content_type="application/json",
                                   HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, scope='write')}")


# --- the rules themselves -------------------------------------------------------------------------------

def test_cleaning_digits_accept_ascii_only_and_bound_the_column():
    assert cleaning.digits("42", "seconds") == 42
    assert cleaning.digits("", "seconds", default=0) == 0
    for bad in ("²", "٣", "1²", "-1", "1.5", " 4 2"):
        with pytest.raises(cleaning.CleaningError, match="seconds"):
            cleaning.digits(bad, "seconds")
    with pytest.raises(cleaning.CleaningError, match="larger than 2147483647"):
        cleaning.digits("2147483648", "seconds")
    assert cleaning.as_id("9" * 30) is None and cleaning.as_id("²") is None and cleaning.as_id("7") == 7


def test_cleaning_numbers_and_trees_name_the_place():
    with pytest.raises(cleaning.CleaningError, match="score"):
        cleaning.check_number(10**400, "score")  # math.isfinite would raise OverflowError
    with pytest.raises(cleaning.CleaningError, match=r"body\.a\[1\]: contains a lone UTF-16 surrogate"):
        cleaning.check_tree({"a": ["ok", LONE]})
    with pytest.raises(cleaning.CleaningError, match="4301 digits"):
        cleaning.loads('{"n": ' + "1" * 4301 + "}")
    with pytest.raises(cleaning.CleaningError, match="NaN"):
        cleaning.loads('{"n": NaN}')
    assert cleaning.loads('{"n": 5, "t": "\\ud83d\\ude00"}') == {"n": 5, "t": "😀"}


# --- the item screen's posts ----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["time", "finish", "save"])
def test_item_screen_posts_refuse_superscript_digits_with_422_as_the_api_does(client, make_user, where):
    ann = make_user("sup")
    built = build_campaign([ann])
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    client.force_login(ann)
    if where == "save":
        span = built.spans["a1_family"]
        response = client.post(f"/work/{assignment.pk}/errors/{span_handle(assignment.pk, span.pk)}/",
                               {"field": "span_verdict", "value": "error", "number": "²", "style": "1"})
    else:
        response = client.post(f"/work/{assignment.pk}/{where}/", {"seconds": "²"})
    assert response.status_code == 422
    assignment.refresh_from_db()
    assert assignment.status != Assignment.Status.DONE


def test_item_screen_time_post_still_counts_ascii_seconds(client, make_user):
    ann = make_user("ascii")
    build_campaign([ann])
    assignment = Assignment.objects.filter(annotator=ann).order_by("order").first()
    client.force_login(ann)
    assert client.post(f"/work/{assignment.pk}/time/", {"seconds": "7"}).status_code < 400
    assignment.refresh_from_db()
    assert assignment.seconds_spent == 7


# --- NUL and lone surrogates at every edge ---------------------------------------------------------------

def test_nul_in_export_filter_is_a_400_naming_it(client, researcher):
    client.force_login(researcher)
    data = make.dataset("nul", items=[{"external_id": "1", "output": "Text."}])
    response = client.get(f"/datasets/{data.pk}/export.jsonl", {"aspect": "a\x00b"})
    assert response.status_code == 400 and b"'aspect'" in response.content
    response = client.get(f"/datasets/{data.pk}/items/{data.items.get().pk}/", {"show": ["²", "9" * 30]})
    assert response.status_code == 200  # ids that are not ids are ignored, never passed to PostgreSQL


@pytest.mark.parametrize("path", ["/comparisons", "/runs", "/dhp/runs", "/campaigns"])
def test_nul_or_lone_surrogate_in_a_json_body_is_a_422_naming_the_field(make_user, path):
    admin = make_user("root", role="admin")
    for bad in ("x\\u0000y", "x\\ud800y"):
        response = _api(admin, "post", path, '{"dataset": "' + bad + '", "aspect": "a", "metrics": ["m"]}')
        assert response.status_code == 422, response.content
        assert "body.dataset" in response.json()["detail"]


def test_nul_in_the_import_api_task_field_is_a_422_naming_it(make_user):
    rita = make_user("rita", role="researcher")
    upload = io.BytesIO(b'{"id": "1", "outputs": {"T": "x"}}\n')
    upload.name = "items.jsonl"
    response = Client().post("/api/datasets/import", {"dataset": "d", "task": "data\x00to-text", "file": upload},
                             HTTP_AUTHORIZATION=f"Bearer {token_create(user=rita)}")
    assert response.status_code == 422 and response.json()["field"] == "task"  # the form body's rules
    assert "task: contains a NUL" in response.json()["detail"]
    assert not Dataset.objects.exists()


def test_an_integer_of_4301_digits_in_a_json_body_is_a_422(make_user):
    admin = make_user("root", role="admin")
    response = _api(admin, "post", "/dhp/runs", '{"dataset": "d", "evaluator": "m", "metrics": ["a"], "seed": '
                    + "9" * 4301 + "}")
    assert response.status_code == 422 and "4301 digits" in response.json()["detail"]


def test_judgment_comment_with_a_lone_surrogate_is_refused(make_user):
    ann = make_user("lone")
    built = build_campaign([ann])
    assignment = Assignment.objects.filter(annotator=ann, item=built.items[0]).get()
    span = built.spans["a1_family"]
    with pytest.raises(JudgmentError, match="comment: contains a lone UTF-16 surrogate"):
        judgment_set(assignment=assignment, span=span, user=ann, changes={"comment": f"bad {LONE}"})
    response = _api(ann, "patch", f"/assignments/{assignment.pk}/judgments/{span_handle(assignment.pk, span.pk)}",
                    '{"comment": "a\\ud800"}')
    assert response.status_code == 422 and "body.comment" in response.json()["detail"]
    assert not SpanJudgment.objects.exists()


# --- DHP bounds -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [("seed", 2**31), ("samples", 40000), ("parallel", 70000), ("seed", -1)])
def test_dhp_run_numbers_are_bounded_to_their_columns(make_user, field, value):
    admin = make_user("root", role="admin")
    make.dataset("dhp-bounds", items=[{"external_id": "1", "output": "Text."}])
    body = {"dataset": "dhp-bounds", "evaluator": "m", "metrics": ["accuracy"], field: value}
    response = _api(admin, "post", "/dhp/runs", json.dumps(body))
    assert response.status_code == 422, response.content
    assert field in json.dumps(response.json())


def test_dhp_service_refuses_a_seed_beyond_the_column():
    from dhp.engine.errors import DhpError
    from dhp.engine.kinds import get_kind
    from dhp.services.runs import dhp_create

    data = make.dataset("dhp-seed", items=[{"external_id": "1", "output": "Text."}])
    with pytest.raises(DhpError, match="--seed must be between 0 and 2147483647"):
        dhp_create(dataset=data, evaluator="m", metrics=["accuracy"], kinds=[get_kind("typo:minor")], seed=2**31,
                   check=False)


# --- importers ------------------------------------------------------------------------------------------

def _items(path: Path) -> list:
    return list(iter_objects(path))


def test_jsonl_and_json_list_refuse_a_lone_surrogate_instead_of_storing_a_question_mark(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"id": "1", "outputs": {"T": "ok"}}\n{"id": "2", "outputs": {"T": "bad \\ud800"}}\n')
    with pytest.raises(CommandError, match=r"line 2, id '2': field 'outputs.T' contains a lone UTF-16 surrogate"):
        _import(jsonl)
    assert not Item.objects.exists()
    listed = tmp_path / "a.json"
    listed.write_text('[{"id": "1", "outputs": {"T": "ok"}},\n {"id": "2", "outputs": {"T": "bad \\udc00"}}]')
    with pytest.raises(CommandError, match=r"object #2 .*field 'outputs\.T' contains a lone UTF-16 surrogate"):
        _import(listed)
    assert not Item.objects.exists()
    paired = tmp_path / "b.json"
    paired.write_text('[{"id": "1", "outputs": {"T": "smile \\ud83d\\ude00"}}]')
    assert _items(paired)[0][1]["outputs"]["T"] == "smile 😀"


def _import(path: Path, dataset: str = "hostile") -> None:
    call_command("import_items", str(path), "--dataset", dataset, "--task", "data-to-text", stdout=io.StringIO())


@pytest.mark.parametrize("name", ["a.jsonl", "a.json"])
def test_a_400_digit_integer_score_is_refused_naming_the_field(tmp_path, name):
    record = '{"id": "1", "outputs": {"T": "x"}, "score": {"fluency": ' + "9" * 400 + "}}"
    path = tmp_path / name
    path.write_text(record + "\n" if name.endswith("l") else f"[{record}]")
    # Both readers name the field (the JSON-list reader checks each element as it decodes it).
    with pytest.raises(CommandError, match=r"score\.fluency"):
        _import(path)
    assert not Item.objects.exists()


def test_an_integer_of_4301_digits_in_a_jsonl_file_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "1", "outputs": {"T": "x"}}\n{"id": "2", "outputs": {"T": "x"}, "n": '
                    + "1" * 4301 + "}\n")
    with pytest.raises(CommandError, match="line 2.*4301 digits"):
        _import(path)
    assert not Item.objects.exists()


def test_two_judgments_by_one_annotator_on_a_span_are_refused_naming_the_span(tmp_path):
    judgments = [{"annotator": "e1", "span_verdict": "error", "explanation_verdict": "correct", "flags": [],
                  "comment": str(n)} for n in range(2)]
    path = tmp_path / "twice.jsonl"
    path.write_text(json.dumps({"id": "j1", "inputs": {"Data": "x"}, "outputs": {"Text": "Output is wrong."},
                                "spans": [{"start": 0, "end": 6, "text": "Output", "judgments": judgments}]}) + "\n")
    with pytest.raises(CommandError, match="item 'j1': span 0-6 .* judged twice by annotator 'e1'"):
        _import(path)
    assert not SpanJudgment.objects.exists() and not Item.objects.exists()


def test_factgenie_categories_that_are_not_a_list_are_a_format_error(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "metadata.json").write_text(json.dumps({"config": {"annotation_span_categories": 5}}))
    (tmp_path / "files" / "a.jsonl").write_text(json.dumps({"dataset": "d", "split": "s", "setup_id": "x",
                                                            "example_idx": 0, "annotations": []}) + "\n")
    with pytest.raises(FormatError, match="annotation_span_categories"):
        list(read_annotations(tmp_path, "factgenie"))


def test_label_studio_textarea_of_numbers_is_a_format_error(tmp_path):
    task = {"data": {"item_id": "1", "text": "Some output."}, "annotations": [{"result": [
        {"id": "r1", "type": "labels", "value": {"start": 0, "end": 4, "text": "Some", "labels": ["Error"]}},
        {"id": "r1", "type": "textarea", "value": {"text": [1]}},
    ]}]}
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([task]))
    with pytest.raises(FormatError, match="textarea's 'text' must be a string"):
        list(read_annotations(path, "labelstudio"))


# --- deeply nested JSON inside an input value -------------------------------------------------------------

def test_an_input_holding_3000_deep_json_text_imports_and_shows_as_text_on_every_page(tmp_path, client, make_user):
    deep = '{"a": ' + "[" * 3000 + "]" * 3000 + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps({"id": "1", "inputs": {"Data": deep, "Table": '{"x": {"y": 1}}'},
                                "outputs": {"Text": "Fine."}}) + "\n")
    _import(path, "deep")
    item = Item.objects.get()
    researcher = make_user("rita", role="researcher")
    client.force_login(researcher)
    page = client.get(f"/datasets/{item.dataset_id}/items/{item.pk}/")
    assert page.status_code == 200
    assert b"[[[[[[[[" in page.content  # the value as text, escaped, not a structure
    ann = make_user("ann")
    campaign = make.campaign("deep", item.dataset, [], [ann])
    assignment = make.assignment(campaign, ann, item, 1)
    client.force_login(ann)
    screen = client.get(f"/work/{assignment.pk}/")
    assert screen.status_code == 200 and b"[[[[[[[[" in screen.content
