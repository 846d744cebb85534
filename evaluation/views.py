"""Pages of the evaluation app: launching evaluator runs and following them live (htmx polling)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from accounts.access import require_admin, require_researcher
from corpus import cleaning
from corpus.models import Dataset
from errors import UserError
from errors.placing import refusal_place
from evaluation.forms import RunLaunchForm
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from evaluation.selectors import run_progress
from jobs.lifecycle import job_queue
from jobs.views import job_page


def _get_run(pk: int) -> EvaluatorRun:
    return get_object_or_404(EvaluatorRun.objects.select_related("evaluator", "dataset", "aspect"), pk=pk)


@require_GET
@vary_on_headers("HX-Request")
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    run = _get_run(pk)
    return job_page(request, run, "evaluation/run_detail.html", "run-progress",
                    {"run": run, "progress": run_progress(run)})


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def run_new(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    given = request.POST if request.method == "POST" else request.GET
    dataset = Dataset.objects.filter(pk=cleaning.as_id(given.get("dataset", ""))).first() \
        if cleaning.as_id(given.get("dataset", "")) else None
    show_all = given.get("all_aspects") in ("on", "true", "1")
    if request.method == "POST":
        form = RunLaunchForm(request.POST, dataset=dataset, show_all=show_all)
    else:  # a re-render for a picked dataset keeps what was typed so far (hx-include)
        initial = {key: value for key, value in request.GET.items() if key in RunLaunchForm.base_fields}
        form = RunLaunchForm(initial=initial, dataset=dataset, show_all=show_all)
    if request.method == "POST" and form.is_valid():
        annotators, supervisor = form.models()
        try:
            run = run_create(
                dataset=form.cleaned_data["dataset"], aspect_name=form.cleaned_data["aspect"].strip(),
                annotators=annotators, supervisor=supervisor, ollama_url=form.cleaned_data["ollama_url"] or None,
                parallel=form.cleaned_data["parallel"], outlier_rule=form.cleaned_data["outlier_rule"],
                mode=form.cleaned_data["mode"], preset=form.cleaned_data["preset"] or None,
                answer_format=form.cleaned_data["answer_format"] or None, user=request.user,
            )
        except UserError as exc:
            refusal_place(form, exc)
        else:
            job_queue(run)
            messages.success(request, f"Evaluator run {run.label} queued.")
            return redirect("run_detail", pk=run.pk)
    template = "evaluation/run_new.html#run-form" if getattr(request, "htmx", False) else "evaluation/run_new.html"
    return render(request, template, {"form": form})

