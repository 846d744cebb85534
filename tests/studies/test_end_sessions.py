"""Ending a study's open sessions when revoking its link: a choice of its own beside stopping resumes. Each open
session stops at its next request, on an end page that says the researchers closed the study and gives the code
the work so far earns; the participants page and API mark those participants `ended`."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Assignment, Campaign, SpanJudgment
from annotator.selectors.spans import item_errors
from annotator.services.campaigns import campaign_open
from quality.services import CheckSettings
from studies.models import Participant
from studies.participants import LinkSettings
from studies.screening import participant_flag_reasons
from studies.setup import CampaignSpec, campaign_create
from tests.annotator.study_links import (
    FAIL,
    PASS,
    Study,
    finish_all,
    join_by_link,
    link_study,
    signed_in_participant,
)
from tests.studies.box_study import box_scores, judge_item

pytestmark = pytest.mark.django_db

ALICE = "?PROLIFIC_PID=alice0000001&STUDY_ID=s1&SESSION_ID=sa"
BOB = "?PROLIFIC_PID=bob000000002&STUDY_ID=s1&SESSION_ID=sb"


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"


def _api(user, method: str, path: str, body: dict | None = None):
    kwargs = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}
    if body is not None:
        kwargs.update(data=json.dumps(body), content_type="application/json")
    return getattr(Client(), method)(f"/api{path}", **kwargs)


def _two_participants():
    """A study where Alice has finished (and holds her code) and Bob is halfway, his item screen open."""
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    alice, bob = Client(), Client()
    join_by_link(alice, study, ALICE)
    join_by_link(bob, study, BOB)
    finish_all(signed_in_participant(alice))
    assert alice.get(f"/campaigns/{study.campaign.pk}/end/").status_code == 200
    mine = Assignment.objects.filter(annotator=signed_in_participant(bob).user).order_by("order").first()
    assert bob.get(f"/work/{mine.pk}/").status_code == 200
    return study, alice, bob, mine


def _verdict_post(client: Client, assignment: Assignment):
    assignment = Assignment.objects.select_related("campaign", "item").get(pk=assignment.pk)
    rows, _ = item_errors(assignment)
    return client.post(f"/work/{assignment.pk}/errors/{rows[0].handle}/", {"field": "span_verdict", "value": "error"},
                       HTTP_HX_REQUEST="true")


def test_ending_sessions_stops_an_open_session_at_its_next_request(researcher):
    study, alice, bob, item = _two_participants()
    pk = study.campaign.pk
    answer = _api(researcher, "post", f"/campaigns/{pk}/link/revoke?end_sessions=true")
    assert answer.status_code == 200
    assert {k: answer.json()[k] for k in ("enabled", "resumes_stopped", "sessions_ended")} == {
        "enabled": False, "resumes_stopped": False, "sessions_ended": True}

    # Bob's next key is not stored: the screen is sent to the end page instead.
    typed = _verdict_post(bob, item)
    assert typed.status_code == 200 and typed["HX-Redirect"] == f"/campaigns/{pk}/end/"
    assert not SpanJudgment.objects.filter(assignment=item).exists()
    # Any other page of the study goes there too, and the end page says why and gives the code earned so far.
    for path in (f"/campaigns/{pk}/", f"/work/{item.pk}/", f"/campaigns/{pk}/guidelines/"):
        response = bob.get(path)
        assert response.status_code == 302 and response["Location"] == f"/campaigns/{pk}/end/", path
    end = bob.get(f"/campaigns/{pk}/end/").content.decode()
    assert "The researchers have closed this study" in end and 'id="study-closed"' in end
    assert f'<strong id="completion-code">{PASS}</strong>' in end and 'data-outcome="pass"' in end
    # Alice had finished: her code and her end page are as they were.
    assert "All done" in alice.get(f"/campaigns/{pk}/end/").content.decode()

    rows = {r["prolific_pid"]: r for r in _api(researcher, "get", f"/campaigns/{pk}/participants").json()}
    assert (rows["bob000000002"]["ended"], rows["bob000000002"]["outcome"], rows["bob000000002"]["code_given"]) == (
        True, "pass", PASS)
    assert (rows["alice0000001"]["ended"], rows["alice0000001"]["code_given"]) == (False, PASS)
    csv = _api(researcher, "get", f"/campaigns/{pk}/participants?format=csv").content.decode().splitlines()
    assert "ended" in csv[0].split(",") and any(line.startswith(f'{rows["bob000000002"]["id"]},') and ",True," in line
                                                for line in csv[1:])
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{pk}/participants/").content.decode()
    bob_row = page.split(f'id="participant-{rows["bob000000002"]["id"]}"')[1].split("</tr>")[0]
    alice_row = page.split(f'id="participant-{rows["alice0000001"]["id"]}"')[1].split("</tr>")[0]
    assert 'data-ended="true"' in bob_row and 'data-ended="true"' not in alice_row
    assert 'id="sessions-ended"' in page and 'id="end-sessions"' not in page


def test_an_ended_participant_whose_checks_fail_gets_the_fail_code(researcher):
    study, _, bob, item = _two_participants()
    participant = signed_in_participant(bob)
    _api(researcher, "post", f"/campaigns/{study.campaign.pk}/participants/{participant.pk}/flag",
         {"flagged": True, "note": "rushed"})
    _api(researcher, "post", f"/campaigns/{study.campaign.pk}/link/revoke?end_sessions=true")
    end = bob.get(f"/campaigns/{study.campaign.pk}/end/").content.decode()
    assert f'<strong id="completion-code">{FAIL}</strong>' in end and 'data-outcome="fail"' in end


def test_stopping_resumes_alone_keeps_open_sessions_working(researcher):
    study, _, bob, item = _two_participants()
    answer = _api(researcher, "post", f"/campaigns/{study.campaign.pk}/link/revoke?stop_resumes=true")
    assert answer.json()["sessions_ended"] is False and answer.json()["resumes_stopped"] is True
    assert _verdict_post(bob, item).status_code == 200
    assert SpanJudgment.objects.filter(assignment=item, span_verdict="error").exists()
    assert not Participant.objects.filter(ended_at__isnull=False).exists()


def test_the_checkbox_beside_revoke_ends_sessions_and_a_returning_participant_lands_on_the_end_page(researcher):
    study, _, bob, item = _two_participants()
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{study.campaign.pk}/participants/").content.decode()
    assert 'name="end_sessions" value="true"' in page
    client.post(f"/campaigns/{study.campaign.pk}/link/revoke/", {"end_sessions": "true"})
    assert signed_in_participant(bob).ended_at is not None
    # Resumes were not stopped: Bob may come back from another browser, and is shown the end page at once.
    again = Client()
    token = study.campaign.study_link.token
    assert again.get(f"/join/{token}/{BOB}").status_code == 200
    entered = again.post(f"/join/{token}/", {"PROLIFIC_PID": "bob000000002", "STUDY_ID": "s1", "SESSION_ID": "sb"})
    assert entered.status_code == 302
    assert again.get(entered["Location"])["Location"] == f"/campaigns/{study.campaign.pk}/end/"


def test_ending_sessions_composes_with_every_study_setting(researcher, make_user):
    """Decoys, planted copies, the control arm, a time limit and a registered annotator beside the link: ending
    the sessions sends each participant to the end page with the code their checks earn (as the end page after
    the last item would give it), and leaves the registered annotator at work."""
    registered = make_user("end-registered")
    boxes = box_scores(10, "ending")
    campaign = campaign_create(CampaignSpec(
        name="ending", dataset=boxes.data, runs=boxes.runs, annotators=[registered], aspects=["accuracy"],
        annotators_per_item=2, seed=3, control_arm=0.5, checks=CheckSettings(decoys=0.3, planted=0.3),
        link=LinkSettings(items_per_participant=3, pass_code=PASS, fail_code=FAIL, time_limit_minutes=60)))
    if campaign.status != Campaign.Status.OPEN:
        campaign_open(campaign=campaign, user=researcher)
    study = Campaign.objects.get(pk=campaign.pk)
    clients = {}
    for pid, stamp in (("careful00001", False), ("stamper00002", True)):
        client = Client()
        join_by_link(client, Study(campaign=study, items=[]), f"?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x{pid}")
        participant = signed_in_participant(client)
        held = list(Assignment.objects.filter(campaign=study, annotator=participant.user).order_by("order"))
        for assignment in held[:len(held) // 2]:
            judge_item(assignment, stamp=stamp, ms=300 if stamp else 4000)
        clients[pid] = (client, participant, held[len(held) // 2])
    earned = {pid: FAIL if participant_flag_reasons(study, p.user) else PASS for pid, (_, p, _) in clients.items()}
    # The stamper pressed Error on every card in 300 ms (the rubber-stamp rule), the careful judge followed the truth.
    assert earned == {"careful00001": PASS, "stamper00002": FAIL}

    assert _api(researcher, "post", f"/campaigns/{study.pk}/link/revoke?end_sessions=true").status_code == 200
    for pid, (client, _, open_item) in clients.items():
        assert client.get(f"/work/{open_item.pk}/")["Location"] == f"/campaigns/{study.pk}/end/"
        end = client.get(f"/campaigns/{study.pk}/end/").content.decode()
        assert "The researchers have closed this study" in end
        assert f'<strong id="completion-code">{earned[pid]}</strong>' in end, pid
    rows = {r["prolific_pid"]: r for r in _api(researcher, "get", f"/campaigns/{study.pk}/participants").json()}
    assert {pid: (r["ended"], r["code_given"]) for pid, r in rows.items()} == {
        pid: (True, code) for pid, code in earned.items()}
    # The registered annotator is nobody's participant: their item screen and saves go on.
    mine = Assignment.objects.filter(campaign=study, annotator=registered).exclude(phase="marking").first()
    staff = Client()
    staff.force_login(registered)
    assert staff.get(f"/work/{mine.pk}/").status_code == 200
    assert _verdict_post(staff, mine).status_code == 200
