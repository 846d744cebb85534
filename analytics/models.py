"""The tables of analytics: export jobs (a job kind declared beside its work, analytics/jobs.py) and the files
they wrote when exports are kept in the database (analytics/exports/storage.py)."""

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
    files = models.JSONField(default=list, blank=True, help_text="File names written (in the export storage).")

    class Meta:
        db_table = "corpus_exportjob"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.dataset_id} ({self.format}, {self.status})"


class ExportFile(models.Model):
    """A file an export job wrote, kept in the database so that any web host serves what any worker wrote; its
    bytes are in numbered chunks, read one at a time."""

    name = models.CharField(max_length=255, unique=True, help_text="The storage name: JOB_ID/FILE_NAME.")
    size = models.PositiveBigIntegerField(help_text="Bytes in all its chunks together.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.size} bytes)"


class ExportFileChunk(models.Model):
    file = models.ForeignKey(ExportFile, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["file", "number"], name="export_chunk_number_unique")]
