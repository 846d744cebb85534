"""One Celery task per job kind, each named by its kind's `task_name`: a new kind adds no task here."""

from __future__ import annotations

from jobs.kinds import job_kinds
from jobs.models import Job
from jobs.worker import JobTask, job_task

TASKS: dict[type[Job], JobTask] = {kind.model: job_task(kind) for kind in job_kinds()}
