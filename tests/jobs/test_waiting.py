"""The one `--wait [--timeout SECONDS]` of the commands that queue a job."""

from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from comparison.models import ComparisonJob
from corpus.models import Dataset
from corpus.services.importing import items_import
from jobs.lifecycle import job_finish
from jobs.models import JobStatus
from jobs.waiting import TIMED_OUT, wait_for_job
from tests.conftest import SAMPLE_DATA


@pytest.fixture
def dialogue(db) -> Dataset:
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="dlg", task_slug="dialogue")
    return Dataset.objects.get(name="dlg")


def test_wait_with_a_timeout_gives_up_with_its_own_exit_code_and_leaves_the_job_queued(dialogue):
    started = time.monotonic()
    with pytest.raises(CommandError, match=r"still pending after 0.4 s; the job keeps running") as caught:
        call_command("compare_metrics", "--dataset", "dlg", "--metrics", "length", "--wait", "--timeout", "0.4")
    assert caught.value.returncode == TIMED_OUT == 3
    assert 0.4 <= time.monotonic() - started < 5
    assert ComparisonJob.objects.get().status == JobStatus.PENDING  # nobody cancelled it


def test_wait_writes_each_new_progress_line_once_and_returns_the_finished_job(dialogue):
    job = ComparisonJob.objects.create(dataset=dialogue, metrics=["length"], aspects=["coherence"])
    job_finish(ComparisonJob, job.pk, JobStatus.FAILED, "broken")
    lines: list[str] = []
    ended = wait_for_job(job, line=lambda j: f"{j.status}: {j.message}", write=lines.append, timeout=5)
    assert ended.status == JobStatus.FAILED and lines == ["failed: broken"]


def test_a_timeout_must_be_positive(dialogue):
    job = ComparisonJob.objects.create(dataset=dialogue, metrics=["length"], aspects=["coherence"])
    with pytest.raises(CommandError, match="--timeout must be a positive number of seconds, not -1"):
        wait_for_job(job, line=str, write=print, timeout=-1)
