"""Export jobs: the browser's and the API's large exports, written by a Celery worker with progress."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.db import transaction

from analytics.exports.card import data_card
from analytics.exports.formats import EXPORT_FORMATS, EXTENSIONS, write_export
from analytics.models import ExportJob
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset
from corpus.services.annotation_export import ExportReport
from jobs.lifecycle import job_beat, job_checkpoint, job_queue
from jobs.models import JobStatus


def export_dir(job: ExportJob) -> Path:
    return Path(settings.EXPORT_DIR) / str(job.pk)


def job_filter(job: ExportJob) -> ExportFilter:
    return ExportFilter(**job.filters)


@transaction.atomic
def export_job_create(*, dataset: Dataset, fmt: str, keep: ExportFilter, user=None) -> ExportJob:
    """Record an export and queue it for a worker once the transaction commits (the task is sent by name)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(EXPORT_FORMATS)})")
    filters = {k: v for k, v in vars(keep).items() if v not in ("", None)}
    job = ExportJob.objects.create(
        dataset=dataset, format=fmt, filters=filters, created_by=user, total=keep.items(dataset).count()
    )
    job_queue(job)
    return job


def export_write(job: ExportJob) -> None:
    """Write the job's files (export + data card), from the start: an export keeps no partial state, so one
    a dead worker left is written again."""
    folder = export_dir(job)
    folder.mkdir(parents=True, exist_ok=True)
    keep = job_filter(job)
    # Each job's files get names of their own (a browser's download folder would otherwise overwrite one
    # export, or one data card, with the next): dataset, export number, and the format in the card's name.
    stem = f"{job.dataset.pk}-{_safe(job.dataset.name)}-export{job.pk}"
    path = folder / f"{stem}.{EXTENSIONS[job.format]}"
    report = ExportReport()
    files = write_export(job.dataset, job.format, keep, path, lambda done: job_checkpoint(ExportJob, job.pk, done=done),
                         report)
    card = folder / f"{stem}.{EXTENSIONS[job.format]}.card.json"
    content = data_card(job.dataset, keep, fmt=job.format, report=report)
    card.write_text(json.dumps(content, indent=1, ensure_ascii=False), "utf-8")
    files.append(card)
    job_beat(ExportJob, job.pk, files=[f.name for f in files], done=job.total)


def export_file(job: ExportJob, name: str) -> Path | None:
    """The path of one of a finished job's files, or None (names come from the job row, never from the URL)."""
    if job.status != JobStatus.DONE or name not in job.files:
        return None
    path = export_dir(job) / name
    return path if path.exists() else None


def _safe(name: str) -> str:
    """A file-name part from a dataset name: ASCII letters and digits, every other run of characters one
    hyphen ("Demo: restaurants (data-to-text)" -> "Demo-restaurants-data-to-text")."""
    kept = "".join(c if c.isascii() and c.isalnum() else "-" for c in name)
    return "-".join(part for part in kept.split("-") if part)[:40].strip("-") or "dataset"
