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
