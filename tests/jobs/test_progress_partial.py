"""Every kind's page draws its progress with the one partial (templates/jobs/_progress.html): the counts, a bar
whose value is the job's percent, the message and the Cancel/Resume buttons."""

from __future__ import annotations

import re

import pytest

from jobs.models import JobStatus

PAGES = {"EvaluatorRun": "/runs/{pk}/", "DhpRun": "/dhp/runs/{pk}/", "ComparisonJob": "/comparisons/{pk}/",
         "ExportJob": "/analytics/exports/{pk}/", "DecoyExplanationJob": "/campaigns/decoy-explanations/{pk}/",
         "PlantedWritingJob": "/campaigns/planted-writing/{pk}/"}


@pytest.mark.parametrize(("done", "total", "percent"), [(3, 12, 25), (12, 12, 100), (13, 12, 100)])
def test_every_job_page_shows_done_of_total_and_a_bar_at_its_percentage(kind, dataset, admin_client, done, total,
                                                                        percent):
    job = kind.make(dataset)
    kind.model.objects.filter(pk=job.pk).update(status=JobStatus.PAUSED, done=done, total=total, message="Server gone.")
    html = admin_client.get(PAGES[kind.model.__name__].format(pk=job.pk)).content.decode()
    assert re.search(rf"— {done} / {total} \w+ \({percent}%\)", html)
    bar = re.search(r'<progress class="job-bar" max="(\d+)" value="(\d+)"', html)
    assert bar and bar.groups() == ("100", str(percent))  # the bar is as long as the percentage, never past it
    assert "Server gone." in html and 'id="resume-' in html and 'id="cancel-' in html
