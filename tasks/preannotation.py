"""Pre-annotation tasks: the OpeNLGauge ensemble job (its lifecycle and recovery are jobs.worker's)."""

from __future__ import annotations

from celery import shared_task

from evaluation.models import EvaluatorRun
from evaluation.runs.execute import run_execute
from jobs.worker import JobTask


@shared_task(bind=True, base=JobTask, job_model=EvaluatorRun, name=EvaluatorRun.task_name)
def run_preannotation(self, run_id: int) -> str | None:
    """Execute run `run_id`; a run another live worker holds is left alone, a stale one is taken over."""
    return self.run_job(run_id, run_execute)
