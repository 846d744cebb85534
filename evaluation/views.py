"""Pages of the evaluation app: launching ensemble runs and following them live (htmx polling)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from accounts.access import require_admin, require_researcher
from evaluation.forms import RunLaunchForm
from evaluation.models import EvaluatorRun, RunStatus
from evaluation.runs.launch import LaunchError, run_cancel, run_create, run_enqueue, run_resume
from evaluation.selectors import run_progress


def _get_run(pk: int) -> EvaluatorRun:
    return get_object_or_404(EvaluatorRun.objects.select_related("evaluator", "dataset", "aspect"), pk=pk)


@require_GET
@vary_on_headers("HX-Request")
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    run = _get_run(pk)
    context = {"run": run, "progress": run_progress(run)}
    if request.htmx:
        response = render(request, "evaluation/run_detail.html#run-progress", context)
        # Stop polling once the job has ended, after sending its final state.
        return HttpResponseStopPolling(response.content) if run.is_finished() else response
    return render(request, "evaluation/run_detail.html", context)


@require_http_methods(["GET", "POST"])
def run_new(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    form = RunLaunchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        annotators, supervisor = form.models()
        try:
            run = run_create(
                dataset=form.cleaned_data["dataset"], aspect_name=form.cleaned_data["aspect"].strip(),
                annotators=annotators, supervisor=supervisor, ollama_url=form.cleaned_data["ollama_url"] or None,
                parallel=form.cleaned_data["parallel"], outlier_rule=form.cleaned_data["outlier_rule"],
                mode=form.cleaned_data["mode"], preset=form.cleaned_data["preset"] or None,
                user=request.user,
            )
        except LaunchError as exc:
            form.add_error(None, str(exc))
        else:
            run_enqueue(run)
            messages.success(request, f"Run {run.label} queued.")
            return redirect("run_detail", pk=run.pk)
    return render(request, "evaluation/run_new.html", {"form": form})


@require_POST
def run_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    run = _get_run(pk)
    if run_cancel(run=run):
        run.refresh_from_db(fields=["status", "message"])
        if run.status == RunStatus.CANCELLED:
            messages.info(request, run.message)
        else:
            messages.info(request, "Cancellation requested; the job stops at its next checkpoint.")
    else:
        messages.warning(request, f"The run is {run.get_status_display().lower()} and cannot be cancelled.")
    return redirect("run_detail", pk=pk)


@require_POST
def run_resume_view(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    run = _get_run(pk)
    if run_resume(run=run):
        messages.success(request, "Resumed: finished calls come from the cache.")
    else:
        messages.warning(request, "Only paused or failed runs can be resumed.")
    return redirect("run_detail", pk=pk)
