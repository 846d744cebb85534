"""The job pages' shared parts: the polled page (its part is templates/jobs/_progress.html with the actions),
and the Cancel and Resume views of every kind, generated from its routes (jobs/urls.py serves them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from jobs.kinds import JobKind
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


def job_action_views(kind: JobKind) -> tuple[Callable[..., HttpResponse], Callable[..., HttpResponse]]:
    """The Cancel and Resume views of `kind`, as its routes declare them (jobs.kinds.JobRoutes)."""
    routes = kind.routes
    assert routes is not None

    def get(request: HttpRequest, pk: int) -> Job:
        routes.permission(request)
        return get_object_or_404(kind.model.objects.select_related(*routes.select_related), pk=pk)

    @require_POST
    def cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
        return job_cancel_answer(request, get(request, pk), routes.page_name)

    @require_POST
    def resume_view(request: HttpRequest, pk: int) -> HttpResponse:
        return job_resume_answer(request, get(request, pk), routes.page_name, routes.resumed)

    return cancel_view, resume_view


def job_page_view(kind: JobKind) -> Callable[..., HttpResponse]:
    """The page of a kind that has no view of its own: its template with `job`, polled in part "job-progress"."""
    routes = kind.routes
    assert routes is not None

    @require_GET
    @vary_on_headers("HX-Request")
    def page_view(request: HttpRequest, pk: int) -> HttpResponse:
        routes.permission(request)
        job = get_object_or_404(kind.model.objects.select_related(*routes.select_related), pk=pk)
        return job_page(request, job, routes.template, "job-progress", {"job": job, "routes": routes})

    return page_view


def job_urlpatterns(kinds: Iterable[JobKind]) -> list[URLPattern]:
    """The Cancel and Resume URLs of every kind in `kinds` that declares routes, and the page of those that
    name a template, at the paths and names they declare."""
    patterns = []
    for kind in kinds:
        routes = kind.routes
        if routes is None:
            continue
        cancel_view, resume_view = job_action_views(kind)
        if routes.template:
            patterns.append(path(routes.page, job_page_view(kind), name=routes.page_name))
        patterns.append(path(f"{routes.page}cancel/", cancel_view, name=routes.url("cancel")))
        patterns.append(path(f"{routes.page}resume/", resume_view, name=routes.url("resume")))
    return patterns
