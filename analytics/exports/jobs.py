"""Export jobs: the browser's and the API's large exports, written by a Celery worker with progress."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.db import transaction

from analytics.exports.card import data_card
from analytics.exports.formats import EXTENSIONS, FORMATS, write_export
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset, ExportJob
from corpus.services.annotation_export import ExportReport
from jobs.lifecycle import job_cancel, job_checkpoint, job_finish, job_queue, job_requeue, job_run
from jobs.models import JobStatus


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
    job_queue(job)
    return job


def export_job_cancel(*, job: ExportJob) -> bool:
    """Stop an export: a waiting one (or one whose worker died) at once, a running one at its next checkpoint."""
    return job_cancel(ExportJob, job.pk)


def export_job_resume(*, job: ExportJob, enqueue: bool = True) -> bool:
    """Queue a failed or abandoned export again; it is written again from the start (it keeps no partial state)."""
    return job_requeue(job, enqueue=enqueue)


def export_job_run(job_id: int, *, token: str = "sync") -> str | None:
    """Claim job `job_id` and write its files (export + data card); None when another live worker holds it.

    A job a dead worker left running is taken over once its heartbeat is stale, and written again from the
    start (an export keeps no partial state)."""
    return job_run(ExportJob, job_id, token, _write, related=("dataset",))


def _write(job: ExportJob) -> str:
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
    job_finish(ExportJob, job.pk, JobStatus.DONE, files=[f.name for f in files], done=job.total)
    return JobStatus.DONE


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
