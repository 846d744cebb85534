"""Annotation API: datasets, items and exports (the UI's twins)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router

from annotator.models import Dataset
from annotator.schemas import DatasetOut, ItemOut
from annotator.selectors import datasets_for_home
from annotator.services.exporting import export_csv, export_jsonl

router = Router(tags=["datasets"])


def _researcher(request: HttpRequest) -> None:
    if not request.user.sees_everything:
        raise PermissionDenied("Researchers and admins only.")


@router.get("/datasets", response=list[DatasetOut], operation_id="list_datasets")
def list_datasets(request: HttpRequest):
    _researcher(request)
    return [
        DatasetOut(
            id=d.pk, name=d.name, task=d.task.slug, input_headers=d.input_headers, output_header=d.output_header,
            score_aspects=d.score_aspects, n_items=d.n_items,
        )
        for d in datasets_for_home()
    ]


@router.get("/datasets/{dataset_id}/items", response=list[ItemOut], operation_id="list_items")
def list_items(request: HttpRequest, dataset_id: int, offset: int = 0, limit: int = 100):
    _researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    limit = max(1, min(limit, 1000))
    return list(dataset.items.order_by("position")[offset : offset + limit])


@router.get("/datasets/{dataset_id}/export", operation_id="export_dataset")
def export_dataset(request: HttpRequest, dataset_id: int, format: str = "jsonl"):
    """Stream the dataset in the export format of DESIGN.md (jsonl or csv)."""
    _researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if format == "csv":
        return StreamingHttpResponse(export_csv(dataset), content_type="text/csv; charset=utf-8")
    return StreamingHttpResponse(export_jsonl(dataset), content_type="application/x-ndjson; charset=utf-8")
