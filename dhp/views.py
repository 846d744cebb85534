"""DHP pages: runs (launch, progress, results like the paper's Fig. 4, perturbed pairs), and expert-weight
surveys (create, answer, results like Fig. 6, close). Researchers and admins read results; only admins
manage surveys and launch runs; experts see the surveys they are invited to and nothing else of DHP."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.access import AccessError, require_admin, require_researcher
from corpus.models import Dataset, Item
from dhp import plots
from dhp.engine.kinds import BASE_KINDS, get_kind, parse_kinds
from dhp.forms import InviteForm, RunForm, SurveyForm
from dhp.models import DhpRun, Survey, SurveyVote
from dhp.rendering import diff_html
from dhp.selectors import dataset_summary, run_weights, survey_results, surveys_for
from dhp.services.runs import dhp_create
from dhp.services.surveys import survey_close, survey_create, survey_for_expert, survey_invite, votes_save
from errors import UserError
from errors.placing import refusal_place
from jobs.lifecycle import job_queue
from jobs.views import job_page


def _run(pk: int) -> DhpRun:
    return get_object_or_404(DhpRun.objects.select_related("dataset__task", "weights__survey"), pk=pk)


@require_GET
def dhp_home(request: HttpRequest) -> HttpResponse:
    """Researchers see runs and surveys; an annotator sees only the surveys they are invited to."""
    runs = DhpRun.objects.select_related("dataset")[:50] if request.user.sees_everything else []
    return render(request, "dhp/home.html", {"runs": runs, "surveys": surveys_for(request.user)})


@require_http_methods(["GET", "POST"])
def run_new(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    form = RunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = dhp_create(
                dataset=data["dataset"], evaluator=data["evaluator"], metrics=data["metrics"].split(","),
                kinds=[get_kind(k) for k in data["kinds"]] or parse_kinds(None), samples=data["samples"],
                seed=data["seed"], survey=data["survey"], preset=data["preset"] or None,
                ollama_url=data["ollama_url"] or None, parallel=data["parallel"], user=request.user,
            )
        except UserError as exc:
            refusal_place(form, exc)
        else:
            job_queue(run)
            messages.success(request, f"DHP run {run.pk} queued.")
            return redirect("dhp_run", pk=run.pk)
    return render(request, "dhp/run_new.html", {"form": form})


@require_GET
@vary_on_headers("HX-Request")
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    run = _run(pk)
    results = run.results or {}
    perturbations = results.get("perturbations", [])
    plot = plots.discernment_plot(
        [p["kind"] for p in perturbations],
        {"D": [p["D"] for p in perturbations], **({"D (EW)": [p["D_ew"] for p in perturbations]} if run.weights_id
                                                   else {})},
        f"Discernment per perturbation: {run.evaluator}",
    ) if perturbations else None
    context = {"run": run, "results": results, "perturbations": perturbations, "plot": plot,
               "weights": run_weights(run)}
    return job_page(request, run, "dhp/run_detail.html", "dhp-progress", context)



@require_GET
def run_pairs(request: HttpRequest, pk: int) -> HttpResponse:
    """Originals beside their perturbed versions with the differences marked (researchers only)."""
    require_researcher(request)
    run = _run(pk)
    kind = request.GET.get("kind") or run.kinds[0]
    if kind not in run.kinds:
        raise AccessError.not_found(f"run {run.pk} has no perturbation {kind!r}")
    items = Item.objects.filter(
        dataset=run.dataset, derived_from__isnull=False, perturbation__kind=kind, perturbation__seed=run.seed,
        perturbation__k=run.sizes.get(kind),
    ).select_related("derived_from").order_by("derived_from__position")[:100]
    pairs = [(item, *diff_html(item.derived_from.output, item.output)) for item in items]
    return render(request, "dhp/run_pairs.html", {"run": run, "kind": kind, "pairs": pairs})


@require_GET
def dataset_results(request: HttpRequest, pk: int) -> HttpResponse:
    """Every evaluator's latest finished run on a dataset, side by side (the paper's Fig. 4)."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=pk)
    rows = dataset_summary(dataset)
    names = [r["evaluator"] for r in rows]
    plot = plots.discernment_plot(names, {
        key: [r["summary"].get(key) for r in rows] for key in ("D_avg", "D_min", "D_avg_ew", "D_min_ew")
    }, f"DHP discernment on {dataset.name}") if rows else None
    return render(request, "dhp/dataset.html", {"dataset": dataset, "rows": rows, "plot": plot})


# --- surveys -------------------------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
def survey_new(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    form = SurveyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            survey = survey_create(
                task=form.cleaned_data["task"], title=form.cleaned_data["title"], metrics=form.metric_list(),
                issues=form.cleaned_data["issues"] or None, experts=form.cleaned_data["experts"], user=request.user,
            )
        except UserError as exc:
            refusal_place(form, exc)
        else:
            messages.success(request, f"Survey {survey.pk} created.")
            return redirect("dhp_survey_results", pk=survey.pk)
    return render(request, "dhp/survey_new.html", {"form": form})


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def survey_answer(request: HttpRequest, pk: int) -> HttpResponse:
    """The expert's form: one question per quality issue, one choice among the metrics (the paper's Fig. 5)."""
    survey = survey_for_expert(request.user, pk, writable=request.method == "POST")
    error = ""
    if request.method == "POST":
        choices = {
            issue: request.POST[f"issue-{issue}"] for issue in survey.issues if request.POST.get(f"issue-{issue}")
        }
        try:
            votes_save(survey=survey, expert=request.user, choices=choices)
        except UserError as exc:
            error = str(exc)
    mine = dict(SurveyVote.objects.filter(survey=survey, expert=request.user).values_list("issue", "metric"))
    questions = [(BASE_KINDS[issue], mine.get(issue, "")) for issue in survey.issues]
    context = {"survey": survey, "questions": questions, "answered": len(mine), "error": error}
    if request.htmx:
        return render(request, "dhp/survey_answer.html#survey-form", context, status=422 if error else 200)
    return render(request, "dhp/survey_answer.html", context, status=422 if error else 200)


@require_GET
def survey_results_view(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    survey = get_object_or_404(Survey.objects.select_related("task"), pk=pk)
    results = survey_results(survey)
    plot = plots.survey_plot([i.title for i in results.issues], results.metrics, [i.shares for i in results.issues])
    return render(request, "dhp/survey_results.html", {
        "survey": survey, "results": results, "plot": plot,
        "versions": survey.weight_versions.all(), "invited": survey.invitations.select_related("expert"),
        "invite_form": InviteForm(),
    })


@require_POST
def survey_invite_view(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    survey = get_object_or_404(Survey, pk=pk)
    form = InviteForm(request.POST)
    if form.is_valid():
        survey_invite(survey=survey, experts=form.cleaned_data["experts"])
        messages.success(request, f"Invited {len(form.cleaned_data['experts'])} expert(s).")
    else:
        messages.warning(request, "Pick at least one existing user to invite.")
    return redirect("dhp_survey_results", pk=pk)


@require_POST
def survey_close_view(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    survey = get_object_or_404(Survey, pk=pk)
    version = survey_close(survey=survey)
    messages.success(request, f"Survey closed; weights frozen as version {version.version}." if version
                     else "Survey closed without answers.")
    return redirect("dhp_survey_results", pk=pk)
