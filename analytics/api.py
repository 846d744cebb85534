"""Analytics API: every dashboard table of a campaign or dataset, as JSON (or one table as CSV)."""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from ninja import Query, Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import paginate
from pydantic import create_model

from accounts.access import require_researcher
from analytics.compare.gamma import RETRY_AFTER_SECONDS, GammaQuestion, check_aspect, gamma_answer
from analytics.compare.sources import available_sources, comparison_csv, sources_compare
from analytics.exports.formats import FORMATS
from analytics.exports.jobs import export_file, export_job_create
from analytics.selectors import DEFAULT_RESAMPLES, DashboardData, Scope
from analytics.selectors.cache import cached_dashboard_data
from analytics.tables import TABLE_BUILDERS, Table, dashboard_tables
from annotator.models import Assignment, Campaign
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset, ExportJob
from errors import UserError

# A seed outside 0..2**31-1 is a 422 naming the parameter (numpy refuses negative seeds with a 500 otherwise).
_SEED = Query(0, ge=0, le=2**31 - 1, description="bootstrap seed, 0..2**31-1")

router = Router(tags=["analytics"])
# Comparing sources and exports live beside the datasets (/api/datasets/ID/compare, /api/exports/ID).
datasets_router = Router(tags=["sources and exports"])
MAX_RESAMPLES = 10_000


class ColumnOut(Schema):
    key: str
    label: str
    kind: str


class TableOut(Schema):
    key: str
    title: str
    note: str
    columns: list[ColumnOut]
    rows: list[dict[str, Any]]


class DashboardOut(Schema):
    campaign_id: int | None
    dataset_id: int | None
    aspect: str
    system: str
    reference: str
    references: list[str]
    resamples: int
    seed: int
    tables: list[TableOut]



def _compute(scope: Scope, reference: str, resamples: int, seed: int) -> DashboardData:
    if not 0 <= resamples <= MAX_RESAMPLES:
        raise UserError(f"resamples must be between 0 and {MAX_RESAMPLES}")
    return cached_dashboard_data(scope, reference=reference, n_resamples=resamples, seed=seed)


def _dashboard_out(data: DashboardData, resamples: int, seed: int) -> dict[str, Any]:
    return {
        "campaign_id": data.scope.campaign_id, "dataset_id": data.scope.dataset_id, "aspect": data.scope.aspect,
        "system": data.scope.system, "reference": data.reference_value,
        "references": [value for value, _ in data.references], "resamples": resamples, "seed": seed,
        "tables": [t.as_dict() for t in dashboard_tables(data)],
    }


def _one_table(data: DashboardData, key: str, format: str) -> dict[str, Any] | HttpResponse:
    if key not in TABLE_BUILDERS:
        raise HttpError(404, f"unknown table {key!r}; tables: {', '.join(TABLE_BUILDERS)}")
    table: Table = TABLE_BUILDERS[key](data)
    if format == "csv":
        return HttpResponse(table.to_csv(), content_type="text/csv; charset=utf-8")
    if format != "json":
        raise UserError("format must be json or csv")
    return table.as_dict()


def _campaign_scope(request: HttpRequest, campaign_id: int, aspect: str, system: str) -> Scope:
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return Scope(campaign_id=campaign.pk, aspect=aspect, system=system)


def _dataset_scope(request: HttpRequest, dataset_id: int, campaign: int | None, aspect: str, system: str) -> Scope:
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if campaign is not None:
        get_object_or_404(Campaign, pk=campaign, dataset=dataset)
    return Scope(dataset_id=dataset.pk, campaign_id=campaign, aspect=aspect, system=system)


@router.get("/campaigns/{campaign_id}", response=DashboardOut, operation_id="retrieve_campaign_analytics")
def retrieve_campaign_analytics(
    request: HttpRequest, campaign_id: int, aspect: str = "", system: str = "", reference: str = "",
    resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
):
    """All tables of a campaign's dashboard (Table 4 with CIs, flags, agreement, overlap, calibration, scores)."""
    scope = _campaign_scope(request, campaign_id, aspect, system)
    return _dashboard_out(_compute(scope, reference, resamples, seed), resamples, seed)


@router.get(
    "/campaigns/{campaign_id}/tables/{key}", response=TableOut, operation_id="retrieve_campaign_analytics_table"
)
def retrieve_campaign_analytics_table(
    request: HttpRequest, campaign_id: int, key: str, format: str = "json", aspect: str = "", system: str = "",
    reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
):
    scope = _campaign_scope(request, campaign_id, aspect, system)
    return _one_table(_compute(scope, reference, resamples, seed), key, format)


@router.get("/datasets/{dataset_id}", response=DashboardOut, operation_id="retrieve_dataset_analytics")
def retrieve_dataset_analytics(
    request: HttpRequest, dataset_id: int, campaign: int | None = None, aspect: str = "", system: str = "",
    reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
):
    """All tables of a dataset's dashboard: its runs over all its campaigns (or one), gold overlap, scores."""
    scope = _dataset_scope(request, dataset_id, campaign, aspect, system)
    return _dashboard_out(_compute(scope, reference, resamples, seed), resamples, seed)


