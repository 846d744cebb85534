"""Export jobs of a dataset: queue one (any format, with filters), poll it, download its files."""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from django.http import FileResponse, HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import paginate
from pydantic import create_model

from accounts.access import require_researcher
from analytics.exports.formats import EXPORT_FORMATS
from analytics.exports.jobs import export_file, export_job_create
from analytics.models import ExportJob
from annotator.models import Assignment, Campaign
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset
from errors import UserError

# Beside the datasets (/api/datasets/ID/exports, /api/exports/ID), with comparing sources under one tag.
router = Router(tags=["sources and exports"])


def _export_in() -> type[Schema]:
    """The body of create_export: `format` and ExportFilter's fields, so a new filter is written once, there."""
    hints = get_type_hints(ExportFilter)
    filters: dict[str, Any] = {f.name: (hints[f.name], f.default) for f in dataclasses.fields(ExportFilter)}
    return create_model("ExportIn", __base__=Schema, format=(str, "jsonl"), **filters)


ExportIn = _export_in()


class ExportJobOut(Schema):
    id: int
    dataset_id: int
    format: str
    filters: dict[str, Any]
    status: str
    done: int
    total: int
    files: list[str]
    message: str


def export_job_out(job: ExportJob) -> ExportJobOut:
    return ExportJobOut(id=job.pk, dataset_id=job.dataset_id, format=job.format, filters=job.filters,
                        status=job.status, done=job.done, total=job.total, files=job.files, message=job.message)


@router.post("/datasets/{dataset_id}/exports", response={202: ExportJobOut}, operation_id="create_export")
def create_export(request: HttpRequest, dataset_id: int, payload: ExportIn):
    """Queue an export (any format, with filters) for a worker; poll `GET /exports/ID`, then download its files."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if payload.campaign_id is not None:
        get_object_or_404(Campaign, pk=payload.campaign_id, dataset=dataset)
    if payload.format not in EXPORT_FORMATS:
        raise UserError(f"format must be one of {', '.join(EXPORT_FORMATS)}", field="format")
    if payload.status and payload.status not in Assignment.Status.values:
        raise UserError(f"status must be one of {', '.join(Assignment.Status.values)}", field="status")
    keep = ExportFilter(**payload.dict(exclude={"format"}))
    if refusal := keep.refusal(dataset):
        raise refusal
    job = export_job_create(dataset=dataset, fmt=payload.format, keep=keep, user=request.user)
    return Status(202, export_job_out(job))


@router.get("/exports", response=list[ExportJobOut], operation_id="list_exports")
@paginate
def list_exports(request: HttpRequest):
    require_researcher(request)
    return [export_job_out(job) for job in ExportJob.objects.order_by("-pk")]


@router.get("/exports/{job_id}", response=ExportJobOut, operation_id="retrieve_export")
def retrieve_export(request: HttpRequest, job_id: int):
    require_researcher(request)
    return export_job_out(get_object_or_404(ExportJob, pk=job_id))


@router.get("/exports/{job_id}/files/{name}", operation_id="download_export_file")
def download_export_file(request: HttpRequest, job_id: int, name: str):
    """One file of a finished export (the export, the data card, a labeling config or campaign metadata)."""
    require_researcher(request)
    file = export_file(get_object_or_404(ExportJob, pk=job_id), name)
    if file is None:
        raise HttpError(404, f"no file {name!r} in a finished export {job_id}")
    return FileResponse(file, as_attachment=True, filename=name)
