"""Pages of metric comparison: launch (admins), follow (htmx polling), results grid, checklist, plots, downloads."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from accounts.access import require_admin, require_researcher
from comparison import plots
from comparison.forms import ComparisonLaunchForm
from comparison.models import ComparisonJob
from comparison.selectors import correlation_grid, job_progress, jobs_for_list
from comparison.services.jobs import NO_LOGPROBS_IN_OLLAMA, comparison_create
from comparison.services.results import csv_rows, export_document
from corpus.spreadsheet import sheet_writer
from errors import UserError
from errors.placing import refusal_place
from jobs.lifecycle import job_queue
from jobs.models import JobStatus
from jobs.views import job_page
from stats.metric_correlation import COEFFICIENTS, LEVELS


def _get_job(pk: int) -> ComparisonJob:
    return get_object_or_404(ComparisonJob.objects.select_related("dataset"), pk=pk)


@require_GET
def comparison_list(request: HttpRequest) -> HttpResponse:
    require_researcher(request)
    return render(request, "comparison/list.html", {"jobs": jobs_for_list()})


@require_http_methods(["GET", "POST"])
def comparison_new(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    form = ComparisonLaunchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = comparison_create(dataset=form.cleaned_data["dataset"], metrics=form.cleaned_data["metrics"],
                             aspects=form.aspect_list(), ollama_url=form.cleaned_data["ollama_url"] or None,
                             gptscore_url=form.cleaned_data["gptscore_url"] or None,
                             precision=form.cleaned_data["precision"] or None, user=request.user)
        except UserError as exc:
            refusal_place(form, exc)
        else:
            job_queue(job)
            messages.success(request, f"Comparison {job.pk} queued.")
            return redirect("comparison_detail", pk=job.pk)
    return render(request, "comparison/new.html", {"form": form, "no_logprobs": NO_LOGPROBS_IN_OLLAMA})


@require_GET
@vary_on_headers("HX-Request")
def comparison_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    job = _get_job(pk)
    level = request.GET.get("level", "dataset")
    coefficient = request.GET.get("coef", "spearman")
    context = {
        "job": job, "progress": job_progress(job), "grid": correlation_grid(job, level=level, coefficient=coefficient),
        "levels": LEVELS, "coefficients": COEFFICIENTS, "checklist": (job.results or {}).get("checklist", {}),
        "tests": (job.results or {}).get("paired_tests", []), "results": job.results or {},
        "no_logprobs": NO_LOGPROBS_IN_OLLAMA,
    }
    return job_page(request, job, "comparison/detail.html", "job-progress", context, reload_when_finished=True)



@require_GET
def comparison_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    require_researcher(request)
    job = _get_job(pk)
    if job.status != JobStatus.DONE:
        raise Http404("The job has no results yet.")
    name = f"comparison-{job.pk}"
    if fmt == "json":
        response = HttpResponse(json.dumps(export_document(job), ensure_ascii=False),
                                content_type="application/json")
    elif fmt == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        sheet_writer(response).writerows(csv_rows(job))
    else:
        raise Http404("Unknown format.")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@require_GET
def comparison_plot(request: HttpRequest, pk: int, name: str, fmt: str) -> HttpResponse:
    require_researcher(request)
    job = _get_job(pk)
    if name not in plots.PLOTS or fmt not in ("svg", "png"):
        raise Http404("Unknown plot or format.")
    if name == "correlations":
        fig = plots.correlations_plot(job, request.GET.get("level", "dataset"), request.GET.get("coef", "spearman"))
    else:
        fig = plots.PLOTS[name](job)
    if fig is None:
        raise Http404("Nothing to plot.")
    return HttpResponse(plots.render(fig, fmt), content_type="image/svg+xml" if fmt == "svg" else "image/png")
