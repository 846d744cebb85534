"""One lifecycle for every kind of job (evaluator runs, DHP runs, comparisons, exports): claim, beat,
cancel, resume, finish and recovery, each asserted on all four kinds, with the defects the per-kind copies
had (a live job taken for a dead one, a cancel that never completes, no take-over after a quick restart)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from jobs.lifecycle import (
    job_beat,
    job_cancel,
    job_claim,
    job_finish,
    job_heartbeat,
    job_resume,
    jobs_going_stale,
    jobs_needing_recovery,
)
from jobs.models import JobStatus
from tests.jobs.conftest import task_of


def _status(kind, pk) -> str:
    return kind.model.objects.values_list("status", flat=True).get(pk=pk)


def _worker_died(kind, pk, seconds_ago: float) -> None:
    kind.model.objects.filter(pk=pk).update(heartbeat_at=timezone.now() - timedelta(seconds=seconds_ago))


def test_job_claim_finish_and_resume_follow_one_vocabulary(kind, dataset, settings):
    settings.RUN_STALE_SECONDS = 60
    job = kind.make(dataset)
    assert job.status == JobStatus.PENDING and not job.is_finished()
    assert job_claim(kind.model, job.pk, "worker-a")
    assert not job_claim(kind.model, job.pk, "worker-b")  # a live worker has it
    claimed = kind.model.objects.get(pk=job.pk)
    assert claimed.status == JobStatus.RUNNING and claimed.celery_task_id == "worker-a"
    assert claimed.started_at is not None and claimed.heartbeat_at is not None
    assert not job_resume(kind.model, job.pk)  # a live job is never put back in the queue
    job_finish(kind.model, job.pk, JobStatus.PAUSED, "server away")
    paused = kind.model.objects.get(pk=job.pk)
    assert paused.finished_at is None and not paused.is_finished() and paused.message == "server away"
    assert job_resume(kind.model, job.pk) and _status(kind, job.pk) == JobStatus.PENDING
    assert job_claim(kind.model, job.pk, "worker-c")
    assert kind.model.objects.get(pk=job.pk).started_at == claimed.started_at  # the first start is kept
    job_finish(kind.model, job.pk, JobStatus.DONE)
    done = kind.model.objects.get(pk=job.pk)
    assert done.is_finished() and done.finished_at is not None
    assert not job_claim(kind.model, job.pk, "worker-d") and not job_resume(kind.model, job.pk)


def test_a_dead_workers_job_is_taken_over_recovered_and_resumable(kind, dataset, settings):
    settings.RUN_STALE_SECONDS = 60
    live, dead, waiting = kind.make(dataset), kind.make(dataset), kind.make(dataset)
    for job in (live, dead):
        assert job_claim(kind.model, job.pk, "old-worker")
    _worker_died(kind, dead.pk, 61)
    assert jobs_needing_recovery(kind.model) == [dead.pk]
    assert kind.model.objects.get(pk=dead.pk).is_abandoned()
    assert not kind.model.objects.get(pk=live.pk).is_abandoned()
    assert job_claim(kind.model, dead.pk, "new-worker") and not job_claim(kind.model, live.pk, "new-worker")
    _worker_died(kind, dead.pk, 61)
    assert job_resume(kind.model, dead.pk)  # an abandoned job can be resumed by hand too
    assert _status(kind, waiting.pk) == JobStatus.PENDING


@pytest.mark.django_db(transaction=True)
def test_a_live_job_doing_long_in_process_work_is_never_recovered_or_resumed(kind, dataset, settings):
    """The heartbeat thread beats while the job works in-process (a nested run, perturbing, a GPTScore
    batch) without writing progress of its own."""
    settings.RUN_STALE_SECONDS = 1
    job = kind.make(dataset)
    assert job_claim(kind.model, job.pk, "worker")
    with job_heartbeat(kind.model, job.pk):
        for _ in range(3):
            time.sleep(1.0)  # longer than RUN_STALE_SECONDS, with no progress written
            assert jobs_needing_recovery(kind.model) == []
            assert not job_resume(kind.model, job.pk)
            assert not job_claim(kind.model, job.pk, "another-worker")
    time.sleep(1.3)  # the block has ended: now the beat stops, as when the worker dies
    assert jobs_needing_recovery(kind.model) == [job.pk]


def test_cancelling_a_job_whose_worker_died_completes(kind, dataset, settings):
    settings.RUN_STALE_SECONDS = 60
    gone, dying = kind.make(dataset), kind.make(dataset)
    for job in (gone, dying):
        assert job_claim(kind.model, job.pk, "dead-worker")
    _worker_died(kind, gone.pk, 120)
    assert job_cancel(gone)  # its worker is gone: nobody would reach a checkpoint
    assert _status(kind, gone.pk) == JobStatus.CANCELLED
    # Cancelled a moment before its worker died: requested, then completed when the job is looked at again.
    assert job_cancel(dying) and _status(kind, dying.pk) == JobStatus.RUNNING
    _worker_died(kind, dying.pk, 61)
    assert not job_claim(kind.model, dying.pk, "new-worker")
    cancelled = kind.model.objects.get(pk=dying.pk)
    assert cancelled.status == JobStatus.CANCELLED and cancelled.finished_at is not None
    assert jobs_needing_recovery(kind.model) == []


def test_the_task_of_a_cancelled_dead_job_ends_without_requeueing_itself(kind, dataset, settings):
    """Run eagerly, a task that re-queues itself for ever recursed into a RecursionError."""
    settings.RUN_STALE_SECONDS = 60
    job = kind.make(dataset)
    assert job_claim(kind.model, job.pk, "dead-worker")
    assert job_cancel(job)
    _worker_died(kind, job.pk, 61)
    result = task_of(kind).apply(args=[job.pk])
    assert result.successful() and result.result is None
    assert _status(kind, job.pk) == JobStatus.CANCELLED


def test_a_starting_worker_requeues_dead_jobs_now_and_looks_again_at_fresh_ones(kind, dataset, settings, monkeypatch):
    """A supervisor restarts a dead worker within seconds: its jobs' beats are still fresh then."""
    settings.RUN_STALE_SECONDS = 90
    fresh, stale = kind.make(dataset), kind.make(dataset)
    for job in (fresh, stale):
        assert job_claim(kind.model, job.pk, "old-worker")
    _worker_died(kind, fresh.pk, 30)
    _worker_died(kind, stale.pk, 300)
    task = task_of(kind)
    now: list[int] = []
    later: list[tuple[int, float]] = []
    monkeypatch.setattr(task, "delay", lambda pk: now.append(pk))
    monkeypatch.setattr(task, "apply_async", lambda args, countdown: later.append((args[0], countdown)))
    from jobs.worker import recover_all_jobs

    recover_all_jobs()
    assert now == [stale.pk]
    assert [pk for pk, _ in later] == [fresh.pk] and 60 < later[0][1] <= 61
    assert [pk for pk, _ in jobs_going_stale(kind.model)] == [fresh.pk]


def test_a_task_finding_a_live_job_looks_again_when_it_would_be_stale(kind, dataset, settings, monkeypatch):
    settings.RUN_STALE_SECONDS = 90
    job = kind.make(dataset)
    assert job_claim(kind.model, job.pk, "live-worker")
    _worker_died(kind, job.pk, 40)
    task = task_of(kind)
    countdowns: list[float] = []

    def retry(countdown: float, **kwargs):
        countdowns.append(countdown)
        return RuntimeError("retried")

    monkeypatch.setattr(task, "retry", retry)
    with pytest.raises(RuntimeError, match="retried"):
        task.run(job.pk)
    assert len(countdowns) == 1 and 50 < countdowns[0] <= 51.5
    job_beat(kind.model, job.pk)
    assert _status(kind, job.pk) == JobStatus.RUNNING
