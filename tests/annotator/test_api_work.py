"""A script does through the API what the annotation screen does: judge, undo, add spans, finish, campaigns."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Assignment, ControlVerdict, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import judged_span_by_handle, span_handle
from corpus.models import ErrorSpan
from tests.factories import OUTPUT_1, build_campaign

pytestmark = pytest.mark.django_db


class Api:
    def __init__(self, user) -> None:
        self.client = Client()
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}

    def __call__(self, method: str, path: str, body: dict | None = None):
        kwargs = dict(self.auth)
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        return getattr(self.client, method)(f"/api{path}", **kwargs)


def test_api_judges_undoes_adds_and_finishes_like_the_screen(make_user):
    ann = make_user("scripted")
    built = build_campaign([ann], per_item=1)
    api = Api(ann)
    listed = api("get", "/assignments").json()["items"]
    assert [a["order"] for a in listed] == [1, 2]
    item1 = Assignment.objects.get(annotator=ann, item=built.items[0])
    detail = api("get", f"/assignments/{item1.pk}").json()
    assert detail["item"]["output"] == OUTPUT_1
    assert [e["number"] for e in detail["errors"]] == [1, 2, 3]
    assert (detail["n_complete"], detail["n_total"]) == (0, 3)
    missing = next(e for e in detail["errors"] if e["start"] is None)
    assert missing["match"] == "none" and missing["text"] == "serves French food"
    assert not any(e["ambiguous"] for e in detail["errors"])
    flagged, _ = judged_span_by_handle(item1, detail["errors"][0]["span_id"])
    flagged.ambiguous = True
    flagged.save(update_fields=["ambiguous"])
    again = api("get", f"/assignments/{item1.pk}").json()
    assert [e["ambiguous"] for e in again["errors"]] == [True, False, False]

    for error in detail["errors"]:
        r = api("post", f"/assignments/{item1.pk}/judgments",
                {"span_id": error["span_id"], "span_verdict": "error", "explanation_verdict": "correct"})
        assert r.status_code == 200 and r.json()["complete"] is True
    first = detail["errors"][0]["span_id"]
    r = api("patch", f"/assignments/{item1.pk}/judgments/{first}",
            {"repeated": True, "corrected_severity": 1, "comment": "via api"})
    assert r.json()["flags"] == ["repeated"] and r.json()["corrected_severity"] == 1
    r = api("patch", f"/assignments/{item1.pk}/judgments/{first}", {"corrected_severity": None})
    assert r.json()["corrected_severity"] is None
    assert api("patch", f"/assignments/{item1.pk}/judgments/{first}", {"span_verdict": "nope"}).status_code == 422

    undone = api("post", f"/assignments/{item1.pk}/undo").json()
    assert undone["undone"] is True and undone["field"] == "corrected_severity"
    assert undone["judgment"]["corrected_severity"] == 1  # back to the value before the clearing

    r = api("post", f"/assignments/{item1.pk}/added-spans", {"start": 29, "end": 40, "severity": 3})
    assert r.status_code == 201
    added = r.json()
    assert (added["text"], added["aspect"], added["severity"]) == ("coffee shop", "accuracy", 3)
    assert api("post", f"/assignments/{item1.pk}/added-spans", {"start": 80, "end": 99}).status_code == 422
    # The category comes from the campaign's label set (data-to-text: the RotoWire categories).
    refused = api("patch", f"/added-spans/{added['id']}", {"category": "venue"})
    assert refused.status_code == 422 and "NAME, NUMBER, WORD" in refused.json()["detail"]
    r = api("patch", f"/added-spans/{added['id']}", {"note": "kind of venue", "category": "WORD"})
    assert (r.json()["note"], r.json()["category"]) == ("kind of venue", "WORD")
    extra = api("post", f"/assignments/{item1.pk}/added-spans", {"start": 0, "end": 3}).json()
    assert api("delete", f"/added-spans/{extra['id']}").status_code == 204
    # Undo brings the deleted error back, redo deletes it again.
    undone = api("post", f"/assignments/{item1.pk}/undo").json()
    assert (undone["undone"], undone["field"]) == (True, "added_span")
    assert ErrorSpan.objects.filter(annotation__kind="human", text="The").count() == 1
    assert api("post", f"/assignments/{item1.pk}/redo").json()["undone"] is True
    assert list(ErrorSpan.objects.filter(annotation__kind="human").values_list("text", flat=True)) == ["coffee shop"]

    r = api("post", f"/assignments/{item1.pk}/finish", {"seconds": 30})
    assert r.status_code == 200 and r.json()["status"] == "done" and r.json()["seconds_spent"] == 30
    item2 = Assignment.objects.get(annotator=ann, item=built.items[1])
    assert api("post", f"/assignments/{item2.pk}/finish", {}).status_code == 422

    judgments = SpanJudgment.objects.filter(annotator=ann)
    assert judgments.count() == 3 and all(j.is_complete() for j in judgments)
    assert JudgmentEvent.objects.filter(user=ann, field="corrected_severity").count() == 3  # set, clear, undo


def test_researcher_creates_a_campaign_with_controls_and_reads_accuracy(make_user, researcher):
    ann1, ann2 = make_user("c1"), make_user("c2")
    built = build_campaign([ann1], per_item=1, name="seed data")
    api = Api(researcher)
    s = built.spans
    body = {
        "name": "API campaign", "dataset_id": built.dataset.pk, "run_ids": [r.pk for r in built.runs],
        "annotators": ["c1", "c2"], "aspects": ["accuracy"], "annotators_per_item": 1, "seed": 5,
        "control_item_ids": [built.items[0].pk],
        "control_verdicts": [
            {"span_id": s["a1_family"].pk, "span_verdict": "error", "explanation_verdict": "correct"},
            {"span_id": s["b1_family"].pk, "span_verdict": "error", "explanation_verdict": "incomplete"},
            {"span_id": s["a1_missing"].pk, "span_verdict": "hallucination"},
        ],
    }
    r = api("post", "/campaigns", body)
    assert r.status_code == 201, r.content
    out = r.json()
    assert sorted(out["labels"]) == ["Evaluator A", "Evaluator B"]
    assert sorted(out["labels"].values()) == sorted(r.pk for r in built.runs)
    # Item 1 is a control: both annotators get it; item 2 goes to one of them. 3 assignments.
    assert out["n_assignments"] == 3
    assert ControlVerdict.objects.filter(campaign_id=out["id"]).count() == 3
    assert api("post", "/campaigns", body).status_code == 409

    # c1 judges the three control spans: 2 of 3 span verdicts right, 1 of 2 explanation verdicts right.
    work = Api(ann1)
    control = Assignment.objects.get(campaign_id=out["id"], annotator=ann1, item=built.items[0])
    assert control.is_control
    for span, sv, ev in [("a1_family", "error", "correct"), ("b1_family", "not_error", "correct"),
                         ("a1_missing", "hallucination", "vague")]:
        work("post", f"/assignments/{control.pk}/judgments",
             {"span_id": span_handle(control.pk, s[span].pk), "span_verdict": sv, "explanation_verdict": ev})
    rows = {r["annotator"]: r for r in api("get", f"/campaigns/{out['id']}/control-accuracy").json()["items"]}
    assert (rows["c1"]["span_correct"], rows["c1"]["spans"], rows["c1"]["span_percent"]) == (2, 3, 66.7)
    assert (rows["c1"]["explanation_correct"], rows["c1"]["explanations"]) == (1, 2)
    assert rows["c2"]["spans"] == 0 and rows["c2"]["span_percent"] is None
    # The annotator-facing description of the control item does not say it is one.
    assert "control" not in work("get", f"/assignments/{control.pk}").content.decode().lower()
    assert Api(ann2)("get", f"/campaigns/{out['id']}/control-accuracy").status_code == 403


def test_create_campaign_refuses_runs_of_another_dataset(make_user, researcher):
    ann = make_user("c3")
    one = build_campaign([ann], name="one")
    other = build_campaign([ann], name="other")
    body = {"name": "mixed", "dataset_id": one.dataset.pk, "run_ids": [other.runs[0].pk], "annotators": ["c3"]}
    r = Api(researcher)("post", "/campaigns", body)
    assert r.status_code == 422 and "dataset" in r.json()["detail"]


def test_api_sets_the_auto_advance_setting_like_the_switch(make_user):
    ann = make_user("switcher")
    api = Api(ann)
    assert api("patch", "/me/settings", {"auto_advance": True}).json() == {"auto_advance": True}
    ann.refresh_from_db()
    assert ann.auto_advance is True
    assert api("patch", "/me/settings", {}).json() == {"auto_advance": True}
    assert api("patch", "/me/settings", {"auto_advance": "maybe"}).status_code == 422
