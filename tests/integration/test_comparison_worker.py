"""A baseline-only comparison job over a meta_eval file, end to end on a real Celery worker (Redis, PostgreSQL)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from celery import current_app

from comparison.models import ComparisonJob, MetricScore
from comparison.services.jobs import comparison_create
from corpus.models import Dataset
from corpus.services.importing import items_import
from jobs.models import JobStatus
from tests.conftest import REPO, SAMPLE_DATA
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


def test_baseline_comparison_runs_on_a_worker_and_exports(celery_worker_factory, tmp_path):
    worker = celery_worker_factory().start()
    items_import(path=SAMPLE_DATA / "meta_eval" / "simplification.json", dataset_name="simp",
                 task_slug="simplification")
    dataset = Dataset.objects.get(name="simp")
    job = comparison_create(dataset=dataset, metrics="length,chrf@input,rouge2@input,wordllama@input")
    current_app.send_task(ComparisonJob.task_name, args=[job.pk], queue=worker.queue)  # the queue of this test's worker
    assert wait_for(lambda: ComparisonJob.objects.get(pk=job.pk).is_finished(), timeout=120), (
        worker.log.read_text()[-3000:]
    )
    job.refresh_from_db()
    assert job.status == JobStatus.DONE, job.message
    assert MetricScore.objects.filter(item__dataset=dataset).count() == 4 * 6
    assert {r["level"] for r in job.results["correlations"]} == {"dataset", "sample", "system"}
    assert "run_comparison" in worker.log.read_text()

    # the command's --wait queues the same task and follows it to the end
    env = {**worker.env, "PATH": "/usr/bin:/bin"}
    waited = subprocess.run([sys.executable, "manage.py", "compare_metrics", "--dataset", "simp", "--metrics",
                             "length,bleu@input", "--aspects", "simplicity", "--wait"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert waited.returncode == 0, waited.stderr
    second = ComparisonJob.objects.get(pk=int(waited.stdout.splitlines()[0]))
    assert second.status == JobStatus.DONE and second.aspects == ["simplicity"]
    assert "done: 12/12 scores" in waited.stderr
    assert MetricScore.objects.filter(item__dataset=dataset, metric="length").count() == 6  # reused, not redone

    out = tmp_path / "c.json"
    env = {"DATABASE_URL": worker.env["DATABASE_URL"], "PATH": "/usr/bin:/bin",
           "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_SECRET_KEY": worker.env["DJANGO_SECRET_KEY"]}
    done = subprocess.run([sys.executable, "manage.py", "export_comparison", "--job", str(job.pk), "--format", "json",
                           "-o", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["aspects"] == ["fluency", "meaning preservation", "simplicity"]
    assert len(doc["scores"]) == 24
