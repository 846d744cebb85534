"""The dataset export as a job kind: what a worker does with a claimed export."""

from __future__ import annotations

from analytics.exports.jobs import export_write
from corpus.models import ExportJob
from jobs.kinds import register

KIND = register(ExportJob, export_write, related=("dataset",))
