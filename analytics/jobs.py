"""The dataset export as a job kind: what a worker does with a claimed export."""

from __future__ import annotations

from accounts.access import require_admin
from analytics.api.exports import ExportJobOut, export_job_out
from analytics.exports.jobs import export_files_expire, export_write
from analytics.models import ExportJob
from jobs.kinds import JobRoutes, register
from jobs.worker import on_sweep

KIND = register(
    ExportJob, export_write, related=("dataset",),
    routes=JobRoutes(
        api="/exports/{job_id}", name="export", tag="sources and exports", schema=ExportJobOut, out=export_job_out,
        page="analytics/exports/<int:pk>/", page_name="export_job", url_name="export_job", permission=require_admin,
        resumed="the export is written again from the start.",
        descriptions=(
            "Cancel a pending, paused or running export (a running one stops at its next batch); admins only, as "
            "on\nthe export's page.",
            "Queue a paused, failed or abandoned export again; it is written again from the start.",
        ),
    ),
)

# Every worker's sweep deletes the files of exports past SPANJUDGE_EXPORT_RETENTION_DAYS.
on_sweep(export_files_expire)
