"""An admin launches a metric comparison in the browser, watches it finish (htmx polling) and reads the grid."""

from __future__ import annotations

import re

import pytest

from comparison.models import ComparisonJob
from corpus.services.importing import items_import
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.django_db(transaction=True)


def test_launch_follow_and_read_a_comparison(page, live_server, login, make_user):
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="chat <b>x</b>",
                 task_slug="dialogue")
    make_user("chief", role="admin", password="pass-1234")
    login("chief")
    page.goto(f"{live_server.url}/comparisons/new/")
    page.select_option("#id_dataset", label="chat <b>x</b>")
    page.check("input[name=metrics][value=length]")
    page.check("input[name=metrics][value=bleu]")
    page.click("form.stacked button[type=submit]")
    # refused at the metrics field, and told how to ask for it
    assert "bleu@input" in page.locator("#id_metrics_error").inner_text()
    page.uncheck("input[name=metrics][value=bleu]")
    page.check("input[name=metrics][value='wordllama@input']")
    page.fill("#id_aspects", "coherence, engagingness")
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(re.compile(r"/comparisons/\d+/$"))
    job = ComparisonJob.objects.get()
    assert page.locator("#job-progress").get_attribute("hx-trigger") == "every 2s"
    assert "0 / 12 scores" in page.locator("#job-progress").inner_text()

    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE  # what the queued worker would do
    page.wait_for_selector("#correlation-grid", timeout=15_000)  # the poll saw the end and reloaded the page
    grid = page.locator("#correlation-grid table.grid")
    headers = [t.lower() for t in grid.locator("thead th").all_inner_texts()]  # the stylesheet upper-cases them
    assert headers == ["metric", "coherence", "engagingness"]
    assert grid.locator("tbody tr").count() == 2
    assert grid.locator("tbody strong").count() >= 2  # the best of each aspect in bold
    assert "chat <b>x</b>" in page.locator("h1").inner_text()  # shown as text, not markup
    page.select_option("select[name=level]", "system")
    page.click("#correlation-grid button[type=submit]")
    page.wait_for_url(re.compile(r"level=system"))
    assert "at system level" in page.locator("#correlation-grid caption").inner_text()
