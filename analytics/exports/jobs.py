"""Export jobs: the browser's and the API's large exports, written by a Celery worker with progress."""

from __future__ import annotations

import json
import logging
from functools import partial
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analytics.exports.card import data_card
from analytics.exports.formats import EXTENSIONS, FORMATS, write_export
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset, ExportJob

EXPORT_TASK = "tasks.exporting.run_export"
log = logging.getLogger(__name__)


def export_dir(job: ExportJob) -> Path:
    return Path(settings.EXPORT_DIR) / str(job.pk)


def job_filter(job: ExportJob) -> ExportFilter:
    return ExportFilter(**job.filters)


@transaction.atomic
def export_job_create(*, dataset: Dataset, fmt: str, keep: ExportFilter, user=None) -> ExportJob:
    """Record an export and queue it for a worker once the transaction commits (the task is sent by name)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    filters = {k: v for k, v in vars(keep).items() if v not in ("", None)}
    job = ExportJob.objects.create(
        dataset=dataset, format=fmt, filters=filters, created_by=user, total=keep.items(dataset).count()
    )
    transaction.on_commit(partial(current_app.send_task, EXPORT_TASK, args=[job.pk]))
    return job


def export_job_run(job_id: int) -> str | None:
    """Write job `job_id`'s files (export + data card); claim it first so two workers never both write it."""
    if not ExportJob.objects.filter(pk=job_id, status=ExportJob.Status.PENDING).update(
        status=ExportJob.Status.RUNNING
    ):
        return None
    job = ExportJob.objects.select_related("dataset").get(pk=job_id)
    folder = export_dir(job)
    folder.mkdir(parents=True, exist_ok=True)
    keep = job_filter(job)
    # Each job's files get names of their own (a browser's download folder would otherwise overwrite one
    # export, or one data card, with the next): dataset, export number, and the format in the card's name.
    stem = f"{job.dataset.pk}-{_safe(job.dataset.name)}-export{job.pk}"
    path = folder / f"{stem}.{EXTENSIONS[job.format]}"

    def progress(done: int) -> None:
        ExportJob.objects.filter(pk=job_id).update(done=done)

    try:
        files = write_export(job.dataset, job.format, keep, path, progress)
        card = folder / f"{stem}.{EXTENSIONS[job.format]}.card.json"
        card.write_text(json.dumps(data_card(job.dataset, keep, fmt=job.format), indent=1, ensure_ascii=False),
                        "utf-8")
        files.append(card)
    except Exception as exc:  # the job page must say why, whatever broke
        log.exception("export %s failed", job_id)
        ExportJob.objects.filter(pk=job_id).update(
            status=ExportJob.Status.FAILED, message=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        return ExportJob.Status.FAILED
    ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.DONE, files=[f.name for f in files], done=job.total, finished_at=timezone.now()
    )
    return ExportJob.Status.DONE


def export_file(job: ExportJob, name: str) -> Path | None:
    """The path of one of a finished job's files, or None (names come from the job row, never from the URL)."""
    if job.status != ExportJob.Status.DONE or name not in job.files:
        return None
    path = export_dir(job) / name
    return path if path.exists() else None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40] or "dataset"
