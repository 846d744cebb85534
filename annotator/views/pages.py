"""Pages of the annotation app: the home page by role and dataset pages."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotator.forms import AnnotationImportForm, DatasetImportForm
from annotator.selectors.campaigns import campaigns_visible_to, datasets_for_home
from annotator.services.exporting import export_csv, export_jsonl
from annotator.services.uploads import UploadTooLarge, upload_annotations_import, upload_import
from annotator.views.common import AppRequest
from annotator.views.common import require_researcher as _require_researcher
from corpus.downloads import whole_download
from corpus.formats import FormatError, named
from corpus.formats.errors import FILE
from corpus.models import Dataset
from corpus.spreadsheet import download_filename
from errors.placing import form_field
from evaluation.selectors import runs_for_home
from jobs.selectors import worker_silence


@require_GET
def home(request: AppRequest) -> HttpResponse:
    user = request.user
    context = {"campaigns": campaigns_visible_to(user)}
    if user.sees_everything:
        context["datasets"] = datasets_for_home()
        context["runs"] = runs_for_home()[:20]
    if user.is_admin_role:
        context["worker_silence"] = worker_silence(queue=settings.CELERY_TASK_DEFAULT_QUEUE,
                                                   minutes=settings.WORKER_SILENCE_MINUTES)
    return render(request, "annotator/home.html", context)


@require_GET
def dataset_export(request: AppRequest, pk: int, fmt: str) -> HttpResponseBase:
    _require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=pk)
    if fmt not in ("jsonl", "csv"):
        raise Http404("Export formats: jsonl, csv.")
    name = download_filename(f"{dataset.pk}-{dataset.name[:40]}", fallback=f"dataset-{dataset.pk}")
    if fmt == "csv":
        return whole_download(export_csv(dataset), content_type="text/csv; charset=utf-8", filename=f"{name}.csv")
    return whole_download(export_jsonl(dataset), content_type="application/x-ndjson; charset=utf-8",
                          filename=f"{name}.jsonl")


@require_http_methods(["GET", "POST"])
def dataset_import(request: AppRequest) -> HttpResponse:
    """Upload an item file; a bad file is refused with the line and field, and nothing of it is kept."""
    _require_researcher(request)
    form = DatasetImportForm(request.POST or None, request.FILES or None)
    status = 400 if request.method == "POST" else 200
    if request.method == "POST" and form.is_valid():
        name = form.cleaned_data["dataset"].strip()
        try:
            report = upload_import(
                upload=form.cleaned_data["file"], dataset_name=name, task_slug=form.cleaned_data["task"].slug,
                source=form.cleaned_data["source"].strip(), aspect=form.cleaned_data["aspect"].strip(),
                user=request.user,
            )
        except FormatError as exc:
            _import_refused(form, exc, form.cleaned_data["file"].name)
            status = 413 if isinstance(exc, UploadTooLarge) else 400
        else:
            messages.success(
                request, f"Imported {report.created_items} new items ({report.reused_items} existing), "
                f"{report.annotations} annotations, {report.spans} spans, {report.judgments} judgments.",
            )
            return redirect("dataset_detail", pk=Dataset.objects.get(name=name).pk)
    return render(request, "annotator/dataset_import.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
def annotations_import(request: AppRequest, pk: int) -> HttpResponse:
    """Upload another tool's annotations of this dataset; every problem of a refused file is listed."""
    _require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=pk)
    form = AnnotationImportForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            report = upload_annotations_import(
                upload=upload, dataset_name=dataset.name, source=form.cleaned_data["source"].strip(),
                fmt=form.cleaned_data["format"], skip_bad_spans=form.cleaned_data["skip_bad_spans"],
                split=form.cleaned_data["split"], annotators=form.cleaned_data["map_annotator"],
            )
        except FormatError as exc:
            _import_refused(form, exc, upload.name)
            status = 413 if isinstance(exc, UploadTooLarge) else 400
        else:
            messages.success(request, report.summary())
            return redirect("dataset_detail", pk=dataset.pk)
    elif request.method == "POST":
        status = 400
    return render(request, "annotator/annotations_import.html", {"form": form, "dataset": dataset}, status=status)


def _import_refused(form: forms.Form, exc: FormatError, file_name: str) -> None:
    """Show an import's refusal at its field: a problem of the file at the file (named by its own name, never
    a temporary path), one of an option beside it at that option; nothing of the file was kept either way."""
    field = form_field(exc, form.fields)
    text = str(exc) if field not in (None, FILE) else named(exc, file_name)
    form.add_error(field, f"{text} - nothing was imported.")
