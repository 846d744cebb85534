"""Bad input through the pages and the API is refused with a 4xx naming the field, never a 500; exports are
safe to open in a spreadsheet and to download whatever the dataset is called."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Assignment, Campaign, SpanJudgment
from annotator.selectors.spans import span_handle
from corpus.models import ErrorSpan
from corpus.spreadsheet import csv_cell, download_filename
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db


def _api(user) -> tuple[Client, dict[str, str]]:
    return Client(raise_request_exception=False), {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}


def _post_json(client: Client, auth: dict, path: str, body: dict, method: str = "post"):
    return getattr(client, method)(f"/api{path}", data=json.dumps(body), content_type="application/json", **auth)


@pytest.fixture
def work(make_user):
    ann = make_user("nul-ann")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    return ann, built, assignment


# --- NUL characters -----------------------------------------------------------------------------------------


def test_nul_in_judgment_comment_from_the_page_is_422(client, work):
    ann, built, assignment = work
    client.force_login(ann)
    span = built.spans["b1_family"]
    url = f"/work/{assignment.pk}/errors/{span_handle(assignment.pk, span.pk)}/"
    response = client.post(url, {"field": "comment", "value": "bad\x00text"})
    assert response.status_code == 422
    assert "value: contains a NUL" in response.content.decode()  # the form's own field, before the view reads it
    assert not SpanJudgment.objects.filter(span=span).exists()


def test_nul_in_judgment_comment_from_the_api_is_422(work):
    ann, built, assignment = work
    client, auth = _api(ann)
    span = built.spans["b1_family"]
    response = _post_json(client, auth, f"/assignments/{assignment.pk}/judgments",
                          {"span_id": span_handle(assignment.pk, span.pk), "comment": "a\x00b"})
    assert response.status_code == 422
    assert "comment" in response.json()["detail"]
    assert not SpanJudgment.objects.filter(span=span).exists()


def test_nul_in_added_span_explanation_from_the_api_is_422(work):
    ann, _, assignment = work
    client, auth = _api(ann)
    before = ErrorSpan.objects.count()
    response = _post_json(client, auth, f"/assignments/{assignment.pk}/added-spans",
                          {"start": 0, "end": 4, "note": "missed\x00", "category": "NUMBER"})
    assert response.status_code == 422
    assert "note" in response.json()["detail"]
    response = _post_json(client, auth, f"/assignments/{assignment.pk}/added-spans",
                          {"start": 0, "end": 4, "note": "fine", "category": "c\x00"})
    assert response.status_code == 422 and "category" in response.json()["detail"]
    assert ErrorSpan.objects.count() == before


def test_nul_in_added_span_note_from_the_page_is_refused(client, work):
    ann, _, assignment = work
    client.force_login(ann)
    before = ErrorSpan.objects.count()
    response = client.post(f"/work/{assignment.pk}/added/", {"start": 0, "end": 4, "note": "x\x00y"})
    assert 400 <= response.status_code < 500
    assert ErrorSpan.objects.count() == before


# --- names longer than their columns ----------------------------------------------------------------------


def _campaign_body(built, **overrides) -> dict:
    body = {"name": "fine", "dataset_id": built.dataset.pk, "run_ids": [r.pk for r in built.runs],
            "annotators": ["nul-ann"], "aspects": ["accuracy"]}
    return {**body, **overrides}


def test_too_long_campaign_name_from_the_api_is_422(work, make_user):
    _, built, _ = work
    client, auth = _api(make_user("res-long", role="researcher"))
    before = Campaign.objects.count()
    response = _post_json(client, auth, "/campaigns", _campaign_body(built, name="n" * 201))
    assert response.status_code == 422 and "name" in json.dumps(response.json())
    response = _post_json(client, auth, "/campaigns", _campaign_body(built, name="nul\x00name"))
    assert response.status_code == 422 and "name" in json.dumps(response.json())
    response = _post_json(client, auth, "/campaigns", _campaign_body(built, aspects=["a" * 300]))
    assert response.status_code == 422 and "aspect" in json.dumps(response.json())
    response = _post_json(client, auth, "/campaigns", _campaign_body(built, seed=10**30))
    assert response.status_code == 422 and "seed" in json.dumps(response.json())
    assert Campaign.objects.count() == before


def test_too_long_campaign_name_from_the_form_is_refused(client, work, make_user):
    _, built, _ = work
    client.force_login(make_user("res-form", role="researcher"))
    before = Campaign.objects.count()
    response = client.post("/campaigns/new/", {
        "name": "n" * 201, "dataset": built.dataset.pk, "runs": [r.pk for r in built.runs],
        "aspects": ["accuracy"], "annotators": [built.campaign.assignments.first().annotator_id],
        "annotators_per_item": 1, "seed": 10**30, "guidelines": "g",
    })
    assert response.status_code in (200, 422)
    assert "at most 200 characters" in response.content.decode()
    assert Campaign.objects.count() == before


def test_too_long_added_span_category_from_the_api_is_422(work):
    ann, _, assignment = work
    client, auth = _api(ann)
    response = _post_json(client, auth, f"/assignments/{assignment.pk}/added-spans",
                          {"start": 0, "end": 4, "category": "c" * 101, "aspect": "accuracy"})
    assert response.status_code == 422 and "category" in response.json()["detail"]
    response = _post_json(client, auth, f"/assignments/{assignment.pk}/added-spans",
                          {"start": 0, "end": 4, "aspect": "a" * 300})
    assert response.status_code == 422 and "aspect" in response.json()["detail"]


# --- paging parameters ------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", ["-5", "1e20", "100000000000000000000", "abc"])
def test_bad_offset_on_list_items_is_422(work, make_user, offset):
    _, built, _ = work
    client, auth = _api(make_user("res-off", role="researcher"))
    response = client.get(f"/api/datasets/{built.dataset.pk}/items?offset={offset}", **auth)
    assert response.status_code == 422, response.content
    assert "offset" in response.content.decode()


@pytest.mark.parametrize("limit", ["-1", "0", "1e20"])
def test_bad_limit_on_list_items_is_422(work, make_user, limit):
    _, built, _ = work
    client, auth = _api(make_user("res-lim", role="researcher"))
    response = client.get(f"/api/datasets/{built.dataset.pk}/items?limit={limit}", **auth)
    assert response.status_code == 422 and "limit" in response.content.decode()


def test_good_offset_still_pages(work, make_user):
    _, built, _ = work
    client, auth = _api(make_user("res-ok", role="researcher"))
    response = client.get(f"/api/datasets/{built.dataset.pk}/items?offset=1&limit=5", **auth)
    assert response.status_code == 200
    assert [i["external_id"] for i in response.json()["items"]] == ["i2"]


# --- exports ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell,expected", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+2", "'+1+2"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("plain", "plain"), ("", ""),
    (-3, -3), (2.5, 2.5),
])
def test_csv_cell_neutralises_formulas(cell, expected):
    assert csv_cell(cell) == expected


def test_csv_export_neutralises_formula_comments(client, work, make_user):
    ann, built, assignment = work
    span = built.spans["b1_family"]
    client.force_login(ann)
    url = f"/work/{assignment.pk}/errors/{span_handle(assignment.pk, span.pk)}/"
    client.post(url, {"field": "comment", "value": "=cmd|' /C calc'!A0"})
    assert SpanJudgment.objects.get(span=span).comment == "=cmd|' /C calc'!A0"  # stored as written
    client.force_login(make_user("res-csv", role="researcher"))
    response = client.get(f"/datasets/{built.dataset.pk}/export.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    comments = [r["comment"] for r in rows if r["comment"]]
    assert comments == ["'=cmd|' /C calc'!A0"]
    assert all(not v.startswith(("=", "+", "@")) for r in rows for v in r.values())


def test_dataset_name_with_cr_lf_gives_a_safe_download(client, work, make_user):
    _, built, _ = work
    built.dataset.name = 'evil\r\nSet-Cookie: x=1; "q"'
    built.dataset.save(update_fields=["name"])
    client.force_login(make_user("res-dl", role="researcher"))
    for fmt in ("csv", "jsonl"):
        response = client.get(f"/datasets/{built.dataset.pk}/export.{fmt}")
        assert response.status_code == 200
        header = response["Content-Disposition"]
        assert "\r" not in header and "\n" not in header and "Set-Cookie: x" not in header.replace("_", " ")
        assert header.startswith("attachment; filename=") and header.endswith(f'.{fmt}"')
        assert not response.has_header("Set-Cookie") or "x=1" not in response["Set-Cookie"]


def test_download_filename_cleans_control_and_path_characters():
    assert download_filename("a\r\nb/c\\d\x00e") == "a_b_c_d_e"
    assert download_filename("\r\n", fallback="dataset-3") == "dataset-3"
    assert download_filename("Résumé ünïcode") == "Résumé ünïcode"


# --- names given with an import (CLI, upload page, API) ----------------------------------------------------


@pytest.mark.parametrize("field,value,named", [
    ("dataset", "d" * 201, "--dataset"), ("dataset", "nul\x00name", "dataset: contains a NUL"),
    ("source", "s" * 201, "--source"),
    ("aspect", "a" * 201, "--aspect"),
])
def test_import_names_too_long_or_with_nul_are_422_from_the_api(make_user, field, value, named):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from corpus.models import Dataset

    client, auth = _api(make_user("res-imp", role="researcher"))
    good = json.dumps({"id": "g1", "inputs": {"Data": "x"}, "outputs": {"Text": "Out."}}) + "\n"
    data = {"dataset": "fine", "task": "data-to-text", "source": "gold", "aspect": "", field: value,
            "file": SimpleUploadedFile("ok.jsonl", good.encode())}
    response = client.post("/api/datasets/import", data=data, **auth)
    assert response.status_code == 422, response.content
    assert named in response.json()["detail"]
    assert "\x00" not in value or response.json()["field"] == field  # the form's rules name it as data
    assert not Dataset.objects.exists()


def test_import_name_too_long_from_the_cli_is_a_command_error(tmp_path):
    from django.core.management import CommandError, call_command

    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps({"id": "g1", "inputs": {"Data": "x"}, "outputs": {"Text": "Out."}}) + "\n")
    with pytest.raises(CommandError, match="--dataset.*longer than 200"):
        call_command("import_items", str(path), "--dataset", "d" * 300, "--task", "data-to-text")


@pytest.mark.parametrize("page", ["-5", "1e20", "100000000000000000000", "x"])
def test_bad_page_numbers_on_list_pages_are_not_500(client, work, make_user, page):
    _, built, _ = work
    client.force_login(make_user("res-page", role="researcher"))
    for path in (f"/datasets/{built.dataset.pk}/?page={page}", f"/?page={page}"):
        assert client.get(path).status_code == 200


@pytest.mark.parametrize("path", [
    "/work/99999999999999999999/", "/datasets/99999999999999999999/",
    "/api/assignments?campaign_id=99999999999999999999", "/api/datasets/99999999999999999999/items",
    "/analytics/datasets/1/?campaign=99999999999999999999",
])
def test_huge_ids_are_404_or_empty_not_500(make_user, path):
    client = Client(raise_request_exception=False)
    client.force_login(make_user("root-ids", role="admin"))
    response = client.get(path)
    assert response.status_code in (200, 404, 422), (path, response.status_code)
