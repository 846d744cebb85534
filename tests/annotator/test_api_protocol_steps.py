"""A script finishes an MQM item and an ESA^AI item through the API alone (no page request), refused where the
screen refuses; a participant's session, which has no token, reaches none of it."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from analytics.selectors.esa import campaign_esa
from analytics.selectors.mqm import campaign_ratings, score_rows
from annotator.models import Assignment
from corpus.models import ErrorSpan
from tests.annotator.study_links import join_by_link, link_study, signed_in_participant
from tests.esa_study import build_esa_study
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db


class Api:
    def __init__(self, user) -> None:
        self.client = Client()
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}

    def __call__(self, method: str, path: str, body: dict | None = None):
        kwargs = dict(self.auth)
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        answer = getattr(self.client, method)(f"/api{path}", **kwargs)
        assert "text/html" not in answer.get("Content-Type", ""), path  # never a page
        return answer


def _refused(answer, status: int, field) -> str:
    assert answer.status_code == status, answer.content
    body = answer.json()
    assert body["field"] == field, body
    return body["detail"]


def test_an_mqm_item_walked_to_finished_through_the_api(tmp_path, make_user):
    ann = make_user("mqm-script")
    study = build_mqm_study(tmp_path, [ann], name="MQM by API")
    api = Api(ann)
    first = study.assignments(ann)[0]
    opened = api("post", f"/assignments/{first.pk}/open", {})
    assert opened.status_code == 200 and opened.json()["item"]["output"] == first.item.output
    path = f"/assignments/{first.pk}/mqm-errors"
    error = {"start": 0, "end": 5, "category": "Accuracy/Mistranslation", "severity": "major"}
    assert "severity" in _refused(api("post", path, {**error, "severity": "huge"}), 422, "severity")
    assert "tree" in _refused(api("post", path, {**error, "category": "Made/Up"}), 422, "category")
    _refused(api("post", path, {**error, "end": 999}), 422, ["start", "end"])
    made = api("post", path, error)
    assert made.status_code == 201
    assert (made.json()["text"], made.json()["severity"]) == (first.item.output[:5], "major")
    extra = api("post", path, {**error, "start": 6, "end": 8, "severity": "minor", "category": "Fluency/Grammar"})
    assert api("delete", f"/mqm-errors/{extra.json()['id']}").status_code == 204
    undone = api("post", f"/assignments/{first.pk}/undo").json()
    assert undone["undone"] is True  # the deleted error is back
    assert ErrorSpan.objects.filter(annotation__item=first.item, category="Fluency/Grammar").count() == 1
    # an ESA step is not part of an MQM item's screen
    assert api("post", f"/assignments/{first.pk}/esa-spans",
               {"start": 0, "end": 5, "severity": "minor"}).status_code == 409
    assert api("get", f"/assignments/{first.pk}/esa").status_code == 404  # nor has it an ESA state
    done = api("post", f"/assignments/{first.pk}/finish", {})
    assert done.status_code == 200 and done.json()["status"] == Assignment.Status.DONE
    assert api("post", path, error).status_code == 409  # a finished item keeps what it was finished with
    (row,) = score_rows(campaign_ratings(study.campaign))
    assert (row["system"], row["score"], row["ratings"]) == (first.item.system, pytest.approx(5 + 1), 1)


def test_an_esa_ai_item_walked_to_finished_through_the_api(make_user):
    ann = make_user("esa-script")
    study = build_esa_study([ann], name="ESA by API", control_arm=0.0, per_item=1)
    api = Api(ann)
    item = study.items[("sysB", 1)]  # "dddd eeee ffff gggg": the machine marks dddd (Minor) and ffff (Major)
    a = Assignment.objects.get(campaign=study.campaign, annotator=ann, item=item)
    assert api("post", f"/assignments/{a.pk}/open", {}).status_code == 200
    state = api("get", f"/assignments/{a.pk}/esa").json()
    assert (state["arm"], state["prefilled"], state["spans_done"]) == ("ESA^AI", True, False)
    spans = {s["text"]: s for s in state["spans"]}
    assert {t: (s["severity"], s["prefilled"]) for t, s in spans.items()} == {
        "dddd": ("minor", True), "ffff": ("major", True)}
    assert "done" in _refused(api("put", f"/assignments/{a.pk}/esa-score", {"score": 60}), 409, None)
    regraded = api("patch", f"/esa-spans/{spans['dddd']['id']}", {"severity": "major"}).json()
    assert (regraded["severity"], regraded["prefilled"]) == ("major", True)
    _refused(api("patch", f"/esa-spans/{spans['ffff']['id']}", {"start": 10}), 400, ["start", "end"])
    resized = api("patch", f"/esa-spans/{spans['ffff']['id']}", {"start": 10, "end": 19}).json()
    assert resized["text"] == "ffff gggg"
    _refused(api("post", f"/assignments/{a.pk}/esa-spans", {"start": 5, "end": 9, "severity": "big"}), 422,
             "severity")
    added = api("post", f"/assignments/{a.pk}/esa-spans", {"start": 5, "end": 9, "severity": "minor", "ms": 900})
    assert added.status_code == 201 and added.json()["text"] == "eeee"
    missing = api("post", f"/assignments/{a.pk}/esa-missing", {"severity": "minor"})
    assert missing.status_code == 201 and missing.json()["missing"] is True and missing.json()["start"] is None
    assert api("post", f"/assignments/{a.pk}/esa-missing", {"severity": "major"}).status_code == 409
    assert api("delete", f"/esa-spans/{added.json()['id']}").status_code == 204
    assert api("post", f"/assignments/{a.pk}/undo").json()["undone"] is True  # eeee is back
    assert api("post", f"/assignments/{a.pk}/finish", {}).status_code == 422  # no score yet
    done = api("post", f"/assignments/{a.pk}/esa-done", {"ms": 4000}).json()
    assert done["spans_done"] is True and done["score"] is None
    _refused(api("post", f"/assignments/{a.pk}/esa-spans", {"start": 0, "end": 4, "severity": "minor"}), 422,
             None)  # the spans are fixed now, as on the screen
    assert api("post", f"/assignments/{a.pk}/esa-done", {}).status_code == 409
    assert "score" in _refused(api("put", f"/assignments/{a.pk}/esa-score", {"score": 150}), 422, "score")
    scored = api("put", f"/assignments/{a.pk}/esa-score", {"score": 72}).json()
    assert scored["score"] == 72
    assert sorted((s["text"], s["severity"]) for s in scored["spans"]) == [
        ("", "minor"), ("dddd", "major"), ("eeee", "minor"), ("ffff gggg", "major")]
    finished = api("post", f"/assignments/{a.pk}/finish", {})
    assert finished.status_code == 200 and finished.json()["status"] == Assignment.Status.DONE
    assert api("put", f"/assignments/{a.pk}/esa-score", {"score": 10}).status_code == 409
    figures = campaign_esa(study.campaign, n_resamples=10)
    assert figures["ratings"] == 1 and figures["systems"][0]["score"] == 72
    assert figures["prefill"] | {"major_from": 0} == {"outputs": 1, "prefilled": 2, "kept": 0, "deleted": 0,
                                                      "resized": 1, "regraded": 1, "added": 2, "major_from": 0}


def test_a_participants_session_reaches_no_api_step(client):
    study = link_study(name="Link API")
    join_by_link(client, study)
    participant = signed_in_participant(client)
    mine = Assignment.objects.filter(annotator=participant.user).first()
    for method, path, body in (
        ("post", f"/api/assignments/{mine.pk}/open", None),
        ("post", f"/api/assignments/{mine.pk}/mqm-errors",
         {"start": 0, "end": 3, "category": "Other", "severity": "minor"}),
        ("post", f"/api/assignments/{mine.pk}/esa-spans", {"start": 0, "end": 3, "severity": "minor"}),
        ("post", f"/api/assignments/{mine.pk}/esa-done", {}),
        ("put", f"/api/assignments/{mine.pk}/esa-score", {"score": 50}),
    ):
        answer = getattr(client, method)(path, data=json.dumps(body or {}), content_type="application/json")
        assert answer.status_code == 404, path  # the participants' allow-list is the screen's marked actions
    assert not ErrorSpan.objects.filter(annotation__source__added__annotator=participant.user).exists()
