"""The study link in the browser's terms: consent, Start, coming back, closed links, the end screen, what a
participant may reach (the access matrix), the join rate limit and the researcher's pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessLog
from django.test import Client
from django.utils import timezone

from annotator.models import Assignment
from studies.models import Participant, StudyLink
from studies.participants import link_revoke
from tests import factories as f
from tests.annotator.study_links import PASS, finish_all, finish_item, join_by_link, link_study, signed_in_participant

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID=5f8e0c1d2b3a&STUDY_ID=study1&SESSION_ID=sess1"


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    """Count joins in the per-test locmem cache (cleared before each test), not in the shared Redis one."""
    settings.RATELIMIT_USE_CACHE = "default"


def _url(study) -> str:
    return f"/join/{study.campaign.study_link.token}/"


_start = join_by_link
_participant = signed_in_participant


def test_the_link_shows_title_consent_and_start_with_the_platform_ids_kept():
    study = link_study(consent="**Please** read.\n\n<script>alert(1)</script><img src=x onerror=alert(2)>")
    html = Client().get(_url(study) + PROLIFIC).content.decode()
    assert "Link study" in html and "<strong>Please</strong> read." in html
    assert "<script>alert(1)" not in html and "onerror" not in html
    assert 'name="PROLIFIC_PID" value="5f8e0c1d2b3a"' in html and 'name="SESSION_ID" value="sess1"' in html
    assert 'id="start"' in html
    assert not Participant.objects.exists()  # opening the link makes nobody


def test_start_makes_a_signed_in_participant_who_lands_on_their_queue():
    study = link_study()
    client = Client()
    response = _start(client, study)
    assert response.status_code == 302 and response["Location"] == f"/campaigns/{study.campaign.pk}/"
    p = _participant(client)
    assert (p.prolific_pid, p.study_id, p.session_id) == ("5f8e0c1d2b3a", "study1", "sess1")
    queue = client.get(response["Location"]).content.decode()
    assert "0 of 2" in queue and 'id="resume"' in queue
    assert p.user.username in queue
    # Nothing but the platform's ids is kept: no sign-in log with the address and browser either.
    assert not AccessLog.objects.filter(username=p.user.username).exists()
    assert AccessLog.objects.count() == 0


def test_the_same_browser_and_the_same_session_come_back_to_the_same_participant():
    study = link_study()
    browser = Client()
    _start(browser, study)
    first = _participant(browser)
    browser.post("/accounts/logout/")  # signs out; the browser keeps its other cookies
    assert "_auth_user_id" not in browser.session
    # The signed cookie brings the browser back, without any id in the link: GET shows Continue, POST enters.
    back = browser.get(_url(study))
    assert back.status_code == 200 and 'id="continue"' in back.content.decode()
    assert "_auth_user_id" not in browser.session
    assert browser.post(_url(study)).status_code == 302 and _participant(browser).pk == first.pk
    # Another browser with the same PID and SESSION_ID (the platform's link again) resumes the same queue.
    other = Client()
    page = other.get(_url(study) + PROLIFIC)
    assert page.status_code == 200 and 'id="continue"' in page.content.decode()
    again = other.post(_url(study), {"PROLIFIC_PID": "5f8e0c1d2b3a", "STUDY_ID": "study1", "SESSION_ID": "sess1"})
    assert again.status_code == 302 and _participant(other).pk == first.pk
    assert Participant.objects.count() == 1 and Assignment.objects.count() == 2
    # A forged cookie is ignored: that browser sees the consent page.
    forged = Client()
    forged.cookies[f"sj_join_{study.campaign.study_link.pk}"] = str(first.pk)
    assert 'id="start"' in forged.get(_url(study)).content.decode()


def test_revoked_expired_and_full_links_show_clear_pages():
    study = link_study(n_items=1, per_item=1, items_per_participant=1)
    assert Client().get("/join/" + "0" * 32 + "/").status_code == 404
    _start(Client(), study)
    full = Client().get(_url(study) + "?PROLIFIC_PID=other")
    assert full.status_code == 409 and "This study is full" in full.content.decode()
    assert Client().post(_url(study), {"PROLIFIC_PID": "other"}).status_code == 409
    link = study.campaign.study_link
    link.expires = timezone.now() - timedelta(minutes=1)
    link.save()
    expired = Client().get(_url(study))
    assert expired.status_code == 410 and "This study has ended" in expired.content.decode()
    link_revoke(link=link)
    revoked = Client().get(_url(study))
    assert revoked.status_code == 410 and "no longer active" in revoked.content.decode()
    assert Participant.objects.count() == 1


def test_a_malformed_platform_id_is_a_400_naming_it():
    study = link_study()
    response = Client().get(_url(study) + "?PROLIFIC_PID=a%22b")
    assert response.status_code == 400 and "PROLIFIC_PID" in response.content.decode()


def test_the_end_screen_gives_the_code_only_when_the_items_are_done():
    study = link_study()
    client = Client()
    _start(client, study)
    p = _participant(client)
    end = f"/campaigns/{study.campaign.pk}/end/"
    early = client.get(end)
    assert early.status_code == 302 and early["Location"] == f"/campaigns/{study.campaign.pk}/"
    first = Assignment.objects.filter(annotator=p.user).order_by("order").first()
    finish_item(first)
    assert PASS not in client.get(end, follow=True).content.decode()
    finish_all(p)
    # The queue page sends a finished participant to the end screen.
    queue = client.get(f"/campaigns/{study.campaign.pk}/")
    assert queue.status_code == 302 and queue["Location"] == end
    html = client.get(end).content.decode()
    target = f"https://app.prolific.com/submissions/complete?cc={PASS}"
    assert f'id="completion-code">{PASS}<' in html
    assert f'href="{target}"' in html and f'content="5;url={target}"' in html


def test_a_time_limit_sends_work_pages_to_the_end_screen():
    study = link_study(time_limit_minutes=1)
    client = Client()
    _start(client, study)
    p = _participant(client)
    mine = Assignment.objects.filter(annotator=p.user).first()
    assert client.get(f"/work/{mine.pk}/").status_code == 200
    session = client.session
    session["sj_participant"] = {**session["sj_participant"], "deadline": timezone.now().isoformat()}
    session.save()
    Participant.objects.filter(pk=p.pk).update(deadline=timezone.now())
    response = client.get(f"/work/{mine.pk}/")
    assert response.status_code == 302 and response["Location"] == f"/campaigns/{study.campaign.pk}/end/"
    htmx = client.post(f"/work/{mine.pk}/finish/", HTTP_HX_REQUEST="true")
    assert htmx["HX-Redirect"] == f"/campaigns/{study.campaign.pk}/end/"


def test_joining_is_rate_limited_per_address(settings):
    settings.JOIN_RATE_LIMIT = "3/m"
    study = link_study(n_items=8, per_item=1, items_per_participant=1)
    first = Client()
    for n in range(3):
        browser = first if n == 0 else Client()
        assert browser.post(_url(study), {"PROLIFIC_PID": f"p{n}"}, REMOTE_ADDR="203.0.113.7").status_code == 302
    limited = Client().post(_url(study), {"PROLIFIC_PID": "p3"}, REMOTE_ADDR="203.0.113.7")
    assert limited.status_code == 429 and "Too many attempts" in limited.content.decode()
    assert Participant.objects.count() == 3
    # Another address is not held back, and a participant who joined before still comes back (their browser's
    # cookie is the proof).
    assert Client().post(_url(study), {"PROLIFIC_PID": "p4"}, REMOTE_ADDR="198.51.100.2").status_code == 302
    first.post("/accounts/logout/")
    assert first.post(_url(study), REMOTE_ADDR="203.0.113.7").status_code == 302


def test_the_campaign_form_creates_a_link(client, researcher):
    data = f.dataset("Form data", input_headers=["Data"])
    item = f.item(data, "i1", "Some text.")
    judge = f.run(data, "form-run")
    f.annotation(item, judge)
    client.force_login(researcher)
    form = {
        "name": "Recruited", "dataset": data.pk, "runs": [judge.pk], "aspects": ["accuracy"], "annotators_per_item": 2,
        "seed": 0, "guidelines": "Read.", "link_enabled": "on", "link_cap": 40, "consent": "I agree.",
        "items_per_participant": 5, "release_after_minutes": 45, "time_limit_minutes": 60, "pass_code": "C0DE",
        "fail_code": "", "completion_url": "http://example.org/?cc={code}",
    }
    refused = client.post("/campaigns/new/", form)
    assert refused.status_code == 200 and "completion_url: must be an https" in refused.content.decode()
    form["completion_url"] = "https://app.prolific.com/submissions/complete?cc={code}"
    response = client.post("/campaigns/new/", form)
    assert response.status_code == 302
    link = StudyLink.objects.get(campaign__name="Recruited")
    assert (link.cap, link.consent, link.items_per_participant, link.release_after_minutes, link.time_limit_minutes,
            link.pass_code, link.items) == (40, "I agree.", 5, 45, 60, "C0DE", [item.pk])
    overview = client.get(response["Location"]).content.decode()
    assert f"/campaigns/{link.campaign_id}/participants/" in overview


def test_the_researcher_page_lists_participants_flags_and_revokes(client, researcher):
    study = link_study()
    participant_client = Client()
    _start(participant_client, study)
    p = _participant(participant_client)
    client.force_login(researcher)
    pk = study.campaign.pk
    page = client.get(f"/campaigns/{pk}/participants/").content.decode()
    assert study.campaign.study_link.token in page and p.user.username in page and "PID 5f8e0c1d2b3a" in page
    client.post(f"/campaigns/{pk}/participants/{p.pk}/flag/", {"flagged": "true", "note": "=cmd|' /C calc'!A0"})
    p.refresh_from_db()
    assert p.flagged and p.flag_note == "=cmd|' /C calc'!A0"
    client.post(f"/campaigns/{pk}/link/revoke/")
    assert not StudyLink.objects.get(pk=study.campaign.study_link.pk).enabled
    assert Client().get(_url(study)).status_code == 410
    annotator = f.user("plain-annotator")
    client.force_login(annotator)
    assert client.get(f"/campaigns/{pk}/participants/").status_code == 403
    assert client.post(f"/campaigns/{pk}/participants/{p.pk}/flag/", {"flagged": "false"}).status_code == 403


def test_a_participant_whose_items_went_back_meanwhile_is_told_when_nothing_is_left():
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    client = Client()
    _start(client, study)
    p = _participant(client)
    # An hour idle; a newcomer's arrival sends both untouched items back, and the newcomer takes them.
    Participant.objects.filter(pk=p.pk).update(last_seen_at=timezone.now() - timedelta(hours=1))
    _start(Client(), study, "?PROLIFIC_PID=newcomer")
    assert not Assignment.objects.filter(annotator=p.user).exists()
    queue = client.get(f"/campaigns/{study.campaign.pk}/")
    assert queue.status_code == 409 and "This study is full" in queue.content.decode()
    # Once the newcomer leaves too, the first participant's next visit hands them items again.
    newcomer = Participant.objects.get(prolific_pid="newcomer")
    Participant.objects.filter(pk=newcomer.pk).update(last_seen_at=timezone.now() - timedelta(hours=1))
    again = client.get(f"/campaigns/{study.campaign.pk}/")
    assert again.status_code == 200 and "0 of 2" in again.content.decode()
