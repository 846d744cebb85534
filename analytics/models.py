"""The one table of analytics: export jobs, a job kind declared beside its work (analytics/jobs.py)."""

from __future__ import annotations

from django.db import models

from corpus.models import Dataset
from jobs.models import Job


class ExportJob(Job):
    """A dataset export written by a worker (large exports from the browser); progress is polled from here.

    Its table keeps the name it had in corpus (`corpus_exportjob`): the model moved, the rows stayed."""

    # Not a module path: the name this kind's task had in an earlier layout, kept because messages already queued
    # and scripts send it by name. A new kind leaves task_name out and gets its own name (jobs.kinds.register).
    task_name = "tasks.exporting.run_export"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=16)
    filters = models.JSONField(default=dict, blank=True, help_text="The export filter's non-empty fields.")
    files = models.JSONField(default=list, blank=True, help_text="File names written (in the export folder).")

    class Meta:
        db_table = "corpus_exportjob"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.dataset_id} ({self.format}, {self.status})"
