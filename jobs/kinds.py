"""The registry of job kinds. Each app declares its kind in its own `jobs.py` (`register(Model, execute)`);
the Celery tasks, the sweep, the commands' `--sync`, the admin and the Cancel and Resume routes (API and pages)
find every kind here."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import autodiscover_modules

from jobs.lifecycle import job_run, job_seconds_until_stale
from jobs.models import Job


@dataclass(frozen=True)
class JobRoutes:
    """Where a kind's Cancel and Resume are served; jobs/api.py and jobs/urls.py generate them from this.

    API: POST `{api}/cancel` and `{api}/resume` (`api` names the job's id parameter: "/dhp/runs/{run_id}"),
    operations `cancel_<name>` and `resume_<name>` under `tag`, answering `out(job)` as `schema` (200; the
    generic `jobs.api.JobOut` when not given) or 409; `descriptions` documents the two operations.
    Pages: `{page}cancel/` and `{page}resume/` ("dhp/runs/<int:pk>/"), named `<url_name>_cancel` and
    `<url_name>_resume`, back to the job's page `page_name`; `resumed` says what a resumed job does not do again.
    `permission(request)` raises unless the user may act on the kind's jobs; `select_related` is loaded with a
    job. A kind with no page view of its own names its `template`: jobs serves it at `page` as `page_name`."""

    api: str
    name: str
    tag: str
    page: str
    page_name: str
    permission: Callable[[Any], object]
    resumed: str
    url_name: str = ""
    schema: type | None = None
    out: Callable[[Any], object] | None = None
    select_related: tuple[str, ...] = ()
    descriptions: tuple[str, str] = ("", "")
    template: str = ""

    def url(self, action: str) -> str:
        """The URL name of a page action ("cancel" or "resume")."""
        return f"{self.url_name or self.name}_{action}"


@dataclass(frozen=True)
class JobKind:
    """A kind: its model (which declares the task name and the messages) and the work a worker does on a
    claimed job. `execute(job)` returns when the work is done and raises JobStopped to end it otherwise;
    `related` names the relations loaded with the job; `routes` where its Cancel and Resume are served."""

    model: type[Job]
    execute: Callable[[Any], None]
    related: tuple[str, ...] = ()
    routes: JobRoutes | None = None

    def run(self, pk: int, *, token: str = "sync") -> str | None:
        """Claim job `pk` and execute it; its final status, or None when another live worker holds it."""
        return job_run(self.model, pk, token, self.execute, related=self.related)


_KINDS: dict[type[Job], JobKind] = {}


def register(model: type[Job], execute: Callable[[Any], None], *, related: tuple[str, ...] = (),
             routes: JobRoutes | None = None) -> JobKind:
    """Declare `model`'s kind; its app's jobs.py calls this once. A model without a `task_name` gets the kind's
    own name, its model label ("dhp.DhpRun"), as the name of its Celery task."""
    if not model.task_name:
        model.task_name = model._meta.label
    kind = JobKind(model, execute, related, routes)
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
