"""The defects the per-kind lifecycle copies grew, each reproduced through the product's own entry points:
a live comparison job (or DHP run perturbing) taken for a dead one, and a cancel of a dead worker's run
that never completed."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.services.tokens import token_create
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from corpus.models import Dataset
from corpus.services.importing import items_import
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun
from dhp.services.runs import dhp_create
from evaluation.models import EvaluatorRun
from jobs.kinds import job_execute
from jobs.lifecycle import job_requeue
from jobs.models import JobStatus
from tests import factories
from tests.conftest import SAMPLE_DATA
from tests.dhp.conftest import MODEL, make_dataset, sim_answer
from tests.ollama_sim.config import FaultRule, SimConfig
from tests.ollama_sim.server import OllamaSim


def _in_thread(work, result: dict) -> threading.Thread:
    """Run `work` as a worker would, in its own thread (and database connection)."""
    def target() -> None:
        try:
            result["status"] = work()
        finally:
            connection.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _wait_for(check, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out waiting for the job to get there"
        time.sleep(0.05)


def _fresh(model, pk: int, stale_seconds: float) -> bool:
    """The staleness rule, read from the row: a beat within RUN_STALE_SECONDS."""
    beat = model.objects.values_list("heartbeat_at", flat=True).get(pk=pk)
    return beat is not None and timezone.now() - beat < timedelta(seconds=stale_seconds)


@pytest.mark.django_db(transaction=True)
def test_a_live_comparison_job_running_an_evaluator_run_is_never_resumed(settings):
    """Its heartbeat came only from its progress callback, so it went stale during the nested run and
    Resume moved it back to pending mid-run."""
    settings.RUN_STALE_SECONDS = 1
    settings.OLLAMA_PARALLEL = 1
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="dlg", task_slug="dialogue")
    dataset = Dataset.objects.get(name="dlg")
    slow = FaultRule(kind="slow", delay=0.7)  # 6 items, one at a time: the nested run lasts about 4 s
    with OllamaSim(SimConfig(models=["qwen2.5:3b"], faults=[slow])) as sim:
        job = comparison_create(dataset=dataset, metrics="annotator:qwen2.5:3b", aspects=["coherence"],
                                ollama_url=sim.url)
        result: dict = {}
        worker = _in_thread(lambda: job_execute(ComparisonJob, job.pk), result)
        try:
            _wait_for(lambda: EvaluatorRun.objects.filter(status=JobStatus.RUNNING).exists())
            for _ in range(3):
                time.sleep(0.8)
                assert ComparisonJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
                assert _fresh(ComparisonJob, job.pk, settings.RUN_STALE_SECONDS)
                assert not job_requeue(job, enqueue=False)
        finally:
            worker.join(60)
    assert result["status"] == JobStatus.DONE, ComparisonJob.objects.get(pk=job.pk).message


@pytest.mark.django_db(transaction=True)
def test_a_dhp_run_perturbing_with_an_llm_keeps_its_heartbeat(settings):
    """The DHP heartbeat thread covered scoring only, so a run perturbing for long looked dead."""
    settings.RUN_STALE_SECONDS = 1
    dataset = make_dataset(n=4)
    slow = FaultRule(kind="slow", delay=0.9, first=4)  # the four perturbation requests come first
    with OllamaSim(SimConfig(models=[MODEL], parallel=1, answer=sim_answer, faults=[slow])) as sim:
        run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["fluency"], kinds=parse_kinds("llm-entities:minor"),
                         samples=1, ollama_url=sim.url, parallel=1)
        result: dict = {}
        worker = _in_thread(lambda: job_execute(DhpRun, run.pk), result)
        try:
            _wait_for(lambda: DhpRun.objects.filter(pk=run.pk, stage="perturbing").exists())
            for _ in range(3):
                time.sleep(0.8)
                if DhpRun.objects.get(pk=run.pk).stage != "perturbing":
                    break
                assert _fresh(DhpRun, run.pk, settings.RUN_STALE_SECONDS)
                assert not job_requeue(run, enqueue=False)
        finally:
            worker.join(60)
    assert result["status"] == JobStatus.DONE, DhpRun.objects.get(pk=run.pk).message


@pytest.mark.django_db
def test_cancelling_a_run_whose_worker_died_completes_and_its_task_ends(make_user, settings):
    """It stayed running with cancel_requested for ever, and recovery re-queued its task for ever."""
    settings.RUN_STALE_SECONDS = 60
    dataset = factories.dataset("dead", items=[{"external_id": "a", "output": "A text."}])
    run = factories.run(dataset, "dead-worker", status=JobStatus.RUNNING, celery_task_id="gone",
                        heartbeat_at=timezone.now() - timedelta(minutes=5))
    admin = make_user("adm", role="admin")
    answer = Client().post(f"/api/runs/{run.pk}/cancel", HTTP_AUTHORIZATION=f"Bearer {token_create(user=admin)}")
    assert answer.status_code == 200 and answer.json()["status"] == JobStatus.CANCELLED
    from tasks.jobs import TASKS

    result = TASKS[EvaluatorRun].apply(args=[run.pk])  # the redelivered task of the dead worker
    assert result.successful() and result.result is None
    assert EvaluatorRun.objects.get(pk=run.pk).status == JobStatus.CANCELLED
