"""The DHP benchmark job: perturb, score, test; a thin wrapper around `dhp.services.runs.dhp_execute`."""

from __future__ import annotations

from celery import shared_task

from dhp.models import DhpRun
from dhp.services.runs import dhp_execute
from jobs.worker import JobTask


@shared_task(bind=True, base=JobTask, job_model=DhpRun, name=DhpRun.task_name)
def run_dhp(self, run_id: int) -> str | None:
    """Execute DHP run `run_id`; a run held by a live worker is left alone, a stale one is taken over."""
    return self.run_job(run_id, dhp_execute)