@router.get("/datasets/{dataset_id}/tables/{key}", response=TableOut, operation_id="retrieve_dataset_analytics_table")
def retrieve_dataset_analytics_table(
    request: HttpRequest, dataset_id: int, key: str, format: str = "json", campaign: int | None = None,
    aspect: str = "", system: str = "", reference: str = "", resamples: int = DEFAULT_RESAMPLES, seed: int = _SEED,
):
    scope = _dataset_scope(request, dataset_id, campaign, aspect, system)
    return _one_table(_compute(scope, reference, resamples, seed), key, format)


# ---- comparing sources, export jobs -------------------------------------------------------------------------


class SourceOut(Schema):
    name: str
    kind: str


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


def _job_out(job: ExportJob) -> ExportJobOut:
    return ExportJobOut(id=job.pk, dataset_id=job.dataset_id, format=job.format, filters=job.filters,
                        status=job.status, done=job.done, total=job.total, files=job.files, message=job.message)


@datasets_router.get("/datasets/{dataset_id}/sources", response=list[SourceOut], operation_id="list_sources")
@paginate
def list_sources(request: HttpRequest, dataset_id: int):
    """The names `compare` accepts: runs, imported files (external, gold, import) and campaign humans."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return [SourceOut(name=s.name, kind=s.kind) for s in available_sources(dataset)]


class GammaPendingOut(Schema):
    state: str
    detail: str
    retry_after: int


@datasets_router.get("/datasets/{dataset_id}/compare",
                     response={200: list[dict[str, Any]], 202: GammaPendingOut, 409: GammaPendingOut},
                     operation_id="compare_sources")
def compare_sources(
    request: HttpRequest, dataset_id: int, reference: str, sources: str = "", categories: bool = False,
    gamma: bool = False, aspect: str = "", format: str = "json",
):
    """`manage.py compare_sources` over HTTP; an unknown reference or source is a 422 naming the sources there are.
    With gamma=true a worker computes the figures (pygamma-agreement takes minutes): 202 with a Retry-After
    until the result is ready, then 200 with it (analytics.compare.gamma)."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if format not in ("json", "csv"):
        raise UserError("format must be json or csv")
    names = [n.strip() for n in sources.split(",") if n.strip()]
    check_aspect(dataset, aspect)
    # without gamma, quick: it checks the names (UnknownSource, a 422) before anything is queued
    rows = sources_compare(dataset, reference=reference, sources=names, by_category=categories, gamma=False,
                           aspect=aspect)
    if gamma:
        answer = gamma_answer(GammaQuestion(dataset_id=dataset.pk, reference=reference, sources=tuple(names),
                                            by_category=categories, aspect=aspect), user_id=request.user.pk)
        if answer.state != "done":
            status = 202 if answer.state == "pending" else 409
            response = JsonResponse({"state": answer.state, "detail": answer.detail,
                                     "retry_after": RETRY_AFTER_SECONDS}, status=status)
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        order = {name: n for n, name in enumerate(names)}  # the result is stored once for every order asked
        rows = sorted(answer.rows or [], key=lambda r: order.get(r.get("source"), len(order)))
    if format == "csv":
        return HttpResponse(comparison_csv(rows), content_type="text/csv; charset=utf-8")
    return rows


@datasets_router.post("/datasets/{dataset_id}/exports", response={202: ExportJobOut}, operation_id="create_export")
def create_export(request: HttpRequest, dataset_id: int, payload: ExportIn):
    """Queue an export (any format, with filters) for a worker; poll `GET /exports/ID`, then download its files."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if payload.campaign_id is not None:
        get_object_or_404(Campaign, pk=payload.campaign_id, dataset=dataset)
    if payload.format not in FORMATS:
        raise UserError(f"format must be one of {', '.join(FORMATS)}")
    if payload.status and payload.status not in Assignment.Status.values:
        raise UserError(f"status must be one of {', '.join(Assignment.Status.values)}")
    keep = ExportFilter(**payload.dict(exclude={"format"}))
    problems = keep.problems(dataset)
    if problems:
        raise UserError("; ".join(problems))
    return Status(202, _job_out(export_job_create(dataset=dataset, fmt=payload.format, keep=keep, user=request.user)))


@datasets_router.get("/exports", response=list[ExportJobOut], operation_id="list_exports")
@paginate
def list_exports(request: HttpRequest):
    require_researcher(request)
    return [_job_out(job) for job in ExportJob.objects.order_by("-pk")]


@datasets_router.get("/exports/{job_id}", response=ExportJobOut, operation_id="retrieve_export")
def retrieve_export(request: HttpRequest, job_id: int):
    require_researcher(request)
    return _job_out(get_object_or_404(ExportJob, pk=job_id))


@datasets_router.get("/exports/{job_id}/files/{name}", operation_id="download_export_file")
def download_export_file(request: HttpRequest, job_id: int, name: str):
    """One file of a finished export (the export, the data card, a labeling config or campaign metadata)."""
    require_researcher(request)
    path = export_file(get_object_or_404(ExportJob, pk=job_id), name)
    if path is None:
        raise HttpError(404, f"no file {name!r} in a finished export {job_id}")
    return FileResponse(path.open("rb"), as_attachment=True, filename=name)
