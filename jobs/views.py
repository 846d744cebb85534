"""The job pages' shared parts: the polled page (its part is templates/jobs/_progress.html with the actions),
and the Cancel and Resume views of every kind."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import Job, JobStatus


def job_page(
    request: HttpRequest, job: Job, template: str, part: str, context: dict, *, reload_when_finished: bool = False
) -> HttpResponse:
    """The job's page, or (to htmx's poll) its polled part `part`; a finished job's last answer stops the poll.

    `reload_when_finished`: the page shows more once the job has ended (results), so it reloads then."""
    if request.htmx and request.headers.get("HX-Target", part) == part:
        response = render(request, f"{template}#{part}", context)
        if not job.is_finished():
            return response
        return HttpResponseStopPolling(response.content, headers={"HX-Refresh": "true"} if reload_when_finished else {})
    return render(request, template, context)


def job_cancel_answer(request: HttpRequest, job: Job, to: str) -> HttpResponse:
    """Cancel `job` and say what that did: stopped at once, requested for the next checkpoint, or refused."""
    if job_cancel(job):
        job.refresh_from_db(fields=["status", "message"])
        if job.status == JobStatus.CANCELLED:
            messages.info(request, job.message or "Cancelled.")
        else:
            noun = job._meta.verbose_name
            messages.info(request, f"Cancellation requested; the {noun} stops at its next checkpoint.")
    else:
        messages.warning(
            request, f"The {job._meta.verbose_name} is {job.get_status_display().lower()} and cannot be cancelled."
        )
    return redirect(to, pk=job.pk)


def job_resume_answer(request: HttpRequest, job: Job, to: str, kept: str) -> HttpResponse:
    """Resume `job` and say what that did; `kept` tells what the resumed job will not do again."""
    if job_requeue(job):
        messages.success(request, f"Resumed: {kept}")
    else:
        messages.warning(request, f"Only a paused, failed or abandoned {job._meta.verbose_name} can be resumed.")
    return redirect(to, pk=job.pk)


def job_action_views(
    *, allow: Callable[[HttpRequest], object], get: Callable[[int], Job], to: str, kept: str,
) -> tuple[Callable[..., HttpResponse], Callable[..., HttpResponse]]:
    """The Cancel and Resume views of one kind of job. `allow(request)` raises unless the user may act on
    jobs, `get(pk)` returns the job or raises 404; `to` is the job page's URL name; `kept` tells what a
    resumed job does not do again."""

    @require_POST
    def cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
        allow(request)
        job = get(pk)
        return job_cancel_answer(request, job, to)

    @require_POST
    def resume_view(request: HttpRequest, pk: int) -> HttpResponse:
        allow(request)
        job = get(pk)
        return job_resume_answer(request, job, to, kept)

    return cancel_view, resume_view
