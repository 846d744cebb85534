"""Comparison API: launch, follow and export metric comparison jobs (twins of the pages; Cancel and Resume come
from the job's kind, comparison/jobs.py)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Status
from ninja.pagination import paginate

from accounts.access import require_admin, require_researcher
from comparison.models import ComparisonJob
from comparison.schemas import ComparisonIn, ComparisonOut, ErrorOut
from comparison.selectors import job_progress, jobs_for_list
from comparison.services.jobs import comparison_create
from comparison.services.results import export_document
from corpus.models import Dataset
from jobs.lifecycle import job_queue
from jobs.models import JobStatus

router = Router(tags=["comparisons"])


def _job(job_id: int) -> ComparisonJob:
    return get_object_or_404(ComparisonJob.objects.select_related("dataset"), pk=job_id)


@router.get("/comparisons", response=list[ComparisonOut], operation_id="list_comparisons")
@paginate
def list_comparisons(request: HttpRequest):
    """Comparison jobs, newest first, paginated like every list (`?limit=`, `?offset=`)."""
    require_researcher(request)
    return [job_progress(j) for j in jobs_for_list()]


@router.post("/comparisons", response={201: ComparisonOut, 404: ErrorOut},
             operation_id="create_comparison")
def create_comparison(request: HttpRequest, payload: ComparisonIn):
    """Check the metrics, aspects and servers, then queue the job (like `manage.py compare_metrics`)."""
    require_admin(request)
    dataset = Dataset.objects.filter(name=payload.dataset).first()
    if dataset is None:
        return Status(404, {"detail": f"no dataset named {payload.dataset!r}"})
    job = comparison_create(dataset=dataset, metrics=payload.metrics, aspects=payload.aspects,
                            ollama_url=payload.ollama_url, gptscore_url=payload.gptscore_url,
                            precision=payload.precision, user=request.user)
    job_queue(job)
    return Status(201, job_progress(_job(job.pk)))


@router.get("/comparisons/{job_id}", response=ComparisonOut, operation_id="retrieve_comparison")
def retrieve_comparison(request: HttpRequest, job_id: int):
    require_researcher(request)
    return job_progress(_job(job_id))


@router.get("/comparisons/{job_id}/results", response={200: dict, 409: ErrorOut}, operation_id="export_comparison")
def export_comparison(request: HttpRequest, job_id: int):
    """The same document as `manage.py export_comparison --format json`."""
    require_researcher(request)
    job = _job(job_id)
    if job.status != JobStatus.DONE:
        return Status(409, {"detail": f"comparison {job.pk} is {job.status}; it has no results yet"})
    return Status(200, export_document(job))

