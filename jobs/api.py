"""The API twins of a job page's buttons: one answer to cancel and resume for every kind of job, and the routes
of every registered kind generated from its declaration (jobs.kinds.JobRoutes)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status

from jobs.kinds import JobKind
from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import Job

ALLOWED = {
    "cancel": ("cancelled", "pending, paused or running"),
    "resume": ("resumed", "paused, failed or abandoned"),
}
ACTIONS: tuple[Literal["cancel", "resume"], ...] = ("cancel", "resume")


class ErrorOut(Schema):
    detail: str


class JobOut(Schema):
    """A job as the API answers it when its kind declares no schema of its own."""

    id: int
    status: str
    done: int
    total: int
    message: str


def job_out(job: Job) -> JobOut:
    return JobOut(id=job.pk, status=job.status, done=job.done, total=job.total, message=job.message)


def job_action_answer(job: Job, action: Literal["cancel", "resume"], out: Callable[[Job], object]) -> Status:
    """Cancel or resume `job`: `out(job)` as it is afterwards (200), or 409 saying which jobs the action
    applies to."""
    act = job_cancel if action == "cancel" else job_requeue
    if not act(job):
        done, allowed = ALLOWED[action]
        return Status(409, {"detail": f"{job._meta.verbose_name} is {job.status}; only {allowed} jobs can be {done}"})
    job.refresh_from_db()
    return Status(200, out(job))


def _action_operation(kind: JobKind, action: Literal["cancel", "resume"], param: str) -> Callable[..., Status]:
    """The operation `action` of `kind`, taking the job's id as the path parameter `param` (its declared name)."""
    routes = kind.routes
    assert routes is not None
    out = routes.out or job_out

    def operation(request: HttpRequest, **path: int) -> Status:
        routes.permission(request)
        job = get_object_or_404(kind.model.objects.select_related(*routes.select_related), pk=path[param])
        return job_action_answer(job, action, out)

    # ninja reads the path parameter, the summary and the URL name from the signature and the function's name.
    operation.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=HttpRequest),
        inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, annotation=int),
    ])
    operation.__name__ = operation.__qualname__ = f"{action}_{routes.name}"
    operation.__doc__ = None
    return operation


def job_actions_router(kinds: Iterable[JobKind]) -> Router:
    """The Cancel and Resume operations of every kind in `kinds` that declares routes."""
    router = Router()
    for kind in kinds:
        routes = kind.routes
        if routes is None:
            continue
        (param,) = re.findall(r"\{(\w+)\}", routes.api)
        for action, description in zip(ACTIONS, routes.descriptions, strict=True):
            router.add_api_operation(
                f"{routes.api}/{action}", ["POST"], _action_operation(kind, action, param),
                response={200: routes.schema or JobOut, 409: ErrorOut}, operation_id=f"{action}_{routes.name}",
                tags=[routes.tag], description=description or None,
            )
    return router
