"""The export page in a real browser: start an export, watch the progress bar, get the download links."""

from __future__ import annotations

import pytest
from celery import current_app

from analytics.models import ExportJob
from jobs.kinds import job_execute
from tests import factories as make

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_export_job_page_polls_until_the_download_links_appear(page, live_server, login, settings, tmp_path,
                                                                monkeypatch):
    settings.EXPORT_DIR = tmp_path / "exports"
    sent: list[int] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **kw: sent.extend(args or []))
    dataset = make.dataset("browser-export", items=[{"external_id": str(i), "output": f"text {i}"} for i in range(3)])
    make.user("rosa", role="researcher")
    login("rosa")
    page.goto(f"{live_server.url}/analytics/datasets/{dataset.pk}/exports/")
    page.select_option("#id_format", "csv")
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{live_server.url}/analytics/exports/**")
    assert page.locator("#export-progress progress").count() == 1
    assert "Waiting for a worker" in page.locator("#export-progress").inner_text()
    job = ExportJob.objects.get()
    assert sent == [job.pk]
    job_execute(ExportJob, job.pk)  # what the worker does
    link = page.locator("#export-progress a[download]").first
    link.wait_for()  # the page polled and swapped in the finished state
    names = page.locator("#export-progress a[download]").all_inner_texts()
    assert [n for n in names if n.endswith(".csv")] == [f"{dataset.pk}-browser-export-export{job.pk}.csv"]
    assert f"{dataset.pk}-browser-export-export{job.pk}.csv.card.json" in names
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == f"{dataset.pk}-browser-export-export{job.pk}.csv"
