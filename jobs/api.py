"""The API twins of a job page's buttons: one answer to cancel and resume for every kind of job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from ninja import Status

from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import Job

ALLOWED = {
    "cancel": ("cancelled", "pending, paused or running"),
    "resume": ("resumed", "paused, failed or abandoned"),
}


def job_action_answer(job: Job, action: Literal["cancel", "resume"], out: Callable[[Job], object]) -> Status:
    """Cancel or resume `job`: `out(job)` as it is afterwards (200), or 409 saying which jobs the action
    applies to."""
    act = job_cancel if action == "cancel" else job_requeue
    if not act(job):
        done, allowed = ALLOWED[action]
        return Status(409, {"detail": f"{job._meta.verbose_name} is {job.status}; only {allowed} jobs can be {done}"})
    job.refresh_from_db()
    return Status(200, out(job))
