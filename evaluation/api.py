"""Evaluation API: launch and follow evaluator runs (twins of the job pages; Cancel and Resume come from the
run's kind, evaluation/jobs.py)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Status
from ninja.pagination import paginate

from accounts.access import require_admin, require_researcher
from corpus.models import Dataset
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from evaluation.schemas import ErrorOut, RunIn, RunOut, RunProgressOut
from evaluation.selectors import run_progress, runs_for_home
from jobs.lifecycle import job_queue

router = Router(tags=["runs"])


def run_out(run: EvaluatorRun) -> RunOut:
    return RunOut(
        id=run.pk, label=run.label, evaluator=run.evaluator.name, dataset=run.dataset.name, aspect=run.aspect.name,
        status=run.status, done_calls=run.done, total_calls=run.total,
    )


@router.get("/runs", response=list[RunOut], operation_id="list_runs")
@paginate
def list_runs(request: HttpRequest):
    require_researcher(request)
    return [run_out(r) for r in runs_for_home()]


@router.get("/runs/{run_id}", response=RunProgressOut, operation_id="retrieve_run")
def retrieve_run(request: HttpRequest, run_id: int):
    require_researcher(request)
    return run_progress(get_object_or_404(EvaluatorRun, pk=run_id))


@router.post("/runs", response={201: RunOut, 404: ErrorOut}, operation_id="create_run")
def create_run(request: HttpRequest, payload: RunIn):
    """Check every server and its models, place them, then queue the ensemble job (like `manage.py preannotate`)."""
    require_admin(request)
    dataset = Dataset.objects.filter(name=payload.dataset).first()
    if dataset is None:
        names = ", ".join(repr(n) for n in Dataset.objects.values_list("name", flat=True)[:20]) or "none yet"
        return Status(404, {"detail": f"no dataset named {payload.dataset!r} (datasets: {names})"})
    run = run_create(
        dataset=dataset, aspect_name=payload.aspect, annotators=payload.annotators,
        supervisor=payload.supervisor, ollama_url=payload.ollama_url, parallel=payload.parallel,
        outlier_rule=payload.outlier_rule, mode=payload.mode, preset=payload.preset, user=request.user,
        answer_format=payload.answer_format, repair=payload.repair,
    )
    job_queue(run)
    return Status(201, run_out(EvaluatorRun.objects.select_related("evaluator", "dataset", "aspect").get(pk=run.pk)))

