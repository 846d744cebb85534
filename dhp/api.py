"""DHP API: launch and follow runs, read their p-values and discernment, export, survey results."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Status

from accounts.access import require_admin, require_researcher
from corpus.models import Dataset
from dhp.engine.kinds import get_kind, parse_kinds
from dhp.models import DhpRun, Survey
from dhp.schemas import DhpRunIn, DhpRunOut, ErrorOut, SurveyResultsOut
from dhp.selectors import export_record, survey_results
from dhp.services.runs import dhp_create
from jobs.lifecycle import job_queue

router = Router(tags=["dhp"])


def run_out(run: DhpRun) -> DhpRunOut:
    results = run.results or {}
    return DhpRunOut(
        id=run.pk, dataset=run.dataset.name, evaluator=run.evaluator, metrics=run.metrics, kinds=run.kinds,
        samples=run.samples, seed=run.seed, status=run.status, phase=run.stage, message=run.message,
        notes=run.notes, done_steps=run.done, total_steps=run.total, llm_calls=run.llm_calls,
        cache_hits=run.cache_hits, weights_version=run.weights.version if run.weights_id else None,
        survey=run.survey_id, perturbations=results.get("perturbations", []), summary=results.get("summary", {}),
    )


@router.get("/dhp/runs/{run_id}", response=DhpRunOut, operation_id="retrieve_dhp_run")
def retrieve_dhp_run(request: HttpRequest, run_id: int):
    require_researcher(request)
    return run_out(get_object_or_404(DhpRun.objects.select_related("dataset", "weights"), pk=run_id))


@router.get("/dhp/runs/{run_id}/export", operation_id="export_dhp_run")
def export_dhp_run(request: HttpRequest, run_id: int):
    """The `export_dhp --format json` object."""
    require_researcher(request)
    run = get_object_or_404(DhpRun.objects.select_related("dataset", "weights"), pk=run_id)
    return export_record(run)


@router.post("/dhp/runs", response={201: DhpRunOut, 404: ErrorOut}, operation_id="create_dhp_run")
def create_dhp_run(request: HttpRequest, body: DhpRunIn):
    require_admin(request)
    dataset = Dataset.objects.select_related("task").filter(name=body.dataset).first()
    if dataset is None:
        return Status(404, {"detail": f"no dataset named {body.dataset!r}"})
    survey = None
    if body.survey is not None:
        survey = Survey.objects.filter(pk=body.survey).first()
        if survey is None:
            return Status(404, {"detail": f"no survey with id {body.survey}"})
    kinds = [get_kind(k) for k in body.kinds] if body.kinds else parse_kinds(None)
    run = dhp_create(
        dataset=dataset, evaluator=body.evaluator, metrics=body.metrics, kinds=kinds, samples=body.samples,
        survey=survey, seed=body.seed, ollama_url=body.ollama_url, parallel=body.parallel, user=request.user,
        preset=body.preset,
    )
    job_queue(run)
    return Status(201, run_out(run))


@router.get("/dhp/surveys/{survey_id}/results", response=SurveyResultsOut, operation_id="retrieve_survey_results")
def retrieve_survey_results(request: HttpRequest, survey_id: int):
    require_admin(request)
    survey = get_object_or_404(Survey.objects.select_related("task"), pk=survey_id)
    results = survey_results(survey)
    return SurveyResultsOut(
        id=survey.pk, task=survey.task.slug, status=survey.status, metrics=results.metrics,
        n_experts=results.n_experts, n_invited=results.n_invited, alpha=results.alpha,
        issues=[{"issue": i.issue, "title": i.title, "counts": i.counts, "shares": i.shares} for i in results.issues],
        weight_versions=list(survey.weight_versions.values_list("version", flat=True)),
    )
