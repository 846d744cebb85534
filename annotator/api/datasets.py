"""Datasets in the API: list, import items and other tools' annotations, list items, export."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.pagination import paginate

from accounts.access import require_researcher
from annotator.models import Campaign
from annotator.schemas import AnnotationImportOut, DatasetOut, ImportOut, ItemOut
from annotator.selectors.campaigns import datasets_for_home
from annotator.services.exporting import ExportFilter, export_csv, export_jsonl
from annotator.services.uploads import UploadTooLarge, upload_annotations_import, upload_import
from corpus.downloads import whole_download
from corpus.formats import FormatError, named
from corpus.models import Dataset
from corpus.services.annotation_import import annotator_map
from errors import UserError

router = Router(tags=["datasets"])


@router.get("/datasets", response=list[DatasetOut], operation_id="list_datasets")
@paginate
def list_datasets(request: HttpRequest):
    require_researcher(request)
    return [
        DatasetOut(
            id=d.pk, name=d.name, task=d.task.slug, input_headers=d.input_headers, output_header=d.output_header,
            score_aspects=d.score_aspects, n_items=d.n_items,
        )
        for d in datasets_for_home()
    ]


@router.post("/datasets/import", response={201: ImportOut}, operation_id="import_items")
def import_items(
    request: HttpRequest, file: File[UploadedFile], dataset: Form[str], task: Form[str], source: Form[str] = "gold",
    aspect: Form[str] = "",
):
    """Import an item file (multipart upload), exactly like `manage.py import_items`; 422 names line and field."""
    require_researcher(request)
    try:
        report = upload_import(upload=file, dataset_name=dataset.strip(), task_slug=task, source=source.strip(),
                               aspect=aspect.strip(), user=request.user)
    except FormatError as exc:
        raise HttpError(413 if isinstance(exc, UploadTooLarge) else 422,
                        f"{named(exc, file.name or 'the upload')} - nothing was imported") from None
    ds = Dataset.objects.get(name=dataset.strip())
    return Status(201, ImportOut(dataset_id=ds.pk, dataset=ds.name, created_items=report.created_items,
                                 reused_items=report.reused_items, annotations=report.annotations,
                                 spans=report.spans, judgments=report.judgments))


@router.get("/datasets/{dataset_id}/items", response=list[ItemOut], operation_id="list_items")
@paginate
def list_items(request: HttpRequest, dataset_id: int):
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return dataset.items.filter(derived_from__isnull=True).order_by("position")


@router.get("/datasets/{dataset_id}/export", operation_id="export_dataset")
def export_dataset(request: HttpRequest, dataset_id: int, format: str = "jsonl", campaign: int | None = None):
    """The dataset in the `export_items` format (jsonl or csv; see the docs' Export formats); `campaign`
    keeps that campaign's items and judgments and takes the consensus from it (as `--campaign` does), else the
    consensus comes from the dataset's labeling campaign."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    if campaign is not None:
        get_object_or_404(Campaign, pk=campaign, dataset=dataset)
    keep = ExportFilter(campaign_id=campaign)
    name = f"dataset-{dataset.pk}.{'csv' if format == 'csv' else 'jsonl'}"
    if format == "csv":
        return whole_download(export_csv(dataset, keep), content_type="text/csv; charset=utf-8", filename=name)
    return whole_download(export_jsonl(dataset, keep), content_type="application/x-ndjson; charset=utf-8",
                          filename=name)


@router.post("/datasets/{dataset_id}/annotations", response={201: AnnotationImportOut},
             operation_id="import_annotations")
def import_annotations(
    request: HttpRequest, dataset_id: int, file: File[UploadedFile], source: Form[str],
    format: Form[str] = "jsonl", skip_bad_spans: Form[bool] = False, split: Form[str] = "",
    map_annotator: Form[list[str] | None] = None,
):
    """Import another tool's annotations of this dataset's items, exactly like `manage.py import_annotations`
    (`split` and `map_annotator` - repeated "ID=NAME" fields - are its --split and --map-annotator);
    422 lists every problem of the file (line, span index) or names the bad mapping entry."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    try:
        annotators = annotator_map(map_annotator or [], place="map_annotator entry")
    except FormatError as exc:
        raise UserError(f"{exc} - nothing was imported", field=exc.field) from None
    try:
        report = upload_annotations_import(
            upload=file, dataset_name=dataset.name, source=source.strip(), fmt=format, skip_bad_spans=skip_bad_spans,
            split=split.strip(), annotators=annotators,
        )
    except FormatError as exc:
        raise HttpError(413 if isinstance(exc, UploadTooLarge) else 422,
                        f"{named(exc, file.name or 'the upload')} - nothing was imported") from None
    return Status(201, AnnotationImportOut(
        dataset=report.dataset, source=report.source, tool=report.tool, annotations=report.annotations,
        spans=report.spans, normalized=report.normalized, no_error_outputs=report.no_error_outputs,
        skipped=report.skipped,
    ))
