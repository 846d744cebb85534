"""A job kind is a declaration: its task, messages and progress pair on the model, and `jobs/` doing the rest
(queue, cancel, resume, checkpoint, the sweep that recovers a dead worker's jobs), asserted on every kind."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from celery import current_app
from django.utils import timezone

from jobs.lifecycle import (
    JobStopped,
    job_cancel,
    job_checkpoint,
    job_claim,
    job_finish,
    job_queue,
    job_requeue,
    job_run,
)
from jobs.models import JobStatus
from jobs.worker import start_sweeper, sweep_stale_jobs
from tests.jobs.conftest import task_of


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, list]]:
    """What reaches the broker: (task name, args) of every task sent by name."""
    out: list[tuple[str, list]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **kw: out.append((name, list(args))))
    return out


def _reload(kind, pk):
    return kind.model.objects.get(pk=pk)


# The four first kinds keep the task names they had when tasks/ held one module per kind: messages already queued
# and scripts send them by name. Every other kind's task is named by its model label (jobs.kinds.register).
KEPT_TASK_NAMES = {
    "EvaluatorRun": "tasks.preannotation.run_preannotation",
    "DhpRun": "tasks.dhp.run_dhp",
    "ComparisonJob": "tasks.comparison.run_comparison",
    "ExportJob": "tasks.exporting.run_export",
}


def test_a_kind_writes_its_task_name_once_and_its_task_runs_that_kind(kind):
    task = task_of(kind)
    assert kind.model.task_name == KEPT_TASK_NAMES.get(kind.model.__name__, kind.model._meta.label)
    assert task.name == kind.model.task_name and task.job_model is kind.model


def test_queue_cancel_and_resume_come_from_jobs_for_every_kind(kind, dataset, sent, django_capture_on_commit_callbacks):
    job = kind.make(dataset)
    with django_capture_on_commit_callbacks(execute=True):
        job_queue(job)
    assert sent == [(kind.model.task_name, [job.pk])]
    assert job.can_cancel() and not job.can_resume()
    assert job_cancel(job)
    cancelled = _reload(kind, job.pk)
    assert cancelled.status == JobStatus.CANCELLED and not cancelled.can_cancel() and not cancelled.can_resume()
    assert not job_requeue(cancelled)  # a cancelled job stays cancelled

    failed = kind.make(dataset)
    assert job_claim(kind.model, failed.pk, "w")
    job_finish(kind.model, failed.pk, JobStatus.FAILED, "boom")
    failed = _reload(kind, failed.pk)
    assert failed.can_resume() and not failed.can_cancel()
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert job_requeue(failed)
    assert _reload(kind, failed.pk).status == JobStatus.PENDING and sent == [(kind.model.task_name, [failed.pk])]
    with django_capture_on_commit_callbacks(execute=True):
        assert job_requeue(_reload(kind, failed.pk), enqueue=False) is False  # pending already: nothing to resume
    assert len(sent) == 1


def test_a_checkpoint_beats_and_ends_a_cancelled_job_with_its_kinds_message(kind, dataset):
    job = kind.make(dataset)

    def work(claimed) -> str:
        job_checkpoint(kind.model, claimed.pk)  # not cancelled: the beat only
        kind.model.objects.filter(pk=claimed.pk).update(cancel_requested=True)
        job_checkpoint(kind.model, claimed.pk)
        raise AssertionError("the checkpoint should have stopped the job")

    assert job_run(kind.model, job.pk, "w", work) == JobStatus.CANCELLED
    ended = _reload(kind, job.pk)
    assert ended.status == JobStatus.CANCELLED and ended.message == kind.model.cancelled_message
    with pytest.raises(JobStopped):
        job_checkpoint(kind.model, job.pk)


def test_the_sweep_requeues_a_dead_workers_job_of_every_kind_and_leaves_live_ones(kind, dataset, settings, monkeypatch):
    settings.RUN_STALE_SECONDS = 60
    dead, live = kind.make(dataset), kind.make(dataset)
    for job in (dead, live):
        assert job_claim(kind.model, job.pk, "old-worker")
    kind.model.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=120))
    queued: list[int] = []
    monkeypatch.setattr(task_of(kind), "delay", lambda pk: queued.append(pk))
    swept = sweep_stale_jobs()
    assert swept[kind.model.__name__] == [dead.pk] and queued == [dead.pk]
    assert _reload(kind, dead.pk).can_resume() and not _reload(kind, live.pk).can_resume()


@pytest.mark.django_db(transaction=True)
def test_the_sweeper_thread_recovers_without_a_worker_restart(kind, dataset, settings, monkeypatch):
    settings.RUN_STALE_SECONDS = 60
    job = kind.make(dataset)
    assert job_claim(kind.model, job.pk, "old-worker")
    queued: list[int] = []
    monkeypatch.setattr(task_of(kind), "delay", lambda pk: queued.append(pk))
    stop = threading.Event()
    thread = start_sweeper(0.05, stop)
    try:
        time.sleep(0.3)
        assert queued == []  # still beating
        kind.model.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=120))
        deadline = time.monotonic() + 5
        while not queued and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join()
    assert queued and set(queued) == {job.pk}


def test_every_declared_kind_is_tested_here_and_has_its_task():
    from jobs.kinds import job_kinds
    from tests.jobs.conftest import KINDS

    assert {k.model for k in job_kinds()} == {k.model for k in KINDS}


def test_progress_is_done_of_total_on_every_kind(kind, dataset):
    job = kind.make(dataset)
    job.done, job.total = 4, 9
    assert job.done_total() == (4, 9) and job.percent() == 44
    job.done = 12  # a count past its total (a retried call) draws a full bar, no more
    assert job.percent() == 100


def test_every_kind_has_an_admin_that_cancels_and_resumes(kind, dataset, admin_client, sent,
                                                          django_capture_on_commit_callbacks):
    from django.urls import reverse

    meta = kind.model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    pending, failed = kind.make(dataset), kind.make(dataset)
    assert job_claim(kind.model, failed.pk, "w")
    job_finish(kind.model, failed.pk, JobStatus.FAILED, "boom")
    answer = admin_client.post(url, {"action": "cancel_jobs", "_selected_action": [pending.pk]}, follow=True)
    assert answer.status_code == 200 and _reload(kind, pending.pk).status == JobStatus.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(url, {"action": "resume_jobs", "_selected_action": [failed.pk]}, follow=True)
    assert _reload(kind, failed.pk).status == JobStatus.PENDING and sent == [(kind.model.task_name, [failed.pk])]


def test_the_worker_registers_exactly_the_task_names_researchers_send():
    """The names are an interface (scripts send them by name): a worker loading CELERY_IMPORTS registers these."""
    from config.celery import app

    app.loader.import_default_modules()
    names = {name for name in app.tasks if not name.startswith("celery.")}
    assert names == {
        "tasks.preannotation.run_preannotation",
        "tasks.dhp.run_dhp",
        "tasks.comparison.run_comparison",
        "tasks.exporting.run_export",
        "quality.DecoyExplanationJob",
        "quality.PlantedWritingJob",
        "tasks.maintenance.ping_dataset",
        "tasks.analytics.compute_gamma",
    }
