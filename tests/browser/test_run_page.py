"""The run page follows the job: a run that pauses offers Resume at the next poll (every 2 s)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import EvaluatorRun
from jobs.models import JobStatus
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

POLL_SECONDS = 2  # hx-trigger="every 2s" in templates/evaluation/run_detail.html


def test_a_paused_run_shows_resume_within_one_poll(page, live_server, login, make_user):
    make_user("chief", role="admin")
    data = factories.dataset("poll data", items=[{"external_id": "1", "output": "A text."}])
    run = factories.run(data, "polled-run", status=JobStatus.RUNNING, total=10, done=3,
                        started_at=timezone.now() - timedelta(seconds=30))
    login("chief")
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.locator("#cancel-run").wait_for()
    assert page.locator("#resume-run").count() == 0

    EvaluatorRun.objects.filter(pk=run.pk).update(status=JobStatus.PAUSED, heartbeat_at=timezone.now(),
                                                  message="The Ollama server at http://x does not answer.")
    paused_at = time.monotonic()
    page.locator("#resume-run").wait_for(timeout=(POLL_SECONDS + 1.5) * 1000)
    assert time.monotonic() - paused_at <= POLL_SECONDS + 1.5
    assert "does not answer" in page.locator("#run-progress").inner_text()
    eta = page.locator("#run-progress dt", has_text="ETA").locator("xpath=following-sibling::dd").inner_text()
    assert eta == "—"


def test_a_finished_runs_bar_fills_the_width_of_its_card(page, live_server, login, make_user):
    """At 100% the bar spans the progress card: its track is as wide as the card, not a fixed few hundred px."""
    make_user("chief", role="admin")
    data = factories.dataset("full bar data", items=[{"external_id": "1", "output": "A text."}])
    run = factories.run(data, "full-run", status=JobStatus.DONE, total=10, done=10)
    login("chief")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    bar = page.locator("#run-progress progress.job-bar")
    assert bar.get_attribute("value") == "100"
    card = bar.evaluate("el => el.parentElement.clientWidth")
    width = bar.bounding_box()["width"]
    assert width >= 0.95 * card - 40, f"bar {width:.0f} px in a card {card} px wide"
