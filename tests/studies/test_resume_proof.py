"""The impersonation probe: knowing a participant's platform id, the link, or being signed in elsewhere opens no
one's session; only this browser's signed cookie or the platform's session secret brings a participant back.
The join page's GET signs nobody in and writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.models import Assignment
from studies.models import Handout, Participant
from studies.participants import link_revoke
from tests.annotator.study_links import PASS, finish_all, join_by_link, link_study, signed_in_participant

pytestmark = pytest.mark.django_db

PID, SESSION = "VICTIM001", "victim-session-1"
WORKER, ASSIGNMENT = "AWORKER42", "3ASSIGNMENT7"


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"


def _url(study) -> str:
    return f"/join/{study.campaign.study_link.token}/"


def _signed_in_as(client) -> int | None:
    value = client.session.get("_auth_user_id")
    return int(value) if value else None


def _victims(study, *, finish: bool = True):
    """A Prolific and an MTurk participant who joined, each in a browser of their own; both finished."""
    prolific, mturk = Client(), Client()
    join_by_link(prolific, study, f"?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID={SESSION}")
    join_by_link(mturk, study, f"?workerId={WORKER}&assignmentId={ASSIGNMENT}&hitId=h1")
    victims = signed_in_participant(prolific), signed_in_participant(mturk)
    for victim in victims if finish else ():
        finish_all(victim)
    return victims


@pytest.mark.parametrize("query", [
    f"PROLIFIC_PID={PID}", f"PROLIFIC_PID={PID}&STUDY_ID=s1", f"PROLIFIC_PID={PID}&SESSION_ID=guessed",
    f"PROLIFIC_PID={PID}&SESSION_ID={ASSIGNMENT}", f"workerId={WORKER}", f"workerId={WORKER}&assignmentId=guessed",
    f"workerId={WORKER}&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE", f"workerId={WORKER}&SESSION_ID={SESSION}",
    f"PROLIFIC_PID={PID}&workerId={WORKER}&assignmentId={ASSIGNMENT}",
])
def test_a_platform_id_without_its_session_secret_opens_no_one(query):
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    _victims(study)
    attacker = Client()
    params = dict(pair.split("=") for pair in query.split("&"))
    page = attacker.get(_url(study) + "?" + query)
    posted = attacker.post(_url(study), params)
    for answer in (page, posted):
        assert answer.status_code == 403
        assert "open the study again from your platform" in answer.content.decode()
    assert _signed_in_as(attacker) is None
    assert attacker.get(f"/campaigns/{study.campaign.pk}/end/").status_code in (302, 404)
    assert PASS not in attacker.get(f"/campaigns/{study.campaign.pk}/end/", follow=True).content.decode()
    assert Participant.objects.count() == 2


def test_the_join_page_get_signs_nobody_in_and_writes_nothing():
    study = link_study(n_items=4, per_item=1, items_per_participant=2, release_after_minutes=1)
    _victims(study, finish=False)
    # Both idle for an hour and the pool is all theirs: the page counts their work as free, and leaves it be.
    Participant.objects.update(last_seen_at=timezone.now() - timedelta(hours=1))
    with CaptureQueriesContext(connection) as queries:
        for query in ("", f"?PROLIFIC_PID={PID}&SESSION_ID={SESSION}", "?PROLIFIC_PID=newcomer&SESSION_ID=x"):
            assert Client().get(_url(study) + query).status_code == 200
    writes = [q["sql"] for q in queries if not q["sql"].lstrip().upper().startswith(("SELECT", "SAVEPOINT",
                                                                                      "RELEASE SAVEPOINT"))]
    assert writes == [] and not any("FOR UPDATE" in q["sql"] or "FOR NO KEY" in q["sql"] for q in queries)
    assert Assignment.objects.filter(is_training=False).count() == 4
    assert not Handout.objects.filter(released_at__isnull=False).exists()


def test_the_session_secret_or_the_cookie_brings_a_participant_back_by_post():
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    prolific, mturk = _victims(study)
    for params, who in (({"PROLIFIC_PID": PID, "STUDY_ID": "s1", "SESSION_ID": SESSION}, prolific),
                        ({"workerId": WORKER, "assignmentId": ASSIGNMENT}, mturk)):
        browser = Client()
        page = browser.get(_url(study), params)
        assert page.status_code == 200 and 'id="continue"' in page.content.decode()
        assert _signed_in_as(browser) is None  # GET signs nobody in
        assert browser.post(_url(study), params).status_code == 302
        assert _signed_in_as(browser) == who.user_id
        assert PASS in browser.get(f"/campaigns/{study.campaign.pk}/end/").content.decode()


def test_joining_and_coming_back_need_the_csrf_token():
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(_url(study), {"PROLIFIC_PID": "newcomer"}).status_code == 403
    assert not Participant.objects.exists()


def test_after_revoking_only_proof_comes_back_and_stopping_resumes_stops_even_that():
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    prolific, _ = _victims(study)
    link = study.campaign.study_link
    link_revoke(link=link)
    proof = {"PROLIFIC_PID": PID, "SESSION_ID": SESSION}
    thief = Client()
    assert thief.post(_url(study), {"PROLIFIC_PID": PID}).status_code == 403 and _signed_in_as(thief) is None
    assert Client().post(_url(study), {"PROLIFIC_PID": "newcomer"}).status_code == 410
    owner = Client()
    assert owner.post(_url(study), proof).status_code == 302 and _signed_in_as(owner) == prolific.user_id
    link_revoke(link=link, stop_resumes=True)
    late = Client()
    answer = late.post(_url(study), proof)
    assert answer.status_code == 410 and "closed this link for everyone" in answer.content.decode()
    assert _signed_in_as(late) is None


def test_a_signed_in_researcher_following_a_link_stays_signed_in(researcher):
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    _victims(study)
    rita = Client()
    rita.force_login(researcher)
    for query in (f"?PROLIFIC_PID={PID}", f"?PROLIFIC_PID={PID}&SESSION_ID={SESSION}", "?PROLIFIC_PID=newcomer"):
        page = rita.get(_url(study) + query)
        html = page.content.decode()
        assert page.status_code == 200 and "You are signed in as rita" in html and "private window" in html
        assert 'id="start"' not in html and 'id="continue"' not in html
        params = dict(pair.split("=") for pair in query.lstrip("?").split("&"))
        assert rita.post(_url(study), params).status_code == 409
        assert _signed_in_as(rita) == researcher.pk
    assert Participant.objects.count() == 2 and not Assignment.objects.filter(annotator=researcher).exists()


def test_two_browsers_starting_with_one_pid_at_once_need_the_same_session():
    """The second Start of a PID that joined a moment ago enters only with the same SESSION_ID."""
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    join_by_link(Client(), study, f"?PROLIFIC_PID={PID}&SESSION_ID={SESSION}")
    same, other = Client(), Client()
    assert same.post(_url(study), {"PROLIFIC_PID": PID, "SESSION_ID": SESSION}).status_code == 302
    assert other.post(_url(study), {"PROLIFIC_PID": PID, "SESSION_ID": "other"}).status_code == 403
    assert _signed_in_as(other) is None and Participant.objects.count() == 1
