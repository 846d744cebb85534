"""The registry of job kinds. Each app declares its kind in its own `jobs.py` (`register(Model, execute)`);
the Celery tasks, the sweep and the commands' `--sync` find every kind here."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import autodiscover_modules

from jobs.lifecycle import job_run, job_seconds_until_stale
from jobs.models import Job


@dataclass(frozen=True)
class JobKind:
    """A kind: its model (which declares the task name and the messages) and the work a worker does on a
    claimed job. `execute(job)` returns when the work is done and raises JobStopped to end it otherwise;
    `related` names the relations loaded with the job."""

    model: type[Job]
    execute: Callable[[Any], None]
    related: tuple[str, ...] = ()

    def run(self, pk: int, *, token: str = "sync") -> str | None:
        """Claim job `pk` and execute it; its final status, or None when another live worker holds it."""
        return job_run(self.model, pk, token, self.execute, related=self.related)


_KINDS: dict[type[Job], JobKind] = {}


def register(model: type[Job], execute: Callable[[Any], None], *, related: tuple[str, ...] = ()) -> JobKind:
    """Declare `model`'s kind; its app's jobs.py calls this once."""
    kind = JobKind(model, execute, related)
    _KINDS[model] = kind
    return kind


def job_kinds() -> list[JobKind]:
    """Every kind declared by an installed app's jobs.py."""
    autodiscover_modules("jobs")
    return list(_KINDS.values())


def job_kind(model: type[Job]) -> JobKind:
    if model not in _KINDS:
        autodiscover_modules("jobs")
    return _KINDS[model]


def job_execute(model: type[Job], pk: int, *, token: str = "sync") -> str | None:
    """Execute job `pk` of `model` in this process (a command's --sync, a job run inside another one)."""
    return job_kind(model).run(pk, token=token)


def job_execute_nested(model: type[Job], pk: int, *, token: str) -> str | None:
    """Execute job `pk` inside another job's work (a comparison's or a DHP run's evaluator run).

    When the outer job was taken over from a dead worker, the nested job's last beat may still be a few
    seconds fresh: wait once for it to go stale and claim it then. None still means a live worker has it."""
    status = job_execute(model, pk, token=token)
    wait = job_seconds_until_stale(model, pk) if status is None else None
    if wait is not None:
        time.sleep(wait + 0.5)
        status = job_execute(model, pk, token=token)
    return status
