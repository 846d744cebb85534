"""Export jobs: the browser's and the API's large exports, written by a Celery worker with progress."""

from __future__ import annotations

import json
import tempfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from analytics.exports.card import data_card
from analytics.exports.formats import EXPORT_FORMATS, EXTENSIONS, write_export
from analytics.exports.storage import export_storage
from analytics.models import ExportJob
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset
from corpus.services.annotation_export import ExportReport
from jobs.lifecycle import job_beat, job_checkpoint, job_queue
from jobs.models import JobStatus


def stored_name(job: ExportJob, name: str) -> str:
    """The name of one of the job's files in the export storage (each job has a folder of its own)."""
    return f"{job.pk}/{name}"


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
    """Write the job's files (export + data card) from the start, then store them: an export keeps no partial
    state, so one a dead worker left is written again. The files are made in a temporary folder of this
    worker and copied into the export storage, which the web hosts read (they share no disk with a worker)."""
    keep = job_filter(job)
    # Each job's files get names of their own (a browser's download folder would otherwise overwrite one
    # export, or one data card, with the next): dataset, export number, and the format in the card's name.
    stem = f"{job.dataset.pk}-{_safe(job.dataset.name)}-export{job.pk}"
    with tempfile.TemporaryDirectory(prefix=f"export{job.pk}-") as tmp:
        folder = Path(tmp)
        path = folder / f"{stem}.{EXTENSIONS[job.format]}"
        report = ExportReport()
        files = write_export(job.dataset, job.format, keep, path,
                             lambda done: job_checkpoint(ExportJob, job.pk, done=done), report)
        card = folder / f"{stem}.{EXTENSIONS[job.format]}.card.json"
        content = data_card(job.dataset, keep, fmt=job.format, report=report)
        card.write_text(json.dumps(content, indent=1, ensure_ascii=False), "utf-8")
        files.append(card)
        storage = export_storage()
        for file in files:
            job_beat(ExportJob, job.pk)  # a large file takes a while to store: alive between files at least
            with file.open("rb") as handle:
                storage.save(stored_name(job, file.name), File(handle, name=file.name))
    job_beat(ExportJob, job.pk, files=[f.name for f in files], done=job.total)


def export_file(job: ExportJob, name: str) -> File | None:
    """One of a finished job's files, open for reading from the export storage, or None (names come from the
    job row, never from the URL). It knows its size before the first byte is read: the download states it."""
    if job.status != JobStatus.DONE or name not in job.files:
        return None
    try:
        return export_storage().open(stored_name(job, name), "rb")
    except FileNotFoundError:
        return None


def export_files_expire() -> list[int]:
    """Delete the files of exports finished more than SPANJUDGE_EXPORT_RETENTION_DAYS ago (none when it is 0) and
    say so on each job, and, whatever the retention, the files of jobs that no longer exist; return the expired
    jobs' ids. The workers' sweep calls it; the job rows stay as a record."""
    storage = export_storage()
    _orphans_delete(storage)
    days = settings.EXPORT_RETENTION_DAYS
    if days <= 0:
        return []
    cutoff = timezone.now() - timedelta(days=days)
    expired = []
    for job in ExportJob.objects.filter(status=JobStatus.DONE, finished_at__lt=cutoff).exclude(files=[]):
        for name in job.files:
            storage.delete(stored_name(job, name))
        ExportJob.objects.filter(pk=job.pk).update(
            files=[], message=f"Its files were deleted {days} days after it finished "
                              f"(SPANJUDGE_EXPORT_RETENTION_DAYS); export again for a new copy.")
        expired.append(job.pk)
    return expired


def _orphans_delete(storage) -> None:  # noqa: ANN001 - any Django storage
    """Delete the files of jobs that are gone (a deleted dataset takes its export jobs, not their stored files)."""
    try:
        folders, _ = storage.listdir("")
    except FileNotFoundError:  # a folder storage nothing was written to yet
        return
    ids = {int(folder) for folder in folders if folder.isdigit()}
    for gone in ids - set(ExportJob.objects.filter(pk__in=ids).values_list("pk", flat=True)):
        for name in storage.listdir(str(gone))[1]:
            storage.delete(f"{gone}/{name}")


def _safe(name: str) -> str:
    """A file-name part from a dataset name: ASCII letters and digits, every other run of characters one
    hyphen ("Demo: restaurants (data-to-text)" -> "Demo-restaurants-data-to-text")."""
    kept = "".join(c if c.isascii() and c.isalnum() else "-" for c in name)
    return "-".join(part for part in kept.split("-") if part)[:40].strip("-") or "dataset"
