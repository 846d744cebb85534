"""A Prolific participant's whole study in the browser: the link, consent, Start, every item judged by keyboard,
the pass code and the redirect back to Prolific; another browser resumes the same queue only with the
platform's session id, not with the PID alone."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from studies.models import Participant
from tests.annotator.study_links import PASS, link_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PID = "5f8e0c1d2b3a4f5e6d7c8b9a"
QUERY = f"?PROLIFIC_PID={PID}&STUDY_ID=6a7b8c&SESSION_ID=sess42"
PROLIFIC_DONE = "https://app.prolific.com/submissions/complete"


def _judge_focused_error_and_finish(page) -> None:
    """Error (1) and Correct (q) on the one machine error in focus, then f to finish the item."""
    card = page.locator("#errors .error-card.is-focus")
    card.wait_for()
    page.keyboard.press("1")
    card.locator("button.chip[aria-pressed='true']", has_text="Error").wait_for()
    page.keyboard.press("q")
    card.locator("button.chip[aria-pressed='true']", has_text="Correct").wait_for()
    page.locator("#finish-button:not([aria-disabled])").wait_for()
    page.keyboard.press("f")


def test_a_prolific_participant_runs_the_study_from_the_link(page, browser, live_server, settings):
    settings.RATELIMIT_USE_CACHE = "default"
    study = link_study(n_items=2, per_item=1, items_per_participant=2,
                       consent="## Consent\n\nYou agree that your **judgments** are used for research.")
    link = study.campaign.study_link
    arrived: list[str] = []

    def prolific(route) -> None:  # stands in for Prolific's completion page
        arrived.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Submission complete</h1>")

    page.context.route(f"{PROLIFIC_DONE}*", prolific)

    page.goto(f"{live_server.url}/join/{link.token}/{QUERY}")
    assert page.locator("#consent-text strong").inner_text() == "judgments"
    assert page.locator("h1").inner_text() == "Link study"
    page.locator("#start").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/campaigns/{study.campaign.pk}/")
    participant = Participant.objects.get(prolific_pid=PID)
    assert (participant.study_id, participant.session_id) == ("6a7b8c", "sess42")
    handle = participant.user.username
    assert page.locator("#queue").inner_text().count("0 of 2") == 1

    # The queue's Start link, by keyboard, opens the first item; judge it and finish it.
    page.locator("#resume").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/work/*/")
    first_item = page.url
    _judge_focused_error_and_finish(page)
    page.wait_for_url(lambda url: "/work/" in url and url != first_item)
    assert Assignment.objects.filter(annotator=participant.user, status="done").count() == 1

    # Another browser with the PID alone is told how to come back and opens nothing; with the platform's link
    # (PID and SESSION_ID) it continues the same queue: same handle, one item done, no new account.
    other = browser.new_context()
    try:
        elsewhere = other.new_page()
        elsewhere.goto(f"{live_server.url}/join/{link.token}/?PROLIFIC_PID={PID}")
        assert "open the study again from your platform" in elsewhere.locator("#join-closed").inner_text()
        elsewhere.goto(f"{live_server.url}/join/{link.token}/{QUERY}")
        elsewhere.locator("#continue").click()
        elsewhere.wait_for_url(f"{live_server.url}/campaigns/{study.campaign.pk}/")
        assert "1 of 2" in elsewhere.locator("#queue").inner_text()
        assert handle in elsewhere.locator("header").inner_text()
    finally:
        other.close()
    assert Participant.objects.count() == 1

    # The last item: after f comes the end screen with the pass code, then the way back to Prolific.
    _judge_focused_error_and_finish(page)
    page.locator("#completion-code").wait_for()
    assert page.locator("#completion-code").inner_text() == PASS
    assert page.locator("#complete-link").get_attribute("href") == f"{PROLIFIC_DONE}?cc={PASS}"
    page.wait_for_url(f"{PROLIFIC_DONE}?cc={PASS}", timeout=15_000)
    assert arrived == [f"{PROLIFIC_DONE}?cc={PASS}"]
    participant.refresh_from_db()
    assert (participant.outcome, participant.code_given) == ("pass", PASS)
