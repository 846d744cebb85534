"""The participant-link contracts: campaign fields of POST /api/campaigns, GET /api/campaigns/ID/link, revoking,
the participant list (JSON and CSV) with flags, and `manage.py participants`."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from accounts.services.tokens import token_create
from annotator.models import Assignment
from studies.models import Participant, StudyLink
from studies.participants import participant_finish, participant_join
from tests import factories as f
from tests.annotator.study_links import FAIL, PASS, finish_all, link_study

pytestmark = pytest.mark.django_db


def _api(user, method: str, path: str, body: dict | None = None):
    kwargs = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}
    if body is not None:
        kwargs.update(data=json.dumps(body), content_type="application/json")
    return getattr(Client(), method)(f"/api{path}", **kwargs)


@pytest.fixture
def catalogue():
    data = f.dataset("API study data", input_headers=["Data"])
    items = [f.item(data, f"i{n}", f"Text {n}.", position=n) for n in range(3)]
    judge = f.run(data, "api-study-run")
    for item in items:
        f.annotation(item, judge)
    return data, items, judge


def _body(catalogue, **changes) -> dict:
    data, _, judge = catalogue
    body = {
        "name": "Prolific study", "dataset_id": data.pk, "run_ids": [judge.pk], "annotators": [],
        "annotators_per_item": 2, "aspects": ["accuracy"],
        "link": {"enabled": True, "cap": 30, "expires": "2030-01-01T12:00:00Z"},
        "consent": "You agree to **judge** texts.", "items_per_participant": 2, "release_after_minutes": 20,
        "time_limit_minutes": 45, "pass_code": "C1A2B3", "fail_code": "SCR33N",
        "completion_url": "https://app.prolific.com/submissions/complete?cc={code}",
    }
    body.update(changes)
    return body


def test_post_campaigns_with_a_link_and_get_the_link(catalogue, researcher):
    _, items, _ = catalogue
    created = _api(researcher, "post", "/campaigns", _body(catalogue))
    assert created.status_code == 201, created.content
    campaign_id = created.json()["id"]
    assert created.json()["n_assignments"] == 0  # nobody registered: participants bring the assignments
    link = StudyLink.objects.get(campaign_id=campaign_id)
    assert (link.cap, link.expires.isoformat(), link.consent, link.items_per_participant, link.release_after_minutes,
            link.time_limit_minutes, link.pass_code, link.fail_code, link.completion_url, link.items) == (
        30, "2030-01-01T12:00:00+00:00", "You agree to **judge** texts.", 2, 20, 45, "C1A2B3", "SCR33N",
        "https://app.prolific.com/submissions/complete?cc={code}", [i.pk for i in items])
    got = _api(researcher, "get", f"/campaigns/{campaign_id}/link")
    assert got.status_code == 200
    assert got.json() == {"url": f"http://testserver/join/{link.token}/", "enabled": True, "cap": 30, "joined": 0,
                          "expires": "2030-01-01T12:00:00Z", "resumes_stopped": False,
                          "sessions_ended": False}
    participant_join(link=link, ids={"prolific_pid": "abc"})
    assert _api(researcher, "get", f"/campaigns/{campaign_id}/link").json()["joined"] == 1


def test_revoke_closes_the_link(catalogue, researcher):
    campaign_id = _api(researcher, "post", "/campaigns", _body(catalogue)).json()["id"]
    revoked = _api(researcher, "post", f"/campaigns/{campaign_id}/link/revoke")
    assert revoked.status_code == 200 and revoked.json()["enabled"] is False
    token = StudyLink.objects.get(campaign_id=campaign_id).token
    assert Client().get(f"/join/{token}/").status_code == 410


def test_the_link_fields_default_and_a_campaign_without_one_has_no_link(catalogue, researcher, make_user):
    body = _body(catalogue, link={"enabled": True}, consent="", time_limit_minutes=None, fail_code="",
                 completion_url=None)
    del body["release_after_minutes"]
    campaign_id = _api(researcher, "post", "/campaigns", body).json()["id"]
    link = StudyLink.objects.get(campaign_id=campaign_id)
    assert (link.cap, link.expires, link.release_after_minutes, link.time_limit_minutes, link.completion_url) == (
        None, None, 30, None, "")
    make_user("reg1"), make_user("reg2")
    plain = {k: v for k, v in _body(catalogue, name="Plain", annotators=["reg1", "reg2"]).items()
             if k in ("name", "dataset_id", "run_ids", "annotators", "annotators_per_item", "aspects")}
    plain_id = _api(researcher, "post", "/campaigns", plain).json()["id"]
    response = _api(researcher, "get", f"/campaigns/{plain_id}/link")
    assert response.status_code == 404 and "no participant link" in response.json()["detail"]


@pytest.mark.parametrize(("changes", "field"), [
    ({"completion_url": "http://app.prolific.com/?cc={code}"}, "completion_url"),
    ({"pass_code": ""}, "pass_code"),
    ({"items_per_participant": None}, "items_per_participant"),
    ({"items_per_participant": 0}, "items_per_participant"),
    ({"link": {"enabled": True, "cap": 0}}, "link.cap"),
    ({"link": {"enabled": True, "expires": "2030-01-01T12:00:00"}}, "link.expires"),
    ({"time_limit_minutes": 0}, "time_limit_minutes"),
    ({"link": None}, "consent"),  # study fields without a link
    ({"link": None, "consent": "", "annotators": []}, "annotator"),  # neither annotators nor a link
])
def test_bad_link_fields_are_a_422_naming_the_field(catalogue, researcher, changes, field):
    body = _body(catalogue, **changes)
    if changes.get("link", 1) is None and "consent" in changes:
        body.update(items_per_participant=None, release_after_minutes=30, time_limit_minutes=None, pass_code="",
                    fail_code="", completion_url=None)
    response = _api(researcher, "post", "/campaigns", body)
    assert response.status_code == 422, response.content
    assert field in response.json()["detail"]
    assert not StudyLink.objects.exists()


def _finished_study():
    study = link_study()
    link = study.campaign.study_link
    passed, _ = participant_join(link=link, ids={"prolific_pid": "PID1", "study_id": "ST", "session_id": "SE"})
    worker, _ = participant_join(link=link, ids={"worker_id": "W1", "mturk_assignment_id": "AS1", "hit_id": "H1"})
    finish_all(passed)
    # 40 s of active time on each of the two items, opened 90 s before the last signal (wall time)
    start = timezone.now() - timedelta(seconds=90)
    Assignment.objects.filter(annotator=passed.user).update(active_seconds=40, started_at=start,
                                                           last_active_at=start + timedelta(seconds=90))
    participant_finish(participant=passed)
    return study, passed, worker


def test_participants_as_json_and_csv_and_a_flag(researcher, annotator_user):
    study, passed, worker = _finished_study()
    pk = study.campaign.pk
    rows = _api(researcher, "get", f"/campaigns/{pk}/participants").json()
    assert [r["handle"] for r in rows] == [passed.user.username, worker.user.username]
    first = rows[0]
    assert set(first) == {"id", "handle", "prolific_pid", "study_id", "session_id", "worker_id", "assignment_id",
                          "hit_id", "started", "finished", "ended", "items", "items_done", "active_seconds",
                          "wall_seconds", "flagged", "flags", "outcome", "code_given"}
    assert (first["prolific_pid"], first["study_id"], first["session_id"], first["items"], first["items_done"],
            first["active_seconds"], first["wall_seconds"], first["flags"], first["outcome"], first["code_given"]) == (
        "PID1", "ST", "SE", 2, 2, 80, 180, [], "pass", PASS)
    assert first["finished"] is not None
    assert (rows[1]["worker_id"], rows[1]["assignment_id"], rows[1]["hit_id"], rows[1]["finished"],
            rows[1]["code_given"]) == ("W1", "AS1", "H1", None, "")

    flagged = _api(researcher, "post", f"/campaigns/{pk}/participants/{worker.pk}/flag",
                   {"flagged": True, "note": "=HYPERLINK(\"x\")"})
    assert flagged.status_code == 200 and flagged.json()["flags"] == ['flagged by a researcher: =HYPERLINK("x")']
    finish_all(Participant.objects.get(pk=worker.pk))
    assert participant_finish(participant=worker).code_given == FAIL

    response = _api(researcher, "get", f"/campaigns/{pk}/participants?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["handle"], r["worker_id"], r["items_done"], r["code_given"]) for r in table] == [
        (passed.user.username, "", "2", PASS), (worker.user.username, "W1", "2", FAIL)]
    assert table[1]["flags"] == 'flagged by a researcher: =HYPERLINK("x")'

    assert _api(researcher, "get", f"/campaigns/{pk}/participants?format=xml").status_code == 422
    assert _api(annotator_user, "get", f"/campaigns/{pk}/participants").status_code == 403
    assert _api(annotator_user, "get", f"/campaigns/{pk}/link").status_code == 403
    assert _api(annotator_user, "post", f"/campaigns/{pk}/link/revoke").status_code == 403
    assert _api(researcher, "post", f"/campaigns/{pk}/participants/999999/flag", {"flagged": True}).status_code == 404


def test_manage_py_participants_prints_the_same_rows(tmp_path):
    study, passed, worker = _finished_study()
    out = io.StringIO()
    call_command("participants", "--campaign", str(study.campaign.pk), stdout=out)
    table = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(r["handle"], r["prolific_pid"], r["items_done"], r["active_seconds"], r["wall_seconds"], r["code_given"])
            for r in table] == [(passed.user.username, "PID1", "2", "80", "180", PASS),
                                (worker.user.username, "", "0", "0", "0", "")]
    target = tmp_path / "p.json"
    call_command("participants", "--campaign", str(study.campaign.pk), "--format", "json", "-o", str(target))
    assert [r["worker_id"] for r in json.loads(target.read_text())] == ["", "W1"]
    with pytest.raises(CommandError, match="no participant link"):
        call_command("participants", "--campaign", "999999")
